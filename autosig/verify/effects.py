"""Every observable effect of every call of a watched tf.function, as a compact digest.

Child side (in the workload's processes, called from ``xla.patch_function_class``'s
call wrapper; TensorFlow is already loaded when it runs): after each call of a
function defined in a changed file it notes

- ``o``: the returned structure (containers, Python types, dtypes, shapes) and its
  values: small values in full, larger ones as a digest, exact for integers, booleans
  and strings (SHA-1 of the bytes), a tolerance-aware summary for floats (sum, sum of
  absolute values, min, max, NaN and infinity counts);
- ``v``: the value of every ``tf.Variable`` the function's concrete functions
  captured (read or written) and of every ``tf.Variable`` passed to it, after the call;
- ``p``: what ``tf.print`` inside it wrote during the call (``tf.print`` traced inside
  a watched function is sent to a per-function file, so its output is attributed to
  the call that printed it);
- ``e``: whether the call raised: exception type, its first line, and the user's
  ``file:line`` that raised it.

Each process writes ``effects-<pid>.json`` to the run's status directory at exit.
Parent side: ``compare_effects`` compares two runs' lists call by call and returns
the first differing call and what differed.

One module, because both sides of the comparison must agree on one digest format: the
child side that records each call's effects and the parent side that compares them are
kept together so the format is defined in one place.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autosig.text import digits_for, number

FULL_VALUES = 16
"""Arrays up to this many elements are kept value by value."""
MAX_PRINT = 4000
"""Printed text per call kept in full; longer text is kept as length + SHA-1."""

CALLS: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
"""(file, qualname, first line) -> one effects entry per call, in call order."""
RANDOM_OPS: dict[tuple[str, str, int], set[str]] = {}
"""Stateful random op types found in a watched function's traced graphs."""
NESTED: dict[tuple[str, str, int], set[tuple[str, str]]] = {}
"""Watched functions called while another tf.function traced -> the watched function
that was tracing, (file, qualname), or ("", "") when it was not a watched one."""
_LOCAL = threading.local()
_PRINT_DIR: list[Path | None] = [None]
_PRINT_OFFSETS: dict[str, int] = {}
_VARS_CACHE: weakref.WeakKeyDictionary[Any, tuple[int, list[Any]]] = weakref.WeakKeyDictionary()
_STARTED = time.time()

_STATEFUL_RANDOM = re.compile(
    r"^(Random\w*|TruncatedNormal|Multinomial|ParameterizedTruncatedNormal|"
    r"StatefulUniform\w*|StatefulStandardNormal\w*|StatefulTruncatedNormal|"
    r"StatefulRandomBinomial|RngSkip|RngReadAndSkip|NonDeterministicInts)$"
)


# -- child side ---------------------------------------------------------------------------


def configure(print_dir: str | Path | None) -> None:
    """Where traced ``tf.print`` calls of watched functions write (one file each)."""
    if print_dir is None:
        return
    directory = Path(print_dir) / str(os.getpid())
    directory.mkdir(parents=True, exist_ok=True)
    _PRINT_DIR[0] = directory


def _print_file(key: tuple[str, str, int]) -> Path | None:
    directory = _PRINT_DIR[0]
    if directory is None:
        return None
    name = hashlib.sha1(repr(key).encode()).hexdigest()[:16]
    return directory / f"print-{name}.txt"


def patch_print(gen_logging_ops: Any) -> None:
    """Send ``tf.print`` output traced inside a watched function to that function's file.

    ``tf.print`` builds a ``PrintV2`` op through ``gen_logging_ops.print_v2``; the
    file is fixed when the op is traced, so every later call of that graph appends to
    it and the text printed during one call can be told from the next call's.
    """
    original = getattr(gen_logging_ops, "print_v2", None)
    if original is None or getattr(original, "_autosig_effects", False):
        return

    def print_v2(*args: Any, **kwargs: Any) -> Any:
        stack = getattr(_LOCAL, "stack", None)
        stream = kwargs.get("output_stream", "stderr")
        if stack and stream in ("stderr", "stdout", "log(info)", "log(warning)", "log(error)"):
            target = _print_file(stack[-1])
            if target is not None:
                kwargs["output_stream"] = f"file://{target}"
        return original(*args, **kwargs)

    print_v2._autosig_effects = True  # type: ignore[attr-defined]
    gen_logging_ops.print_v2 = print_v2


def enter(key: tuple[str, str, int]) -> None:
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    stack.append(key)


def leave() -> None:
    stack = getattr(_LOCAL, "stack", None)
    if stack:
        stack.pop()


def _printed(key: tuple[str, str, int]) -> Any:
    path = _print_file(key)
    if path is None:
        return None
    name = str(path)
    try:
        size = path.stat().st_size
    except OSError:
        return ""
    start = _PRINT_OFFSETS.get(name, 0)
    if size <= start:
        return ""
    with open(path, "rb") as handle:
        handle.seek(start)
        data = handle.read(size - start)
    _PRINT_OFFSETS[name] = size
    text = data.decode("utf-8", errors="replace")
    if len(text) <= MAX_PRINT:
        return text
    return {"len": len(text), "sha1": hashlib.sha1(data).hexdigest(), "head": text[:200]}


def _array_digest(arr: Any) -> dict[str, Any]:
    import numpy as np

    arr = np.asarray(arr)
    kind = arr.dtype.kind
    out: dict[str, Any] = {"dtype": _dtype_name(arr), "shape": list(arr.shape)}
    if kind in "fc" or out["dtype"] == "bfloat16":
        wide = arr.astype(np.complex128 if kind == "c" else np.float64)
        if kind == "c":
            wide = np.concatenate([wide.real.ravel(), wide.imag.ravel()])
        flat = wide.ravel()
        if flat.size <= FULL_VALUES:
            out["values"] = [_float(x) for x in flat]
            return out
        finite = flat[np.isfinite(flat)]
        out["nan"] = int(np.isnan(flat).sum())
        out["posinf"] = int(np.isposinf(flat).sum())
        out["neginf"] = int(np.isneginf(flat).sum())
        out["n"] = int(finite.size)
        if finite.size:
            out["sum"] = float(finite.sum())
            out["abssum"] = float(np.abs(finite).sum())
            out["min"] = float(finite.min())
            out["max"] = float(finite.max())
        return out
    if kind in "SUO":
        items = [x if isinstance(x, bytes) else str(x).encode() for x in arr.ravel().tolist()]
        if len(items) <= FULL_VALUES:
            out["values"] = [x.decode("utf-8", errors="replace") for x in items]
        else:
            h = hashlib.sha1()
            for x in items:
                h.update(len(x).to_bytes(8, "little"))
                h.update(x)
            out["sha1"] = h.hexdigest()
        return out
    if arr.size <= FULL_VALUES:
        out["values"] = arr.ravel().tolist()
    else:
        out["sha1"] = hashlib.sha1(np.ascontiguousarray(arr).tobytes()).hexdigest()
    return out


def _float(x: float) -> Any:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def _dtype_name(arr: Any) -> str:
    kind = arr.dtype.kind
    if kind in "SUO":
        return "string"
    if kind == "V" and arr.dtype.itemsize == 2:
        return "bfloat16"
    return str(arr.dtype.name)


def digest(value: Any, depth: int = 0) -> Any:
    """A JSON-able digest of a returned value (structure, types, values)."""
    if depth > 32:
        return {"k": "deep"}
    tf = sys.modules.get("tensorflow")
    if value is None or isinstance(value, (bool, int, str)):
        return {"k": "py", "type": type(value).__name__, "value": value}
    if isinstance(value, float):
        return {"k": "py", "type": "float", "value": _float(value)}
    if isinstance(value, bytes):
        return {"k": "py", "type": "bytes", "value": value.decode("utf-8", errors="replace")}
    if isinstance(value, dict):
        keys = sorted(value, key=repr)
        return {
            "k": "dict",
            "type": type(value).__name__,
            "items": {repr(k): digest(value[k], depth + 1) for k in keys},
        }
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {
            "k": "namedtuple",
            "type": type(value).__name__,
            "items": [digest(v, depth + 1) for v in value],
        }
    if isinstance(value, (tuple, list)):
        return {
            "k": type(value).__name__,
            "items": [digest(v, depth + 1) for v in value],
        }
    if tf is not None:
        if isinstance(value, tf.Variable):
            return {"k": "variable", "value": _array_digest(value.numpy())}
        if isinstance(value, tf.RaggedTensor):
            return {
                "k": "ragged",
                "splits": [_array_digest(s.numpy()) for s in value.nested_row_splits],
                "values": _array_digest(value.flat_values.numpy()),
            }
        if isinstance(value, tf.SparseTensor):
            return {
                "k": "sparse",
                "indices": _array_digest(value.indices.numpy()),
                "values": _array_digest(value.values.numpy()),
                "dense_shape": _array_digest(value.dense_shape.numpy()),
            }
        if isinstance(value, tf.Tensor):
            try:
                return {"k": "tensor", **_array_digest(value.numpy())}
            except Exception:  # noqa: BLE001 - a symbolic tensor (called while tracing)
                return {"k": "symbolic", "dtype": value.dtype.name}
    if type(value).__module__ == "numpy":
        with contextlib.suppress(Exception):
            return {"k": "numpy", **_array_digest(value)}
    return {"k": "object", "type": type(value).__qualname__}


def _variables(fn_self: Any, args: Sequence[Any], kwds: dict[str, Any]) -> list[Any]:
    """Variables captured by the function's concrete functions, then tf.Variable arguments."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return []
    found: list[Any] = []
    try:
        count = fn_self.experimental_get_tracing_count()
        cached = _VARS_CACHE.get(fn_self)
        if cached is not None and cached[0] == count:
            found = list(cached[1])
        else:
            seen: set[int] = set()
            for concrete in list(fn_self._function_cache.values()):
                for var in getattr(concrete, "variables", ()):
                    if id(var) not in seen:
                        seen.add(id(var))
                        found.append(var)
            found.sort(key=_creation_order)
            with contextlib.suppress(TypeError):
                _VARS_CACHE[fn_self] = (count, list(found))
    except Exception:  # noqa: BLE001 - a private API that moved: arguments only
        found = []
    with contextlib.suppress(Exception):
        ids = {id(v) for v in found}
        for leaf in tf.nest.flatten((list(args), dict(kwds)), expand_composites=False):
            if isinstance(leaf, tf.Variable) and id(leaf) not in ids:
                ids.add(id(leaf))
                found.append(leaf)
    return found


def _creation_order(var: Any) -> int:
    """Variables in the order they were created (``_unique_id`` ends in TensorFlow's uid
    counter): the same in both runs, whatever order the traces captured them in."""
    unique = str(getattr(var, "_unique_id", ""))
    tail = unique.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else sys.maxsize


def _variable_digests(variables: Iterable[Any]) -> list[list[Any]]:
    out: list[list[Any]] = []
    for var in variables:
        try:
            out.append([str(var.name), _array_digest(var.numpy())])
        except Exception as exc:  # noqa: BLE001 - e.g. a distributed variable
            out.append([str(getattr(var, "name", "?")), {"error": type(exc).__name__}])
    return out


_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def raised_where(exc: BaseException, files: set[str]) -> str | None:
    """The user's ``file:line`` (in ``files``) that raised: TF's "in user code" part of the
    message first (errors raised while tracing), then the traceback."""
    best = None
    text = str(exc)
    for path, line in _FILE_LINE.findall(text):
        real = os.path.realpath(path)
        if real in files or path in files:
            best = f"{real}:{line}"
    if best is not None:
        return best
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) in files:
            best = f"{os.path.realpath(frame.filename)}:{frame.lineno}"
    return best


def exception_entry(exc: BaseException, files: set[str]) -> dict[str, Any]:
    text = str(exc).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if first.endswith("in user code:"):
        # TensorFlow's tracing errors: the real message is the last line
        first = lines[-1] if lines else first
    prefix = f"{type(exc).__name__}: "
    if first.startswith(prefix):
        first = first[len(prefix) :]
    return {
        "type": type(exc).__name__,
        "message": first,
        "where": raised_where(exc, files),
    }


def note_call(
    key: tuple[str, str, int],
    fn_self: Any,
    args: Sequence[Any],
    kwds: dict[str, Any],
    result: Any,
    exc: BaseException | None,
    files: set[str],
) -> None:
    """Append this call's effects (never raises into the user's program).

    A call made while another tf.function traces (a nested tf.function) runs nothing:
    it is part of the outer function's graph, whose calls carry its effects. Such calls
    are not noted (their number depends on how often the outer function traces)."""
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        try:
            if not tf.executing_eagerly():
                stack = getattr(_LOCAL, "stack", None) or []
                outer = stack[-1] if stack else None  # our own key is already popped
                NESTED.setdefault(key, set()).add(
                    (outer[0], outer[1]) if outer is not None else ("", "")
                )
                return
        except Exception:  # noqa: BLE001 - half torn down at exit
            return
    entry: dict[str, Any] = {}
    try:
        if exc is not None:
            entry["e"] = exception_entry(exc, files)
        else:
            entry["o"] = digest(result)
        entry["v"] = _variable_digests(_variables(fn_self, args, kwds))
        printed = _printed(key)
        if printed:
            entry["p"] = printed
    except Exception as err:  # noqa: BLE001
        entry["error"] = repr(err)
    CALLS.setdefault(key, []).append(entry)


_RANDOM_SEEN: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def note_random_ops(key: tuple[str, str, int], fn_self: Any) -> None:
    """Stateful random ops in the function's graphs (and the functions they call).

    Looks only when the function traced since it last looked."""
    try:
        count = fn_self.experimental_get_tracing_count()
        with contextlib.suppress(TypeError):
            if _RANDOM_SEEN.get(fn_self) == count:
                return
            _RANDOM_SEEN[fn_self] = count
        found = RANDOM_OPS.setdefault(key, set())
        for concrete in list(fn_self._function_cache.values()):
            graph = concrete.graph
            for op in graph.get_operations():
                if _STATEFUL_RANDOM.match(op.type):
                    found.add(op.type)
            for function in getattr(graph, "_functions", {}).values():
                definition = getattr(function, "cached_definition", None) or getattr(
                    function, "definition", None
                )
                for node in getattr(definition, "node_def", ()):
                    if _STATEFUL_RANDOM.match(node.op):
                        found.add(node.op)
    except Exception:  # noqa: BLE001 - a private API that moved: no label
        return


def write(status_dir: str | Path) -> None:
    data = {
        "pid": os.getpid(),
        "started": _STARTED,
        "functions": [
            {"file": f, "qualname": q, "line": line, "calls": calls}
            for (f, q, line), calls in CALLS.items()
        ],
        "nested": [
            {"file": f, "qualname": q, "line": line, "outers": sorted(map(list, outers))}
            for (f, q, line), outers in NESTED.items()
        ],
        "random_ops": [
            {"file": f, "qualname": q, "line": line, "ops": sorted(ops)}
            for (f, q, line), ops in RANDOM_OPS.items()
            if ops
        ],
    }
    path = Path(status_dir) / f"effects-{os.getpid()}.json"
    path.write_text(json.dumps(data), encoding="utf-8")


# -- parent side --------------------------------------------------------------------------


@dataclass
class RunEffects:
    """One run's effects: (file, qualname) -> calls in order, per ordinal of first line."""

    calls: dict[tuple[str, str, int], list[dict[str, Any]]]
    random_ops: dict[tuple[str, str, int], set[str]]
    loaded: bool
    nested: dict[tuple[str, str, int], set[tuple[str, str]]] = field(default_factory=dict)
    """Functions called while another traced -> (file, qualname) of the one tracing."""


def load_run(status_dir: Path) -> RunEffects:
    """Every process's effects, processes in start order, keyed (abs file, qualname, n-th)."""
    docs = []
    for path in sorted(status_dir.glob("effects-*.json")):
        with contextlib.suppress(OSError, ValueError):
            docs.append(json.loads(path.read_text(encoding="utf-8")))
    docs.sort(key=lambda d: d.get("started", 0))
    calls: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    random: dict[tuple[str, str, int], set[str]] = {}
    nested: dict[tuple[str, str, int], set[tuple[str, str]]] = {}
    for doc in docs:
        for key, entries in _by_ordinal(doc.get("functions", [])).items():
            calls.setdefault(key, []).extend(entries["calls"])
        for key, entries in _by_ordinal(doc.get("random_ops", [])).items():
            random.setdefault(key, set()).update(entries["ops"])
        for key, entries in _by_ordinal(doc.get("nested", [])).items():
            nested.setdefault(key, set()).update(tuple(o) for o in entries["outers"])
    return RunEffects(calls, random, bool(docs), nested)


def _by_ordinal(entries: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Functions keyed by (file, qualname, ordinal by first line): a rewrite moves lines."""
    ordered = sorted(entries, key=lambda e: (e["file"], e["qualname"], e["line"]))
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    lines: dict[tuple[str, str], list[int]] = {}
    for entry in ordered:
        seen = lines.setdefault((entry["file"], entry["qualname"]), [])
        if entry["line"] not in seen:
            seen.append(entry["line"])
        out[(entry["file"], entry["qualname"], seen.index(entry["line"]))] = entry
    return out


@dataclass
class EffectsComparison:
    calls_compared: int
    first_call: int | None = None
    what: str = ""
    """What differed at ``first_call`` ("" when every call agrees)."""
    kind: str = ""
    """outputs | variables | print | exception | calls"""
    by_design: str = ""
    """Differences accepted as by design (e.g. the print stream of an AS101 fix)."""
    max_abs: float = 0.0
    max_rel: float = 0.0
    rel_defined: bool = True

    @property
    def equal(self) -> bool:
        return self.first_call is None and not self.what


class _Diff(Exception):
    pass


@dataclass
class _Tol:
    tolerance: Any
    """``compare.Tolerance``: (rtol, atol) per dtype."""
    stats: EffectsComparison

    def close(
        self, a: float, b: float, dtype: str, scale: float = 1.0, ref: float | None = None
    ) -> bool:
        """``|a - b| <= atol * scale + rtol * ref`` (``ref``: ``|a|`` unless given: a sum's
        rounding error grows with the sum of absolute values, not with the sum)."""
        rtol, atol = self.tolerance.for_dtype(dtype)
        err = abs(a - b)
        base = abs(a) if ref is None else ref
        self.stats.max_abs = max(self.stats.max_abs, err / scale)
        if base != 0:
            self.stats.max_rel = max(self.stats.max_rel, err / base)
        elif err > 0:
            self.stats.rel_defined = False
        return err <= atol * scale + rtol * base


def _num(x: Any) -> float:
    if isinstance(x, str):
        return float(x)
    return float(x)


def _compare_arrays(a: dict[str, Any], b: dict[str, Any], where: str, tol: _Tol) -> None:
    if "error" in a or "error" in b:
        if a != b:
            raise _Diff(f"{where}: could not be read in one run")
        return
    if a["dtype"] != b["dtype"]:
        raise _Diff(f"{where}: dtype {a['dtype']} -> {b['dtype']}")
    if a["shape"] != b["shape"]:
        raise _Diff(f"{where}: shape {a['shape']} -> {b['shape']}")
    dtype = a["dtype"]
    if "values" in a or "values" in b:
        va, vb = a.get("values"), b.get("values")
        if va is None or vb is None or len(va) != len(vb):
            raise _Diff(f"{where}: values differ")
        for index, (x, y) in enumerate(zip(va, vb, strict=True)):
            if isinstance(x, float) or isinstance(y, float) or x in ("nan", "inf", "-inf"):
                if isinstance(x, str) or isinstance(y, str):
                    if x != y:
                        raise _Diff(f"{where}: value [{index}] {x} -> {y}")
                    continue
                if not tol.close(_num(x), _num(y), dtype):
                    shown = (number(v, digits_for(dtype)) for v in (x, y))
                    raise _Diff(f"{where}: value [{index}] {' -> '.join(shown)}")
            elif x != y:
                raise _Diff(f"{where}: value [{index}] {x!r} -> {y!r} (exact)")
        return
    if "sha1" in a or "sha1" in b:
        if a.get("sha1") != b.get("sha1"):
            raise _Diff(f"{where}: {dtype} values differ (exact digest)")
        return
    for field_name in ("nan", "posinf", "neginf", "n"):
        if a.get(field_name) != b.get(field_name):
            raise _Diff(f"{where}: {field_name} count {a.get(field_name)} -> {b.get(field_name)}")
    n = max(int(a.get("n", 0)), 1)
    abssum = float(a.get("abssum", 0.0))
    for field_name, scale in (("sum", n), ("abssum", n), ("min", 1), ("max", 1)):
        if field_name not in a:
            continue
        x, y = float(a[field_name]), float(b[field_name])
        ref = abssum if field_name in ("sum", "abssum") else None
        if not tol.close(x, y, dtype, scale, ref):
            raise _Diff(f"{where}: {field_name} of {a['n']} values {x:.9g} -> {y:.9g}")


def _compare_values(a: Any, b: Any, where: str, tol: _Tol) -> None:
    ka, kb = a.get("k"), b.get("k")
    if ka != kb:
        raise _Diff(f"{where}: {_kind(a)} -> {_kind(b)}")
    if ka == "py":
        if a["type"] != b["type"]:
            raise _Diff(f"{where}: Python {a['type']} -> {b['type']}")
        x, y = a["value"], b["value"]
        if a["type"] == "float" and not isinstance(x, str) and not isinstance(y, str):
            if not tol.close(float(x), float(y), "float64"):
                raise _Diff(f"{where}: {number(x)} -> {number(y)}")
        elif x != y:
            raise _Diff(f"{where}: {x!r} -> {y!r}")
        return
    if ka in ("tuple", "list", "namedtuple"):
        if a.get("type") != b.get("type"):
            raise _Diff(f"{where}: {a.get('type')} -> {b.get('type')}")
        if len(a["items"]) != len(b["items"]):
            raise _Diff(f"{where}: {ka} of {len(a['items'])} -> {len(b['items'])} items")
        for index, (x, y) in enumerate(zip(a["items"], b["items"], strict=True)):
            _compare_values(x, y, f"{where}[{index}]", tol)
        return
    if ka == "dict":
        if list(a["items"]) != list(b["items"]):
            raise _Diff(f"{where}: keys {list(a['items'])} -> {list(b['items'])}")
        for key in a["items"]:
            _compare_values(a["items"][key], b["items"][key], f"{where}[{key}]", tol)
        return
    if ka in ("tensor", "numpy"):
        _compare_arrays(a, b, where, tol)
        return
    if ka == "variable":
        _compare_arrays(a["value"], b["value"], where, tol)
        return
    if ka == "ragged":
        if len(a["splits"]) != len(b["splits"]):
            raise _Diff(f"{where}: ragged rank {len(a['splits'])} -> {len(b['splits'])}")
        for index, (x, y) in enumerate(zip(a["splits"], b["splits"], strict=True)):
            _compare_arrays(x, y, f"{where}.row_splits[{index}]", tol)
        _compare_arrays(a["values"], b["values"], f"{where}.values", tol)
        return
    if ka == "sparse":
        for part in ("dense_shape", "indices", "values"):
            _compare_arrays(a[part], b[part], f"{where}.{part}", tol)
        return
    if a != b:
        raise _Diff(f"{where}: {_kind(a)} -> {_kind(b)}")


def _kind(value: dict[str, Any]) -> str:
    kind = value.get("k")
    if kind == "py":
        return f"Python {value.get('type')}"
    if kind in ("tensor", "numpy"):
        return f"{kind} {value.get('dtype')}{value.get('shape')}"
    if kind == "object":
        return f"object {value.get('type')}"
    return str(kind)


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _compare_print(a: Any, b: Any, tol: _Tol) -> None:
    if a == b:
        return
    if isinstance(a, str) and isinstance(b, str):
        # numbers printed may differ in their last digits (XLA): compare them as floats
        if _NUMBER.sub("#", a) == _NUMBER.sub("#", b):
            xs, ys = _NUMBER.findall(a), _NUMBER.findall(b)
            if all(tol.close(float(x), float(y), "float32") for x, y in zip(xs, ys, strict=True)):
                return
        raise _Diff(f"tf.print output {_short(a)!r} -> {_short(b)!r}")
    raise _Diff("tf.print output differs")


def _short(text: Any, limit: int = 120) -> str:
    text = text if isinstance(text, str) else str(text.get("head", ""))
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exception_text(entry: dict[str, Any] | None) -> str:
    if not entry:
        return "returned normally"
    where = f" at {entry['where']}" if entry.get("where") else ""
    return f"raised {entry['type']}{where}: {entry['message']}"


def compare_effects(
    old: Sequence[dict[str, Any]],
    new: Sequence[dict[str, Any]],
    tolerance: Any,
    *,
    print_by_design: str = "",
    values_by_design: str = "",
    new_variables_by_design: bool = False,
) -> EffectsComparison:
    """Call by call: exception, outputs, variables, tf.print; then the number of calls.

    ``values_by_design``: values may differ on purpose (random streams): structure,
    dtypes and shapes are still compared, values not. ``print_by_design``: the print
    stream changes on purpose (AS101). ``new_variables_by_design``: the rewrite adds
    variables (AS103): only variables present in both runs are compared.
    """
    result = EffectsComparison(calls_compared=0)
    tol = _Tol(tolerance, result)
    by_design: list[str] = []
    for index, (a, b) in enumerate(zip(old, new, strict=False)):
        try:
            ea, eb = a.get("e"), b.get("e")
            if (ea is None) != (eb is None) or (ea and ea["type"] != eb["type"]):
                result.kind = "exception"
                raise _Diff(f"original {_exception_text(ea)}; rewritten {_exception_text(eb)}")
            if ea is None:
                result.kind = "outputs"
                try:
                    _compare_values(a.get("o", {}), b.get("o", {}), "output", tol)
                except _Diff:
                    if not values_by_design:
                        raise
                    _compare_values(
                        _strip_values(a.get("o", {})),
                        _strip_values(b.get("o", {})),
                        "output",
                        tol,
                    )
                    _note(by_design, values_by_design)
            result.kind = "variables"
            _compare_variables(
                a.get("v", []),
                b.get("v", []),
                tol,
                values_by_design,
                new_variables_by_design,
                by_design,
            )
            result.kind = "print"
            try:
                _compare_print(a.get("p", ""), b.get("p", ""), tol)
            except _Diff:
                if print_by_design:
                    _note(by_design, print_by_design)
                elif values_by_design and _NUMBER.sub("#", str(a.get("p", ""))) == _NUMBER.sub(
                    "#", str(b.get("p", ""))
                ):
                    _note(by_design, values_by_design)
                else:
                    raise
            result.kind = ""
        except _Diff as diff:
            result.first_call = index
            result.what = str(diff)
            result.calls_compared = index + 1
            result.by_design = "; ".join(by_design)
            return result
        result.calls_compared = index + 1
    if len(old) != len(new):
        result.kind = "calls"
        result.first_call = min(len(old), len(new))
        result.what = f"the original made {len(old)} calls, the rewritten {len(new)}"
    result.by_design = "; ".join(by_design)
    return result


def _note(notes: list[str], why: str) -> None:
    if why not in notes:
        notes.append(why)


_VALUE_FIELDS = frozenset(
    {"values", "sha1", "sum", "abssum", "min", "max", "nan", "posinf", "neginf", "n"}
)


def _strip_values(value: Any) -> Any:
    """The structure, types, dtypes and shapes of a digest, without the values."""
    if isinstance(value, dict):
        return {
            k: _strip_values(v)
            for k, v in value.items()
            if k not in _VALUE_FIELDS and not (k == "value" and not isinstance(v, dict))
        }
    if isinstance(value, list):
        return [_strip_values(v) for v in value]
    return value


def _compare_variables(
    a: list[list[Any]],
    b: list[list[Any]],
    tol: _Tol,
    values_by_design: str,
    new_by_design: bool,
    notes: list[str],
) -> None:
    # variables a fix adds on purpose (AS103's counter) shift a name's ordinals: pair
    # the others by name, dtype and shape instead
    named_a, named_b = _named(a, new_by_design), _named(b, new_by_design)
    if set(named_a) != set(named_b):
        missing = [n for n in named_a if n not in named_b]
        added = [n for n in named_b if n not in named_a]
        if missing or not new_by_design:
            raise _Diff(
                "variables read or written differ: "
                + ", ".join(
                    [f"{n} only in the original" for n in missing]
                    + [f"{n} only in the rewritten" for n in added]
                )
            )
    for name, value in named_a.items():
        if name not in named_b:
            continue
        try:
            _compare_arrays(value, named_b[name], f"variable {name}", tol)
        except _Diff:
            if not values_by_design:
                raise
            _compare_arrays(
                _strip_values(value), _strip_values(named_b[name]), f"variable {name}", tol
            )
            _note(notes, values_by_design)


def _named(entries: list[list[Any]], typed: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in entries:
        key = name
        if typed and isinstance(value, dict) and "dtype" in value:
            name = key = f"{name} {value['dtype']}{value.get('shape')}"
        ordinal = 1
        while key in out:
            ordinal += 1
            key = f"{name} (#{ordinal})"
        out[key] = value
    return out

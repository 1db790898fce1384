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

Each process writes ``effects-<pid>.json`` to the run's status directory at exit;
``load_run`` reads a run's files back. The parent compares two runs' lists call by
call in ``effects_compare``; arrays are digested and compared by ``arrays``, the one
place their format is defined.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autosig.verify import reach

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
STARTED = time.time()
_WATCHED: set[str] = set()
REACH: dict[tuple[str, str, int], dict[str, Any]] = {}
"""What each watched function's random draws and variable reads reach (``reach``)."""
_REACH_DONE: dict[tuple[str, str, int], set[str]] = {}

# -- child side ---------------------------------------------------------------------------


def configure(print_dir: str | Path | None, watched: Iterable[str] = ()) -> None:
    """Where traced ``tf.print`` calls of watched functions write (one file each), and
    the watched files (a print's site is its line in one of them)."""
    _WATCHED.update(os.path.realpath(f) for f in watched)
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
    it and the text printed during one call can be told from the next call's. Its
    ``end`` gets the print's site (``reach.SITE_MARK``): the output says which
    ``tf.print`` wrote each part, and the op says it to the dataflow summary.
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
                site = reach.SITE_MARK.format(site=reach.print_site(_WATCHED))
                kwargs["end"] = str(kwargs.get("end", "\n")) + site
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
    """What the function's ``tf.print``s wrote since the last call: ``[site, text]``
    records in order (consecutive parts of one site joined; long text as a digest)."""
    path = _print_file(key)
    if path is None:
        return None
    name = str(path)
    try:
        size = path.stat().st_size
    except OSError:
        return []
    start = _PRINT_OFFSETS.get(name, 0)
    if size <= start:
        return []
    with open(path, "rb") as handle:
        handle.seek(start)
        data = handle.read(size - start)
    _PRINT_OFFSETS[name] = size
    return print_records(data.decode("utf-8", errors="replace"))


MAX_PRINT_RECORDS = 64
"""More records than this (a print inside a long loop): one record per site instead."""


def print_records(text: str) -> list[list[Any]]:
    """Printed text (each part followed by its ``reach.SITE_MARK``) as records."""
    parts = reach.SITE_RE.split(text)
    records: list[list[Any]] = []
    for index in range(0, len(parts) - 1, 2):
        chunk, site = parts[index], parts[index + 1]
        if records and records[-1][0] == site:
            records[-1][1] += chunk
        else:
            records.append([site, chunk])
    if parts[-1]:
        records.append(["", parts[-1]])  # output without a site: a print not traced here
    if len(records) > MAX_PRINT_RECORDS:
        by_site: dict[str, str] = {}
        for site, chunk in records:
            by_site[site] = by_site.get(site, "") + chunk
        records = [[site, chunk] for site, chunk in by_site.items()]
    for record in records:
        if len(record[1]) > MAX_PRINT:
            data = record[1].encode("utf-8")
            record[1] = {
                "len": len(record[1]),
                "sha1": hashlib.sha1(data).hexdigest(),
                "head": record[1][:200],
            }
    return records


def _array_digest(arr: Any) -> dict[str, Any]:
    from autosig.verify.arrays import digest_array  # NumPy: loaded once TensorFlow is

    return digest_array(arr)


def digest(value: Any, depth: int = 0) -> Any:
    """A JSON-able digest of a returned value (structure, types, values)."""
    if depth > 32:
        return {"k": "deep"}
    tf = sys.modules.get("tensorflow")
    if value is None or isinstance(value, (bool, int, str)):
        return {"k": "py", "type": type(value).__name__, "value": value}
    if isinstance(value, float):
        from autosig.verify.arrays import json_float

        return {"k": "py", "type": "float", "value": json_float(value)}
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


call_variables = _variables


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
    if _CAPTURE:
        _CAPTURE[-1].append(entry)  # a call outside the workload (``unseen``)
        return
    CALLS.setdefault(key, []).append(entry)


_CAPTURE: list[list[dict[str, Any]]] = []


@contextlib.contextmanager
def captured() -> Iterator[list[dict[str, Any]]]:
    """Calls made inside go to the list yielded, not to the workload's calls."""
    box: list[dict[str, Any]] = []
    _CAPTURE.append(box)
    try:
        yield box
    finally:
        _CAPTURE.pop()


def capturing() -> bool:
    return bool(_CAPTURE)


_RANDOM_SEEN: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def note_reach(key: tuple[str, str, int], fn_self: Any) -> None:
    """Summarise what the function's new traces' random draws and variable reads reach
    (``reach.summarise``). Looks only when the function traced since it last looked."""
    try:
        count = fn_self.experimental_get_tracing_count()
        with contextlib.suppress(TypeError):
            if _RANDOM_SEEN.get(fn_self) == count:
                return
            _RANDOM_SEEN[fn_self] = count
    except Exception:  # noqa: BLE001 - a private API that moved: nothing is by design
        return
    summary = REACH.setdefault(key, {})
    reach.summarise(fn_self, _REACH_DONE.setdefault(key, set()), summary)
    ops = summary.get("ops", {})
    RANDOM_OPS.setdefault(key, set()).update(*ops.values())


def per_function(entries: Mapping[tuple[str, str, int], Any], name: str) -> list[dict[str, Any]]:
    """A per-function table as the status files keep it: file, qualname, line, ``name``."""
    return [
        {"file": f, "qualname": q, "line": line, name: value}
        for (f, q, line), value in entries.items()
    ]


def write_status_file(status_dir: str | Path, prefix: str, tables: dict[str, Any]) -> None:
    """``<prefix>-<pid>.json`` in the run's status directory, with this process's start."""
    data = {"pid": os.getpid(), "started": STARTED, **tables}
    path = Path(status_dir) / f"{prefix}-{os.getpid()}.json"
    path.write_text(json.dumps(data), encoding="utf-8")


def write(status_dir: str | Path) -> None:
    write_status_file(
        status_dir,
        "effects",
        {
            "functions": per_function(CALLS, "calls"),
            "nested": per_function({k: sorted(map(list, v)) for k, v in NESTED.items()}, "outers"),
            "random_ops": per_function({k: sorted(v) for k, v in RANDOM_OPS.items() if v}, "ops"),
            "reach": per_function(REACH, "summary"),
        },
    )


# -- parent side --------------------------------------------------------------------------


@dataclass
class RunEffects:
    """One run's effects: (file, qualname) -> calls in order, per ordinal of first line."""

    calls: dict[tuple[str, str, int], list[dict[str, Any]]]
    random_ops: dict[tuple[str, str, int], set[str]]
    loaded: bool
    nested: dict[tuple[str, str, int], set[tuple[str, str]]] = field(default_factory=dict)
    """Functions called while another traced -> (file, qualname) of the one tracing."""
    reach: dict[tuple[str, str, int], dict[str, Any]] = field(default_factory=dict)
    """What each function's random draws and variable reads reach (``reach.summarise``),
    merged over the run's processes."""
    unseen: dict[tuple[str, str, int], list[dict[str, Any]]] = field(default_factory=dict)
    """Each function's calls on unseen inputs (``unseen``): {"label", "entry"}."""
    unseen_skipped: dict[tuple[str, str, int], str] = field(default_factory=dict)
    """Functions not called on unseen inputs -> why."""


def load_run(status_dir: Path) -> RunEffects:
    """Every process's effects, processes in start order, keyed (abs file, qualname, n-th)."""
    docs = []
    for path in sorted(status_dir.glob("effects-*.json")):
        with contextlib.suppress(OSError, ValueError):
            docs.append(json.loads(path.read_text(encoding="utf-8")))
    docs.sort(key=lambda d: d.get("started", 0))
    extra = []
    for path in sorted(status_dir.glob("unseen-*.json")):
        with contextlib.suppress(OSError, ValueError):
            extra.append(json.loads(path.read_text(encoding="utf-8")))
    extra.sort(key=lambda d: d.get("started", 0))
    calls: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    random: dict[tuple[str, str, int], set[str]] = {}
    nested: dict[tuple[str, str, int], set[tuple[str, str]]] = {}
    reached: dict[tuple[str, str, int], dict[str, Any]] = {}
    for doc in docs:
        for key, entries in _by_ordinal(doc.get("functions", [])).items():
            calls.setdefault(key, []).extend(entries["calls"])
        for key, entries in _by_ordinal(doc.get("random_ops", [])).items():
            random.setdefault(key, set()).update(entries["ops"])
        for key, entries in _by_ordinal(doc.get("nested", [])).items():
            nested.setdefault(key, set()).update(tuple(o) for o in entries["outers"])
        for key, entries in _by_ordinal(doc.get("reach", [])).items():
            reached[key] = reach.merge(reached.get(key, {}), entries["summary"])
    unseen: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    skipped: dict[tuple[str, str, int], str] = {}
    for doc in extra:
        for key, entries in _by_ordinal(doc.get("functions", [])).items():
            unseen.setdefault(key, []).extend(entries["inputs"])
        for key, entries in _by_ordinal(doc.get("skipped", [])).items():
            skipped.setdefault(key, entries["why"])
    return RunEffects(calls, random, bool(docs), nested, reached, unseen, skipped)


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

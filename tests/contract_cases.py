"""The contract suite of issues 21 and 22: realistic programs, original vs fixed.

Run as a script (one TensorFlow process for every case), like ``safety_cases.py``. For
each program of ``contract_programs.py`` it

1. profiles the original on the case's profiled calls (``autosig.record``),
2. fixes a copy with the command line, exactly as a user would:
   ``autosig fix . --profile profile.json`` (safe fixes only, static rules included,
   every file of the case),
3. runs the original, the fixed copy and (where the case has one) the hand fix, each
   freshly imported in this process from the same seed: the profiled calls again, then
   every call outside the profile, each on its own,

and prints one JSON line per case: what each program returned (values, dtypes, shapes)
or raised, and how many times each of the case's own ``tf.function``s traced during the
profiled calls (counted by a hook on TensorFlow's tracing, not by autosig). The test
(``test_contract_tf.py``) compares them; nothing here trusts autosig's verifier.

``python tests/contract_cases.py [NAME...]`` runs all cases (or the named ones) and ends
with the table of ``table()``: per class, cases, broken, fixed, partly fixed, changed
(no hand fix to reach), left unfixed.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from contract_programs import CASES, CLASSES, Case  # noqa: E402 - the tests folder first

SEED = 1234
"""Every run starts from this seed (Python, NumPy, TensorFlow, Keras): weights and
random streams are the same in the original, fixed and hand-fixed programs."""

TOLERANCE = {"float16": (1e-2, 1e-3), "bfloat16": (2e-2, 1e-2), "float32": (1e-5, 1e-6)}
"""(rtol, atol) per float dtype; float64, complex and Python floats: 1e-12. Integers,
booleans and strings compare exactly. A relaxed shape may change a reduction's order by
an ulp; a real break differs by far more (a float32 cast of a float64 value by 1e-8)."""


# -- what a program did (pure: the test imports these without TensorFlow) --------------


def same(a: Any, b: Any, values: bool = True) -> bool:
    """Whether two observations (``observe``'s trees) are the same result: same
    structure, kinds, dtypes and shapes; equal values (floats within tolerance) unless
    ``values`` is false (what a random draw must keep)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return False
        if "value" in a and "dtype" in a:
            if a["dtype"] != b["dtype"] or a["shape"] != b["shape"]:
                return False
            return not values or _same_values(a["value"], b["value"], _tolerance(a["dtype"]))
        if "py" in a:
            tolerance = _tolerance("float64") if a["py"] == "float" else None
            return a["py"] == b["py"] and (
                not values or _same_values(a["value"], b["value"], tolerance)
            )
        return all(same(a[k], b[k], values) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, values) for x, y in zip(a, b, strict=True))
    return a == b


def _tolerance(dtype: str) -> tuple[float, float] | None:
    """(rtol, atol) for a dtype's values; None: compared exactly."""
    if dtype in TOLERANCE:
        return TOLERANCE[dtype]
    return (1e-12, 1e-12) if dtype.startswith(("float", "complex")) else None


def _same_values(a: Any, b: Any, tolerance: tuple[float, float] | None) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(
            _same_values(x, y, tolerance) for x, y in zip(a, b, strict=True)
        )
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float))
    if tolerance is None or not numbers:
        return a == b or (_nan(a) and _nan(b))
    if _nan(a) or _nan(b):
        return _nan(a) and _nan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    rtol, atol = tolerance
    return abs(a - b) <= atol + rtol * abs(b)


def _nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def run_differences(original: dict, other: dict, values: bool = True) -> list[str]:
    """Where ``other`` (a fixed or hand-fixed run) differs from ``original``: a call that
    raises where the original did not (or the reverse), or a different result (with
    ``values`` false: other structure, dtypes or shapes only). Calls the original rejects
    must be rejected too (any exception)."""
    found = []
    if "setup_error" in other or "setup_error" in original:
        if original.get("setup_error") != other.get("setup_error"):
            found.append(f"setup: {original.get('setup_error')} -> {other.get('setup_error')}")
        return found
    pairs = [("profiled calls", original["profiled"], other["profiled"])]
    pairs += [
        (f"unseen call {i}", a, b)
        for i, (a, b) in enumerate(zip(original["unseen"], other["unseen"], strict=True))
    ]
    for label, a, b in pairs:
        if "error" in b and "error" not in a:
            found.append(f"{label}: raises {b['error']}")
        elif "error" in a and "error" not in b:
            found.append(f"{label}: the original raises {a['error']}, this returns")
        elif "error" not in a and not same(a["result"], b["result"], values):
            found.append(f"{label}: {_short(a['result'])} -> {_short(b['result'])}")
    for i, (a, b) in enumerate(zip(original["rejected"], other["rejected"], strict=True)):
        if "error" in a and "error" not in b:
            found.append(f"rejected call {i}: the original raises {a['error']}, this returns")
    return found


def _short(observation: Any, limit: int = 160) -> str:
    text = json.dumps(observation)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def total_traces(run: Mapping[str, Any]) -> int | None:
    """Traces of the case's own functions during the profiled calls (None: it failed)."""
    if "setup_error" in run or "error" in run["profiled"]:
        return None
    return sum(run["traces"].values())


def verdict(case: Case, row: Mapping[str, Any]) -> dict[str, Any]:
    """What the case shows about today's ``fix``.

    ``broken``: the fixed program raises where the original did not or returns other
    values, dtypes or shapes, on the profiled or the unseen calls. ``fixed``: it kept
    every result and traces no more than the hand fix on the profiled calls.
    ``partly``: changed, kept, more traces than the hand fix. ``changed``: changed and
    kept, in a case with no safe fix to reach (no hand fix). ``unfixed``: ``fix``
    changed nothing.
    """
    differences = run_differences(row["original"], row["fixed"])
    before = total_traces(row["original"])
    after = total_traces(row["fixed"])
    target = total_traces(row["hand"]) if row.get("hand") else before
    if differences:
        status = "broken"
    elif not row["changed"]:
        status = "unfixed"
    elif not row.get("hand"):
        status = "changed"
    elif after is not None and target is not None and after <= target:
        status = "fixed"
    else:
        status = "partly"
    return {
        "status": status,
        "differences": differences,
        # a random program whose structure, dtypes and shapes are kept: only the stream moved
        "stream_only": bool(case.random and differences)
        and not run_differences(row["original"], row["fixed"], values=False),
        "before": before,
        "after": after,
        "target": target,
    }


def case_problems(case: Case, row: Mapping[str, Any]) -> list[str]:
    """What would make the case mean nothing: the original fails a call it should make
    (a profiled call, an unseen one) or accepts one it should reject; a random program
    gives other results when run again from the same seed; the hand fix breaks a result
    or does not trace less than the original."""
    original = row["original"]
    if "setup_error" in original:
        return [f"the original's setup raises {original['setup_error']}"]
    problems = []
    if "error" in original["profiled"]:
        problems.append(f"the original's profiled calls raise {original['profiled']['error']}")
    problems += [
        f"the original raises on unseen call {i}: {r['error']}"
        for i, r in enumerate(original["unseen"])
        if "error" in r
    ]
    problems += [
        f"the original accepts rejected call {i}"
        for i, r in enumerate(original["rejected"])
        if "error" not in r
    ]
    if row.get("original_again"):
        problems += [
            f"the original does not repeat itself: {d}"
            for d in run_differences(original, row["original_again"])
        ]
    if row.get("hand"):
        problems += [f"hand fix: {d}" for d in run_differences(original, row["hand"])]
        before, hand = total_traces(original), total_traces(row["hand"])
        if hand is not None and before is not None and hand >= before:
            problems.append(f"hand fix: {hand} traces, the original {before}")
    return problems


def table(rows: Mapping[str, Mapping[str, Any]]) -> str:
    """Per class: cases, broken, fixed (results kept, the hand fix's trace count
    reached), partly (kept, more traces than the hand fix), changed (kept, no hand fix
    to reach), left unfixed; then the contract classes' total."""
    header = ("class", "cases", "broken", "fixed", "partly", "changed", "unfixed")
    lines = []
    totals = dict.fromkeys(header[1:], 0)
    for key, title in CLASSES.items():
        names = [c.name for c in CASES if c.klass == key and c.name in rows]
        if not names:
            continue
        counts = dict.fromkeys(header[1:], 0)
        counts["cases"] = len(names)
        for name in names:
            counts[verdict(CASE_BY_NAME[name], rows[name])["status"]] += 1
        for k, v in counts.items():
            if key != "precision":
                totals[k] += v
        lines.append((f"{key} {title}", *(str(counts[k]) for k in header[1:])))
    lines.append(("all contract classes", *(str(totals[k]) for k in header[1:])))
    widths = [max(len(r[i]) for r in [header, *lines]) for i in range(len(header))]
    out = []
    for r in [header, *lines]:
        out.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    return "\n".join(out)


CASE_BY_NAME = {case.name: case for case in CASES}


# -- running programs (TensorFlow) -----------------------------------------------------


class TraceCounter:
    """Counts every trace of a ``tf.function`` whose Python function is defined under a
    directory, by its qualified name: a hook on TensorFlow's own tracing step
    (``tracing_compilation._create_concrete_function``, TF 2.21), so the count does not
    depend on autosig's recorder and includes ``get_concrete_function`` calls."""

    def __init__(self) -> None:
        from tensorflow.python.eager.polymorphic_function import tracing_compilation

        if not hasattr(tracing_compilation, "_create_concrete_function"):
            raise RuntimeError("this TensorFlow has no tracing_compilation hook to count on")
        self.original = tracing_compilation._create_concrete_function
        self.root: str | None = None
        self.counts: dict[str, int] = {}
        counter = self

        def counting(function_type, type_context, func_graph, tracing_options):  # noqa: ANN001, ANN202
            code_of = _code(tracing_options.python_function)
            if code_of is not None and counter.root and code_of[0].startswith(counter.root):
                counter.counts[code_of[1]] = counter.counts.get(code_of[1], 0) + 1
            return counter.original(function_type, type_context, func_graph, tracing_options)

        tracing_compilation._create_concrete_function = counting

    @contextlib.contextmanager
    def under(self, root: Path) -> Iterator[dict[str, int]]:
        self.root, self.counts = str(root) + os.sep, {}
        try:
            yield self.counts
        finally:
            self.root = None


def _code(fn: Any) -> tuple[str, str] | None:
    """(file, qualified name) of the Python function behind a traced callable: through
    bound methods, decorators' ``__wrapped__`` and ``functools.partial``."""
    for _ in range(20):
        inner = getattr(fn, "__func__", None) or getattr(fn, "__wrapped__", None)
        inner = inner or getattr(fn, "func", None)
        if inner is None:
            break
        fn = inner
    code = getattr(fn, "__code__", None)
    return (code.co_filename, fn.__qualname__) if code is not None else None


def observe(value: Any) -> Any:
    """A JSON tree of what a call returned: tensors and arrays as dtype, shape, values;
    Python numbers and strings with their type; structures kept."""
    import numpy as np

    if isinstance(value, dict):
        return {"dict": {str(k): observe(v) for k, v in sorted(value.items(), key=str)}}
    if isinstance(value, (list, tuple)):
        return [observe(v) for v in value]
    if hasattr(value, "numpy") and hasattr(value, "dtype"):
        value = value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind in "SOU":
            data = [v.decode() if isinstance(v, bytes) else str(v) for v in array.ravel()]
        else:
            data = array.tolist()
        return {"dtype": str(array.dtype), "shape": list(array.shape), "value": data}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"py": type(value).__name__, "value": value}
    return {"object": type(value).__name__}


def _exception(exc: BaseException) -> str:
    """The exception's type and the line that says what went wrong (for TensorFlow's
    "in user code:" messages, the last line naming an error)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if lines and lines[0] == "in user code:":
        named = [line for line in lines if "Error: " in line or "Exception: " in line]
        lines = named[-1:] or lines[-1:]
    return f"{type(exc).__name__}: {lines[0][:200] if lines else ''}"


def _fresh_import(directory: Path, names: Sequence[str]) -> Any:
    """Import the case's modules from ``directory`` as if for the first time."""
    import importlib

    for name in names:
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    sys.path.insert(0, str(directory))
    try:
        return importlib.import_module("model")
    finally:
        sys.path.remove(str(directory))


def _seed() -> None:
    import keras

    keras.utils.set_random_seed(SEED)


def _scope(module: Any) -> dict[str, Any]:
    import keras
    import numpy as np
    import tensorflow as tf

    def spec_of(value: Any) -> Any:
        """What a random result must keep: its structure, dtypes and shapes."""
        return tf.nest.map_structure(lambda t: f"{t.dtype.name}{list(t.shape)}", value)

    return {"m": module, "tf": tf, "np": np, "keras": keras, "spec_of": spec_of}


def run_program(case: Case, directory: Path, counter: TraceCounter) -> dict[str, Any]:
    """The case's calls on the program in ``directory``: the profiled calls (their
    ``out``, if they set one, and the traces they cost), then each unseen and each
    rejected call on its own."""
    names = [Path(f).stem for f in case.files]
    _seed()
    run: dict[str, Any] = {}
    with counter.under(directory) as traces:
        try:
            scope = _scope(_fresh_import(directory, names))
            exec(textwrap.dedent(case.setup), scope)  # noqa: S102 - the case's driver
        except Exception as exc:  # noqa: BLE001 - the exception is the observable result
            return {"setup_error": _exception(exc), "traces": dict(traces)}
        try:
            exec(textwrap.dedent(case.profiled), scope)  # noqa: S102
            run["profiled"] = {"result": observe(scope.pop("out", None))}
        except Exception as exc:  # noqa: BLE001
            run["profiled"] = {"error": _exception(exc)}
        run["traces"] = dict(traces)
    for key, calls in (("unseen", case.unseen), ("rejected", case.rejected)):
        run[key] = []
        for call in calls:
            try:
                result = eval(textwrap.dedent(call).strip(), scope)  # noqa: S307
                run[key].append({"result": observe(result)})
            except Exception as exc:  # noqa: BLE001
                run[key].append({"error": _exception(exc)})
    for name in names:
        sys.modules.pop(name, None)
    return run


def _write(directory: Path, files: Mapping[str, str]) -> None:
    directory.mkdir(parents=True)
    for name, text in files.items():
        (directory / name).write_text(textwrap.dedent(text).lstrip())


def _hand_files(case: Case) -> dict[str, str]:
    files = {name: textwrap.dedent(text).lstrip() for name, text in case.files.items()}
    for name, old, new in case.hand or ():
        if files[name].count(old) != 1:
            raise ValueError(f"{case.name}: hand edit not found once in {name}: {old!r}")
        files[name] = files[name].replace(old, new)
    return files


def fix_with_cli(directory: Path) -> tuple[int, str]:
    """``autosig fix . --profile profile.json`` in ``directory``, in this process (the
    command line, so nothing here depends on where the planner lives): exit code and
    the summary it prints on stderr."""
    from click.testing import CliRunner

    from autosig.cli import cli

    previous = Path.cwd()
    os.chdir(directory)
    try:
        result = CliRunner().invoke(
            cli, ["fix", ".", "--profile", "profile.json", "-j", "1"], catch_exceptions=True
        )
    finally:
        os.chdir(previous)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, (result.stdout + result.stderr).strip()


def run_case(case: Case, root: Path, counter: TraceCounter) -> dict[str, Any]:
    import autosig

    started = time.perf_counter()
    original, fixed, hand = root / "original", root / "fixed", root / "hand"
    _write(original, case.files)
    previous = Path.cwd()
    os.chdir(original)
    try:
        names = [Path(f).stem for f in case.files]
        _seed()
        with autosig.record(str(original / "profile.json")):
            scope = _scope(_fresh_import(original, names))
            exec(textwrap.dedent(case.setup), scope)  # noqa: S102
            exec(textwrap.dedent(case.profiled), scope)  # noqa: S102
        del scope
        for name in names:
            sys.modules.pop(name, None)
    finally:
        os.chdir(previous)
    keep = os.environ.get("CONTRACT_KEEP")  # a folder: keep each profiled original there
    if keep:
        shutil.copytree(original, Path(keep) / case.name, dirs_exist_ok=True)
    shutil.copytree(original, fixed)
    exit_code, summary = fix_with_cli(fixed)
    texts = {name: (fixed / name).read_text() for name in case.files}
    before = {name: (original / name).read_text() for name in case.files}
    row: dict[str, Any] = {
        "case": case.name,
        "class": case.klass,
        "changed": texts != before,
        "fix_exit": exit_code,
        "summary": summary,
        "new_text": {n: t for n, t in texts.items() if t != before[n]},
        "original": run_program(case, original, counter),
        "fixed": run_program(case, fixed, counter),
        "hand": None,
    }
    if case.hand is not None:
        _write(hand, _hand_files(case))
        row["hand"] = run_program(case, hand, counter)
    if case.random:  # the comparison means something only if the original repeats itself
        row["original_again"] = run_program(case, original, counter)
    row["seconds"] = round(time.perf_counter() - started, 2)
    return row


COUNTER_CHECK = """
import tensorflow as tf

@tf.function
def double(x):
    return x * 2.0

class Scale(tf.Module):
    @tf.function
    def __call__(self, x):
        return x * 3.0
"""


def counter_self_check(counter: TraceCounter) -> dict[str, dict[str, int]]:
    """The hook's counts next to TensorFlow's own ``experimental_get_tracing_count`` for
    a function and a method called with 3 shapes (the method on 2 instances)."""
    import tensorflow as tf

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        _write(root / "check", {"model.py": COUNTER_CHECK})
        with counter.under(root / "check") as traces:
            module = _fresh_import(root / "check", ["model"])
            first, second = module.Scale(), module.Scale()
            for n in (1, 2, 3):
                module.double(tf.ones([n]))
                first(tf.ones([n]))
            second(tf.ones([4]))
        own = {
            "double": module.double.experimental_get_tracing_count(),
            "Scale.__call__": first.__call__.experimental_get_tracing_count()
            + second.__call__.experimental_get_tracing_count(),
        }
        sys.modules.pop("model", None)
    return {"hook": dict(traces), "tensorflow": own}


def main(argv: Sequence[str]) -> None:
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    wanted = set(argv)
    unknown = wanted - set(CASE_BY_NAME)
    if unknown:
        raise SystemExit(f"unknown cases: {sorted(unknown)}")
    counter = TraceCounter()
    print(json.dumps({"self_check": counter_self_check(counter)}), flush=True)
    rows = {}
    started = time.perf_counter()
    for case in CASES:
        if wanted and case.name not in wanted:
            continue
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
            row = run_case(case, Path(tmp).resolve(), counter)
        rows[case.name] = row
        print(json.dumps(row), flush=True)
    for name, row in rows.items():
        for problem in case_problems(CASE_BY_NAME[name], row):
            print(f"PROBLEM {name}: {problem}")
    print(table(rows))
    print(f"{len(rows)} cases in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])

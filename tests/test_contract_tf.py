"""The contract of issues 21 and 22, measured on realistic programs (``contract_programs.py``).

One TensorFlow process (``contract_cases.py``) profiles each program, fixes a copy with
``autosig fix . --profile`` (safe fixes only) and runs the original, the fixed copy and
the hand fix on the profiled calls and on calls the profile never saw; here the results
are compared, independently of ``autosig verify``.

- A contract case (issue 21 classes 1-5, issue 22) passes when the fixed program returns
  what the original returns (values, dtypes, shapes; raises only where it raises) on
  every call. 0 broken is the target.
- A precision case passes when the fixed program also reaches the hand fix's trace
  count on the profiled calls.

A case whose ``known`` says what today's main does wrong is a strict expected failure
naming its class: it fails the suite once it is fixed, so the note is removed with the
fix. ``python tests/contract_cases.py`` prints the table (per class: cases, broken,
fixed, partly, changed, left unfixed).
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from contract_cases import case_problems, table, verdict  # noqa: E402
from contract_programs import CASES, CLASSES, Case  # noqa: E402

pytestmark = [pytest.mark.tf, pytest.mark.slow]

SCRIPT = Path(__file__).with_name("contract_cases.py")
TIMEOUT_S = 1800
MIN_PROGRAMS = 44
"""The issues' measuring stick: at least this many contract programs."""


def _run_script() -> str:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
    env["PYTHONPATH"] = str(SCRIPT.parent.parent)  # this checkout's autosig
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="session")
def output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The script's output, run once per session (xdist workers share it)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return _run_script()
    shared = tmp_path_factory.getbasetemp().parent  # this session's, for every worker
    result = shared / "contract_cases.out"
    with (shared / "contract_cases.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.exists():
            result.write_text(_run_script())
    return result.read_text()


@pytest.fixture(scope="session")
def rows(output: str) -> dict[str, dict]:
    parsed = [json.loads(line) for line in output.splitlines() if line.startswith('{"case"')]
    return {row["case"]: row for row in parsed}


def _params(precision: bool) -> list:
    out = []
    for case in CASES:
        if (case.klass == "precision") != precision:
            continue
        marks = []
        if case.known:
            where = "precision" if precision else f"issue {case.klass.replace('.', ' class ')}"
            reason = f"{where} ({CLASSES[case.klass]}): {case.known}"
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        out.append(pytest.param(case, id=case.name, marks=marks))
    return out


def _explain(case: Case, row: dict, found: dict) -> str:
    lines = [f"{case.name} ({case.klass}: {CLASSES[case.klass]}): {found['status']}"]
    lines += [f"  {d}" for d in found["differences"]]
    if found["stream_only"]:
        lines.append("  (only the random values moved: structure, dtypes and shapes kept)")
    lines.append(f"  traces on the profiled calls: {found['before']} -> {found['after']}")
    lines.append(f"  hand fix: {found['target']}")
    lines += [f"  fix: {line}" for line in row["summary"].splitlines()]
    lines += [f"  {name}:\n{text}" for name, text in row["new_text"].items()]
    return "\n".join(lines)


@pytest.mark.parametrize("case", _params(precision=False))
def test_safe_fix_keeps_results(case: Case, rows: dict[str, dict]) -> None:
    """The fixed program raises only where the original raises and returns the same
    values, dtypes and shapes, on the profiled calls and on every unseen call."""
    row = rows[case.name]
    found = verdict(case, row)
    assert not found["differences"], _explain(case, row, found)


@pytest.mark.parametrize("case", _params(precision=True))
def test_precision_case_is_fixed(case: Case, rows: dict[str, dict]) -> None:
    """A correct tool fixes these to the hand fix's trace count, keeping every result."""
    row = rows[case.name]
    found = verdict(case, row)
    assert found["status"] == "fixed", _explain(case, row, found)


def test_every_case_means_something(rows: dict[str, dict]) -> None:
    """The originals run every call the case makes (and reject the calls they should);
    random programs repeat themselves from the same seed; every hand fix keeps all
    results and traces less than the original: the target counts are real fixes."""
    assert set(rows) == {case.name for case in CASES}
    problems = {
        case.name: case_problems(case, rows[case.name])
        for case in CASES
        if case_problems(case, rows[case.name])
    }
    assert not problems


def test_trace_counts_are_tensorflows(output: str) -> None:
    """The harness's trace hook counts what TensorFlow's own tracing count says."""
    check = next(
        json.loads(line)["self_check"] for line in output.splitlines() if '"self_check"' in line
    )
    assert check["hook"] == check["tensorflow"]
    assert check["hook"] == {"double": 3, "Scale.__call__": 4}


def test_the_measuring_stick_covers_every_class(rows: dict[str, dict]) -> None:
    """At least 44 contract programs; every class of the issues has cases; the table
    (printed with -s or on failure) adds up."""
    contract = [case for case in CASES if case.klass != "precision"]
    assert len(contract) >= MIN_PROGRAMS
    counts = {key: sum(case.klass == key for case in CASES) for key in CLASSES}
    assert all(count >= 4 for count in counts.values()), counts
    text = table(rows)
    print(text)
    broken = sum(verdict(case, rows[case.name])["status"] == "broken" for case in contract)
    total = text.splitlines()[-1].split()
    assert int(total[-6]) == len(contract) and int(total[-5]) == broken, text

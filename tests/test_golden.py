"""Golden cases: every scenario in golden/ through profile -> explain -> fix -> verify.

Each case is copied to a temporary directory. The expected files (golden/NN/expected/:
the rewritten ``model.py``, ``explain.txt``, ``fix.txt``) are compared after timings,
temporary paths and function order are normalised; ``pytest --update-golden`` rewrites
them instead (never silently: without the flag a missing file is a failure). Trace
counts come from the driver's last ``TRACES {...}`` line: after autosig's fix they must
reach the hand-written fix (``hand.py``) for the functions named in ``case.json``, and
never get worse for the others. The rewritten program must also print what the original
prints (independently of ``autosig verify``), including on the calls each driver makes
outside its profile (``GOLDEN_UNSEEN=1``: other batch sizes, other instances, larger
ints). A command a case needs that is missing (``autosig NAME --help`` fails) fails the
case: a golden run that checks less than it says is no pass.

autosig itself always runs as a user runs it (``python -m autosig``). The driver it
profiles and verifies starts as a user's ``python driver.py`` does (a new process that
imports TensorFlow) in the cases of ``REAL_START``; in the others it runs as a fork of the
worker's TensorFlow import (``tests/tf_fork_python.py``), with autosig's recorder and
verify bootstrap started in it from the environment autosig gives it, which saves three
TensorFlow imports (about 10 s of CPU) per case.
"""

from __future__ import annotations

import ast
import difflib
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fork_runs import tf_program_env

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "driver.py").is_file())
CASE_KEYS = {"fix_args", "reach_hand", "explain_mentions"}
OPTIONAL_KEYS = {"xfail", "fix_paths"}
"""``xfail``: why the case is known to fail now (strict: passing then is an error).
``fix_paths``: the files ``autosig fix`` is given (default ``["model.py"]``); a case whose
fix passes tensors at the driver's call sites names ``driver.py`` too, as a user fixing
the project's directory does. Each file fixed has its expected/ copy."""
DEFAULT_FIX_PATHS = ["model.py"]
TIMEOUT_S = 300
PROFILE = ".autosig/profile.json"
REAL_START = frozenset({"01_incremental_phases", "18_distributed_step"})
"""Cases whose profiled and verified driver starts as ``python driver.py`` (the
recorder's import hook in a fresh interpreter, the strategy's threads of 18 in a
process of their own): the path a user's command takes, end to end."""

_TIME = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|us|µs|min)\b")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def run_env() -> dict[str, str]:
    # The autosig under test is this checkout's, also in the subprocesses: a PYTHONPATH
    # of the user's is dropped, and an installed autosig (an editable install of
    # another checkout or worktree) must not be the one that runs.
    return tf_program_env()


def run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env or run_env(), capture_output=True, text=True, timeout=TIMEOUT_S
    )


def autosig(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "autosig", *args], cwd, env)


@dataclass(frozen=True)
class Driver:
    """How autosig starts the case's driver: ``python`` (argv) and autosig's environment."""

    python: tuple[str, ...]
    env: dict[str, str]


def driver_launch(name: str, forks: Any) -> Driver:
    """``python`` itself for the ``REAL_START`` cases, else a fork of ``forks``."""
    if name in REAL_START:
        return Driver((sys.executable,), run_env())
    return Driver(tuple(forks.launcher()), forks.launch_env(run_env()))


@functools.cache
def require_command(name: str) -> None:
    """Fail (never skip) unless ``autosig NAME --help`` works."""
    found = autosig(name, "--help", cwd=ROOT)
    if found.returncode != 0:
        pytest.fail(f"autosig {name} is missing:\n{shown(found)}", pytrace=False)


def traces_of(proc: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """The driver's last ``TRACES {...}`` line."""
    lines = [line for line in proc.stdout.splitlines() if line.startswith("TRACES ")]
    if not lines:
        raise AssertionError(f"no TRACES line in the driver's output:\n{shown(proc)}")
    return json.loads(lines[-1][len("TRACES ") :])


def shown(proc: subprocess.CompletedProcess[str]) -> str:
    tail = "\n".join(proc.stderr.splitlines()[-25:])
    return f"$ {' '.join(map(str, proc.args))}\nexit {proc.returncode}\n{proc.stdout}\n{tail}"


def normalise(text: str, workdir: Path, *, sort_blocks: bool = True) -> str:
    """Drop what changes between runs: paths, timings, addresses, function order."""
    for path in {str(workdir.resolve()), str(workdir)}:
        text = text.replace(path + os.sep, "").replace(path, "<case>")
    text = _ADDRESS.sub("0x?", _TIME.sub("<time>", text))
    if not sort_blocks:
        return text
    # explain's one line about the probe run follows the last function's block with no
    # blank line: kept last, so the order the functions came in cannot move it
    lines = text.splitlines()
    run = "".join(f"{line}\n" for line in lines if line.startswith("probes:"))
    text = "\n".join(line for line in lines if not line.startswith("probes:"))
    blocks = [block.strip("\n") for block in re.split(r"\n\s*\n", text) if block.strip()]
    return "\n\n".join(sorted(blocks)) + "\n" + run


def load_case(name: str) -> dict:
    return json.loads((GOLDEN / name / "case.json").read_text())


@dataclass
class Outcome:
    """What one golden run found: failed checks, updated files."""

    expected_dir: Path
    update: bool
    problems: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)

    def check(self, ok: bool, message: str) -> bool:
        if not ok:
            self.problems.append(message)
        return ok

    def compare(self, name: str, actual: str) -> None:
        """Compare with expected/NAME; with --update-golden write it instead."""
        path = self.expected_dir / name
        if self.update:
            if not path.is_file() or path.read_text() != actual:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(actual)
                self.updated.append(str(path.relative_to(ROOT)))
            return
        if not path.is_file():
            self.problems.append(f"{path.relative_to(ROOT)} is missing: run pytest --update-golden")
            return
        expected = path.read_text()
        if expected != actual:
            diff = difflib.unified_diff(
                expected.splitlines(True), actual.splitlines(True), f"expected/{name}", "actual"
            )
            self.problems.append(f"{name} differs from expected:\n{''.join(diff)}")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.mark.parametrize("name", CASES)
def test_case_is_complete(name: str) -> None:
    """Each case has its program, hand fix, config and README, and they parse."""
    folder = GOLDEN / name
    for part in ("model.py", "driver.py", "hand.py", "case.json", "README.md"):
        assert (folder / part).is_file(), f"{name}/{part} is missing"
    for part in ("model.py", "driver.py", "hand.py"):
        ast.parse((folder / part).read_text(), filename=f"{name}/{part}")
    case = load_case(name)
    assert CASE_KEYS <= set(case) <= CASE_KEYS | OPTIONAL_KEYS, f"{name}/case.json: {sorted(case)}"
    assert case["reach_hand"], f"{name}/case.json: reach_hand names no function"
    paths = fix_paths(case)
    assert "model.py" in paths and all((folder / path).is_file() for path in paths), paths
    assert "TRACES" in (folder / "driver.py").read_text()


def test_normalise_drops_timings_paths_addresses_and_order(tmp_path: Path) -> None:
    text = (
        f"b (model.py:3): tracing 0.164 s of 12 ms in calls at 0x7f61ee00f380\n"
        f"  note: {tmp_path}/model.py changed\n\n"
        "a (model.py:1): 2 calls\n"
    )
    assert normalise(text, tmp_path) == (
        "a (model.py:1): 2 calls\n\n"
        "b (model.py:3): tracing <time> of <time> in calls at 0x?\n  note: model.py changed\n"
    )
    diff = "-@tf.function\n\n+@tf.function(reduce_retracing=True)\n"
    assert normalise(diff, tmp_path, sort_blocks=False) == diff
    # the probe run's line stays last whichever function explain printed last (it
    # follows that function's block with no blank line)
    run = "probes: 14 traces in 2 rounds, 0.31 s (budget 5 s per process)\n"
    one = "standardize (model.py:6): 8 calls\n\nClipper._clip (model.py:23): 8 calls\n" + run
    other = "Clipper._clip (model.py:23): 8 calls\n\nstandardize (model.py:6): 8 calls\n" + run
    assert normalise(one, tmp_path) == normalise(other, tmp_path)
    assert normalise(one, tmp_path).endswith(
        "probes: 14 traces in 2 rounds, <time> (budget <time> per process)\n"
    )


def test_every_case_is_numbered_once() -> None:
    numbers = [name.split("_", 1)[0] for name in CASES]
    assert len(CASES) >= 12 and len(set(numbers)) == len(numbers)


@pytest.mark.tf
@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_golden_case(name: str, tmp_path: Path, update_golden: bool, tf_forks: Any) -> None:
    for command in ("profile", "explain", "fix", "verify"):
        require_command(command)
    case = load_case(name)
    source = GOLDEN / name
    work = tmp_path / name
    shutil.copytree(
        source, work, ignore=shutil.ignore_patterns("expected", "hand.py", "__pycache__")
    )
    hand = tmp_path / "hand.py"
    shutil.copyfile(source / "hand.py", hand)
    out = Outcome(source / "expected", update_golden)
    driver = driver_launch(name, tf_forks)

    # The drivers on the hand fix and, below, on the original and the rewritten module
    # are plain programs: they run as forks of one TensorFlow import (tf_forks). autosig
    # itself (profile, verify) starts as a user starts it.
    hand_run = tf_forks.start(["driver.py", str(hand)], work, run_env())  # runs meanwhile
    profiled = autosig(
        "profile", "-o", PROFILE, "--", *driver.python, "driver.py", cwd=work, env=driver.env
    )
    assert profiled.returncode == 0, shown(profiled)
    original = traces_of(profiled)
    hand_done = hand_run.wait(TIMEOUT_S)
    assert hand_done.returncode == 0, shown(hand_done)
    target = traces_of(hand_done)
    for fn in case["reach_hand"]:
        out.check(
            target.get(fn, 10**9) <= original.get(fn, -1),
            f"hand.py does not reach fewer or equal traces for {fn}: {target} vs {original}",
        )

    explained = autosig("explain", PROFILE, cwd=work)
    if out.check(explained.returncode == 0, f"explain failed:\n{shown(explained)}"):
        out.compare("explain.txt", normalise(explained.stdout, work))
        for word in case["explain_mentions"]:
            out.check(word.lower() in explained.stdout.lower(), f"explain never says {word!r}")

    check_fix(work, case, original, target, out, tf_forks, driver)

    if out.updated:
        print("updated: " + ", ".join(out.updated))
    known = case.get("xfail")
    if out.problems:
        report = f"golden case {name}:\n" + "\n\n".join(out.problems)
        if known and not out.update:
            pytest.xfail(f"{known}\n{report}")
        pytest.fail(report, pytrace=False)
    if known and not out.update:
        pytest.fail(f"golden case {name} passes now: remove 'xfail' from its case.json", False)


def check_fix(
    work: Path,
    case: dict,
    original: dict[str, int],
    target: dict[str, int],
    out: Outcome,
    forks: Any,
    driver: Driver,
) -> None:
    """fix --diff, verify, fix, idempotence, and trace counts of the rewritten module."""
    fix_args = case["fix_args"]
    paths = fix_paths(case)
    diff = autosig("fix", *paths, "--profile", PROFILE, "--diff", *fix_args, cwd=work)
    expected = [out.expected_dir / path for path in paths]
    if not out.update and all(path.is_file() for path in expected):
        changes = any(path.read_text() != (work / path.name).read_text() for path in expected)
        out.check(
            diff.returncode == (1 if changes else 0),
            f"fix --diff should exit {1 if changes else 0}:\n{shown(diff)}",
        )
    else:
        out.check(diff.returncode in (0, 1), f"fix --diff failed:\n{shown(diff)}")
    report = f"{diff.stdout}\n# stderr\n{diff.stderr}"
    out.compare("fix.txt", normalise(report, work, sort_blocks=False))

    # In place, before fix writes: the profile names its project root, so a copy of
    # the directory would not match it.
    verified = autosig(
        "verify",
        "--profile",
        PROFILE,
        *verify_args(case),
        "--",
        *driver.python,
        "driver.py",
        cwd=work,
        env=driver.env,
    )
    out.check(verified.returncode == 0, f"verify failed:\n{shown(verified)}")

    for path in paths:
        shutil.copyfile(work / path, work / f"original_{path}")
    written = autosig("fix", *paths, "--profile", PROFILE, *fix_args, cwd=work)
    if out.check(written.returncode in (0, 1), f"fix failed:\n{shown(written)}"):
        for path in paths:
            out.compare(path, (work / path).read_text())
        again = autosig("fix", *paths, "--profile", PROFILE, "--diff", *fix_args, cwd=work)
        out.check(
            again.returncode == 0, f"a second fix --diff must change nothing:\n{shown(again)}"
        )
        check_traces(work, case, original, target, out, forks)


def fix_paths(case: dict) -> list[str]:
    """The files the case's ``autosig fix`` is given (``model.py`` unless it says)."""
    return list(case.get("fix_paths", DEFAULT_FIX_PATHS))


def verify_args(case: dict) -> list[str]:
    """XLA runs double verify's time: on only when AUTOSIG_GOLDEN_XLA=1."""
    xla = os.environ.get("AUTOSIG_GOLDEN_XLA") == "1"
    return [*case["fix_args"], "--xla" if xla else "--no-xla"]


ORIGINAL = "original_model.py"
"""A copy of the case's model.py taken before ``autosig fix`` writes it (each file fixed
gets its ``original_`` copy: ``original_driver.py`` when the driver is fixed too)."""


def run_unseen(args: list[str], cwd: Path, forks: Any) -> subprocess.CompletedProcess[str]:
    """Run a driver (``args`` after the interpreter) with its calls outside the profile
    (``GOLDEN_UNSEEN=1``), as a fork of the TensorFlow import (``tf_forks``)."""
    return forks.run(args, cwd, {**run_env(), "GOLDEN_UNSEEN": "1"}, TIMEOUT_S)


def printed(stdout: str, unsafe: bool) -> list[str]:
    """The results a driver prints: all but its TRACES line; with unsafe fixes (which
    change random streams and trace-time prints on purpose) only the calls outside the
    profile, whose drivers print nothing those fixes change."""
    lines = [line for line in stdout.splitlines() if not line.startswith("TRACES ")]
    return [line for line in lines if line.startswith("UNSEEN")] if unsafe else lines


def check_traces(
    work: Path,
    case: dict,
    original: dict[str, int],
    target: dict[str, int],
    out: Outcome,
    forks: Any,
) -> None:
    """The rewritten module reaches hand.py's trace counts, never does worse, and prints
    what the original prints, on the profiled calls and on calls outside the profile."""
    rewritten = run_unseen(["driver.py"], work, forks)
    if not out.check(rewritten.returncode == 0, f"rewritten driver failed:\n{shown(rewritten)}"):
        return
    driver = "original_driver.py" if (work / "original_driver.py").is_file() else "driver.py"
    before = run_unseen([driver, ORIGINAL], work, forks)
    if out.check(before.returncode == 0, f"original driver failed:\n{shown(before)}"):
        unsafe = "--unsafe-fixes" in case["fix_args"]
        expected, actual = printed(before.stdout, unsafe), printed(rewritten.stdout, unsafe)
        out.check(
            expected == actual and any(line.startswith("UNSEEN") for line in expected),
            "the rewritten program prints other results than the original:\n"
            + "\n".join(
                difflib.unified_diff(expected, actual, "original", "rewritten", lineterm="")
            ),
        )
    after = traces_of(rewritten)
    for fn in case["reach_hand"]:
        out.check(
            after.get(fn, 10**9) <= target[fn],
            f"{fn}: {after.get(fn)} traces after autosig's fix; the hand fix reaches {target[fn]}",
        )
    for fn, count in original.items():
        out.check(
            after.get(fn, 10**9) <= count,
            f"{fn}: {after.get(fn)} traces after the fix, {count} before",
        )

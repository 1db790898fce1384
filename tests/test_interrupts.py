"""Stop signals while autosig runs the user's command: real SIGINT and SIGTERM.

``autosig profile`` and ``autosig verify`` run the command in a process group of its
own and relay SIGINT, SIGTERM and SIGHUP sent to autosig to that whole group (an IDE's
stop button or a supervisor signals autosig's pid only). ``verify`` then stops at once
(exit 130), keeps no interrupted run for reuse, and ignores, with a note, a stored run
that does not match. The TensorFlow tests interrupt real verify runs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autosig.verify.candidate import Candidate
from autosig.verify.runner import VerifyReport, _reusable
from autosig.verify.runs import RESULT_FILE, stored_mismatch

PYTHON = sys.executable
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(Path(__file__).parents[1])}


def _default_sigint() -> None:
    """A test runner's worker may ignore SIGINT, and an ignored signal stays ignored
    across exec: give the autosig under test the terminal's default, as a shell does."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_autosig(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [PYTHON, "-m", "autosig", *args],
        cwd=cwd,
        env=env or ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )


def wait_for(path: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"exited {proc.returncode} before {path.name}:\n{out}\n{err}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"{path.name} never appeared")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


FAMILY = """\
import os, signal, subprocess, sys, time
from pathlib import Path

child = subprocess.Popen([sys.executable, "-c", '''
import signal, sys, time
from pathlib import Path
def stop(signum, frame):
    Path("grandchild-got").write_text(str(signum))
    sys.exit(3)
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
Path("grandchild-ready").write_text("")
while True:
    time.sleep(0.05)
'''])
while not Path("grandchild-ready").exists():
    time.sleep(0.02)
Path("ready").write_text(str(child.pid))
try:
    while True:
        time.sleep(0.05)
except KeyboardInterrupt:
    Path("child-got").write_text("SIGINT")
    child.wait()
    raise
"""


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_autosig_profile_reaches_the_command_and_its_children(
    tmp_path: Path, signum: int, code: int
) -> None:
    """``kill -INT <autosig pid>``: the command and the command's own child get it."""
    (tmp_path / "family.py").write_text(FAMILY)
    proc = start_autosig("profile", "--", PYTHON, "family.py", cwd=tmp_path)
    wait_for(tmp_path / "ready", proc)
    grandchild = int((tmp_path / "ready").read_text())
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert (tmp_path / "grandchild-got").read_text() == str(int(signum))
    if signum == signal.SIGINT:
        assert (tmp_path / "child-got").read_text() == "SIGINT"  # once, as KeyboardInterrupt
    assert f"interrupted (signal {int(signum)}, exit status {code})" in err
    assert not alive(grandchild)


def test_an_ignored_sigint_stays_ignored(tmp_path: Path) -> None:
    """``nohup``-like callers ignore SIGINT: autosig does not turn it back on for the
    command (whose own SIGINT stays ignored too), so the command runs to its end."""
    (tmp_path / "wait.py").write_text(
        "import time\nfrom pathlib import Path\nPath('ready').write_text('')\n"
        "time.sleep(1.5)\nprint('finished')\n"
    )
    proc = subprocess.Popen(
        [PYTHON, "-m", "autosig", "profile", "--", PYTHON, "wait.py"],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    wait_for(tmp_path / "ready", proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out == "finished\n"


# -- stored runs ---------------------------------------------------------------------------


def test_a_stored_run_must_match_command_exit_code_and_profile() -> None:
    meta = {"command": ["python", "train.py"], "exit_code": 0, "profile": "abc"}
    cmd = ["python", "train.py"]
    assert stored_mismatch(meta, cmd, "abc", 0) == ""
    assert stored_mismatch(meta, ["python", "other.py"], "abc", 0) == (
        "it ran another command (python train.py)"
    )
    assert stored_mismatch({**meta, "exit_code": 130}, cmd, "abc", 0) == (
        "it exited with code 130, the profiled run with 0"
    )
    assert "another profile" in stored_mismatch(meta, cmd, "def", 0)
    assert "another command" in stored_mismatch({"exit_code": 0}, cmd, "abc", 0)  # older format


def test_an_interrupted_stored_run_is_ignored_with_a_note_and_removed(tmp_path: Path) -> None:
    """The run an older autosig stored after Ctrl-C (exit 130) is never reused."""
    base = tmp_path / ".autosig" / "verify-runs" / "digest" / "original-graph"
    base.mkdir(parents=True)
    cmd = ["python", "train.py"]
    (base / RESULT_FILE).write_text(
        json.dumps({"exit_code": 130, "wall_s": 1.0, "command": cmd, "profile": "p1"})
    )
    candidate = Candidate(root=tmp_path, profile_digest="p1", profiled_exit_code=0)
    report = VerifyReport()
    assert _reusable(base, cmd, candidate, report) is None
    (note,) = report.notes
    assert note == (
        f"ignored the original run stored in {base} (it exited with code 130, the profiled "
        "run with 0): ran it again"
    )
    assert not base.exists()


# -- verify and fix --verify, with TensorFlow ----------------------------------------------

MODEL = """\
import tensorflow as tf


@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0, axis=-1)
"""

TRAIN = """\
import os
import time
from pathlib import Path

import tensorflow as tf

from model import step

for n in range(3, 11):  # 8 calls: a shorter profile gets an (unsafe) guarded trace
    step(tf.ones([2, n]))
if os.environ.get("SLOW_WORKLOAD"):
    Path(os.environ["SLOW_WORKLOAD"]).write_text(str(os.getpid()))
    while True:
        step(tf.ones([2, 3]))
        time.sleep(0.01)
print("done")
"""


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, profiled once for the module's tests (each works on a copy: a
    profile in .autosig/ belongs to the folder holding it)."""
    template = tmp_path_factory.mktemp("profiled")
    (template / "model.py").write_text(MODEL)
    (template / "train.py").write_text(TRAIN)
    done = subprocess.run(
        [PYTHON, "-m", "autosig", "profile", "--", PYTHON, "train.py"],
        cwd=template,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return template


@pytest.fixture
def project(profiled: Path, tmp_path: Path) -> Path:
    import shutil

    copy = tmp_path / "project"
    shutil.copytree(profiled, copy)
    return copy


def _interrupt_once_running(proc: subprocess.Popen, marker: Path) -> tuple[int, float]:
    wait_for(marker, proc, timeout=240)
    workload = int(marker.read_text())
    proc.send_signal(signal.SIGINT)
    start = time.monotonic()
    proc.communicate(timeout=60)
    return workload, time.monotonic() - start


@pytest.mark.tf
@pytest.mark.slow
def test_ctrl_c_stops_verify_at_once_and_stores_nothing(project: Path) -> None:
    tmp = project / "tmp"
    tmp.mkdir()
    marker = project / "running"
    env = {**ENV, "SLOW_WORKLOAD": str(marker), "TMPDIR": str(tmp)}
    proc = start_autosig("verify", "--no-xla", "--", PYTHON, "train.py", cwd=project, env=env)
    workload, took = _interrupt_once_running(proc, marker)
    assert proc.returncode == 130
    assert took < 10, f"verify took {took:.1f} s to stop"
    assert not alive(workload)
    runs = project / ".autosig" / "verify-runs"
    assert not any(runs.rglob(RESULT_FILE)), "an interrupted run was stored for reuse"
    assert list(tmp.iterdir()) == []  # AutoGraph's files and verify's folders: removed

    # the next verify runs the original again and passes
    done = subprocess.run(
        [PYTHON, "-m", "autosig", "verify", "--no-xla", "--", PYTHON, "train.py"],
        cwd=project,
        env={**ENV, "TMPDIR": str(tmp)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reused" not in done.stdout and "equivalent" in done.stdout
    assert len(list(runs.rglob(RESULT_FILE))) == 1  # this complete run is kept


@pytest.mark.tf
@pytest.mark.slow
def test_ctrl_c_during_fix_verify_writes_nothing(project: Path) -> None:
    marker = project / "running"
    proc = start_autosig(
        "fix",
        "model.py",
        "--profile",
        ".autosig/profile.json",
        "--verify",
        cwd=project,
        env={**ENV, "SLOW_WORKLOAD": str(marker)},
    )
    workload, _ = _interrupt_once_running(proc, marker)
    assert proc.returncode == 130
    assert not alive(workload)
    assert (project / "model.py").read_text() == MODEL


def process_state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]


def test_ctrl_z_stops_the_command_with_autosig_and_fg_resumes_both(tmp_path: Path) -> None:
    """The command is in a group of its own, so the terminal's SIGTSTP reaches autosig
    only: autosig stops the command's group, then itself; SIGCONT (a shell's fg)
    resumes both."""
    (tmp_path / "family.py").write_text(FAMILY)
    proc = start_autosig("profile", "--", PYTHON, "family.py", cwd=tmp_path)
    wait_for(tmp_path / "ready", proc)
    grandchild = int((tmp_path / "ready").read_text())
    proc.send_signal(signal.SIGTSTP)
    deadline = time.monotonic() + 30
    while process_state(proc.pid) != "T" or process_state(grandchild) != "T":
        assert time.monotonic() < deadline, "autosig and the command did not stop"
        time.sleep(0.05)
    proc.send_signal(signal.SIGCONT)
    while process_state(grandchild) == "T":
        assert time.monotonic() < deadline, "the command was not resumed"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err

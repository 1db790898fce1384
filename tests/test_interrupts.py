"""Stop signals while autosig runs the user's command: real SIGINT and SIGTERM.

``autosig profile`` and ``autosig verify`` run the command in a process group of its
own and relay SIGINT, SIGTERM and SIGHUP sent to autosig to that whole group (an IDE's
stop button or a supervisor signals autosig's pid only). ``verify`` then stops at once
(exit 130), keeps no interrupted run for reuse, and ignores, with a note, a stored run
that does not match. The TensorFlow tests interrupt real verify runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autosig.profile.format import load_profile
from autosig.profile.probe.isolation import fork_available, run_forked
from autosig.verify.candidate import Candidate
from autosig.verify.runner import VerifyReport, _reusable
from autosig.verify.runs import RESULT_FILE, stored_mismatch

PYTHON = sys.executable
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(Path(__file__).parents[1])}


def _default_sigint() -> None:
    """A test runner's worker may ignore SIGINT, and an ignored signal stays ignored
    across exec: give the autosig under test the terminal's default, as a shell does."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_autosig(
    *args: str, cwd: Path, env: dict[str, str] | None = None, **popen: Any
) -> subprocess.Popen:
    return subprocess.Popen(
        [PYTHON, "-m", "autosig", *args],
        cwd=cwd,
        env=env or ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
        **popen,
    )


@contextlib.contextmanager
def runner_ignoring_sigint() -> Iterator[None]:
    """Run the block as in a test run started in the background by a script (``bash
    .ci/run > log &``, a CI launcher): SIGINT ignored in pytest and in everything it
    starts. The Ctrl-C tests must hold there too (``start_autosig`` resets it)."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal dispositions are set from the main thread only")
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux's /proc children lists), deepest last."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in map(int, (task / "children").read_text().split()):
                found += [child, *descendants(child)]
    return found


@contextlib.contextmanager
def killed_on_failure(proc: subprocess.Popen) -> Iterator[None]:
    """A failing interrupt test must not leave autosig and the command running (the
    command is in a session of its own: killing autosig alone would not stop it)."""
    try:
        yield
    except BaseException:
        for pid in [*descendants(proc.pid), proc.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.communicate()
        raise


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
    with runner_ignoring_sigint():  # as in a whole-suite run started by a script
        proc = start_autosig("profile", "--", PYTHON, "family.py", cwd=tmp_path)
    wait_for(tmp_path / "ready", proc)
    grandchild = int((tmp_path / "ready").read_text())
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    # the command's child dies of SIGTERM at once, without waiting for its own child,
    # which may still be writing its file when autosig returns: wait for it to exit
    deadline = time.monotonic() + 10
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(grandchild)
    assert (tmp_path / "grandchild-got").read_text() == str(int(signum))
    if signum == signal.SIGINT:
        assert (tmp_path / "child-got").read_text() == "SIGINT"  # once, as KeyboardInterrupt
    assert f"interrupted (signal {int(signum)}, exit status {code})" in err


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


PRINT_SIGINT = "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"


def test_a_background_test_run_ignores_sigint_in_every_process_it_starts() -> None:
    """Why the Ctrl-C profile test hung in whole-suite runs and passed alone: a script
    that starts a long run in the background (``cmd &``, no job control) ignores SIGINT
    for it; the ignore is inherited across fork and exec, and Python keeps it (no
    KeyboardInterrupt). The autosig under test then ignored the test's Ctrl-C as it
    must under ``nohup`` (``test_an_ignored_sigint_stays_ignored``), and so did the
    loop it recorded: nothing ever stopped. ``start_autosig`` gives SIGINT back its
    default, as an interactive shell does for the commands a user types."""
    script = f"{PYTHON} -c '{PRINT_SIGINT}' & wait"
    background = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert background.stdout == "True\n"  # ignored
    with runner_ignoring_sigint():
        plain = subprocess.run([PYTHON, "-c", PRINT_SIGINT], capture_output=True, text=True)
        reset = subprocess.run(
            [PYTHON, "-c", PRINT_SIGINT],
            capture_output=True,
            text=True,
            preexec_fn=_default_sigint,
        )
    assert plain.stdout == "True\n"  # ignored: Ctrl-C would never reach it
    assert reset.stdout == "False\n"


SLOW_CLEANUP = """\
import signal, time
from pathlib import Path
Path("ready").write_text("")
try:
    while True:
        time.sleep(0.05)
except KeyboardInterrupt:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a clean-up that will not be hurried
    Path("cleaning").write_text("")
    time.sleep(300)
"""


def test_a_second_ctrl_c_kills_the_command_at_once(tmp_path: Path) -> None:
    """The first Ctrl-C lets the command end as it chooses (it writes what it recorded);
    the second one kills its group at once: exit 130, a partial profile of what the
    processes had written."""
    (tmp_path / "cleanup.py").write_text(SLOW_CLEANUP)
    proc = start_autosig("profile", "--", PYTHON, "cleanup.py", cwd=tmp_path)
    with killed_on_failure(proc):
        wait_for(tmp_path / "ready", proc)
        proc.send_signal(signal.SIGINT)
        wait_for(tmp_path / "cleaning", proc)
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        _, err = proc.communicate(timeout=60)
    assert time.monotonic() - start < 10, err
    assert proc.returncode == 130, err
    assert "interrupted (signal 2, exit status 130): partial profile" in err
    assert load_profile(tmp_path / ".autosig" / "profile.json").exit_code == 130


def test_ctrl_c_while_autosig_itself_works_is_130_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the command starts or while the profile is merged and written (after the
    command ended), Ctrl-C stops autosig: 130 and one line, not click's "Aborted!" (1)."""
    from click.testing import CliRunner

    import autosig.cli.profile as profile_cli

    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(profile_cli, "record_command", interrupted)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(profile_cli.command, ["--", PYTHON, "-c", "pass"])
    assert result.exit_code == 130
    assert result.output == (
        "autosig: interrupted (SIGINT): stopped before the profile was written\n"
    )


@pytest.mark.skipif(not fork_available(), reason="needs os.fork")
def test_a_probe_copy_ends_at_once_on_ctrl_c_whatever_the_program_does_with_it() -> None:
    """A program that handles Ctrl-C itself (a flag: "stop after this step") passes its
    handler to the probe copy; the copy must still end at once, not trace on until its
    deadline (the program waits for the round), and the round says it was interrupted."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal dispositions are set from the main thread only")

    def tracing_forever(emit):  # noqa: ANN001, ANN202
        emit({"kind": "trace"})
        os.kill(os.getpid(), signal.SIGINT)  # the terminal's Ctrl-C reaches the group
        time.sleep(60)

    flags: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: flags.append(signum))
    try:
        start = time.monotonic()
        outcome = run_forked(tracing_forever, deadline=time.monotonic() + 30, stall_s=30)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - start < 10
    assert outcome.status == "interrupted", outcome
    assert outcome.detail == "the program was interrupted (SIGINT)"
    assert outcome.messages == [{"kind": "trace"}] and flags == []


@pytest.mark.skipif(not fork_available(), reason="needs os.fork")
def test_ctrl_c_in_the_program_during_a_round_kills_the_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """KeyboardInterrupt in the program while it waits for a round: the copy is killed
    and reaped before the interrupt goes on (never a copy left tracing)."""
    pids: list[int] = []

    def slow(emit):  # noqa: ANN001, ANN202
        time.sleep(60)

    def interrupt_while_reading(fd, pid, outcome, deadline, stall_s):  # noqa: ANN001, ANN202
        pids.append(pid)
        raise KeyboardInterrupt

    import autosig.profile.probe.isolation as isolation

    monkeypatch.setattr(isolation, "_read", interrupt_while_reading)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_forked(slow, deadline=time.monotonic() + 30, stall_s=30)
    assert time.monotonic() - start < 10  # before, it waited for the copy (60 s here)
    (pid,) = pids
    assert not alive(pid)


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


LOOP = """\
import time
import tensorflow as tf


@tf.function
def f(x):
    return x + 1


f(tf.constant(1.0))
print("ready", flush=True)
while True:
    f(tf.constant(1.0))
    time.sleep(0.01)
"""


@pytest.mark.tf
@pytest.mark.slow
def test_ctrl_c_during_a_recorded_tensorflow_run_is_130_and_partial(tmp_path: Path) -> None:
    """The terminal sends SIGINT to the whole process group, as Ctrl-C does; the test
    run itself ignores SIGINT, as a whole-suite run started by a script does (where
    this test used to hang: ``test_a_background_test_run_ignores_sigint_...``)."""
    (tmp_path / "loop.py").write_text(LOOP)
    with runner_ignoring_sigint():
        proc = start_autosig(
            "profile", "--", PYTHON, "loop.py", cwd=tmp_path, start_new_session=True
        )
    assert proc.stdout is not None
    with killed_on_failure(proc):
        assert proc.stdout.readline() == "ready\n"
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGINT)
        start = time.monotonic()
        _, err = proc.communicate(timeout=120)
    assert time.monotonic() - start < 30, err
    assert proc.returncode == 130, err
    assert "interrupted (signal 2, exit status 130): partial profile (1 tf.function" in err
    profile = load_profile(tmp_path / ".autosig" / "profile.json")
    assert profile.partial and profile.exit_code == 130 and profile.functions[0].calls >= 2


STOPS_AFTER_THE_STEP = """\
import os, signal, sys, time
from pathlib import Path
import tensorflow as tf

PROGRAM = os.getpid()
stop = []
signal.signal(signal.SIGINT, lambda signum, frame: stop.append(signum))  # finish the step


@tf.function
def step(x):
    if os.getpid() != PROGRAM:  # traced again in autosig's probe copy
        Path("probing").write_text(str(os.getpid()))
        time.sleep(300)
    return x * 2


step(tf.ones([2]))
step(tf.ones([3]))  # a retrace: a probe round runs in this call
while not stop:
    step(tf.ones([3]))
    time.sleep(0.01)
sys.exit(130)
"""


@pytest.mark.tf
@pytest.mark.slow
def test_ctrl_c_during_a_probe_round_stops_it_at_once(tmp_path: Path) -> None:
    """SIGINT while the program waits for a probe round (here one whose trace takes
    minutes) and handles Ctrl-C itself: the copy ends at once, the program gets its
    flag and exits, no round runs after it, and the profile says why probes stopped.
    Before, the copy inherited the program's handler and traced on until the stall
    limit (30 s) or the round's budget (60 s)."""
    (tmp_path / "train.py").write_text(STOPS_AFTER_THE_STEP)
    proc = start_autosig("profile", "--", PYTHON, "train.py", cwd=tmp_path)
    with killed_on_failure(proc):
        wait_for(tmp_path / "probing", proc, timeout=240)
        copy = int((tmp_path / "probing").read_text())
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        _, err = proc.communicate(timeout=120)
    assert time.monotonic() - start < 15, err
    assert proc.returncode == 130, err
    assert not alive(copy)
    profile = load_profile(tmp_path / ".autosig" / "profile.json")
    assert profile.probes is not None
    assert profile.probes.note == "stopped: the program was interrupted"
    (step,) = profile.functions
    assert step.probe is not None
    assert "round stopped: the program was interrupted (SIGINT)" in step.probe.failures


STEPS_ONCE_MORE_AFTER_CTRL_C = """\
import os, signal, sys, time
from pathlib import Path
import tensorflow as tf

PROGRAM = os.getpid()
stop = []
signal.signal(signal.SIGINT, lambda signum, frame: stop.append(signum))


@tf.function
def step(x):
    if os.getpid() != PROGRAM:  # traced again in autosig's probe copy
        time.sleep(300)
    return x * 2


step(tf.ones([2]))
Path("ready").write_text("")
while not stop:
    time.sleep(0.01)
step(tf.ones([3]))  # the last step, after Ctrl-C, retraces: no probe round now
sys.exit(130)
"""


@pytest.mark.tf
@pytest.mark.slow
def test_no_probe_round_starts_after_ctrl_c_in_a_program_that_handles_it(
    tmp_path: Path,
) -> None:
    """The program took the Ctrl-C itself (no KeyboardInterrupt) and makes one more
    call, which retraces: autosig marked the stop in the recorders' folder, so no round
    starts (before, the round ran to the stall limit, 30 s, or the budget)."""
    (tmp_path / "train.py").write_text(STEPS_ONCE_MORE_AFTER_CTRL_C)
    proc = start_autosig("profile", "--", PYTHON, "train.py", cwd=tmp_path)
    with killed_on_failure(proc):
        wait_for(tmp_path / "ready", proc, timeout=240)
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        _, err = proc.communicate(timeout=120)
    assert time.monotonic() - start < 15, err
    assert proc.returncode == 130, err
    profile = load_profile(tmp_path / ".autosig" / "profile.json")
    assert profile.probes is not None and profile.probes.rounds == 0
    assert profile.probes.note == "stopped: the program was interrupted"
    (step,) = profile.functions
    assert step.traces == 2 and step.probe is not None
    assert step.probe.skipped and all(s.endswith(": interrupted") for s in step.probe.skipped)


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


def test_ctrl_c_while_a_command_loads_is_130_and_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C no command handles itself (here: while the subcommand's module is
    imported) exits 130 with one line, not click's "Aborted!" and 1."""
    import importlib

    from click.testing import CliRunner

    import autosig.cli as cli_module

    real_import = importlib.import_module

    def interrupted(name: str, *args: Any) -> Any:
        if name == "autosig.cli.check":
            raise KeyboardInterrupt
        return real_import(name, *args)

    monkeypatch.setattr(cli_module.importlib, "import_module", interrupted)
    result = CliRunner().invoke(cli_module.cli, ["check", "."])
    assert result.exit_code == 130
    assert result.output == "autosig: interrupted (SIGINT)\n"
    assert "Aborted" not in result.output

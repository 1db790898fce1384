"""Run a command with the recorder active in its Python processes; merge their profiles.

The command runs as a child process with ``autosig/profile/bootstrap`` first on
``PYTHONPATH``; its ``sitecustomize`` starts a recorder in every Python process
(children included) and each writes a partial profile into a temporary directory
when it exits (normally, by an exception, by SIGTERM). The parent then merges the
parts, adds the command and its exit code, and writes one profile, marked partial
when the command exited non-zero or was interrupted (``record_command`` then writes
it beside an existing profile instead of over it). The command's stdin/stdout/stderr
are its own; its exit code is returned (128+N for signal N). It runs in a process
group of its own, to which autosig relays the stop signals it receives
(``run_supervised``).
No TensorFlow is imported here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.profile.format import (
    Profile,
    check_writable,
    load_profile,
    partial_profile_path,
    samples_path,
    save_profile,
)
from autosig.profile.merge import merge_profiles
from autosig.profile.probe.scheduler import ENV_PROBE_BUDGET, STOP_MARKER
from autosig.profile.recorder import (
    ENV_CAPTURE_OUTPUTS,
    ENV_PROFILE_DIR,
    ENV_PROJECT_ROOT,
)
from autosig.profile.samples import load_arrays, save_arrays

BOOTSTRAP_DIR = Path(__file__).resolve().parent / "bootstrap"
PACKAGE_PARENT = Path(__file__).resolve().parents[2]
"""The folder holding the ``autosig`` package, for the bootstrap to import it from."""
ENV_BOOTSTRAP = "AUTOSIG_BOOTSTRAP"
ENV_PACKAGE_PARENT = "AUTOSIG_PACKAGE_PARENT"


def recording_env(
    parts_dir: Path,
    *,
    env: dict[str, str] | None = None,
    capture_outputs: bool = False,
    bootstrap: Sequence[str] = (),
    project_root: Path | None = None,
    probe_budget: float | None = None,
) -> dict[str, str]:
    """The environment that makes every Python process of the command record.

    ``probe_budget``: seconds of probe traces per process (0: none); None leaves
    ``$AUTOSIG_PROBE_BUDGET`` (or the default) in force.
    """
    out = dict(os.environ if env is None else env)
    if probe_budget is not None:
        out[ENV_PROBE_BUDGET] = f"{probe_budget:g}"
    existing = [p for p in out.get("PYTHONPATH", "").split(os.pathsep) if p]
    out["PYTHONPATH"] = os.pathsep.join([str(BOOTSTRAP_DIR), *existing])
    out[ENV_PROFILE_DIR] = str(parts_dir)
    out[ENV_PROJECT_ROOT] = str(project_root or Path.cwd())
    out[ENV_PACKAGE_PARENT] = str(PACKAGE_PARENT)
    if capture_outputs:
        out[ENV_CAPTURE_OUTPUTS] = "1"
    names = [n for n in out.get(ENV_BOOTSTRAP, "").split(",") if n] + list(bootstrap)
    if names:
        out[ENV_BOOTSTRAP] = ",".join(dict.fromkeys(names))
    return out


FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Stop signals autosig relays to the command's process group (a terminal's Ctrl-C, an
IDE's stop button or a supervisor's ``kill -INT``/``kill -TERM`` aimed at autosig)."""


class ChildExit(int):
    """How a supervised command ended: its exit status (128+N when a signal N ended it),
    an int, and ``interrupted``: the first stop signal autosig itself received while the
    command ran (and relayed to it), None when nobody asked autosig to stop."""

    interrupted: int | None

    def __new__(cls, code: int, interrupted: int | None = None) -> ChildExit:
        self = super().__new__(cls, code)
        self.interrupted = interrupted
        return self

    @property
    def code(self) -> int:
        return int(self)


def _signal_group(pgid: int, signum: int) -> None:
    """Send ``signum`` to a process group that may be gone already."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def run_supervised(
    cmd: Sequence[str],
    env: dict[str, str] | None = None,
    *,
    stop_grace_s: float | None = None,
    on_stop: Callable[[int], None] | None = None,
    **popen: Any,
) -> ChildExit:
    """Run ``cmd`` in a process group of its own; relay stop signals to that group.

    The command gets a new session (``start_new_session``), so a signal aimed at autosig
    alone (``kill -INT <autosig pid>``) would not reach it by itself: autosig relays
    SIGINT, SIGTERM and SIGHUP to the whole group, children of the command included. A
    terminal's Ctrl-C reaches autosig's group only, so the command sees it exactly once,
    from the relay. The command keeps its stdin, stdout and stderr (a terminal that is
    not its controlling one reads and writes as before). Ctrl-Z (SIGTSTP) stops the
    group and then autosig, and a shell's ``fg`` resumes both. ``stop_grace_s``: after a relayed
    signal, the group is killed (SIGKILL) if the command has not ended within that many
    seconds, or at once on a second signal; None waits for the command to end as it
    chooses, until a second stop signal: that one kills the group at once in either case
    (a second Ctrl-C means "stop now": the command's exit work, a partial profile being
    written, is given up). After an interrupted command, whatever is left of its group
    is killed.
    Outside the main thread no handler can be set: the command then runs in autosig's own
    process group, as a plain child. ``on_stop(signum)`` runs (in the signal handler) when
    the first stop signal arrives, before it is relayed. ``popen``: more
    ``subprocess.Popen`` arguments (``cwd``, ``stdout`` ...).
    """
    main = threading.current_thread() is threading.main_thread() and hasattr(os, "killpg")
    received: list[tuple[int, float]] = []
    started: list[subprocess.Popen[Any]] = []

    def relay(signum: int, frame: Any) -> None:
        received.append((signum, time.monotonic()))
        if on_stop is not None and len(received) == 1:
            with contextlib.suppress(Exception):
                on_stop(signum)
        if started:
            escalate = len(received) > 1
            _signal_group(started[0].pid, signal.SIGKILL if escalate else signum)

    def suspend(signum: int, frame: Any) -> None:
        """Ctrl-Z: stop the command's group, then autosig itself; on fg, both go on."""
        if started:
            _signal_group(started[0].pid, signal.SIGSTOP)
        # SIGSTOP, not SIGTSTP: the kernel discards a SIGTSTP whose default action would
        # stop a process of an orphaned process group (autosig started under a runner in
        # another session), and the command would be stopped without autosig
        os.kill(os.getpid(), signal.SIGSTOP)  # stopped here until the shell's SIGCONT
        if started:
            _signal_group(started[0].pid, signal.SIGCONT)

    handlers: dict[int, Any] = {}
    if main:
        for sig in FORWARDED_SIGNALS:
            if signal.getsignal(sig) is not signal.SIG_IGN:  # nohup, `cmd &` in a script
                handlers[sig] = signal.signal(sig, relay)
        if signal.getsignal(signal.SIGTSTP) is signal.SIG_DFL:  # job control: a terminal
            handlers[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, suspend)
    try:
        try:
            proc = subprocess.Popen(list(cmd), env=env, start_new_session=main, **popen)
        except FileNotFoundError:
            raise AutosigError(f"command not found: {cmd[0]}") from None
        except PermissionError:
            raise AutosigError(f"command is not executable: {cmd[0]}") from None
        started.append(proc)
        if received:  # arrived while the command was starting
            _signal_group(proc.pid, signal.SIGKILL if len(received) > 1 else received[0][0])
        code = _wait_for(proc, received, stop_grace_s)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    if received and main:
        _signal_group(proc.pid, signal.SIGKILL)  # its children, if any outlived it
    if received and code == -signal.SIGKILL:  # killed by autosig after the stop signal:
        code = -received[0][0]  # the status says what the user sent (130 for Ctrl-C)
    return ChildExit(128 - code if code < 0 else code, received[0][0] if received else None)


def _wait_for(
    proc: subprocess.Popen[Any], received: list[tuple[int, float]], grace_s: float | None
) -> int:
    """Wait for the command; with ``grace_s``, kill its group that long after a stop signal."""
    if grace_s is None:
        return proc.wait()
    while True:
        try:
            return proc.wait(timeout=0.1)
        except subprocess.TimeoutExpired:
            if received and time.monotonic() - received[0][1] >= grace_s:
                _signal_group(proc.pid, signal.SIGKILL)


def _merge_parts(parts_dir: Path) -> tuple[Profile, dict[str, Any]]:
    profiles: list[Profile] = []
    arrays: list[dict[str, Any]] = []
    for path in sorted(parts_dir.glob("part-*.json")):
        try:
            profile = load_profile(path)
            npz = parts_dir / profile.samples_file if profile.samples_file else None
            part_arrays = load_arrays(npz) if npz is not None else {}
        except AutosigError as exc:  # a process killed mid-write: skip its part, say so
            print(f"autosig: warning: skipped a process's profile: {exc}", file=sys.stderr)
            continue
        profiles.append(profile)
        arrays.append(part_arrays)
    if not profiles:
        return Profile(), {}
    return merge_profiles(profiles, arrays)


@dataclass
class RecordedRun:
    """What ``record_command`` did: the command's exit status and where the profile went."""

    code: int
    path: Path
    """The profile written: the requested one, or beside it when that was kept."""
    profile: Profile
    kept: Path | None = None
    """The existing profile left untouched because this run failed, None otherwise."""
    interrupted: int | None = None
    """The stop signal autosig received and relayed to the command (``ChildExit``)."""

    @property
    def partial(self) -> bool:
        return self.profile.partial


def run_recorded(
    cmd: list[str],
    out: Path,
    *,
    env: dict[str, str] | None = None,
    capture_outputs: bool = False,
    bootstrap: Sequence[str] = (),
    stop_grace_s: float | None = None,
) -> ChildExit:
    """Run ``cmd`` recording every tf.function call into the profile ``out``.

    Returns the command's exit code (128+N when killed by signal N) and whether autosig
    was asked to stop meanwhile (``run_supervised``). Raises AutosigError, before running
    anything, if ``out`` cannot be written or the command cannot be started. ``out`` is
    always written (marked partial when the command failed); ``record_command`` is the
    variant that protects a good profile.
    """
    run = record_command(
        cmd,
        out,
        env=env,
        capture_outputs=capture_outputs,
        bootstrap=bootstrap,
        keep_existing=False,
        stop_grace_s=stop_grace_s,
    )
    return ChildExit(run.code, run.interrupted)


def record_command(
    cmd: list[str],
    out: Path,
    *,
    env: dict[str, str] | None = None,
    capture_outputs: bool = False,
    bootstrap: Sequence[str] = (),
    keep_existing: bool = True,
    stop_grace_s: float | None = None,
    probe_budget: float | None = None,
) -> RecordedRun:
    """Run ``cmd`` recording every tf.function call; never lose a good profile.

    A command that exits non-zero or is interrupted gives a profile marked partial
    (with its exit status inside). With ``keep_existing``, such a profile never
    replaces an existing ``out``: it goes beside it (``p.partial.json``) instead.
    Stop signals sent to autosig go to the command's process group (``run_supervised``).
    """
    if not cmd:
        raise AutosigError("no command given; usage: autosig profile -- python train.py")
    out = Path(out)
    check_writable(out)
    root = Path.cwd().resolve()
    with tempfile.TemporaryDirectory(prefix="autosig-profile-") as tmp:
        parts_dir = Path(tmp)
        child_env = recording_env(
            parts_dir,
            env=env,
            capture_outputs=capture_outputs,
            bootstrap=bootstrap,
            project_root=root,
            probe_budget=probe_budget,
        )
        marker = parts_dir / STOP_MARKER  # the recorders start no probe round after it
        ended = run_supervised(
            cmd, child_env, stop_grace_s=stop_grace_s, on_stop=lambda _: marker.touch()
        )
        code = ended.code
        profile, arrays = _merge_parts(parts_dir)
    profile.project_root = str(root)
    profile.command = list(cmd)
    profile.exit_code = code
    profile.runs = 1
    profile.partial = code != 0
    target, kept = out, None
    if profile.partial and keep_existing and out.exists():
        target, kept = partial_profile_path(out), out
    if arrays:
        npz = samples_path(target)
        save_arrays(arrays, npz)
        profile.samples_file = npz.name
    else:
        profile.samples_file = None
        if target == out:
            with contextlib.suppress(OSError):  # the old samples belong to the old profile
                samples_path(out).unlink()
    save_profile(profile, target)
    return RecordedRun(
        code=code, path=target, profile=profile, kept=kept, interrupted=ended.interrupted
    )

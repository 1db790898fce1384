"""Run a command with the recorder active in its Python processes; merge their profiles.

The command runs as a child process with ``autosig/profile/bootstrap`` first on
``PYTHONPATH``; its ``sitecustomize`` starts a recorder in every Python process
(children included) and each writes a partial profile into a temporary directory
when it exits (normally, by an exception, by SIGTERM). The parent then merges the
parts, adds the command and its exit code, and writes one profile, marked partial
when the command exited non-zero or was interrupted (``record_command`` then writes
it beside an existing profile instead of over it). The command's stdin/stdout/stderr
are its own; its exit code is returned (128+N for signal N).
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
from collections.abc import Sequence
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
from autosig.profile.probe.scheduler import ENV_PROBE_BUDGET
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


def _wait(proc: subprocess.Popen[Any]) -> int:
    """Wait for the command; Ctrl-C reaches it from the terminal, SIGTERM is forwarded."""
    handlers: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():

        def forward(signum: int, frame: Any) -> None:
            if signum != signal.SIGINT:  # the terminal already sent SIGINT to the group
                proc.send_signal(signum)

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            handlers[sig] = signal.signal(sig, forward)
    try:
        code = proc.wait()
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return 128 - code if code < 0 else code


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
) -> int:
    """Run ``cmd`` recording every tf.function call into the profile ``out``.

    Returns the command's exit code (128+N when killed by signal N). Raises
    AutosigError, before running anything, if ``out`` cannot be written or the
    command cannot be started. ``out`` is always written (marked partial when the
    command failed); ``record_command`` is the variant that protects a good profile.
    """
    run = record_command(
        cmd,
        out,
        env=env,
        capture_outputs=capture_outputs,
        bootstrap=bootstrap,
        keep_existing=False,
    )
    return run.code


def record_command(
    cmd: list[str],
    out: Path,
    *,
    env: dict[str, str] | None = None,
    capture_outputs: bool = False,
    bootstrap: Sequence[str] = (),
    keep_existing: bool = True,
    probe_budget: float | None = None,
) -> RecordedRun:
    """Run ``cmd`` recording every tf.function call; never lose a good profile.

    A command that exits non-zero or is interrupted gives a profile marked partial
    (with its exit status inside). With ``keep_existing``, such a profile never
    replaces an existing ``out``: it goes beside it (``p.partial.json``) instead.
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
        try:
            proc = subprocess.Popen(cmd, env=child_env)
        except FileNotFoundError:
            raise AutosigError(f"command not found: {cmd[0]}") from None
        except PermissionError:
            raise AutosigError(f"command is not executable: {cmd[0]}") from None
        code = _wait(proc)
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
    return RecordedRun(code=code, path=target, profile=profile, kept=kept)

"""One recorded run of the user's workload: original or rewritten, graph or XLA.

Each run is ``autosig.profile.launch.run_recorded`` with outputs captured and
``autosig.verify.child`` bootstrapped in every Python process. Its stdout/stderr go
to a log file (the verify report owns the terminal; the log's tail explains a
failure). What the run produced is read back: the profile with its samples, each
process's status (modules served rewritten, XLA forcing, GPUs seen, step timings),
and XLA's module dump for compile counts.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from autosig.errors import AutosigError, Interrupted
from autosig.profile.format import FunctionRecord, Profile, load_profile
from autosig.profile.launch import run_recorded
from autosig.profile.probe.scheduler import ENV_PROBE_BUDGET
from autosig.profile.samples import load_samples
from autosig.verify.child import ENV_CONFIG
from autosig.verify.effects import RunEffects, load_run
from autosig.verify.timing import median_step
from autosig.verify.xla import CompileCounts, count_compiles

Variant = Literal["original", "rewritten"]
Mode = Literal["graph", "xla"]
BOOTSTRAP_MODULE = "autosig.verify.child"
SEED = 0
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?(\.exe)?$")
_OPTS_WITH_ARG = {"-X", "-W", "-Q"}


@dataclass
class RunResult:
    """What one run did; ``error`` is set when its output cannot be used."""

    variant: Variant
    mode: Mode
    exit_code: int | None = None
    wall_s: float = 0.0
    profile: Profile | None = None
    arrays: dict[str, Any] = field(default_factory=dict)
    statuses: list[dict[str, Any]] = field(default_factory=list)
    compiles: CompileCounts = field(default_factory=CompileCounts)
    """XLA compiles per function (XLA runs only)."""
    log: Path | None = None
    error: str | None = None
    effects: RunEffects = field(default_factory=lambda: RunEffects({}, {}, False))
    """Every call's observable effects (``effects.py``), per function."""

    @property
    def label(self) -> str:
        return f"{self.variant} ({self.mode})"

    def records(self, paths: set[str], root: Path) -> dict[tuple[str, str, int], FunctionRecord]:
        """Functions in ``paths`` (relative to ``root``), keyed (path, qualname, n-th by line).

        The rewrite may move a function's line (an added import, a longer decorator),
        so functions are matched by qualified name and order, not by line. Paths are
        re-rooted: the run's project root is its working directory.
        """
        if self.profile is None:
            return {}
        run_root = Path(self.profile.project_root or root)
        found: list[tuple[str, FunctionRecord]] = []
        for record in self.profile.functions:
            if record.path is None:
                continue
            absolute = Path(record.path)
            if not absolute.is_absolute():
                absolute = run_root / absolute
            try:
                rel = absolute.resolve().relative_to(root).as_posix()
            except ValueError:
                continue
            if rel in paths:
                found.append((rel, record))
        found.sort(key=lambda item: (item[0], item[1].qualname, item[1].line))
        out: dict[tuple[str, str, int], FunctionRecord] = {}
        for rel, record in found:
            ordinal = 0
            while (rel, record.qualname, ordinal) in out:
                ordinal += 1
            out[(rel, record.qualname, ordinal)] = record
        return out

    def step_times(self, root: Path) -> dict[tuple[str, str], list[list[float]]]:
        """(relative path, qualname) -> per process, the duration of every call in
        call order, tracing included."""
        out: dict[tuple[str, str], list[list[float]]] = {}
        for status in self.statuses:
            for entry in status.get("timings", []):
                try:
                    rel = Path(entry["file"]).relative_to(root).as_posix()
                except ValueError:
                    rel = entry["file"]
                out.setdefault((rel, entry["qualname"]), []).append(list(entry["seconds"]))
        return out

    def median_step(self, root: Path, path: str, qualname: str) -> float | None:
        """The median step (``timing.median_step``: each process's warm-up call excluded)."""
        return median_step(self.step_times(root).get((path, qualname), []))

    @property
    def served(self) -> set[str]:
        return {p for s in self.statuses for p in s.get("served", [])}

    @property
    def jit_forced(self) -> set[str]:
        return {n for s in self.statuses for n in s.get("jit_forced", [])}

    @property
    def xla_fallback(self) -> dict[tuple[str, str], str]:
        """(absolute file, qualname) -> why XLA could not compile it (run without XLA)."""
        return {
            (os.path.realpath(e["file"]), e["qualname"]): e["why"]
            for s in self.statuses
            for e in s.get("xla_fallback", [])
        }

    def calls_of(self, file: str, qualname: str, ordinal: int) -> list[dict[str, Any]] | None:
        """Effects of every call of one function (None: it was never called here)."""
        return self.effects.calls.get((os.path.realpath(file), qualname, ordinal))

    def random_ops_of(self, file: str, qualname: str, ordinal: int) -> set[str]:
        return self.effects.random_ops.get((os.path.realpath(file), qualname, ordinal), set())

    @property
    def gpus(self) -> list[str]:
        return sorted({g for s in self.statuses for g in s.get("gpus", [])})

    @property
    def ran_eagerly(self) -> bool:
        return any(s.get("functions_run_eagerly") for s in self.statuses)

    def log_tail(self, lines: int = 12) -> str:
        if self.log is None or not self.log.exists():
            return ""
        text = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        kept = [line for line in text if line.strip() and not _tf_noise(line)]
        return "\n".join(kept[-lines:])

    def failure_line(self) -> str:
        """The most specific exception line of a crashed run, else its last line.

        TensorFlow's errors span lines (``...Error: in user code:`` then a traceback
        and the real message, indented): the last ``SomeError: message`` line wins.
        """
        tail = [line.strip() for line in self.log_tail(60).splitlines()]
        for line in reversed(tail):
            if _EXCEPTION_LINE.match(line) and not line.endswith("in user code:"):
                return _clip(line)
        return _clip(tail[-1]) if tail else ""


_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b:?")


def _clip(line: str) -> str:
    """The line in full: a cut-off error message hides what went wrong."""
    return line


def _tf_noise(line: str) -> bool:
    return bool(re.match(r"^[IWE]\d{4} |^WARNING: All log messages", line))


def launch_command(cmd: Sequence[str], rewritten_files: set[str]) -> list[str]:
    """``python script.py ARGS`` -> ``python -m autosig.verify.import_hook script.py ARGS``
    when ``script.py`` is rewritten: a script is not imported, so the hook must run it.
    """
    cmd = list(cmd)
    if not cmd or not _PYTHON.match(Path(cmd[0]).name):
        return cmd
    index = 1
    while index < len(cmd) and cmd[index].startswith("-"):
        if cmd[index] in ("-c", "-m", "-"):
            return cmd
        index += 2 if cmd[index] in _OPTS_WITH_ARG else 1
    if index >= len(cmd):
        return cmd
    script = os.path.realpath(cmd[index])
    if script not in rewritten_files:
        return cmd
    return [*cmd[:index], "-m", "autosig.verify.import_hook", *cmd[index:]]


@contextlib.contextmanager
def output_to(log: Path | None) -> Iterator[None]:
    """Send this process's (and so the child's) stdout and stderr to ``log``."""
    if log is None:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for handle in (fd, *saved):
            os.close(handle)


def run_workload(
    cmd: Sequence[str],
    *,
    variant: Variant,
    mode: Mode,
    workdir: Path,
    sources: dict[str, str],
    watch_files: Sequence[str],
    jit_files: Sequence[str] = (),
    jit_names: Sequence[str] = (),
    env: dict[str, str] | None = None,
    sample_calls: int = 64,
    show_output: bool = False,
    profile_digest: str = "",
) -> RunResult:
    """Run the workload once and collect everything the comparison needs.

    ``sources`` (absolute path -> text) are served by the import hook: the rewritten
    text in the rewritten variant; in the original one nothing, or the version before a
    written fix (``verify --before``); ``jit_files`` are forced to XLA only in the XLA mode. The command and
    ``profile_digest`` are kept with the run's result (what a stored run must match to
    be reused: ``stored_mismatch``).
    The workload's temporary files go to a folder of the run that is removed after it.
    Raises ``Interrupted`` (the run's folder removed) when autosig was asked to stop:
    the workload's process group was stopped.
    """
    name = f"{variant}-{mode}"
    base = workdir / name
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    status_dir = base / "status"
    status_dir.mkdir(exist_ok=True)
    sources_file = None
    if sources:
        sources_file = base / "sources.json"
        sources_file.write_text(json.dumps(sources), encoding="utf-8")
    dump = base / "xla-dump" if mode == "xla" else None
    config = {
        "sources": str(sources_file) if sources_file else None,
        "jit_files": list(jit_files) if mode == "xla" else None,
        "watch_files": list(watch_files),
        "xla_dump": str(dump) if dump else None,
        "xla_names": list(jit_names),
        "seed": SEED,
        "status_dir": str(status_dir),
    }
    config_file = base / "config.json"
    config_file.write_text(json.dumps(config), encoding="utf-8")
    child_env = dict(os.environ if env is None else env)
    child_env[ENV_CONFIG] = str(config_file)
    child_env["AUTOSIG_SAMPLE_CALLS"] = str(sample_calls)
    child_env.setdefault("PYTHONHASHSEED", "0")
    child_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    tmp = base / "tmp"  # the workload's temporary files (AutoGraph's too): removed below
    tmp.mkdir()
    child_env["TMPDIR"] = str(tmp)
    # Probe traces (issue 21) inform the plan, which verify does not make: its runs
    # record without them, so verify's cost and timings are what they were.
    child_env[ENV_PROBE_BUDGET] = "0"
    out = base / "profile.json"
    log = None if show_output else base / "output.log"
    result = RunResult(variant, mode, log=log)
    launch = launch_command(cmd, set(sources))
    start = time.perf_counter()
    try:
        with output_to(log):
            ended = run_recorded(
                launch,
                out,
                env=child_env,
                capture_outputs=True,
                bootstrap=[BOOTSTRAP_MODULE],
                stop_grace_s=STOP_GRACE_S,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if ended.interrupted is not None:
        shutil.rmtree(base, ignore_errors=True)  # an interrupted run is never kept or reused
        raise Interrupted(ended.interrupted)
    result.exit_code = ended.code
    result.wall_s = time.perf_counter() - start
    (base / RESULT_FILE).write_text(
        json.dumps(
            {
                "exit_code": result.exit_code,
                "wall_s": result.wall_s,
                "command": list(cmd),
                "profile": profile_digest,
            }
        ),
        encoding="utf-8",
    )
    return collect(result, base)


RESULT_FILE = "result.json"
"""In a run's directory: its exit code, wall time, command and ``stamp`` (a stored run is
loaded from it)."""
STOP_GRACE_S = 3.0
"""After Ctrl-C or SIGTERM, how long the workload may take to stop before it is killed."""


def stored_meta(base: Path) -> dict[str, Any] | None:
    """The result record of a run stored in ``base``, None when there is none."""
    try:
        meta = json.loads((base / RESULT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def stored_mismatch(meta: dict[str, Any], cmd: Sequence[str], profile: str, exit_code: int) -> str:
    """Why a stored run cannot stand in for a run of ``cmd`` now ("" when it can).

    It must have run this command, for this ``profile`` (its digest: a workload profiled
    again may have new data or code that autosig cannot see), and have exited as the
    profiled run did (``exit_code``): an interrupted or failed run is never reused.
    """
    if meta.get("command") != list(cmd):
        return f"it ran another command ({' '.join(map(str, meta.get('command') or []))})"
    if meta.get("exit_code") != exit_code:
        return f"it exited with code {meta.get('exit_code')}, the profiled run with {exit_code}"
    if meta.get("profile") != profile:
        return "it was run for another profile (the workload was profiled again since)"
    return ""


def load_stored(base: Path, variant: Variant, mode: Mode) -> RunResult | None:
    """A run stored earlier in ``base`` (``runs.store``), or None if there is none."""
    meta = stored_meta(base)
    if meta is None:
        return None
    log = base / "output.log"
    result = RunResult(variant, mode, log=log if log.exists() else None)
    result.exit_code = meta.get("exit_code")
    result.wall_s = float(meta.get("wall_s", 0.0))
    return collect(result, base)


def collect(result: RunResult, base: Path) -> RunResult:
    """Read back what a finished run left in its directory ``base``."""
    status_dir = base / "status"
    out = base / "profile.json"
    dump = base / "xla-dump" if result.mode == "xla" else None
    for status in sorted(status_dir.glob("status-*.json")):
        with contextlib.suppress(OSError, ValueError):
            result.statuses.append(json.loads(status.read_text(encoding="utf-8")))
    result.effects = load_run(status_dir)
    try:
        result.profile = load_profile(out)
        result.arrays = load_samples(out)
    except AutosigError as exc:
        result.error = f"no usable profile from the {result.label} run: {exc}"
    if dump is not None:
        result.compiles = count_compiles(dump)
    if result.ran_eagerly:
        result.error = (
            "the workload turned on tf.config.run_functions_eagerly(True), which bypasses "
            "signatures and tracing: nothing can be verified; turn it off for verification"
        )
    return result

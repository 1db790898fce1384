"""``autosig verify``: run the workload on the original and the rewritten source, compare.

Runs (each a subprocess with the recorder capturing inputs and outputs):

1. original, graph mode (the baseline; its wall time is "the workload's run time");
2. rewritten, graph mode (changed modules served by the import hook);
3. with ``--xla``: original and rewritten again with ``jit_compile=True`` forced on the
   functions of the changed files (the original too, so XLA is compared with XLA:
   same compiler, and the XLA compile counts before -> after are real).

Every function defined in a changed file is then judged per mode on every call's
observable effects (``effects.py``: outputs, variables, tf.print, exceptions, the
number of calls), plus the full recorded outputs of the first sampled calls
(``compare.py``; calls whose sampled inputs differ between the runs are left to the
digests), and its traces, trace time, median step time and, under XLA, XLA
compiles, before -> after. "not compared" fails like "not equivalent": nothing
unverified passes. Under XLA a function XLA cannot compile runs without XLA and is
"not applicable"; random ops are "different by design". The original's runs are
stored in ``.autosig/verify-runs`` and reused while nothing they depend on changed.

One module, because it is the one place that orders the runs and judges them: the
settings, per-mode outcomes and verdict records are built and read only here and by the
report.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autosig.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, AutosigError
from autosig.profile.format import FunctionRecord
from autosig.source.files import STATE_DIR, mark_state_dir
from autosig.verify.arrays import XLA_TOLERANCE_SCALE, Tolerance
from autosig.verify.by_design import designs
from autosig.verify.candidate import Candidate
from autosig.verify.compare import (
    FunctionComparison,
    compare_by_design,
    compare_function,
    inputs_differ,
)
from autosig.verify.device import DeviceChoice, select_device
from autosig.verify.effects_compare import EffectsComparison, compare_effects
from autosig.verify.reach import Design
from autosig.verify.runs import (
    Mode,
    RunResult,
    load_stored,
    run_workload,
    stored_meta,
    stored_mismatch,
)
from autosig.verify.unseen import UnseenComparison, compare_unseen

FAILING = ("not equivalent", "could not run", "not compared")
"""Verdicts that fail verify (exit 1) and keep ``fix --verify`` from writing a change:
nothing unverified passes."""
_ORDER = {
    "not equivalent": 0,
    "could not run": 1,
    "not compared": 2,
    "different by design": 3,
    "equivalent": 4,
    "not applicable": 5,
}
"""Severity: a function's verdict is its most severe mode's. "not applicable" (XLA
cannot compile the function) never hides the graph mode's verdict."""


@dataclass(frozen=True)
class VerifySettings:
    """How to verify; the CLI options of ``autosig verify``."""

    xla: bool = True
    xla_baseline: bool = False
    """Also run the original under forced XLA: XLA compared with XLA and compile counts
    before -> after, for one more run of the workload (off: XLA is compared with the
    original graph run, whose traces and times are the 'before')."""
    device: str = "auto"
    rtol: float | None = None
    atol: float | None = None
    sample_calls: int = 64
    """Calls per function whose inputs and outputs are recorded and compared."""
    show_output: bool = False
    """Let the workload print to the terminal instead of a log file."""
    keep_dir: Path | None = None
    """Keep the runs' profiles, samples and logs in this directory."""
    reuse: bool = True
    """Reuse a stored run of the original source when nothing it depends on changed
    (``stored_runs_dir``): the original runs once per source state, not once per verify."""

    @property
    def tolerance(self) -> Tolerance:
        return Tolerance(self.rtol, self.atol)


@dataclass
class ModeOutcome:
    """One function in one mode: verdict and before -> after measurements."""

    mode: Mode
    status: str
    detail: str = ""
    comparison: FunctionComparison | None = None
    effects: EffectsComparison | None = None
    advice: str = ""
    """What to do about a measured cost (XLA compiling once per new shape)."""
    calls: tuple[int, int | None] = (0, None)
    traces: tuple[int, int | None] = (0, None)
    trace_time_s: tuple[float | None, float | None] = (0.0, None)
    median_step_s: tuple[float | None, float | None] = (None, None)
    xla_compiles: tuple[int | str | None, int | str | None] = (None, None)
    """Before -> after; None: not measured; "ambiguous": the dump cannot tell this
    function's modules from another's (see ``xla.CompileCounts``)."""
    unseen: UnseenComparison | None = None
    """Its calls on inputs the profile never saw, compared (``unseen``)."""

    def to_json(self) -> dict[str, Any]:
        comp = self.comparison
        data: dict[str, Any] = {
            "mode": self.mode,
            "status": self.status,
            "detail": self.detail,
            "calls": list(self.calls),
            "traces": list(self.traces),
            "trace_time_s": list(self.trace_time_s),
            "median_step_s": list(self.median_step_s),
        }
        if self.mode == "xla":
            data["xla_compiles"] = list(self.xla_compiles)
        if self.advice:
            data["advice"] = self.advice
        if self.unseen is not None:
            data["unseen"] = self.unseen.to_json()
        eff = self.effects
        if eff is not None:
            data["effects"] = {
                "calls_compared": eff.calls_compared,
                "equal": eff.equal,
                "first_difference": None
                if eff.equal
                else {"call": eff.first_call, "kind": eff.kind, "what": eff.what},
                "by_design": eff.by_design,
            }
        if comp is not None:
            data["calls_compared"] = (
                comp.calls_compared if self.effects is None else self.effects.calls_compared
            )
            data["max_abs_error"] = comp.max_abs
            data["max_rel_error"] = comp.max_rel
            if comp.first_mismatch is not None:
                leaf = comp.first_mismatch.first_difference
                data["first_mismatch"] = {
                    "call": comp.first_mismatch.call,
                    "where": leaf.where if leaf else None,
                    "reason": leaf.reason if leaf else None,
                    "max_abs_error": comp.first_mismatch.max_abs,
                    "max_rel_error": comp.first_mismatch.max_rel,
                }
        return data


@dataclass
class FunctionVerdict:
    path: str
    qualname: str
    line: int
    changes: list[str] = field(default_factory=list)
    modes: list[ModeOutcome] = field(default_factory=list)

    @property
    def status(self) -> str:
        if not self.modes:
            return "not compared"
        return min((m.status for m in self.modes), key=lambda s: _ORDER.get(s, 0))

    @property
    def failed(self) -> bool:
        return self.status in FAILING

    def mode(self, name: str) -> ModeOutcome | None:
        return next((m for m in self.modes if m.mode == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "qualname": self.qualname,
            "line": self.line,
            "status": self.status,
            "changes": self.changes,
            "modes": [m.to_json() for m in self.modes],
        }


@dataclass
class RunSummary:
    label: str
    exit_code: int | None
    wall_s: float
    served: int
    jit_forced: int
    gpus: list[str]
    error: str | None = None


@dataclass
class VerifyReport:
    functions: list[FunctionVerdict] = field(default_factory=list)
    device: DeviceChoice | None = None
    runs: list[RunSummary] = field(default_factory=list)
    changed_files: list[str] = field(default_factory=list)
    errors: list[AutosigError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    workload_s: float | None = None
    total_s: float = 0.0

    @property
    def modes(self) -> list[str]:
        return sorted({m.mode for f in self.functions for m in f.modes}, key=["graph", "xla"].index)

    @property
    def exit_code(self) -> int:
        if self.errors:
            return EXIT_ERROR
        return EXIT_FINDINGS if any(f.failed for f in self.functions) else EXIT_OK

    def verdict(self, path: str, qualname: str) -> FunctionVerdict | None:
        return next((f for f in self.functions if f.path == path and f.qualname == qualname), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "exit_code": self.exit_code,
            "device": None
            if self.device is None
            else {
                "requested": self.device.requested,
                "device": self.device.device,
                "gpus": list(self.device.gpus),
            },
            "modes": self.modes,
            "changed_files": self.changed_files,
            "functions": [f.to_json() for f in self.functions],
            "runs": [r.__dict__ for r in self.runs],
            "notes": self.notes,
            "errors": [str(e) for e in self.errors],
            "workload_s": self.workload_s,
            "total_s": self.total_s,
        }


# -- running ------------------------------------------------------------------------------


def verify_candidate(
    cmd: Sequence[str],
    candidate: Candidate,
    settings: VerifySettings | None = None,
    *,
    device: DeviceChoice | None = None,
    baseline: dict[str, RunResult] | None = None,
) -> tuple[VerifyReport, dict[str, RunResult]]:
    """Run and compare; returns the report and the runs (``baseline`` reuses original runs).

    Raises AutosigError when nothing can be verified: no command, the original run
    produced no profile, the workload turned on ``run_functions_eagerly``.
    """
    settings = settings or VerifySettings()
    start = time.perf_counter()
    report = VerifyReport(changed_files=candidate.changed_files(), errors=list(candidate.errors))
    if not cmd:
        raise AutosigError("no command given; usage: autosig verify -- python train.py")
    if not candidate.texts:
        report.notes.append("the rewrite changes nothing: nothing to verify")
        return report, {}
    report.device = device or select_device(settings.device)
    sources = candidate.sources_by_absolute_path()
    original_sources = candidate.original_sources_by_absolute_path()
    watch = sorted(sources)
    modes: list[Mode] = ["graph", "xla"] if settings.xla else ["graph"]
    workdir = Path(tempfile.mkdtemp(prefix="autosig-verify-"))
    if settings.keep_dir is not None:
        workdir = settings.keep_dir
        workdir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, RunResult] = dict(baseline or {})
    store = (  # --no-reuse runs the original again, and stores that run
        stored_runs_dir(cmd, candidate, settings, report.device.env)
        if settings.keep_dir is None
        else None
    )
    try:
        for mode in modes:
            for variant in ("original", "rewritten"):
                key = f"{variant}-{mode}"
                if key in runs:
                    continue
                if variant == "original" and mode == "xla" and not settings.xla_baseline:
                    continue
                names = _function_names(runs.get("original-graph"), candidate)
                run_dir = workdir
                if variant == "original" and store is not None:
                    stored = (
                        _reusable(store / key, cmd, candidate, report) if settings.reuse else None
                    )
                    if stored is not None:
                        runs[key] = stored
                        report.notes.append(
                            f"{stored.label}: reused the run stored in {store} (same "
                            "sources, command, profile and settings; --no-reuse runs it again)"
                        )
                        if key == "original-graph":
                            _require_usable(stored, candidate)
                        continue
                    run_dir = store
                runs[key] = run_workload(
                    cmd,
                    variant=variant,  # type: ignore[arg-type]
                    mode=mode,
                    workdir=run_dir,
                    sources=sources if variant == "rewritten" else original_sources,
                    watch_files=watch,
                    jit_files=watch,
                    jit_names=names,
                    env={**_environ(), **report.device.env},
                    sample_calls=settings.sample_calls,
                    show_output=settings.show_output,
                    profile_digest=candidate.profile_digest,
                )
                if run_dir is store:
                    _keep_if_reusable(runs[key], store / key, workdir, candidate, report)
                if key == "original-graph":
                    _require_usable(runs[key], candidate)
        for result in runs.values():
            report.runs.append(
                RunSummary(
                    result.label,
                    result.exit_code,
                    round(result.wall_s, 3),
                    len(result.served),
                    len(result.jit_forced),
                    result.gpus,
                    result.error,
                )
            )
        report.workload_s = runs["original-graph"].wall_s
        report.functions = judge(candidate, runs, settings, modes)
        _add_notes(report, runs, candidate, settings)
    finally:
        if settings.keep_dir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    report.total_s = time.perf_counter() - start
    return report, runs


STORE_VERSION = 2
"""Bump when what a run records changes: stored runs of another version are not reused."""
_ENV_KEYS = ("PYTHONHASHSEED", "CUDA_VISIBLE_DEVICES", "XLA_FLAGS", "TF_XLA_FLAGS")


def stored_runs_dir(
    cmd: Sequence[str], candidate: Candidate, settings: VerifySettings, device_env: dict
) -> Path:
    """Where runs of the original source are stored, named by everything they depend on
    that autosig can see: the command, the working directory, the text of every profiled
    file and of every file the command names, the Python, the device and the settings
    that change what is recorded. Data files and other modules are not seen: --no-reuse.
    """
    import hashlib
    import json
    import os
    import sys

    texts: dict[str, str] = dict(sorted(candidate.originals.items()))
    served = {
        str(candidate.absolute(rel).resolve()): candidate.originals[rel]
        for rel in candidate.served_originals
    }
    for arg in cmd:
        path = Path(arg)
        if path.suffix == ".py" and path.is_file():
            text = served.get(str(path.resolve()))  # the version the original run is served
            if text is None:
                text = path.read_text(encoding="utf-8", errors="replace")
            texts[f"cmd:{path.resolve()}"] = text
    key = {
        "version": STORE_VERSION,
        "cmd": list(cmd),
        "cwd": os.getcwd(),
        "python": sys.executable,
        "texts": texts,
        "env": {k: os.environ.get(k) for k in _ENV_KEYS},
        "device": dict(sorted(device_env.items())),
        "sample_calls": settings.sample_calls,
        "xla_names": sorted(f.qualname for f in candidate.plan.functions),
        "watched": sorted(candidate.texts),
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    base = candidate.root / STATE_DIR / "verify-runs"
    with contextlib.suppress(OSError):
        base.mkdir(parents=True, exist_ok=True)
    mark_state_dir(base)
    _prune(base, keep=4)
    return base / digest


def _reusable(
    base: Path, cmd: Sequence[str], candidate: Candidate, report: VerifyReport
) -> RunResult | None:
    """The original run stored in ``base`` when it may stand in for running it now.

    A stored run of another command or profile, or one that exited otherwise than the
    profiled run (stored by an older autosig), is ignored with a one-line note.
    """
    meta = stored_meta(base)
    if meta is None:
        return None
    why = stored_mismatch(meta, cmd, candidate.profile_digest, candidate.profiled_exit_code)
    if why:
        report.notes.append(f"ignored the original run stored in {base} ({why}): ran it again")
        shutil.rmtree(base, ignore_errors=True)
        return None
    stored = load_stored(base, "original", "xla" if base.name.endswith("-xla") else "graph")
    if stored is None or stored.error is not None:
        return None
    return stored


def _keep_if_reusable(
    run: RunResult, base: Path, workdir: Path, candidate: Candidate, report: VerifyReport
) -> None:
    """Keep a finished original run for reuse only when it exited as the profiled run did
    and produced what verify reads: a failed run is never reused (it moves to this
    verify's own folder, where its log still explains the failure)."""
    if run.error is None and run.exit_code == candidate.profiled_exit_code:
        return
    target = workdir / base.name
    shutil.rmtree(target, ignore_errors=True)
    shutil.move(str(base), str(target))
    if run.log is not None:
        run.log = target / run.log.name
    why = run.error or (
        f"it exited with code {run.exit_code}, the profiled run with {candidate.profiled_exit_code}"
    )
    report.notes.append(f"{run.label}: not stored for reuse ({why})")


def _prune(base: Path, keep: int) -> None:
    """Keep the ``keep`` most recently used stored run directories."""
    try:
        dirs = sorted((d for d in base.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime)
    except OSError:
        return
    for old in dirs[:-keep]:
        shutil.rmtree(old, ignore_errors=True)


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


def _function_names(original: RunResult | None, candidate: Candidate) -> list[str]:
    """tf.function names (XLA names modules after them) of the changed files' functions."""
    names = {f.qualname.rsplit(".", 1)[-1] for f in candidate.plan.functions}
    if original is not None:
        records = original.records(candidate.compared_paths(), candidate.root)
        names |= {key[1].rsplit(".", 1)[-1] for key in records}
    return sorted(names)


def _require_usable(run: RunResult, candidate: Candidate) -> None:
    if run.error:
        raise AutosigError(run.error)
    assert run.profile is not None
    if not run.records(candidate.compared_paths(), candidate.root):
        tail = run.failure_line()
        why = f" (exit code {run.exit_code}: {tail})" if run.exit_code else ""
        raise AutosigError(
            "the original run called no tf.function of the changed files"
            f"{why}; is this the command the profile was recorded with?"
        )


def _add_notes(
    report: VerifyReport,
    runs: dict[str, RunResult],
    candidate: Candidate,
    settings: VerifySettings,
) -> None:
    original = runs["original-graph"]
    if original.exit_code:
        report.notes.append(
            f"the original program itself exits with code {original.exit_code}; "
            "the rewritten one must exit the same way"
        )
    gpus = sorted({g for r in runs.values() for g in r.gpus})
    if report.device is not None and report.device.device == "gpu" and not gpus:
        report.notes.append("a GPU was selected but the workload's TensorFlow reported none")
    for result in runs.values():
        if result.variant != "rewritten":
            continue
        unused = sorted(
            rel
            for rel in candidate.texts
            if str(candidate.absolute(rel).resolve()) not in result.served
        )
        if unused:
            report.notes.append(
                f"{result.label}: rewritten source not loaded for {', '.join(unused)} "
                "(not imported, or imported by another loader such as pytest's for test files)"
            )
    if settings.xla and not settings.xla_baseline:
        report.notes.append("XLA: the rewritten run was compared with the original graph run")


# -- judging ------------------------------------------------------------------------------


def judge(
    candidate: Candidate,
    runs: dict[str, RunResult],
    settings: VerifySettings,
    modes: Sequence[Mode],
) -> list[FunctionVerdict]:
    paths = candidate.compared_paths()
    original = runs["original-graph"]
    records = original.records(paths, candidate.root)
    pairs: dict[str, tuple[RunResult, RunResult, str]] = {}
    design: dict[str, dict[tuple[str, str, int], Design]] = {}
    for mode in modes:
        after = runs.get(f"rewritten-{mode}")
        before = runs.get(f"original-{mode}")
        if after is None:
            continue
        note = ""
        if before is None:
            before, note = original, " (baseline: original graph run)"
        pairs[mode] = (before, after, note)
        old_records = before.records(paths, candidate.root)
        new_records = after.records(paths, candidate.root)
        traces = {
            key: (
                old_records.get(key, record).traces,
                new_records[key].traces if key in new_records else None,
            )
            for key, record in records.items()
        }
        design[mode] = designs(candidate, before, after, records, mode, traces)
        design[f"{mode}-unseen"] = designs(
            candidate, before, after, records, mode, traces, unseen=True
        )
    verdicts: list[FunctionVerdict] = []
    for key, record in sorted(records.items()):
        verdict = FunctionVerdict(key[0], record.qualname, record.line)
        verdict.changes = _changes(candidate, key[0], record)
        for mode, (before, after, fallback_note) in pairs.items():
            if not fallback_note and (before.error or before.exit_code != original.exit_code):
                verdict.modes.append(_outcome_original_failed(mode, before))
                continue
            tol = settings.tolerance
            if mode == "xla":
                tol = tol.scaled(XLA_TOLERANCE_SCALE)
            outcome = _outcome(mode, before, after, key, record, candidate, tol, design[mode][key])
            unseen = design[f"{mode}-unseen"][key]
            _judge_unseen(outcome, before, after, key, candidate, tol, unseen)
            outcome.detail += fallback_note
            outcome.advice = _xla_advice(outcome)
            verdict.modes.append(outcome)
        verdicts.append(verdict)
    return verdicts


def _changes(candidate: Candidate, path: str, record: FunctionRecord) -> list[str]:
    out: list[str] = []
    plan = candidate.plan.for_site(path, record.qualname, record.line)
    if plan is not None and plan.action == "signature":
        out.append("input_signature")
    elif plan is not None and plan.action == "reduce_retracing":
        out.append("reduce_retracing")
    for fix in candidate.fixes_for(path, record.qualname):
        code = str(getattr(fix, "code", "") or "")
        if code and code not in ("signature", "reduce_retracing") and code not in out:
            out.append(code)  # a rule's code, or call_site
    return out


def _outcome_original_failed(mode: Mode, before: RunResult) -> ModeOutcome:
    why = before.error or f"exit code {before.exit_code}: {before.failure_line()}"
    return ModeOutcome(
        mode,
        "not applicable" if mode == "xla" else "not compared",
        f"the original program fails under {mode} too ({why}): not caused by the rewrite",
    )


def _outcome(
    mode: Mode,
    before: RunResult,
    after: RunResult,
    key: tuple[str, str, int],
    record: FunctionRecord,
    candidate: Candidate,
    tol: Tolerance,
    design: Design,
) -> ModeOutcome:
    old = before.records(candidate.compared_paths(), candidate.root).get(key, record)
    new = after.records(candidate.compared_paths(), candidate.root).get(key)
    path, qualname = key[0], key[1]
    outcome = ModeOutcome(mode, "equivalent")
    outcome.calls = (old.calls, None if new is None else new.calls)
    outcome.traces = (old.traces, None if new is None else new.traces)
    outcome.trace_time_s = (old.trace_time_s, None if new is None else new.trace_time_s)
    outcome.median_step_s = (
        before.median_step(candidate.root, path, qualname),
        after.median_step(candidate.root, path, qualname),
    )
    if mode == "xla":
        file = str(candidate.absolute(path).resolve())
        outcome.xla_compiles = (
            before.compiles.lookup(file, qualname) if before.mode == "xla" else None,
            after.compiles.lookup(file, qualname) if after.error is None else None,
        )
    if after.error:
        outcome.status, outcome.detail = "could not run", after.error
        return outcome
    if str(candidate.absolute(path).resolve()) not in after.served:
        outcome.status = "could not run"
        outcome.detail = "the rewritten source of this file was not loaded by the workload"
        return outcome
    crashed = after.exit_code != before.exit_code
    file = str(candidate.absolute(path).resolve())
    xla_why = _xla_not_applicable(mode, before, after, file, qualname)
    if new is None:
        outcome.status = "could not run"
        outcome.detail = (
            f"never called in the rewritten run (exit code {after.exit_code}: "
            f"{after.failure_line()})"
            if crashed
            else "never called in the rewritten run"
        )
        return outcome
    old_calls = before.calls_of(file, qualname, key[2])
    new_calls = after.calls_of(file, qualname, key[2])
    if not old_calls and not new_calls and before.effects.loaded and after.effects.loaded:
        return _nested_outcome(outcome, before, after, file, qualname, key[2], old.calls)
    if old_calls is None or new_calls is None:
        run = before if old_calls is None else after
        why = (
            "the verify bootstrap wrote nothing: did the process exit through os._exit?"
            if not run.effects.loaded
            else "its calls were not seen by the verify bootstrap"
        )
        outcome.status = "not compared"
        outcome.detail = f"no call effects recorded in the {run.label} run ({why})"
        return outcome
    effects = compare_effects(old_calls, new_calls, tol, design=design)
    old_samples, new_samples, skipped = inputs_differ(
        old.samples, new.samples, before.arrays, after.arrays
    )
    if design.values:
        comparison = compare_by_design(
            old_samples,
            new_samples,
            before.arrays,
            after.arrays,
            design.values,
            tol,
            random=design.output,
        )
    else:
        comparison = compare_function(old_samples, new_samples, before.arrays, after.arrays, tol)
    outcome.comparison = comparison
    outcome.effects = effects
    if not effects.equal:
        outcome.status = "not equivalent"
        outcome.detail = _effects_detail(effects, len(old_calls))
        if crashed and effects.kind == "exception" and effects.first_call == len(new_calls) - 1:
            outcome.status = "could not run"  # it raised, and the program died of it
    elif comparison.status == "not equivalent":
        outcome.status = "not equivalent"
        outcome.detail = comparison.summary()
    elif effects.by_design or effects.new_state or comparison.status == "different by design":
        outcome.status = "different by design"
        outcome.detail = _design_detail(effects, comparison, design, outcome.traces[0])
    else:
        outcome.status = "equivalent"
        outcome.detail = _equal_detail(effects, comparison)
    if skipped and outcome.status != "not equivalent":
        outcome.detail += (
            f"; {skipped} sampled calls got other inputs in the rewritten run "
            "(their full outputs were not compared; their digests were)"
        )
    if xla_why and outcome.status not in FAILING:
        outcome.status = "not applicable"
        outcome.detail = f"XLA: not applicable ({xla_why}); without XLA: {outcome.detail}"
    elif xla_why:
        outcome.detail += f"; XLA: not applicable ({xla_why})"
    if crashed and new.calls < old.calls and outcome.status not in FAILING:
        outcome.status = "could not run"
        outcome.detail = (
            f"the rewritten program exited with code {after.exit_code} "
            f"(original: {before.exit_code}) after {new.calls} of {old.calls} calls: "
            f"{after.failure_line()}"
        )
    elif crashed and outcome.status not in FAILING:
        outcome.status = "could not run"
        outcome.detail += (
            f"; all {new.calls} calls ran, but the rewritten program then failed "
            f"elsewhere (exit code {after.exit_code}, original {before.exit_code}): "
            f"{after.failure_line()}"
        )
    return outcome


def _judge_unseen(
    outcome: ModeOutcome,
    before: RunResult,
    after: RunResult,
    key: tuple[str, str, int],
    candidate: Candidate,
    tol: Tolerance,
    design: Design,
) -> None:
    """Compare the function's calls on unseen inputs (``unseen``): a difference there
    fails like one on a recorded call, named as on an unseen input."""
    if outcome.status in ("could not run", "not compared") and not outcome.effects:
        return
    effects_key = (os.path.realpath(candidate.absolute(key[0])), key[1], key[2])
    compared = compare_unseen(
        before.effects.unseen.get(effects_key, []),
        after.effects.unseen.get(effects_key, []),
        tol,
        design,
        before.effects.unseen_skipped.get(effects_key, "")
        or after.effects.unseen_skipped.get(effects_key, ""),
    )
    outcome.unseen = compared
    if compared.failed and outcome.status not in FAILING:
        outcome.status = "not equivalent"
        outcome.detail = f"on an unseen input: {compared.failed}; {compared.summary()}"
    elif compared.failed:
        outcome.detail += f"; on an unseen input too: {compared.failed}"
    else:
        outcome.detail += f"; {compared.summary()}"
        if compared.by_design and outcome.status == "equivalent":
            outcome.detail += f" (values differ by design there: {compared.by_design})"


def _nested_outcome(
    outcome: ModeOutcome,
    before: RunResult,
    after: RunResult,
    file: str,
    qualname: str,
    ordinal: int,
    calls: int,
) -> ModeOutcome:
    """A function only ever called while another tf.function traced runs as part of
    that function's graph: its effects are that function's. Covered when every such
    caller is watched (a function of a changed file, compared call by call itself)."""
    outers = set()
    for run in (before, after):
        outers |= run.effects.nested.get((os.path.realpath(file), qualname, ordinal), set())
    names = ", ".join(sorted(q for _, q in outers if q)) or "an unwatched function"
    if outers and all(f and q for f, q in outers):
        outcome.status = "equivalent"
        outcome.detail = (
            f"called only inside {names} while it traced: its effects are compared as part "
            f"of {'that function' if len(outers) == 1 else 'those functions'}' calls"
        )
        return outcome
    outcome.status = "not compared"
    outcome.detail = (
        f"none of its {calls} calls ran on its own: it was called only while {names} "
        "traced, outside the changed files, so nothing compares its effects"
    )
    return outcome


def _xla_advice(outcome: ModeOutcome) -> str:
    """XLA compiles once per concrete shape even with one trace: say so when it shows."""
    if outcome.mode != "xla":
        return ""
    compiles = outcome.xla_compiles[1]
    traces = outcome.traces[1]
    before, after = outcome.median_step_s
    if not isinstance(compiles, int) or traces is None or compiles <= max(traces, 1):
        return ""
    text = (
        f"XLA compiled this function {compiles} times for {traces} "
        f"trace{'s' if traces != 1 else ''}: once per new input shape (None dimensions "
        "do not help XLA)"
    )
    if before is not None and after is not None and after > 1.2 * before:
        text += f"; the median step went from {before * 1e3:.3g} ms to {after * 1e3:.3g} ms"
    return text + (
        ". Remedy: fewer distinct shapes (bucket or pad inputs to a few sizes), "
        "or leave jit_compile off for this function"
    )


def _xla_not_applicable(
    mode: Mode, before: RunResult, after: RunResult, file: str, qualname: str
) -> str:
    """Why XLA cannot compile this function (it then ran without XLA), or ""."""
    if mode != "xla":
        return ""
    original = before.xla_fallback.get((file, qualname)) if before.mode == "xla" else None
    rewritten = after.xla_fallback.get((file, qualname))
    if original:
        return f"the original cannot be compiled either: {original}"
    if rewritten and before.mode == "xla":
        return f"{rewritten}; the original compiles: the rewrite added it"
    if rewritten:
        return f"{rewritten} (the original was not tried under XLA: --xla-baseline)"
    return ""


def _effects_detail(effects: EffectsComparison, old_n: int) -> str:
    call = effects.first_call
    where = f"call {call + 1} of {old_n}" if call is not None else "calls"
    if effects.kind == "calls":
        return f"{effects.what}: the rewritten program stopped calling it (or called it more)"
    return f"first difference at {where} ({effects.kind}): {effects.what}"


def _design_detail(
    effects: EffectsComparison,
    comparison: FunctionComparison,
    design: Design,
    traces_before: int,
) -> str:
    """What differed on purpose, what it reached, and that everything else was equal."""
    parts = []
    if effects.by_design or comparison.status == "different by design":
        reached = ", ".join(design.reached) if design.reached else ""
        parts.append(
            f"values differ by design: {effects.by_design or design.values}"
            + (f" (the draws reach {reached}; everything else compared exactly)" if reached else "")
        )
    for name, values in effects.new_state.items():
        shown = values if len(values) <= 6 else [*values[:4], "...", *values[-2:]]
        parts.append(
            f"state changed on purpose ({design.new_state or 'AS103'}): new variable "
            f"{name} after each call: {', '.join(shown)}; the original's Python value "
            f"changed only while tracing ({traces_before} trace{'s' if traces_before != 1 else ''})"
        )
    if design.new_state and not effects.new_state:
        parts.append(
            f"state changed on purpose ({design.new_state}): no new variable was seen in "
            "the rewritten run"
        )
    return (
        f"all {effects.calls_compared} calls: structure, dtypes, shapes and exceptions equal; "
        + "; ".join(parts)
    )


def _equal_detail(effects: EffectsComparison, comparison: FunctionComparison) -> str:
    """The "N calls equal" line with the float error measured, only for what was compared."""
    max_abs = max(effects.max_abs, comparison.max_abs if comparison.calls_compared else 0.0)
    errors = f"max abs error {max_abs:.3g}"
    rel = max(effects.max_rel, comparison.max_rel if comparison.calls_compared else 0.0)
    if effects.rel_defined and rel != float("inf"):
        errors += f", max rel error {rel:.3g}"
    else:
        errors += ", max rel error undefined (reference value 0)"
    return (
        f"all {effects.calls_compared} calls equal: outputs, variables, tf.print, "
        f"exceptions ({errors})"
    )

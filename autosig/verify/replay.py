"""Replay mode: recorded inputs through the original and the rewritten functions, no workload.

For module-level tf.functions of the changed files that have input samples, a
subprocess (``python -m autosig.verify.replay JOB OUT``; user code and TensorFlow
never load in the verifier itself) executes each file twice as two separate module
objects, the original text and the rewritten text, nothing written to disk, then
calls both functions with the recorded ``.npz`` inputs (tensors rebuilt as tensors)
and records their outputs and trace counts; with XLA, again through a
``jit_compile=True`` twin of each. The parent compares like a workload run.

The modules run under a private ``__name__``, so ``if __name__ == "__main__":`` blocks
do not run; module-level code that does real work (a training loop at top level)
would run twice: use the workload mode for such files.
"""

from __future__ import annotations

import functools
import json
import linecache
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError, Interrupted
from autosig.profile.describe import TFTypes
from autosig.profile.format import Profile, Sample
from autosig.profile.launch import run_supervised
from autosig.profile.random_ops import HIDDEN, VARIABLE
from autosig.profile.samples import LeafConverter, SampleStore, load_arrays, rebuild, save_arrays
from autosig.verify import reach
from autosig.verify.arrays import XLA_TOLERANCE_SCALE
from autosig.verify.candidate import Candidate
from autosig.verify.compare import (
    compare_by_design,
    compare_function,
)
from autosig.verify.device import select_device
from autosig.verify.reach import Design, active_kinds, design_for, tainted_variables
from autosig.verify.runner import (
    FunctionVerdict,
    ModeOutcome,
    RunSummary,
    VerifyReport,
    VerifySettings,
    _changes,
)
from autosig.verify.runs import STOP_GRACE_S
from autosig.verify.timing import median_step, time_interleaved
from autosig.verify.xla import _target, count_compiles, dump_flags, note_concrete_functions

VARIANTS = ("original", "rewritten")


# -- parent side --------------------------------------------------------------------------


def replay_candidate(
    profile: Profile,
    profile_path: Path,
    candidate: Candidate,
    settings: VerifySettings | None = None,
) -> VerifyReport:
    """Replay every module-level function of the changed files that has samples."""
    settings = settings or VerifySettings()
    start = time.perf_counter()
    report = VerifyReport(changed_files=candidate.changed_files(), errors=list(candidate.errors))
    if not candidate.texts:
        report.notes.append("the rewrite changes nothing: nothing to verify")
        return report
    jobs: list[dict[str, Any]] = []
    skipped: list[FunctionVerdict] = []
    for record in profile.functions:
        if record.path not in candidate.texts:
            continue
        verdict = FunctionVerdict(record.path, record.qualname, record.line)
        verdict.changes = _changes(candidate, record.path, record)
        if "." in record.qualname:
            verdict.modes.append(
                ModeOutcome("graph", "not compared", "replay covers module-level functions only")
            )
            skipped.append(verdict)
            continue
        if not record.samples:
            verdict.modes.append(ModeOutcome("graph", "not compared", "no recorded input samples"))
            skipped.append(verdict)
            continue
        jobs.append(
            {
                "path": record.path,
                "qualname": record.qualname,
                "params": [{"name": p.name, "kind": p.kind} for p in record.params],
                "samples": [{"call": s.call, "args": s.args} for s in record.samples],
            }
        )
    report.device = select_device(settings.device)
    modes = ["graph", "xla"] if settings.xla else ["graph"]
    results: dict[str, Any] = {}
    if jobs:
        results = _run_replay(profile_path, profile, candidate, jobs, modes, report)
    for job in jobs:
        record = profile.find(job["path"], job["qualname"])[0]
        verdict = FunctionVerdict(record.path or "", record.qualname, record.line)
        verdict.changes = _changes(candidate, record.path or "", record)
        for mode in modes:
            verdict.modes.append(_judge(job, mode, results, candidate, settings))
        report.functions.append(verdict)
    report.functions.extend(skipped)
    report.notes.append("replay mode: recorded inputs replayed, no workload run")
    if jobs:
        report.notes.append(
            "replay: median step is the steady state on the replayed inputs, original and "
            "rewritten timed interleaved over repeated rounds after a warm-up pass; "
            "tracing and XLA compiles are not in it (see traces and XLA compiles)"
        )
    report.total_s = time.perf_counter() - start
    return report


def _run_replay(
    profile_path: Path,
    profile: Profile,
    candidate: Candidate,
    jobs: list[dict[str, Any]],
    modes: list[str],
    report: VerifyReport,
) -> dict[str, Any]:
    samples_file = None
    if profile.samples_file:
        samples_file = str(Path(profile_path).resolve().parent / profile.samples_file)
    with tempfile.TemporaryDirectory(prefix="autosig-replay-") as tmp:
        job_file = Path(tmp) / "job.json"
        job = {
            "root": str(candidate.root),
            "samples": samples_file,
            "modes": modes,
            "files": {
                rel: {"original": candidate.originals[rel], "rewritten": candidate.texts[rel]}
                for rel in {j["path"] for j in jobs}
            },
            "functions": jobs,
        }
        job_file.write_text(json.dumps(job), encoding="utf-8")
        env = {**os.environ, **(report.device.env if report.device else {})}
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        dump = Path(tmp) / "xla-dump"
        if "xla" in modes:
            names = sorted({j["qualname"].rsplit(".", 1)[-1] for j in jobs})
            flags = dump_flags(dump, names)
            env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {flags}".strip()
        log = Path(tmp) / "replay.log"
        env["TMPDIR"] = str(Path(tmp))  # AutoGraph's files go with the rest of the run
        with open(log, "wb") as handle:
            ended = run_supervised(
                [sys.executable, "-m", "autosig.verify.replay", str(job_file), tmp],
                env,
                stop_grace_s=STOP_GRACE_S,
                cwd=candidate.root,
                stdout=handle,
                stderr=subprocess.STDOUT,
            )
        if ended.interrupted is not None:
            raise Interrupted(ended.interrupted)
        out = Path(tmp) / "result.json"
        if not out.exists():
            tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
            raise AutosigError(f"replay process failed (exit {ended.code}): " + " | ".join(tail))
        results = json.loads(out.read_text(encoding="utf-8"))
        results["compiles"] = count_compiles(dump)
        for key in list(results.get("arrays", {})):
            results["arrays"][key] = load_arrays(Path(tmp) / results["arrays"][key])
        report.runs.append(_summary(results))
        return results


def _summary(results: dict[str, Any]) -> Any:
    return RunSummary(
        "replay", 0, round(results.get("wall_s", 0.0), 3), 0, 0, results.get("gpus", [])
    )


def _judge(
    job: dict[str, Any],
    mode: str,
    results: dict[str, Any],
    candidate: Candidate,
    settings: VerifySettings,
) -> ModeOutcome:
    key = f"{job['path']}::{job['qualname']}"
    entry = results.get("functions", {}).get(key, {})
    runs = {v: entry.get(f"{v}-{mode}") for v in VARIANTS}
    outcome = ModeOutcome(mode, "equivalent")  # type: ignore[arg-type]
    old, new = runs["original"], runs["rewritten"]
    if old is None or new is None:
        outcome.status, outcome.detail = "could not run", entry.get("error", "not replayed")
        return outcome
    outcome.calls = (len(old["calls"]), len(new["calls"]))
    outcome.traces = (old.get("traces", 0), new.get("traces"))
    outcome.trace_time_s = (None, None)  # not measured by a replay
    outcome.median_step_s = (
        median_step([old.get("seconds", [])], warmup=0),
        median_step([new.get("seconds", [])], warmup=0),
    )
    if mode == "xla":
        outcome.xla_compiles = (_compiles(results, old), _compiles(results, new))
    if old.get("error") and new.get("error"):
        outcome.status = "not compared"
        outcome.detail = f"the original fails too: {old['error']}"
        return outcome
    if new.get("error"):
        outcome.status, outcome.detail = "could not run", new["error"]
        return outcome
    arrays = results.get("arrays", {})
    old_samples = [_sample(c) for c in old["calls"]]
    new_samples = [_sample(c) for c in new["calls"]]
    errors = [c for c in new["calls"] if c.get("error")]
    if errors and not any(c.get("error") for c in old["calls"]):
        outcome.status = "could not run"
        outcome.detail = f"call {errors[0]['call']} raised: {errors[0]['error']}"
        return outcome
    tol = settings.tolerance.scaled(XLA_TOLERANCE_SCALE) if mode == "xla" else settings.tolerance
    design = _design(job, mode, old, new, candidate)
    old_arrays = arrays.get(f"original-{mode}", {})
    new_arrays = arrays.get(f"rewritten-{mode}", {})
    if design.values:
        comparison = compare_by_design(
            old_samples,
            new_samples,
            old_arrays,
            new_arrays,
            design.values,
            tol,
            random=design.output,
        )
    else:
        comparison = compare_function(old_samples, new_samples, old_arrays, new_arrays, tol)
    outcome.comparison = comparison
    outcome.status = comparison.status
    outcome.detail = comparison.summary()
    if entry.get(f"timing-{mode}"):
        outcome.detail += f"; {entry[f'timing-{mode}']}"
    return outcome


def _design(
    job: dict[str, Any], mode: str, old: dict[str, Any], new: dict[str, Any], candidate: Candidate
) -> Design:
    """What may differ on purpose: only what a changed random stream reaches (an AS102
    fix, fewer traces, other op seeds, XLA), by dataflow in the replayed graphs."""
    old_reach, new_reach = old.get("reach"), new.get("reach")
    why = candidate.by_design(job["path"], job["qualname"])
    if why:
        kinds = frozenset({HIDDEN, VARIABLE})
    else:
        kinds, why = active_kinds(
            old_reach,
            new_reach,
            xla=mode == "xla",
            xla_baseline=True,  # the original is replayed under XLA too
            traces=(old.get("traces", 0), new.get("traces")),
        )
    tainted = tainted_variables((s, kinds) for s in (old_reach, new_reach) if s)
    return design_for(old_reach, new_reach, kinds, tainted, why or "")


def _compiles(results: dict[str, Any], run: dict[str, Any]) -> int | str | None:
    """XLA compiles of one replayed jit twin (None: the child could not note it)."""
    counts = results.get("compiles")
    site = run.get("compile_site")
    if counts is None or not site:
        return None
    return counts.lookup(site[0], site[1])


def _sample(call: dict[str, Any]) -> Sample:
    return Sample(signature=0, call=call["call"], args={}, outputs=call.get("outputs"))


# -- child side ---------------------------------------------------------------------------


class _TextLoader:
    """``__loader__`` of a replayed module: lets inspect/AutoGraph read its text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def get_source(self, name: str) -> str:
        return self.text


def load_module_from_text(text: str, path: str, variant: str) -> types.ModuleType:
    """Execute ``text`` as a fresh module (not in ``sys.modules``), nothing written.

    The original keeps its real file name (its text is the file on disk); the
    rewritten one gets ``<autosig-rewritten:PATH>`` so the two never share a
    ``linecache`` entry and AutoGraph converts each from its own source.
    """
    filename = path if variant == "original" else f"<autosig-rewritten:{path}>"
    name = f"_autosig_replay_{variant}_{Path(path).stem}"
    module = types.ModuleType(name)
    module.__file__ = path
    module.__loader__ = _TextLoader(text)  # type: ignore[assignment]
    lines = text.splitlines(keepends=True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    sys.modules[name] = module
    exec(compile(text, filename, "exec", dont_inherit=True), module.__dict__)
    return module


def _call(fn: Any, params: list[dict[str, str]], args: dict[str, Any]) -> Any:
    positional, keywords = _arguments(params, args)
    return fn(*positional, **keywords)


def _arguments(
    params: list[dict[str, str]], args: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """Recorded arguments by parameter -> how to pass them (by kind)."""
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for param in params:
        name, kind = param["name"], param["kind"]
        if name not in args:
            continue
        value = args[name]
        if kind == "POSITIONAL_ONLY":
            positional.append(value)
        elif kind == "VAR_POSITIONAL":
            positional.extend(value)
        elif kind == "VAR_KEYWORD":
            keywords.update(value)
        else:
            keywords[name] = value
    return positional, keywords


def _time_steps(
    fn_job: dict[str, Any],
    mode: str,
    entry: dict[str, Any],
    targets: dict[tuple[str, str], Any],
    inputs: dict[str, Any],
    rebuild: Any,
) -> None:
    """Time original vs rewritten on the inputs both ran without error (already warm).

    Durations go to ``entry["<variant>-<mode>"]["seconds"]``; a call that raises
    while being timed leaves ``entry["timing-<mode>"]`` saying why, and no durations.
    """
    runs = [entry.get(f"{v}-{mode}") for v in VARIANTS]
    if any(run is None or (v, mode) not in targets for v, run in zip(VARIANTS, runs, strict=True)):
        return
    failed = {c["call"] for run in runs for c in run["calls"] if "error" in c}
    samples = [s for s in fn_job["samples"] if s["call"] not in failed]
    try:
        calls = {}
        for variant in VARIANTS:
            calls[variant] = []
            for sample in samples:
                args = rebuild(sample["args"], inputs, tensors=True)
                positional, keywords = _arguments(fn_job["params"], args)
                calls[variant].append(
                    functools.partial(targets[(variant, mode)], *positional, **keywords)
                )
        durations = time_interleaved(calls)
    except Exception as exc:  # noqa: BLE001 - no timing, but the verdict stands
        entry[f"timing-{mode}"] = f"not timed: {type(exc).__name__}: {exc}"
        return
    for variant, run in zip(VARIANTS, runs, strict=True):
        run["seconds"] = durations[variant]


def _note_twin(twin: Any) -> list[str] | None:
    """Note a jit twin's concrete functions next to the XLA dump; its (file, qualname).

    The two variants' twins share name and qualname, not their file: the rewritten
    module's code says ``<autosig-rewritten:PATH>``, so their compiles stay apart.
    """
    target = _target(twin.python_function)
    if target is None:
        return None
    code = target.__code__
    note_concrete_functions(twin, (code.co_filename, target.__qualname__, code.co_firstlineno))
    return [code.co_filename, target.__qualname__]


def _child(job_file: str, out_dir: str) -> None:
    start = time.perf_counter()
    job = json.loads(Path(job_file).read_text(encoding="utf-8"))
    root = job["root"]
    sys.path.insert(0, root)
    import tensorflow as tf

    inputs = load_arrays(job["samples"]) if job.get("samples") else {}
    types_ = TFTypes.load()
    stores = {f"{v}-{m}": SampleStore() for v in VARIANTS for m in job["modes"]}
    modules: dict[tuple[str, str], Any] = {}
    errors: dict[tuple[str, str], str] = {}
    for rel, texts in job["files"].items():
        path = str(Path(root) / rel)
        sys.path.insert(0, str(Path(path).parent))
        for variant in VARIANTS:
            try:
                modules[(rel, variant)] = load_module_from_text(texts[variant], path, variant)
            except Exception as exc:  # noqa: BLE001 - report, replay the rest
                errors[(rel, variant)] = f"{type(exc).__name__}: {exc}"
    functions: dict[str, Any] = {}
    for fn_job in job["functions"]:
        key = f"{fn_job['path']}::{fn_job['qualname']}"
        entry: dict[str, Any] = functions.setdefault(key, {})
        targets: dict[tuple[str, str], Any] = {}
        for variant in VARIANTS:
            module = modules.get((fn_job["path"], variant))
            if module is None:
                entry["error"] = errors.get((fn_job["path"], variant), "module not loaded")
                continue
            fn = getattr(module, fn_job["qualname"], None)
            if fn is None or not hasattr(fn, "experimental_get_tracing_count"):
                entry["error"] = (
                    f"{fn_job['qualname']} is not a tf.function in the {variant} module"
                )
                continue
            for mode in job["modes"]:
                target = fn
                if mode == "xla":
                    target = tf.function(
                        fn.python_function,
                        input_signature=fn.input_signature,
                        reduce_retracing=bool(getattr(fn, "_reduce_retracing", False)),
                        jit_compile=True,
                    )
                targets[(variant, mode)] = target
                store = stores[f"{variant}-{mode}"]
                converter = LeafConverter(types_, store)
                calls: list[dict[str, Any]] = []
                run_error = None
                before = target.experimental_get_tracing_count()
                for sample in fn_job["samples"]:
                    try:
                        args = rebuild(sample["args"], inputs, tensors=True)
                        result = _call(target, fn_job["params"], args)
                        pending: dict[str, Any] = {}
                        outputs = converter.convert(result, pending)
                        store.commit(pending)
                        calls.append({"call": sample["call"], "outputs": outputs})
                    except Exception as exc:  # noqa: BLE001 - a failing call is the verdict
                        calls.append(
                            {"call": sample["call"], "error": f"{type(exc).__name__}: {exc}"}
                        )
                        run_error = run_error or calls[-1]["error"]
                summary: dict[str, Any] = {}
                reach.summarise(target, set(), summary)
                entry[f"{variant}-{mode}"] = {
                    "calls": calls,
                    "traces": target.experimental_get_tracing_count() - before,
                    "error": run_error if all("error" in c for c in calls) else None,
                    "reach": summary,
                }
        for mode in job["modes"]:
            _time_steps(fn_job, mode, entry, targets, inputs, rebuild)
        for variant in VARIANTS:
            if (variant, "xla") in targets:
                entry[f"{variant}-xla"]["compile_site"] = _note_twin(targets[(variant, "xla")])
    arrays = {}
    for name, store in stores.items():
        file = f"{name}.npz"
        save_arrays(store.arrays, Path(out_dir) / file)
        arrays[name] = file
    result = {
        "functions": functions,
        "arrays": arrays,
        "gpus": [d.name for d in tf.config.list_physical_devices("GPU")],
        "wall_s": time.perf_counter() - start,
    }
    (Path(out_dir) / "result.json").write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])

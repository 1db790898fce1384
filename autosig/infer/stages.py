"""One profiled function's plan: the source checks, then the stages in the order they run.

The checks come first, in the order a user would want them explained (the source
available, the function still there, unchanged since profiling, not already signed);
library code (not editable) gets advice from its observations instead. Then each
stage takes what the one before it made and narrows the same ``ParamResult`` list:

1. ``observed.observe``: what the profile shows, read from the record once, for
   every function before the checks (the planner asks it and hands ``Observed`` in:
   each parameter's ``ParamResult``, traced once?, Python ints, the tensor shapes seen,
   the distributed parameters, the variables the first call created);
2. ``python_params``: which Python numbers may become scalar tensors (the Python-value
   analysis, ``analysis/python_values.py``);
3. ``dimensions``: which dimensions a signature may leave free or must pin (the
   shape-use analysis, ``analysis/shape_reads.py``; ``shape_rewrites``: the reads that
   become ``tf.shape()``); ``distributed_inputs``: a step taking distributed dataset
   elements gets ``input_signature=[D.element_spec]``;
4. ``action``: an ``input_signature`` covering the positional parameters up to the last
   one that must be in it, ``reduce_retracing=True`` when a parameter blocks that, or
   nothing; ``domain_evidence``: what shows the calls stay within that signature's
   domain (asked once, here); ``guarded_trace``: where the signature would narrow what
   the original accepts beyond what the profile shows, the same specs seed one trace
   instead;
   ``call_site_plan``: where no signature can be written, callers pass tensors;
5. ``findings.with_findings``: the AS2xx findings of the plan as it stands (the paired
   trace, ``paired_trace.pair``, included) that say why the function retraced, then, for
   every function whatever step it stopped at, ``honour_comments``: the
   ``# autosig: ignore`` comments (the findings they silence, ``suppressed_on``).
"""

from __future__ import annotations

from autosig.infer import guarded_trace
from autosig.infer.action import MIN_CALLS_FOR_DEFAULTS, decide_action
from autosig.infer.call_site_plan import plan_call_sites
from autosig.infer.dimensions import decide_shapes
from autosig.infer.distributed_inputs import plan_distributed
from autosig.infer.domain_evidence import evidence
from autosig.infer.findings import honour_comments, with_findings
from autosig.infer.library import library_plan
from autosig.infer.observations import InferOptions
from autosig.infer.observed import Observed
from autosig.infer.paired_trace import pair
from autosig.infer.plan import FunctionPlan, ParamPlan
from autosig.infer.probe_evidence import probe_proofs
from autosig.infer.python_params import decide_python_params
from autosig.profile.format import FunctionRecord
from autosig.source.discover import Located, Source
from autosig.source.hashing import source_hash_from_file_text
from autosig.source.project_modules import ProjectModules

STALE_REASON = "changed since it was profiled (re-run autosig profile)"


SIGNED_REASON = "already has an input_signature"


def plan_function(
    record: FunctionRecord,
    observed: Observed,
    source: Source | None,
    located: Located | None,
    options: InferOptions,
    modules: ProjectModules | None,
) -> FunctionPlan:
    """The plan of the function ``record`` describes, in the current ``source`` of its
    file (None: not available) where the planner found it (``located``, ``Source.find``;
    None: not found), with its ``# autosig: ignore`` comments honoured
    (``findings.honour_comments``: the findings they silence; one covering the plan's
    rewrite leaves the function as it is)."""
    entry, lines = _plan(record, observed, source, located, options, modules)
    if source is None:
        return entry
    return honour_comments(entry, source, lines, findings=record.editable)


def _plan(
    record: FunctionRecord,
    observed: Observed,
    source: Source | None,
    located: Located | None,
    options: InferOptions,
    modules: ProjectModules | None,
) -> tuple[FunctionPlan, list[int]]:
    """The checks and the stages: the plan and the lines where a suppression comment
    for the function counts (none when it is not found)."""
    if not record.editable:  # library code: advice from the observations alone
        entry = library_plan(record, observed)
        # a library file among the sources: its comments count too
        return entry, located.comment_lines if source is not None and located else []
    base = {
        "path": record.path or "",
        "qualname": record.qualname,
        "line": record.line,
        "calls": record.calls,
        "traces": record.traces,
    }
    where = record.path or "<unknown file>"
    if source is None:
        reasons = (f"the source of {where} is not available",)
        return FunctionPlan(action="none", reasons=reasons, **base), []
    if source.error is not None:
        return FunctionPlan(action="none", reasons=(f"{where} {source.error}",), **base), []
    if located is None:
        reasons = (
            f"no tf.function named {record.qualname} found in {where} "
            "(moved, renamed or no longer a tf.function? re-run autosig profile)",
        )
        return FunctionPlan(action="none", reasons=reasons, **base), []
    site = located.site
    base["line"] = site.site.line
    first, last = located.lines
    lines = located.comment_lines
    if (
        record.source_sha256
        and source_hash_from_file_text(source.text, first, last) != record.source_sha256
    ):
        return FunctionPlan(action="none", reasons=(STALE_REASON,), stale=True, **base), lines
    if site.site.has_input_signature:
        return FunctionPlan(action="none", reasons=(SIGNED_REASON,), **base), lines

    results, once = observed.results, observed.once
    if record.calls <= 1 or once is not None:
        reason = "called once; nothing to fix" if record.calls <= 1 else str(once)
        params = tuple(ParamPlan(r.info.name, None, r.evidence) for r in results)
        return FunctionPlan(action="none", params=params, reasons=(reason,), **base), lines

    short = frozenset()
    if record.calls < MIN_CALLS_FOR_DEFAULTS and not record.signatures_dropped:
        short = observed.python_ints
    proofs = probe_proofs(record.probe, method=site.site.is_method)
    tried_reasons = decide_python_params(
        source, site, results, proofs, modules, options.try_uncertain, short
    )
    policies = {r.info.name: r.relax for r in results}
    shapes = decide_shapes(source, site, record, observed, policies, proofs, modules)
    distributed = plan_distributed(source, site, record, observed, shapes.use)
    decision = decide_action(record, site, results, shapes, not options.guarded_trace)
    domain = None  # what shows the calls stay within the signature's domain, or why not
    if options.guarded_trace and decision.action == "signature" and not decision.narrowing:
        signed = [r for r in results if r.info.name in decision.signed]
        domain = evidence(record, signed, options.root)
    stage = guarded_trace.decide(record, source, site, observed, decision, shapes, options, domain)
    action, reasons, narrowed, guarded = stage.action, stage.reasons, stage.narrowed, stage.guarded
    if distributed is not None:
        reasons.append(distributed.reason)
    call_sites, call_reasons = plan_call_sites(
        record, results, action, proofs, narrowed=stage.signature_kept_out
    )
    reasons.extend(call_reasons)
    params = tuple(
        ParamPlan(r.info.name, r.spec if r.info.name in decision.signed else None, r.evidence)
        for r in results
    )
    warnings: list[str] = [narrowed] if narrowed else []
    tried = [r for r in results if r.tried and r.info.name in decision.signed]
    if action == "guarded_trace" and stage.unsafe:
        warnings.append(stage.unsafe)
    if action == "guarded_trace" and shapes.proven:
        reasons.append(
            "shapes from the probe traces of the original code: " + "; ".join(shapes.proven)
        )
    if action == "signature":
        reasons.extend(tried_reasons[r.info.name] for r in tried)
        warnings.extend(r.warning for r in results if r.warning and r.info.name in decision.signed)
        warnings.extend(shapes.warnings)
        if shapes.relaxed:
            reasons.append(
                "None where no static read was found (dimensions that never varied): "
                f"{', '.join(shapes.relaxed)}"
            )
        reasons.extend(
            r.probe_reason
            for r in results
            if r.probe_reason and r.info.name in decision.signed and r.spec is not None
        )
        if shapes.proven:
            reasons.append(
                "shapes from the probe traces of the original code: " + "; ".join(shapes.proven)
            )
    tensorized = {p.name: p.constant() for p in call_sites.params} if call_sites else {}
    if tensorized:
        reasons.extend(
            tried_reasons[r.info.name] for r in results if r.tried and r.info.name in tensorized
        )
        warnings.extend(r.warning for r in results if r.warning and r.info.name in tensorized)
    if action not in ("none", "guarded_trace"):
        warnings.extend(shapes.relaxed_warnings)
    if (action != "none" or call_sites is not None) and shapes.random_reason:
        warnings.append(shapes.random_reason)
    if (action != "none" or call_sites is not None) and shapes.state_reason:
        warnings.append(shapes.state_reason)
    rewrites = tuple(shapes.rewrites) if action not in ("none", "guarded_trace") else ()
    if rewrites:
        reasons.append(
            "static shape reads rewritten to tf.shape() so their dimensions can be None: "
            + "; ".join(r.describe() for r in rewrites)
        )
    entry = FunctionPlan(
        action=action,
        params=params,
        reasons=tuple(reasons) + tuple(f"unsafe: {w}" for w in warnings),
        blockers=tuple(decision.blockers),
        safety="unsafe" if warnings else "safe",
        warnings=tuple(warnings),
        tried=tuple(r.info.name for r in tried) if action == "signature" else (),
        shape_rewrites=rewrites,
        call_sites=call_sites,
        guarded=guarded,
        **base,
    )
    entry = pair(entry, record, site, observed, decision, shapes, stage.facts)
    return with_findings(entry, record, site, observed), lines

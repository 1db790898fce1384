"""The entry points: a profile (or one record) plus current source text -> plans.

Checks come first, in the order a user would want them explained: source available,
function still there, unchanged since profiling, not already signed, retraced at all;
only then are its parameters analysed and the action decided.
"""

from __future__ import annotations

from collections.abc import Mapping

from autosig.hashing import source_hash_from_file_text
from autosig.infer.decision import decide_action, traced_once
from autosig.infer.findings import function_findings
from autosig.infer.library import library_plan
from autosig.infer.options import InferOptions
from autosig.infer.params import analyze_param
from autosig.infer.shape_policy import decide_shapes
from autosig.infer.source import Source
from autosig.infer.tensorize import decide_python_params
from autosig.plan import FunctionPlan, ParamPlan, Plan
from autosig.profile.format import FunctionRecord, Profile
from autosig.project_modules import ProjectModules

STALE_REASON = "changed since it was profiled (re-run autosig profile)"
SIGNED_REASON = "already has an input_signature"


def infer_plan(
    profile: Profile, sources: Mapping[str, str], options: InferOptions | None = None
) -> Plan:
    """A plan for every profiled function whose file is in ``sources`` (path -> text).

    Library functions (not editable) are always planned, as "none" with advice, so the
    report can show them.
    """
    options = options or InferOptions()
    parsed: dict[str, Source] = {}
    modules: dict[str, ProjectModules | None] = {}
    """Per file: the project modules its functions call into, parsed once for all of them."""
    plan = Plan()
    for record in profile.functions:
        if not record.editable:
            plan.functions.append(library_plan(record, options))
            continue
        if record.path is None or record.path not in sources:
            continue
        source = parsed.get(record.path)
        if source is None:
            source = parsed[record.path] = Source.parse(sources[record.path], record.path)
            modules[record.path] = _project_modules(options, record.path)
        plan.functions.append(_plan_function(record, source, options, modules[record.path]))
    return plan


def infer_function(
    record: FunctionRecord, source_text: str | None, options: InferOptions
) -> FunctionPlan:
    """The plan of one function given the current text of its file (None: not available)."""
    if not record.editable:
        return library_plan(record, options)
    source = None if source_text is None else Source.parse(source_text, record.path or "")
    return _plan_function(record, source, options, _project_modules(options, record.path))


def _project_modules(options: InferOptions, path: str | None) -> ProjectModules | None:
    """Where a file's imported project modules are found: beside it, above it, the root."""
    if options.root is None or not path:
        return None
    return ProjectModules.around(options.root / path, options.root)


def _plan_function(
    record: FunctionRecord,
    source: Source | None,
    options: InferOptions,
    modules: ProjectModules | None,
) -> FunctionPlan:
    base = {
        "path": record.path or "",
        "qualname": record.qualname,
        "line": record.line,
        "calls": record.calls,
        "traces": record.traces,
    }
    where = record.path or "<unknown file>"
    if source is None:
        return FunctionPlan(
            action="none", reasons=(f"the source of {where} is not available",), **base
        )
    if source.error is not None:
        return FunctionPlan(action="none", reasons=(f"{where} {source.error}",), **base)
    site = source.locate(record.qualname, record.line)
    if site is None:
        return FunctionPlan(
            action="none",
            reasons=(
                f"no tf.function named {record.qualname} found in {where} "
                "(moved, renamed or no longer a tf.function? re-run autosig profile)",
            ),
            **base,
        )
    base["line"] = site.site.line
    first, last = source.lines_of(site)
    if (
        record.source_sha256
        and source_hash_from_file_text(source.text, first, last) != record.source_sha256
    ):
        return FunctionPlan(action="none", reasons=(STALE_REASON,), stale=True, **base)
    if site.site.has_input_signature:
        return FunctionPlan(action="none", reasons=(SIGNED_REASON,), **base)

    results = [analyze_param(record, info, options) for info in record.params]
    once = traced_once(record)
    if record.calls <= 1 or once is not None:
        reason = "called once; nothing to fix" if record.calls <= 1 else str(once)
        params = tuple(ParamPlan(r.info.name, None, r.evidence) for r in results)
        return FunctionPlan(action="none", params=params, reasons=(reason,), **base)

    decide_python_params(source, site, results, modules=modules)
    policies = {r.info.name: r.relax for r in results}
    shapes = decide_shapes(source, site, record, results, policies, modules)
    action, reasons, signed = decide_action(record, site, results, shapes)
    params = tuple(
        ParamPlan(r.info.name, r.spec if r.info.name in signed else None, r.evidence)
        for r in results
    )
    warnings: list[str] = []
    if action == "signature":
        warnings.extend(shapes.warnings)
        if shapes.relaxed:
            reasons.append(
                "None where no static read was found (batch, method or short-profile "
                f"dimensions that never varied): {', '.join(shapes.relaxed)}"
            )
    if action != "none" and shapes.random_reason:
        warnings.append(shapes.random_reason)
    findings = function_findings(record, site, source, results, action, reasons)
    return FunctionPlan(
        action=action,
        params=params,
        reasons=tuple(reasons) + tuple(f"unsafe: {w}" for w in warnings),
        findings=tuple(findings),
        safety="unsafe" if warnings else "safe",
        warnings=tuple(warnings),
        **base,
    )

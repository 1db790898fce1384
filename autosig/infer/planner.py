"""From a function's recorded calls and its current source to its plan: the entry points.

``infer_plan`` (every profiled function of a profile) and ``infer_function`` (one).
Checks come first, in the order a user would want them explained: source available,
function still there, unchanged since profiling, not already signed; library
functions (not editable) get advice from their observations (``findings``). A function
found in its source goes through the stages of ``stages``: observations, Python values,
dimensions, action, findings, each taking what the one before it made.

What ``fix`` applies on top of this plan (``optimizer.build``, suppressions, the
selected codes) is ``planning.plan_fixes``.
"""

from __future__ import annotations

from collections.abc import Mapping

from autosig.infer.findings import library_plan
from autosig.infer.observations import InferOptions, observe
from autosig.infer.plan import FunctionPlan, Plan
from autosig.infer.stages import plan_function
from autosig.profile.format import FunctionRecord, Profile
from autosig.source.discover import Source
from autosig.source.project_modules import ProjectModules


def infer_plan(
    profile: Profile,
    sources: Mapping[str, str],
    options: InferOptions | None = None,
    parsed: dict[str, Source] | None = None,
) -> Plan:
    """A plan for every profiled function whose file is in ``sources`` (path -> text).

    Library functions (not editable) are always planned, as "none" with advice, so the
    report can show them. ``parsed``: the files' parses (path -> Source), shared with
    the later steps of ``planning.plan_fixes``; filled here.
    """
    options = options or InferOptions()
    parsed = {} if parsed is None else parsed
    modules: dict[str, ProjectModules | None] = {}
    """Per file: the project modules its functions call into, parsed once for all of them."""
    plan = Plan()
    for record in profile.functions:
        if not record.editable:
            observed = observe(record, options)
            plan.functions.append(library_plan(record, observed))
            continue
        if record.path is None or record.path not in sources:
            continue
        source = parsed.get(record.path)
        if source is None:
            source = parsed[record.path] = Source.parse(sources[record.path], record.path)
            modules[record.path] = ProjectModules.of_profiled(options.root, record.path)
        plan.functions.append(plan_function(record, source, options, modules[record.path]))
    return plan


def infer_function(
    record: FunctionRecord, source_text: str | None, options: InferOptions
) -> FunctionPlan:
    """The plan of one function given the current text of its file (None: not available)."""
    if not record.editable:
        observed = observe(record, options)
        return library_plan(record, observed)
    source = None if source_text is None else Source.parse(source_text, record.path or "")
    modules = ProjectModules.of_profiled(options.root, record.path)
    return plan_function(record, source, options, modules)

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

from autosig.infer.observations import InferOptions
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
        path = record.path or ""
        text = sources.get(path)
        if record.editable and (record.path is None or text is None):
            continue
        source = parsed.get(path) if text is not None else None
        if text is not None and source is None:
            source = parsed[path] = Source.parse(text, path)
            modules[path] = ProjectModules.of_profiled(options.root, record.path)
        plan.functions.append(plan_function(record, source, options, modules.get(path)))
    return plan


def infer_function(
    record: FunctionRecord, source_text: str | None, options: InferOptions
) -> FunctionPlan:
    """The plan of one function given the current text of its file (None: not available)."""
    source = None if source_text is None else Source.parse(source_text, record.path or "")
    modules = ProjectModules.of_profiled(options.root, record.path)
    return plan_function(record, source, options, modules)

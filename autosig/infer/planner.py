"""From a function's recorded calls and its current source to its plan: the entry points.

``infer_plan`` (every profiled function of a profile) and ``infer_function`` (one).
Checks come first, in the order a user would want them explained: source available,
function still there, unchanged since profiling, not already signed; library
functions (not editable) get advice from their observations (``findings``). A function
found in its source goes through the stages of ``stages``: Python values, dimensions,
action, findings, each taking what the one before it made, after the first stage
(``observed.observe``: the record read once), which every function gets.

``infer_plan``'s plan includes what ``fix`` does about variables created on the first
call (``build_first``) and, as every plan, the ``# autosig: ignore`` comments
(``findings.honour_comments``); ``planning`` holds what the commands apply on top
(the selected codes).
"""

from __future__ import annotations

from collections.abc import Mapping

from autosig.infer.build_first import with_build_first
from autosig.infer.observations import InferOptions
from autosig.infer.observed import observe
from autosig.infer.plan import FunctionPlan, Plan
from autosig.infer.stages import plan_function
from autosig.profile.format import FunctionRecord, Profile
from autosig.source.discover import Source
from autosig.source.project_modules import ProjectModules


def infer_plan(
    profile: Profile, sources: Mapping[str, str], options: InferOptions | None = None
) -> Plan:
    """A plan for every profiled function whose file is in ``sources`` (path -> text).

    Library functions (not editable) are always planned, as "none" with advice, so the
    report can show them. Each file is parsed once, and its project modules found
    once, for all its functions: every stage reads that one parse, and each function
    is found in it once (``Source.find``: its site and lines). After each
    function's stages, what fix does about variables created on its first call
    (``build_first``: the profile says which TensorFlow recorded it).
    """
    options = options or InferOptions()
    parsed: dict[str, Source] = {}
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
            modules[path] = ProjectModules.of_profiled(options.root, record.path)
            source = parsed[path] = Source.parse(text, path)
        located = source.find(record.qualname, record.line) if source is not None else None
        observed = observe(record, options)  # the first stage, for every function
        entry = plan_function(record, observed, source, located, options, modules.get(path))
        if source is not None:  # variables created on the first call: which TF recorded it?
            site = located.site if located is not None else None
            first_call = observed.first_call_variables
            entry = with_build_first(
                entry, record, source, site, first_call, profile.tensorflow_version
            )
        plan.functions.append(entry)
    return plan


def infer_function(
    record: FunctionRecord, source_text: str | None, options: InferOptions
) -> FunctionPlan:
    """The plan of one function given the current text of its file (None: not available).

    With no profile to say which TensorFlow recorded it, no ``optimizer.build`` is
    planned (``infer_plan`` plans it).
    """
    modules = ProjectModules.of_profiled(options.root, record.path)
    source = None if source_text is None else Source.parse(source_text, record.path or "")
    located = source.find(record.qualname, record.line) if source is not None else None
    return plan_function(record, observe(record, options), source, located, options, modules)

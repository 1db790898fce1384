"""Retraces from variable creation on the first call, and the optimizer build that removes them.

TensorFlow traces a function again, on the same call, when its first trace created
variables (a Keras 3 optimizer makes its slots on the first ``apply_gradients``). The
profile shows it as two trace events of one tf.function object for the same call and
the same signature, with no new object in the arguments (``autosig explain`` words
it "traced again on the same call"). For such a function the plan (a stage of
``infer.stages.plan_function``, after the action is chosen, shared by ``fix``,
``explain`` and ``verify``) says whether ``autosig fix`` can build the models and the
optimizer first (``autosig.analysis.model_build``, ``autosig.analysis.optimizer_build``)
and why not otherwise. Pure: the profile's JSON and the parsed source, no TensorFlow.
"""

from __future__ import annotations

import dataclasses
import re

import libcst as cst

from autosig.analysis.model_build import ModelInput, plan_model_build, with_edits
from autosig.analysis.optimizer_build import NoBuild, applies_gradients, plan_optimizer_build
from autosig.infer.plan import BuildFirst, FunctionPlan, ModelBuild
from autosig.profile.format import FunctionRecord
from autosig.source.discover import FunctionSite, Source
from autosig.source.metadata import MetadataView

KERAS3_SINCE = (2, 16)
"""TensorFlow from which ``tf.keras`` is Keras 3 (whose optimizers build lazily)."""

VARIABLES_REASON = "variables created on the first call?"

DENSE_KINDS = frozenset({"tensor", "numpy", "variable"})
"""Argument kinds a model can be built from by its shape (not ragged or sparse ones:
zeros of their shape would take another path through the model)."""
"""The start of the generic advice the decision gives for identical arguments."""


def with_build_first(
    entry: FunctionPlan,
    record: FunctionRecord,
    source: Source,
    site: FunctionSite | None,
    first_call: tuple[int, bool],
    tensorflow: str | None,
) -> FunctionPlan:
    """``entry`` with what fix does about variables created on the first call, if any.

    A stage of the plan (``stages.plan_function``), run where the function was located:
    ``site`` is the function in ``source`` (None: not found), ``first_call`` what the
    traces show of it (``Observed.first_call_variables``), ``tensorflow`` the
    version that recorded the profile (Keras 3 optimizers build lazily). A function
    fix leaves as it is (changed since profiling, or an ignore comment covers its
    rewrite: ``suppressed_on``) gets none.
    """
    repeated, only = first_call
    if not repeated or entry.stale or entry.suppressed_on is not None:
        return entry
    if source.wrapper is None or site is None or site.function is None:
        return entry
    build = _plan_build(source, site, record, tensorflow)
    build = dataclasses.replace(build, retraces=repeated, only_cause=only)
    reasons = entry.reasons
    if only:
        reasons = tuple(
            f"retraced on its first call because it creates variables: {build.advice()}"
            if r.startswith("retraced with identical arguments") and VARIABLES_REASON in r
            else r
            for r in reasons
        )
    return dataclasses.replace(entry, build_first=build, reasons=reasons)


def _plan_build(
    source: Source, site: FunctionSite, record: FunctionRecord, tensorflow: str | None
) -> BuildFirst:
    assert source.wrapper is not None and site.function is not None
    version = _version(tensorflow)
    if version is None or version < KERAS3_SINCE:
        why = (
            f"recorded with TensorFlow {tensorflow}, whose tf.keras is Keras 2"
            if version is not None
            else "the profile does not say which TensorFlow recorded it"
        )
        return BuildFirst(0, False, why_not=why)
    view = MetadataView(source.wrapper)
    function = site.function
    optimizer = applies_gradients(function)
    models, view, function = _plan_models(source, site, record, view)
    found = plan_optimizer_build(view, function)
    if isinstance(found, NoBuild):
        if optimizer and models is not None and models.statements:
            models = dataclasses.replace(
                models,
                statements=(),
                unsafe=None,
                why_not=(
                    f"`{'`, `'.join(models.statements)}` alone leaves the optimizer's slots "
                    "to the first call, which then still traces twice"
                ),
            )
        return BuildFirst(0, False, why_not=found.reason, models=models, optimizer=optimizer)
    line = found.line
    if models is not None and models.statements:
        inserted = len(models.statements)
        line = line if line <= models.line else max(models.line, line - inserted)
    return BuildFirst(
        0,
        False,
        statement="; ".join(found.statements),
        line=line,
        models=models,
        optimizer=optimizer,
    )


def _plan_models(
    source: Source, site: FunctionSite, record: FunctionRecord, view: MetadataView
) -> tuple[ModelBuild | None, MetadataView, cst.FunctionDef | cst.Lambda]:
    """The models the first call builds and their builds, with the file as it reads once
    they are inserted (the optimizer's build goes after them)."""
    assert site.function is not None
    inputs = first_call_inputs(record)
    found = plan_model_build(view, site.function, inputs)
    as_data = tuple((name, i.shape, i.dtype) for name, i in sorted(inputs.items()))
    if found is None:
        return None, view, site.function
    if isinstance(found, NoBuild):
        return ModelBuild(as_data, why_not=found.reason), view, site.function
    models = ModelBuild(as_data, found.statements, found.line, found.unsafe)
    built = Source.parse(with_edits(view.module, found.edits).code, site.site.path)
    again = built.locate(site.site.qualname, site.site.line + len(found.statements))
    if built.wrapper is None or again is None or again.function is None:
        return models, view, site.function
    return models, MetadataView(built.wrapper), again.function


def first_call_inputs(record: FunctionRecord) -> dict[str, ModelInput]:
    """Each tensor parameter's shape and dtype on the call traced twice (the first call,
    whose trace built the variables)."""
    for before, event in zip(record.trace_events, record.trace_events[1:], strict=False):
        if event.call == before.call and event.signature is not None:
            if event.signature >= len(record.signatures):
                return {}
            args = record.signatures[event.signature].args
            return {
                name: ModelInput(tuple(value["shape"]), value["dtype"])
                for name, value in args.items()
                if value.get("kind") in DENSE_KINDS
                and isinstance(value.get("shape"), list)
                and all(isinstance(d, int) for d in value["shape"])
                and isinstance(value.get("dtype"), str)
            }
    return {}


def _version(text: str | None) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None

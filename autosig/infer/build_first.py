"""Retraces from variable creation on the first call, and the optimizer build that removes them.

TensorFlow traces a function again, on the same call, when its first trace created
variables (a Keras 3 optimizer makes its slots on the first ``apply_gradients``). The
profile shows it as two trace events of one tf.function object for the same call and
the same signature, with no new object in the arguments (``autosig explain`` words
it "traced again on the same call"). For such a function the plan ``fix`` applies
(``infer.planning.plan_fixes``, shared by ``explain`` and ``verify``) says whether
``autosig fix`` can build the optimizer first (``autosig.analysis.optimizer_build``) and
why not otherwise. Pure: the profile's JSON and the parsed source, no TensorFlow.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Mapping

from libcst.metadata import MetadataWrapper

from autosig.analysis.optimizer_build import NoBuild, plan_optimizer_build
from autosig.infer.plan import BuildFirst, FunctionPlan, Plan
from autosig.profile.format import FunctionRecord, Profile
from autosig.source.discover import Source
from autosig.source.metadata import MetadataView

KERAS3_SINCE = (2, 16)
"""TensorFlow from which ``tf.keras`` is Keras 3 (whose optimizers build lazily)."""

VARIABLES_REASON = "variables created on the first call?"
"""The start of the generic advice the decision gives for identical arguments."""


def variable_creation_retraces(record: FunctionRecord) -> tuple[int, bool]:
    """(traces that repeated a call because of variable creation, whether every retrace
    of the function is one of them)."""
    by_owner: dict[tuple[int, int], list] = defaultdict(list)
    for event in record.trace_events:
        by_owner[(event.process, event.instance)].append(event)
    repeated = others = 0
    for events in by_owner.values():
        for before, event in zip(events, events[1:], strict=False):
            if (
                event.call == before.call
                and event.signature is not None
                and event.signature == before.signature
                and not event.new_objects
            ):
                repeated += 1
            else:
                others += 1
    complete = len(record.trace_events) == record.traces
    return repeated, complete and others == 0


def with_builds(
    plan: Plan,
    profile: Profile,
    sources: Mapping[str, str],
    parsed: dict[str, Source] | None = None,
) -> Plan:
    """``plan`` with what fix does about variables created on the first call, for every
    function of ``profile`` whose profile shows them (``sources``: path -> text;
    ``parsed``: their parses so far, path -> Source, filled here)."""
    parsed = {} if parsed is None else parsed
    out: list[FunctionPlan] = []
    for entry in plan.functions:
        record = _record_of(profile, entry)
        text = sources.get(entry.path)
        if record is None or text is None or not variable_creation_retraces(record)[0]:
            out.append(entry)
            continue
        source = parsed.get(entry.path)
        if source is None:
            source = parsed[entry.path] = Source.parse(text, entry.path)
        out.append(with_build_first(entry, record, source, profile.tensorflow_version))
    return Plan(out)


def _record_of(profile: Profile, entry: FunctionPlan) -> FunctionRecord | None:
    """The record ``entry`` was planned from (the nearest line: the plan's is current)."""
    records = [
        r for r in profile.functions if r.path == entry.path and r.qualname == entry.qualname
    ]
    if not records:
        return None
    return min(records, key=lambda r: abs(r.line - entry.line))


def with_build_first(
    entry: FunctionPlan, record: FunctionRecord, source: Source, tensorflow: str | None
) -> FunctionPlan:
    """``entry`` with what fix does about variables created on the first call, if any."""
    repeated, only = variable_creation_retraces(record)
    if not repeated or entry.stale or source.wrapper is None:
        return entry
    site = source.locate(record.qualname, record.line)
    if site is None or site.function is None:
        return entry
    build = _plan_build(source.wrapper, site.function, tensorflow)
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


def _plan_build(wrapper: MetadataWrapper, function, tensorflow: str | None) -> BuildFirst:
    version = _version(tensorflow)
    if version is None or version < KERAS3_SINCE:
        why = (
            f"recorded with TensorFlow {tensorflow}, whose tf.keras is Keras 2"
            if version is not None
            else "the profile does not say which TensorFlow recorded it"
        )
        return BuildFirst(0, False, why_not=why)
    found = plan_optimizer_build(MetadataView(wrapper), function)
    if isinstance(found, NoBuild):
        return BuildFirst(0, False, why_not=found.reason)
    return BuildFirst(0, False, statement="; ".join(found.statements), line=found.line)


def _version(text: str | None) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None

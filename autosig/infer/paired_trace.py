"""A guarded relaxed trace paired with call-site tensors.

A function whose calls pass tensors beside Python numbers (an image, ``steps``,
``step_size``) can have neither fix alone: a guarded trace cannot take a Python value
(each value traces anew), and call-site tensors leave the tensors' shapes retracing
(``reduce_retracing`` then costs a trace of its own). Where the call sites will pass the
numbers as ``tf.constant`` of the dtype TensorFlow gave them (``call_site_plan``, safe
only where the number's dtype cannot follow a tensor's), the seeding trace takes their
scalar specs beside the tensors' relaxed specs: every call that passes tensors of those
dtypes reuses it, every other call (another dtype, a call site not rewritten, a Python
number) traces anew as the original would.

The seeding trace helps only calls from rewritten call sites: where one is not among
the files fixed, ``settle_pairs`` writes the plan without it (``FunctionPlan.unpaired``).

A module-level function's seed goes in its own module (``guarded_trace_placement``). A
method's does not go at the end of its class's ``__init__``: there it runs for every
instance before its caller configured it (review5): it builds a lazily built model of
another instance for the profiled shapes (the first real call then raises), keeps a
model attribute swapped after construction out of the seeded graph, and costs every
instance a trace. It goes in the callers' files instead, right after the statement
making the instance of each recorded call, where nothing touches the instance before
that call (``analysis/instance_bindings.py``): the seed traces the instance the profile
saw called, in the state its first call would trace, and instances made elsewhere trace
as before. ``settle_pairs`` drops the pairing where a call site has no such binding.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection

from autosig.analysis.instance_bindings import Refused
from autosig.infer.action import Decision
from autosig.infer.dimensions import ShapeDecision
from autosig.infer.guarded_trace import GuardedFacts, choose, trace_reason
from autosig.infer.observations import ParamResult
from autosig.infer.observed import Observed
from autosig.infer.plan import FunctionPlan, ParamPlan, Plan, Unpaired, sites_text
from autosig.infer.specs import TensorSpecNode
from autosig.profile.format import FunctionRecord
from autosig.source.discover import FunctionSite


def pair(
    entry: FunctionPlan,
    record: FunctionRecord,
    site: FunctionSite,
    observed: Observed,
    decision: Decision,
    shapes: ShapeDecision,
    facts: GuardedFacts | None,
) -> FunctionPlan:
    """``entry`` with a guarded trace whose specs take the call sites' tensors, where
    that is safe and possible; else ``entry`` unchanged. ``facts``: what the guarded
    trace's first choice read (None: the guarded trace is off, or no signature)."""
    plan = entry.call_sites
    results = observed.results
    if (
        facts is None
        or plan is None
        or entry.action == "guarded_trace"
        or entry.safety != "safe"
        or decision.action != "signature"
        or not shapes.shape_varies  # the call-site tensors alone leave one trace
    ):
        return entry
    tensorized = {p.name: p.dtype for p in plan.params}
    signed = [r for r in results if r.info.name in decision.signed]
    if not any(r.info.name in tensorized for r in signed):
        return entry
    unfit = next(
        (
            r
            for r in signed
            if r.leaf.python is not None and not _same_scalar(r, tensorized.get(r.info.name))
        ),
        None,
    )
    why = "" if unfit is None else _unfit_reason(unfit, tensorized.get(unfit.info.name))
    choice = None
    if unfit is None:
        choice = choose(
            facts, record, site, decision, shapes, frozenset(tensorized), record.is_method
        )
    if choice is None or choice.guarded is None or choice.unsafe:
        # the plan without the pair says why the pair was refused: its own reason names
        # what the call-site tensors settle (review7: "`steps` is a Python value")
        why = why or (choice.refusal if choice is not None else "")
        return (
            dataclasses.replace(entry, reasons=(*entry.reasons, f"{REFUSED}: {why}"))
            if why
            else entry
        )
    names = ", ".join(f"`{name}`" for name in tensorized)
    reasons = [
        f"{trace_reason(choice)}, its scalar specs for {names}, which the call sites "
        "pass as tensors: calls that fit reuse it, every other call (a Python number from "
        "a call site not rewritten, another dtype) traces as the original would (nothing "
        "rejected or cast)",
        *(r for r in entry.reasons if r.startswith("call sites pass ")),
    ]
    params = tuple(
        ParamPlan(r.info.name, choice.specs.get(r.info.name), r.evidence)
        if r.info.name in decision.signed
        else ParamPlan(r.info.name, None, r.evidence)
        for r in results
    )
    unpaired = Unpaired(entry.action, entry.params, entry.reasons, entry.safety, entry.warnings)
    return dataclasses.replace(
        entry,
        action="guarded_trace",
        params=params,
        reasons=tuple(reasons),
        guarded=choice.guarded,
        unpaired=unpaired,
    )


REFUSED = "no guarded relaxed trace with the call sites' tensors"


def _unfit_reason(r: ParamResult, dtype: str | None) -> str:
    name = r.info.name
    if dtype is None:
        return (
            f"`{name}` stays a Python value at the call sites, and a call passing one "
            "does not fit a trace seeded with a tensor for it"
        )
    return f"the call sites pass `{name}` as a {dtype} tensor, which its spec does not take"


def _same_scalar(r: ParamResult, dtype: str | None) -> bool:
    """``r`` (a Python number) is passed as a tensor whose dtype its scalar spec has."""
    return (
        dtype is not None
        and isinstance(r.spec, TensorSpecNode)
        and r.spec.shape == ()
        and r.spec.dtype == dtype
    )


def settle_pairs(
    plan: Plan,
    fixed: Collection[str],
    unpassed: Callable[[FunctionPlan], Refused | None] | None = None,
) -> Plan:
    """``plan`` for a run fixing the files ``fixed`` (profile paths): a paired guarded
    trace whose call sites are not all among them, or (``unpassed``: the call-site
    rewrite's dry run, ``rewrite.call_sites.unpassed_tensors``) where some site would
    not pass every planned tensor, falls back to its plan without it."""
    out = []
    for entry in plan.functions:
        unpaired, sites = entry.unpaired, entry.call_sites
        if unpaired is not None and sites is not None:
            outside = [s for s in sites.sites if s.path not in fixed]
            why, changes = None, False  # changes: a caller changes what the trace reads
            if outside:
                why = (
                    f"{REFUSED}: {sites_text(tuple(outside))} not among the files fixed "
                    "(fix them too)"
                )
            elif unpassed is not None:
                problem = unpassed(entry)
                if problem is not None:
                    why, changes = f"{REFUSED}: {problem.why}", problem.changes
            if why is not None:
                entry = dataclasses.replace(
                    entry,
                    action=unpaired.action,
                    params=unpaired.params,
                    reasons=(*unpaired.reasons, why),
                    safety="unsafe" if changes else unpaired.safety,
                    warnings=(*unpaired.warnings, why) if changes else unpaired.warnings,
                    guarded=None,
                    unpaired=None,
                )
        out.append(entry)
    return Plan(out)

"""The plan ``autosig fix --profile`` applies: inference's plan, as the user's comments
and selection allow.

``fix``, ``explain`` and ``verify`` all take their plan from here, so a suppression
comment or a ``--select`` means the same in each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from autosig.infer.build_first import with_builds
from autosig.infer.observations import InferOptions
from autosig.infer.plan import FunctionPlan, Plan
from autosig.infer.planner import infer_plan
from autosig.profile.format import Profile
from autosig.source.codes import selected_codes
from autosig.source.discover import Source


def plan_fixes(profile: Profile, sources: Mapping[str, str], options: InferOptions) -> Plan:
    """What ``fix --profile`` does to each profiled function in ``sources`` (profile path
    -> current text): inference's plan, with ``optimizer.build(...)`` where the first
    call created variables, and ``# autosig: ignore`` comments honoured.

    Each file is parsed once (for this text): ``infer_plan`` parses it and decides the
    suppressions (``suppressed_on``), ``with_builds`` reads the same parses.
    """
    parsed: dict[str, Source] = {}
    plan = infer_plan(profile, sources, options, parsed)
    plan = with_builds(plan, profile, parsed)
    return honour_plan_suppressions(plan)


def selected_profile_codes(
    select: Iterable[str] | None, ignore: Iterable[str] | None = None
) -> set[str]:
    """The profile codes (AS2xx) ``select`` and ``ignore`` leave: fix applies a profile's
    plan only when there is one."""
    return {code for code in selected_codes(select, ignore) if code.startswith("AS2")}


def keep_codes(plan: Plan, profile_codes: set[str]) -> Plan | None:
    """``plan`` reporting only the findings of ``profile_codes``; None (no plan is applied)
    when that set is empty."""
    if not profile_codes:
        return None
    return Plan(
        [
            replace(entry, findings=tuple(f for f in entry.findings if f.code in profile_codes))
            for entry in plan.functions
        ]
    )


def honour_plan_suppressions(plan: Plan) -> Plan:
    """``plan`` with every function an ignore comment covers (``suppressed_on``, decided
    with the findings' suppression: ``findings.honour_comments``) turned into "leave it
    as it is", so a suppression means the same in ``fix --profile`` and ``explain`` as
    in ``check``."""
    return Plan(
        [
            replace(
                entry,
                action="none",
                params=(),
                findings=(),
                stale=False,
                build_first=None,
                reasons=(f"suppressed by '# autosig: ignore' on line {entry.suppressed_on}",),
                blockers=(),
                call_sites=None,  # its callers are left as they are too
            )
            if entry.suppressed_on is not None
            else entry
            for entry in plan.functions
        ]
    )


PROFILE_CODES_OFF = "the profile rules (AS2xx) are not selected in the config"
STATIC_ONLY = "only the static fix AS107 applies"


def as_fix_applies(
    entry: FunctionPlan, *, profile_codes: bool, static_reduce: bool
) -> FunctionPlan:
    """``entry`` as ``fix --profile`` carries it out, for ``explain`` to tell.

    ``profile_codes``: some AS2xx code is selected, so fix applies the plan at all;
    ``static_reduce``: the fix engine's dry run gave the function ``reduce_retracing=True``
    by the static rule AS107 (a stale profile, profile codes off ...): then that is
    fix's whole outcome for it.
    """
    planned = entry.action != "none" or entry.call_sites is not None
    if not profile_codes and planned:
        entry = replace(
            entry, action="none", reasons=(PROFILE_CODES_OFF,), blockers=(), call_sites=None
        )
    if static_reduce and entry.action == "none" and entry.call_sites is None:
        entry = replace(entry, action="reduce_retracing", reasons=(*entry.reasons, STATIC_ONLY))
    return entry

"""The plan ``autosig fix --profile`` applies: inference's plan, as the user's comments
and selection allow.

``fix``, ``explain`` and ``verify`` all take their plan from here, so a suppression
comment or a ``--select`` means the same in each.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from autosig.infer.observations import InferOptions
from autosig.infer.plan import FunctionPlan, Plan
from autosig.infer.planner import infer_plan
from autosig.profile.format import Profile
from autosig.source.codes import selected_codes


def plan_fixes(profile: Profile, sources: Mapping[str, str], options: InferOptions) -> Plan:
    """What ``fix --profile`` does to each profiled function in ``sources`` (profile path
    -> current text): inference's plan (``planner.infer_plan``: each file parsed once,
    with ``optimizer.build(...)`` where the first call created variables and the
    ``# autosig: ignore`` comments honoured, both decided where each function's plan
    is made). The commands then keep the findings of the selected codes
    (``keep_codes``)."""
    return infer_plan(profile, sources, options)


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

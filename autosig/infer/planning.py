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
from autosig.source.suppress import Suppressions


def plan_fixes(profile: Profile, sources: Mapping[str, str], options: InferOptions) -> Plan:
    """What ``fix --profile`` does to each profiled function in ``sources`` (profile path
    -> current text): inference's plan, with ``optimizer.build(...)`` where the first
    call created variables, and ``# autosig: ignore`` comments honoured.

    Each file is parsed once (for this text): the three steps share ``parsed``.
    """
    parsed: dict[str, Source] = {}
    plan = infer_plan(profile, sources, options, parsed)
    plan = with_builds(plan, profile, sources, parsed)
    return honour_plan_suppressions(plan, sources, parsed)


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


PLAN_CODE = "AS201"
"""The code a profile-planned rewrite (signature, reduce_retracing) answers to."""


def suppressing_line(
    text: str, path: str, qualname: str, line: int, parsed: dict[str, Source] | None = None
) -> int | None:
    """The def/decorator line whose ignore comment covers ``qualname``'s profile fix.

    A bare ``# autosig: ignore`` or one naming AS201 (or a prefix such as AS2) on the
    ``def`` line, a decorator line or the ``tf.function(...)`` call silences the
    rewrite that ``fix --profile`` would make, exactly as ``check`` and static ``fix``
    honour it. None when nothing covers it (or the file does not parse).
    ``parsed``: parses of this version of the files (path -> Source) to read and fill.
    """
    if "autosig" not in text:
        return None
    try:
        suppressions = Suppressions.from_text(text)
    except Exception:  # noqa: BLE001 - unreadable comments suppress nothing
        return None
    if not suppressions:
        return None
    source = parsed.get(path) if parsed is not None else None
    if source is None:
        source = Source.parse(text, path)
        if parsed is not None:
            parsed[path] = source
    site = source.locate(qualname, line)
    lines = {line, *(source.site_lines(site) if site is not None else ())}
    for candidate in sorted(lines):
        if suppressions.is_suppressed(PLAN_CODE, [candidate]):
            return candidate
    return None


def honour_plan_suppressions(
    plan: Plan, sources: Mapping[str, str], parsed: dict[str, Source] | None = None
) -> Plan:
    """``plan`` with every suppressed function's entry turned into "leave it as it is".

    ``sources`` maps the plan's paths to the current text. Used wherever a plan is
    consumed (``fix --profile``, ``explain``), so a suppression means the same there
    as in ``check``. ``parsed``: the files' parses so far (path -> Source).
    """
    parsed = {} if parsed is None else parsed
    out = []
    for entry in plan.functions:
        text = sources.get(entry.path)
        where = (
            suppressing_line(text, entry.path, entry.qualname, entry.line, parsed)
            if text is not None
            else None
        )
        if where is None:
            out.append(entry)
            continue
        out.append(
            replace(
                entry,
                action="none",
                params=(),
                findings=(),
                stale=False,
                build_first=None,
                reasons=(f"suppressed by '# autosig: ignore' on line {where}",),
                blockers=(),
                call_sites=None,  # its callers are left as they are too
            )
        )
    return Plan(out)


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

"""The decision for one function: input_signature, reduce_retracing or nothing, with reasons.

A signature covers the positional parameters up to the last one that must be in it;
any blocker among them (or a varying ``*args``/keyword-only parameter) turns the plan
into ``reduce_retracing`` and every blocker becomes a reason. Retraces a signature
cannot remove (one trace per instance or process, identical arguments) plan nothing.
"""

from __future__ import annotations

from collections import Counter

from autosig.discover import FunctionSite
from autosig.infer.params import ParamResult
from autosig.infer.shape_policy import ShapeDecision
from autosig.infer.wording import plural
from autosig.plan import Action
from autosig.profile.format import FunctionRecord

ONCE_REASON = "traced once; nothing to fix"


def traced_once(record: FunctionRecord) -> str | None:
    """Why no retrace happened, or None when some tf.function object traced twice.

    Traces add up over the instances of a class (each has its own tf.function) and over
    the processes of a merged profile (each traces afresh): a signature cannot bring
    those below one per instance and process.
    """
    if record.traces <= 1:
        return ONCE_REASON
    events = record.trace_events
    if events and len(events) == record.traces:
        per_owner = Counter((e.process, e.instance) for e in events)
        if max(per_owner.values()) > 1:
            return None
        owners = len(per_owner)
    elif record.traces <= max(record.instances, record.processes, 1):
        owners = record.traces
    else:
        return None
    processes = len({e.process for e in events}) if events else record.processes
    what = "per process" if processes > 1 and owners == processes else "per instance"
    if processes > 1 and owners > processes:
        what = "per instance and process"
    return f"traced once {what} ({owners} tf.function objects); nothing to fix"


NO_HELP_REASON = (
    "reduce_retracing=True would not help: only Python values or objects vary, and each "
    "value or object is a trace either way"
)


def decide_action(
    record: FunctionRecord,
    site: FunctionSite,
    results: list[ParamResult],
    shapes: ShapeDecision,
) -> tuple[Action, list[str], set[str]]:
    """(action, reasons, names of the parameters that go in the signature)."""
    if shapes.blockers:
        return "none", list(dict.fromkeys(shapes.blockers)), set()
    reasons: list[str] = []
    positional = [r for r in results if r.info.kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    others = [r for r in results if r not in positional]
    if not record.params and record.signatures:
        reasons.append("the parameters of the function are unknown (no Python signature)")
    if not record.signatures:
        reasons.append("no call signature was recorded")
    needed_at = [i for i, r in enumerate(positional) if r.needed]
    last = needed_at[-1] if needed_at else -1
    signed = positional[: last + 1]
    blockers = [r.blocker for r in signed if r.blocker]
    blockers += [
        r.blocker
        for r in others
        if r.blocker and (r.needed or r.info.kind in ("VAR_POSITIONAL", "VAR_KEYWORD"))
    ]
    for r in signed:
        if r.blocker is None and r.spec is None:
            blockers.append(f"`{r.info.name}` has no spec")
    star = next((r.info.name for r in others if r.info.kind == "VAR_POSITIONAL"), None)
    if star is not None:
        # Measured (TF 2.21): with *args, signed parameters become positional-only.
        for r in signed:
            if any(sig.passed.get(r.info.name) == "keyword" for sig in record.signatures):
                blockers.append(
                    f"`{r.info.name}` is passed by keyword, but next to `*{star}` an "
                    "input_signature makes it positional-only"
                )
    reasons.extend(b for b in blockers if b)
    identical = len(record.signatures) == 1 and not record.signatures_dropped
    if identical and not any(r.leaf.object_type for r in results):
        return (
            "none",
            [
                f"retraced with identical arguments ({record.traces} traces, one call signature): "
                "a signature cannot help; variables created on the first call? "
                "(build optimizers and layers before the first call)"
            ],
            set(),
        )
    if reasons:
        if site.site.has_reduce_retracing:
            return "none", ["already has reduce_retracing=True", *reasons], set()
        if not shapes.shape_varies:
            return "none", [*reasons, NO_HELP_REASON], set()
        unsafe_reads = shapes.reduce_retracing_blockers
        if unsafe_reads:
            return "none", [*reasons, *unsafe_reads], set()
        return "reduce_retracing", reasons, set()
    names = {r.info.name for r in signed}
    out = [
        f"input_signature covers {plural(len(signed), 'parameter')} from {plural(record.calls, 'call')}"
    ]
    for r in positional[last + 1 :] + others:
        out.append(f"`{r.info.name}` left out: {r.evidence}")
    if record.signatures_dropped:
        out.append(
            f"{record.signatures_dropped} call signatures were not recorded: every tensor "
            "dimension is left free so unseen shapes still fit (verify before trusting it)"
        )
    return "signature", out, names

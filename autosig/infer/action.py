"""The action for one function: an ``input_signature``, ``reduce_retracing=True``, or nothing.

A signature covers the positional parameters up to the last one that must be in it
(each with the spec the earlier steps left); a parameter that blocks it (a Python value
the code needs, an object, a dtype conflict, a keyword next to ``*args``) turns the
action into ``reduce_retracing=True``, but only where a tensor shape varied and no
static read of a relaxed dimension was found; otherwise nothing, with the reasons
(identical arguments, only Python values or objects varying, already relaxed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autosig.infer.dimensions import ShapeDecision
from autosig.infer.domain_evidence import asked as relaxing_policies
from autosig.infer.observations import ParamResult
from autosig.infer.plan import Action, Blocker
from autosig.profile.format import FunctionRecord
from autosig.source.discover import FunctionSite
from autosig.text import plural

NO_HELP_REASON = (
    "reduce_retracing=True would not help: only Python values or objects vary, and each "
    "value or object is a trace either way"
)


@dataclass
class Decision:
    """The action for one function, its reasons, and which parameters it signs."""

    action: Action
    reasons: list[str]
    blockers: list[Blocker] = field(default_factory=list)
    """The reasons that name a parameter blocking a signature (each is in ``reasons``)."""
    signed: set[str] = field(default_factory=set)
    """Names of the parameters that go in the signature (with ``narrowing``: those a
    signature would cover, had it not been refused for narrowing)."""
    narrowing: list[str] = field(default_factory=list)
    """Why a signature was refused: it would leave out a parameter the profile never saw
    passed (``infer.guarded_trace`` may seed a guarded trace instead)."""


COVERS = "input_signature covers "
"""How the signature's own first reason starts."""

MIN_CALLS_FOR_DEFAULTS = 8
"""Fewer calls than this: a short profile (``python_params`` widens the Python ints of
such a profile). No length shows a function's domain
(``domain_evidence``)."""


def _narrowing(
    record: FunctionRecord, left_out: list[ParamResult], asked: bool = False
) -> list[str]:
    """Why a signature would reject calls the original accepts: a parameter it leaves out
    (only ever its default in the profile) then takes its default and nothing else. No
    profile length shows that it is never passed; a shape policy the config sets for the
    function (``asked``) is the user asking for the signature."""
    if asked:
        return []
    out = []
    for r in left_out:
        if r.info.kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            star = "*" if r.info.kind == "VAR_POSITIONAL" else "**"
            what = f"`{star}{r.info.name}` was always empty"
        else:
            what = f"`{r.info.name}` was only ever its default"
        out.append(
            f"{what} in {plural(record.calls, 'call')}: an input_signature leaves it out and "
            "then rejects calls that pass it, which the original accepts (no profile shows "
            "it is never passed)"
        )
    return out


def decide_action(
    record: FunctionRecord,
    site: FunctionSite,
    results: list[ParamResult],
    shapes: ShapeDecision,
    known_domain: bool = False,
) -> Decision:
    """A signature, reduce_retracing or nothing for the function, and why.

    ``known_domain``: the caller knows the domain (``InferOptions.guarded_trace`` off):
    parameters never passed are left out of the signature without a word."""
    if shapes.blockers:
        conflicts = list(dict.fromkeys(shapes.blockers))
        return Decision("none", [b.reason for b in conflicts], conflicts)
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
    kept_out = [
        (r.info.name, "has no spec") for r in signed if r.blocker is None and r.spec is None
    ]
    """(parameter, why) where the signature itself keeps a parameter out."""
    star = next((r.info.name for r in others if r.info.kind == "VAR_POSITIONAL"), None)
    if star is not None:
        # Measured (TF 2.21): with *args, signed parameters become positional-only.
        kept_out += [
            (
                r.info.name,
                f"is passed by keyword, but next to `*{star}` an input_signature makes it "
                "positional-only",
            )
            for r in signed
            if any(sig.passed.get(r.info.name) == "keyword" for sig in record.signatures)
        ]
    narrowing: list[str] = []
    if not reasons and not blockers and not kept_out:
        asked = known_domain or bool(relaxing_policies(signed))
        narrowing = _narrowing(record, positional[last + 1 :] + others, asked)
    for name, why in kept_out:
        blockers.append(Blocker.stated(name, "parameter", f"`{name}`", why))
    reasons.extend(b.reason for b in blockers)
    reasons.extend(narrowing)
    identical = len(record.signatures) == 1 and not record.signatures_dropped
    if identical and not any(r.leaf.object_type for r in results):
        return Decision(
            "none",
            [
                f"retraced with identical arguments ({record.traces} traces, one call signature): "
                "a signature cannot help; variables created on the first call? "
                "(build optimizers and layers before the first call)"
            ],
        )
    if reasons:
        if site.site.has_reduce_retracing:
            return Decision("none", ["already has reduce_retracing=True", *reasons], blockers)
        if not shapes.shape_varies:
            return Decision("none", [*reasons, NO_HELP_REASON], blockers)
        unsafe_reads = shapes.reduce_retracing_blockers
        if unsafe_reads:
            return Decision("none", [*reasons, *unsafe_reads], blockers)
        if narrowing and not blockers:
            names = {r.info.name for r in signed}
            return Decision("reduce_retracing", reasons, blockers, names, narrowing)
        return Decision("reduce_retracing", reasons, blockers)
    out = [f"{COVERS}{plural(len(signed), 'parameter')} from {plural(record.calls, 'call')}"]
    for r in positional[last + 1 :] + others:
        out.append(f"`{r.info.name}` left out: {r.evidence}")
    if record.signatures_dropped:
        out.append(
            f"{record.signatures_dropped} call signatures were not recorded: every tensor "
            "dimension is left free so unseen shapes still fit (verify before trusting it)"
        )
    return Decision("signature", out, signed={r.info.name for r in signed})

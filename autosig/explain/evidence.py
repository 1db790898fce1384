"""The probe evidence of a function as ``explain`` lines. Pure: reads the profile only.

One line per tensor argument (its dimensions grouped by verdict, the first error and
``file:line`` of those fixed by the code or read), one per Python number (the dtype
TensorFlow gave it, whether a scalar spec reproduces the graph, what its values need),
one for stateful random ops, one for the probes themselves (how many, what was left out).
No times: the lines are the same from one run to the next.
"""

from __future__ import annotations

from collections.abc import Iterable

from autosig.profile.evidence import DimEvidence, NumberEvidence, ProbeEvidence, RandomEvidence
from autosig.profile.format import FunctionRecord
from autosig.text import plural

VERDICT_WORDS = {
    "free": "free",
    "bounded": "free where the code traces",
    "fixed": "fixed by the code",
    "read": "read",
    "unknown": "undecided",
}
MAX_DETAIL = 110


def _clip(text: str, limit: int = MAX_DETAIL) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _dims_line(param: str, dims: list[DimEvidence]) -> str:
    """``image: dims 0, 1 free; dim 2 fixed by the code (model.py:16: ...)``: dimensions
    with one verdict together, those fixed or read together only when one line explains
    them all."""
    parts = []
    for verdict in ("free", "bounded", "fixed", "read", "unknown"):
        chosen = [d for d in dims if d.verdict == verdict]
        groups: dict[tuple[str | None, str], list[DimEvidence]] = {}
        for d in chosen:
            shown = verdict in ("bounded", "fixed", "read")
            detail = (d.where, d.error or d.reason) if shown else (None, "")
            groups.setdefault(detail, []).append(d)
        for (where, why), members in groups.items():
            numbers = ", ".join(str(d.dim) for d in members)
            text = f"{'dims' if len(members) > 1 else 'dim'} {numbers} {VERDICT_WORDS[verdict]}"
            if why:
                text += f" ({where}: {_clip(why)})" if where else f" ({_clip(why)})"
            parts.append(text)
    return f"{param}: " + "; ".join(parts)


def _number_line(n: NumberEvidence) -> str:
    what = f"Python {n.type}"
    if n.dtype_from == "unused":
        text = f"{n.param}: {what}, not used by the graph (scalar specs of two dtypes give the same graph)"
    elif n.dtype and n.spec_matches:
        text = f"{n.param}: {what} -> {n.dtype} in the graph; {_a(n.dtype)} scalar spec gives the same graph"
    elif n.dtype:
        text = f"{n.param}: {what} -> {n.dtype} in the graph; {_clip(n.reason)}"
    elif n.dtype_from == "unknown" and n.reason == "not probed":
        text = f"{n.param}: {what}, not probed"
    else:
        where = f" at {n.where}" if n.where else ""
        text = f"{n.param}: {what}, no scalar spec gives the same graph{where}: {_clip(n.reason)}"
    values = []
    if n.needs_float64:
        values.append(
            f"float32 loses digits of the values seen (up to {n.float32_max_abs_error:.3g})"
        )
    if n.exceeds_int32:
        values.append("values seen beyond int32")
    if n.dtype_probes:
        values.append("traced with " + ", ".join(line.replace("`", "") for line in n.dtype_probes))
    if values:
        text += "; " + "; ".join(values)
    return text


def _a(word: str) -> str:
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def _random_line(random: RandomEvidence) -> str:
    steady = random.hidden + random.generator
    text = "stateful random ops: " + (
        ", ".join(steady) if steady else "none in the steady-state graph"
    )
    if random.generator and not random.hidden:
        text += " (tf.random.Generator: one stream for every trace)"
    if random.first_call_only:
        text += f"; {', '.join(random.first_call_only)} only in the first call's trace (weights built then)"
    return text


def _grouped(dims: Iterable[DimEvidence]) -> dict[str, list[DimEvidence]]:
    out: dict[str, list[DimEvidence]] = {}
    for d in dims:
        out.setdefault(d.param, []).append(d)
    for items in out.values():
        items.sort(key=lambda d: d.dim)
    return out


def evidence_lines(record: FunctionRecord) -> list[str]:
    """The ``probe:`` lines of ``explain`` for one function (none when not probed)."""
    evidence: ProbeEvidence | None = record.probe
    if evidence is None:
        return []
    lines = [_dims_line(param, dims) for param, dims in _grouped(evidence.dims).items()]
    lines.extend(_number_line(n) for n in evidence.numbers)
    if evidence.random is not None:
        lines.append(_random_line(evidence.random))
    what = f"{plural(evidence.probes, 'probe trace')} of the original code in {plural(evidence.rounds, 'round')}"
    if evidence.skipped:
        what += f"; not probed: {', '.join(evidence.skipped[:4])}{', ...' if len(evidence.skipped) > 4 else ''}"
    for failure in evidence.failures[:2]:
        what += f"; {_clip(failure, 90)}"
    lines.append(what)
    return lines

"""What the profile's probe traces prove for one dimension or one Python number.

``autosig profile`` traced the original code of each function that retraced once more
per candidate (``autosig/profile/probe/``, records in ``autosig/profile/evidence.py``):
a dimension relaxed to ``None`` or set to other sizes, a Python number as a scalar
tensor. This module turns one record into what the plan may do with it, and the words
the plan gives as its reason. ``probe_proofs`` reads a function's evidence once, for both
stages that use it (``python_params.py``: the numbers; ``dimensions.py``: the
dimensions).

Dimensions (``DimEvidence.verdict``):

- ``free``: the relaxed trace builds the same graph as every size probed: ``None``.
- ``bounded``: as free where the code traces; the sizes it rejects (a 3x3 valid
  convolution at size 1) fail when the op runs instead of when the code traces, so the
  signature rejects nothing the original accepts: ``None``.
- ``fixed`` (by the code): the original rejects every other size probed. A function
  keeps the size, safely (the signature rejects what the original rejects). A method's
  verdict is about the instance probed; another instance (another model wrapped) may
  take another size, and an ``input_signature`` is shared by every instance: ``None``
  when the relaxed trace builds (this instance's other sizes then fail when the op
  runs), else the size stays fixed and the fix is unsafe, as without evidence.
- ``read``: the graph depends on the size. A dimension that varied blocks any relaxed
  trace when the relaxed trace fails, and makes it unsafe when it builds (a graph that
  differs between sizes); not when the static analysis rewrites reads of the function
  to ``tf.shape()`` (the probes traced the code before that rewrite). One that never
  varied stays fixed, unsafe where today's rules call pinning it unsafe.

Numbers (``NumberEvidence``): a scalar spec of the dtype TensorFlow gave the number
reproduces the original graph (``spec_matches``): that dtype. No spec reproduces it:
the number stays a Python value, except an int the Python-value analysis widens to
int64 (integer arithmetic Python folded is exact in int64). ``unused``: the default.

What the evidence cannot show (sizes not probed, thresholds, values, other code paths)
is in the handoff of stage A; without a record (no probe: static ``fix``, version 1
profiles, probe budget 0) the planner's conservative rules apply unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from autosig.profile.evidence import DimEvidence, NumberEvidence, ProbeEvidence

MAX_ERROR = 90
"""Characters of TensorFlow's error quoted in a reason."""


@dataclass(frozen=True)
class DimProof:
    """What the probes allow for one dimension of one tensor argument."""

    evidence: DimEvidence
    relax: bool
    """The signature may have ``None`` there."""
    pin_safe: bool
    """Keeping the size rejects only sizes the original rejects too."""
    why: str
    """Why, in the words of the plan (after the dimension's label)."""
    tied: dict[tuple[str, int], str]
    """The dimensions probed together with it, (path, dimension) -> label (``x:1``)."""


def _clip(text: str, limit: int = MAX_ERROR) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _at(d: DimEvidence) -> str:
    """``model.py:12: ValueError: ...`` (or the verdict's reason) for a reason's brackets."""
    detail = _clip(d.error or d.reason) if (d.error or d.reason) else ""
    if d.where and detail:
        return f"{d.where}: {detail}"
    return d.where or detail


def _sizes(d: DimEvidence) -> str:
    shown = [str(d.size)] + ["None" if s is None else str(s) for s in d.probed]
    return ", ".join(dict.fromkeys(shown))


def _dim_proof(d: DimEvidence, method: bool) -> DimProof | None:
    """What the probes showed about one dimension; None: nothing (skipped, undecided):
    the planner's rules without evidence apply."""
    if d.verdict not in ("free", "bounded", "fixed", "read"):
        return None
    tied = {_key(label): label for label in d.tied}
    if d.verdict == "free":
        why = f"probe: free (traced at {_sizes(d)}: the same graph)"
        return DimProof(d, True, True, why, tied)
    if d.verdict == "bounded":
        return DimProof(
            d,
            True,
            True,
            f"probe: free where the code traces (traced at {_sizes(d)}); a size it rejects "
            f"({_at(d)}) fails when the op runs instead of when the code traces",
            tied,
        )
    if d.verdict == "fixed" and not method:
        return DimProof(
            d,
            False,
            True,
            f"probe: fixed by the code ({_at(d)}): the original rejects other sizes too",
            tied,
        )
    if d.verdict == "fixed" and d.relaxed_builds:
        return DimProof(
            d,
            True,
            True,
            f"probe: fixed by the code for the instance probed ({_at(d)}); another instance "
            "may take other sizes and a method's signature is every instance's, so None "
            "(the relaxed trace builds: this instance's other sizes fail when the op runs)",
            tied,
        )
    if d.verdict == "fixed":
        return DimProof(
            d,
            False,
            False,
            f"probe: fixed by the code for the instance probed ({_at(d)}), but the relaxed "
            "trace does not build: another instance may take other sizes",
            tied,
        )
    return DimProof(d, False, False, f"probe: read ({_at(d)})", tied)


def _key(label: str) -> tuple[str, int]:
    """``x[0]:1`` (a ``DimEvidence.label``) -> ``("x[0]", 1)``."""
    path, _, dim = label.rpartition(":")
    return path, int(dim)


# -- Python numbers ------------------------------------------------------------------


@dataclass(frozen=True)
class NumberProof:
    """What the probes allow for one Python number parameter."""

    evidence: NumberEvidence
    dtype: str | None
    """The scalar spec's dtype the evidence supports; None: keep it a Python value
    (unless the Python-value analysis widened an int to int64: see ``python_params``)."""
    why: str


def _number_proof(n: NumberEvidence) -> NumberProof | None:
    """What the probes showed about one Python number parameter; None: not probed."""
    if n.dtype_from == "unknown" and n.dtype is None and n.reason == "not probed":
        return None
    if n.dtype_from == "unused":
        return NumberProof(
            n, "", "probe: the graph does not use it (two dtypes give the same graph)"
        )
    if n.dtype and n.spec_matches:
        why = (
            f"probe: TensorFlow gave it {n.dtype} in the original graph, and a scalar "
            f"{n.dtype} spec gives the same graph"
        )
        return NumberProof(n, n.dtype, why)
    where = f" ({n.where})" if n.where else ""
    reason = _clip(n.reason) if n.reason else "no scalar spec gives the same graph"
    return NumberProof(n, None, f"probe: no scalar spec gives the original graph{where}: {reason}")


# -- one function's evidence, read once ----------------------------------------------


@dataclass(frozen=True)
class ProbeProofs:
    """What the probes prove for one function: every dimension and Python number they
    decided (one not in here: not probed, skipped or undecided; the planner's rules
    without evidence apply)."""

    dims: dict[tuple[str, int], DimProof]
    """(argument path, dimension) -> its proof."""
    numbers: dict[str, NumberProof]
    """Python number parameter -> its proof."""
    recorded_numbers: dict[str, NumberEvidence]
    """Python number parameter -> what the probe recorded of it, proven or not (the
    call-site plan reads which parameters its dtype followed)."""


def probe_proofs(evidence: ProbeEvidence | None, *, method: bool) -> ProbeProofs:
    """Read the probe evidence of a function once (None: no probe record: nothing
    proven). ``method``: the function is a method (a ``fixed`` verdict is about the
    instance probed)."""
    dims: dict[tuple[str, int], DimProof] = {}
    numbers: dict[str, NumberProof] = {}
    if evidence is None:
        return ProbeProofs(dims, numbers, {})
    first_dims: dict[tuple[str, int], DimEvidence] = {}
    for d in evidence.dims:  # the first record of a dimension counts (ProbeEvidence.dim)
        first_dims.setdefault(d.key, d)
    for key, d in first_dims.items():
        if (proof := _dim_proof(d, method)) is not None:
            dims[key] = proof
    first_numbers: dict[str, NumberEvidence] = {}
    for n in evidence.numbers:  # the first record of a number counts (ProbeEvidence.number)
        first_numbers.setdefault(n.param, n)
    for name, n in first_numbers.items():
        if (proof := _number_proof(n)) is not None:
            numbers[name] = proof
    return ProbeProofs(dims, numbers, first_numbers)

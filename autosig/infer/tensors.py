"""Tensor arguments (dense, NumPy, ragged, sparse): one spec loose enough for every call.

The dtype must be one; the shape is the common supertype of the observed shapes,
relaxed by the user's policy. The evidence says how many shapes were seen and which
dimensions varied, because that is what a reviewer checks before trusting a ``None``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from autosig.infer.leaf import Leaf
from autosig.infer.values import Observation, shape_of, tensor_dtype
from autosig.infer.wording import plural, show_shape
from autosig.profile.format import Value
from autosig.specs import RaggedSpecNode, Shape, SparseSpecNode, SpecNode, TensorSpecNode
from autosig.supertype import TF_DTYPES, common_shape, relax_shape, varying_dimensions

MAX_SHAPES_SHOWN = 4


def tensor_leaf(observations: Sequence[Observation], where: str, relax: str) -> Leaf:
    """A dense tensor or NumPy array: a ``TensorSpecNode`` unless its dtype varies."""
    dtypes: Counter[str] = Counter()
    for value, calls in observations:
        dtypes[str(value.get("dtype"))] += calls
    if len(dtypes) > 1:
        listing = ", ".join(f"{d} ({plural(n, 'call')})" for d, n in dtypes.most_common())
        return Leaf(
            blocker=f"{where} arrives with different dtypes: {listing}",
            findings=[
                (
                    "AS203",
                    f"{where} arrives with different dtypes: {listing}; "
                    "each dtype is a separate trace: cast at the call sites",
                )
            ],
            evidence=[f"dtypes {listing}"],
            cause=f"{where} changes dtype ({', '.join(dtypes)})",
            variety=len(dtypes),
        )
    dtype = tensor_dtype(observations[0][0])
    if dtype is None:
        raw = next(iter(dtypes))
        return Leaf(
            blocker=f"{where} has dtype {raw}, which TensorFlow has no spec for",
            evidence=[f"dtype {raw}"],
        )
    story = _shape_story(observations, relax)
    return story.leaf(TensorSpecNode(story.relaxed, dtype), where)


def composite_leaf(observations: Sequence[Observation], where: str, relax: str, kind: str) -> Leaf:
    """A ragged or sparse tensor (``kind``): its spec, unless its type varies."""

    def identity(v: Value) -> tuple[Any, ...]:
        if kind == "ragged":
            return (v.get("dtype"), v.get("ragged_rank"), v.get("row_splits_dtype", "int64"))
        return (v.get("dtype"),)

    ids: Counter[tuple[Any, ...]] = Counter()
    for value, calls in observations:
        ids[identity(value)] += calls
    if len(ids) > 1:
        listing = ", ".join(
            f"{'/'.join(map(str, i))} ({plural(n, 'call')})" for i, n in ids.most_common()
        )
        dtypes = {i[0] for i in ids}
        findings = []
        if len(dtypes) > 1:
            findings.append(("AS203", f"{where} arrives with different dtypes: {listing}"))
        return Leaf(
            blocker=f"{where} arrives as {kind} tensors of different types: {listing}",
            findings=findings,
            evidence=[listing],
            cause=f"{where} changes {kind} type",
            variety=len(ids),
        )
    dtype = str(observations[0][0].get("dtype"))
    if dtype not in TF_DTYPES:
        return Leaf(blocker=f"{where} has dtype {dtype}, which TensorFlow has no spec for")
    story = _shape_story(observations, relax)
    first = observations[0][0]
    spec: SpecNode
    if kind == "ragged":
        spec = RaggedSpecNode(
            story.relaxed,
            dtype,
            first.get("ragged_rank"),
            str(first.get("row_splits_dtype", "int64")),
        )
    else:
        spec = SparseSpecNode(story.relaxed, dtype)
    return story.leaf(spec, where, label=f"{kind}: ")


@dataclass
class _ShapeStory:
    """The shape a spec gets from the observed shapes, and how that reads in the report."""

    relaxed: Shape
    """Accepts every observed shape, loosened by the shape policy."""
    evidence: str
    cause: str | None
    variety: int
    dims: frozenset[int]
    rank_varies: bool

    def leaf(self, spec: SpecNode, where: str, label: str = "") -> Leaf:
        return Leaf(
            spec=spec,
            evidence=[label + self.evidence],
            cause=f"{where}: {self.cause}" if self.cause else None,
            variety=self.variety,
            dims=self.dims,
            rank_varies=self.rank_varies,
        )


def _shape_story(observations: Sequence[Observation], relax: str) -> _ShapeStory:
    """Evidence text for a tensor's shapes: calls, distinct shapes, what varies, policy."""
    shapes = [shape_of(v.get("shape")) for v, _ in observations]
    shape = common_shape(shapes)
    relaxed = relax_shape(shape, relax)
    total = sum(c for _, c in observations)
    distinct: dict[str, int] = {}
    for s, (_, calls) in zip(shapes, observations, strict=True):
        label = show_shape(s)
        distinct[label] = distinct.get(label, 0) + calls
    labels = list(distinct)
    cause: str | None = None
    dims: list[int] = []
    rank_varies = False
    if len(labels) == 1:
        text = f"{plural(total, 'call')}, always shape {labels[0]}"
    else:
        shown = " ".join(labels[:MAX_SHAPES_SHOWN])
        if len(labels) > MAX_SHAPES_SHOWN:
            shown += " ..."
        text = f"{plural(total, 'call')}, {len(labels)} distinct shapes {shown}"
        dims = varying_dimensions(shapes)
        if shape is None:
            rank_varies = True
            ranks = sorted({len(s) for s in shapes if s is not None})
            text += f"; rank varies ({', '.join(map(str, ranks))}): unknown rank"
            cause = f"rank varies ({len(labels)} distinct shapes)"
        elif dims:
            what = "dimension" if len(dims) == 1 else "dimensions"
            verb = "varies" if len(dims) == 1 else "vary"
            listed = ", ".join(map(str, dims))
            text += f"; {what} {listed} {verb}"
            cause = f"{what} {listed} {verb} ({len(labels)} distinct shapes)"
    if relaxed != shape:
        text += f"; relax={relax}: {show_shape(relaxed)}"
    return _ShapeStory(relaxed, text, cause, len(labels), frozenset(dims), rank_varies)

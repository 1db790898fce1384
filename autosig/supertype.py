"""TensorFlow's supertype rules for shapes and specs, re-stated as pure functions on data.

Inference must give every observed call a spec that accepts it, and nothing looser than
needed. TensorFlow defines exactly that as ``most_specific_common_supertype``: equal
dimensions stay, differing ones become ``None``, a rank mismatch gives an unknown rank,
and a dtype (or ragged_rank / row_splits dtype) mismatch has no supertype at all. The
rules live here so inference needs no TensorFlow; ``tests/test_supertype_tf.py`` checks
them against TensorFlow itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from autosig.specs import (
    DictNode,
    ListNode,
    RaggedSpecNode,
    Shape,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    TupleNode,
)

TF_DTYPES = frozenset(
    {
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool",
        "string",
        "qint8",
        "quint8",
        "qint16",
        "quint16",
        "qint32",
    }
)
"""dtype names that ``tf.<name>`` spells and a TensorSpec can carry."""

RelaxPolicy = Literal["auto", "none", "batch", "all"]
RELAX_POLICIES: tuple[str, ...] = ("auto", "none", "batch", "all")


def shape_supertype(a: Shape, b: Shape) -> Shape:
    """The most specific shape both ``a`` and ``b`` are instances of."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y and x is not None else None for x, y in zip(a, b, strict=True))


def common_shape(shapes: Iterable[Shape]) -> Shape:
    """Supertype of all ``shapes`` (at least one)."""
    iterator = iter(shapes)
    try:
        result = next(iterator)
    except StopIteration:
        raise ValueError("common_shape() needs at least one shape") from None
    for shape in iterator:
        result = shape_supertype(result, shape)
    return result


def shape_accepts(spec_shape: Shape, value_shape: Shape) -> bool:
    """Whether a value of ``value_shape`` is an instance of ``spec_shape``."""
    if spec_shape is None:
        return True
    if value_shape is None or len(spec_shape) != len(value_shape):
        return False
    return all(s is None or s == v for s, v in zip(spec_shape, value_shape, strict=True))


def varying_dimensions(shapes: Sequence[Shape]) -> list[int]:
    """Indices of the dimensions that differ between ``shapes`` of one rank."""
    ranks = {None if s is None else len(s) for s in shapes}
    if len(ranks) != 1 or None in ranks:
        return []
    rank = ranks.pop()
    assert rank is not None
    return [i for i in range(rank) if len({s[i] for s in shapes if s is not None}) > 1]


def relax_shape(shape: Shape, policy: str) -> Shape:
    """Apply the shape policy: ``batch`` frees dimension 0, ``all`` every dimension.

    ``auto`` frees dimensions later, where the shape-use analysis proves it safe
    (``infer.shape_policy``); here it keeps them like ``none``.
    """
    if policy not in RELAX_POLICIES:
        raise ValueError(f"unknown relax policy {policy!r} (expected one of {RELAX_POLICIES})")
    if shape is None or policy in ("none", "auto") or not shape:
        return shape
    if policy == "batch":
        return (None, *shape[1:])
    return tuple(None for _ in shape)


def spec_supertype(a: SpecNode, b: SpecNode) -> SpecNode | None:
    """TensorFlow's ``most_specific_common_supertype`` of two specs; None if there is none."""
    if isinstance(a, TensorSpecNode) and isinstance(b, TensorSpecNode):
        if a.dtype != b.dtype:
            return None
        return TensorSpecNode(
            shape_supertype(a.shape, b.shape), a.dtype, a.name if a.name == b.name else None
        )
    if isinstance(a, RaggedSpecNode) and isinstance(b, RaggedSpecNode):
        if (a.dtype, a.ragged_rank, a.row_splits_dtype) != (
            b.dtype,
            b.ragged_rank,
            b.row_splits_dtype,
        ):
            return None
        return RaggedSpecNode(
            shape_supertype(a.shape, b.shape), a.dtype, a.ragged_rank, a.row_splits_dtype
        )
    if isinstance(a, SparseSpecNode) and isinstance(b, SparseSpecNode):
        if a.dtype != b.dtype:
            return None
        return SparseSpecNode(shape_supertype(a.shape, b.shape), a.dtype)
    if isinstance(a, (TupleNode, ListNode)) and type(a) is type(b):
        assert isinstance(b, (TupleNode, ListNode))
        if len(a.items) != len(b.items):
            return None
        items = [spec_supertype(x, y) for x, y in zip(a.items, b.items, strict=True)]
        if any(i is None for i in items):
            return None
        return type(a)(tuple(i for i in items if i is not None))
    if isinstance(a, DictNode) and isinstance(b, DictNode):
        bd = dict(b.items)
        if sorted(k for k, _ in a.items) != sorted(bd):
            return None
        pairs = [(k, spec_supertype(v, bd[k])) for k, v in a.items]
        if any(v is None for _, v in pairs):
            return None
        return DictNode(tuple((k, v) for k, v in pairs if v is not None))
    return None


def common_spec(specs: Iterable[SpecNode]) -> SpecNode | None:
    """Supertype of all ``specs`` (at least one); None when two of them have none."""
    iterator = iter(specs)
    try:
        result: SpecNode | None = next(iterator)
    except StopIteration:
        raise ValueError("common_spec() needs at least one spec") from None
    for spec in iterator:
        if result is None:
            return None
        result = spec_supertype(result, spec)
    return result


def relax_spec(spec: SpecNode, policy: str) -> SpecNode:
    """``spec`` with the shape policy applied to every tensor in it (rank kept)."""
    if isinstance(spec, TensorSpecNode):
        return TensorSpecNode(relax_shape(spec.shape, policy), spec.dtype, spec.name)
    if isinstance(spec, RaggedSpecNode):
        return RaggedSpecNode(
            relax_shape(spec.shape, policy), spec.dtype, spec.ragged_rank, spec.row_splits_dtype
        )
    if isinstance(spec, SparseSpecNode):
        return SparseSpecNode(relax_shape(spec.shape, policy), spec.dtype)
    if isinstance(spec, (TupleNode, ListNode)):
        return type(spec)(tuple(relax_spec(i, policy) for i in spec.items))
    return DictNode(tuple((k, relax_spec(v, policy)) for k, v in spec.items))


INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def python_scalar_dtype(types: Iterable[str], values: Iterable[object] = ()) -> str | None:
    """The dtype TensorFlow converts these Python scalars to, None if no single one fits.

    ints -> int32 (int64 when a value is outside int32: TF would silently wrap it), any
    float -> float32 (ints convert to it exactly), str/bytes -> string. bool is a mode
    flag, never a number here.
    """
    kinds = set(types)
    if not kinds:
        return None
    if kinds <= {"str", "bytes"}:
        return "string"
    if not kinds <= {"int", "float"}:
        return None
    if "float" in kinds:
        return "float32"
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if any(v < INT64_MIN or v > INT64_MAX for v in ints):
        return None
    if any(v < INT32_MIN or v > INT32_MAX for v in ints):
        return "int64"
    return "int32"

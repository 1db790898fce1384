"""Planned TypeSpecs as plain data: their TensorFlow rules, their source text, their words.

Inference produces these trees and the rewriter renders them with the file's own
TensorFlow alias (``tf``, ``tf2``, ...). Beside the trees live the rules TensorFlow
applies to them, re-stated as pure functions so inference needs no TensorFlow:

- supertypes (``most_specific_common_supertype``): equal dimensions stay, differing ones
  become ``None``, a rank mismatch gives an unknown rank, and a dtype (or ragged_rank /
  row_splits dtype) mismatch has no supertype at all; ``tests/test_supertype_tf.py``
  checks the planner's use of them against TensorFlow itself;
- acceptance (``spec_accepts``): whether a recorded value fits a spec, the rule every
  planned signature obeys and the property tests' oracle;
- the conversion of Python scalars (``python_scalar_dtype``, ``python_fits``).

And the one way a shape or a value reads in text (``show_shape``, ``show_value``), in
inference's notation (``?``, ``<unknown rank>``) or in ``autosig explain``'s (``None``,
``(unknown rank)``). No TensorFlow import, no libcst: the rewriter and the report import
this module on paths that parse nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from autosig.analysis.tf_apis import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, TF_DTYPES
from autosig.errors import AutosigError
from autosig.profile.format import Value

_DTYPE_NAME = re.compile(r"[a-z][a-z0-9]*")
"""Every TensorFlow dtype name (float32, bfloat16, qint8, string, ...) has this form."""


Shape = tuple[int | None, ...] | None
"""A shape: a tuple of dimensions (None = varies), or None for unknown rank."""


@dataclass(frozen=True)
class TensorSpecNode:
    shape: Shape
    dtype: str
    name: str | None = None


@dataclass(frozen=True)
class RaggedSpecNode:
    shape: Shape
    dtype: str
    ragged_rank: int | None = None
    row_splits_dtype: str = "int64"


@dataclass(frozen=True)
class SparseSpecNode:
    shape: Shape
    dtype: str


@dataclass(frozen=True)
class TupleNode:
    items: tuple[SpecNode, ...]


@dataclass(frozen=True)
class ListNode:
    items: tuple[SpecNode, ...]


@dataclass(frozen=True)
class DictNode:
    items: tuple[tuple[str, SpecNode], ...]


@dataclass(frozen=True)
class ElementSpecNode:
    """``<dataset>.element_spec``: the TypeSpec a dataset (a distributed one: PerReplica
    specs) promises for its elements, as TensorFlow's distributed input guide writes it."""

    dataset: str


SpecNode = (
    TensorSpecNode
    | RaggedSpecNode
    | SparseSpecNode
    | TupleNode
    | ListNode
    | DictNode
    | ElementSpecNode
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _dimension(d: object) -> str:
    if d is None:
        return "None"
    if type(d) is int and d >= 0:
        return str(d)
    raise AutosigError(f"corrupt profile: {d!r} is not a tensor dimension")


def _dtype(tf: str, dtype: object) -> str:
    """``tf.<dtype>``; refuses anything but a dtype name, so a profile cannot inject code."""
    if not isinstance(dtype, str) or not _DTYPE_NAME.fullmatch(dtype):
        raise AutosigError(f"corrupt profile: {dtype!r} is not a TensorFlow dtype name")
    return f"{tf}.{dtype}"


def render_shape(shape: Shape) -> str:
    """Source for a shape; only None or non-negative ints are ever written."""
    if shape is None:
        return "None"
    if not isinstance(shape, (tuple, list)):
        raise AutosigError(f"corrupt profile: {shape!r} is not a tensor shape")
    return "[" + ", ".join(_dimension(d) for d in shape) + "]"


def render_spec(node: SpecNode, tf: str = "tf") -> str:
    """Source text for ``node``, e.g. ``tf.TensorSpec(shape=[None, 4], dtype=tf.float32)``."""
    if isinstance(node, TensorSpecNode):
        name = f", name={node.name!r}" if node.name else ""
        return f"{tf}.TensorSpec(shape={render_shape(node.shape)}, dtype={_dtype(tf, node.dtype)}{name})"
    if isinstance(node, RaggedSpecNode):
        extra = (
            f", ragged_rank={_dimension(node.ragged_rank)}" if node.ragged_rank is not None else ""
        )
        if node.row_splits_dtype != "int64":
            extra += f", row_splits_dtype={_dtype(tf, node.row_splits_dtype)}"
        return (
            f"{tf}.RaggedTensorSpec(shape={render_shape(node.shape)}, "
            f"dtype={_dtype(tf, node.dtype)}{extra})"
        )
    if isinstance(node, SparseSpecNode):
        shape = render_shape(node.shape)
        return f"{tf}.SparseTensorSpec(shape={shape}, dtype={_dtype(tf, node.dtype)})"
    if isinstance(node, TupleNode):
        inner = ", ".join(render_spec(i, tf) for i in node.items)
        return f"({inner},)" if len(node.items) == 1 else f"({inner})"
    if isinstance(node, ListNode):
        return "[" + ", ".join(render_spec(i, tf) for i in node.items) + "]"
    if isinstance(node, DictNode):
        return "{" + ", ".join(f"{k!r}: {render_spec(v, tf)}" for k, v in node.items) + "}"
    if isinstance(node, ElementSpecNode):
        if not _IDENTIFIER.fullmatch(node.dataset):
            raise AutosigError(f"{node.dataset!r} is not a dataset name")
        return f"{node.dataset}.element_spec"
    raise TypeError(f"not a spec node: {node!r}")


# -- TensorFlow's rules, on data ------------------------------------------------------


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
    (``autosig.infer.dimensions``); here it keeps them like ``none``.
    """
    if policy not in RELAX_POLICIES:
        raise ValueError(f"unknown relax policy {policy!r} (expected one of {RELAX_POLICIES})")
    if shape is None or policy in ("none", "auto") or not shape:
        return shape
    if policy == "batch":
        return (None, *shape[1:])
    return tuple(None for _ in shape)


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


# -- recorded values against specs -----------------------------------------------------


NUMERIC_PYTHON = ("int", "float")


STRING_PYTHON = ("str", "bytes")


def shape_of(raw: Any) -> Shape:
    return None if raw is None else tuple(raw)


def tensor_dtype(value: Value) -> str | None:
    """TensorFlow's dtype for a tensor/numpy description, None if it has none."""
    dtype = str(value.get("dtype"))
    if dtype in TF_DTYPES:
        return dtype
    if value.get("kind") == "numpy" and dtype.startswith(("str", "bytes")):
        return "string"
    return None


def spec_accepts(spec: SpecNode, value: Value) -> bool:
    """Whether a call argument described by ``value`` (profile format) fits ``spec``.

    Stricter than TensorFlow where TensorFlow would silently change the value: a NumPy
    array must already have the spec's dtype (TF would cast float64 to float32), a
    Python int must fit an int32 spec (TF would wrap it), Python bools never count as
    numbers, and a list never fits a tuple spec.
    """
    kind = value.get("kind")
    if isinstance(spec, TensorSpecNode):
        if kind in ("tensor", "numpy"):
            return tensor_dtype(value) == spec.dtype and shape_accepts(
                spec.shape, shape_of(value.get("shape"))
            )
        if kind == "python":
            return python_fits(spec, value)
        return False
    if isinstance(spec, RaggedSpecNode):
        return (
            kind == "ragged"
            and value.get("dtype") == spec.dtype
            and value.get("ragged_rank") == spec.ragged_rank
            and value.get("row_splits_dtype", "int64") == spec.row_splits_dtype
            and shape_accepts(spec.shape, shape_of(value.get("shape")))
        )
    if isinstance(spec, SparseSpecNode):
        return (
            kind == "sparse"
            and value.get("dtype") == spec.dtype
            and shape_accepts(spec.shape, shape_of(value.get("shape")))
        )
    if isinstance(spec, (TupleNode, ListNode)):
        expected = "tuple" if isinstance(spec, TupleNode) else "list"
        items = value.get("items")
        return (
            kind == expected
            and "length" not in value
            and isinstance(items, list)
            and len(items) == len(spec.items)
            and all(spec_accepts(s, v) for s, v in zip(spec.items, items, strict=True))
        )
    if isinstance(spec, DictNode):
        items = value.get("items")
        if kind != "dict" or "length" in value or not isinstance(items, dict):
            return False
        keys = dict(spec.items)
        return set(items) == set(keys) and all(spec_accepts(keys[k], v) for k, v in items.items())
    return False


def python_fits(spec: TensorSpecNode, value: Value) -> bool:
    """Whether a Python scalar converts to ``spec`` without changing its value."""
    if spec.shape not in (None, ()):
        return False
    ptype = value.get("type")
    if ptype in STRING_PYTHON:
        return spec.dtype == "string"
    if ptype not in NUMERIC_PYTHON:
        return False
    if ptype == "float":
        return spec.dtype in ("float16", "bfloat16", "float32", "float64")
    if spec.dtype in ("float16", "bfloat16", "float32", "float64"):
        return True
    if "value" not in value:
        return spec.dtype in ("int32", "int64")
    v = value["value"]
    if not isinstance(v, int):
        return False
    if spec.dtype == "int32":
        return INT32_MIN <= v <= INT32_MAX
    if spec.dtype == "int64":
        return INT64_MIN <= v <= INT64_MAX
    return False


# -- words for shapes and values --------------------------------------------------------


@dataclass(frozen=True)
class Notation:
    """How an unknown dimension, an unknown rank and a float read in one kind of text."""

    unknown_dim: str
    unknown_rank: str
    float_format: str
    """A format spec for Python floats (``""``: as Python prints them)."""


EVIDENCE = Notation(unknown_dim="?", unknown_rank="<unknown rank>", float_format=".6g")
"""Inference's evidence, reasons and findings."""

EXPLAIN = Notation(unknown_dim="None", unknown_rank="(unknown rank)", float_format="")
"""``autosig explain``: dimensions as TensorFlow prints them, Python values in full."""


def show_shape(shape: Sequence[int | None] | None, notation: Notation = EVIDENCE) -> str:
    """``(32, ?)``, ``(3,)``, ``<unknown rank>`` (or ``(32, None)`` ... in ``EXPLAIN``)."""
    if shape is None:
        return notation.unknown_rank
    dims = ", ".join(notation.unknown_dim if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def show_value(value: Any, notation: Notation = EVIDENCE) -> str:
    """A recorded Python value: strings quoted, floats in the notation's format."""
    if isinstance(value, float):
        return format(value, notation.float_format)
    return repr(value) if isinstance(value, str) else str(value)


def varying_text(dims: Sequence[int], of: str = "") -> str:
    """``dimension 1 varies``, ``dimensions 0, 2 vary`` (``of x``: ``dimension 1 of x varies``)."""
    listed = ", ".join(map(str, dims)) + (f" of {of}" if of else "")
    return f"dimension {listed} varies" if len(dims) == 1 else f"dimensions {listed} vary"

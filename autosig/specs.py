"""Planned TypeSpecs as plain data, and their rendering as source text.

Inference produces these trees; the rewriter renders them with the file's own
TensorFlow alias (``tf``, ``tf2``, ...). No TensorFlow import: rendering is text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from autosig.errors import AutosigError

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


SpecNode = TensorSpecNode | RaggedSpecNode | SparseSpecNode | TupleNode | ListNode | DictNode


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
    raise TypeError(f"not a spec node: {node!r}")


def render_signature(specs: list[SpecNode], tf: str = "tf") -> str:
    """The ``input_signature=[...]`` value for the parameters in order."""
    return "[" + ", ".join(render_spec(s, tf) for s in specs) + "]"

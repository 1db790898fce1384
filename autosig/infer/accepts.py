"""Whether a spec takes a recorded value: the rule every planned signature must obey.

Inference uses it to decide whether Python numbers and tensors can share one spec; the
property tests use it as their oracle (a plan must accept every call the profile saw).
"""

from __future__ import annotations

from autosig.infer.values import NUMERIC_PYTHON, STRING_PYTHON, shape_of, tensor_dtype
from autosig.profile.format import Value
from autosig.specs import (
    DictNode,
    ListNode,
    RaggedSpecNode,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    TupleNode,
)
from autosig.supertype import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, shape_accepts


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

"""Reading the profile's value descriptions (JSON dicts), the way every inferer needs them.

The profile stores each argument as a small dict (``kind``, ``shape``, ``dtype``,
``type``, ``value``, ``items``); these helpers turn its fields into the types inference
works with, so no module parses the format on its own.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from autosig.infer.wording import plural
from autosig.profile.format import Value
from autosig.specs import Shape
from autosig.supertype import TF_DTYPES

NUMERIC_PYTHON = ("int", "float")
STRING_PYTHON = ("str", "bytes")

Observation = tuple[Value, int]
"""A value as described in one CallSignature, and how many calls used it."""


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


def value_key(value: Value) -> str:
    """A hashable identity of a description: equal keys, equal values."""
    return json.dumps(value, sort_keys=True)


def kinds_summary(observations: Sequence[Observation]) -> str:
    """``tensor (3 calls), Python int (2 calls)``: what an argument arrived as."""
    counts: Counter[str] = Counter()
    for value, calls in observations:
        kind = value.get("kind", "?")
        label = f"Python {value.get('type')}" if kind == "python" else str(kind)
        if kind == "object":
            label = str(value.get("type"))
        counts[label] += calls
    return ", ".join(f"{label} ({plural(n, 'call')})" for label, n in counts.most_common())

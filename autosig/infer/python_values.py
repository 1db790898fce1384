"""Python values as arguments: flags block a signature, numbers and strings may tensorize.

A Python bool or enum steers control flow, so it keeps its retraces (AS204). A Python
number or string can become a scalar ``TensorSpec`` when one dtype holds every value
seen (``tensorize`` later checks that the code does not need it as a Python value).
Inside a nested argument a Python value always blocks: a signature would make it a
tensor where the code does not expect one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from autosig.infer.accepts import python_fits
from autosig.infer.leaf import Leaf, PythonScalar, mixed_kinds_leaf
from autosig.infer.tensors import tensor_leaf
from autosig.infer.values import (
    NUMERIC_PYTHON,
    STRING_PYTHON,
    Observation,
    kinds_summary,
    value_key,
)
from autosig.infer.wording import plural, show_value
from autosig.specs import TensorSpecNode
from autosig.supertype import python_scalar_dtype


def nested_python_leaf(observations: Sequence[Observation], where: str) -> Leaf:
    """A Python value inside a tuple/list/dict argument."""
    values = {value_key(v) for v, _ in observations}
    varied = len(values) > 1 or any(v.get("varied") for v, _ in observations)
    return Leaf(
        blocker=f"{where} is a Python value inside a nested argument: a signature would turn "
        "it into a tensor",
        evidence=["Python value" + (", varies" if varied else ", constant")],
        cause=f"{where} (a nested Python value) varies" if varied else None,
        variety=len(values) if varied else 1,
    )


def python_leaf(observations: Sequence[Observation], where: str) -> Leaf:
    """Python scalars, possibly mixed with tensors: flags block, numbers/strings may tensorize."""
    python = [(v, c) for v, c in observations if v.get("kind") == "python"]
    tensors = [(v, c) for v, c in observations if v.get("kind") != "python"]
    types = [str(v.get("type")) for v, _ in python]
    calls: Counter[str] = Counter()
    known: list[Any] = []
    folded = False
    for value, count in python:
        if "value" in value:
            label = show_value(value["value"])
            if value["value"] not in known:
                known.append(value["value"])
        else:
            folded = True
            label = "<varied>"
        calls[label] += count
    distinct = len(calls) + (1 if tensors else 0)
    flag_types = [t for t in types if t not in NUMERIC_PYTHON + STRING_PYTHON]
    if flag_types:
        return _flag_leaf(where, "/".join(sorted(set(flag_types))), calls, folded, bool(tensors))
    dtype = python_scalar_dtype(types, known)
    if tensors:
        spec = tensor_leaf(tensors, where, "none").spec
        if (
            not isinstance(spec, TensorSpecNode)
            or spec.shape not in (None, ())
            or not all(python_fits(spec, v) for v, _ in python)
        ):
            return mixed_kinds_leaf(observations, where, distinct)
        dtype = spec.dtype
    if dtype is None:
        return Leaf(
            blocker=f"{where} arrives as Python values of mixed types ({', '.join(sorted(set(types)))})",
            evidence=[kinds_summary(observations)],
            cause=f"{where} changes type",
            variety=distinct,
        )
    scalar = PythonScalar(types, known, folded, dtype)
    total = sum(c for _, c in observations)
    evidence = f"{scalar.describe()} ({plural(total, 'call')})"
    if tensors:
        evidence += f"; also a scalar {dtype} tensor"
    return Leaf(
        python=scalar,
        evidence=[evidence],
        cause=f"{where} (Python {'/'.join(sorted(set(types)))}) takes {'many' if folded else len(calls)} values"
        if scalar.varied
        else None,
        variety=distinct if scalar.varied else 1,
    )


def _flag_leaf(
    where: str, tname: str, calls: Counter[str], folded: bool, also_tensors: bool
) -> Leaf:
    """A Python bool/None/enum (``tname``): it steers the function, so it cannot be a spec.

    ``calls`` counts the calls per value shown; ``also_tensors``: other calls passed a tensor.
    """
    listing = ", ".join(f"{label}: {plural(n, 'call')}" for label, n in calls.most_common())
    if folded or len(calls) > 1 or also_tensors:
        message = (
            f"{where} is a Python {tname} flag with {len(calls)} values ({listing}); "
            "each value is a separate trace"
        )
        return Leaf(
            blocker=f"{where} is a Python {tname} that steers the function ({listing})",
            findings=[("AS204", message)],
            evidence=[f"Python {tname}, {listing}"],
            cause=f"{where} (Python {tname}) takes {len(calls)} values",
            variety=len(calls) + (1 if also_tensors else 0),
        )
    return Leaf(
        blocker=f"{where} is a Python {tname} ({listing}): a signature cannot pin it",
        evidence=[f"Python {tname}, always {listing.split(':')[0]}"],
    )

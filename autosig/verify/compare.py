"""Compare recorded outputs of the original and the rewritten run, call by call (NumPy only).

Structure, shapes and dtypes must match exactly: a signature that changes a dtype or
a shape changes the program even if the numbers look close. Arrays are judged by
``arrays.compare_arrays`` (the one comparator verify uses everywhere); Python values
compare exactly, Python floats as float64. Ragged values compare by row splits (exact)
and flat values; sparse by indices and dense shape (exact) and values.

Outputs a random stream changed on purpose reaches cannot be equal: for them
``compare_by_design`` checks what can still be checked, structure, shapes, dtypes and
that the new values stay within the range the original produced; every other output
is compared exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from autosig.profile.format import Sample, Value
from autosig.profile.value_tree import children, step
from autosig.text import number
from autosig.verify.arrays import (
    LeafResult,
    Tolerance,
    as_comparable,
    compare_arrays,
    dtype_name,
)
from autosig.verify.reach import covered


@dataclass
class CallResult:
    call: int
    equal: bool
    leaves: list[LeafResult] = field(default_factory=list)

    @property
    def first_difference(self) -> LeafResult | None:
        return next((leaf for leaf in self.leaves if not leaf.equal), None)

    @property
    def max_abs(self) -> float:
        return max((leaf.max_abs for leaf in self.leaves), default=0.0)

    @property
    def max_rel(self) -> float:
        return max((leaf.max_rel for leaf in self.leaves), default=0.0)


Status = Literal["equivalent", "not equivalent", "different by design", "not compared"]


@dataclass
class FunctionComparison:
    """The verdict for one function over every call both runs sampled."""

    status: Status
    calls_compared: int = 0
    first_mismatch: CallResult | None = None
    max_abs: float = 0.0
    max_rel: float = 0.0
    detail: str = ""

    def summary(self) -> str:
        if self.status == "not compared":
            return f"not compared: {self.detail}"
        errors = f"max abs error {self.max_abs:.3g}, max rel error {self.max_rel:.3g}"
        if self.status == "not equivalent" and self.first_mismatch is not None:
            leaf = self.first_mismatch.first_difference
            why = f" at {leaf.where}: {leaf.reason}" if leaf else ""
            return f"first mismatch at call {self.first_mismatch.call}{why} ({errors})"
        if self.status == "different by design":
            return f"{self.calls_compared} calls: shapes, dtypes and ranges match; {self.detail}"
        return f"{self.calls_compared} calls equal ({errors})"


# -- structures -------------------------------------------------------------------------


def _leaf_pairs(
    old: Value | None, new: Value | None, where: str
) -> Iterator[tuple[str, Value | None, Value | None, str | None]]:
    """Walk two sample structures together: (where, old leaf, new leaf, structural problem)."""
    if old is None or new is None:
        if old is not new:
            yield where, old, new, "output missing in one run"
        return
    kind_a, kind_b = old.get("kind"), new.get("kind")
    if kind_a != kind_b:
        yield where, old, new, f"structure {kind_a} -> {kind_b}"
        return
    if kind_a in ("tuple", "list", "namedtuple"):
        items_a, items_b = old["items"], new["items"]
        if len(items_a) != len(items_b):
            yield where, old, new, f"{kind_a} of {len(items_a)} -> {len(items_b)} items"
            return
        if kind_a == "namedtuple" and old.get("fields") != new.get("fields"):
            yield where, old, new, "namedtuple fields differ"
            return
        for (index, a), (_, b) in zip(children(old), children(new), strict=True):
            yield from _leaf_pairs(a, b, where + step(old, index, fields=False))
        return
    if kind_a == "dict":
        keys_a, keys_b = list(old["items"]), list(new["items"])
        if sorted(keys_a) != sorted(keys_b):
            yield where, old, new, f"dict keys {sorted(keys_a)} -> {sorted(keys_b)}"
            return
        for key, a in children(old):
            yield from _leaf_pairs(a, new["items"][key], where + step(old, key))
        return
    yield where, old, new, None


def _leaf_arrays(value: Value, arrays: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The named arrays of one leaf: plain, ragged (splits first) or sparse."""
    kind = value.get("kind")
    if kind == "array":
        return [("", arrays[value["key"]])]
    if kind == "ragged_array":
        parts = [(f".row_splits[{i}]", arrays[k]) for i, k in enumerate(value["row_splits"])]
        return [*parts, (".values", arrays[value["values"]])]
    if kind == "sparse_array":
        return [
            (".dense_shape", arrays[value["dense_shape"]]),
            (".indices", arrays[value["indices"]]),
            (".values", arrays[value["values"]]),
        ]
    return []


def compare_outputs(
    old: Value | None,
    new: Value | None,
    old_arrays: Mapping[str, Any],
    new_arrays: Mapping[str, Any],
    tol: Tolerance,
    where: str = "output",
) -> list[LeafResult]:
    """Every leaf of one call's outputs compared; an unequal leaf explains itself."""
    results: list[LeafResult] = []
    for path, a, b, problem in _leaf_pairs(old, new, where):
        if problem is not None:
            results.append(LeafResult(path, False, problem))
            continue
        assert a is not None and b is not None
        kind = a["kind"]
        if kind == "python":
            results.append(_compare_python(a, b, tol, path))
        elif kind == "object":
            same = a.get("type") == b.get("type")
            reason = "" if same else f"object type {a.get('type')} -> {b.get('type')}"
            results.append(LeafResult(path, same, reason))
        elif kind in ("array", "ragged_array", "sparse_array"):
            try:
                parts_a = _leaf_arrays(a, old_arrays)
                parts_b = _leaf_arrays(b, new_arrays)
            except KeyError as exc:
                results.append(LeafResult(path, False, f"sample array {exc} missing"))
                continue
            if len(parts_a) != len(parts_b):
                results.append(LeafResult(path, False, "ragged rank differs"))
                continue
            for (suffix, x), (_, y) in zip(parts_a, parts_b, strict=True):
                results.append(compare_arrays(x, y, tol, path + suffix))
        else:
            same = a == b
            results.append(LeafResult(path, same, "" if same else f"{kind} values differ"))
    return results


def _compare_python(a: Value, b: Value, tol: Tolerance, where: str) -> LeafResult:
    if a.get("type") != b.get("type"):
        return LeafResult(where, False, f"Python {a.get('type')} -> {b.get('type')}")
    va, vb = a.get("value"), b.get("value")
    if a.get("type") == "float" and isinstance(va, float) and isinstance(vb, float):
        return compare_arrays(np.float64(va), np.float64(vb), tol, where)
    if va == vb:
        return LeafResult(where, True)
    shown = (repr(v) if isinstance(v, str) else number(v) for v in (va, vb))
    return LeafResult(where, False, " -> ".join(shown))


# -- functions --------------------------------------------------------------------------


def _by_call(samples: Sequence[Sample]) -> dict[int, Sample]:
    return {s.call: s for s in samples if s.outputs is not None}


def compare_function(
    old_samples: Sequence[Sample],
    new_samples: Sequence[Sample],
    old_arrays: Mapping[str, Any],
    new_arrays: Mapping[str, Any],
    tol: Tolerance,
) -> FunctionComparison:
    """Compare every call index both runs sampled with outputs; stop at nothing."""
    old_calls, new_calls = _by_call(old_samples), _by_call(new_samples)
    common = sorted(set(old_calls) & set(new_calls))
    if not common:
        return FunctionComparison(
            "not compared",
            detail="no call has recorded outputs in both runs"
            f" ({len(old_calls)} in the original, {len(new_calls)} in the rewritten run)",
        )
    verdict = FunctionComparison("equivalent")
    for call in common:
        leaves = compare_outputs(
            old_calls[call].outputs, new_calls[call].outputs, old_arrays, new_arrays, tol
        )
        result = CallResult(call, all(leaf.equal for leaf in leaves), leaves)
        verdict.calls_compared += 1
        verdict.max_abs = max(verdict.max_abs, result.max_abs)
        verdict.max_rel = max(verdict.max_rel, result.max_rel)
        if not result.equal and verdict.first_mismatch is None:
            verdict.status = "not equivalent"
            verdict.first_mismatch = result
    return verdict


def compare_by_design(
    old_samples: Sequence[Sample],
    new_samples: Sequence[Sample],
    old_arrays: Mapping[str, Any],
    new_arrays: Mapping[str, Any],
    why: str,
    tol: Tolerance,
    random: Callable[[str], bool] = lambda where: True,
) -> FunctionComparison:
    """For rewrites that change a random stream on purpose.

    Leaves a changed draw reaches (``random(where)``: by dataflow in the traced graphs)
    keep structure, dtype and shape, and their values must stay inside the range the
    original produced at that output position over all compared calls, widened by half
    its span (random draws vary, their range should not); NaN/inf may appear only where
    the original had them. Every other leaf is compared exactly as ``compare_function``
    does: a deterministic output beside a ``tf.nn.dropout`` must still be equal.
    """
    old_calls, new_calls = _by_call(old_samples), _by_call(new_samples)
    common = sorted(set(old_calls) & set(new_calls))
    if not common:
        return FunctionComparison(
            "not compared", detail="no call has recorded outputs in both runs"
        )
    ranges: dict[str, tuple[float, float]] = {}
    pairs: list[tuple[int, str, Any, Any]] = []
    verdict = FunctionComparison("different by design", detail=why)
    reached = False
    for call in common:
        problems: list[LeafResult] = []
        exact: list[Value] = []
        for path, a, b, problem in _leaf_pairs(
            old_calls[call].outputs, new_calls[call].outputs, "output"
        ):
            if problem is not None:
                problems.append(LeafResult(path, False, problem))
                continue
            assert a is not None and b is not None
            if not random(path):
                exact.append(path)
                continue
            if a["kind"] not in ("array", "ragged_array", "sparse_array"):
                continue
            reached = True
            for (suffix, x), (_, y) in zip(
                _leaf_arrays(a, old_arrays), _leaf_arrays(b, new_arrays), strict=False
            ):
                x, y = as_comparable(x), as_comparable(y)
                where = path + suffix
                if dtype_name(x) != dtype_name(y):
                    problems.append(
                        LeafResult(where, False, f"dtype {dtype_name(x)} -> {dtype_name(y)}")
                    )
                elif x.shape != y.shape and not suffix.startswith((".values", ".indices")):
                    problems.append(
                        LeafResult(where, False, f"shape {list(x.shape)} -> {list(y.shape)}")
                    )
                elif x.dtype.kind in "fiu" or dtype_name(x) == "bfloat16":
                    finite = x.astype(np.float64)[np.isfinite(x.astype(np.float64))]
                    if finite.size:
                        lo, hi = ranges.get(where, (math.inf, -math.inf))
                        ranges[where] = (min(lo, float(finite.min())), max(hi, float(finite.max())))
                    pairs.append((call, where, x, y))
        if exact:
            for leaf in compare_outputs(
                old_calls[call].outputs, new_calls[call].outputs, old_arrays, new_arrays, tol
            ):
                if covered(leaf.where, exact):
                    verdict.max_abs = max(verdict.max_abs, leaf.max_abs)
                    verdict.max_rel = max(verdict.max_rel, leaf.max_rel)
                    if not leaf.equal:
                        problems.append(leaf)
        verdict.calls_compared += 1
        if problems and verdict.first_mismatch is None:
            verdict.status = "not equivalent"
            verdict.first_mismatch = CallResult(call, False, problems)
    for call, where, x, y in pairs:
        if verdict.first_mismatch is not None:
            break
        new = y.astype(np.float64)
        if (
            not np.array_equal(np.isfinite(new), np.isfinite(x.astype(np.float64)))
            and (~np.isfinite(new)).any()
        ):
            problem = LeafResult(where, False, "non-finite values the original never produced")
            verdict.status = "not equivalent"
            verdict.first_mismatch = CallResult(call, False, [problem])
            break
        lo, hi = ranges.get(where, (math.inf, -math.inf))
        values = new[np.isfinite(new)]
        if not values.size or lo > hi:
            continue
        slack = 0.5 * (hi - lo) + 1e-6 * max(abs(lo), abs(hi), 1.0)
        if values.min() < lo - slack or values.max() > hi + slack:
            problem = LeafResult(
                where,
                False,
                f"values in [{values.min():.4g}, {values.max():.4g}] outside the original's "
                f"range [{lo:.4g}, {hi:.4g}]",
            )
            verdict.status = "not equivalent"
            verdict.first_mismatch = CallResult(call, False, [problem])
    if verdict.status == "different by design" and not reached:
        verdict.status = "equivalent"
    return verdict


def inputs_differ(
    old_samples: Sequence[Sample],
    new_samples: Sequence[Sample],
    old_arrays: Mapping[str, Any],
    new_arrays: Mapping[str, Any],
) -> tuple[list[Sample], list[Sample], int]:
    """Drop calls whose recorded inputs differ between the runs; count them.

    Comparing outputs of calls that got other inputs proves nothing either way: the
    workload is not deterministic there (or an earlier rewritten function fed it).
    """
    new_by_call = {s.call: s for s in new_samples}
    tol = Tolerance()
    kept_old: list[Sample] = []
    kept_new: list[Sample] = []
    skipped = 0
    for old in old_samples:
        new = new_by_call.get(old.call)
        if new is None:
            continue
        leaves = compare_outputs(
            {"kind": "dict", "items": old.args},
            {"kind": "dict", "items": new.args},
            old_arrays,
            new_arrays,
            tol,
            where="input",
        )
        if all(leaf.equal for leaf in leaves):
            kept_old.append(old)
            kept_new.append(new)
        else:
            skipped += 1
    return kept_old, kept_new, skipped

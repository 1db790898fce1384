"""One comparison of two arrays for all of verify: full values or their digests.

Verify meets arrays in three forms: the full sampled outputs of the first calls
(``compare.py``), the digests every call leaves in the workload's processes
(``effects.py``: small arrays in full, larger ones as a summary), and numbers read
back from ``tf.print`` output. They are all judged here, by one rule:

- dtype and shape exactly;
- integers, booleans and strings exactly (larger ones by the SHA-1 of their bytes);
- floats (and complex) ``|new - old| <= atol + rtol * |old|`` with the dtype's
  tolerances, NaN matching NaN in the same places and infinities matching exactly;
  a float summary (sum, sum of absolute values, min, max, NaN/inf counts) by the same
  rule, a sum's rounding error allowed to grow with the sum of absolute values.

``digest_array`` makes the digest the workload's processes keep (NumPy only).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from autosig.text import digits_for, number

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    # dtype: (rtol, atol)
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "float32": (1e-5, 1e-6),
    "complex64": (1e-5, 1e-6),
    "float64": (1e-9, 1e-12),
    "complex128": (1e-9, 1e-12),
}
XLA_TOLERANCE_SCALE = 10.0
"""XLA fuses and reorders floating-point work (and approximates exp/tanh on CPU):
its default tolerances are this much looser; explicit --rtol/--atol are used as given."""
FULL_VALUES = 16
"""Arrays up to this many elements are kept value by value in a digest."""


@dataclass(frozen=True)
class Tolerance:
    """User overrides (None: the dtype's default) and a scale for the defaults."""

    rtol: float | None = None
    atol: float | None = None
    default_scale: float = 1.0

    def for_dtype(self, dtype: str) -> tuple[float, float]:
        rtol, atol = DEFAULT_TOLERANCES.get(dtype, DEFAULT_TOLERANCES["float32"])
        rtol *= self.default_scale
        atol *= self.default_scale
        return (
            rtol if self.rtol is None else self.rtol,
            atol if self.atol is None else self.atol,
        )

    def scaled(self, factor: float) -> Tolerance:
        return Tolerance(self.rtol, self.atol, self.default_scale * factor)


@dataclass
class LeafResult:
    """One leaf compared: equal or why not, and the float error measured
    (``max_rel`` is inf where the reference is 0 and the values differ)."""

    where: str
    equal: bool
    reason: str = ""
    max_abs: float = 0.0
    max_rel: float = 0.0


# -- what an array is -----------------------------------------------------------------------


def as_comparable(arr: Any) -> np.ndarray:
    """bfloat16 and other extension dtypes saved as raw bytes: view as real floats."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "V" and arr.dtype.itemsize == 2:
        try:
            import ml_dtypes

            return arr.view(ml_dtypes.bfloat16)
        except ImportError:  # pragma: no cover - ml_dtypes ships with TensorFlow
            return arr
    return arr


def dtype_name(arr: np.ndarray) -> str:
    kind = arr.dtype.kind
    if kind in "SUO":
        return "string"
    if kind == "V" and arr.dtype.itemsize == 2:
        return "bfloat16"
    return str(arr.dtype.name)


def is_floating(dtype: str) -> bool:
    return dtype.startswith(("float", "complex")) or dtype == "bfloat16"


def digest_array(arr: Any) -> dict[str, Any]:
    """A JSON-able digest: dtype, shape, and values in full (up to ``FULL_VALUES``),
    else the SHA-1 of exact values or a float summary."""
    arr = np.asarray(arr)
    kind = arr.dtype.kind
    out: dict[str, Any] = {"dtype": dtype_name(arr), "shape": list(arr.shape)}
    if kind in "fc" or out["dtype"] == "bfloat16":
        wide = as_comparable(arr).astype(np.complex128 if kind == "c" else np.float64)
        if kind == "c":
            wide = np.concatenate([wide.real.ravel(), wide.imag.ravel()])
        flat = wide.ravel()
        if flat.size <= FULL_VALUES:
            out["values"] = [json_float(x) for x in flat]
            return out
        finite = flat[np.isfinite(flat)]
        out["nan"] = int(np.isnan(flat).sum())
        out["posinf"] = int(np.isposinf(flat).sum())
        out["neginf"] = int(np.isneginf(flat).sum())
        out["n"] = int(finite.size)
        if finite.size:
            out["sum"] = float(finite.sum())
            out["abssum"] = float(np.abs(finite).sum())
            out["min"] = float(finite.min())
            out["max"] = float(finite.max())
        return out
    if kind in "SUO":
        items = [x if isinstance(x, bytes) else str(x).encode() for x in arr.ravel().tolist()]
        if len(items) <= FULL_VALUES:
            out["values"] = [x.decode("utf-8", errors="replace") for x in items]
        else:
            h = hashlib.sha1()
            for x in items:
                h.update(len(x).to_bytes(8, "little"))
                h.update(x)
            out["sha1"] = h.hexdigest()
        return out
    if arr.size <= FULL_VALUES:
        out["values"] = arr.ravel().tolist()
    else:
        out["sha1"] = hashlib.sha1(np.ascontiguousarray(arr).tobytes()).hexdigest()
    return out


def json_float(x: float) -> Any:
    """A float as JSON keeps it: NaN and infinities as strings."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def _digest_values(digest: dict[str, Any]) -> np.ndarray:
    """A digest's full values as an array (floats with "nan"/"inf" read back)."""
    values = digest["values"]
    if is_floating(digest["dtype"]):
        return np.asarray([float(v) for v in values], dtype=np.float64)
    if digest["dtype"] == "string":
        return np.asarray([str(v).encode() for v in values], dtype=object)
    return np.asarray(values)


# -- the comparison -------------------------------------------------------------------------


def compare_arrays(
    old: Any, new: Any, tol: Tolerance, where: str = "output", *, tolerance_dtype: str = ""
) -> LeafResult:
    """Compare two arrays, each a NumPy array (or array-like) or a ``digest_array``.

    ``tolerance_dtype``: judge floats with this dtype's tolerances (numbers read from
    printed text) instead of their own.
    """
    if isinstance(old, dict) or isinstance(new, dict):
        return _compare_digests(_digest(old), _digest(new), tol, where, tolerance_dtype)
    a, b = as_comparable(old), as_comparable(new)
    if dtype_name(a) != dtype_name(b):
        return LeafResult(where, False, f"dtype {dtype_name(a)} -> {dtype_name(b)}")
    if a.shape != b.shape:
        return LeafResult(where, False, f"shape {list(a.shape)} -> {list(b.shape)}")
    return _compare_values(a, b, tolerance_dtype or dtype_name(a), tol, where)


def _digest(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else digest_array(value)


def _compare_values(
    a: np.ndarray, b: np.ndarray, dtype: str, tol: Tolerance, where: str
) -> LeafResult:
    """Same dtype and shape: exact values, or floats within tolerances."""
    floating = a.dtype.kind in "fc" or dtype_name(a) == "bfloat16"
    if not floating:
        if np.array_equal(a, b):
            return LeafResult(where, True)
        diff = np.argwhere(a != b) if a.ndim else np.zeros((1, 0), dtype=int)
        first = tuple(int(i) for i in diff[0]) if diff.size else ()
        reason = (
            f"exact values differ at index {list(first)}: {_plain(a[first])!r} -> "
            f"{_plain(b[first])!r}"
        )
        if a.dtype.kind in "iub" and a.size:
            err = np.abs(a.astype(np.float64) - b.astype(np.float64))
            return LeafResult(where, False, reason, float(err.max()), _max_rel(err, a))
        return LeafResult(where, False, reason)
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    x = a.astype(wide).ravel()
    y = b.astype(wide).ravel()
    rtol, atol = tol.for_dtype(dtype)
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    if not np.array_equal(nan_x, nan_y):
        return LeafResult(where, False, "NaN in different positions", math.inf, math.inf)
    inf_x, inf_y = np.isinf(x), np.isinf(y)
    if not np.array_equal(inf_x, inf_y) or not np.array_equal(x[inf_x], y[inf_y]):
        return LeafResult(where, False, "infinities differ", math.inf, math.inf)
    finite = ~(nan_x | inf_x)
    if not finite.any():
        return LeafResult(where, True)
    err = np.abs(x[finite] - y[finite])
    ref = np.abs(x[finite])
    max_abs = float(err.max())
    max_rel = _max_rel(err, ref)
    bad = err > atol + rtol * ref
    if bad.any():
        index = int(np.argmax(bad))
        digits = digits_for(dtype)
        reason = (
            f"{int(bad.sum())} of {err.size} values outside rtol={rtol:g}, atol={atol:g} "
            f"(e.g. {number(x[finite][index], digits)} -> {number(y[finite][index], digits)})"
        )
        return LeafResult(where, False, reason, max_abs, max_rel)
    return LeafResult(where, True, "", max_abs, max_rel)


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it holds (``0.5``, not ``np.float64(0.5)``)."""
    return value.item() if hasattr(value, "item") else value


def _max_rel(err: np.ndarray, ref: np.ndarray) -> float:
    ref = np.abs(np.asarray(ref, dtype=np.float64))
    nonzero = ref > 0
    rel = float((err[nonzero] / ref[nonzero]).max()) if nonzero.any() else 0.0
    if (err[~nonzero] > 0).any():
        return math.inf
    return rel


_COUNTS = ("nan", "posinf", "neginf", "n")


def _compare_digests(
    a: dict[str, Any], b: dict[str, Any], tol: Tolerance, where: str, tolerance_dtype: str
) -> LeafResult:
    if "error" in a or "error" in b:
        same = a == b
        return LeafResult(where, same, "" if same else "could not be read in one run")
    if a["dtype"] != b["dtype"]:
        return LeafResult(where, False, f"dtype {a['dtype']} -> {b['dtype']}")
    if list(a["shape"]) != list(b["shape"]):
        return LeafResult(where, False, f"shape {list(a['shape'])} -> {list(b['shape'])}")
    dtype = a["dtype"]
    if "values" in a and "values" in b:
        x, y = _digest_values(a), _digest_values(b)
        if x.shape != y.shape:
            return LeafResult(where, False, "values differ")
        # a digest keeps floats as float64 (complex as real parts, then imaginary
        # parts): compared with their own dtype's tolerances
        return _compare_values(x, y, tolerance_dtype or dtype, tol, where)
    if "sha1" in a or "sha1" in b:
        same = a.get("sha1") == b.get("sha1")
        return LeafResult(where, same, "" if same else f"{dtype} values differ (exact digest)")
    if "values" in a or "values" in b:
        return LeafResult(where, False, "values differ")
    for name in _COUNTS:
        if a.get(name) != b.get(name):
            return LeafResult(where, False, f"{name} count {a.get(name)} -> {b.get(name)}")
    rtol, atol = tol.for_dtype(tolerance_dtype or dtype)
    n = max(int(a.get("n", 0)), 1)
    abssum = float(a.get("abssum", 0.0))
    result = LeafResult(where, True)
    for name, scale in (("sum", n), ("abssum", n), ("min", 1), ("max", 1)):
        if name not in a:
            continue
        x, y = float(a[name]), float(b[name])
        ref = abssum if name in ("sum", "abssum") else abs(x)
        err = abs(x - y)
        result.max_abs = max(result.max_abs, err / scale)
        if ref != 0:
            result.max_rel = max(result.max_rel, err / ref)
        elif err > 0:
            result.max_rel = math.inf
        if err > atol * scale + rtol * ref:
            result.equal = False
            result.reason = f"{name} of {a['n']} values {x:.9g} -> {y:.9g}"
            return result
    return result

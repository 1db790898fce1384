"""Words and numbers as every message autosig prints spells them (one spelling everywhere)."""

from __future__ import annotations

import math
import numbers

EXACT_DIGITS = 12
"""Significant digits a recorded value is shown with: enough to tell apart any two values
a user typed or computed on purpose, few enough to drop float noise
(``0.015 * 3`` is ``0.045``, not ``0.045000000000000005``)."""

DTYPE_DIGITS = {"float16": 4, "bfloat16": 3, "float32": 8}
"""Significant digits that tell apart values of a dtype beyond its tolerance, without
its rounding noise (a float32 0.1 read as a Python float is 0.10000000149011612)."""


def digits_for(dtype: str | None) -> int:
    """How many significant digits a value of ``dtype`` is shown with."""
    return DTYPE_DIGITS.get(str(dtype), EXACT_DIGITS)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 call``, ``3 calls``; ``many`` for irregular plurals (``2 fixes``)."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def number(value: object, digits: int = EXACT_DIGITS) -> str:
    """The shortest text that reads back as ``value`` rounded to ``digits`` significant digits.

    A float keeps the look of a float (``3.0``, ``1e-07``) so a reader tells it from an
    int; ints and bools print as Python prints them; NaN and infinities as ``nan``,
    ``inf``, ``-inf``. NumPy scalars are numbers too.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    as_float = float(value)
    if getattr(getattr(value, "dtype", None), "itemsize", 8) < 8:
        as_float = float(str(value))  # NumPy's shortest text for its own precision: 0.1
    if not math.isfinite(as_float):
        return repr(as_float)
    return repr(float(f"{as_float:.{digits}g}"))

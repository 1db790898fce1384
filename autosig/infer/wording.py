"""How shapes, values and counts read in evidence, reasons and findings.

One place, so every message of inference spells a shape or a count the same way.
"""

from __future__ import annotations

from typing import Any

from autosig.specs import Shape


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def show_shape(shape: Shape) -> str:
    if shape is None:
        return "<unknown rank>"
    dims = ", ".join("?" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def show_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value) if isinstance(value, str) else str(value)

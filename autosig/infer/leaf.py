"""What one argument (or a part of a nested one) allows: the record every inferer returns.

The per-kind inferers (tensors, Python values, structures) fill a ``Leaf``; the
parameter and function decisions read it. Keeping it apart lets each side change
without the other, with no import cycle between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from autosig.infer.values import Observation, kinds_summary
from autosig.infer.wording import show_value
from autosig.profile.format import MAX_PYTHON_VALUES
from autosig.specs import SpecNode


@dataclass
class PythonScalar:
    """A parameter that arrives as Python numbers/strings: maybe tensorizable."""

    types: list[str]
    values: list[Any]
    folded: bool
    """More distinct values were seen than the profile keeps."""
    dtype: str

    @property
    def varied(self) -> bool:
        return self.folded or len(self.values) > 1

    @property
    def type_name(self) -> str:
        return "/".join(sorted(set(self.types)))

    def values_text(self) -> str:
        """``12 distinct values 1..12``, ``always 0.5``, ``more than 32 distinct values``."""
        if self.folded:
            return f"more than {MAX_PYTHON_VALUES} distinct values"
        if len(self.values) == 1:
            return f"always {show_value(self.values[0])}"
        try:
            ordered = sorted(self.values)
        except TypeError:
            ordered = list(self.values)
        if len(ordered) <= 4:
            shown = ", ".join(show_value(v) for v in ordered)
        else:
            shown = f"{show_value(ordered[0])}..{show_value(ordered[-1])}"
        return f"{len(ordered)} distinct values {shown}"

    def describe(self) -> str:
        return f"Python {self.type_name}, {self.values_text()}"


@dataclass
class Leaf:
    """What one argument (or a nested part of it) allows."""

    spec: SpecNode | None = None
    python: PythonScalar | None = None
    blocker: str | None = None
    findings: list[tuple[str, str]] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    cause: str | None = None
    """What varied between calls, for AS201's main cause."""
    variety: int = 1
    """How many distinct forms the argument took (ranks causes)."""
    dims: frozenset[int] = frozenset()
    """Tensor dimensions that varied (anywhere inside the argument)."""
    rank_varies: bool = False
    object_type: str | None = None


def mixed_kinds_leaf(observations: Sequence[Observation], where: str, variety: int) -> Leaf:
    """An argument that arrived as kinds no single spec covers (tensor and object, ...)."""
    summary = kinds_summary(observations)
    return Leaf(
        blocker=f"{where} arrives as different kinds: {summary}",
        evidence=[summary],
        cause=f"{where} arrives as different kinds",
        variety=variety,
    )

"""Which dimensions and Python numbers a probe round traces, from the recorded calls. Pure.

Candidates: every dimension of a tensor (or NumPy) argument in the call being probed,
those that varied across the recorded signatures and those that never did (a signature
fixes them, so the probes say whether the code needs them fixed); and every Python int
or float argument. Dimensions that move together are probed together, because real
calls move them together and code ties them (the batch of ``x`` and ``y`` in a loss):

- varied dimensions with the same sizes in every recorded signature form one group;
- fixed dimensions at the same axis with the same size in different arguments form one
  group (``x[0]`` and ``y[0]`` both 32).

A group whose joint probes do not all pass is probed again member by member.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autosig.profile.format import Value
from autosig.profile.value_tree import leaves

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
TENSOR_LEAF_KINDS = ("tensor", "numpy")
"""Leaves probed by shape (variables keep their shape; ragged and sparse are not probed yet)."""


@dataclass(frozen=True)
class Member:
    """One dimension of one argument, at its size in the call probed."""

    param: str
    dim: int
    size: int
    varied: bool

    @property
    def label(self) -> str:
        return f"{self.param}:{self.dim}"

    @property
    def key(self) -> tuple[str, int, bool]:
        """A dimension is probed once while fixed, and again once it has varied."""
        return (self.param, self.dim, self.varied)


@dataclass
class Group:
    members: list[Member]

    @property
    def varied(self) -> bool:
        return self.members[0].varied

    @property
    def size(self) -> int:
        return self.members[0].size

    @property
    def label(self) -> str:
        return "+".join(m.label for m in self.members)


@dataclass(frozen=True)
class NumberCandidate:
    param: str
    type: str
    """int | float"""
    value: int | float


@dataclass
class RoundPlan:
    groups: list[Group] = field(default_factory=list)
    numbers: list[NumberCandidate] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Leaves left out and why (a rank that varies)."""

    def __bool__(self) -> bool:
        return bool(self.groups or self.numbers)

    def labels(self) -> list[str]:
        return [m.label for g in self.groups for m in g.members] + [n.param for n in self.numbers]


def alternate_sizes(size: int) -> list[int]:
    """The other sizes a dimension is traced at: one more, and 1 (``if x.shape[0] == 1``
    must be seen); for a size of 1 or 0, the next two."""
    if size in (0, 1):
        return [size + 1, size + 2]
    return [size + 1, 1]


def signature_leaves(args: Mapping[str, Value]) -> dict[str, Value]:
    return {path: leaf for name, v in args.items() for path, leaf in leaves(v, name)}


def plan_round(
    signatures: Sequence[Mapping[str, Value]],
    current: Mapping[str, Value],
    passed: Mapping[str, str],
    done: set[Any],
) -> RoundPlan:
    """The candidates of the call described by ``current`` not probed before (``done``).

    ``signatures`` are every recorded signature's arguments (``current`` among them);
    ``passed`` says how the call passed each parameter (numbers left at their default
    are not probed: the signature question for them is a different one).
    """
    plan = RoundPlan()
    history = [signature_leaves(s) for s in signatures]
    members: list[tuple[Member, tuple[Any, ...]]] = []
    for path, leaf in signature_leaves(current).items():
        if leaf.get("kind") in TENSOR_LEAF_KINDS:
            shape = leaf.get("shape")
            if shape is None:
                continue
            seen = [h.get(path) for h in history]
            shapes = [s.get("shape") for s in seen if s and s.get("kind") == leaf.get("kind")]
            if any(s is None or len(s) != len(shape) for s in shapes):
                plan.notes.append(f"{path}: its rank varies, not probed")
                continue
            for dim, size in enumerate(shape):
                if size is None:
                    continue
                sizes = tuple(
                    s["shape"][dim]
                    if s and s.get("shape") and len(s["shape"]) == len(shape)
                    else "-"
                    for s in seen
                )
                varied = len({x for x in sizes if x != "-"}) > 1
                member = Member(path, dim, int(size), varied)
                if member.key not in done:
                    members.append((member, sizes))
        elif leaf.get("kind") == "python" and leaf.get("type") in ("int", "float"):
            top = path.split("[", 1)[0].split(".", 1)[0]
            if passed.get(top) == "default" or "value" not in leaf or ("number", path) in done:
                continue
            plan.numbers.append(NumberCandidate(path, leaf["type"], leaf["value"]))
    plan.groups = _group(members)
    return plan


def _group(members: list[tuple[Member, tuple[Any, ...]]]) -> list[Group]:
    """Varied dimensions by their size history, fixed ones by (axis, size) across arguments."""
    varied: dict[tuple[Any, ...], list[Member]] = {}
    fixed: dict[tuple[int, int], list[Member]] = {}
    for member, sizes in members:
        if member.varied:
            varied.setdefault(sizes, []).append(member)
        else:
            fixed.setdefault((member.dim, member.size), []).append(member)
    groups = [Group(m) for m in varied.values()]
    by_axis = sorted(fixed.items(), key=lambda item: (item[0][0] != 0, item[0][0]))
    groups.extend(Group(m) for _, m in by_axis)
    return groups


@dataclass
class NumberTracker:
    """Values of one Python number argument, updated at each trace (never per call)."""

    type: str
    count: int = 0
    min: float | None = None
    max: float | None = None
    float32_exact: bool = True
    float32_keeps_digits: bool = True
    float32_max_abs_error: float = 0.0
    exceeds_int32: bool = False

    def add(self, value: int | float) -> None:
        self.count += 1
        self.min = value if self.min is None else min(self.min, value)
        self.max = value if self.max is None else max(self.max, value)
        rounded = to_float32(value)
        error = abs(rounded - value) if rounded is not None else float("inf")
        if error != 0.0:
            self.float32_exact = False
            self.float32_max_abs_error = max(self.float32_max_abs_error, error)
            if not float32_keeps_digits(value):
                self.float32_keeps_digits = False
        if self.type == "int" and not INT32_MIN <= value <= INT32_MAX:
            self.exceeds_int32 = True


def to_float32(value: int | float) -> float | None:
    """``value`` rounded to the nearest float32 (None beyond float32's range)."""
    try:
        return struct.unpack("f", struct.pack("f", float(value)))[0]
    except (OverflowError, struct.error):
        return None


def float32_keeps_digits(value: int | float) -> bool:
    """float32 keeps the value as written: its shortest decimal (at most 15 significant
    digits, so float64 noise such as 0.1 * 3 does not count) survives float32.

    True for 0.01, 1e-4, 3.0, 16777216; False for 1700000000.25 (a timestamp: float32
    steps by 128 there), 0.1234567891 or 2**31 + 1.
    """
    if isinstance(value, int):
        return to_float32(value) == value
    if value != value or value in (float("inf"), float("-inf")):
        return True
    written = float(f"{value:.15g}")
    rounded = to_float32(written)
    if rounded is None:
        return False
    for digits in range(1, 10):  # the shortest decimal that is the same float32
        text = f"{rounded:.{digits}g}"
        if to_float32(float(text)) == rounded:
            return float(text) == written
    return False


def python_numbers(path: str, value: Any) -> Iterator[tuple[str, int | float]]:
    """``(path, number)`` for every Python int or float (not bool) in a live argument,
    with the same paths as ``value_tree.leaves`` (namedtuple fields by name)."""
    t = type(value)
    if t is int or t is float:
        yield path, value
    elif isinstance(value, (tuple, list)):
        fields = getattr(value, "_fields", None) if isinstance(value, tuple) else None
        for i, item in enumerate(value[:64]):
            sub = f"{path}.{fields[i]}" if fields and i < len(fields) else f"{path}[{i}]"
            yield from python_numbers(sub, item)
    elif t is dict:
        for key, item in list(value.items())[:64]:
            yield from python_numbers(f"{path}[{str(key)!r}]", item)

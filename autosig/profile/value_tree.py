"""The one walker over a profile's recorded values.

A recorded argument (``profile.format``: ``{"kind": "tensor", ...}``, a Python scalar,
an object) may sit inside tuples, lists, namedtuples and dicts
(``{"kind": "tuple", "items": [...]}``, ``{"kind": "dict", "items": {key: ...}}``), and
a tf.distribute value holds one description per replica. Samples (``profile.samples``)
nest their array leaves the same way. Everything that goes into that nesting (inference,
``explain``, the probes, ``verify``, the samples) goes through this module: which items
a value holds (``children``), how a path names one (``step``), every leaf with its path
(``leaves``), every node (``nodes``), a copy with its leaves changed (``map_leaves``),
and the walk inference reads (``walk_calls``): each parameter's values over every call
signature, aligned item by item (``Place``) with their leaves, in one pass, and the
shapes seen at each place inside a parameter (``Recorded.shapes``). Pure
Python: no TensorFlow, so the static paths may use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from autosig.profile.format import TENSOR_KINDS, FunctionRecord, Value

SEQUENCES = ("tuple", "list", "namedtuple")
"""Containers whose ``items`` are a list."""
CONTAINERS = (*SEQUENCES, "dict")
"""Every container kind; ``dict``'s ``items`` map keys to values."""


def is_container(value: Any) -> bool:
    """A tuple, list, namedtuple or dict value (its items may be empty)."""
    return isinstance(value, dict) and value.get("kind") in CONTAINERS


def children(value: Any) -> list[tuple[Any, Value]]:
    """``(key, item)`` of a container value, in recorded order: the index in a tuple,
    list or namedtuple, the key in a dict; ``[]`` for a leaf (or not a value at all)."""
    if not isinstance(value, dict):
        return []
    kind = value.get("kind")
    if kind in SEQUENCES:
        return list(enumerate(value.get("items", [])))
    if kind == "dict":
        return list(value.get("items", {}).items())
    return []


def step(value: Value, key: Any, *, fields: bool = True) -> str:
    """How a path names the item ``key`` of ``value``: ``[0]``, ``['key']``, or a
    namedtuple's field name (``.x``; ``fields=False``: by index, ``[0]``)."""
    if value.get("kind") == "dict":
        return f"[{key!r}]"
    names = value.get("fields") if fields and value.get("kind") == "namedtuple" else None
    if names and key < len(names):
        return f".{names[key]}"
    return f"[{key}]"


def replicas_of(value: Any) -> list[Value] | None:
    """The per-replica descriptions of a recorded value, None for anything else."""
    if not isinstance(value, dict) or value.get("kind") != "object":
        return None
    replicas = value.get("replicas")
    if not isinstance(replicas, list) or not replicas:
        return None
    if not all(isinstance(r, dict) for r in replicas):
        return None
    return replicas


def leaves(value: Any, path: str = "", *, replicas: bool = False) -> Iterator[tuple[str, Any]]:
    """``(path, leaf)`` of every leaf inside ``value``, depth first in recorded order
    (paths as ``step`` names the items; ``replicas``: go into each replica of a
    tf.distribute value too, ``(replica i)``)."""
    for path_, node, leaf, _ in _walk(value, path, replicas, False):
        if leaf:
            yield path_, node


def nodes(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, node)`` of ``value`` and of every container and leaf inside it, each
    container before its items (a tf.distribute value is one node: its replicas are not
    entered)."""
    for path_, node, _, _ in _walk(value, path, False, False):
        yield path_, node


def _walk(
    value: Any, path: str, replicas: bool, in_replica: bool
) -> Iterator[tuple[str, Any, bool, bool]]:
    """``(path, node, is a leaf, inside a replica)``, depth first in recorded order."""
    if is_container(value):
        yield path, value, False, in_replica
        for key, item in children(value):
            yield from _walk(item, path + step(value, key), replicas, in_replica)
        return
    each = replicas_of(value) if replicas else None
    if each is None:
        yield path, value, True, in_replica
        return
    for index, replica in enumerate(each):
        yield from _walk(replica, f"{path}(replica {index})", replicas, True)


def is_distributed(value: Value) -> bool:
    """A tf.distribute value (PerReplica), or a tuple, list or dict (whole, not empty)
    holding only such values: one element of a distributed dataset."""
    for _, node in nodes(value):
        if is_container(node):
            if node.get("kind") == "namedtuple" or "length" in node or not children(node):
                return False
        elif replicas_of(node) is None:
            return False
    return True


def count_leaves(value: Any) -> int:
    """How many leaves ``value`` holds (an empty container counts as one)."""
    return sum(count_leaves(item) for _, item in children(value)) or 1


def map_leaves(value: Any, change: Callable[[Any], Any]) -> Any:
    """A copy of ``value`` with every leaf ``change``d (containers keep their other keys)."""
    if not isinstance(value, dict):
        return change(value)
    kind = value.get("kind")
    if kind in SEQUENCES:
        return {**value, "items": [map_leaves(v, change) for v in value["items"]]}
    if kind == "dict":
        return {**value, "items": {k: map_leaves(v, change) for k, v in value["items"].items()}}
    return change(value)


# -- the walk inference reads: one parameter over every call signature ---------------


@dataclass(frozen=True)
class Place:
    """One place of an argument (the argument itself, or an item inside it) as each
    call signature recorded it: what inference reads to find one spec for every call."""

    seen: list[tuple[Value, int]]
    """Its description in each call signature that passed it, with that signature's calls."""
    items: list[tuple[str, Any, Place]] | None = None
    """``(step, key, place)`` of the items inside it (dict keys sorted), when every call
    recorded the same kind of tuple, list or dict with the same length or keys, whole;
    None otherwise."""


@dataclass(frozen=True)
class RecordedLeaf:
    """A leaf of one call signature's value of a parameter."""

    path: str
    value: Value
    in_replica: bool
    """Inside one replica of a tf.distribute value (``leaves(..., replicas=True)``)."""


@dataclass(frozen=True)
class Recorded:
    """Every value one parameter was recorded with, walked once (``walk_calls``)."""

    seen: list[tuple[Value, int, str]]
    """``(description, calls, how it was passed)`` in each call signature that has it."""
    place: Place
    """The descriptions aligned item by item."""
    leaves: list[RecordedLeaf]
    """Every leaf of every description, in signature order, tf.distribute values opened."""
    always_container: bool
    """A tuple, list, namedtuple or dict in every call signature that has it."""
    distributed: bool
    """Only tf.distribute values (``is_distributed``) in every call signature that has it."""

    def shapes(self) -> dict[str, set[Any]]:
        """Place inside the parameter (a leaf's path) -> the shapes its tensor-like leaves
        (``TENSOR_KINDS``) were seen with, over every call signature (None: unknown rank)."""
        out: dict[str, set[Any]] = {}
        for leaf in self.leaves:
            if leaf.value.get("kind") in TENSOR_KINDS:
                shape = leaf.value.get("shape")
                shape = None if shape is None else tuple(shape)
                out.setdefault(leaf.path, set()).add(shape)
        return out


def walk_calls(record: FunctionRecord) -> dict[str, Recorded]:
    """Parameter -> its recorded values (every parameter some call signature has, in the
    order they first appear): the one walk over a function's values inference reads."""
    seen: dict[str, list[tuple[Value, int, str]]] = {}
    for signature in record.signatures:
        for name, value in signature.args.items():
            passed = signature.passed.get(name, "positional")
            seen.setdefault(name, []).append((value, signature.calls, passed))
    out: dict[str, Recorded] = {}
    for name, values in seen.items():
        found = [
            RecordedLeaf(path, node, in_replica)
            for value, _, _ in values
            for path, node, leaf, in_replica in _walk(value, "", True, False)
            if leaf
        ]
        out[name] = Recorded(
            seen=values,
            place=align([(v, c) for v, c, _ in values]),
            leaves=found,
            always_container=all(is_container(v) for v, _, _ in values),
            distributed=all(is_distributed(v) for v, _, _ in values),
        )
    return out


def align(seen: list[tuple[Value, int]]) -> Place:
    """``seen`` (one argument's description in each call, with its calls) aligned item by
    item wherever every call recorded the same container layout."""
    if not seen or not all(_layout(v) is not None for v, _ in seen):
        return Place(seen)
    first = seen[0][0]
    if any(_layout(v) != _layout(first) for v, _ in seen):
        return Place(seen)
    keys = [key for key, _ in children(first)]
    if first.get("kind") == "dict":
        keys = sorted(keys)
    by_key = [(dict(children(v)), c) for v, c in seen]
    items = []
    for key in keys:
        sub = [(found[key], c) for found, c in by_key]
        items.append((step(first, key), key, align(sub)))
    return Place(seen, items)


def _layout(value: Any) -> tuple[Any, ...] | None:
    """What must match for items to align: kind, and length or keys (a namedtuple: its
    type and fields too); None for a leaf or a container recorded only in part."""
    if not is_container(value) or "length" in value:
        return None
    kind = value.get("kind")
    keys = [key for key, _ in children(value)]
    if kind == "dict":
        return (kind, tuple(sorted(keys)))
    if kind == "namedtuple":
        return (kind, value.get("type"), tuple(value.get("fields") or ()), len(keys))
    return (kind, len(keys))

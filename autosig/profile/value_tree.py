"""The one walker over a profile's recorded values.

A recorded argument (``profile.format``: ``{"kind": "tensor", ...}``, a Python scalar,
an object) may sit inside tuples, lists, namedtuples and dicts
(``{"kind": "tuple", "items": [...]}``, ``{"kind": "dict", "items": {key: ...}}``), and
a tf.distribute value holds one description per replica. Samples (``profile.samples``)
nest their array leaves the same way. Everything that goes into that nesting (inference,
``explain``, the probes, ``verify``, the samples) goes through this module: which items
a value holds (``children``), how a path names one (``step``), every leaf with its path
(``leaves``), a copy with its leaves changed (``map_leaves``). Pure Python: no
TensorFlow, so the static paths may use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from autosig.profile.format import Value

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
    if is_container(value):
        for key, item in children(value):
            yield from leaves(item, path + step(value, key), replicas=replicas)
        return
    each = replicas_of(value) if replicas else None
    if each is None:
        yield path, value
        return
    for index, replica in enumerate(each):
        yield from leaves(replica, f"{path}(replica {index})", replicas=replicas)


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

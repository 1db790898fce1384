"""The one walker over a profile's recorded values (``autosig.profile.value_tree``)."""

from __future__ import annotations

import ast
from pathlib import Path

from autosig.profile.value_tree import children, count_leaves, leaves, map_leaves, step

T = {"kind": "tensor", "shape": [2], "dtype": "float32"}
P = {"kind": "python", "type": "int", "value": 3}
POINT = {"kind": "namedtuple", "type": "m.Point", "fields": ["x", "y"], "items": [T, P]}
NESTED = {"kind": "dict", "items": {"a": {"kind": "list", "items": [T, POINT]}, "b": P}}
REPLICAS = {"kind": "object", "type": "PerReplica", "replicas": [T, T]}


def test_leaves_with_their_paths() -> None:
    assert list(leaves(NESTED, "x")) == [
        ("x['a'][0]", T),
        ("x['a'][1].x", T),
        ("x['a'][1].y", P),
        ("x['b']", P),
    ]
    empty = {"kind": "tuple", "items": []}
    assert list(leaves(empty, "e")) == []  # an empty container has no leaf
    assert count_leaves(empty) == 1 and count_leaves(NESTED) == 4


def test_replicas_only_when_asked() -> None:
    value = {"kind": "tuple", "items": [REPLICAS]}
    assert list(leaves(value)) == [("[0]", REPLICAS)]
    assert list(leaves(value, replicas=True)) == [("[0](replica 0)", T), ("[0](replica 1)", T)]


def test_children_step_and_map() -> None:
    assert children(POINT) == [(0, T), (1, P)] and children(T) == []
    assert step(POINT, 1) == ".y" and step(POINT, 1, fields=False) == "[1]"
    assert step(NESTED, "a") == "['a']"
    doubled = map_leaves(NESTED, lambda leaf: {**leaf, "seen": True})
    assert [leaf["seen"] for _, leaf in leaves(doubled)] == [True] * 4
    assert doubled["items"]["a"]["kind"] == "list" and "seen" not in doubled


OTHER_FORMATS = {
    "profile/probe/scheduler.py",  # the probe's messages, not recorded values
    "verify/effects_compare.py",  # effect digests ({"k": ...}), not recorded values
}


def test_no_other_module_walks_recorded_containers_by_hand() -> None:
    """Only the walker iterates a recorded value's items; a module that needs the
    nesting asks ``value_tree`` (``children``, ``leaves``, ``map_leaves``)."""
    root = Path(__file__).resolve().parent.parent / "autosig"
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "value_tree.py" or path.relative_to(root).as_posix() in OTHER_FORMATS:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            # `for ... in value["items"]` / `value.get("items", ...)` iterated directly
            if isinstance(node, (ast.For, ast.comprehension)):
                target = node.iter
                if isinstance(target, ast.Call) and isinstance(target.func, ast.Attribute):
                    if target.func.attr in ("items", "values") and _is_items(target.func.value):
                        offenders.append(f"{path.relative_to(root)}:{node.iter.lineno}")
                elif _is_items(target):
                    offenders.append(f"{path.relative_to(root)}:{target.lineno}")
    assert offenders == []


def _is_items(node: ast.AST) -> bool:
    """``x["items"]`` or ``x.get("items", ...)``."""
    if isinstance(node, ast.Subscript):
        key = node.slice
        return isinstance(key, ast.Constant) and key.value == "items"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return (
            node.func.attr == "get"
            and bool(node.args)
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "items"
        )
    return False

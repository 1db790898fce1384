"""The one walker over a profile's recorded values (``autosig.profile.value_tree``)."""

from __future__ import annotations

import ast
from pathlib import Path

from autosig.profile.format import CallSignature, FunctionRecord, ParamInfo
from autosig.profile.value_tree import (
    align,
    children,
    count_leaves,
    is_distributed,
    leaves,
    map_leaves,
    nodes,
    step,
    walk_calls,
)

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


def test_nodes_containers_before_their_items() -> None:
    assert [path for path, _ in nodes(NESTED, "x")] == [
        "x",
        "x['a']",
        "x['a'][0]",
        "x['a'][1]",
        "x['a'][1].x",
        "x['a'][1].y",
        "x['b']",
    ]
    assert list(nodes(REPLICAS)) == [("", REPLICAS)]  # replicas are not entered


def test_distributed_values() -> None:
    assert is_distributed(REPLICAS)
    assert is_distributed({"kind": "dict", "items": {"a": REPLICAS, "b": REPLICAS}})
    assert not is_distributed({"kind": "tuple", "items": [REPLICAS, T]})
    assert not is_distributed({"kind": "tuple", "items": []})
    assert not is_distributed({"kind": "tuple", "items": [REPLICAS], "length": 40})
    assert not is_distributed({**POINT, "items": [REPLICAS, REPLICAS]})
    assert not is_distributed(T)


def test_align_items_only_where_every_call_has_the_layout() -> None:
    a = {"kind": "dict", "items": {"b": P, "a": T}}
    b = {"kind": "dict", "items": {"a": T, "b": T}}
    place = align([(a, 2), (b, 3)])
    assert place.items is not None
    assert [(s, k) for s, k, _ in place.items] == [("['a']", "a"), ("['b']", "b")]
    assert place.items[1][2].seen == [(P, 2), (T, 3)] and place.items[1][2].items is None
    longer = {"kind": "dict", "items": {"a": T, "b": T, "c": T}}
    assert align([(a, 1), (longer, 1)]).items is None
    assert (
        align([({"kind": "list", "items": [T]}, 1), ({"kind": "tuple", "items": [T]}, 1)]).items
        is None
    )
    assert align([({"kind": "list", "items": [T], "length": 50}, 1)]).items is None
    assert align([(T, 1)]).items is None


def test_walk_calls_reads_each_parameter_once() -> None:
    signatures = [
        CallSignature({"x": NESTED, "d": REPLICAS}, {"x": "positional"}, calls=2),
        CallSignature({"x": NESTED}, {"x": "keyword"}, calls=1),
    ]
    params = [ParamInfo("x", "POSITIONAL_OR_KEYWORD"), ParamInfo("d", "POSITIONAL_OR_KEYWORD")]
    record = FunctionRecord("m.py", "m.f", 1, None, True, params, signatures=signatures)
    walked = walk_calls(record)
    assert list(walked) == ["x", "d"]
    x, d = walked["x"], walked["d"]
    assert [(c, p) for _, c, p in x.seen] == [(2, "positional"), (1, "keyword")]
    assert x.always_container and not x.distributed
    assert [leaf.path for leaf in x.leaves] == ["['a'][0]", "['a'][1].x", "['a'][1].y", "['b']"] * 2
    assert d.distributed and not d.always_container
    assert [(leaf.path, leaf.in_replica) for leaf in d.leaves] == [
        ("(replica 0)", True),
        ("(replica 1)", True),
    ]


def test_recorded_shapes_by_place() -> None:
    wide = {"kind": "tensor", "shape": [3], "dtype": "float32"}
    unknown = {"kind": "numpy", "shape": None, "dtype": "float64"}
    signatures = [
        CallSignature({"x": {"kind": "tuple", "items": [T, P]}, "d": REPLICAS}, {}, calls=2),
        CallSignature({"x": {"kind": "tuple", "items": [wide, unknown]}, "n": P}, {}, calls=1),
    ]
    params = [ParamInfo(name, "POSITIONAL_OR_KEYWORD") for name in ("x", "d", "n")]
    record = FunctionRecord("m.py", "m.f", 1, None, True, params, signatures=signatures)
    walked = walk_calls(record)
    assert walked["x"].shapes() == {"[0]": {(2,), (3,)}, "[1]": {None}}
    assert walked["d"].shapes() == {"(replica 0)": {(2,)}, "(replica 1)": {(2,)}}
    assert walked["n"].shapes() == {}


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


def test_explain_diffs_nested_structures_item_by_item() -> None:
    """``explain``'s differ walks structures through ``children``: paths, order, wording."""
    from autosig.explain.retraces import diff_values

    t3 = {**T, "shape": [3]}
    point = {**POINT, "items": [t3, P]}
    a = {"kind": "dict", "items": {"a": {"kind": "list", "items": [T, POINT]}, "b": P}}
    b = {"kind": "dict", "items": {"a": {"kind": "list", "items": [t3, point]}, "b": P}}
    assert [(c.param, c.what) for c in diff_values("x", a, b)] == [
        ("x['a'][0]", "shape"),
        ("x['a'][1].x", "shape"),
    ]
    longer = {"kind": "list", "items": [T, T, T]}
    assert [c.text for c in diff_values("y", {"kind": "list", "items": [T]}, longer)] == [
        "y: list of 1 -> 3 items"
    ]
    more_keys = {"kind": "dict", "items": {"a": T, "c": T}}
    changes = diff_values("z", {"kind": "dict", "items": {"a": T, "b": T}}, more_keys)
    assert [c.text for c in changes] == ["z: keys added 'c'; keys removed 'b'"]

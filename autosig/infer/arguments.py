"""One argument's observations -> what it allows: dispatch on its kind, recurse into structures.

Tuples, lists and dicts get a spec of the same structure when every item has one and the
structure never changed; the first item that blocks a signature blocks the argument, and
the item that varied most names the cause. Objects, variables and namedtuples block here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from autosig.infer.leaf import Leaf, mixed_kinds_leaf
from autosig.infer.python_values import nested_python_leaf, python_leaf
from autosig.infer.spec_objects import spec_object_leaf
from autosig.infer.tensors import composite_leaf, tensor_leaf
from autosig.infer.values import Observation
from autosig.infer.wording import plural
from autosig.specs import DictNode, ListNode, TupleNode


def infer_leaf(observations: Sequence[Observation], where: str, relax: str, nested: bool) -> Leaf:
    """What ``observations`` of one argument allow; ``where`` names it in messages."""
    kinds = {v.get("kind") for v, _ in observations}
    total = sum(c for _, c in observations)
    if "variable" in kinds:
        return Leaf(
            blocker=f"{where} is a tf.Variable: a signature would pass a copy of its value "
            "(assignments inside the function would fail)",
            evidence=[f"tf.Variable in {plural(total, 'call')}"],
        )
    if kinds <= {"tensor", "numpy"}:
        return tensor_leaf(observations, where, relax)
    if kinds == {"ragged"} or kinds == {"sparse"}:
        return composite_leaf(observations, where, relax, kinds.pop())
    if kinds == {"object"}:
        types = Counter(str(v.get("type")) for v, _ in observations)
        name = ", ".join(types)
        if all("spec" in v for v, _ in observations):
            return spec_object_leaf(observations, where, name)
        return Leaf(
            blocker=f"{where} is a Python object ({name}): it cannot be described by a spec",
            findings=[("AS204", f"{where} is a Python object ({name})")],
            evidence=[f"object {name}"],
            cause=f"{where} is a Python object ({name})",
            object_type=name,
        )
    if kinds == {"namedtuple"}:
        return Leaf(
            blocker=f"{where} is a namedtuple: autosig does not write namedtuple specs",
            evidence=["namedtuple"],
        )
    if kinds <= {"tuple", "list", "dict"} and len(kinds) == 1:
        return _container_leaf(observations, where, relax, kinds.pop())
    if "python" in kinds and kinds <= {"python", "tensor", "numpy"}:
        if nested:
            return nested_python_leaf(observations, where)
        return python_leaf(observations, where)
    return mixed_kinds_leaf(observations, where, len(kinds))


def _container_leaf(observations: Sequence[Observation], where: str, relax: str, kind: str) -> Leaf:
    layouts: Counter[str] = Counter()
    for value, calls in observations:
        items = value.get("items")
        if "length" in value:
            layouts[f"more than {len(items or ())} items"] += calls
        elif kind == "dict":
            layouts["keys " + ", ".join(sorted(items or {}))] += calls
        else:
            layouts[plural(len(items or ()), "item")] += calls
    if len(layouts) > 1 or any(label.startswith("more than") for label in layouts):
        listing = "; ".join(f"{label} ({plural(n, 'call')})" for label, n in layouts.most_common())
        return Leaf(
            blocker=f"{where} is a {kind} whose structure varies or is too long to describe: {listing}",
            evidence=[listing],
            cause=f"{where} changes structure",
            variety=len(layouts),
        )
    first = observations[0][0]["items"]
    parts: list[tuple[Any, Leaf]] = []
    if kind == "dict":
        for key in sorted(first):
            sub = [(v["items"][key], c) for v, c in observations]
            parts.append((key, infer_leaf(sub, f"{where}[{key!r}]", relax, nested=True)))
    else:
        for index in range(len(first)):
            sub = [(v["items"][index], c) for v, c in observations]
            parts.append((index, infer_leaf(sub, f"{where}[{index}]", relax, nested=True)))
    leaf = Leaf(variety=1)
    for _, part in parts:
        leaf.findings.extend(part.findings)
        leaf.dims |= part.dims
        leaf.rank_varies |= part.rank_varies
        leaf.object_type = leaf.object_type or part.object_type
        if part.blocker and not leaf.blocker:
            leaf.blocker = part.blocker
        if part.cause and (leaf.cause is None or part.variety > leaf.variety):
            leaf.cause, leaf.variety = part.cause, part.variety
    varied = [f"[{k!r}] {'; '.join(p.evidence)}" for k, p in parts if p.cause or p.blocker]
    total = sum(c for _, c in observations)
    leaf.evidence = [
        f"{kind} of {plural(len(parts), 'item')}, {plural(total, 'call')}"
        + (": " + " | ".join(varied) if varied else ", every item constant")
    ]
    if leaf.blocker is None:
        specs = [p.spec for _, p in parts]
        if all(s is not None for s in specs):
            if kind == "dict":
                leaf.spec = DictNode(
                    tuple((str(k), p.spec) for k, p in parts if p.spec is not None)
                )
            elif kind == "tuple":
                leaf.spec = TupleNode(tuple(s for s in specs if s is not None))
            else:
                leaf.spec = ListNode(tuple(s for s in specs if s is not None))
    return leaf

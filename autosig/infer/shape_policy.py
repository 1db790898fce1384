"""Which dimensions a signature may leave free, decided from the shape-use analysis.

The profile says which dimensions varied; it cannot say which sizes the original code
accepts beyond those it saw. A dimension that never varied is at risk when a later
call could bring another size the original handled: the leading (batch) dimension, any
dimension of a method's argument (one signature serves every instance of the class) and
any dimension seen in only a few calls. Such a dimension is freed (``None``) only when
the analysis proves no static read of it; otherwise it stays fixed and the fix is
*unsafe* (a signature would reject sizes the original accepted), with the evidence.

A dimension that varied but is read statically cannot be freed (the read would see
``None``) nor fixed (observed calls would be rejected): the function gets neither a
signature nor ``reduce_retracing``, and the reason names the line. A read that steers
Python control flow forbids any free dimension in that function.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from autosig.discover import FunctionSite
from autosig.infer.params import ParamResult
from autosig.infer.source import Source
from autosig.infer.wording import plural
from autosig.profile.format import TENSOR_KINDS, FunctionRecord, Value
from autosig.project_modules import ModuleResolver
from autosig.shape_use import (
    ShapeRead,
    ShapeUse,
    autograph_enabled,
    callee_reads_dim,
    shape_use,
)
from autosig.specs import (
    DictNode,
    ListNode,
    RaggedSpecNode,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    TupleNode,
)

MIN_CALLS = 8
"""Fewer calls than this do not show that a dimension is constant."""

AUTO = "auto"

RANDOM_REASON = (
    "it draws stateful random numbers ({draws}): each trace keeps its own random state, "
    "so tracing fewer times changes the numbers drawn (tf.random.stateless_* and "
    "tf.random.Generator are unaffected)"
)


@dataclass
class ShapeDecision:
    """What the shape-use analysis allows for one function."""

    use: ShapeUse
    blockers: list[str] = field(default_factory=list)
    """Why no relaxed trace at all (neither a signature nor reduce_retracing)."""
    warnings: list[str] = field(default_factory=list)
    """Dimensions kept fixed without proof: the signature is an unsafe fix."""
    relaxed: list[str] = field(default_factory=list)
    """Dimensions freed because no static read of them was found (for the evidence)."""
    random_reason: str | None = None
    shape_varies: bool = False
    """Some tensor dimension (or rank) varied between the profiled calls."""

    @property
    def reduce_retracing_blockers(self) -> list[str]:
        """Definite static reads: reduce_retracing would relax those dimensions too."""
        out = list(self.blockers)
        for reads in self.use.reads.values():
            definite = [read for read in reads if read.definite]
            if definite:
                out.append(definite[0].against_reduce_retracing())
        return out


def _tensor_shapes(value: Value, path: str = "") -> Iterator[tuple[str, Any]]:
    """(where in the argument, shape) of every tensor inside one recorded value."""
    kind = value.get("kind")
    if kind in TENSOR_KINDS:
        shape = value.get("shape")
        yield path, None if shape is None else tuple(shape)
    items = value.get("items")
    if isinstance(items, dict):
        for key, item in items.items():
            yield from _tensor_shapes(item, f"{path}[{key!r}]")
    elif isinstance(items, list):
        for index, item in enumerate(items):
            yield from _tensor_shapes(item, f"{path}[{index}]")


def tensor_shapes(record: FunctionRecord) -> dict[str, dict[str, set[Any]]]:
    """Parameter -> place inside it -> the shapes seen there, over every call signature."""
    out: dict[str, dict[str, set[Any]]] = {}
    for signature in record.signatures:
        for name, value in signature.args.items():
            for path, shape in _tensor_shapes(value):
                out.setdefault(name, {}).setdefault(path, set()).add(shape)
    return out


def decide_shapes(
    source: Source,
    site: FunctionSite,
    record: FunctionRecord,
    results: list[ParamResult],
    policies: dict[str, str],
    modules: ModuleResolver | None = None,
) -> ShapeDecision:
    """Apply the shape policy to every tensor parameter's spec (``results`` are updated).

    ``policies`` maps a parameter to its relax policy (``auto``, ``none``, ``batch``,
    ``all``); specs arrive relaxed by ``batch``/``all`` already and unrelaxed for
    ``auto``/``none``.
    """
    shapes = tensor_shapes(record)
    carriers = [r for r in results if r.info.name in shapes]
    tensors = [r for r in carriers if r.spec is not None and r.leaf.python is None]
    ranks: dict[str, int | None] = {}
    for r in carriers:
        seen = shapes[r.info.name].get("", set())
        lengths = {None if s is None else len(s) for s in seen}
        if len(lengths) == 1 and None not in lengths and len(shapes[r.info.name]) == 1:
            ranks[r.info.name] = lengths.pop()
    assert source.wrapper is not None and site.function is not None
    names = [r.info.name for r in carriers]
    autograph = autograph_enabled(site.site.decorator_args)
    use = shape_use(source.wrapper, site.function, names, ranks, autograph, modules)
    decision = ShapeDecision(use=use)
    decision.shape_varies = any(
        len(seen) > 1 for places in shapes.values() for seen in places.values()
    )
    if use.random_draws:
        draws = ", ".join(d.describe() for d in use.random_draws[:2])
        decision.random_reason = RANDOM_REASON.format(draws=draws)
    control = use.control()
    few_calls = record.calls < MIN_CALLS
    for r in tensors:
        assert r.spec is not None
        name = r.info.name
        reads = use.reads.get(name, [])
        nested = not isinstance(r.spec, (TensorSpecNode, RaggedSpecNode, SparseSpecNode))
        policy = policies.get(name, AUTO)
        new_leaves: dict[int, Shape] = {}
        for index, leaf in enumerate(_leaves(r.spec)):
            shape = leaf.shape
            definite = [x for x in reads if x.definite]
            if shape is None:
                if definite or control:
                    decision.blockers.append(_conflict(name, None, (definite or control)[0]))
                continue
            new_shape = list(shape)
            for dim, size in enumerate(shape):
                dim_reads = [x for x in reads if nested or callee_reads_dim(x, dim)]
                hard = [x for x in dim_reads if x.definite]
                label = _dim_label(name, dim, nested)
                if size is None:
                    if hard or control:
                        decision.blockers.append(_conflict(label, dim, (hard or control)[0]))
                    continue
                if policy != AUTO:
                    if _at_risk(dim, site, few_calls):
                        why = f"relax={policy} keeps it fixed"
                        decision.warnings.append(_pinned(label, size, record.calls, why))
                    continue
                if not _at_risk(dim, site, few_calls):
                    continue
                blocking = dim_reads or control
                if blocking:
                    decision.warnings.append(
                        _pinned(label, size, record.calls, blocking[0].describe())
                    )
                    continue
                new_shape[dim] = None
                decision.relaxed.append(label)
            if tuple(new_shape) != tuple(shape):
                new_leaves[index] = tuple(new_shape)
        if new_leaves:
            r.spec = _replace_leaves(r.spec, new_leaves)
    return decision


Shape = tuple[int | None, ...] | None
Leaf = TensorSpecNode | RaggedSpecNode | SparseSpecNode


def _leaves(spec: SpecNode) -> Iterator[Leaf]:
    if isinstance(spec, (TensorSpecNode, RaggedSpecNode, SparseSpecNode)):
        yield spec
    elif isinstance(spec, (TupleNode, ListNode)):
        for item in spec.items:
            yield from _leaves(item)
    elif isinstance(spec, DictNode):
        for _, item in spec.items:
            yield from _leaves(item)


def _replace_leaves(spec: SpecNode, shapes: dict[int, Shape]) -> SpecNode:
    counter = iter(range(1_000_000))

    def walk(node: SpecNode) -> SpecNode:
        if isinstance(node, (TensorSpecNode, RaggedSpecNode, SparseSpecNode)):
            index = next(counter)
            return dataclasses.replace(node, shape=shapes[index]) if index in shapes else node
        if isinstance(node, TupleNode):
            return TupleNode(tuple(walk(i) for i in node.items))
        if isinstance(node, ListNode):
            return ListNode(tuple(walk(i) for i in node.items))
        if isinstance(node, DictNode):
            return DictNode(tuple((k, walk(v)) for k, v in node.items))
        return node

    return walk(spec)


def _at_risk(dim: int, site: FunctionSite, few_calls: bool) -> bool:
    return dim == 0 or site.site.is_method or few_calls


def _dim_label(name: str, dim: int, nested: bool) -> str:
    return f"`{name}` (a dimension {dim} inside it)" if nested else f"`{name}` dimension {dim}"


def _conflict(label: str, dim: int | None, read: ShapeRead) -> str:
    what = "its rank varies" if dim is None else "it varies between calls"
    return (
        f"{label}: {what}, but {read.describe()}: a relaxed trace would make it None "
        "(no signature and no reduce_retracing; compute it with tf.shape() instead)"
    )


def _pinned(label: str, size: int, calls: int, why: str) -> str:
    return (
        f"{label} seen only as {size} in {plural(calls, 'call')} and kept fixed ({why}): "
        "the signature rejects other sizes the original accepts"
    )

"""Which dimensions a signature may leave free (None), and which it must keep fixed.

One that varied between the profiled calls is None unless the code reads it statically
(then neither a signature nor ``reduce_retracing`` is safe, and the plan says why). One
that never varied is at risk when a later call could bring another size the original
handled (the batch dimension, any dimension of a method's argument, any dimension seen
in only a few calls): it is freed only when the shape-use analysis
(``analysis/shape_reads.py``) finds no static read of it, or when the read can become
``tf.shape(x)[i]`` (``shape_rewrites.py``); else it is kept fixed and the fix is
*unsafe*, with the evidence. Any other never-varied dimension is freed when nothing
reads it, else kept fixed as an unsafe fix unless the probes found the code fixes it. A read that steers Python control flow forbids any free
dimension.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

from autosig.analysis.module_view import ModuleView
from autosig.analysis.project_writes import OtherFiles
from autosig.analysis.shape_reads import ShapeRead, ShapeUse, autograph_enabled, shape_use
from autosig.infer.observations import ParamResult
from autosig.infer.observed import Observed
from autosig.infer.plan import Blocker, ShapeRewrite
from autosig.infer.probe_evidence import DimProof, ProbeProofs
from autosig.infer.shape_rewrites import choose_rewrites
from autosig.infer.specs import (
    DictNode,
    ListNode,
    RaggedSpecNode,
    Shape,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    TupleNode,
)
from autosig.profile.format import FunctionRecord
from autosig.source.discover import FunctionSite, Source
from autosig.source.project_modules import ModuleResolver
from autosig.text import plural

MIN_CALLS = 8
"""Fewer calls than this: every never-varied dimension is one to free (where nothing
reads it), not only the batch dimension and a method argument's. Whatever the profile
length, a never-varied dimension kept fixed makes the signature an unsafe fix unless the
probes found it fixed by the code (review21 p5, p13b: a padded_batch length seen in 10
calls was kept fixed in a signature labelled safe)."""


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
    blockers: list[Blocker] = field(default_factory=list)
    """Why no relaxed trace at all (neither a signature nor reduce_retracing)."""
    warnings: list[str] = field(default_factory=list)
    """Dimensions kept fixed without proof: the signature is an unsafe fix."""
    relaxed: list[str] = field(default_factory=list)
    """Dimensions freed because no static read of them was found (for the evidence)."""
    relaxed_warnings: list[str] = field(default_factory=list)
    """Varied dimensions the probes found read although the relaxed trace builds: any
    relaxed trace (signature or reduce_retracing) is an unsafe fix."""
    proven: list[str] = field(default_factory=list)
    """Dimensions freed or kept fixed on the probes' evidence, with it (for the reasons)."""
    random_reason: str | None = None
    state_reason: str | None = None
    """Python state read while tracing that the project changes (``trace_state``)."""
    shape_varies: bool = False
    """Some tensor dimension (or rank) varied between the profiled calls."""
    rewrites: list[ShapeRewrite] = field(default_factory=list)
    """Static reads rewritten to ``tf.shape()`` so their dimension can be None."""

    @property
    def reduce_retracing_blockers(self) -> list[str]:
        """Definite static reads: reduce_retracing would relax those dimensions too."""
        out = [b.reason for b in self.blockers]
        for reads in self.use.reads.values():
            definite = [read for read in reads if read.definite]
            if definite:
                out.append(definite[0].against_reduce_retracing())
        return out


def decide_shapes(
    source: Source,
    site: FunctionSite,
    record: FunctionRecord,
    observed: Observed,
    policies: dict[str, str],
    proofs: ProbeProofs,
    modules: ModuleResolver | None = None,
) -> ShapeDecision:
    """Apply the shape policy to every tensor parameter's spec (``observed.results`` are
    updated; ``observed``: the observation stage's facts, the shapes seen among them;
    ``proofs``: what the probes proved, ``probe_evidence.probe_proofs``).

    ``policies`` maps a parameter to its relax policy (``auto``, ``none``, ``batch``,
    ``all``); specs arrive relaxed by ``batch``/``all`` already and unrelaxed for
    ``auto``/``none``.
    """
    shapes = observed.shapes
    carriers = [r for r in observed.results if r.info.name in shapes]
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
    structures = [n for n in names if n in observed.containers]
    few_calls = record.calls < MIN_CALLS
    to_free, varying, dense = _wanted_free(tensors, policies, site, few_calls)
    if site.decorator is None:
        to_free = set()  # tf.function(f): f stays a Python function others may call as is
    # each tensor parameter's leaves (the probes' path, spec), before any spec changes
    places = {id(r): list(_leaf_paths(r.spec, r.info.name)) for r in tensors}
    project, display = _project_of(modules)
    view = ModuleView(source.wrapper, modules)  # one view of the module for both questions
    use = shape_use(
        view, site.function, names, ranks, autograph, structures, project=project, display=display
    )
    dynamic = choose_rewrites(
        view, site.function, use, to_free, varying, dense, autograph=autograph
    )
    before = use  # the reads of dimensions no rewrite frees stay in the code
    use = dynamic.without_rewritten(use)
    decision = ShapeDecision(use=use, rewrites=dynamic.rewrites)
    decision.shape_varies = any(
        len(seen) > 1 for places in shapes.values() for seen in places.values()
    )
    if use.random_draws:
        draws = ", ".join(d.describe() for d in use.random_draws[:2])
        decision.random_reason = RANDOM_REASON.format(draws=draws)
    elif record.probe is not None and record.probe.random is not None:
        hidden = record.probe.random.hidden
        if hidden:
            ops = ", ".join(hidden[:3]) + (", ..." if len(hidden) > 3 else "")
            draws = f"probe: the steady-state graph has the stateful random ops {ops}"
            decision.random_reason = RANDOM_REASON.format(draws=draws)
    decision.state_reason = use.state_reason
    control = use.control()
    choices: list[_Choice] = []
    relaxed: set[tuple[str, int]] = set()
    """Every dimension a relaxed trace leaves None (the probes' path, the dimension)."""
    rewriting = bool(dynamic.rewrites)
    """The probes traced the original code: once static reads are rewritten to
    ``tf.shape()``, what they found read no longer describes the code the fix writes."""
    for r in tensors:
        assert r.spec is not None
        name = r.info.name
        reads = use.reads.get(name, [])
        nested = not isinstance(r.spec, (TensorSpecNode, RaggedSpecNode, SparseSpecNode))
        policy = policies.get(name, AUTO)
        for index, (path, leaf) in enumerate(places[id(r)]):
            shape = leaf.shape
            definite = [x for x in reads if x.definite]
            if shape is None:
                if definite or control:
                    decision.blockers.append(_conflict(name, name, None, (definite or control)[0]))
                continue
            for dim, size in enumerate(shape):
                dim_reads = [x for x in reads if nested or x.reads_dim(dim)]
                hard = [x for x in dim_reads if x.definite]
                label = _dim_label(name, dim, nested)
                proof = proofs.dims.get((path, dim))
                if proof is not None and proof.evidence.verdict == "read" and rewriting:
                    proof = None  # a read of the code before the rewrite: the static rules decide
                if size is None:
                    if hard or control:
                        decision.blockers.append(_conflict(name, label, dim, (hard or control)[0]))
                    elif proof is not None and proof.evidence.verdict == "read":
                        if proof.evidence.relaxed_builds is False:
                            decision.blockers.append(_probed_conflict(name, label, proof))
                        else:
                            decision.relaxed_warnings.append(_probed_read(label, proof))
                    relaxed.add((path, dim))
                    continue
                if policy != AUTO:
                    if _at_risk(dim, site, few_calls):
                        why = f"relax={policy} keeps it fixed"
                        decision.warnings.append(_pinned(label, size, record.calls, why))
                    continue
                at_risk = _at_risk(dim, site, few_calls)
                if proof is not None and not hard and not control:
                    choice = _Choice(r, index, dim, label, size, proof=proof, at_risk=at_risk)
                    choices.append(choice)
                    if proof.relax:
                        relaxed.add((path, dim))
                    continue
                if not at_risk:
                    # no profile length shows a dimension constant (review21 p5, p13b):
                    # freed if nothing reads it, else kept fixed as an unsafe fix
                    kept = [x for x in before.reads.get(name, []) if nested or x.reads_dim(dim)]
                    if kept or control:
                        why = (kept or control)[0].describe()
                        decision.warnings.append(_pinned(label, size, record.calls, why))
                    else:
                        choices.append(_Choice(r, index, dim, label, size, at_risk=True))
                        relaxed.add((path, dim))
                    continue
                blocking = dim_reads or control
                if blocking:
                    decision.warnings.append(
                        _pinned(label, size, record.calls, blocking[0].describe())
                    )
                    continue
                choices.append(_Choice(r, index, dim, label, size, at_risk=True))
                relaxed.add((path, dim))
    _untie(choices, relaxed)
    new_shapes: dict[int, dict[int, list[Shape]]] = {}
    for choice in choices:
        _apply(choice, decision, record.calls, new_shapes)
    for r in tensors:
        assert r.spec is not None
        leaves = new_shapes.get(id(r))
        if leaves:
            r.spec = _replace_leaves(r.spec, {i: tuple(s) for i, s in leaves.items()})
    return decision


@dataclass
class _Choice:
    """One dimension that never varied, and whether the signature leaves it None."""

    result: ParamResult
    leaf: int
    dim: int
    label: str
    size: int
    proof: DimProof | None = None
    """The probes' evidence it rests on; None: no static read was found (today's rule)."""
    at_risk: bool = False
    untied: str | None = None
    """A tied dimension that stays fixed, so this one must too."""

    @property
    def relax(self) -> bool:
        return self.untied is None and (self.proof is None or self.proof.relax)


def _untie(choices: list[_Choice], relaxed: set[tuple[str, int]]) -> None:
    """Dimensions probed together are free only together: while a relaxed one has a tie
    that stays fixed, keep it fixed too."""
    changed = True
    while changed:
        changed = False
        for c in choices:
            if c.proof is None or not c.relax:
                continue
            missing = [label for key, label in c.proof.tied.items() if key not in relaxed]
            if missing:
                c.untied = missing[0]
                relaxed.discard((c.proof.evidence.param, c.dim))
                changed = True


def _apply(
    choice: _Choice,
    decision: ShapeDecision,
    calls: int,
    new_shapes: dict[int, dict[int, list[Shape]]],
) -> None:
    proof = choice.proof
    if choice.relax:
        leaf = list(_leaf_shape(choice.result.spec, choice.leaf))
        shapes = new_shapes.setdefault(id(choice.result), {})
        shape = shapes.setdefault(choice.leaf, leaf)
        shape[choice.dim] = None
        if proof is None:
            decision.relaxed.append(choice.label)
        else:
            decision.proven.append(f"{choice.label} None ({proof.why})")
        return
    assert proof is not None
    if choice.untied is not None:
        why = f"{proof.why}, but only together with {choice.untied}, which stays fixed"
    else:
        why = proof.why
    if proof.pin_safe and choice.untied is None:
        decision.proven.append(f"{choice.label} kept at {choice.size} ({why})")
    else:  # whatever the profile length (review21 p5, p13b)
        decision.warnings.append(_pinned(choice.label, choice.size, calls, why))


def _leaf_shape(spec: SpecNode | None, index: int) -> Shape:
    assert spec is not None
    leaf = list(_leaves(spec))[index]
    assert leaf.shape is not None
    return leaf.shape


TensorLeaf = TensorSpecNode | RaggedSpecNode | SparseSpecNode


def _project_of(modules: ModuleResolver | None) -> tuple[OtherFiles | None, str]:
    """The traced file's other project files and its name, from its module resolver."""
    origin = getattr(modules, "origin", None)
    if origin is None:
        return None, "this file"
    return OtherFiles(str(origin)), origin.name


def _leaves(spec: SpecNode) -> Iterator[TensorLeaf]:
    if isinstance(spec, (TensorSpecNode, RaggedSpecNode, SparseSpecNode)):
        yield spec
    elif isinstance(spec, (TupleNode, ListNode)):
        for item in spec.items:
            yield from _leaves(item)
    elif isinstance(spec, DictNode):
        for _, item in spec.items:
            yield from _leaves(item)


def _leaf_paths(spec: SpecNode, path: str) -> Iterator[tuple[str, TensorLeaf]]:
    """(the probes' path, leaf) of every tensor leaf, in ``_leaves`` order."""
    if isinstance(spec, (TensorSpecNode, RaggedSpecNode, SparseSpecNode)):
        yield path, spec
    elif isinstance(spec, (TupleNode, ListNode)):
        for i, item in enumerate(spec.items):
            yield from _leaf_paths(item, f"{path}[{i}]")
    elif isinstance(spec, DictNode):
        for key, item in spec.items:
            yield from _leaf_paths(item, f"{path}[{key!r}]")


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


def _wanted_free(
    tensors: list[ParamResult], policies: dict[str, str], site: FunctionSite, few_calls: bool
) -> tuple[set[tuple[str, int]], set[tuple[str, int]], dict[str, int | None]]:
    """(dimensions the policy wants None, those that varied, plain tensors -> rank)."""
    to_free: set[tuple[str, int]] = set()
    varying: set[tuple[str, int]] = set()
    dense: dict[str, int | None] = {}
    for r in tensors:
        spec = r.spec
        if not isinstance(spec, TensorSpecNode) or spec.shape is None:
            continue
        name = r.info.name
        dense[name] = len(spec.shape)
        auto = policies.get(name, AUTO) == AUTO
        for dim, size in enumerate(spec.shape):
            if size is None:
                varying.add((name, dim))
                to_free.add((name, dim))
            elif auto and _at_risk(dim, site, few_calls):
                to_free.add((name, dim))
    return to_free, varying, dense


def _at_risk(dim: int, site: FunctionSite, few_calls: bool) -> bool:
    return dim == 0 or site.site.is_method or few_calls


def _dim_label(name: str, dim: int, nested: bool) -> str:
    return f"`{name}` (a dimension {dim} inside it)" if nested else f"`{name}` dimension {dim}"


def _conflict(name: str, label: str, dim: int | None, read: ShapeRead) -> Blocker:
    """Why parameter ``name`` (at ``label``) can have neither a relaxed nor a fixed shape."""
    what = "its rank varies" if dim is None else "it varies between calls"
    predicate = (
        f"{what}, but {read.describe()}: a relaxed trace would make it None "
        "(no signature and no reduce_retracing; compute it with tf.shape() instead)"
    )
    return Blocker(name, "shape_read", f"{label}: {predicate}", predicate)


def _probed_conflict(name: str, label: str, proof: DimProof) -> Blocker:
    """A dimension that varied, which the probes showed the code reads."""
    predicate = (
        f"it varies between calls, but the code reads it ({proof.why}): a relaxed trace "
        "would make it None (no signature and no reduce_retracing; compute it with "
        "tf.shape() instead)"
    )
    return Blocker(name, "shape_read", f"{label}: {predicate}", predicate)


def _probed_read(label: str, proof: DimProof) -> str:
    """Why None for a varied dimension the probes found read is not proven safe."""
    return (
        f"{label} varies, and a relaxed trace makes it None although {proof.why}: the "
        "relaxed graph builds but may compute something else than the original's at some sizes"
    )


def _pinned(label: str, size: int, calls: int, why: str) -> str:
    return (
        f"{label} seen only as {size} in {plural(calls, 'call')} and kept fixed ({why}): "
        "the signature rejects other sizes the original accepts"
    )

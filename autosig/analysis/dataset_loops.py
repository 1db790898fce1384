"""Which arguments of a call are elements of a ``tf.data`` dataset, read from the source.

The evidence an ``input_signature`` needs to be labelled safe (``infer/domain_evidence``):
a call ``step(x, y)`` inside ``for x, y in ds:`` (or ``for i, (x, y) in enumerate(ds)``,
``for batch in ds.take(5)``), where ``ds`` is a ``tf.data`` dataset, passes elements of
that dataset, and a dataset's elements all have one structure, dtype and rank (its
``element_spec``). So the calls from that site have the dtype, rank and structure the
profile saw there, and a signature written from them rejects nothing those calls pass.

A name is a dataset when every binding of it in its scope is one (``ds = tf.data...``,
``ds = ds.batch(4)``); an expression is one when it is a call of a ``tensorflow.data``
API or Keras' ``*_dataset_from_*`` utilities, or a dataset method (``batch``, ``map``,
``shuffle``...) called on a dataset. Pure, no TensorFlow.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import Assignment, CodePosition, GlobalScope, MetadataWrapper, ScopeProvider

from autosig.source.discover import Source
from autosig.source.metadata import (
    MetadataView,
    PositionProvider,
    ancestors_in,
    index_tree,
    iter_tree,
)

DATASET_METHODS = frozenset(
    {
        "apply",
        "batch",
        "bucket_by_sequence_length",
        "cache",
        "concatenate",
        "filter",
        "interleave",
        "map",
        "padded_batch",
        "prefetch",
        "ragged_batch",
        "rebatch",
        "repeat",
        "shard",
        "shuffle",
        "skip",
        "take",
        "take_while",
        "unbatch",
        "with_options",
        "enumerate",
        "flat_map",
    }
)
"""Dataset methods that return a dataset."""
DATASET_APIS = ("tensorflow.data.",)
KERAS_DATASET_UTILS = frozenset(
    {"image_dataset_from_directory", "text_dataset_from_directory", "timeseries_dataset_from_array"}
)


@dataclass(frozen=True)
class ElementArgs:
    """The arguments of one call that are dataset elements."""

    positional: frozenset[int]
    """Indices of positional arguments that are elements (or parts of one)."""
    keywords: frozenset[str]
    dataset: str
    """How the dataset is written at the loop (``ds``, ``train_ds.take(3)``)."""
    line: int
    """The loop's line."""
    n_positional: int
    """How many positional arguments the call passes."""
    keywords_passed: frozenset[str]

    def covered(self, positional: Sequence[str]) -> set[str]:
        """The parameters passed as elements, for a function whose positional
        parameters are ``positional`` (in order)."""
        out = {positional[i] for i in self.positional if i < len(positional)}
        return out | set(self.keywords)


@dataclass(frozen=True)
class CallAt:
    """A call in the module, and where its callee starts (``LoopFacts.calls``)."""

    node: cst.Call
    callee: str | None
    """``callee_name``."""
    anchors: tuple[CodePosition, ...]
    """Where ``f`` of ``f(...)`` starts; of ``obj.f(...)``, where ``obj.f`` and ``f``
    start (a profile records either)."""

    def at(self, line: int, col: int | None) -> bool:
        return any(a.line == line and (col is None or a.column == col) for a in self.anchors)


@dataclass(frozen=True)
class LoopFacts:
    """What the questions below ask of the whole file, gathered in one pass over its tree
    (``loop_facts``; ``iter_tree``'s order): every call, where its callee starts and the
    qualified names it goes through, the calls of untyped dataset stages, every name
    passed on as a value, each node's parent, each ``for`` loop's line, iterable as
    written, target names and the names its body changes. The questions about one loop
    read these and the scopes, not the file's metadata again."""

    scopes: Mapping[cst.CSTNode, Any]
    """``ScopeProvider``'s scopes."""
    calls: tuple[CallAt, ...]
    names: Mapping[cst.Call, frozenset[str]]
    """The qualified names each call's callee goes through (``tensorflow.data.Dataset.range``)."""
    untyped: tuple[cst.Call, ...]
    """The calls of stages whose elements' rank is unknown (``numpy_function``,
    ``py_function``, ``from_generator``: ``UNTYPED_STAGES``), by name or written name."""
    passed: tuple[tuple[str, int], ...]
    """(name, line) of each name passed on as a value (``f(step)``, ``x = step``,
    ``return step``)."""
    parents: Mapping[cst.CSTNode, cst.CSTNode]
    loop_names: Mapping[cst.For, tuple[cst.Name, ...]]
    """The names in each loop's target."""
    changed: Mapping[cst.For, frozenset[str]]
    """The names each loop's body binds or assigns into (``_changed_bases``)."""
    lines: Mapping[cst.For, int]
    """Each loop's line."""
    iterables: Mapping[cst.For, str]
    """Each loop's iterable as written (``train_ds.take(3)``)."""

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        return ancestors_in(node, self.parents)

    def is_within(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        return node is container or any(a is container for a in self.ancestors(node))


def loop_facts(wrapper: MetadataWrapper) -> LoopFacts:
    """The facts of ``wrapper``'s module (one pass; callers keep them per file)."""
    view = MetadataView(wrapper)
    nodes, parents, _ = index_tree(wrapper.module)
    positions = wrapper.resolve(PositionProvider)
    scopes = wrapper.resolve(ScopeProvider)
    loops = [n for n in nodes if isinstance(n, cst.For)]
    loop_names = {
        loop: tuple(n for n in iter_tree(loop.target) if isinstance(n, cst.Name)) for loop in loops
    }
    lines = {loop: view.position(loop)[0] for loop in loops}
    iterables = {loop: view.code(loop.iter) for loop in loops}
    calls: list[CallAt] = []
    names: dict[cst.Call, frozenset[str]] = {}
    untyped: list[cst.Call] = []
    passed: list[tuple[str, int]] = []
    changed: dict[cst.For, set[str]] = defaultdict(set)
    for node in nodes:
        if isinstance(node, cst.Call):
            anchors = [positions[node.func].start]
            if isinstance(node.func, cst.Attribute):
                anchors.append(positions[node.func.attr].start)
            callee = callee_name(node)
            calls.append(CallAt(node, callee, tuple(anchors)))
            names[node] = frozenset(view.qualified_names(node.func))
            if ({n.rsplit(".", 1)[-1] for n in names[node]} | {callee}) & UNTYPED_STAGES:
                untyped.append(node)
        elif isinstance(node, (cst.Arg, cst.Assign, cst.Return)):
            if isinstance(node.value, cst.Name):
                passed.append((node.value.value, positions[node.value].start.line))
        bases = _changed_bases(node)
        if bases:
            inner, current = node, parents.get(node)
            while current is not None:
                if isinstance(current, cst.For) and current.body is inner:
                    changed[current].update(bases)
                inner, current = current, parents.get(current)
    return LoopFacts(
        scopes,
        tuple(calls),
        names,
        tuple(untyped),
        tuple(passed),
        parents,
        loop_names,
        {loop: frozenset(bound) for loop, bound in changed.items()},
        lines,
        iterables,
    )


def file_facts(path: str, root: Path | None) -> LoopFacts | None:
    """The facts of the file at ``path`` (relative to ``root`` unless absolute; as a
    profile records it), parsed once while it is unchanged; None if it cannot be read
    or parsed."""
    full = Path(path) if Path(path).is_absolute() or root is None else root / path
    try:
        stat = full.stat()
    except OSError:
        return None
    return _parsed(str(full), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=32)
def _parsed(path: str, mtime: int, size: int) -> LoopFacts | None:  # noqa: ARG001
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    source = Source.parse(text, path)
    return loop_facts(source.wrapper) if source.wrapper is not None else None


def element_args(
    facts: LoopFacts, line: int, col: int | None, callee: str | None = None
) -> ElementArgs | str:
    """The dataset-element arguments of the call whose callee starts at ``line``/``col``
    (0-based column, as profiles record it; None: the only call on the line), named
    ``callee`` (``step`` of ``model.step(...)``; None: any name, as for ``__call__``),
    or why none can be told."""
    calls = [
        c.node for c in facts.calls if c.at(line, col) and (callee is None or c.callee == callee)
    ]
    if len(calls) != 1:
        return f"{len(calls)} calls found at line {line}"
    call = calls[0]
    positional: set[int] = set()
    keywords: set[str] = set()
    found: tuple[str, int] | None = None
    n_positional = 0
    passed: set[str] = set()
    for index, arg in enumerate(call.args):
        if arg.star:
            return f"line {line} passes `{arg.star}` arguments"
        if arg.keyword is None:
            n_positional += 1
        else:
            passed.add(arg.keyword.value)
        loop = _element_loop(facts, arg.value)
        if loop is None:
            continue
        where = (facts.iterables[loop], facts.lines[loop])
        if found is not None and where != found:
            return f"line {line} passes elements of more than one dataset"
        found = where
        if arg.keyword is None:
            positional.add(index)
        else:
            keywords.add(arg.keyword.value)
    if found is None:
        return f"no argument at line {line} is visibly an element of a tf.data dataset"
    return ElementArgs(
        frozenset(positional),
        frozenset(keywords),
        found[0],
        found[1],
        n_positional,
        frozenset(passed),
    )


def callee_name(call: cst.Call) -> str | None:
    """The name a call goes through: `f(...)` and `obj.f(...)` give `f`."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def _element_loop(facts: LoopFacts, value: cst.BaseExpression) -> cst.For | None:
    """The dataset loop whose target binds ``value`` (``x``, ``batch["x"]``, ``xy[0]``):
    the innermost ``for`` around the call (in the same function) whose target names it,
    with no other assignment of the name in its body."""
    while isinstance(value, cst.Subscript) and all(
        isinstance(s.slice, cst.Index)
        and isinstance(s.slice.value, (cst.SimpleString, cst.Integer))
        for s in value.slice
    ):
        value = value.value
    if not isinstance(value, cst.Name):
        return None
    name = value.value
    for node in facts.ancestors(value):
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if not isinstance(node, cst.For) or not facts.is_within(value, node.body):
            continue
        targets = [n for n in facts.loop_names[node] if n.value == name]
        if not targets:
            continue
        scope = facts.scopes.get(value)
        if scope is None:
            return None
        others = [
            b
            for b in scope.assignments[name]
            if isinstance(b, Assignment)
            and b.node is not targets[0]
            and facts.is_within(b.node, node)
        ]
        if others or len(targets) != 1 or name in facts.changed.get(node, ()):
            return None
        iterated = _element_iter(node, targets[0], facts)
        return node if _is_dataset(facts, iterated) else None
    return None


def _element_iter(
    loop: cst.For, target: cst.CSTNode, facts: LoopFacts
) -> cst.BaseExpression | None:
    """The dataset the loop target ``target`` takes elements of: ``ds`` of ``for x in ds``,
    of ``for i, x in enumerate(ds)`` (``x``, not ``i``)."""
    it = loop.iter
    if (
        isinstance(it, cst.Call)
        and isinstance(it.func, cst.Name)
        and it.func.value == "enumerate"
        and it.args
    ):
        pair = loop.target
        if not isinstance(pair, (cst.Tuple, cst.List)) or len(pair.elements) != 2:
            return None
        if not facts.is_within(target, pair.elements[1].value):
            return None  # the counter
        return it.args[0].value
    return it


def _is_dataset(
    facts: LoopFacts, node: cst.BaseExpression | None, seen: frozenset = frozenset()
) -> bool:
    """``node`` is a tf.data dataset (``seen``: the bindings being asked about already:
    ``ds = ds.batch(4)`` is a dataset when every other binding of ``ds`` is one)."""
    if node is None or len(seen) > 20:
        return False
    if isinstance(node, cst.Call):
        for stage in _spine(node):  # `from_tensor_slices(x).batch(n).map(f)`: each call
            if _from_parameters(facts, stage) or not _static_stage(facts, stage):
                return False
        names = facts.names[node]
        if any(n.startswith(DATASET_APIS) for n in names):
            return True
        if any(n.rsplit(".", 1)[-1] in KERAS_DATASET_UTILS for n in names):
            return True
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in DATASET_METHODS:
            return _is_dataset(facts, func.value, seen)
        return False
    if isinstance(node, cst.Name):
        scope = facts.scopes.get(node)
        if scope is None:
            return False
        accesses = [a for a in scope.accesses[node.value] if a.node is node]
        if len(accesses) != 1 or not accesses[0].referents:
            return False
        owner = next(iter(accesses[0].referents)).scope
        bindings = list(owner.assignments[node.value])
        if len(bindings) != 1:
            return False  # `if ...: ds = A else: ds = B`, `ds = ds.batch(4)`: which one?
        for binding in bindings:
            if not isinstance(binding, Assignment):
                return False
            if binding.node in seen:
                continue
            value = _assigned_value(facts, binding.node)
            if value is None:
                return False
            if not _is_dataset(facts, value, seen | {binding.node}):
                return False
        return bool(bindings)
    return False


def _assigned_value(facts: LoopFacts, target: cst.CSTNode) -> cst.BaseExpression | None:
    """``value`` of ``target = value`` (one plain target), else None."""
    parent = facts.parents.get(target)
    if isinstance(parent, cst.AssignTarget):
        statement = facts.parents.get(parent)
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            return statement.value
    if isinstance(parent, cst.AnnAssign) and parent.target is target:
        return parent.value
    return None


def _spine(node: cst.BaseExpression) -> Iterator[cst.Call]:
    """The calls of a method chain, outermost first."""
    while isinstance(node, cst.Call):
        yield node
        if not isinstance(node.func, cst.Attribute):
            return
        node = node.func.value


MUTATORS = frozenset(
    {"update", "pop", "popitem", "setdefault", "clear", "append", "extend", "insert", "remove"}
)


def _base(target: cst.CSTNode) -> str | None:
    """``batch`` of ``batch``, ``batch["x"]``, ``batch.x[0]``."""
    while isinstance(target, (cst.Subscript, cst.Attribute)):
        target = target.value
    return target.value if isinstance(target, cst.Name) else None


def _changed_bases(node: cst.CSTNode) -> set[str | None]:
    """The names ``node`` binds or assigns into (``batch["x"] = ...``, ``x = tf.cast(x,
    ...)``, ``x += 1``, ``case x:``, ``batch.update(...)``): what makes a loop's body
    change its target (``LoopFacts.changed``)."""
    targets: list[cst.CSTNode] = []
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For)):
        targets = [node.target]
    elif isinstance(node, cst.AsName):
        targets = [node.name]
    elif isinstance(node, cst.Del):
        targets = [node.target]
    elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
        targets = [node.name]
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in MUTATORS:
            return {_base(node.func.value)}
    return {_base(t) for t in _flat(targets)}


def _flat(targets: list[cst.CSTNode]) -> Iterator[cst.CSTNode]:
    """The targets of ``a, (b, *c) = ...`` one by one."""
    for target in targets:
        if isinstance(target, (cst.Tuple, cst.List)):
            yield from _flat([e.value for e in target.elements])
        elif isinstance(target, cst.StarredElement):
            yield from _flat([target.value])
        else:
            yield target


UNTYPED_STAGES = frozenset({"numpy_function", "py_function", "py_func", "from_generator"})
STAGE_METHODS = frozenset({"map", "flat_map", "interleave", "apply", "filter", "take_while"})


def _from_parameters(facts: LoopFacts, call: cst.Call) -> bool:
    """The dataset call's arguments read a parameter of a function around it (directly or
    through local names): its dtype and rank follow the caller
    (``def run(features): tf.data.Dataset.from_tensor_slices(features)``)."""
    pending = [a.value for a in call.args]
    seen: set[int] = set()
    while pending:
        expr = pending.pop()
        if id(expr) in seen or len(seen) > 200:
            return len(seen) > 200
        seen.add(id(expr))
        for name in (n for n in iter_tree(expr) if isinstance(n, cst.Name)):
            scope = facts.scopes.get(name)
            if scope is None:
                continue
            for access in scope.accesses[name.value]:
                if access.node is not name:
                    continue
                for referent in access.referents:
                    if not isinstance(referent, Assignment):
                        continue
                    bound = referent.node
                    if isinstance(bound, cst.Param):
                        if not facts.is_within(bound, call):  # a lambda's own parameter
                            return True
                    elif not isinstance(referent.scope, GlobalScope):
                        value = _assigned_value(facts, bound)
                        if value is None:
                            return True  # a loop target, a `with` name...
                        pending.append(value)
    return False


def _static_stage(facts: LoopFacts, call: cst.Call) -> bool:
    """The stage fixes its elements' dtype and rank statically: not ``from_generator``
    without ``output_signature``, not a ``map`` through ``numpy_function`` or
    ``py_function`` (whose elements' rank is unknown)."""
    last = {n.rsplit(".", 1)[-1] for n in facts.names[call]}
    if isinstance(call.func, cst.Attribute):
        last.add(call.func.attr.value)
    if "from_generator" in last:
        return any(
            a.keyword is not None and a.keyword.value == "output_signature" for a in call.args
        )
    if not last & STAGE_METHODS:
        return True
    for arg in call.args:
        bodies: list[cst.CSTNode] = [arg.value]
        if isinstance(arg.value, cst.Name):
            bodies += _defs(facts, arg.value)
        for body in bodies:
            if any(facts.is_within(c, body) for c in facts.untyped):
                return False
    return True


def _defs(facts: LoopFacts, name: cst.Name) -> list[cst.CSTNode]:
    """The ``def``s a name passed as a stage function refers to."""
    scope = facts.scopes.get(name)
    if scope is None:
        return []
    out: list[cst.CSTNode] = []
    for access in scope.accesses[name.value]:
        if access.node is name:
            out += [r.node for r in access.referents if isinstance(r, Assignment)]
    return out


def other_references(
    facts: LoopFacts, callee: str, recorded: set[tuple[int, int | None]]
) -> list[int]:
    """Lines of the file that refer to ``callee`` (a call ``callee(...)``/``x.callee(...)``,
    or the name passed on as a value) other than the recorded calls at ``recorded``
    (line, 0-based column of the callee): calls the profile never saw (review21 p2: a
    serving path ``predict(np.asarray(row)[None])`` beside the dataset loop)."""
    lines = {line for line, _ in recorded}
    out = [
        c.anchors[0].line
        for c in facts.calls
        if c.callee == callee
        and not any((a.line, a.column) in recorded or (a.line, None) in recorded for a in c.anchors)
    ]
    out += [line for name, line in facts.passed if name == callee and line not in lines]
    return sorted(set(out))

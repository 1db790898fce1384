"""AS106's fix: move ``name = tf.function(f)`` out of the loops that recreate it.

Traces are cached per tf.function object, so a creation inside a loop traces again on
every iteration. Creating it once before the loop gives the same function object for
every iteration. That is only the same program when nothing the creation or its trace
reads changes inside the loop, so the move is made only when:

- the creation is a whole statement ``name = tf.function(...)`` directly in the loop's
  body (run on every iteration, not under an ``if``), and the body keeps a statement
  that is not such a creation;
- what it reads is names, attributes, literals, lambdas and ``tf.TensorSpec(...)``
  (no other call: ``tf.function(make_model())`` makes a new object each time);
- no name it reads, no free name of the wrapped def or lambda (or of the defs of this
  file it calls), and no other binding of ``name`` is bound or deleted anywhere in the
  loop (libcst's scope analysis, plus ``del`` and ``match`` captures, which it does not
  record), nor rebound by another function (``global``/``nonlocal`` there; in the loop
  it stops the move); the loop stores no attribute or item those reads reach
  (``self.fn = ...`` for ``tf.function(self.fn)``); the loop header does not read
  ``name``; and ``name`` is not bound before the loop (a loop that runs zero times
  would then leave the old value, not the new function).

It moves out of as many enclosing loops (of the same function) as that holds for; a
creation reading the name of one earlier in the same body may move with it. All moves
out of one loop nest are one edit (any number settle in one pass, next to AS107's
``reduce_retracing``), and that edit is as unsafe as its least safe move:
``tf.function(step)`` next to ``tf.function(model)`` in a loop moves only with
``--unsafe-fixes``. A creation marked ``# autosig: ignore[AS106]`` never moves.

The fix is *safe* when the wrapped function is a ``def`` or lambda of this file whose
trace reads only what cannot change between iterations: each free name bound exactly
once and never from another function; no ``global``/``nonlocal``, no stores into
outside objects, no mutating method calls on them, no ``print``/``input``/``open`` and
no Python sources of changing values (``random``, ``numpy.random``, ``time``, ``os``,
...), in it or in the defs of this file it calls; and the loop neither calls a method
of an object the trace reads nor passes that object to a call (``update(config)``).
Calls of outside objects (a Keras model, an imported helper) are assumed to compute
the same for the same inputs. Otherwise (``tf.function(model)``,
``tf.function(self.step)``, a trace that draws a Python random number) it is *unsafe*:
the old code traced anew on each iteration and saw each change.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import libcst as cst
from libcst.metadata import Assignment, ImportAssignment, ScopeProvider

from autosig.analysis.attribute_writes import MUTATORS
from autosig.analysis.module_view import ModuleView, ProjectClass
from autosig.rules.file_context import FileContext
from autosig.source.metadata import LOOPS, children, iter_tree
from autosig.source.sites import FixSafety

PURE_CALLS = frozenset(
    f"{module}.{name}"
    for module in ("tensorflow", "tensorflow.compat.v2", "tensorflow.compat.v1")
    for name in ("TensorSpec", "RaggedTensorSpec", "SparseTensorSpec")
)
"""Calls a creation may make and still be hoisted: they build equal values each time."""

IMPURE_CALLS = frozenset({"builtins.print", "builtins.input", "builtins.open"})
IMPURE_MODULES = ("random", "numpy.random", "time", "datetime", "os", "uuid", "secrets", "sys")
"""What a trace may not call for the hoist to be safe: I/O, and values that change."""

_READ_ONLY = (
    cst.Name,
    cst.Attribute,
    cst.Arg,
    cst.List,
    cst.Tuple,
    cst.Element,
    cst.UnaryOperation,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.Ellipsis,
    cst.BaseUnaryOp,
    cst.Dot,
    cst.Comma,
    cst.AssignEqual,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.BaseParenthesizableWhitespace,
    cst.Comment,
    cst.EmptyLine,
    cst.Newline,
    cst.TrailingWhitespace,
)
"""Nodes that only read: a creation made of these computes the same value each time."""


@dataclass(frozen=True)
class Hoist:
    """The edit that carries a creation out of its loops.

    ``loop`` is the outermost loop the edit replaces; ``replacement`` moves this
    creation and every other one that leaves a loop within ``loop``. Hoists that share
    ``loop`` share the ``replacement`` object (and its safety), so they are applied
    together.
    """

    loop: cst.For | cst.While
    replacement: cst.FlattenSentinel[cst.BaseStatement]
    safety: FixSafety


@dataclass(frozen=True)
class _Move:
    creation: cst.Call
    statement: cst.SimpleStatementLine
    target: cst.Name
    loop: cst.For | cst.While
    """The outermost loop the statement leaves: it goes right before it."""
    safety: FixSafety


N = TypeVar("N", bound=cst.CSTNode)


class _Index:
    """The nodes of each kind under a node, walked once per node (a plan asks the same
    loops and functions many questions; ``libcst.matchers.findall`` would walk, and
    rebuild, the subtree for each)."""

    def __init__(self) -> None:
        self._kinds: dict[int, dict[type, list[cst.CSTNode]]] = {}

    def find(self, node: cst.CSTNode, *kinds: type[N]) -> list[N]:
        by_kind = self._kinds.get(id(node))
        if by_kind is None:
            by_kind = {}
            for found in iter_tree(node):
                by_kind.setdefault(type(found), []).append(found)
            self._kinds[id(node)] = by_kind
        return [n for kind in kinds for n in by_kind.get(kind, ())]  # type: ignore[misc]


def plan_hoists(ctx: FileContext, creations: Sequence[cst.Call]) -> dict[int, Hoist]:
    """How to move each creation (a ``tf.function(...)`` call) out of its loops, by id.

    Creations that cannot move are absent. All moves within one outermost loop are
    one edit, with the weakest safety among them: applying only the safe ones and the
    unsafe ones in a later pass would take more passes than the engine allows once
    AS107 adds ``reduce_retracing`` to the moved creations.
    """
    found = {id(c): _creation_statement(ctx, c) for c in creations}
    lines = {id(f[0]) for f in found.values() if f is not None}
    moves: list[_Move] = []
    index = _Index()
    for creation in sorted(creations, key=ctx.position):
        statement = found[id(creation)]
        if statement is not None:
            move = _plan_move(ctx, index, creation, *statement, lines, moves)
            if move is not None:
                moves.append(move)
    hoists: dict[int, Hoist] = {}
    for top in _outermost(ctx, moves):
        members = [g for g in moves if ctx.is_within(g.loop, top)]
        safety: FixSafety = "safe" if all(g.safety == "safe" for g in members) else "unsafe"
        replacement = _moved(ctx, top, members)
        for member in members:
            hoists[id(member.creation)] = Hoist(top, replacement, safety)
    return hoists


def _outermost(ctx: FileContext, moves: list[_Move]) -> list[cst.For | cst.While]:
    """The moves' loops that lie in no other move's loop."""
    loops = [g.loop for g in moves]
    return [a for a in loops if not any(b is not a and ctx.is_within(a, b) for b in loops)]


def _moved(
    ctx: FileContext, top: cst.For | cst.While, moves: list[_Move]
) -> cst.FlattenSentinel[cst.BaseStatement]:
    """``top`` with each move's statement taken out and put right before its loop."""
    order = sorted(moves, key=lambda g: ctx.position(g.statement))
    before: dict[int, list[cst.SimpleStatementLine]] = {}
    for move in order:
        before.setdefault(id(move.loop), []).append(move.statement)
    result = top.visit(_Mover({id(g.statement) for g in moves}, before))
    assert isinstance(result, cst.FlattenSentinel)
    return result


class _Mover(cst.CSTTransformer):
    def __init__(self, remove: set[int], before: dict[int, list[cst.SimpleStatementLine]]):
        super().__init__()
        self.remove = remove
        self.before = before

    def on_leave(self, original_node, updated_node):  # type: ignore[no-untyped-def]
        if id(original_node) in self.remove:
            return cst.RemovalSentinel.REMOVE
        moved = self.before.get(id(original_node))
        if not moved:
            return updated_node
        # the loop's own comments now introduce what runs first before it
        first = moved[0].with_changes(
            leading_lines=(*updated_node.leading_lines, *moved[0].leading_lines)
        )
        rest = updated_node.with_changes(leading_lines=())
        return cst.FlattenSentinel([first, *moved[1:], rest])


# -- where a creation may go ----------------------------------------------------------


def _creation_statement(
    ctx: FileContext, creation: cst.Call
) -> tuple[cst.SimpleStatementLine, cst.Name] | None:
    """``name = <creation>`` as the whole of a line directly in a loop body, and ``name``."""
    assign = ctx.parent(creation)
    if not isinstance(assign, cst.Assign) or assign.value is not creation:
        return None
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    line = ctx.parent(assign)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    block = ctx.parent(line)
    loop = ctx.parent(block) if block is not None else None
    if not isinstance(block, cst.IndentedBlock) or not isinstance(loop, LOOPS):
        return None
    if loop.body is not block:
        return None
    return line, assign.targets[0].target


def _plan_move(
    ctx: FileContext,
    index: _Index,
    creation: cst.Call,
    statement: cst.SimpleStatementLine,
    target: cst.Name,
    creation_lines: set[int],
    planned: list[_Move],
) -> _Move | None:
    block = ctx.parent(statement)
    assert isinstance(block, cst.IndentedBlock)
    if all(id(s) in creation_lines for s in block.body):
        return None  # the loop body would be left empty
    reads = _names_read(ctx, index, creation)
    if reads is None:
        return None
    wrapped = _function(ctx, _wrapped(creation))
    traced = _traced_functions(ctx, index, wrapped) if wrapped is not None else []
    free = [n for f in traced for n in _free_loads(ctx, index, f)]
    paths = [p for n in (creation, *traced) for p in _read_paths(index, n)]
    earlier = [g for g in planned if ctx.parent(g.statement) is block]
    outermost: cst.For | cst.While | None = None
    loop = ctx.enclosing_loop(statement)
    while loop is not None:
        # a creation earlier in this body that leaves this loop too binds its name
        # once, before this statement, both before and after the move
        moved = {id(g.target) for g in earlier if ctx.is_within(loop, g.loop)}
        leave = _Leave(ctx, index, loop, target, statement, moved)
        if not leave.allowed([*reads, *free], paths):
            break
        outermost = loop
        loop = ctx.enclosing_loop(loop)
    if outermost is None:
        return None
    safe = (
        wrapped is not None
        and not getattr(wrapped, "decorators", ())  # a decorator may return any object
        and _trace_is_fixed(ctx, index, traced, free, outermost)
    )
    return _Move(creation, statement, target, outermost, "safe" if safe else "unsafe")


def _names_read(ctx: FileContext, index: _Index, creation: cst.Call) -> list[cst.Name] | None:
    """Every name the creation reads, or None if it does more than read (a call)."""
    names: list[cst.Name] = []
    stack: list[cst.CSTNode] = [creation]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Lambda):
            # its body runs later, when called: what it reads from outside matters
            names.extend(_free_loads(ctx, index, node))
            stack.extend(p.default for p in node.params.params if p.default is not None)
            continue
        if isinstance(node, cst.Call):
            if not (node is creation or node is creation.func or _pure_call(ctx, node)):
                return None
        elif not isinstance(node, _READ_ONLY):
            return None
        elif isinstance(node, cst.Name) and _is_load(ctx, node):
            names.append(node)
        stack.extend(children(node))
    return names


def _pure_call(ctx: FileContext, call: cst.Call) -> bool:
    return bool(ctx.qualified_names(call.func) & PURE_CALLS)


def _is_load(ctx: FileContext, name: cst.Name) -> bool:
    """A name that is read (not an attribute, keyword or parameter name)."""
    parent = ctx.parent(name)
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return False
    return not isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias))


def _free_loads(
    ctx: FileContext, index: _Index, function: cst.FunctionDef | cst.Lambda
) -> list[cst.Name]:
    """Names ``function``'s body reads that are bound outside it (or not at all: builtins)."""
    free = []
    for name in index.find(function.body, cst.Name):
        if not _is_load(ctx, name):
            continue
        assignments = _assignments(ctx, name)
        if not assignments or not all(ctx.is_within(a.node, function) for a in assignments):
            free.append(name)
    return free


def _assignments(ctx: FileContext, name: cst.Name) -> list[Assignment] | None:
    scope = ctx.get_metadata(ScopeProvider, name)
    if scope is None:
        return None
    return [a for a in scope[name.value] if isinstance(a, Assignment)]


def _from_elsewhere(ctx: FileContext, assignment: Assignment) -> bool:
    """Made by another function through ``global``/``nonlocal`` (it may run any time)."""
    return ctx.get_metadata(ScopeProvider, assignment.node) is not assignment.scope


@dataclass
class _Leave:
    """Whether the creation computes (and traces) the same thing before ``loop`` as in it.

    ``moved``: ids of the target names of creations that move out of ``loop`` with it.
    """

    ctx: FileContext
    index: _Index
    loop: cst.For | cst.While
    target: cst.Name
    statement: cst.SimpleStatementLine
    moved: set[int]

    def allowed(self, reads: list[cst.Name], paths: list[str]) -> bool:
        ctx, index, loop, target = self.ctx, self.index, self.loop, self.target
        if index.find(loop, cst.Global, cst.Nonlocal):
            return False
        header = (loop.target, loop.iter) if isinstance(loop, cst.For) else (loop.test,)
        if any(n.value == target.value for part in header for n in index.find(part, cst.Name)):
            return False
        unrecorded = _unrecorded_bindings(index, loop)
        home = ctx.enclosing_function(loop)
        for name in (*reads, target):
            assignments = _assignments(ctx, name)
            if assignments is None or name.value in unrecorded:
                return False
            if any(
                _from_elsewhere(ctx, a) and ctx.enclosing_function(a.node) is not home
                for a in assignments
            ):
                return False  # a function the loop calls may rebind it
            if name is not target and any(
                ctx.is_within(a.node, loop) and id(a.node) not in self.moved for a in assignments
            ):
                return False
        stores = _stores(index, loop)
        if any(_overlap(store, path) for store in stores for path in paths):
            return False
        return self._target_unbound_before()

    def _target_unbound_before(self) -> bool:
        """``name`` has no value the loop could leave in place by running zero times."""
        ctx, loop = self.ctx, self.loop
        enclosing = list(_enclosing_loops(ctx, loop))
        start = ctx.position(loop)
        for assignment in _assignments(ctx, self.target) or []:
            if ctx.is_within(assignment.node, self.statement):
                continue
            if ctx.is_within(assignment.node, loop) or any(
                ctx.is_within(assignment.node, outer) for outer in enclosing
            ):
                return False
            if ctx.position(assignment.node) < start:
                return False
        return True


def _enclosing_loops(ctx: FileContext, node: cst.CSTNode) -> Iterator[cst.For | cst.While]:
    loop = ctx.enclosing_loop(node)
    while loop is not None:
        yield loop
        loop = ctx.enclosing_loop(loop)


def _unrecorded_bindings(index: _Index, loop: cst.CSTNode) -> set[str]:
    """Names ``del``eted or captured by ``match`` in ``loop`` (libcst's scopes miss both)."""
    names: set[str] = set()
    for node in index.find(loop, cst.Del):
        names.update(n.value for n in index.find(node, cst.Name))
    for node in index.find(loop, cst.MatchAs, cst.MatchStar):
        if node.name is not None:
            names.add(node.name.value)
    for node in index.find(loop, cst.MatchMapping):
        if node.rest is not None:
            names.add(node.rest.value)
    return names


# -- attribute paths ---------------------------------------------------------------------


def _path(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a name or attribute chain; an item store ``a.b[i]`` counts as ``a.b``."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _path(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    if isinstance(node, cst.Subscript):
        return _path(node.value)
    return None


def _read_paths(index: _Index, node: cst.CSTNode) -> Iterator[str]:
    """Every outermost attribute chain (and name) read in ``node``."""
    inner = {id(a.value) for a in index.find(node, cst.Attribute)}
    for found in index.find(node, cst.Attribute, cst.Name):
        if id(found) not in inner:
            path = _path(found)
            if path is not None:
                yield path


def _store_targets(index: _Index, node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    for assign in index.find(node, cst.Assign):
        yield from (t.target for t in assign.targets)
    for found in index.find(node, cst.AugAssign, cst.AnnAssign, cst.For):
        yield found.target
    for name in index.find(node, cst.AsName):
        yield name.name  # type: ignore[misc]
    for deletion in index.find(node, cst.Del):
        yield deletion.target


def _stores(index: _Index, node: cst.CSTNode) -> list[str]:
    """Paths of the attributes and items ``node`` stores into or deletes."""
    paths = []
    for target in _store_targets(index, node):
        if isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)):
            parts: list[cst.CSTNode] = [target]  # the common case, without a walk
        else:
            parts = [*index.find(target, cst.Attribute, cst.Subscript)]
        for part in parts:
            path = _path(part) if isinstance(part, (cst.Attribute, cst.Subscript)) else None
            if path is not None:
                paths.append(path)
    return paths


def _overlap(store: str, read: str) -> bool:
    """A store to ``store`` changes what reading ``read`` gives."""
    return store == read or read.startswith(store + ".") or store.startswith(read + ".")


# -- what the wrapped function reads when traced ---------------------------------------


def _wrapped(creation: cst.Call) -> cst.BaseExpression | None:
    """The function a creation wraps: ``tf.function(f, ...)`` or ``tf.function(...)(f)``."""
    for position, arg in enumerate(creation.args):
        if arg.keyword is None and not arg.star and position == 0:
            return arg.value
        if arg.keyword is not None and arg.keyword.value == "func":
            return arg.value
    return None


def _function(
    ctx: FileContext, node: cst.BaseExpression | None
) -> cst.FunctionDef | cst.Lambda | None:
    """The lambda, or the def bound once to the name, that ``node`` is."""
    if isinstance(node, cst.Lambda):
        return node
    if isinstance(node, cst.Name):
        assignments = _assignments(ctx, node)
        if assignments is not None and len(assignments) == 1:
            definition = assignments[0].node  # a def's assignment is the FunctionDef
            if isinstance(definition, cst.FunctionDef) and not _from_elsewhere(ctx, assignments[0]):
                return definition
    return None


def _traced_functions(
    ctx: FileContext, index: _Index, function: cst.FunctionDef | cst.Lambda
) -> list[cst.FunctionDef | cst.Lambda]:
    """``function`` and every def of this file it reaches through free names."""
    found: list[cst.FunctionDef | cst.Lambda] = [function]
    seen = {id(function)}
    for current in found:
        for name in _free_loads(ctx, index, current):
            callee = _function(ctx, name)
            if callee is not None and id(callee) not in seen:
                seen.add(id(callee))
                found.append(callee)
    return found


def _trace_is_fixed(
    ctx: FileContext,
    index: _Index,
    traced: list[cst.FunctionDef | cst.Lambda],
    free: list[cst.Name],
    loop: cst.For | cst.While,
) -> bool:
    """Whether tracing gives the same graph before ``loop`` as on each of its iterations."""
    for name in free:
        assignments = _assignments(ctx, name) or []
        if len(assignments) > 1 or any(_from_elsewhere(ctx, a) for a in assignments):
            return False
    roots = {n.value for n in free}
    objects = {n.value for n in free if _is_object(ctx, n)}
    objects |= _aliased_globals(ctx, index, traced, free)
    for function in traced:
        if _changes_state(ctx, index, function, roots):
            return False
    if objects and _calls_other_project_modules(ctx, index, loop):
        # an imported helper the loop runs may change them: ask the project's other files
        for name in sorted(objects):
            found = ctx.project_writes.changes(name)
            if found is not None and found.place is not None:
                return False
    # this file's functions the loop calls may change what the trace reads: bump()
    # doing CONFIG["scale"] += 1, reset() rebinding a global
    called = [_function(ctx, call.func) for call in index.find(loop, cst.Call)]
    reached: dict[int, cst.FunctionDef | cst.Lambda] = {}
    for function in called:
        if function is not None and id(function) not in reached:
            reached.update((id(f), f) for f in _traced_functions(ctx, index, function))
    for function in reached.values():
        if _changes_state(ctx, index, function, objects):
            return False
    for call in index.find(loop, cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and _root(_path(func) or "") in objects:
            return False  # the loop may change what the trace reads: model.reset_states()
        for arg in call.args:
            if isinstance(arg.value, cst.Name) and arg.value.value in objects:
                return False  # ... or have it changed: update(config)
    return not any(_root(store) in objects for store in _stores(index, loop))


def _changes_state(
    ctx: FileContext, index: _Index, function: cst.FunctionDef | cst.Lambda, roots: set[str]
) -> bool:
    """Whether running ``function`` may change a value reached from ``roots``."""
    if index.find(function, cst.Global, cst.Nonlocal):
        return True
    if any(_root(store) in roots for store in _stores(index, function)):
        return True
    return any(_impure(ctx, call, roots) for call in index.find(function, cst.Call))


def _impure(ctx: FileContext, call: cst.Call, roots: set[str]) -> bool:
    names = ctx.qualified_names(call.func)
    if names & IMPURE_CALLS:
        return True
    if any(n == mod or n.startswith(mod + ".") for n in names for mod in IMPURE_MODULES):
        return True
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value in MUTATORS
        and _root(_path(func.value) or "") in roots
    )


def _is_object(ctx: FileContext, name: cst.Name) -> bool:
    """A name bound to a value (not a module, def or builtin) that code may mutate."""
    assignments = _assignments(ctx, name) or []
    return any(
        not isinstance(a, ImportAssignment) and not isinstance(a.node, cst.FunctionDef)
        for a in assignments
    )


def _root(path: str) -> str:
    return path.split(".", 1)[0]


def _aliased_globals(
    ctx: FileContext,
    index: _Index,
    traced: list[cst.FunctionDef | cst.Lambda],
    free: list[cst.Name],
) -> set[str]:
    """Module variables the trace reads through one alias: ``config = CONFIG`` at module
    level, or ``self.config = CONFIG`` in the class whose method the trace closes over.
    A change to the dict is a change to what the trace reads."""
    out: set[str] = set()
    for name in free:
        assignments = _assignments(ctx, name) or []
        if len(assignments) != 1 or isinstance(assignments[0], ImportAssignment):
            continue
        target = ctx.parent(assignments[0].node)
        assign = ctx.parent(target) if isinstance(target, cst.AssignTarget) else None
        if isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Name):
            out.add(assign.value.value)
    view: ModuleView | None = None
    for function in traced:
        for attribute in index.find(function, cst.Attribute):
            owner = attribute.value
            if not isinstance(owner, cst.Name) or owner.value != "self":
                continue
            method = ctx.enclosing_function(function)
            cls = ctx.enclosing_class(method) if method is not None else None
            if not isinstance(cls, cst.ClassDef):
                continue
            view = view or ModuleView(ctx.wrapper, ctx.project_modules)
            bound = view.attribute_values(ProjectClass(view, cls), attribute.attr.value)
            for value, env in bound:
                local = (
                    env.local(value.value) if isinstance(value, cst.Name) and env.local else None
                )
                if isinstance(value, cst.Name) and local is None:
                    out.add(value.value)
    return out


def _calls_other_project_modules(ctx: FileContext, index: _Index, loop: cst.CSTNode) -> bool:
    """The loop calls a function imported from another module of the project."""
    modules = ctx.project_modules
    if modules is None:
        return False
    for call in index.find(loop, cst.Call):
        for qualified in ctx.qualified_names(call.func):
            module = qualified.rpartition(".")[0]
            while module:
                if modules(module) is not None:
                    return True
                module = module.rpartition(".")[0]
    return False

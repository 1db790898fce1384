"""AS106's fix: move ``name = tf.function(f)`` out of the loops that recreate it.

Traces are cached per tf.function object, so a creation inside a loop traces again on
every iteration. Creating it once before the loop gives the same function object for
every iteration. That is only the same program when nothing the creation reads changes
inside the loop, so the move is made only when:

- the creation is a whole statement ``name = tf.function(...)`` directly in the loop's
  body (run on every iteration, not under an ``if``), and not the body's only statement;
- what it reads is names, attributes, literals, lambdas and ``tf.TensorSpec(...)``
  (no other call: ``tf.function(make_model())`` makes a new object each time);
- no name it reads, and no other binding of ``name``, is assigned anywhere in the loop
  (libcst's scope analysis; ``global``/``nonlocal`` in the loop stops it), and the loop
  header does not read ``name``.

It moves out of as many enclosing loops (of the same function) as that holds for. The
fix is *safe* when the wrapped function is a ``def`` or lambda whose free names are
each bound exactly once (what it reads at trace time cannot change between iterations);
otherwise (``tf.function(model)``, ``tf.function(self.step)``) it is *unsafe*: the
object may change state between iterations, and the old code traced it anew each time.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import Assignment, ScopeProvider

from autosig.metadata import iter_tree
from autosig.model import FixSafety
from autosig.rules.context import LOOPS, RuleContext

PURE_CALLS = frozenset(
    f"{module}.{name}"
    for module in ("tensorflow", "tensorflow.compat.v2", "tensorflow.compat.v1")
    for name in ("TensorSpec", "RaggedTensorSpec", "SparseTensorSpec")
)
"""Calls a creation may make and still be hoisted: they build equal values each time."""

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
    """The edit that moves a creation before ``loop`` (the outermost loop it leaves)."""

    loop: cst.For | cst.While
    replacement: cst.FlattenSentinel[cst.BaseStatement]
    safety: FixSafety


def plan_hoist(ctx: RuleContext, creation: cst.Call) -> Hoist | None:
    """How to move ``creation`` (a ``tf.function(...)`` call) out of its loops, if it can be."""
    found = _creation_statement(ctx, creation)
    if found is None:
        return None
    statement, target = found
    reads = _names_read(ctx, creation)
    if reads is None:
        return None
    outermost: cst.For | cst.While | None = None
    loop = ctx.enclosing_loop(statement)
    while loop is not None and _can_leave(ctx, loop, reads, target, statement):
        outermost = loop
        loop = ctx.enclosing_loop(loop)
    if outermost is None:
        return None
    moved = statement.with_changes(
        leading_lines=(*outermost.leading_lines, *statement.leading_lines)
    )
    rest = outermost.deep_remove(statement)
    if not isinstance(rest, (cst.For, cst.While)):
        return None
    rest = rest.with_changes(leading_lines=())
    return Hoist(outermost, cst.FlattenSentinel([moved, rest]), _safety(ctx, creation))


def _creation_statement(
    ctx: RuleContext, creation: cst.Call
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
    if loop.body is not block or len(block.body) < 2:
        return None
    return line, assign.targets[0].target


def _names_read(ctx: RuleContext, creation: cst.Call) -> list[cst.Name] | None:
    """Every name the creation reads, or None if it does more than read (a call)."""
    names: list[cst.Name] = []
    stack: list[cst.CSTNode] = [creation]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Lambda):
            # its body runs later, when called: only what it reads matters
            names.extend(_loads(ctx, node.body))
            stack.extend(p.default for p in node.params.params if p.default is not None)
            continue
        if isinstance(node, cst.Call):
            if not (node is creation or node is creation.func or _pure_call(ctx, node)):
                return None
        elif not isinstance(node, _READ_ONLY):
            return None
        elif isinstance(node, cst.Name) and _is_load(ctx, node):
            names.append(node)
        stack.extend(node.children)
    return names


def _pure_call(ctx: RuleContext, call: cst.Call) -> bool:
    return bool(ctx.qualified_names(call.func) & PURE_CALLS)


def _is_load(ctx: RuleContext, name: cst.Name) -> bool:
    """A name that is read (not an attribute, keyword or parameter name)."""
    parent = ctx.parent(name)
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return False
    return not isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias))


def _loads(ctx: RuleContext, node: cst.CSTNode) -> list[cst.Name]:
    return [n for n in iter_tree(node) if isinstance(n, cst.Name) and _is_load(ctx, n)]


def _inside(ctx: RuleContext, node: cst.CSTNode, container: cst.CSTNode) -> bool:
    return node is container or any(a is container for a in ctx.ancestors(node))


def _assignments(ctx: RuleContext, name: cst.Name) -> list[Assignment] | None:
    scope = ctx.get_metadata(ScopeProvider, name)
    if scope is None:
        return None
    return [a for a in scope[name.value] if isinstance(a, Assignment)]


def _can_leave(
    ctx: RuleContext,
    loop: cst.For | cst.While,
    reads: list[cst.Name],
    target: cst.Name,
    statement: cst.SimpleStatementLine,
) -> bool:
    """Whether the creation computes the same thing before ``loop`` as in it."""
    if any(isinstance(n, (cst.Global, cst.Nonlocal)) for n in iter_tree(loop)):
        return False
    header = loop.iter if isinstance(loop, cst.For) else loop.test
    if any(isinstance(n, cst.Name) and n.value == target.value for n in iter_tree(header)):
        return False
    for name in reads:
        assignments = _assignments(ctx, name)
        if assignments is None or any(_inside(ctx, a.node, loop) for a in assignments):
            return False
    own = _assignments(ctx, target)
    if own is None:
        return False
    return all(_inside(ctx, a.node, statement) for a in own if _inside(ctx, a.node, loop))


def _safety(ctx: RuleContext, creation: cst.Call) -> FixSafety:
    """Safe when the wrapped function reads nothing that can be rebound (see the module doc)."""
    wrapped = _wrapped(creation)
    if isinstance(wrapped, cst.Lambda):
        return "safe" if _free_names_fixed(ctx, wrapped) else "unsafe"
    if isinstance(wrapped, cst.Name):
        assignments = _assignments(ctx, wrapped)
        if assignments is not None and len(assignments) == 1:
            definition = assignments[0].node  # a def's assignment is the FunctionDef
            if isinstance(definition, cst.FunctionDef):
                return "safe" if _free_names_fixed(ctx, definition) else "unsafe"
    return "unsafe"


def _wrapped(creation: cst.Call) -> cst.BaseExpression | None:
    """The function a creation wraps: ``tf.function(f, ...)`` or ``tf.function(...)(f)``."""
    for index, arg in enumerate(creation.args):
        if arg.keyword is None and not arg.star and index == 0:
            return arg.value
        if arg.keyword is not None and arg.keyword.value == "func":
            return arg.value
    return None


def _free_names_fixed(ctx: RuleContext, function: cst.FunctionDef | cst.Lambda) -> bool:
    """Each name ``function`` reads from outside itself is bound exactly once."""
    for name in _loads(ctx, function.body):
        assignments = _assignments(ctx, name)
        if assignments is None:
            continue
        outside = [a for a in assignments if not _inside(ctx, a.node, function)]
        if outside and len(assignments) != 1:
            return False
    return True

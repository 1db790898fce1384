"""A read-only libcst traversal that does not rebuild the tree it walks.

libcst's ``CSTNode.visit`` builds a new copy of every node it passes through, even for
a ``CSTVisitor``, which cannot change anything and whose copy is thrown away (libcst's
own comment there: "TODO: provide traversal where children are not replaced"). Every
metadata pass ``check`` and ``fix`` resolve (expression contexts, scopes) and every
visitor of the rules and analyses pays for those copies: about two thirds of a pass.

Inside ``read_only_visits()``, a visit by a ``CSTVisitor`` walks the same children in
the same order with the same calls (``on_visit``, ``on_visit_attribute`` and
``on_leave_attribute`` around each field, ``on_leave``) and returns the node itself, as
libcst's does; transformers (which may change the tree) still take libcst's path. The
order of a node type's fields is learnt from libcst itself: the first time a type is
met, its ``_visit_and_replace_children`` runs once with a visitor that records which
fields it announces and descends into nothing. A type whose method visits a field only
for some values (``FormattedStringExpression.format_spec``), or whose method cannot be
read, keeps libcst's own path. Which types those are is read from libcst's source
(``inspect``, ``ast``) unless libcst is the version ``CHECKED_LIBCST`` names, whose
answer is kept here (a test keeps it true): reading the source of each type met cost
a one-file check about a tenth of its time after imports.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from libcst import CSTNode, CSTVisitor, Module
from libcst._batched_visitor import BatchableCSTVisitor, _BatchedCSTVisitor

try:
    from libcst._version import __version__ as _LIBCST_VERSION
except ImportError:  # pragma: no cover - every libcst release has it
    _LIBCST_VERSION = ""

CHECKED_LIBCST = "1.9.0"
CONDITIONAL_IN_CHECKED = frozenset({"FormattedStringExpression", "TemplatedStringExpression"})
"""libcst ``CHECKED_LIBCST``'s node types whose ``_visit_and_replace_children`` visits a
field only for some values: ``_visits_conditionally``'s answer for every node type of
that version, kept so a run need not read libcst's source."""

_libcst_visit = CSTNode.visit
_ORDER: dict[type, tuple[str, ...] | None] = {}
"""Node type -> its fields in visiting order (None: the type keeps libcst's path)."""
_UNKNOWN: Any = object()
_READ_ONLY: dict[type, bool] = {}
_IS_NODE: dict[type, bool] = {}
_depth = 0
_lock = threading.Lock()


class _FieldOrder(CSTVisitor):
    """Records the fields ``_visit_and_replace_children`` announces for one node."""

    def __init__(self, node: CSTNode) -> None:
        super().__init__()
        self.node = node
        self.fields: list[str] = []

    def on_visit(self, node: CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: CSTNode, attribute: str) -> None:
        if node is self.node and attribute not in self.fields:
            self.fields.append(attribute)


def field_order(node: CSTNode) -> tuple[str, ...] | None:
    """The fields libcst visits for ``node``'s type, in its order (None: the type visits
    a field only for some values, so it keeps libcst's path)."""
    kind = type(node)
    if kind not in _ORDER:
        if _conditional(kind):
            _ORDER[kind] = None
        else:
            recorder = _FieldOrder(node)
            node._visit_and_replace_children(recorder)
            _ORDER[kind] = tuple(recorder.fields)
    return _ORDER[kind]


def _conditional(kind: type) -> bool:
    if _LIBCST_VERSION == CHECKED_LIBCST and kind.__module__.startswith("libcst."):
        return kind.__name__ in CONDITIONAL_IN_CHECKED
    return _visits_conditionally(kind)


def _visits_conditionally(kind: type) -> bool:
    """Whether ``kind``'s ``_visit_and_replace_children`` visits a field under a
    condition or in a loop (or cannot be read to tell)."""
    method = next(
        (
            k.__dict__["_visit_and_replace_children"]
            for k in kind.__mro__
            if "_visit_and_replace_children" in k.__dict__
        ),
        None,
    )
    if method is None:
        return True
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
    except (OSError, TypeError, SyntaxError):
        return True
    branches = (ast.If, ast.IfExp, ast.For, ast.While, ast.BoolOp, ast.Try, ast.comprehension)
    for node in ast.walk(tree):
        if not isinstance(node, branches):
            continue
        if (
            isinstance(node, ast.IfExp)
            and _field(node.body)
            and _field(node.body) == _field(node.orelse)
        ):
            continue  # ImportFrom.names: announced either way
        if any(_field(inner) for inner in ast.walk(node)):
            return True
    return False


def _field(expr: ast.AST) -> str | None:
    """The field a ``visit_*(self, "field", ...)`` helper call announces."""
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id.startswith("visit_")
        and len(expr.args) > 1
        and isinstance(expr.args[1], ast.Constant)
    ):
        return str(expr.args[1].value)
    return None


def _is_node(value: Any) -> bool:
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = isinstance(value, CSTNode)
    return known


_MODULE_HANDLERS = frozenset({"visit_Module", "leave_Module"})


def _module_only(visitor: _BatchedCSTVisitor) -> bool:
    """A batched pass whose visitors handle only the module node (libcst's
    ``ScopeProvider`` and ``ExpressionContextProvider`` each run their own whole-tree
    visitor from ``visit_Module``): walking the children would call no handler."""
    return (  # read defensively: libcst's private batched visitor (1.9.0's fields)
        getattr(visitor, "before_visit", _UNKNOWN) is None
        and getattr(visitor, "after_leave", _UNKNOWN) is None
        and _MODULE_HANDLERS.issuperset(getattr(visitor, "visitor_methods", ("?",)))
    )


def _visit(self: CSTNode, visitor: Any) -> Any:
    kind = type(visitor)
    if kind is _BatchedCSTVisitor and type(self) is Module and _module_only(visitor):
        visitor.on_visit(self)
        visitor.on_leave(self)
        return self
    read_only = _READ_ONLY.get(kind)
    if read_only is None:
        read_only = _READ_ONLY[kind] = isinstance(visitor, CSTVisitor)
    if not read_only:
        return _libcst_visit(self, visitor)
    order = _ORDER.get(type(self), _UNKNOWN)
    if order is _UNKNOWN:
        order = field_order(self)
    if order is None:
        return _libcst_visit(self, visitor)
    if visitor.on_visit(self):
        for name in order:
            visitor.on_visit_attribute(self, name)
            value = getattr(self, name)
            if type(value) is tuple or type(value) is list:
                for child in value:
                    child.visit(visitor)
            elif _is_node(value):
                value.visit(visitor)
            visitor.on_leave_attribute(self, name)
    visitor.on_leave(self)
    return self


_libcst_get_visitors = BatchableCSTVisitor.get_visitors
_HANDLER_NAMES: dict[type, tuple[str, ...]] = {}
"""Batchable visitor type -> the names of its ``visit_*``/``leave_*`` methods that are not
no-op stubs (what libcst's ``get_visitors`` finds with ``inspect.getmembers`` on every
resolution: about a millisecond per provider and file)."""


def _get_visitors(self: BatchableCSTVisitor) -> dict[str, Any]:
    kind = type(self)
    names = _HANDLER_NAMES.get(kind)
    if names is None:
        names = _HANDLER_NAMES[kind] = tuple(_libcst_get_visitors(self))
    return {name: getattr(self, name) for name in names}


@contextmanager
def read_only_visits() -> Iterator[None]:
    """Within the block, ``CSTVisitor`` traversals skip libcst's node copies, a batched
    metadata pass whose providers only handle the module does not walk the tree again,
    and batchable visitors' handlers are looked up once per type (re-entrant)."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            CSTNode.visit = _visit  # type: ignore[method-assign]
            BatchableCSTVisitor.get_visitors = _get_visitors  # type: ignore[method-assign]
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                CSTNode.visit = _libcst_visit  # type: ignore[method-assign]
                BatchableCSTVisitor.get_visitors = _libcst_get_visitors  # type: ignore[method-assign]

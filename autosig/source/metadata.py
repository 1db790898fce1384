"""Cheaper libcst metadata for the providers every parse needs but pays most for.

libcst's ``ParentNodeProvider`` and ``QualifiedNameProvider`` each walk the whole tree
with a visitor, and a libcst visitor pass costs about 0.2 ms a line (it rebuilds every
node it leaves). Static ``fix`` parses each file at least twice, so these two walks
were a third of its time. ``ParentProvider`` gives the same parent map by reading each
node's dataclass fields (no visitor); ``qualified_names`` asks the node's scope when a
rule needs it, which is what ``QualifiedNameProvider`` does lazily for every node.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

import libcst as cst
from libcst.metadata import (
    BaseMetadataProvider,
    CodePosition,
    CodeRange,
    ExpressionContext,
    ExpressionContextProvider,
    MetadataWrapper,
    QualifiedName,
    ScopeProvider,
)
from libcst.metadata.base_provider import LazyValue
from libcst.metadata.position_provider import PositionProvidingCodegenState


@cache
def _field_names(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))


_NODE_TYPES: dict[type, bool] = {}
"""type -> whether it is a CSTNode (``isinstance`` against libcst's abstract base class
costs several times a dictionary lookup, and every walk asks it for every field)."""


def _is_node_type(kind: type) -> bool:
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return known


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    types = _NODE_TYPES
    for name in _field_names(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            for item in value:
                if types.get(type(item)) or _is_node_type(type(item)):
                    found.append(item)
        elif types.get(kind) or _is_node_type(kind):
            found.append(value)
    return found


def iter_tree(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node below it (any order): a fast ``m.findall`` for rules.

    libcst's matcher ``findall`` walks with a visitor (about 0.2 ms a line); rules that
    search a function body for every site add that up quickly.
    """
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(_children(current))


def index_tree(
    node: cst.CSTNode,
) -> tuple[list[cst.CSTNode], dict[cst.CSTNode, cst.CSTNode], dict[cst.CSTNode, list[cst.CSTNode]]]:
    """One walk of ``node``'s subtree: its nodes in ``iter_tree``'s order, each node's
    parent within it, each node's ``children``: for an analysis that would otherwise walk
    the same subtree once per question."""
    nodes: list[cst.CSTNode] = []
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    kids: dict[cst.CSTNode, list[cst.CSTNode]] = {}
    stack = [node]
    while stack:
        current = stack.pop()
        nodes.append(current)
        found = _children(current)
        kids[current] = found
        for child in found:
            parents[child] = current
        stack.extend(found)
    return nodes, parents, kids


def ancestors_in(
    node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]
) -> Iterator[cst.CSTNode]:
    """The nodes around ``node``, innermost first, by ``parents`` (``index_tree``'s):
    ``MetadataView.ancestors`` for an analysis that indexed its tree once."""
    current = parents.get(node)
    while current is not None:
        yield current
        current = parents.get(current)


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children`` (in field order, not source order) without the visitor pass
    that libcst's property makes."""
    return list(_children(node))


class ParentProvider(BaseMetadataProvider[cst.CSTNode]):
    """Each node's parent, as ``ParentNodeProvider`` gives it, without a visitor pass."""

    def _gen_impl(self, module: cst.Module) -> None:
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            for child in _children(node):
                self.set_metadata(child, node)
                stack.append(child)


class PositionProvider(BaseMetadataProvider[CodeRange]):
    """libcst's ``PositionProvider`` (each node's syntactic start and end), computed the
    same way with a cheaper book-keeping: libcst makes two position objects and a range
    per node with validating constructors, splits every token on newlines with a
    regular expression and opens a generator-based context manager for every statement
    and expression, which was most of the cost of positions (a whole-module code
    generation pass). Here positions are made once per (line, column), ranges without
    re-validation, tokens searched for newlines first. A test keeps every range equal
    to libcst's. Ask this one, not libcst's: a wrapper would compute both.
    """

    def _gen_impl(self, module: cst.Module) -> None:
        state = _PositionState(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            provider=self,
        )
        module._codegen(state)


_new = object.__new__
_set = object.__setattr__


class _PositionState(PositionProvidingCodegenState):
    """libcst's position book-keeping (same calls, same ranges), made cheaply."""

    def __init__(self, **fields: Any) -> None:
        super().__init__(**fields)
        self._positions: dict[tuple[int, int], CodePosition] = {}
        self._starts: list[tuple[int, int]] = []

    def _position(self, line: int, column: int) -> CodePosition:
        position = self._positions.get((line, column))
        if position is None:
            position = _new(CodePosition)
            _set(position, "line", line)
            _set(position, "column", column)
            self._positions[line, column] = position
        return position

    def _update_position(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            segments = _NEWLINES.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._update_position(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        computed = self.provider._computed  # type: ignore[attr-defined]
        if node not in computed:
            computed[node] = _range(self._position(*start), self._position(self.line, self.column))

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """``record_syntactic_position``'s context manager, as a class (libcst's is a
    generator: several objects per statement and expression)."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(
        self,
        state: _PositionState,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node
        self.start = (state.line, state.column)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        state = self.state
        computed = state.provider._computed  # type: ignore[attr-defined]
        start = (
            computed[self.start_node].start
            if self.start_node is not None
            else state._position(*self.start)
        )
        end = (
            computed[self.end_node].end
            if self.end_node is not None
            else state._position(state.line, state.column)
        )
        computed[self.node] = _range(start, end)


def _range(start: CodePosition, end: CodePosition) -> CodeRange:
    found = _new(CodeRange)
    _set(found, "start", start)
    _set(found, "end", end)
    return found


_NEWLINES = re.compile(r"\r\n?|\n")


_LOAD, _STORE, _DEL = ExpressionContext.LOAD, ExpressionContext.STORE, ExpressionContext.DEL
_SET_AND_DESCEND = (cst.Tuple, cst.List, cst.StarredElement)


def expression_contexts(module: cst.Module) -> dict[cst.CSTNode, ExpressionContext]:
    """``ExpressionContextProvider``'s map for ``module``, by a walk over the fields
    instead of a visitor pass (which ``ScopeProvider`` needs first: a pass as costly as
    the scope analysis' own). The same rules as libcst's ``ExpressionContextVisitor``:
    an assignment's, ``for``'s, comprehension's, ``as``'s, ``del``'s, def's, class's and
    parameter's target names are stored (deleted), an attribute's value and a
    subscript's value and slices are loaded, ``attr`` gets no context, all else inherits
    the context it is in. A test keeps the map equal to libcst's."""
    found: dict[cst.CSTNode, ExpressionContext] = {}
    stack: list[tuple[cst.CSTNode, ExpressionContext]] = [(module, _LOAD)]
    push = stack.append
    while stack:
        node, context = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            found[node] = context
        elif kind is cst.Attribute:
            found[node] = context
            push((node.value, _LOAD))
        elif kind is cst.Subscript:
            found[node] = context
            push((node.value, _LOAD))
            stack.extend((element, _LOAD) for element in node.slice)
        elif kind is cst.Assign:
            stack.extend((target, _STORE) for target in node.targets)
            push((node.value, context))
        elif kind is cst.AnnAssign:
            push((node.target, _STORE))
            push((node.annotation, context))
            if node.value:
                push((node.value, context))
        elif kind is cst.AugAssign or kind is cst.NamedExpr:
            push((node.target, _STORE))
            push((node.value, context))
        elif kind is cst.AsName:
            push((node.name, _STORE))
        elif kind is cst.CompFor:
            push((node.target, _STORE))
            push((node.iter, context))
            stack.extend((condition, context) for condition in node.ifs)
            if node.inner_for_in:
                push((node.inner_for_in, context))
        elif kind is cst.For:
            push((node.target, _STORE))
            push((node.iter, context))
            push((node.body, context))
            if node.orelse:
                push((node.orelse, context))
        elif kind is cst.Del:
            push((node.target, _DEL))
        elif kind is cst.ClassDef:
            push((node.name, _STORE))
            push((node.body, context))
            stack.extend((base, context) for base in node.bases)
            stack.extend((keyword, context) for keyword in node.keywords)
            stack.extend((decorator, context) for decorator in node.decorators)
        elif kind is cst.FunctionDef:
            push((node.name, _STORE))
            push((node.params, context))
            push((node.body, context))
            stack.extend((decorator, context) for decorator in node.decorators)
            if node.returns:
                push((node.returns, context))
        elif kind is cst.Param:
            push((node.name, _STORE))
            if node.annotation:
                push((node.annotation, context))
            if node.default:
                push((node.default, context))
        else:
            if kind in _SET_AND_DESCEND:
                found[node] = context
            stack.extend((child, context) for child in _children(node))
    return found


class Wrapper(MetadataWrapper):
    """libcst's ``MetadataWrapper`` that makes ``ExpressionContextProvider``'s map with
    ``expression_contexts`` (the same map, without a visitor pass) when a provider it
    resolves needs it (``ScopeProvider``)."""

    __slots__ = ()

    def resolve_many(self, providers: Collection[Any]) -> Any:
        if ExpressionContextProvider not in self._metadata and _needs_contexts(providers):
            self._metadata[ExpressionContextProvider] = MappingProxyType(
                expression_contexts(self.module)
            )
        return super().resolve_many(providers)


def _needs_contexts(providers: Collection[Any]) -> bool:
    stack = list(providers)
    while stack:
        provider = stack.pop()
        if provider is ExpressionContextProvider:
            return True
        stack.extend(provider.METADATA_DEPENDENCIES)
    return False


def qualified_names(
    get_metadata: Callable[..., Any], node: cst.CSTNode
) -> Collection[QualifiedName]:
    """``QualifiedNameProvider``'s answer for ``node``, computed only when asked.

    ``get_metadata`` is a visitor's or RuleContext's ``get_metadata`` with
    ``ScopeProvider`` resolved.
    """
    scope = get_metadata(ScopeProvider, node, None)
    return scope.get_qualified_names_for(node) if scope is not None else set()


LOOPS = (cst.For, cst.While)
SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)


class MetadataView:
    """One parsed file and the metadata questions asked of it (parents, positions,
    qualified names, the function, loop or class around a node), answered from one
    wrapper: the base of the rules' context and of the analyses that read a file without
    the rules' machinery."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.wrapper = wrapper
        self.module: cst.Module = wrapper.module

    def get_metadata(self, provider: type, node: cst.CSTNode, default: Any = None) -> Any:
        """Metadata of ``node`` (resolved once per provider and cached by the wrapper)."""
        value = self.wrapper.resolve(provider).get(node, default)
        return value() if isinstance(value, LazyValue) else value

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentProvider, node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def is_within(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        """``node`` is ``container`` or lies somewhere inside it."""
        return node is container or any(a is container for a in self.ancestors(node))

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """1-based line and column of ``node``'s start."""
        start = self.get_metadata(PositionProvider, node).start
        return start.line, start.column + 1

    def line_span(self, node: cst.CSTNode) -> range:
        where = self.get_metadata(PositionProvider, node)
        return range(where.start.line, where.end.line + 1)

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in qualified_names(self.get_metadata, node)}

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    # -- the scope around a node -------------------------------------------------------
    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | cst.Lambda | None:
        """The def or lambda ``node`` is in (None at module or class level)."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return ancestor
            if isinstance(ancestor, (cst.ClassDef, cst.Module)):
                return None
        return None

    def enclosing_loop(self, node: cst.CSTNode) -> cst.For | cst.While | None:
        """The innermost loop around ``node`` within its own function (None if none)."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, LOOPS):
                return ancestor
            if isinstance(ancestor, SCOPES):
                return None
        return None

    def enclosing_class(self, function: cst.FunctionDef) -> cst.ClassDef | None:
        """The class ``function`` is a method of (directly in its body), else None."""
        parent = self.parent(function)
        if isinstance(parent, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            parent = self.parent(parent)
        return parent if isinstance(parent, cst.ClassDef) else None

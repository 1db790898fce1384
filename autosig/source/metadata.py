"""Cheaper libcst metadata for the two providers every parse needs but pays most for.

libcst's ``ParentNodeProvider`` and ``QualifiedNameProvider`` each walk the whole tree
with a visitor, and a libcst visitor pass costs about 0.2 ms a line (it rebuilds every
node it leaves). Static ``fix`` parses each file at least twice, so these two walks
were a third of its time. ``ParentProvider`` gives the same parent map by reading each
node's dataclass fields (no visitor); ``qualified_names`` asks the node's scope when a
rule needs it, which is what ``QualifiedNameProvider`` does lazily for every node.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterator
from functools import cache
from typing import Any

import libcst as cst
from libcst.metadata import (
    BaseMetadataProvider,
    MetadataWrapper,
    PositionProvider,
    QualifiedName,
    ScopeProvider,
)
from libcst.metadata.base_provider import LazyValue


@cache
def _field_names(kind: type[cst.CSTNode]) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(kind))


def _children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for name in _field_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


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

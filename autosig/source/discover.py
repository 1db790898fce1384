"""Find every tf.function site in a module, however it is spelled, without importing it.

Uses libcst metadata: qualified names (from ScopeProvider) resolve aliases (``import
tensorflow as tf2``, ``from tensorflow import function as f``, ``tf.compat.v2.function``),
ScopeProvider resolves the function a call form wraps (``fast = tf.function(slow)``),
parents (``metadata.ParentProvider``) give the nesting ``__qualname__`` is built from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst
from libcst.metadata import (
    MetadataWrapper,
    QualifiedName,
    QualifiedNameSource,
    ScopeProvider,
)

from autosig.errors import AutosigError
from autosig.source.metadata import (
    MetadataView,
    ParentProvider,
    PositionProvider,
    Wrapper,
    iter_tree,
    qualified_names,
)
from autosig.source.sites import Site

TF_FUNCTION_NAMES = frozenset(
    {
        "tensorflow.function",
        "tensorflow.compat.v1.function",
        "tensorflow.compat.v2.function",
        "tensorflow.python.eager.def_function.function",
        "tensorflow.python.eager.polymorphic_function.polymorphic_function.function",
    }
)
"""Fully qualified names under which TensorFlow exports ``tf.function``."""

UNRESOLVED_TF_FUNCTION = "tf.function"
"""``tf.function`` with ``tf`` bound by nothing we can see (star import, injected global)."""

METADATA = (ParentProvider, PositionProvider, ScopeProvider)

LOOP_NODES = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass(frozen=True)
class FunctionSite:
    """A tf.function site together with the CST nodes rules and rewriters work on.

    ``function`` is the traced Python function when it is defined in this module
    (a FunctionDef or Lambda), else None. ``call`` is the ``tf.function(...)`` call
    that holds the keyword arguments (None for a bare ``@tf.function``).
    ``decorator`` is set for the decorator form.
    """

    site: Site
    function: cst.FunctionDef | cst.Lambda | None
    call: cst.Call | None
    decorator: cst.Decorator | None
    tf_reference: cst.BaseExpression
    """The expression naming tf.function (``tf.function``, ``f``, ...), for reuse in fixes."""


def parse_module(text: str, path: str = "<string>") -> cst.Module:
    """Parse with libcst, turning its syntax error into a one-line AutosigError."""
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise AutosigError(_syntax_error_message(text, exc), path) from None
    except RecursionError:
        raise AutosigError("does not parse: nesting too deep", path) from None


def _syntax_error_message(text: str, exc: cst.ParserSyntaxError) -> str:
    """Python's own words for the error (``line 5: '(' was never closed``), else libcst's.

    libcst reports where its parser gave up (often the line after the mistake) with a
    list of the tokens it expected; ``compile`` names the real cause and line.
    """
    try:
        compile(text, "<autosig>", "exec", flags=0x400, dont_inherit=True)  # PyCF_ONLY_AST
    except SyntaxError as err:
        if err.lineno:
            column = f", column {err.offset}" if err.offset else ""
            return f"does not parse (line {err.lineno}{column}): {err.msg}"
    except (ValueError, RecursionError, MemoryError):
        pass
    first = str(exc.message).strip().splitlines()[0] if exc.message else "syntax error"
    if "expected one of" in first:
        first = first.split(": expected one of")[0] + ": invalid syntax"
    return f"does not parse (line {exc.raw_line}, column {exc.raw_column + 1}): {first}"


def _is_tf_function_name(q: QualifiedName) -> bool:
    if q.name in TF_FUNCTION_NAMES:
        return True
    return q.name == UNRESOLVED_TF_FUNCTION and q.source is not QualifiedNameSource.IMPORT


class _SiteCollector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = METADATA

    def __init__(self, path: str, view: MetadataView) -> None:
        super().__init__()
        self.path = path
        self.view = view
        self.sites: list[FunctionSite] = []
        self.order: list[tuple[int, int]] = []
        """Where each site's creation starts (``sites``' tie-break: source order)."""
        self._handled_calls: set[int] = set()

    # -- helpers ---------------------------------------------------------------------
    def _is_tf_function(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return False
        return any(_is_tf_function_name(q) for q in qualified_names(self.get_metadata, node))

    def _tf_call(self, expr: cst.BaseExpression) -> cst.Call | None:
        """``expr`` if it is ``tf.function(...)``."""
        if isinstance(expr, cst.Call) and self._is_tf_function(expr.func):
            return expr
        return None

    def _pos(self, node: cst.CSTNode) -> tuple[int, int]:
        pos = self.get_metadata(PositionProvider, node).start
        return pos.line, pos.column + 1

    def _parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.view.parent(node)

    def qualname_of(self, node: cst.FunctionDef | cst.Lambda | cst.ClassDef) -> str:
        """``__qualname__`` as Python would compute it for ``node``."""
        parts: list[str] = []
        if isinstance(node, cst.Lambda):
            parts.append("<lambda>")
        else:
            parts.append(node.name.value)
        current = self._parent(node)
        while current is not None:
            if isinstance(current, (cst.FunctionDef, cst.Lambda)):
                name = "<lambda>" if isinstance(current, cst.Lambda) else current.name.value
                parts.append("<locals>")
                parts.append(name)
            elif isinstance(current, cst.ClassDef):
                parts.append(current.name.value)
            current = self._parent(current)
        return ".".join(reversed(parts))

    def _is_method(self, node: cst.FunctionDef) -> bool:
        return self.view.enclosing_class(node) is not None

    def _in_loop(self, node: cst.CSTNode) -> bool:
        """Inside a loop or comprehension, through any functions around it, up to its
        class or module."""
        for ancestor in self.view.ancestors(node):
            if isinstance(ancestor, LOOP_NODES):
                return True
            if isinstance(ancestor, (cst.ClassDef, cst.Module)):
                return False
        return False

    @staticmethod
    def _kwargs(call: cst.Call | None, module: cst.Module) -> dict[str, str]:
        if call is None:
            return {}
        return {
            arg.keyword.value: module.code_for_node(arg.value)
            for arg in call.args
            if arg.keyword is not None
        }

    def _resolve_target(
        self, expr: cst.BaseExpression, at: cst.CSTNode
    ) -> tuple[cst.FunctionDef | cst.Lambda | None, bool]:
        """The function a call form wraps, and whether it is a bound method."""
        if isinstance(expr, cst.Lambda):
            return expr, False
        if isinstance(expr, cst.Name):
            scope = self.get_metadata(ScopeProvider, at, None)
            if scope is None:
                return None, False
            for assignment in scope[expr.value]:
                target = getattr(assignment, "node", None)
                if isinstance(target, cst.FunctionDef):
                    return target, self._is_method(target)
            return None, False
        if (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and expr.value.value in ("self", "cls")
        ):
            klass = next((a for a in self.view.ancestors(at) if isinstance(a, cst.ClassDef)), None)
            if isinstance(klass, cst.ClassDef):
                for stmt in klass.body.body:
                    if isinstance(stmt, cst.FunctionDef) and stmt.name.value == expr.attr.value:
                        return stmt, True
        return None, False

    def _add(
        self,
        *,
        function: cst.FunctionDef | cst.Lambda | None,
        call: cst.Call | None,
        decorator: cst.Decorator | None,
        tf_reference: cst.BaseExpression,
        form: str,
        anchor: cst.CSTNode,
        is_method: bool,
        fallback_name: str,
    ) -> None:
        module = self.module
        if function is not None:
            line, col = self._pos(
                function.name if isinstance(function, cst.FunctionDef) else function
            )
            qualname = self.qualname_of(function)
        else:
            line, col = self._pos(anchor)
            qualname = fallback_name
        kwargs = self._kwargs(call, module)
        self.order.append(self._pos(anchor))
        self.sites.append(
            FunctionSite(
                site=Site(
                    path=self.path,
                    line=line,
                    col=col,
                    qualname=qualname,
                    form=form,  # type: ignore[arg-type]
                    decorator_args=kwargs,
                    is_method=is_method,
                    has_input_signature="input_signature" in kwargs
                    and kwargs["input_signature"] != "None",
                    has_reduce_retracing=kwargs.get("reduce_retracing") == "True",
                    in_loop=self._in_loop(anchor),
                ),
                function=function,
                call=call,
                decorator=decorator,
                tf_reference=call.func if call is not None else tf_reference,
            )
        )

    # -- visitors --------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            expr = decorator.decorator
            call = self._tf_call(expr)
            if call is not None or self._is_tf_function(expr):
                if call is not None:
                    self._handled_calls.add(id(call))
                self._add(
                    function=node,
                    call=call,
                    decorator=decorator,
                    tf_reference=expr if call is None else call.func,
                    form="decorator",
                    anchor=node,
                    is_method=self._is_method(node),
                    fallback_name=node.name.value,
                )
                break

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self._handled_calls:
            return
        inner = self._tf_call(node.func)
        if inner is not None and _wrapped_argument(inner) is not None:
            # tf.function(f)(x): the inner call is the site (visited next); this is a call of it
            return
        if inner is not None:
            # tf.function(jit_compile=True)(step)
            self._handled_calls.add(id(inner))
            wrapped = node.args[0].value if node.args else None
            call = inner
        elif self._is_tf_function(node.func):
            call = node
            wrapped = _wrapped_argument(node)
            if wrapped is None:
                # tf.function(jit_compile=True) used as a decorator factory elsewhere.
                return
        else:
            return
        self._handled_calls.add(id(call))
        function, bound = (
            self._resolve_target(wrapped, node) if wrapped is not None else (None, False)
        )
        fallback = self.module.code_for_node(wrapped) if wrapped is not None else "<unknown>"
        self._add(
            function=function,
            call=call,
            decorator=None,
            tf_reference=call.func,
            form="call",
            anchor=node,
            is_method=bound,
            fallback_name=fallback,
        )


def _wrapped_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The function a ``tf.function(...)`` call wraps (first positional or ``func=``)."""
    for index, arg in enumerate(call.args):
        if arg.keyword is None and arg.star == "" and index == 0:
            return arg.value
        if arg.keyword is not None and arg.keyword.value == "func":
            return arg.value
    return None


def discover_sites(wrapper: MetadataWrapper, path: str) -> list[FunctionSite]:
    """Every tf.function site in ``wrapper.module``, in source order.

    The collector looks at each def and call once, a def before its decorators and a
    call before the calls inside it (``iter_tree``'s order: a libcst visitor pass costs
    about four times as much, for nothing here).
    """
    collector = _SiteCollector(path, MetadataView(wrapper))
    with collector.resolve(wrapper):
        module = wrapper.module
        collector.visit_Module(module)
        for node in iter_tree(module):
            if isinstance(node, cst.Call):
                collector.visit_Call(node)
            elif isinstance(node, cst.FunctionDef):
                collector.visit_FunctionDef(node)
    order = sorted(
        range(len(collector.sites)),
        key=lambda i: (
            collector.sites[i].site.line,
            collector.sites[i].site.col,
            collector.order[i],
        ),
    )
    return [collector.sites[i] for i in order]


def discover_text(text: str, path: str = "<string>") -> tuple[MetadataWrapper, list[FunctionSite]]:
    """Parse ``text`` and discover its sites; raises AutosigError if it does not parse."""
    wrapper = Wrapper(parse_module(text, path), unsafe_skip_copy=True)
    return wrapper, discover_sites(wrapper, path)


@dataclass(frozen=True)
class Located:
    """A profiled function found in its file (``Source.find``): its site and the lines
    the planner's checks read, asked of the parse once."""

    site: FunctionSite
    lines: tuple[int, int]
    """First and last line of the function (``Source.lines_of``: what the source hash covers)."""
    comment_lines: list[int]
    """Where a suppression comment for it counts (``Source.site_lines``)."""


@dataclass
class Source:
    """A parsed file: its text, metadata wrapper and tf.function sites (or why not)."""

    text: str
    wrapper: MetadataWrapper | None
    sites: list[FunctionSite]
    error: str | None = None

    @classmethod
    def parse(cls, text: str, path: str) -> Source:
        try:
            wrapper, sites = discover_text(text, path)
        except AutosigError as exc:
            return cls(text, None, [], exc.message)
        return cls(text, wrapper, sites)

    def locate(self, qualname: str, line: int) -> FunctionSite | None:
        """The tf.function ``qualname`` nearest to ``line`` (the profile's line may be old)."""
        matches = [s for s in self.sites if s.function is not None and s.site.qualname == qualname]
        if not matches:
            return None
        return min(matches, key=lambda s: abs(s.site.line - line))

    def find(self, qualname: str, line: int) -> Located | None:
        """The tf.function ``qualname`` nearest to ``line`` (``locate``) with its lines."""
        site = self.locate(qualname, line)
        if site is None:
            return None
        return Located(site, self.lines_of(site), self.site_lines(site))

    def lines_of(self, site: FunctionSite) -> tuple[int, int]:
        """First and last line of the function (def keyword through the end of the body)."""
        assert self.wrapper is not None and site.function is not None
        positions = self.wrapper.resolve(PositionProvider)
        where = positions[site.function]
        return where.start.line, where.end.line

    def site_lines(self, site: FunctionSite) -> list[int]:
        """Lines where a suppression comment for this function counts."""
        assert self.wrapper is not None
        positions = self.wrapper.resolve(PositionProvider)
        lines = {site.site.line}
        function = site.function
        nodes: list[Any] = []
        if function is not None and hasattr(function, "decorators"):
            nodes.extend(function.decorators)
        if site.call is not None:
            nodes.append(site.call)
        for node in nodes:
            where = positions.get(node)
            if where is not None:
                lines.update(range(where.start.line, where.end.line + 1))
        return sorted(lines)

"""What a rule sees of one file: the parsed module, its metadata, its tf.function sites.

``FileContext`` is all of it but the facts several rules share; those are
``rules/context.py``'s ``RuleContext``, which every rule receives. The analyses that
compute a shared fact (AS106's re-created sites) take a ``FileContext``, so the rule
context can hold their result without a circle.

Rules must only report code that runs while a function is traced. ``traced_regions``
and ``iter_traced`` give exactly that: the body of each traced function, including
nested plain ``def``s and lambdas (they run when called during the trace), but not
nested tf.function sites (they are sites of their own, reported once) and not helpers
defined elsewhere in the file (we cannot know statically that they are traced).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper

from autosig.analysis.project_writes import OtherFiles
from autosig.rules.violation import ImportNeeded
from autosig.source.discover import FunctionSite, discover_sites, parse_module
from autosig.source.metadata import MetadataView, PositionProvider, Wrapper
from autosig.source.project_modules import ProjectModules
from autosig.source.suppress import Suppressions

N = TypeVar("N", bound=cst.CSTNode)
C = TypeVar("C", bound="FileContext")

TENSORFLOW_MODULES = ("tensorflow", "tensorflow.compat.v2", "tensorflow.compat.v1")
"""Modules whose alias can spell ``<alias>.print``, ``<alias>.random``, ``<alias>.Variable``."""


class FileContext(MetadataView):
    """One parsed file plus everything rules need to inspect and fix it (but the facts
    rules share: ``RuleContext``)."""

    def __init__(
        self,
        wrapper: MetadataWrapper,
        sites: list[FunctionSite],
        path: str,
        text: str | None = None,
    ) -> None:
        super().__init__(wrapper)
        self.sites = sites
        self.path = path
        self.text = self.module.code if text is None else text
        """The parsed text (libcst's module prints back exactly the text it parsed:
        given, it need not be generated again, a whole-module pass)."""
        self.tf_alias, self.tf_import, self._tf_statement = _tensorflow_alias(self.module)

    @classmethod
    def from_text(cls: type[C], text: str, path: str) -> C:
        """Parse and discover; raises AutosigError naming ``path`` if it does not parse."""
        wrapper = Wrapper(parse_module(text, path), unsafe_skip_copy=True)
        return cls(wrapper, discover_sites(wrapper, path), path, text)

    # -- metadata ----------------------------------------------------------------------
    def refers_to(self, node: cst.CSTNode, *names: str) -> bool:
        """True when ``node`` (a Name/Attribute) resolves to one of ``names``."""
        return not self.qualified_names(node).isdisjoint(names)

    @cached_property
    def project_modules(self) -> ProjectModules | None:
        """The project's other modules, beside and above this file (none for stdin)."""
        if self.path.startswith("<") or not Path(self.path).is_file():
            return None
        return ProjectModules.around(self.path)

    @cached_property
    def project_writes(self) -> OtherFiles:
        """What the project's other files may write or copy (AS106's per-instance cache
        and the ``optimizer.build`` fix ask; every answer None for stdin)."""
        return OtherFiles(None if self.project_modules is None else self.path)

    # -- traced code -------------------------------------------------------------------
    @cached_property
    def _site_functions(self) -> dict[int, FunctionSite]:
        functions: dict[int, FunctionSite] = {}
        for site in self.sites:
            if site.function is not None:
                functions.setdefault(id(site.function), site)
        return functions

    def traced_regions(self) -> Iterator[tuple[FunctionSite, cst.CSTNode]]:
        """(site, body) for every traced function defined in this file, once per function."""
        for site in self._site_functions.values():
            yield site, site.function.body  # type: ignore[union-attr]

    def iter_traced(self, *types: type[N]) -> Iterator[tuple[FunctionSite, N]]:
        """Every node of ``types`` in code that runs while some site is traced."""
        for site, body in self.traced_regions():
            collector = _Collect(types, self._site_functions)
            body.visit(collector)
            for node in collector.found:
                yield site, node  # type: ignore[misc]

    # -- fixes ---------------------------------------------------------------------------
    def tf_expr(self, dotted: str) -> cst.BaseExpression:
        """``<alias>.<dotted>`` as an expression, e.g. ``tf2.random.uniform``."""
        return cst.parse_expression(f"{self.tf_alias}.{dotted}")

    def tf_bound_before(self, node: cst.CSTNode) -> bool:
        """Module-level code at ``node`` can use the TensorFlow alias (import above it).

        An import autosig adds goes after the file's leading imports, so before any
        other statement.
        """
        if self._tf_statement is None:
            return True
        return self.position(self._tf_statement)[0] < self.position(node)[0]

    def tf_imports(self) -> list[ImportNeeded]:
        """The import generated code needs ([] when the file already binds TensorFlow)."""
        return [self.tf_import] if self.tf_import is not None else []

    @cached_property
    def suppressions(self) -> Suppressions:
        return Suppressions.from_module(self.module, self.text)

    def suppression_lines(self, node: cst.CSTNode, site: FunctionSite | None) -> set[int]:
        """Lines whose ``# autosig: ignore`` comment covers a finding at ``node``."""
        pos = self.get_metadata(PositionProvider, node)
        lines = {pos.start.line, pos.end.line}
        if site is not None:
            function = site.function
            if isinstance(function, cst.FunctionDef):
                lines.add(self.position(function)[0])
                lines.update(self.position(d)[0] for d in function.decorators)
            elif function is not None:
                lines.add(self.position(function)[0])
            if site.call is not None:
                lines.add(self.position(site.call)[0])
        return lines


class _Collect(cst.CSTVisitor):
    """Collect nodes of some types, not descending into other traced functions."""

    def __init__(self, types: tuple[type, ...], sites: dict[int, FunctionSite]) -> None:
        super().__init__()
        self.types = types
        self.sites = sites
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.sites:
            return False
        if isinstance(node, self.types):
            self.found.append(node)
        return True


def _tensorflow_alias(
    module: cst.Module,
) -> tuple[str, ImportNeeded | None, cst.SimpleStatementLine | None]:
    """The name this file binds TensorFlow to at module level (and the statement that
    binds it), or ``tf`` plus the import to add."""
    for stmt in _module_level_statements(module.body):
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = _dotted_name(alias.name)
                    if alias.asname is not None and dotted in TENSORFLOW_MODULES:
                        return _asname(alias), None, stmt
                    if alias.asname is None and dotted.split(".")[0] == "tensorflow":
                        return "tensorflow", None, stmt
            elif isinstance(small, cst.ImportFrom) and small.module is not None:
                base = _dotted_name(small.module)
                if isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    if f"{base}.{_dotted_name(alias.name)}" in TENSORFLOW_MODULES[1:]:
                        return _asname(alias) or _dotted_name(alias.name), None, stmt
    return "tf", ImportNeeded("tensorflow", None, "tf"), None


def _module_level_statements(body: Any) -> Iterator[cst.SimpleStatementLine]:
    """Simple statements run at import time (also inside module-level if/try/with)."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield stmt
        elif isinstance(stmt, (cst.If, cst.Try, cst.With, cst.TryStar)):
            yield from _module_level_statements(stmt.body.body)
            for extra in (getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)):
                if isinstance(extra, cst.If):
                    yield from _module_level_statements([extra])
                elif extra is not None:
                    yield from _module_level_statements(extra.body.body)
            for handler in getattr(stmt, "handlers", ()):
                yield from _module_level_statements(handler.body.body)


def _asname(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return ""


def _dotted_name(node: cst.BaseExpression) -> str:
    """An import's dotted name (`a.b.c`)."""
    return get_full_name_for_node(node) or ""

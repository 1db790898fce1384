"""Apply node-identity edits to a module: the one way fixes change source.

Rules and the signature planner return ``{original_node: replacement}`` maps over
nodes of the parsed module. Swapping by identity leaves every other byte untouched.
Imports a fix needs are added once with libcst's AddImportsVisitor, which respects
existing imports (``import tensorflow as tf`` is not added twice).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import libcst as cst

Replacement = cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel


class _Swap(cst.CSTTransformer):
    def __init__(self, edits: Mapping[cst.CSTNode, Replacement]) -> None:
        super().__init__()
        self._edits = {id(k): v for k, v in edits.items()}
        self.applied = 0

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        replacement = self._edits.get(id(original_node))
        if replacement is None:
            return updated_node
        self.applied += 1
        return replacement


def nested_edit_keys(edits: Mapping[cst.CSTNode, Replacement]) -> set[int]:
    """ids of edit targets that lie inside another edit's target (they would be lost)."""
    targets = {id(k) for k in edits}
    inside: set[int] = set()

    class _Walk(cst.CSTVisitor):
        def __init__(self) -> None:
            self.depth = 0

        def on_visit(self, node: cst.CSTNode) -> bool:
            if id(node) in targets:
                if self.depth:
                    inside.add(id(node))
                self.depth += 1
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            if id(original_node) in targets:
                self.depth -= 1

    for node in edits:
        if id(node) not in inside:
            node.visit(_Walk())
    # a target counts itself once in its own walk; only strictly nested ones remain
    return inside


def apply_edits(
    module: cst.Module,
    edits: Mapping[cst.CSTNode, Replacement],
    imports: Iterable[tuple[str, str | None, str | None]] = (),
) -> cst.Module:
    """Return ``module`` with ``edits`` swapped in and ``imports`` ensured.

    ``imports`` are ``(module, obj, asname)`` triples, e.g. ``("tensorflow", None, "tf")``
    for ``import tensorflow as tf``. Nested edits are the caller's to avoid (see
    ``nested_edit_keys``); an edit inside a replaced subtree is silently dropped.
    """
    new = module.visit(_Swap(edits)) if edits else module
    wanted = list(dict.fromkeys(imports))
    if wanted:
        # libcst.codemod (and the unittest, multiprocessing it imports) costs ~30 ms of
        # start-up: only a fix that adds an import needs it, never 'check'.
        from libcst.codemod import CodemodContext
        from libcst.codemod.visitors import AddImportsVisitor

        context = CodemodContext()
        for mod, obj, asname in wanted:
            AddImportsVisitor.add_needed_import(context, mod, obj, asname)
        new = new.visit(AddImportsVisitor(context))
    return new

"""Which distributed dataset a tf.function's calls take elements of, read from the source.

A step called as ``for x in D: step(x)`` (or ``step(next(iter(D)))``) with
``D = strategy.experimental_distribute_dataset(...)`` can be given TensorFlow's
``input_signature=[D.element_spec]`` only when every use of the step's name in the
module is such a call, ``D`` is bound once, and that binding runs before the decorator
(same block, earlier). This module answers those questions with libcst scopes; the
planner (``autosig.infer.distributed_inputs``) decides with them. Pure, no TensorFlow.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, MetadataWrapper, Scope, ScopeProvider

from autosig.source.discover import FunctionSite
from autosig.source.metadata import ParentProvider, PositionProvider

DISTRIBUTE_METHODS = frozenset(
    {"experimental_distribute_dataset", "distribute_datasets_from_function"}
)


def dataset_of_calls(wrapper: MetadataWrapper, site: FunctionSite) -> tuple[str | None, str | None]:
    """(dataset name, None) when every call of the site's function takes one of its
    elements and the dataset exists when the decorator runs; else (name or None, why not)."""
    return _Finder(wrapper, site).dataset_of_calls()


class _Finder:
    """The static checks: which dataset the calls take elements of, and is it in time."""

    def __init__(self, wrapper: MetadataWrapper, site: FunctionSite) -> None:
        self.wrapper = wrapper
        self.scopes = wrapper.resolve(ScopeProvider)
        self.parents = wrapper.resolve(ParentProvider)
        self.positions = wrapper.resolve(PositionProvider)
        self.site = site

    def line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def dataset_of_calls(self) -> tuple[str | None, str | None]:
        """(dataset name, None) when every call takes one of its elements; else (?, why not)."""
        function = self.site.function
        if not isinstance(function, cst.FunctionDef):
            return None, "it is not a def"
        scope = self.scopes.get(function)
        if scope is None:
            return None, "its scope is unknown"
        step = function.name.value
        bindings = list(scope.assignments[step])
        if len(bindings) != 1 or bindings[0].node is not function:
            return None, f"`{step}` is bound more than once"
        references = list(bindings[0].references)
        if not references:
            return None, f"no call of `{step}` found in this module"
        dataset_binding: Assignment | None = None
        for access in references:
            found, why = self._element_dataset(access.node, step)
            if found is None:
                return None, why
            if dataset_binding is not None and found is not dataset_binding:
                return None, f"`{step}` is called with elements of more than one dataset"
            dataset_binding = found
        assert dataset_binding is not None
        dataset = dataset_binding.name
        why = self._defined_before(dataset_binding, scope, function)
        return dataset, why

    def _element_dataset(self, node: cst.CSTNode, step: str) -> tuple[Assignment | None, str]:
        """The binding of the dataset whose element the call at ``node`` passes."""
        where = f"line {self.line(node)}"
        call = self.parents.get(node)
        if not isinstance(call, cst.Call) or call.func is not node:
            return None, f"`{step}` is used other than by a call ({where})"
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            return None, f"`{step}` is called with other than one positional argument ({where})"
        value = call.args[0].value
        found = self._element_of(value)
        if found is None:
            return (
                None,
                f"the argument at {where} is not visibly an element of a distributed dataset "
                "(`for x in D`, `next(iter(D))`)",
            )
        return found, ""

    def _element_of(self, value: cst.BaseExpression) -> Assignment | None:
        """``x`` from ``for x in D``, ``next(it)``, ``next(iter(D))``, ``it.get_next()``."""
        if isinstance(value, cst.Call):
            iterator = _next_of(value)
            return None if iterator is None else self._iterator_of(iterator)
        if not isinstance(value, cst.Name):
            return None
        bindings = self._bindings(value)
        if not bindings:
            return None
        found: Assignment | None = None
        for binding in bindings:
            dataset = self._loop_or_next(binding)
            if dataset is None or (found is not None and dataset is not found):
                return None
            found = dataset
        return found

    def _loop_or_next(self, binding: Assignment) -> Assignment | None:
        target = binding.node
        parent = self.parents.get(target)
        if isinstance(parent, cst.For) and parent.target is target:
            return self._dataset(parent.iter)
        if isinstance(parent, cst.AssignTarget):
            statement = self.parents.get(parent)
            if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
                iterator = _next_of(statement.value)
                if iterator is not None:
                    return self._iterator_of(iterator)
        return None

    def _iterator_of(self, iterator: cst.BaseExpression) -> Assignment | None:
        """``iter(D)`` or a name bound only to ``iter(D)``: D's binding."""
        if isinstance(iterator, cst.Call):
            inner = _iter_of(iterator)
            return None if inner is None else self._dataset(inner)
        if not isinstance(iterator, cst.Name):
            return None
        bindings = self._bindings(iterator)
        found: Assignment | None = None
        for binding in bindings or ():
            parent = self.parents.get(binding.node)
            statement = self.parents.get(parent) if isinstance(parent, cst.AssignTarget) else None
            if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
                return None
            inner = _iter_of(statement.value)
            dataset = None if inner is None else self._dataset(inner)
            if dataset is None or (found is not None and dataset is not found):
                return None
            found = dataset
        return found

    def _dataset(self, node: cst.BaseExpression) -> Assignment | None:
        """The single binding of a name assigned ``X.experimental_distribute_dataset(...)``."""
        if not isinstance(node, cst.Name):
            return None
        bindings = self._bindings(node)
        if bindings is None or len(bindings) != 1:
            return None
        binding = bindings[0]
        parent = self.parents.get(binding.node)
        statement = self.parents.get(parent) if isinstance(parent, cst.AssignTarget) else None
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
            return None
        value = statement.value
        if not (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in DISTRIBUTE_METHODS
        ):
            return None
        return binding

    def _bindings(self, name: cst.Name) -> list[Assignment] | None:
        """Every binding the name may refer to, in the scope where it is bound."""
        scope = self.scopes.get(name)
        if scope is None:
            return None
        accesses = [a for a in scope.accesses[name.value] if a.node is name]
        if len(accesses) != 1:
            return None
        referents = [b for b in accesses[0].referents if isinstance(b, Assignment)]
        if len(referents) != len(accesses[0].referents) or not referents:
            return None
        owner = referents[0].scope
        return (
            [b for b in owner.assignments[name.value] if isinstance(b, Assignment)]
            if all(b.scope is owner for b in referents)
            else None
        )

    def _defined_before(
        self, binding: Assignment, scope: Scope, function: cst.FunctionDef
    ) -> str | None:
        """None when the dataset's one binding runs before the def, in its block."""
        dataset = binding.name
        if binding.scope is not scope:
            return f"`{dataset}` is not bound where `{function.name.value}` is defined"
        everything = [b for b in scope.assignments[dataset]]
        if len(everything) != 1:
            return f"`{dataset}` is bound more than once"
        statement = self.parents.get(self.parents.get(binding.node))
        line = self.parents.get(statement)
        block = self.parents.get(line)
        if not isinstance(line, cst.SimpleStatementLine) or block is not self.parents.get(function):
            return (
                f"`{dataset}` (line {self.line(binding.node)}) is not assigned in the block "
                f"that defines `{function.name.value}`, so it may not exist when the decorator runs"
            )
        body = list(getattr(block, "body", ()))
        if body.index(line) > body.index(function):
            return (
                f"`{dataset}` is assigned at line {self.line(binding.node)}, after the "
                f"decorator runs (line {self.line(function)}): move the assignment above the "
                "function, then add it"
            )
        return None


def _next_of(call: cst.BaseExpression) -> cst.BaseExpression | None:
    """``it`` of ``next(it)`` / ``it.get_next()``."""
    if not isinstance(call, cst.Call):
        return None
    if isinstance(call.func, cst.Name) and call.func.value == "next" and len(call.args) == 1:
        return call.args[0].value
    if (
        isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "get_next"
        and not call.args
    ):
        return call.func.value
    return None


def _iter_of(call: cst.BaseExpression) -> cst.BaseExpression | None:
    """``D`` of ``iter(D)``."""
    if (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == "iter"
        and len(call.args) == 1
        and call.args[0].keyword is None
        and not call.args[0].star
    ):
        return call.args[0].value
    return None

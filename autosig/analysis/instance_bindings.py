"""Where a method's caller makes the instance it calls, for a seeding trace there.

A method's guarded relaxed trace cannot go in its class's ``__init__`` (review5: there it
runs for every instance before its caller configured it). It can go in the caller, right
after the statement that makes the instance, when nothing touches the instance between
that statement and the recorded call: the seed then traces the instance in the state the
first call would have traced it in. Found here, on the caller's file (pure libcst, never
the user's code), for the call at a recorded call site:

- the call goes through a plain name: ``dream(...)`` for ``__call__``, ``dream.m(...)``
  for method ``m``;
- that name is bound exactly once in the call's own function (or module) scope, by
  ``dream = <...>.Cls(...)`` alone on its line, ``Cls`` the method's class, and is
  declared neither ``global`` nor ``nonlocal``;
- the constructor's arguments depend on no parameter of the function, no loop variable
  and no name bound more than once (review7: ``run(channels)`` making
  ``Dream(feature_model(channels))`` makes another kind of instance on another call,
  an unbuilt model the seed would build for the profiled shapes), followed through the
  local names they read (``features = feature_model(1)``);
- the binding statement and the statement holding the call are in one block, the binding
  first;
- after the binding, in the rest of its function or script (loops included: review8
  changed a layer later in the loop body, after the first call), no name the
  constructor's arguments read is used again (review7: ``options["clip"] = 0.05``,
  ``features.layers[-1].activation = ...``), the instance is used only to call the
  method (or read ``dream.__call__...``), and nothing calls the program's code but
  functions of this file that store no attribute, item or global (review8: a helper
  changing a model through a module global), new instances of a class of this file
  whose ``__init__`` sets only its own attributes, and objects the scope made.
  A refusal that shows such a change says so (``Refused.changes``, its words end with
  ``MAY_CHANGE``): the fallback is unsafe too.

A seed already written right after the binding (an earlier run) is recognised.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
from libcst.metadata import (
    BuiltinAssignment,
    FunctionScope,
    GlobalScope,
    ImportAssignment,
    ScopeProvider,
)

from autosig.analysis.python_values import short_code
from autosig.analysis.tf_apis import library_call
from autosig.source.metadata import MetadataView, iter_tree

SEED_METHOD = "get_concrete_function"
MAY_CHANGE = "what the method's trace reads may change between its calls"
"""Ends the words of the refusals that show the caller changing what the trace reads."""
LAMBDA = "<lambda>"
"""Stands for a lambda or comprehension among the constructor's arguments (its free
names are not followed: refused)."""


@dataclass(frozen=True)
class Refused:
    """Why no seed may follow the instance's binding."""

    why: str
    changes: bool = False
    """The caller changes what the trace reads after the binding: any fix that traces
    less is then unsafe, not only the seed (review8: the call-site tensors alone stopped
    the retraces that picked the change up)."""


@dataclass(frozen=True)
class InstanceBinding:
    """The statement binding the instance a recorded call goes through."""

    name: str
    """The name the instance is bound to (``dream``)."""
    statement: cst.SimpleStatementLine
    line: int
    """The binding statement's last line."""
    seeded: bool
    """The statement after it already is the seed (an earlier run)."""


def instance_binding(
    view: MetadataView, call: cst.Call, method: str, class_name: str
) -> InstanceBinding | Refused:
    """The binding of the instance ``call`` (a call of ``class_name.method``) goes
    through, or why there is none a seed may follow."""
    holder = _instance_name(call, method)
    if holder is None:
        how = "`name(...)`" if method == "__call__" else f"`name.{method}(...)`"
        return Refused(f"the call does not go through a name bound to the instance ({how})")
    name = holder.value
    scope = view.get_metadata(ScopeProvider, holder)
    if not isinstance(scope, (FunctionScope, GlobalScope)):
        return Refused(f"`{name}` is read in a class body or comprehension")
    if _declared_outside(view, holder, name):
        return Refused(f"`{name}` is declared global or nonlocal")
    assignments = list(scope.assignments[name])
    if len(assignments) != 1:
        return Refused(f"`{name}` is bound {len(assignments)} times in its scope, not once")
    statement = _binding_statement(view, assignments[0].node, class_name)
    if isinstance(statement, str):
        return Refused(f"`{name}`: {statement}")
    handed = _argument_names(view, statement, scope)
    if isinstance(handed, str):
        return Refused(f"`{name}`: {handed}")
    block = view.parent(statement)
    body = list(getattr(block, "body", ()))
    holding = _statement_in(view, call, block)
    if holding is None or holding not in body:
        return Refused(f"`{name}` is bound in another block than the call")
    start, end = body.index(statement), body.index(holding)
    if start >= end:
        return Refused(f"`{name}` is bound after the call")
    seeded = _is_seed(body[start + 1], name, method) if start + 1 < end else False
    skip = body[start + 1] if seeded else None
    changed = _touched_after(view, statement, skip, scope, name, method, handed)
    if changed is not None:
        return changed
    return InstanceBinding(name, statement, view.line_span(statement)[-1], seeded)


def _touched_after(
    view: MetadataView,
    statement: cst.CSTNode,
    seed: cst.CSTNode | None,
    scope: object,
    name: str,
    method: str,
    handed: set[str],
) -> Refused | None:
    """What, after the binding (the rest of its function or script, loops included:
    review8 changed a layer later in the loop body, after the first call), may change
    the state the seeded trace read, or None: a name handed to the constructor used
    again; the instance used otherwise than calling the method (``dream.__call__...``
    for introspection); a call that may run the program's own code and reach them (a
    helper changing a module global: review8), unless it is a function of this file that
    changes no attribute, item or global and calls nothing else that may."""
    function = view.enclosing_function(statement)
    root = function if isinstance(function, cst.FunctionDef) else view.module
    after = view.line_span(statement)[-1]
    for node in iter_tree(root):
        if seed is not None and view.is_within(node, seed):
            continue
        if not isinstance(node, (cst.Name, cst.Call)) or view.position(node)[0] <= after:
            continue
        line = view.position(node)[0]
        if isinstance(node, cst.Name):
            if node.value in handed:
                return Refused(
                    f"line {line} uses `{node.value}`, handed to the constructor: {MAY_CHANGE}",
                    changes=True,
                )
            if node.value == name and not _through_method(view, node, method):
                return Refused(
                    f"line {line} uses `{name}` otherwise than calling `{method}`: {MAY_CHANGE}",
                    changes=True,
                )
        elif _root_name(node.func) in handed:
            used = _root_name(node.func)
            return Refused(
                f"line {line} uses `{used}`, handed to the constructor: {MAY_CHANGE}", changes=True
            )
        elif not _harmless_call(view, node, scope, name, 0):
            own = isinstance(node.func, cst.Name) and _function_def(view, node.func) is not None
            if own:  # a function (or class) of this file that stores attributes, items or globals
                return Refused(
                    f"line {line} calls `{short_code(node.func, 40)}`, which changes state: {MAY_CHANGE}",
                    changes=True,
                )
            return Refused(
                f"line {line} calls `{short_code(node.func, 40)}`, code this analysis does not "
                "follow, before a later call: a seed there may trace state it changes"
            )
    return None


def _root_name(node: cst.BaseExpression) -> str | None:
    """``a`` for ``a.b[0].c``; None when the chain starts elsewhere."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _through_method(view: MetadataView, node: cst.Name, method: str) -> bool:
    """``dream(...)`` (``__call__``), ``dream.m(...)`` or ``dream.m.<attribute>...``."""
    parent = view.parent(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        return method == "__call__"
    return (
        isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == method
    )


def _harmless_call(
    view: MetadataView, call: cst.Call, scope: object, name: str, depth: int
) -> bool:
    """``call`` cannot change the state the seed traced: a library's (builtins, the
    standard library, TensorFlow, NumPy, Keras), a call through the instance, a method of
    a value the scope made itself, or a harmless function of this file."""
    if library_call(view, call):
        return True
    func = call.func
    if isinstance(func, cst.Call) and library_call(view, func):
        return True  # ``tf.keras.layers.Dense(4)(x)``: an object a library call made
    root = func
    while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
        root = root.func if isinstance(root, cst.Call) else root.value
    if isinstance(root, cst.Name) and root.value == name:
        return True  # the method itself (or the instance's): what the seed traced
    if isinstance(func, cst.Attribute) and isinstance(root, cst.Name):
        return _local(scope, root.value)  # ``base[:5].astype()``, ``rng.normal().astype()``
    if isinstance(func, cst.Name):
        definition = _function_def(view, func)
        if isinstance(definition, cst.FunctionDef):
            return _harmless_function(view, definition, depth + 1)
        if isinstance(definition, cst.ClassDef):
            init = _own_init(definition)  # a new instance: what its __init__ does
            return init is None or _harmless_function(view, init, depth + 1, own=True)
        return _made_here(view, scope, func.value)  # ``other(...)``: an object it made
    return False


def _own_init(cls: cst.ClassDef) -> cst.FunctionDef | None:
    for statement in getattr(cls.body, "body", ()):
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
            return statement
    return None


def _made_here(view: MetadataView, scope: object, name: str) -> bool:
    """``name`` is bound in ``scope`` only to objects a call made there (``other =
    Smoother(0.5)``), not to a function of the program under another name."""
    if not _local(scope, name):
        return False
    values = [_assigned_value(view, a.node) for a in scope.assignments[name]]  # type: ignore[attr-defined]
    return all(isinstance(v, cst.Call) for v in values)


def _harmless_function(
    view: MetadataView, function: cst.FunctionDef, depth: int, own: bool = False
) -> bool:
    """A function of this file that stores no attribute or item, declares no global and
    calls only harmless things (two levels deep); ``own``: an ``__init__``, which may set
    its new instance's attributes (``self.x = ...``)."""
    if depth > 2:
        return False
    scope = view.get_metadata(ScopeProvider, function.body)
    first = function.params.params[0].name.value if own and function.params.params else None
    for node in iter_tree(function.body):
        if isinstance(node, (cst.Global, cst.Nonlocal, cst.Del)):
            return False
        if isinstance(node, cst.AssignTarget) and not _plain_target(node.target, first):
            return False
        if isinstance(node, (cst.AugAssign, cst.AnnAssign)) and not _plain_target(
            node.target, first
        ):
            return False
        if isinstance(node, cst.Call) and not _harmless_call(view, node, scope, "", depth):
            return False
    return True


def _plain_target(target: cst.BaseExpression, own: str | None = None) -> bool:
    """Names only (``a = ...``, ``a, b = ...``), or ``<own>.x`` (a new instance's own
    attribute): no other attribute or item stored."""
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, cst.Attribute) and own is not None:
        return isinstance(target.value, cst.Name) and target.value.value == own
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_plain_target(e.value, own) for e in target.elements)
    return False


def _local(scope: object, name: str) -> bool:
    """``name`` is bound in ``scope`` itself, not by an import (a value it made)."""
    assignments = getattr(scope, "assignments", None)
    if assignments is None:
        return False
    found = list(assignments[name])
    return bool(found) and not any(isinstance(a, ImportAssignment) for a in found)


def _function_def(view: MetadataView, name: cst.Name) -> cst.FunctionDef | cst.ClassDef | None:
    """The def or class of this file ``name`` is bound to (once), else None."""
    scope = view.get_metadata(ScopeProvider, name)
    if scope is None:
        return None
    found = list(scope[name.value])
    if len(found) == 1 and isinstance(found[0].node, (cst.FunctionDef, cst.ClassDef)):
        return found[0].node
    return None


def _argument_names(
    view: MetadataView, statement: cst.SimpleStatementLine, scope: object
) -> set[str] | str:
    """The names the constructor's arguments read (through the local names bound once
    before it, transitively), or why they may differ between runs of the binding."""
    assign = statement.body[0]
    assert isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call)
    function = view.enclosing_function(statement)
    parameters = (
        {p.name.value for p in _all_params(function.params)}
        if isinstance(function, cst.FunctionDef)
        else set()
    )
    out: set[str] = set()
    seen: set[str] = set()
    todo = [arg.value for arg in assign.value.args]
    while todo:
        for name in _value_names(todo.pop()):
            if name in seen:
                continue
            seen.add(name)
            if name == LAMBDA:
                return "its constructor's arguments hold a lambda or comprehension"
            if name in parameters:
                return (
                    f"its constructor reads the parameter `{name}`: another call may make "
                    "another kind of instance"
                )
            if _module_def_or_import(scope, name):
                continue  # `np`, `tf`, a def or class: no state handed over
            out.add(name)
            assignments = list(scope.assignments[name]) if hasattr(scope, "assignments") else []
            if not assignments:
                continue  # a global of the module: watched, its value not followed
            if len(assignments) != 1:
                return f"its constructor reads `{name}`, bound more than once"
            value = _assigned_value(view, assignments[0].node)
            if value is None:
                return f"its constructor reads `{name}`, not bound by a plain assignment"
            todo.append(value)
    return out


def _module_def_or_import(scope: object, name: str) -> bool:
    """``name`` (seen from ``scope``) is only an import, a builtin, a def or a class."""
    try:
        visible = list(scope[name])  # type: ignore[index]
    except (KeyError, TypeError):
        return False
    return bool(visible) and all(
        isinstance(a, (ImportAssignment, BuiltinAssignment))
        or isinstance(getattr(a, "node", None), (cst.FunctionDef, cst.ClassDef))
        for a in visible
    )


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    out = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def _value_names(node: cst.CSTNode) -> set[str]:
    """Names ``node`` reads as values: not a called function's own name (``f(...)``), not
    an attribute's name (``a.b`` reads ``a``)."""
    out: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            out.add(current.value)
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)
        elif isinstance(current, cst.Call):
            if not isinstance(current.func, cst.Name):
                stack.append(current.func)
            stack.extend(arg.value for arg in current.args)
        elif isinstance(
            current, (cst.Lambda, cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)
        ):
            out.add(LAMBDA)
        else:
            stack.extend(current.children)
    return out


def _assigned_value(view: MetadataView, node: cst.CSTNode) -> cst.BaseExpression | None:
    target = view.parent(node)
    assign = view.parent(target) if isinstance(target, cst.AssignTarget) else None
    if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and target.target is node:
        return assign.value
    return None


def _instance_name(call: cst.Call, method: str) -> cst.Name | None:
    func = call.func
    if method == "__call__":
        return func if isinstance(func, cst.Name) else None
    if (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.attr.value == method
    ):
        return func.value
    return None


def _declared_outside(view: MetadataView, node: cst.CSTNode, name: str) -> bool:
    function = view.enclosing_function(node)
    if not isinstance(function, cst.FunctionDef):
        return False
    for inner in iter_tree(function.body):
        if isinstance(inner, (cst.Global, cst.Nonlocal)) and any(
            n.name.value == name for n in inner.names
        ):
            return True
    return False


def _binding_statement(
    view: MetadataView, node: cst.CSTNode, class_name: str
) -> cst.SimpleStatementLine | str:
    """The ``name = <...>.Cls(...)`` line that ``node`` (the assigned name) is the
    target of, or what it is instead."""
    target = view.parent(node)
    assign = view.parent(target) if isinstance(target, cst.AssignTarget) else None
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return "not bound by a plain assignment"
    value = assign.value
    called = value.func if isinstance(value, cst.Call) else None
    last = (
        called.value
        if isinstance(called, cst.Name)
        else called.attr.value
        if isinstance(called, cst.Attribute)
        else None
    )
    if last != class_name:
        return f"not bound to a new `{class_name}(...)`"
    line = view.parent(assign)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return "its binding shares its line with other statements"
    return line


def _statement_in(view: MetadataView, node: cst.CSTNode, block: object) -> cst.CSTNode | None:
    """The statement of ``block`` that holds ``node``."""
    previous: cst.CSTNode = node
    for ancestor in view.ancestors(node):
        if ancestor is block:
            return previous
        previous = ancestor
    return None


def _is_seed(statement: cst.CSTNode, name: str, method: str) -> bool:
    """``statement`` is ``try: <name>.<method>.get_concrete_function(...)`` (the seed)."""
    if not isinstance(statement, cst.Try):
        return False
    for node in iter_tree(statement.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            func = node.func
            if func.attr.value == SEED_METHOD and _code(func.value) == f"{name}.{method}":
                return True
    return False


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)

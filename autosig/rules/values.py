"""Is an expression obviously a Python value (never a tensor)? Conservative, static.

Rules AS104/AS105 use this to stay quiet on code that is plainly Python: literals,
``len(...)``, static shapes (``x.shape[0]``), loop counters over ``range`` of Python
numbers, names bound only to such values. Anything unknown (parameters, calls of
user functions) counts as "may be a tensor".
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, ImportAssignment, ScopeProvider

from autosig.rules.context import RuleContext

LITERALS = (
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.List,
    cst.Tuple,
    cst.Set,
    cst.Dict,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.Lambda,
)
CONSTANTS = frozenset({"True", "False", "None"})
STATIC_ATTRS = frozenset({"shape", "ndim", "rank", "dims", "dtype", "name"})
"""Attributes of a tensor that are Python objects while tracing (TensorShape, DType)."""
STATIC_METHODS = frozenset({"as_list", "num_elements", "get_shape", "is_fully_defined"})
PYTHON_BUILTINS = frozenset(
    f"builtins.{n}"
    for n in ("len", "str", "repr", "int", "float", "bool", "range", "hash", "id", "isinstance",
              "type", "ord", "chr", "hex", "oct", "bin", "format")
)  # fmt: skip
ITERATOR_BUILTINS = frozenset(
    f"builtins.{n}" for n in ("enumerate", "zip", "reversed", "sorted", "list", "tuple")
)
DICT_VIEWS = frozenset({"items", "keys", "values"})
MAX_DEPTH = 6


def is_python_value(ctx: RuleContext, node: cst.BaseExpression, depth: int = 0) -> bool:
    """True when ``node`` is certainly a Python value while tracing."""
    if depth > MAX_DEPTH:
        return False
    deeper = depth + 1
    if isinstance(node, LITERALS):
        return True
    if isinstance(node, cst.Name):
        return node.value in CONSTANTS or _name_is(ctx, node, deeper, is_python_value)
    if isinstance(node, cst.Attribute):
        return node.attr.value in STATIC_ATTRS
    if isinstance(node, cst.Subscript):
        return is_python_value(ctx, node.value, deeper)
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in STATIC_METHODS:
            return True
        if ctx.refers_to(func, *PYTHON_BUILTINS):
            return True
        return any(q.startswith("math.") for q in ctx.qualified_names(func))
    if isinstance(node, cst.UnaryOperation):
        return is_python_value(ctx, node.expression, deeper)
    if isinstance(node, (cst.BinaryOperation, cst.BooleanOperation)):
        return is_python_value(ctx, node.left, deeper) and is_python_value(ctx, node.right, deeper)
    if isinstance(node, cst.Comparison):
        return is_python_value(ctx, node.left, deeper) and all(
            is_python_value(ctx, c.comparator, deeper) for c in node.comparisons
        )
    if isinstance(node, cst.IfExp):
        return is_python_value(ctx, node.body, deeper) and is_python_value(ctx, node.orelse, deeper)
    return False


def is_python_iterable(ctx: RuleContext, node: cst.BaseExpression, depth: int = 0) -> bool:
    """True when iterating ``node`` is certainly a Python loop (AutoGraph unrolls it)."""
    if depth > MAX_DEPTH:
        return False
    deeper = depth + 1
    if isinstance(node, LITERALS):
        return True
    if isinstance(node, cst.Call):
        func = node.func
        if ctx.refers_to(func, "builtins.range"):
            return all(is_python_value(ctx, a.value, deeper) for a in node.args)
        if ctx.refers_to(func, *ITERATOR_BUILTINS):
            return all(is_python_iterable(ctx, a.value, deeper) for a in node.args if not a.keyword)
        return isinstance(func, cst.Attribute) and func.attr.value in DICT_VIEWS
    if isinstance(node, cst.Attribute):
        root: cst.BaseExpression = node
        while isinstance(root, cst.Attribute):
            root = root.value
        return isinstance(root, cst.Name) and root.value == "self"  # self.layers and alike
    if isinstance(node, cst.Name):
        return _name_is(ctx, node, deeper, is_python_iterable)
    return False


def _name_is(ctx: RuleContext, name: cst.Name, depth: int, check) -> bool:  # noqa: ANN001
    """Every binding of ``name`` visible here satisfies ``check``."""
    scope = ctx.get_metadata(ScopeProvider, name)
    if scope is None:
        return False
    try:
        assignments = list(scope[name.value])
    except Exception:  # noqa: BLE001 - libcst raises on odd scopes (class bodies)
        return False
    if not assignments:
        return False
    for assignment in assignments:
        if isinstance(assignment, ImportAssignment):
            continue  # a module or an imported constant, never a traced tensor
        if not isinstance(assignment, Assignment) or not isinstance(assignment.node, cst.Name):
            return False
        if not _binding_is(ctx, assignment.node, depth, check):
            return False
    return True


def _binding_is(ctx: RuleContext, target: cst.Name, depth: int, check) -> bool:  # noqa: ANN001
    parent = ctx.parent(target)
    if isinstance(parent, cst.AssignTarget):
        assign = ctx.parent(parent)
        return isinstance(assign, cst.Assign) and check(ctx, assign.value, depth)
    if isinstance(parent, (cst.AnnAssign, cst.AugAssign)):
        return parent.value is not None and check(ctx, parent.value, depth)
    if check is not is_python_value:
        return False
    # a loop variable: ``for i in range(n)`` or the index of ``for i, x in enumerate(xs)``
    loop = parent
    if isinstance(loop, cst.Element):
        tuple_node = ctx.parent(loop)
        outer = ctx.parent(tuple_node) if isinstance(tuple_node, cst.Tuple) else None
        return (
            isinstance(outer, (cst.For, cst.CompFor))
            and isinstance(outer.iter, cst.Call)
            and ctx.refers_to(outer.iter.func, "builtins.enumerate")
            and tuple_node.elements[0] is loop
        )
    if isinstance(loop, (cst.For, cst.CompFor)) and loop.target is target:
        iterable = loop.iter
        if isinstance(iterable, cst.Call) and ctx.refers_to(iterable.func, "builtins.range"):
            return is_python_iterable(ctx, iterable, depth)
    return False

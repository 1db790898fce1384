"""Is an expression obviously a Python value (never a tensor)? Conservative, static.

Rules AS104/AS105 use this to stay quiet on code that is plainly Python: literals,
``len(...)``, static shapes (``x.shape[0]``), loop counters over ``range`` of Python
numbers, names bound only to such values. Two conventions keep real code quiet:
attributes of ``self`` are Python configuration unless the class assigns them from a
TensorFlow call, and parameters of an enclosing (untraced) function are Python values
captured by closure. Anything else unknown (parameters of the traced function, calls of
user functions) counts as "may be a tensor".
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, ImportAssignment, ScopeProvider

from autosig.rules.context import RuleContext
from autosig.source.metadata import iter_tree

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
        return node.attr.value in STATIC_ATTRS or _python_self_attribute(ctx, node)
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
        return _python_self_attribute(ctx, node)  # self.layers and alike
    if isinstance(node, cst.Name):
        return _name_is(ctx, node, deeper, is_python_iterable)
    return False


def has_python_elements(ctx: RuleContext, node: cst.BaseExpression, depth: int = 0) -> bool:
    """True when every element iterating ``node`` yields is a Python value."""
    if depth > MAX_DEPTH:
        return False
    deeper = depth + 1
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        return all(
            isinstance(e, cst.Element) and is_python_value(ctx, e.value, deeper)
            for e in node.elements
        )
    if isinstance(node, cst.Call):
        func = node.func
        if ctx.refers_to(func, "builtins.range"):
            return is_python_iterable(ctx, node, deeper)
        if ctx.refers_to(func, *ITERATOR_BUILTINS):
            return all(
                has_python_elements(ctx, a.value, deeper) for a in node.args if not a.keyword
            )
        if isinstance(func, cst.Attribute) and func.attr.value in DICT_VIEWS:
            return is_python_value(ctx, func.value, deeper)
        return False
    if isinstance(node, cst.Attribute):
        return _python_self_attribute(ctx, node)
    if isinstance(node, cst.Name):
        return _name_is(ctx, node, deeper, has_python_elements)
    return False


def _python_self_attribute(ctx: RuleContext, node: cst.Attribute) -> bool:
    """``self.a`` (or ``self.a.b``) where the class never assigns ``self.a`` from TensorFlow."""
    first = node
    while isinstance(first.value, cst.Attribute):
        first = first.value
    if not (isinstance(first.value, cst.Name) and first.value.value == "self"):
        return False
    klass = next((a for a in ctx.ancestors(node) if isinstance(a, cst.ClassDef)), None)
    if klass is None:
        return False
    attr = first.attr.value
    for assign in iter_tree(klass):
        if isinstance(assign, cst.Assign):
            if not any(_is_self_attribute(t.target, attr) for t in assign.targets):
                continue
        elif not (isinstance(assign, cst.AnnAssign) and _is_self_attribute(assign.target, attr)):
            continue
        value = assign.value
        if value is None:
            continue
        for call in iter_tree(value):
            if isinstance(call, cst.Call) and any(
                q.startswith("tensorflow") for q in ctx.qualified_names(call.func)
            ):
                return False
    return True


def _is_self_attribute(node: cst.CSTNode, attr: str) -> bool:
    """``self.<attr>``."""
    return (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
        and node.attr.value == attr
    )


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
        if not isinstance(assignment, Assignment):
            return False
        if isinstance(assignment.node, cst.Param):
            if check is is_python_value and _closure_parameter(ctx, assignment.node):
                continue
            return False
        if not isinstance(assignment.node, cst.Name):
            return False
        if not _binding_is(ctx, assignment.node, depth, check):
            return False
    return True


def _closure_parameter(ctx: RuleContext, param: cst.Param) -> bool:
    """A parameter of a function that is not traced (nor inside a traced one)."""
    traced = {id(site.function) for site in ctx.sites if site.function is not None}
    return not any(id(a) in traced for a in ctx.ancestors(param))


def _binding_is(ctx: RuleContext, target: cst.Name, depth: int, check) -> bool:  # noqa: ANN001
    parent = ctx.parent(target)
    if isinstance(parent, cst.AssignTarget):
        assign = ctx.parent(parent)
        return isinstance(assign, cst.Assign) and check(ctx, assign.value, depth)
    if isinstance(parent, (cst.AnnAssign, cst.AugAssign)):
        return parent.value is not None and check(ctx, parent.value, depth)
    if check is not is_python_value:
        return False
    # a loop variable: ``for i in range(n)``, ``for i, (a, b) in enumerate(zip(xs, ys))``
    element: cst.CSTNode = target
    top_element: cst.CSTNode | None = None
    node = parent
    while isinstance(node, (cst.Element, cst.Tuple, cst.List)):
        if isinstance(node, cst.Element):
            top_element = node
        element, node = node, ctx.parent(node)
    if not isinstance(node, (cst.For, cst.CompFor)) or node.target is not element:
        return False
    iterable = node.iter
    if (
        isinstance(iterable, cst.Call)
        and ctx.refers_to(iterable.func, "builtins.enumerate")
        and isinstance(element, cst.Tuple)
        and element.elements
        and element.elements[0] is top_element
    ):
        return True  # the index of enumerate
    return has_python_elements(ctx, iterable, depth)

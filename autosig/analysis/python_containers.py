"""Two shapes of Python code the Python-value analysis must tell apart from tensors.

- *Evidently a Python container* (``evidently_python``): a literal, a comprehension,
  ``list(...)``, or a name only ever bound to those. A tensor index into one certainly
  fails or changes the result, so the analysis is certain there.
- *Tensors bound by tuple unpacking* (``unpacked_positions``, ``element_is_tensor``,
  ``returns_tensor_at``): ``inputs, labels = split_window(window)``, where a project
  helper returns a tuple of slices of a tensor.

Pure libcst over the expressions ``python_values`` hands in, with callbacks for what only
its walk knows (the values bound to a name, whether an expression is a tensor).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

# --- python containers -----------------------------------------------------
# Whether an expression is evidently a Python container (list, tuple, dict, set, str).
#
# The Python-value analysis reports a parameter that indexes something it cannot prove
# to be a tensor. When that something is evidently a Python container (a literal, a
# comprehension, ``list(...)``, or a name only ever bound to those), a tensor index
# certainly fails or changes the result. Otherwise (``self.table[k]``, a module-level
# name bound to a call) the analysis cannot decide: ``fix --verify`` may try the tensor.


CONTAINER_NODES = (
    cst.List,
    cst.Tuple,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.DictComp,
    cst.SetComp,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
)
CONTAINER_BUILTINS = frozenset({"list", "tuple", "dict", "set", "sorted", "str", "range"})
MAX_DEPTH = 3


def evidently_python(
    node: cst.BaseExpression,
    values_of: Callable[[str], list[cst.BaseExpression]],
    builtin_of: Callable[[cst.Call], str | None],
    depth: int = 0,
) -> bool:
    """``node`` is a Python container in every way the code can build it.

    ``values_of(name)``: the expressions assigned to ``name`` (empty for a parameter or
    an unknown name); ``builtin_of(call)``: the builtin a call runs, if any.
    """
    if isinstance(node, CONTAINER_NODES):
        return True
    if isinstance(node, cst.Call):
        return builtin_of(node) in CONTAINER_BUILTINS
    if isinstance(node, cst.Name) and depth < MAX_DEPTH:
        values = values_of(node.value)
        return bool(values) and all(
            evidently_python(v, values_of, builtin_of, depth + 1) for v in values
        )
    return False


# --- unpacked tensors ------------------------------------------------------
# Names bound by tuple unpacking: which of them are tensors.
#
# ``inputs, labels = split_window(window)`` is how windowed data is split in TensorFlow's
# own tutorials: a project helper returns a tuple of slices of a tensor. The Python-value
# analysis needs to know that ``labels`` is a tensor (``labels[..., k]`` then indexes a
# tensor, not a Python sequence). An element counts as a tensor only when every way the
# value can be built gives a tensor at that position: a tuple literal whose element is a
# tensor, or a call into a followed project function each of whose ``return``s is a
# tuple of the same length with a tensor at that position.


Position = tuple[int, int]
"""(index of the name in the target, number of names in the target)."""


def unpacked_positions(target: cst.CSTNode) -> Iterator[tuple[str, Position]]:
    """``a, b = ...`` -> ("a", (0, 2)), ("b", (1, 2)); nothing for nested or starred targets."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return
    elements = target.elements
    if not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in elements):
        return
    for index, element in enumerate(elements):
        assert isinstance(element.value, cst.Name)
        yield element.value.value, (index, len(elements))


def _element(value: cst.BaseExpression, position: Position) -> cst.BaseExpression | None:
    """Element ``index`` of a tuple/list literal of exactly ``arity`` plain elements."""
    index, arity = position
    if not isinstance(value, (cst.Tuple, cst.List)) or len(value.elements) != arity:
        return None
    if any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    return value.elements[index].value


def returned_elements(own_nodes: Iterator[cst.CSTNode]) -> list[cst.Return]:
    """The ``return``s among a function's own nodes (not nested functions'); [] if it yields."""
    returns: list[cst.Return] = []
    for node in own_nodes:
        if isinstance(node, (cst.Yield, cst.Await)):
            return []
        if isinstance(node, cst.Return):
            returns.append(node)
    return returns


def element_is_tensor(
    value: cst.BaseExpression,
    position: Position,
    is_tensor: Callable[[cst.BaseExpression], bool],
    callee_element: Callable[[cst.Call, Position], bool],
) -> bool:
    """Whether the name at ``position`` of a target unpacking ``value`` is a tensor.

    ``is_tensor`` judges an expression in the caller; ``callee_element`` judges a call
    into project code (the callee's returns, see ``returns_tensor_at``).
    """
    element = _element(value, position)
    if element is not None:
        return is_tensor(element)
    if isinstance(value, cst.Call):
        return callee_element(value, position)
    return False


def returns_tensor_at(
    returns: list[cst.Return],
    position: Position,
    is_tensor: Callable[[cst.BaseExpression], bool],
) -> bool:
    """Every ``return`` gives a tuple of ``arity`` values with a tensor at ``index``."""
    if not returns:
        return False
    for ret in returns:
        element = None if ret.value is None else _element(ret.value, position)
        if element is None or not is_tensor(element):
            return False
    return True

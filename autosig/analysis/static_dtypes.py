"""The dtype an argument has at a call site, where the code itself fixes it.

A Python number passed as ``tf.constant(value, float32)`` breaks a call where it meets a
tensor of another dtype (``img + grads * step_size`` with a float64 ``img``): the
original adapted the number, a tensor does not. Where the probe saw the number follow a
tensor parameter's dtype (``NumberEvidence.follows``), a call site may still pass it as
a tensor if the code there fixes that parameter's dtype: the argument is (or was
assigned just before the call, in straight-line code) an expression whose dtype does
not depend on its inputs. Read here, for a few APIs whose result dtype is documented:

- ``tf.cast(x, D)``, ``tf.constant(x, D)``, ``tf.convert_to_tensor(x, D)``,
  ``np.asarray(x, D)``, ``np.array(x, D)``, ``x.astype(D)`` (``D`` a dtype name, a
  ``tf.``/``np.`` dtype or a string like ``"float32"``): ``D``;
- ``tf.image.resize(images, size)`` without ``method``: float32 (its documentation:
  float32 unless the method is nearest neighbour);
- ``tf.zeros``, ``tf.ones``, ``tf.random.uniform``, ``tf.random.normal``,
  ``tf.random.truncated_normal`` without a dtype: float32;
- ``x.numpy()``: ``x``'s dtype.

Anything else is unknown (None): the call site is then left as it is.
"""

from __future__ import annotations

import libcst as cst

from autosig.analysis.tf_apis import Slot, library_call, slot_argument
from autosig.source.metadata import MetadataView, iter_tree

DTYPES = frozenset(
    {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"}
)
DTYPE_SLOT = (1, "dtype")
CONVERSIONS = frozenset(
    {
        "tensorflow.cast",
        "tensorflow.dtypes.cast",
        "tensorflow.constant",
        "tensorflow.convert_to_tensor",
        "numpy.asarray",
        "numpy.array",
    }
)
"""APIs whose result has the dtype they are given (second, or ``dtype=``)."""
FLOAT32_BY_DEFAULT: dict[str, Slot] = {
    "tensorflow.zeros": (1, "dtype"),
    "tensorflow.ones": (1, "dtype"),
    "tensorflow.random.uniform": (3, "dtype"),
    "tensorflow.random.normal": (3, "dtype"),
    "tensorflow.random.truncated_normal": (3, "dtype"),
    "tensorflow.image.resize": (2, "method"),
}
"""APIs whose result is float32 unless the argument at (position, keyword) is given
(measured on TF 2.21: ``tests/test_static_dtypes_tf.py``)."""


def argument_dtype(view: MetadataView, call: cst.Call, value: cst.BaseExpression) -> str | None:
    """The dtype ``value`` (an argument of ``call``) has whenever ``call`` runs, where the
    code fixes it; None where it does not show."""
    if isinstance(value, cst.Name):
        assigned = _assigned_before(view, call, value.value)
        return expression_dtype(view, assigned) if assigned is not None else None
    return expression_dtype(view, value)


def expression_dtype(view: MetadataView, node: cst.BaseExpression) -> str | None:
    """The dtype of ``node``'s value where the expression alone fixes it."""
    if not isinstance(node, cst.Call) or any(arg.star for arg in node.args):
        return None  # `**opts` may hold the dtype or the method
    func = node.func
    names = view.qualified_names(func)
    if names & CONVERSIONS:
        given = slot_argument(node, DTYPE_SLOT)
        return dtype_of(view, given) if given is not None else None
    for name, slot in FLOAT32_BY_DEFAULT.items():
        if name in names:
            return None if slot_argument(node, slot) is not None else "float32"
    if isinstance(func, cst.Attribute):  # a method of a value (``x.numpy()``)
        method = func.attr.value
        if method == "numpy" and not node.args:
            return expression_dtype(view, func.value)
        if method == "astype" and len(node.args) == 1:
            return dtype_of(view, node.args[0].value)
    return None


def dtype_of(view: MetadataView, node: cst.BaseExpression) -> str | None:
    """``tf.float32``, ``np.float32``, ``"float32"`` -> ``"float32"``; else None."""
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        return text if isinstance(text, str) and text in DTYPES else None
    for name in view.qualified_names(node):
        module, _, leaf = name.rpartition(".")
        if leaf in DTYPES and module in ("tensorflow", "tensorflow.dtypes", "numpy"):
            return leaf
    return None


def _assigned_before(view: MetadataView, call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The value last assigned to function-local ``name`` by a plain ``name = value``
    among the simple statements just before the call, in the same block (its own line's
    first): no branch, loop or other binding of ``name`` between, so every run of the
    call follows that assignment. At module level (a script: review7) the same, where
    nothing between the assignment and the call calls anything but a library (a function
    of the program may rebind the global). None otherwise: the call
    in a lambda, comprehension or class body, or with ``name`` declared global or
    nonlocal (a function called between may rebind it)."""
    function = view.enclosing_function(call)
    module_level = function is None and not any(
        isinstance(a, cst.ClassDef) for a in view.ancestors(call)
    )
    if not module_level and (
        not isinstance(function, cst.FunctionDef) or _declared(function, name)
    ):
        return None
    small: cst.CSTNode = call
    for ancestor in view.ancestors(call):
        if isinstance(ancestor, SCOPES):
            return None  # a lambda or comprehension between: another `name`
        if isinstance(ancestor, cst.SimpleStatementLine):
            statement = ancestor
            break
        small = ancestor
    else:
        return None
    if any(isinstance(n, cst.NamedExpr) and _binds(n.target, name) for n in iter_tree(statement)):
        return None  # `(img := ...)` on the call's own line (review6)
    block = view.parent(statement)
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    own = list(statement.body)
    at = next((i for i, s in enumerate(own) if s is small), 0)
    before: list[cst.BaseSmallStatement | None] = list(reversed(own[:at]))
    body = list(block.body)
    index = next(i for i, s in enumerate(body) if s is statement)
    for previous in reversed(body[:index]):
        if not isinstance(previous, cst.SimpleStatementLine):
            before.append(None)  # a branch, loop, with or def may bind it
            break
        before.extend(reversed(previous.body))
    if module_level and _calls_user_code(view, call.args[: _position(call, name)]):
        return None
    for candidate in before:
        if candidate is None:
            return None
        found = _binding(candidate, name)
        if found is False:
            if module_level and _calls_user_code(view, [candidate]):
                return None
            continue
        return found if isinstance(found, cst.BaseExpression) else None
    return None


def _calls_user_code(view: MetadataView, nodes: list) -> bool:
    """Some call among ``nodes`` may run the program's own code (not a library's:
    ``tf_apis.library_call``), which may rebind a global with ``global``."""
    return any(
        isinstance(inner, cst.Call) and not library_call(view, inner)
        for node in nodes
        for inner in iter_tree(node)
    )


def _position(call: cst.Call, name: str) -> int:
    """Index of the first argument that is ``name`` itself (all of them if none)."""
    for index, arg in enumerate(call.args):
        if isinstance(arg.value, cst.Name) and arg.value.value == name:
            return index
    return len(call.args)


SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _declared(function: cst.FunctionDef, name: str) -> bool:
    """``name`` is declared global or nonlocal in ``function`` or a function inside it."""
    for node in iter_tree(function):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            if any(item.name.value == name for item in node.names):
                return True
    return False


def _binding(small: cst.BaseSmallStatement, name: str) -> cst.BaseExpression | bool | None:
    """How ``small`` binds ``name``: its value (``name = value``), None (binds it some
    other way: unknown), or False (does not bind it)."""
    if isinstance(small, cst.Assign):
        targets = [t.target for t in small.targets]
        if len(targets) == 1 and isinstance(targets[0], cst.Name) and targets[0].value == name:
            return small.value
        return None if any(_binds(t, name) for t in targets) else False
    if isinstance(small, (cst.AnnAssign, cst.AugAssign)):
        return None if _binds(small.target, name) else False
    if isinstance(small, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal, cst.Del)):
        return None  # may bind or unbind it
    if any(isinstance(n, cst.NamedExpr) for n in iter_tree(small)):
        return None
    return False


def _binds(target: cst.BaseExpression, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in iter_tree(target))

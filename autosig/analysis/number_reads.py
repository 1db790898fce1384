"""How a traced function reads its Python-number parameters by name, one read at a time.

Facts the Python-number stage of inference (``infer/python_params.py``) decides with,
found in one pass over the function's body (``number_reads``), for each parameter:

- ``exponent``: the first read that is an exponent (``x ** n``, ``x **= n``,
  ``tf.math.pow(x, n)``): TensorFlow computes a power by a constant exponent differently
  from one by a tensor, so the number stays a Python value;
- ``seed``: a read inside a ``seed=`` argument (``seed=[seed, 1]``): a seed, hashed or
  counted, whose values a short profile does not bound;
- ``float32_casts``: every read is the number a float32 cast takes (``tf.cast(n,
  tf.float32)``, ``tf.cast(n, x.dtype)``, ``tf.image.adjust_brightness(image, n)``), as
  far as the code shows; whether ``x`` or ``image`` is float32 is the profile's to say, so
  the fact names them.

Only the parameter's own name is read here (no data flow: that is
``analysis/python_values.py``'s walk, which builds these facts with its own).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper

from autosig.source.metadata import MetadataView, iter_tree

POW_APIS = frozenset(
    {
        "tensorflow.math.pow",
        "tensorflow.pow",
        "tensorflow.experimental.numpy.power",
        "builtins.pow",
    }
)
FLOAT32_NAMES = frozenset({"tensorflow.float32", "tensorflow.dtypes.float32"})
CASTS = frozenset({"tensorflow.cast", "tensorflow.dtypes.cast"})
CAST_TO_IMAGE_DTYPE = {"tensorflow.image.adjust_brightness": (1, "delta")}
"""APIs that cast a number argument (position, keyword) to their image's dtype
(``math_ops.cast(delta, image.dtype)`` for float16/float32 images)."""


@dataclass(frozen=True)
class NumberReads:
    """How a function reads one parameter by name."""

    exponent: str | None = None
    """The code of the first read that is an exponent (``x ** n``); None: none is."""
    seed: bool = False
    """Some read is inside a ``seed=`` argument."""
    float32_casts: tuple[str, ...] | None = None
    """None: some read is not a float32 cast (or it is never read). Else every read is
    one, provided the names listed (the ``x`` of ``tf.cast(n, x.dtype)``, the image of
    ``adjust_brightness``) are float32."""


def number_reads(
    wrapper: MetadataWrapper, function: cst.FunctionDef | cst.Lambda, params: Collection[str]
) -> dict[str, NumberReads]:
    """The reads of each of ``params`` in ``function`` (a node of ``wrapper.module``)."""
    view = MetadataView(wrapper)
    reads: dict[str, list[cst.Name]] = {name: [] for name in params}
    for node in iter_tree(function.body):
        if isinstance(node, cst.Name) and node.value in reads and _is_read(view, node):
            reads[node.value].append(node)
    return {
        name: NumberReads(
            exponent=next((c for n in found if (c := _exponent(view, n)) is not None), None),
            seed=any(_in_seed(view, function, n) for n in found),
            float32_casts=_float32_casts(view, found),
        )
        for name, found in reads.items()
    }


def _is_read(view: MetadataView, node: cst.Name) -> bool:
    parent = view.parent(node)
    if isinstance(parent, cst.AssignTarget) or (
        isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node
    ):
        return False
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return False
    return not (isinstance(parent, cst.Arg) and parent.keyword is node)


def _exponent(view: MetadataView, node: cst.Name) -> str | None:
    """The code of the power whose exponent ``node`` is (None: it is not one)."""
    parent = view.parent(node)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Power):
        if parent.right is node:
            return view.code(parent)
    if isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.PowerAssign):
        if parent.value is node:
            return view.code(parent).strip()
    call = view.parent(parent) if isinstance(parent, cst.Arg) else None
    if isinstance(call, cst.Call) and view.qualified_names(call.func) & POW_APIS:
        assert isinstance(parent, cst.Arg)
        index = list(call.args).index(parent)
        keyword = parent.keyword.value if parent.keyword is not None else None
        if keyword in ("y", "exp", "x2") or (keyword is None and index == 1):
            return view.code(call)
    return None


def _in_seed(view: MetadataView, function: cst.FunctionDef | cst.Lambda, node: cst.Name) -> bool:
    for ancestor in view.ancestors(node):
        if isinstance(ancestor, cst.Arg) and ancestor.keyword is not None:
            if ancestor.keyword.value == "seed":
                return True
        if ancestor is function:
            break
    return False


def _float32_casts(view: MetadataView, reads: list[cst.Name]) -> tuple[str, ...] | None:
    if not reads:
        return None
    needed: list[str] = []
    for node in reads:
        found = _cast_to_float32(view, node)
        if found is None:
            return None
        needed.extend(found)
    return tuple(needed)


def _cast_to_float32(view: MetadataView, node: cst.Name) -> tuple[str, ...] | None:
    """``node`` is the number a float32 cast takes, provided the names returned are
    float32 (None: it is not)."""
    arg = view.parent(node)
    call = view.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call) or arg.value is not node:
        return None
    names = view.qualified_names(call.func)
    index = call.args.index(arg)
    keyword = arg.keyword.value if arg.keyword is not None else None
    if names & CASTS:
        if not (keyword == "x" or (keyword is None and index == 0)):
            return None
        target = next(
            (a.value for a in call.args if a.keyword and a.keyword.value == "dtype"), None
        )
        positional = [a.value for a in call.args if a.keyword is None]
        if target is None and len(positional) > 1:
            target = positional[1]
        return _float32_dtype(view, target) if target is not None else None
    for api, (position, word) in CAST_TO_IMAGE_DTYPE.items():
        if api in names and (keyword == word or (keyword is None and index == position)):
            image = call.args[0].value if call.args and call.args[0].keyword is None else None
            return (image.value,) if isinstance(image, cst.Name) else None
    return None


def _float32_dtype(view: MetadataView, node: cst.BaseExpression) -> tuple[str, ...] | None:
    """``node`` names float32, provided the names returned are float32 (None: it does not)."""
    if isinstance(node, cst.SimpleString):
        return () if node.evaluated_value == "float32" else None
    if view.qualified_names(node) & FLOAT32_NAMES:
        return ()
    if (
        isinstance(node, cst.Attribute)
        and node.attr.value == "dtype"
        and isinstance(node.value, cst.Name)
    ):
        return (node.value.value,)
    return None

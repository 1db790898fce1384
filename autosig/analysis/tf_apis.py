"""What TensorFlow, Keras and Python builtins do with the values the analyses follow.

The static analyses (``python_values``, and through it the planner) ask these tables
whether an API needs a Python value where a parameter goes (``range(n)``, ``axis=n``,
``tf.constant(n)``), takes a tensor there (``tape.gradient``, Keras losses and metrics,
``Variable.assign``), or changes the dtype of what it returns; and which dtype names
``tf.<name>`` spells and what integer range a dtype holds. Plain data: no libcst, no
TensorFlow (``infer/specs.py`` reads the dtypes on paths that parse nothing). Checked
against TensorFlow itself in ``tests/test_analysis_tf.py``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # static commands that parse nothing never import libcst
    import libcst as cst

    from autosig.source.metadata import MetadataView

# -- dtypes ------------------------------------------------------------------------------

TF_DTYPES = frozenset(
    {
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "bool",
        "string",
        "qint8",
        "quint8",
        "qint16",
        "quint16",
        "qint32",
    }
)
"""dtype names that ``tf.<name>`` spells and a TensorSpec can carry."""

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


# -- APIs and what they take -----------------------------------------------------------

BUILTINS_NEEDING_VALUES = {
    "range": "Python range() needs a Python int",
    "int": "int() needs a Python value",
    "float": "float() needs a Python value",
    "bool": "bool() needs a Python value",
    "str": "str() formats the value in Python",
    "repr": "repr() formats the value in Python",
    "format": "format() formats the value in Python",
    "len": "len() needs a Python sequence",
    "round": "round() needs a Python number",
    "min": "min() compares in Python",
    "max": "max() compares in Python",
    "sum": "sum() iterates in Python",
    "sorted": "sorted() iterates in Python",
    "enumerate": "enumerate() iterates in Python",
    "zip": "zip() iterates in Python",
    "list": "list() needs a Python iterable",
    "tuple": "tuple() needs a Python iterable",
    "dict": "dict() needs Python keys",
    "set": "set() needs hashable Python values",
    "hash": "hash() needs a Python value",
    "isinstance": "isinstance() sees a Tensor instead of a Python number",
    "type": "type() sees a Tensor instead of a Python number",
    "divmod": "divmod() needs Python numbers",
    "getattr": "getattr() needs a Python string",
    "setattr": "setattr() needs a Python string",
    "hasattr": "hasattr() needs a Python string",
    "open": "open() needs a Python path",
    "slice": "slice() of a Python sequence",
}
"""Builtins that need the Python value itself (a tensor raises or changes the result)."""

BUILTINS_TENSOR_SAFE = frozenset({"print", "abs"})
"""``print`` only logs at trace time (AS101 turns it into tf.print); ``abs`` works on tensors."""

TF_APIS_NEEDING_VALUES = (
    "tensorflow.keras.",
    "tensorflow.compat.v1.keras.",
    "tensorflow.split",
    "tensorflow.unstack",
    "tensorflow.TensorShape",
    "tensorflow.random.set_seed",
    "tensorflow.function",
    "tensorflow.name_scope",
    "tensorflow.Variable",
    "tensorflow.executing_eagerly",
    "tensorflow.constant",
    "keras.",
)
"""TensorFlow APIs whose arguments are configuration (Python ints/strings), not tensors.

``tf.constant`` refuses a symbolic tensor (TypeError, measured with TF 2.21)."""

CONFIG_KEYWORDS = frozenset(
    {
        "axis",
        "axes",
        "batch_dims",
        "data_format",
        "dilations",
        "dtype",
        "keep_dims",
        "keepdims",
        "ksize",
        "name",
        "num",
        "num_or_size_splits",
        "out_type",
        "output_type",
        "padding",
        "perm",
        "reduction_indices",
        "seed",
        "strides",
    }
)
"""Keyword arguments of TensorFlow ops that are configuration: a Python value fixes the
static shape or the graph (``tf.squeeze(axis=)``, ``tf.random.uniform(seed=)`` and
``tf.identity(name=)`` refuse a tensor; ``tf.reduce_sum(axis=)`` takes one but loses the
static shape). ``seed`` of the stateless random ops is a tensor (see STATELESS_SEED)."""

AXIS_POSITION = {
    **{
        f"{prefix}{op}": 1
        for prefix in ("", "math.")
        for op in (
            "reduce_sum",
            "reduce_mean",
            "reduce_max",
            "reduce_min",
            "reduce_prod",
            "reduce_any",
            "reduce_all",
            "reduce_std",
            "reduce_variance",
            "reduce_logsumexp",
            "argmax",
            "argmin",
            "cumsum",
            "cumprod",
        )
    },
    "concat": 1,
    "stack": 1,
    "expand_dims": 1,
    "squeeze": 1,
    "transpose": 1,
    "reverse": 1,
    "nn.softmax": 1,
    "nn.log_softmax": 1,
    "unstack": 2,
    "split": 2,
    "gather": 3,
}
"""Positional index of the axis-like (configuration) argument of common ops."""

STATELESS_SEED = ("random.stateless_", "random.experimental.stateless_")
"""Ops whose ``seed`` is a shape-[2] int32/int64 tensor (same stream for both dtypes)."""

INT64_NEUTRAL = {
    "cast": (0, "x"),
    "dtypes.cast": (0, "x"),
    "saturate_cast": (0, "value"),
    "zeros": (0, "shape"),
    "ones": (0, "shape"),
    "fill": (0, "dims"),
    "reshape": (1, "shape"),
    "print": (-1, ""),
    "random.uniform": (0, "shape"),
    "random.normal": (0, "shape"),
}
"""(position, keyword) of arguments where an int64 tensor gives the same result as the
int32 a small Python int converts to (a cast, a shape, a print); -1: every argument."""

TAPE_METHODS = frozenset({"gradient", "jacobian", "batch_jacobian", "watch"})
KERAS_LOSS_PREFIXES = ("keras.losses.", "tensorflow.keras.losses.", "keras.src.losses.")
KERAS_METRIC_PREFIXES = ("keras.metrics.", "tensorflow.keras.metrics.", "keras.src.metrics.")
METRIC_METHODS = frozenset({"update_state"})
TENSOR_ARGUMENTS: tuple[int | str, ...] = (0, 1, 2, "y_true", "y_pred", "sample_weight", "values")
"""Arguments of loss/metric calls and ``tape.gradient`` that are tensors (or nests)."""
"""TensorFlow and Keras objects whose calls take tensors (checked against TF 2.21 and
Keras 3 in tests/test_analysis_tf.py): ``tf.GradientTape`` methods, Keras loss functions
and loss objects (y_true, y_pred, sample_weight), metric ``update_state``/calls. Their
constructors stay configuration; Keras layers are not in the table (their calls take
``training=``/``mask=`` flags)."""

KERAS_TENSOR_APIS = ("keras.ops.", "keras.random.", "tensorflow.keras.ops.", "keras.src.ops.")
"""Keras 3 ops take and return tensors like TensorFlow's own."""

TENSOR_SAFE_METHODS = frozenset({"assign", "assign_add", "assign_sub"})
"""Methods (of tf.Variable and friends) that take a tensor value."""

FLOAT32_DEFAULT_APIS = frozenset(
    {
        "ones",
        "zeros",
        "eye",
        "random.uniform",
        "random.normal",
        "random.truncated_normal",
        "random.stateless_uniform",
        "random.stateless_normal",
        "one_hot",
    }
)
"""TensorFlow constructors whose result is float32 unless a dtype is given."""

DTYPE_CHANGING_APIS = frozenset(
    {
        "shape",
        "size",
        "rank",
        "argmax",
        "argmin",
        "math.argmax",
        "math.argmin",
        "equal",
        "not_equal",
        "greater",
        "greater_equal",
        "less",
        "less_equal",
        "logical_and",
        "logical_or",
        "logical_not",
        "constant",
        "convert_to_tensor",
        "range",
        "where",
        "unique",
        "bitcast",
        "complex",
        "math.real",
        "math.imag",
        "fill",
        "reduce_any",
        "reduce_all",
        "py_function",
        "numpy_function",
    }
)
"""TensorFlow ops whose result dtype is not their first argument's (or not evident)."""


# -- what the shape-use analysis needs to know of TensorFlow's own calls ----------------

Slot = tuple[int, str]
"""(position, keyword) of an argument."""


def slot_argument(call: cst.Call, slot: Slot) -> cst.BaseExpression | None:
    """The argument at (position, keyword) of a call (None if not passed, or where a
    ``*args`` before it hides which one it is)."""
    position, keyword = slot
    for arg in call.args:
        if keyword and arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            continue
        if index == position:
            return arg.value
        index += 1
    return None


@dataclass(frozen=True)
class Feed:
    """What one parameter of a higher-order op's function argument gets.

    ``element``: one element of the argument at ``slot`` (its dimension 0 taken off);
    ``slice``: a part of it along dimension 0 (same rank); ``leaf``: a leaf of a nest
    (the argument itself when it is a tensor); ``same``: the argument itself (its shape,
    as a loop variable keeps it); ``spread``: the items of a list or tuple argument, one
    per parameter from this one on; ``none``: no tensor of the caller's (a loop
    counter). ``element``, ``slice`` and ``leaf`` are values computed from the argument
    (any of their dimensions may be any of its). ``fallback``: the feed when ``slot`` is
    not passed (``tf.scan`` without ``initializer`` starts from the first element).
    """

    how: Literal["element", "slice", "leaf", "same", "spread", "none"]
    slot: Slot | None = None
    fallback: Feed | None = None


@dataclass(frozen=True)
class HigherOrder:
    """An op that calls a function argument while tracing: the analysis follows it."""

    functions: tuple[Slot, ...]
    feeds: tuple[Feed, ...] = ()
    relaxing: tuple[str, ...] = ()
    """Keywords that, when passed, let a ``same`` feed change shape (``shape_invariants``)."""


_ELEMENTS = Feed("element", (1, "elems"))
_SCAN = HigherOrder(
    ((0, "fn"),),
    (Feed("same", (2, "initializer"), fallback=_ELEMENTS), _ELEMENTS),
)
_WHILE = HigherOrder(
    ((0, "cond"), (1, "body")), (Feed("spread", (2, "loop_vars")),), ("shape_invariants",)
)
HIGHER_ORDER: dict[str, HigherOrder] = {
    "tensorflow.map_fn": HigherOrder(((0, "fn"),), (_ELEMENTS,)),
    "tensorflow.vectorized_map": HigherOrder(((0, "fn"),), (_ELEMENTS,)),
    "tensorflow.scan": _SCAN,
    "tensorflow.foldl": _SCAN,
    "tensorflow.foldr": _SCAN,
    "tensorflow.while_loop": _WHILE,
    "tensorflow.cond": HigherOrder(((1, "true_fn"), (2, "false_fn"))),
    "tensorflow.nest.map_structure": HigherOrder(((0, "func"),), (Feed("leaf", (1, "")),)),
    "keras.ops.map": HigherOrder(((0, "f"),), (Feed("element", (1, "xs")),)),
    "keras.ops.vectorized_map": HigherOrder(
        ((0, "function"),), (Feed("element", (1, "elements")),)
    ),
    "keras.ops.scan": HigherOrder(
        ((0, "f"),), (Feed("same", (1, "init")), Feed("element", (2, "xs")))
    ),
    "keras.ops.fori_loop": HigherOrder(
        ((2, "body_fun"),), (Feed("none"), Feed("same", (3, "init_val")))
    ),
    "keras.ops.while_loop": HigherOrder(
        ((0, "cond"), (1, "body")), (Feed("spread", (2, "loop_vars")),)
    ),
    "keras.ops.associative_scan": HigherOrder(
        ((0, "f"),), (Feed("slice", (1, "elems")), Feed("slice", (1, "elems")))
    ),
    "keras.ops.cond": HigherOrder(((1, "true_fn"), (2, "false_fn"))),
}
"""TensorFlow's and Keras's higher-order ops (``tf.compat.v1``/``tf.keras.ops``
spellings normalised): their function arguments run while tracing, on elements or
copies of their tensor arguments, so a static read there is a read of the caller's
tensor. ``tf.py_function``/``tf.numpy_function`` are not here: their function runs at
run time on concrete values."""


@dataclass(frozen=True)
class StaticSize:
    """An op that needs the static size of one dimension of its tensor argument."""

    axis: Slot | None
    default_axis: int = 0
    unless: str = ""
    """A keyword that, when passed, gives the size instead (``num``)."""
    only_if_sequence: Slot | None = None
    """Needed only when this argument is a list or tuple (``ops.split`` by indices)."""


STATIC_SIZE_APIS: dict[str, StaticSize] = {
    "tensorflow.unstack": StaticSize((2, "axis"), unless="num"),
    "keras.ops.unstack": StaticSize((2, "axis"), unless="num"),
    "keras.ops.array_split": StaticSize((2, "axis")),
    "keras.ops.split": StaticSize((2, "axis"), only_if_sequence=(1, "indices_or_sections")),
    "keras.ops.glu": StaticSize((1, "axis"), default_axis=-1),
}
"""Ops that fail (or compute something else) when the dimension they split is None:
``tf.unstack`` infers ``num`` from it, Keras splits by indices and ``array_split``
compute section sizes in Python, ``glu`` halves its axis in Python (each checked with
None dimensions in ``tests/test_tf_objects_tf.py``)."""

STATIC_SHAPE_FUNCTIONS = frozenset({"keras.ops.shape"})
"""Functions returning a tensor's shape with Python ints where the static shape knows
them (Keras's TensorFlow backend), so indexing them reads the static size like
``x.shape[i]``."""


def normalised_api(name: str) -> str:
    """``tensorflow.keras.ops.x`` / ``keras.src.ops.x`` -> ``keras.ops.x``;
    ``tensorflow.compat.v1.x`` / ``compat.v2`` -> ``tensorflow.x``."""
    for prefix in ("tensorflow.keras.", "tf_keras.", "keras.src."):
        if name.startswith(prefix):
            name = "keras." + name[len(prefix) :]
    for prefix in ("tensorflow.compat.v1.", "tensorflow.compat.v2."):
        if name.startswith(prefix):
            name = "tensorflow." + name[len(prefix) :]
    if name.startswith("keras.ops.numpy.") or name.startswith("keras.ops.core."):
        name = "keras.ops." + name.split(".", 3)[3]
    return name


LIBRARY_ROOTS = frozenset(sys.stdlib_module_names) | {"builtins", "tensorflow", "numpy", "keras"}
"""Top-level modules whose functions run no code of the program (the standard library,
TensorFlow, NumPy, Keras)."""


def library_call(view: MetadataView, call: cst.Call) -> bool:
    """``call`` is a library's: every name its function resolves to is in
    ``LIBRARY_ROOTS`` (``round``, ``json.dumps``, ``tf.image.resize``), or it is a method
    of a value a library call made (``tf.image.resize(...).numpy()``)."""
    import libcst as cst  # here: a static run that parses nothing never imports it

    names = view.qualified_names(call.func)
    if names and all(n.split(".", 1)[0] in LIBRARY_ROOTS for n in names):
        return True
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Call)
        and library_call(view, func.value)
    )

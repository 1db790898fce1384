"""Where TensorFlow takes a scalar int32 tensor in place of a size: a measured table.

``shape_rewrites`` turns a static read ``x.shape[i]`` into ``tf.shape(x)[i]`` only
where the int flows into one of these places, so the rewritten code computes the same
value for every size. Each entry carries an example call that
``tests/test_dynamic_shape_tf.py`` runs with both forms against TensorFlow itself, so the
table stays true to the TensorFlow it was measured with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import libcst as cst

Form = Literal["scalar", "shape"]


@dataclass(frozen=True)
class SizeArgument:
    """Where a TensorFlow op takes a size that may be a scalar int32 tensor."""

    position: int | None
    keyword: str
    form: Form
    """``scalar``: the argument itself; ``shape``: an element of a list/tuple literal."""
    why: str
    example: str
    """A call using the size ``{n}``, run with ``x.shape[0]`` and ``tf.shape(x)[0]`` (x
    is a float32 matrix) by the test that keeps this table honest."""


SIZE_ARGUMENTS: dict[str, tuple[SizeArgument, ...]] = {
    "tensorflow.TensorArray": (
        SizeArgument(
            1,
            "size",
            "scalar",
            "sizes a TensorArray",
            "tf.TensorArray(tf.float32, size={n}).unstack(x).stack()",
        ),
    ),
    "tensorflow.zeros": (
        SizeArgument(0, "shape", "shape", "gives tf.zeros a dimension", "tf.zeros([{n}, 2])"),
    ),
    "tensorflow.ones": (
        SizeArgument(0, "shape", "shape", "gives tf.ones a dimension", "tf.ones(({n}, 2))"),
    ),
    "tensorflow.fill": (
        SizeArgument(0, "dims", "shape", "gives tf.fill a dimension", "tf.fill([{n}, 3], 1.5)"),
    ),
    "tensorflow.reshape": (
        SizeArgument(
            1, "shape", "shape", "gives tf.reshape a dimension", "tf.reshape(x, [{n}, -1])"
        ),
    ),
    "tensorflow.tile": (
        SizeArgument(
            1, "multiples", "shape", "sets a tf.tile multiple", "tf.tile(x[:1], [{n}, 1])"
        ),
    ),
    "tensorflow.broadcast_to": (
        SizeArgument(
            1,
            "shape",
            "shape",
            "gives tf.broadcast_to a dimension",
            "tf.broadcast_to(x[:1], [{n}, tf.shape(x)[1]])",
        ),
    ),
    "tensorflow.range": (
        SizeArgument(0, "start", "scalar", "bounds tf.range", "tf.range({n})"),
        SizeArgument(1, "limit", "scalar", "bounds tf.range", "tf.range(1, {n} + 1)"),
        SizeArgument(2, "delta", "scalar", "sets the step of tf.range", "tf.range(0, 12, {n})"),
    ),
    "tensorflow.slice": (
        SizeArgument(
            1, "begin", "shape", "sets where tf.slice begins", "tf.slice(x, [{n} - 1, 0], [1, -1])"
        ),
        SizeArgument(2, "size", "shape", "sizes a tf.slice", "tf.slice(x, [0, 0], [{n}, -1])"),
    ),
    "tensorflow.one_hot": (
        SizeArgument(1, "depth", "scalar", "sets a tf.one_hot depth", "tf.one_hot([0, 1], {n})"),
    ),
    "tensorflow.sequence_mask": (
        SizeArgument(
            1, "maxlen", "scalar", "sets a tf.sequence_mask length", "tf.sequence_mask([1], {n})"
        ),
    ),
    "tensorflow.eye": (
        SizeArgument(0, "num_rows", "scalar", "sizes tf.eye", "tf.eye({n})"),
        SizeArgument(1, "num_columns", "scalar", "sizes tf.eye", "tf.eye(2, {n})"),
    ),
    "tensorflow.cast": (
        SizeArgument(0, "x", "scalar", "goes into tf.cast", "x / tf.cast({n}, tf.float32)"),
    ),
}
"""TensorFlow calls that accept a scalar int32 tensor where the code passes a size."""

SLICE_WHY = "bounds a slice of a tensor"
SLICE_EXAMPLE = "x[: {n} - 1, 1:]"
RANGE_LOOP_WHY = "bounds a `for` loop over range(), which autograph runs as a tf.while_loop"
RANGE_LOOP_EXAMPLE = (
    "def f(x):\n"
    "    total = tf.zeros([tf.shape(x)[1]])\n"
    "    for i in range({n}):\n"
    "        total = total * 0.5 + x[i]\n"
    "    return total\n"
)
"""How the test checks slices and ``for`` loops over ``range`` (see ``SIZE_ARGUMENTS``)."""

SIZE_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
"""int32 tensors and Python ints agree on these (``/`` gives a float64 tensor)."""

TENSOR_OPS = frozenset(
    {
        "transpose",
        "reshape",
        "cast",
        "identity",
        "convert_to_tensor",
        "expand_dims",
        "squeeze",
        "concat",
        "stack",
        "matmul",
        "linalg.matmul",
        "einsum",
        "zeros",
        "ones",
        "fill",
        "zeros_like",
        "ones_like",
        "tile",
        "broadcast_to",
        "pad",
        "reverse",
        "gather",
        "one_hot",
        "range",
        "where",
        "Variable",
        "constant",
    }
)
"""``tf.<op>`` results that are one tensor (so ``.shape`` and slicing work on them)."""

ELEMENTWISE = frozenset(
    {
        "tanh",
        "sigmoid",
        "exp",
        "abs",
        "square",
        "sqrt",
        "maximum",
        "minimum",
        "nn.relu",
        "nn.tanh",
        "nn.sigmoid",
        "nn.elu",
        "nn.softplus",
        "math.tanh",
        "math.sigmoid",
        "math.exp",
        "math.log",
        "math.abs",
        "math.square",
        "math.sqrt",
        "math.maximum",
        "math.minimum",
        "math.multiply",
        "math.add",
        "math.subtract",
    }
)
"""``tf.<op>`` whose result has the broadcast shape of its tensor arguments."""

"""The dtype a call site shows for an argument (``analysis/static_dtypes.py``).

Valid/invalid pairs: the argument, or the value assigned to its name just before the
call in straight-line code, is an expression whose dtype the code fixes. The table's
claims about TensorFlow are measured in ``test_static_dtypes_tf.py``.
"""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from autosig.analysis.static_dtypes import argument_dtype
from autosig.source.metadata import MetadataView, iter_tree

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\ndef main(base, shape, rng, other):\n"


def dtype_at_call(body: str) -> str | None:
    """The dtype of the first argument of the call of ``step`` in ``body``."""
    source = HEAD + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    view = MetadataView(MetadataWrapper(cst.parse_module(source)))
    (call,) = [
        n
        for n in iter_tree(view.module)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "step"
    ]
    return argument_dtype(view, call, call.args[0].value)


@pytest.mark.parametrize(
    "body, dtype",
    [
        # golden 23: the image of each octave, resized, then passed on
        ("img = tf.image.resize(base, shape).numpy()\nn = 3\nloss, img = step(img, n)", "float32"),
        ("x = rng.normal(size=(4, 4)).astype('float32')\nstep(x)", "float32"),
        ("x = other.astype(np.float64)\nstep(x)", "float64"),
        ("step(tf.cast(other, tf.float16))", "float16"),
        ("x = tf.constant(other, dtype=tf.float32)\nstep(x)", "float32"),
        ("x = np.asarray(other, 'float32')\nstep(x)", "float32"),
        ("step(tf.random.uniform([3, 3]))", "float32"),
        ("x = tf.zeros([2, 2])\nstep(x)", "float32"),
        ("x = tf.convert_to_tensor(other, tf.int64)\nstep(x)", "int64"),
        ("x = other; x = tf.cast(x, tf.float16); step(x)", "float16"),  # its own line
    ],
)
def test_dtypes_the_code_fixes(body: str, dtype: str) -> None:
    assert dtype_at_call(body) == dtype


@pytest.mark.parametrize(
    "body",
    [
        "step(other)",  # a parameter: any dtype
        "x = np.asarray(other)\nstep(x)",  # keeps other's dtype
        "x = tf.image.resize(base, shape, method='nearest')\nstep(x)",  # images' dtype
        "x = tf.image.resize(base, shape, 'nearest')\nstep(x)",
        "x = tf.zeros([2], tf.int32)\nstep(x)",  # a dtype given: read as unknown
        "x = tf.zeros([2], dtype=other)\nstep(x)",
        "x = tf.zeros([2])\nif other:\n    x = other\nstep(x)",  # a branch between
        "x = tf.zeros([2])\nx, y = other\nstep(x)",  # rebound by unpacking
        "x = tf.zeros([2])\nx += other\nstep(x)",
        "x = tf.zeros([2])\nfor _ in other:\n    pass\nstep(x)",  # a loop between
        "x = tf.zeros([2])\nprint((x := other))\nstep(x)",  # a walrus
        "x = other.astype(other.dtype)\nstep(x)",
        # review5: the call sees another `x`, or `x` may change between
        "x = tf.zeros([2])\nouts = [step(x) for x in other]",  # the comprehension's own
        "x = tf.zeros([2])\nrun = lambda x: step(x)",  # the lambda's parameter
        "x = tf.image.resize(base, shape, **other)\nstep(x)",  # `**` may hold the method
        "x = tf.zeros([2])\nx = tf.cast(x, other); step(x)",  # its own line first
        "global x\nx = tf.zeros([2])\nrebind()\nstep(x)",  # a call may rebind a global
        "x = tf.zeros([2])\nout = (x := other) is not None and step(x)",  # review6
    ],
)
def test_dtypes_the_code_does_not_fix(body: str) -> None:
    assert dtype_at_call(body) is None


def module_dtype(source: str) -> str | None:
    """The dtype of the first argument of the last call of ``step`` in a script."""
    script = "import numpy as np\nimport tensorflow as tf\n" + source
    view = MetadataView(MetadataWrapper(cst.parse_module(script)))
    calls = [
        n
        for n in iter_tree(view.module)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == "step"
    ]
    return argument_dtype(view, calls[-1], calls[-1].args[0].value)


@pytest.mark.parametrize(
    "source, dtype",
    [
        # a script (review7): only builtins, TensorFlow and NumPy run between
        ("x = tf.zeros([2])\nstep(x)\n", "float32"),
        (
            "for i in range(3):\n    x = tf.image.resize(base, (i, i)).numpy()\n"
            "    n = round(0.5 * i, 2)\n    step(x, n)\n",
            "float32",
        ),
        # a function of the program runs between: it may rebind the global
        ("x = tf.zeros([2])\nrebind()\nstep(x)\n", None),
        ("x = tf.zeros([2])\nstep(rebind(), x)\n", None),
        ("x = tf.zeros([2])\ny = helper(x)\nstep(x)\n", None),
        # a class body: not straight-line code of the script
        ("class C:\n    x = tf.zeros([2])\n    y = step(x)\n", None),
    ],
)
def test_a_call_at_module_level(source: str, dtype: str | None) -> None:
    assert module_dtype(source) == dtype

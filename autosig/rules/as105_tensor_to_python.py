"""AS105: ``.numpy()``, ``float(t)``, ``int(t)``, ``bool(t)`` on a tensor in a tf.function."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from autosig.rules.base import Invalid, Rule
from autosig.rules.context import RuleContext
from autosig.rules.plain_python import is_python_value
from autosig.rules.violation import Violation
from autosig.source.skeleton import Keep

NUMPY_MESSAGE = (
    "`.numpy()` in tf.function `{name}` fails while tracing: a graph tensor has no value "
    "yet; use the tensor itself (or move this out of the function)"
)
CAST_MESSAGE = (
    "`{call}(...)` on a possible tensor in tf.function `{name}` fails while tracing (a "
    "graph tensor has no value yet); use {instead}, or compute it outside the function"
)
INSTEAD = {
    "float": "tf.cast(x, tf.float32)",
    "int": "tf.cast(x, tf.int32)",
    "bool": "tf.cast(x, tf.bool) or tf.cond",
}


class TensorToPython(Rule):
    """## What it does
    Finds `.numpy()` calls and `float(x)`, `int(x)`, `bool(x)` conversions of values
    that may be tensors, in code that runs inside a `tf.function`.

    ## Why is this bad?
    While a `tf.function` is traced its tensors are symbolic: they have a shape and a
    dtype but no value. `.numpy()` raises `AttributeError`/`NotImplementedError`,
    `float(t)`/`int(t)` raise `TypeError`, and `bool(t)` raises "using a `tf.Tensor` as
    a Python `bool` is not allowed". Code that worked eagerly (or under
    `run_functions_eagerly`) breaks as soon as it is compiled.

    Plain Python values are not reported: literals, `len(...)`, static shapes
    (`int(x.shape[0])`), loop counters over `range` of Python numbers, and names bound
    only to such values.

    ## Example
    ```python
    @tf.function
    def step(x):
        scale = float(tf.reduce_max(x))
        return x / scale
    ```

    ## Use instead
    ```python
    @tf.function
    def step(x):
        scale = tf.cast(tf.reduce_max(x), tf.float32)
        return x / scale
    ```

    ## Fix safety
    No automatic fix: the right replacement depends on what the Python value was used
    for (a cast, a `tf.cond`, a value computed outside the function).
    """

    code = "AS105"
    name = "tensor-to-python"
    summary = ".numpy(), float(), int() or bool() on a tensor inside a tf.function"
    fix_safety = "none"
    # what a name or attribute is bound to, anywhere in the file
    skeleton_keeps = frozenset({Keep.SELF_SETTERS, Keep.GLOBAL_WRITERS})
    VALID = [
        # the same code outside a tf.function
        "import tensorflow as tf\ndef f(x):\n    return float(tf.reduce_max(x)), x.numpy()\n",
        "import tensorflow as tf\nBATCH = 32\n@tf.function\ndef f(x, xs):\n"
        "    n = int(x.shape[0]) + int(len(xs)) + int('7') + int(BATCH)\n"
        "    for i in range(3):\n        n += int(i)\n"
        "    for j, y in enumerate(xs):\n        n += int(j)\n"
        "    return tf.reshape(x, [int(x.shape.num_elements()), n])\n",
        "import tensorflow as tf\n@tf.function\ndef f(x):\n"
        "    k = 2 * 3\n    return x * float(k) * bool(1)\n",
        # attributes of self set from constructor arguments are configuration
        "import tensorflow as tf\nclass Aug:\n    def __init__(self, lo, hi, sizes):\n"
        "        self._lo, self._hi = lo, hi\n        self._sizes = sizes\n"
        "    @tf.function\n    def f(self, x):\n"
        "        for i, (size, _) in enumerate(zip(self._sizes, self._sizes)):\n"
        "            x += int(size) + int(self._hi)\n        return x\n",
        # parameters of an enclosing, untraced function are Python values
        "import tensorflow as tf\ndef make(cfg):\n    @tf.function\n    def f(x):\n"
        "        return x * float(cfg['scale'])\n    return f\n",
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(x):\n"
            "    return x / float(tf.reduce_max(x))\n"
        ),
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(x):\n"
            "    if bool(x > 0):\n        return x.numpy()\n    return int(x)\n",
            count=3,
        ),
        Invalid(
            # range over a tensor: the counter is a tensor too
            "import tensorflow as tf\n@tf.function\ndef f(x, n):\n"
            "    for i in range(n):\n        x += int(i)\n    return x\n"
        ),
        Invalid(
            "import tensorflow as tf\nclass M:\n    def __init__(self):\n"
            "        self.scale = tf.Variable(2.0)\n    @tf.function\n    def f(self, x):\n"
            "        return x * float(self.scale)\n"
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterable[Violation]:
        for site, call in ctx.iter_traced(cst.Call):
            name = site.site.qualname
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and not call.args:
                yield Violation(call, NUMPY_MESSAGE.format(name=name))
                continue
            if not isinstance(func, cst.Name) or func.value not in INSTEAD:
                continue
            if not ctx.refers_to(func, f"builtins.{func.value}"):
                continue
            if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
                continue  # int(s, 16) parses a string
            if is_python_value(ctx, call.args[0].value):
                continue
            yield Violation(
                call,
                CAST_MESSAGE.format(call=func.value, name=name, instead=INSTEAD[func.value]),
            )

"""AS104: a Python list appended to in a loop inside a tf.function."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst
from libcst.metadata import Assignment, ScopeProvider

from autosig.rules.base import Invalid, Rule
from autosig.rules.context import RuleContext
from autosig.rules.plain_python import is_python_iterable
from autosig.rules.violation import Violation
from autosig.source.skeleton import Keep

MESSAGE = (
    "`{name}.append()` in a loop of tf.function `{function}`: when the loop runs in the "
    "graph (over a tensor, tf.range or a dataset) a Python list cannot grow per "
    "iteration; collect into a tf.TensorArray (write, then stack)"
)


class ListAppendInLoop(Rule):
    """## What it does
    Finds `lst.append(...)` on a Python list created in a `tf.function`, inside a loop
    that may run as a graph loop.

    ## Why is this bad?
    AutoGraph turns a loop over a tensor, `tf.range` or a `tf.data.Dataset` (and a
    `while` on a tensor condition) into a `tf.while_loop`. Its body is traced once, so a
    Python list would receive one symbolic element, not one per iteration; TensorFlow
    refuses it ("... must be defined before the loop") or, worse, the result silently
    holds a single tensor. Loops over Python values (`range(3)`, a list literal) are
    unrolled and fine; they are not reported.

    ## Example
    ```python
    @tf.function
    def cumulative(xs):
        out = []
        for i in tf.range(tf.shape(xs)[0]):
            out.append(xs[i] * 2)
        return tf.stack(out)
    ```

    ## Use instead
    ```python
    @tf.function
    def cumulative(xs):
        out = tf.TensorArray(xs.dtype, size=tf.shape(xs)[0])
        for i in tf.range(tf.shape(xs)[0]):
            out = out.write(i, xs[i] * 2)
        return out.stack()
    ```

    ## Fix safety
    No automatic fix: a TensorArray needs a dtype, an index, and a rewrite of every
    later use of the list (`tf.stack(out)`, `len(out)`, `out[-1]`), which autosig
    cannot do safely from the source alone.
    """

    code = "AS104"
    name = "list-append-in-loop"
    summary = "Python list appended in a loop inside a tf.function"
    fix_safety = "none"
    # what a name or attribute is bound to, anywhere in the file
    skeleton_keeps = frozenset({Keep.SELF_SETTERS, Keep.GLOBAL_WRITERS})
    VALID = [
        # the same code outside a tf.function
        "import tensorflow as tf\ndef f(xs):\n    out = []\n"
        "    for x in xs:\n        out.append(x)\n    return out\n",
        # unrolled Python loops are fine
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    out = []\n"
        "    for i in range(3):\n        out.append(x * i)\n    return tf.stack(out)\n",
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    out = []\n"
        "    for w in [1, 2]:\n        out.append(x * w)\n    for k, w in enumerate((1, 2)):\n"
        "        out.append(x + k)\n    return tf.stack(out)\n",
        # range over a value captured from an untraced function unrolls
        "import tensorflow as tf\ndef train(meta):\n    @tf.function\n    def step(x):\n"
        "        mems = []\n        for _ in range(meta['n_layer']):\n"
        "            mems.append(x)\n        return mems\n    return step\n",
        # not in a loop
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    out = []\n"
        "    out.append(x)\n    return out\n",
    ]
    INVALID = [
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(xs):\n    out = []\n"
            "    for i in tf.range(tf.shape(xs)[0]):\n        out.append(xs[i])\n"
            "    return tf.stack(out)\n"
        ),
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(ds):\n    out = list()\n"
            "    for batch in ds:\n        if batch is not None:\n            out.append(batch)\n"
            "    return out\n"
        ),
        Invalid(
            "import tensorflow as tf\n@tf.function\ndef f(x):\n    out = []\n"
            "    while tf.reduce_sum(x) > 0:\n        x -= 1\n        out.append(x)\n"
            "    return out\n"
        ),
    ]

    def check(self, ctx: RuleContext) -> Iterable[Violation]:
        for site, call in ctx.iter_traced(cst.Call):
            func = call.func
            if not (
                isinstance(func, cst.Attribute)
                and func.attr.value == "append"
                and isinstance(func.value, cst.Name)
            ):
                continue
            loop = ctx.enclosing_loop(call)
            if loop is None or _python_loop(ctx, loop):
                continue
            if not _local_list(ctx, func.value):
                continue
            yield Violation(
                call,
                MESSAGE.format(name=func.value.value, function=site.site.qualname),
            )


def _python_loop(ctx: RuleContext, loop: cst.For | cst.While) -> bool:
    """Loops AutoGraph leaves in Python (so they unroll while tracing)."""
    if isinstance(loop, cst.For):
        return is_python_iterable(ctx, loop.iter)
    return False


def _local_list(ctx: RuleContext, name: cst.Name) -> bool:
    """``name`` is a list created by ``[]``/``list()`` in the function it is used in."""
    scope = ctx.get_metadata(ScopeProvider, name)
    if scope is None:
        return False
    assignments = [a for a in scope[name.value] if isinstance(a, Assignment)]
    if not assignments or any(a.scope is not scope for a in assignments):
        return False
    for assignment in assignments:
        assign = ctx.parent(ctx.parent(assignment.node))  # Name -> AssignTarget -> Assign
        if not isinstance(assign, cst.Assign):
            return False
        value = assign.value
        is_list = isinstance(value, (cst.List, cst.ListComp)) or (
            isinstance(value, cst.Call) and ctx.refers_to(value.func, "builtins.list")
        )
        if not is_list:
            return False
    return True

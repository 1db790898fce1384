"""Where a method's caller makes the instance a recorded call goes through
(``analysis/instance_bindings.py``): a seeding trace may follow that statement only when
nothing touches the instance between it and the call.

Valid/invalid pairs: the call of ``Dream.__call__`` (``dream(...)``) or ``Dream.step``
(``dream.step(...)``) marked by ``# <-`` in each source.
"""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from autosig.analysis.instance_bindings import (
    MAY_CHANGE,
    InstanceBinding,
    Refused,
    instance_binding,
)
from autosig.source.metadata import MetadataView, iter_tree


def binding_of(source: str, method: str = "__call__") -> InstanceBinding | str:
    view = MetadataView(MetadataWrapper(cst.parse_module(source)))
    marked = next(i for i, line in enumerate(source.splitlines(), 1) if "# <-" in line)
    calls = [
        n
        for n in iter_tree(view.module)
        if isinstance(n, cst.Call)
        and view.position(n)[0] == marked
        and view.code(n.func) in ("dream", "dream.step", "self.dream")
    ]
    return instance_binding(view, calls[0], method, "Dream")


VALID = [
    # golden 23: made in main(), other work in between, called in a loop
    (
        "import tensorflow as tf\n"
        "def main(mod, rng):\n"
        "    dream = mod.Dream(model(1))\n"
        "    base = rng.uniform(size=(4, 4, 3))\n"
        "    for call in range(3):\n"
        "        img = tf.image.resize(base, (call, call)).numpy()\n"
        "        loss, img = dream(img, 2, 0.1)  # <-\n"
        "        report(loss, img)\n"
        "    print(dream.__call__.experimental_get_tracing_count())\n"
        "def report(loss, img):\n"
        "    shown = [float(loss), img.shape]\n"
        "    print(*shown)\n",
        "__call__",
        3,
    ),
    # module-level script, the class by its own name
    ("dream = Dream()\nx = 1\ndream(x, 3)  # <-\n", "__call__", 1),
    # another method, the call right after the binding
    ("def f():\n    dream = Dream()\n    return dream.step(1, 2)  # <-\n", "step", 2),
    # objects made before it and handed to it, untouched until the call
    (
        "import numpy as np\ndef main(x):\n    features = feature_model(1)\n"
        "    dream = Dream(features, np.float32(0.5))\n    y = x + 1\n    dream(y)  # <-\n",
        "__call__",
        4,
    ),
    # after the call: a second instance of the class, a library-made layer called, a
    # method of a value the function made, a helper of the file that only reads
    (
        "import tensorflow as tf\n"
        "class Dream:\n    def __init__(self, m=None):\n        self.m = m\n"
        "def show(x):\n    print(float(x))\n"
        "def f(x, rng):\n    dream = Dream()\n    dream(x)  # <-\n"
        "    other = Dream(2)\n    other(x)\n    y = tf.keras.layers.Dense(2)(x)\n"
        "    z = rng.normal(size=3).astype('float32')\n    show(y)\n",
        "__call__",
        8,
    ),
    # made inside a loop, called in the same body
    (
        "def f(xs):\n    for x in xs:\n        dream = Dream()\n        dream(x)  # <-\n",
        "__call__",
        3,
    ),
]


@pytest.mark.parametrize("source, method, line", VALID)
def test_the_binding_of_the_instance_is_found(source: str, method: str, line: int) -> None:
    found = binding_of(source, method)
    assert isinstance(found, InstanceBinding), found
    assert (found.name, found.line, found.seeded) == ("dream", line, False)


INVALID = [
    # configured between the binding and the call: the seed would trace the old state
    (
        "def f(m):\n    dream = Dream()\n    dream.model = m\n    dream(1)  # <-\n",
        "line 3 uses `dream`",
    ),
    # passed on before the call: anything may happen to it
    (
        "def f():\n    dream = Dream()\n    setup(dream)\n    dream(1)  # <-\n",
        "line 3 calls `setup`",
    ),
    # used earlier in the call's own statement
    (
        "def f(xs):\n    dream = Dream()\n    for x in xs:\n        dream.reset()\n"
        "        dream(x)  # <-\n",
        "line 4 uses",
    ),
    # bound twice (a new instance may come from either)
    (
        "def f(a):\n    dream = Dream()\n    if a:\n        dream = Dream()\n    dream(1)  # <-\n",
        "bound 2 times",
    ),
    # a parameter: made by someone else
    ("def f(dream):\n    dream(1)  # <-\n", "not bound by a plain assignment"),
    # not a new instance of the class: a factory, a subclass
    ("def f():\n    dream = make_dream()\n    dream(1)  # <-\n", "not bound to a new `Dream(...)`"),
    ("def f():\n    dream = LoudDream()\n    dream(1)  # <-\n", "not bound to a new `Dream(...)`"),
    # an attribute holds it, not a name
    ("def f(self):\n    self.dream = Dream()\n    self.dream(1)  # <-\n", "does not go through"),
    # made in an outer function, called in a nested one
    (
        "def f():\n    dream = Dream()\n    def g():\n        return dream(1)  # <-\n    return g\n",
        "bound 0 times",
    ),
    # made in a branch, called after it
    ("def f(a):\n    if a:\n        dream = Dream()\n    dream(1)  # <-\n", "another block"),
    # global declared
    ("def f():\n    global dream\n    dream = Dream()\n    dream(1)  # <-\n", "global or nonlocal"),
    # review7 kact: an object handed to the constructor changed before the call
    (
        "def f(x):\n    features = feature_model(1)\n    dream = Dream(features)\n"
        "    features.layers[-1].activation = None\n    dream(x)  # <-\n",
        "line 4 uses `features`",
    ),
    # review7 cfgsched: a dict handed to it changed in the loop before the call
    (
        "def f(xs):\n    options = {'clip': 0.1}\n    dream = Dream(options)\n"
        "    for x in xs:\n        options['clip'] = 0.05\n        dream(x)  # <-\n",
        "line 5 uses `options`",
    ),
    # review7 lazyunseen: made from a parameter: another call makes another instance
    (
        "def run(x, channels):\n    dream = Dream(feature_model(1, channels))\n"
        "    dream(x)  # <-\n",
        "reads the parameter `channels`",
    ),
    (
        "def run(x, channels):\n    m = feature_model(channels)\n    dream = Dream(m)\n"
        "    dream(x)  # <-\n",
        "reads the parameter `channels`",
    ),
    ("def f(x):\n    dream = Dream(lambda v: v)\n    dream(x)  # <-\n", "a lambda"),
    # review8 kloop: a handed object changed later in the loop, after the first call
    (
        "def f(xs):\n    features = feature_model(1)\n    dream = Dream(features)\n"
        "    for i, x in enumerate(xs):\n        dream(x)  # <-\n"
        "        if i == 1:\n            features.layers[-1].activation = None\n",
        "line 7 uses `features`",
    ),
    # review8 gsoften: a helper of the file changes it through a module global
    (
        "FEATURES = make()\ndef soften():\n    FEATURES.layers[-1].activation = None\n"
        "def f(x):\n    dream = Dream(FEATURES)\n    soften()\n    dream(x)  # <-\n",
        "line 6 calls `soften`",
    ),
    # the instance handed on after the call
    (
        "def f(x):\n    dream = Dream()\n    dream(x)  # <-\n    keep(dream)\n",
        "line 4 calls `keep`",
    ),
    (
        "def f(x, y):\n    dream = Dream()\n    dream(x)  # <-\n    y.d = dream\n",
        "otherwise than calling",
    ),
    # a second instance whose __init__ changes another object
    (
        "REG = []\nclass Dream:\n    def __init__(self):\n        REG.append(self)\n"
        "        REG[0].x = 1\n"
        "def f(x):\n    dream = Dream()\n    dream(x)  # <-\n    other = Dream()\n",
        "line 9 calls `Dream`, which changes state",
    ),
    # two statements on the binding's line
    ("def f():\n    dream = Dream(); dream.x = 1\n    dream(1)  # <-\n", "shares its line"),
]


@pytest.mark.parametrize("source, why", INVALID)
def test_no_binding_a_seed_may_follow(source: str, why: str) -> None:
    found = binding_of(source)
    assert isinstance(found, Refused) and why in found.why, found
    # a refusal that shows the caller changing what the trace reads says so
    assert found.changes == found.why.endswith(MAY_CHANGE), found


def test_a_seed_written_by_an_earlier_run_is_recognised() -> None:
    source = (
        "def f(x):\n"
        "    dream = Dream()\n"
        "    try:  # autosig: guarded relaxed trace: other calls trace as before\n"
        "        dream.__call__.get_concrete_function(tf.TensorSpec([None], tf.float32))\n"
        "    except Exception:  # specs the code cannot trace: nothing seeded\n"
        "        pass\n"
        "    dream(x)  # <-\n"
    )
    found = binding_of(source)
    assert isinstance(found, InstanceBinding) and found.seeded, found


def test_modules_handed_to_the_constructor_are_not_watched() -> None:
    """``Dream(tf.constant(0.5))`` hands over no state of ``tf``: a later ``tf.`` call
    (the call site's own ``tf.constant``) is no change."""
    source = (
        "import tensorflow as tf\ndef f(x, n):\n    dream = Dream(tf.constant(0.5))\n"
        "    dream(x, tf.constant(n))  # <-\n"
    )
    found = binding_of(source)
    assert isinstance(found, InstanceBinding), found

"""AS106's per-instance cache: a tf.function a method creates on every call is kept on
the instance, safe only when nothing its trace reads can change between calls.

Every case runs the whole fix engine twice (skeleton fast path and whole file) and
checks what any fix must hold: both paths agree, the output parses, a second fix
changes nothing. ``tests/test_cache_per_instance_tf.py`` runs the rewrites with
TensorFlow.
"""

from __future__ import annotations

import ast

import pytest

from autosig.rewrite import engine
from autosig.rules.registry import select_rules
from autosig.rules.run import check_text

TF = "import tensorflow as tf\n"
INIT = "    def __init__(self, model):\n        self.model = model\n"


def _fix(text: str, *, unsafe: bool = True, codes: tuple[str, ...] = ("AS106",)):
    rules = select_rules(codes)
    fast = engine.fix_text(text, "m.py", plan=None, rules=rules, unsafe_fixes=unsafe)
    original = engine.marked_skeleton
    engine.marked_skeleton = lambda text, keep=None: None
    try:
        whole = engine.fix_text(text, "m.py", plan=None, rules=rules, unsafe_fixes=unsafe)
    finally:
        engine.marked_skeleton = original
    assert fast.new_text == whole.new_text
    ast.parse(fast.new_text)
    again = engine.fix_text(fast.new_text, "m.py", plan=None, rules=rules, unsafe_fixes=unsafe)
    assert again.new_text == fast.new_text
    return fast


def _safety(text: str) -> list[str]:
    return [fix.safety for fix in _fix(text).applied if fix.code == "AS106"]


def _message(text: str) -> str:
    (finding,) = [f for f in check_text(text, "m.py", select=["AS106"])]
    return finding.message


def _predictor(step_body: str, extra: str = "", init: str = INIT, bases: str = "") -> str:
    return (
        TF
        + f"class P{bases}:\n"
        + init
        + "    def predict(self, x):\n        @tf.function\n        def step(x):\n"
        + "".join(f"            {line}\n" for line in step_body.splitlines())
        + "        return step(x)\n"
        + extra
    )


def test_a_nested_def_is_cached_on_the_instance() -> None:
    text = _predictor("return self.model(x)")
    result = _fix(text, unsafe=False)
    assert [f.safety for f in result.applied] == ["safe"]
    assert result.new_text == TF + "class P:\n" + INIT + (
        "    def predict(self, x):\n"
        '        step = getattr(self, "_autosig_P_predict_step", None)\n'
        "        if step is None:\n"
        "            @tf.function\n"
        "            def step(x):\n"
        "                return self.model(x)\n"
        "            self._autosig_P_predict_step = step\n"
        "        return step(x)\n"
    )


def test_a_bound_method_called_at_once_gets_a_local_name() -> None:
    text = (
        TF + "class C:\n    def __init__(self, limit):\n        self.limit = limit\n"
        "    def _clip(self, x):\n        return tf.clip_by_value(x, -self.limit, self.limit)\n"
        "    def __call__(self, x):\n        return 2 * tf.function(self._clip)(x)  # per call\n"
    )
    result = _fix(text, unsafe=False)
    assert [f.safety for f in result.applied] == ["safe"]
    assert result.new_text.endswith(
        "    def __call__(self, x):\n"
        '        clip_fn = getattr(self, "_autosig_C_call_clip_fn", None)\n'
        "        if clip_fn is None:\n"
        "            clip_fn = tf.function(self._clip)\n"
        "            self._autosig_C_call_clip_fn = clip_fn\n"
        "        return 2 * clip_fn(x)  # per call\n"
    )


def test_decorator_arguments_comments_tabs_and_crlf_are_kept() -> None:
    text = (
        TF.replace("\n", "\r\n") + "class P:\r\n\tdef __init__(self, m):\r\n\t\tself.m = m\r\n\r\n"
        "\tdef predict(self, x):\r\n\t\t# one step per call\r\n"
        "\t\t@tf.function(jit_compile=True, reduce_retracing=True)\r\n"
        "\t\tdef step(x):\r\n\t\t\t# the model\r\n\t\t\treturn self.m(x)  # here\r\n\r\n"
        "\t\treturn step(x)\r\n"
    )
    result = _fix(text, unsafe=False)
    assert result.new_text.endswith(
        "\tdef predict(self, x):\r\n\t\t# one step per call\r\n"
        '\t\tstep = getattr(self, "_autosig_P_predict_step", None)\r\n'
        "\t\tif step is None:\r\n"
        "\t\t\t@tf.function(jit_compile=True, reduce_retracing=True)\r\n"
        "\t\t\tdef step(x):\r\n\t\t\t\t# the model\r\n\t\t\t\treturn self.m(x)  # here\r\n"
        "\t\t\tself._autosig_P_predict_step = step\r\n\r\n"
        "\t\treturn step(x)\r\n"
    )


def test_closed_over_locals_become_keyword_arguments_unsafely() -> None:
    text = (
        TF + "class P:\n" + INIT + "    def predict(self, x, scale, *rest):\n"
        "        shift = len(rest)\n"
        "        @tf.function\n        def step(x, **options):\n"
        "            return self.model(x) * scale + shift\n"
        "        a = step(x)\n        return step(a, flag=1)\n"
    )
    assert _fix(text, unsafe=False).new_text == text
    result = _fix(text)
    assert [f.safety for f in result.applied] == ["unsafe"]
    assert "def step(x, *, scale, shift, **options):" in result.new_text
    assert "a = step(x, scale=scale, shift=shift)" in result.new_text
    assert "return step(a, flag=1, scale=scale, shift=shift)" in result.new_text
    assert "passes `scale`, `shift` as keyword arguments" in _message(text)


def test_each_class_and_method_gets_its_own_attribute() -> None:
    method = (
        "    def {name}(self, x):\n        @tf.function\n        def step(x):\n"
        "            return x * self.k\n        return step(x)\n"
    )
    text = (
        TF
        + "class A:\n    def __init__(self):\n        self.k = 2\n"
        + method.format(name="predict")
        + method.format(name="score")
        + "class B(A):\n"
        + method.format(name="predict")
    )
    new = _fix(text).new_text
    for attribute in (
        "_autosig_A_predict_step",
        "_autosig_A_score_step",
        "_autosig_B_predict_step",
    ):
        assert new.count(f"self.{attribute} = step") == 1


# -- safe only when nothing the trace reads can change between calls ------------------------

UNSAFE = {
    "another method sets the attribute": (
        _predictor("return self.model(x)", "    def swap(self, m):\n        self.model = m\n"),
        "reads `self.model`, which line",
    ),
    "a module function sets it on another name": (
        _predictor("return self.model(x)", "def reset(p):\n    p.model = None\n"),
        "reads `self.model`, which line 11 changes",
    ),
    "another method mutates it in place": (
        _predictor(
            "return x * len(self.seen)",
            "    def add(self, v):\n        self.seen.append(v)\n",
            init="    def __init__(self):\n        self.seen = []\n",
        ),
        "reads `self.seen`",
    ),
    "an item of it is stored": (
        _predictor(
            "return x * self.cfg['k']",
            "    def tune(self):\n        self.cfg['k'] = 3\n",
            init="    def __init__(self):\n        self.cfg = {'k': 1}\n",
        ),
        "reads `self.cfg`",
    ),
    "setattr anywhere": (
        _predictor("return self.model(x)", "def poke(p):\n    setattr(p, 'other', 1)\n"),
        "sets attributes by name",
    ),
    "a helper method reads a changed attribute": (
        _predictor(
            "return self._apply(x)",
            "    def _apply(self, x):\n        return x * self.k\n"
            "    def bump(self):\n        self.k += 1\n",
            init="    def __init__(self):\n        self.k = 1\n",
        ),
        "reads `self.k`",
    ),
    "an attribute __init__ never sets": (
        _predictor("return x * self.k"),
        "`__init__` does not set",
    ),
    "self is handed on": (
        _predictor("return helper(self, x)", "def helper(p, x):\n    return x\n"),
        "hands `self` on",
    ),
    "a global rebound by a function": (
        _predictor(
            "return x * SCALE",
            "def tune():\n    global SCALE\n    SCALE = 3\n",
        ).replace("class P", "SCALE = 2\nclass P"),
        "bound more than once",
    ),
    "a global mutated by a function": (
        _predictor("return x * CFG['k']", "def tune():\n    CFG['k'] += 1\n").replace(
            "class P", "CFG = {'k': 1}\nclass P"
        ),
        "reads `CFG`, which this file changes",
    ),
    "a helper def reads a mutated global": (
        _predictor(
            "return scale(x)",
            "def scale(x):\n    return x * CFG['k']\ndef tune():\n    CFG['k'] += 1\n",
        ).replace("class P", "CFG = {'k': 1}\nclass P"),
        "reads `CFG`",
    ),
    "print": (_predictor("print('tracing')\nreturn self.model(x)"), "Python effects"),
    "Python random": (
        "import random\n" + _predictor("return self.model(x) * random.random()"),
        "Python effects",
    ),
    "a store on self": (_predictor("self.calls = 1\nreturn self.model(x)"), "Python effects"),
    "stateful TensorFlow random": (
        _predictor("return self.model(x) + tf.random.normal([])"),
        "stateful random numbers",
    ),
    "dropout": (_predictor("return tf.nn.dropout(self.model(x), 0.5)"), "stateful random"),
    "a variable per trace": (_predictor("v = tf.Variable(1.0)\nreturn x * v"), "`tf.Variable`"),
    "a Keras layer per trace": (
        _predictor("return tf.keras.layers.Dense(2)(x)"),
        "`tf.keras.layers.Dense`",
    ),
    "a base class": (_predictor("return self.model(x)", bases="(tf.Module)"), "derives from"),
    "a class decorator": (
        "import functools\n"
        + _predictor("return self.model(x)").replace(
            "class P", "@functools.total_ordering\nclass P"
        ),
        "class decorator",
    ),
    "the module imports copy": (
        "import copy\n" + _predictor("return self.model(x)"),
        "`import copy`",
    ),
    "the class pickles itself": (
        _predictor("return self.model(x)", "    def __getstate__(self):\n        return {}\n"),
        "`P.__getstate__`",
    ),
    "a default read from a changed attribute": (
        _predictor("return x * k", "    def tune(self):\n        self.k = 3\n").replace(
            "def step(x):", "def step(x, k=self.k):"
        ),
        "reads `self.k`",
    ),
    "another decorator on the nested def": (
        "import functools\n"
        + _predictor("return self.model(x)").replace(
            "        @tf.function\n", "        @tf.function\n        @functools.lru_cache\n"
        ),
        "another decorator",
    ),
}


@pytest.mark.parametrize("text, reason", UNSAFE.values(), ids=list(UNSAFE))
def test_unsafe_when_the_trace_may_see_something_else_on_a_later_call(
    text: str, reason: str
) -> None:
    assert _safety(text) == ["unsafe"]
    assert _fix(text, unsafe=False).new_text == text
    assert reason in _message(text)


SAFE = {
    "a class constant and a method reading it": _predictor(
        "return x * self._gain()",
        "    GAIN = 2.0\n    def _gain(self):\n        return self.GAIN\n",
    ),
    "a global constant, an import and a helper def": "import numpy as np\nLIMIT = 3.0\n"
    + _predictor(
        "return clip(x) * np.float32(2)",
        "def clip(x):\n    return tf.clip_by_value(x, -LIMIT, LIMIT)\n",
    ),
    "a variable's value changes (read when the graph runs)": _predictor(
        "return x * self.w",
        "    def train(self):\n        self.w.assign_add(1.0)\n",
        init="    def __init__(self):\n        self.w = tf.Variable(1.0)\n",
    ),
    "tf.print, a TensorArray, a stateless random draw": _predictor(
        "tf.print(x)\nta = tf.TensorArray(tf.float32, size=2)\n"
        "return x + tf.random.stateless_normal([], seed=[1, 2]) + ta.size()"
    ),
    "a dataclass": "import dataclasses\n"
    + _predictor("return x * self.k", init="    k: float = 1.0\n").replace(
        "class P", "@dataclasses.dataclass\nclass P"
    ),
    "object as its only base": _predictor("return self.model(x)", bases="(object)"),
}


@pytest.mark.parametrize("text", SAFE.values(), ids=list(SAFE))
def test_safe_when_nothing_read_changes(text: str) -> None:
    assert _safety(text) == ["safe"]


# -- no fix: the report stays -----------------------------------------------------------------

NOT_CACHED = {
    "a plain function (no instance)": TF
    + "def predict(model, x):\n    @tf.function\n    def step(x):\n        return model(x)\n"
    "    return step(x)\n",
    "a static method": _predictor("return x").replace(
        "    def predict(self, x)", "    @staticmethod\n    def predict(self, x)"
    ),
    "an async method": _predictor("return x").replace("    def predict", "    async def predict"),
    "__slots__": _predictor("return x", "    __slots__ = ('model',)\n"),
    "__getattr__": _predictor("return x", "    def __getattr__(self, name):\n        return 1\n"),
    "__setattr__": _predictor(
        "return x", "    def __setattr__(self, name, v):\n        raise TypeError\n"
    ),
    "a frozen dataclass": "import dataclasses\n"
    + _predictor("return x", init="    k: int = 1\n").replace(
        "class P", "@dataclasses.dataclass(frozen=True)\nclass P"
    ),
    "a slotted dataclass": "import dataclasses\n"
    + _predictor("return x", init="    k: int = 1\n").replace(
        "class P", "@dataclasses.dataclass(slots=True)\nclass P"
    ),
    "a default read from a parameter": TF
    + "class P:\n    def predict(self, x, k):\n        @tf.function\n"
    "        def step(x, k=k):\n            return x * k\n        return step(x)\n",
    "a default computed by a call": TF
    + "class P:\n    def predict(self, x):\n        @tf.function\n"
    "        def step(x, k=len([])):\n            return x * k\n        return step(x)\n",
    "nonlocal in the nested def": TF
    + "class P:\n    def predict(self, x):\n        n = 0\n        @tf.function\n"
    "        def step(x):\n            nonlocal n\n            n = 1\n            return x\n"
    "        return step(x)\n",
    "an option read from a parameter": TF
    + "class P:\n    def _s(self, x):\n        return x\n    def predict(self, x, xla):\n"
    "        return tf.function(self._s, jit_compile=xla)(x)\n",
    "a parameter wrapped": TF
    + "class P:\n    def predict(self, fn, x):\n        return tf.function(fn)(x)\n",
    "a lambda reading a local": TF
    + "class P:\n    def predict(self, x, k):\n        f = tf.function(lambda t: t * k)\n"
    "        return f(x)\n",
    "created under an if": TF
    + "class P:\n    def predict(self, x, fast):\n        if fast:\n            @tf.function\n"
    "            def step(x):\n                return x\n            return step(x)\n"
    "        return x\n",
    "called at once inside a conditional expression": TF
    + "class P:\n    def _s(self, x):\n        return x\n    def predict(self, x, fast):\n"
    "        return tf.function(self._s)(x) if fast else x\n",
    "self rebound": TF
    + "class P:\n    def predict(self, x):\n        self = P()\n        @tf.function\n"
    "        def step(x):\n            return x\n        return step(x)\n",
    "**kwargs at a call with closed locals": TF
    + "class P:\n    def predict(self, x, k, **kw):\n        @tf.function\n"
    "        def step(x, **o):\n            return x * k\n        return step(x, **kw)\n",
}


@pytest.mark.parametrize("text", NOT_CACHED.values(), ids=list(NOT_CACHED))
def test_no_cache_where_it_could_not_keep_the_program(text: str) -> None:
    assert _fix(text).new_text == text


def test_a_function_stored_on_self_every_call_is_reported_not_fixed() -> None:
    text = (
        TF + "class P:\n    def _s(self, x):\n        return x\n    def predict(self, x):\n"
        "        self.fn = tf.function(self._s)\n        return self.fn(x)\n"
    )
    assert [f.code for f in check_text(text, "m.py", select=["AS106"])] == ["AS106"]
    assert _fix(text).new_text == text
    cached = text.replace(
        "        self.fn = tf.function(self._s)\n",
        "        if self.fn is None:\n            self.fn = tf.function(self._s)\n",
    )
    assert check_text(cached, "m.py", select=["AS106"]) == []


def test_the_skeleton_keeps_what_changes_the_attributes() -> None:
    """``check`` parses a cut-down file: a function far away that sets the attribute
    must still be seen (else the fast path would call the fix safe)."""
    filler = "".join(f"def unrelated_{i}(a):\n    return a + {i}\n" for i in range(30))
    text = _predictor("return self.model(x)", filler + "def main(p):\n    p.model.trainable = 0\n")
    assert _safety(text) == ["unsafe"]
    assert "reads `self.model`" in _message(text)

"""AS106's hoist: moves a creation out of its loops only when that keeps the program.

Every case runs the whole fix engine twice (skeleton fast path and whole file) and
checks what any fix must hold: both paths agree, the output parses, a second fix
changes nothing.
"""

from __future__ import annotations

import ast

import pytest

from autosig.rewrite import engine
from autosig.rules.registry import select_rules

TF = "import tensorflow as tf\n"
A = "def a(x):\n    return x\n"


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


def _hoists(text: str, *, unsafe: bool = True) -> list[str]:
    return [fix.safety for fix in _fix(text, unsafe=unsafe).applied if fix.code == "AS106"]


# -- no fix: the moved creation would compute something else --------------------------

NOT_MOVED = {
    "the wrapped def reads the loop variable": TF
    + "def run(data, scales):\n    def step(x):\n        return x * s\n"
    "    for s in scales:\n        f = tf.function(step)\n        f(data)\n",
    "a def the wrapped def calls reads what the loop binds": TF
    + "def helper(x):\n    return x * SCALE\ndef step(x):\n    return helper(x)\n"
    "for SCALE in (1, 2):\n    f = tf.function(step)\n    f(3)\n",
    "the loop deletes the new function": TF
    + A
    + "def run(data):\n    for x in data:\n        f = tf.function(a)\n        f(x)\n        del f\n",
    "the loop deletes what the creation reads": TF
    + A
    + "def run(data):\n    step = a\n    for x in data:\n        f = tf.function(step)\n"
    "        f(x)\n        del step\n",
    "a match capture rebinds what the creation reads": TF
    + A
    + "def run(data):\n    step = a\n    for x in data:\n        match x:\n"
    "            case [step]:\n                pass\n        f = tf.function(step)\n"
    "        f(x)\n",
    "another function rebinds what the creation reads (global)": TF
    + A
    + "step = a\ndef swap():\n    global step\n    step = None\n"
    "for x in range(3):\n    f = tf.function(step)\n    f(x)\n    swap()\n",
    "another function rebinds what the creation reads (nonlocal)": TF
    + A
    + "def run(data, b):\n    step = a\n    def swap():\n        nonlocal step\n"
    "        step = b\n    for x in data:\n        f = tf.function(step)\n        f(x)\n"
    "        swap()\n",
    "another function rebinds the new function's name": TF
    + A
    + "def reset():\n    global f\n    f = None\n"
    "for x in range(3):\n    f = tf.function(a)\n    f(x)\n    reset()\n",
    "the loop stores the attribute the creation reads": TF
    + "class C:\n    def run(self, data):\n        for x in data:\n"
    "            f = tf.function(self.fn)\n            f(x)\n            self.fn = self.other\n",
    "the loop stores an attribute the wrapped def reads": TF
    + "class Cfg:\n    scale = 1\ncfg = Cfg()\ndef step(x):\n    return x * cfg.scale\n"
    "def run(data):\n    for s in data:\n        cfg.scale = s\n        f = tf.function(step)\n"
    "        f(s)\n",
    "the name had a value before a loop that may not run": TF
    + A
    + "def b(x):\n    return -x\ndef run(warm, y):\n    f = tf.function(a)\n"
    "    for x in warm:\n        f = tf.function(b)\n        f(x)\n    return f(y)\n",
    "the loop target writes through the new function": TF
    + A
    + "def run(data):\n    for f.seen in data:\n        f = tf.function(a)\n        f(1)\n",
}


@pytest.mark.parametrize("text", NOT_MOVED.values(), ids=NOT_MOVED.keys())
def test_no_hoist_when_the_loop_changes_what_the_creation_means(text: str) -> None:
    result = _fix(text, unsafe=True)
    assert not result.changed
    assert any(f.code == "AS106" for f in result.findings)


# -- unsafe: the trace may read state that changes ------------------------------------

UNSAFE = {
    "python random at trace time": TF
    + "import random\ndef step(x):\n    return x + random.random()\n"
    "def run(data):\n    for x in data:\n        f = tf.function(step)\n        f(x)\n",
    "numpy random in a def it calls": TF
    + "import numpy as np\ndef noise():\n    return np.random.rand()\n"
    "def step(x):\n    return x + noise()\n"
    "def run(data):\n    for x in data:\n        f = tf.function(step)\n        f(x)\n",
    "a print runs once instead of on every iteration": TF
    + "def step(x):\n    print('step')\n    return x\n"
    "def run(data):\n    for x in data:\n        f = tf.function(step)\n        f(x)\n",
    "the wrapped def appends to a list": TF
    + "seen = []\ndef step(x):\n    seen.append(x)\n    return x\n"
    "def run(data):\n    for x in data:\n        f = tf.function(step)\n        f(x)\n",
    "the wrapped def is decorated (the name may be any object)": TF
    + "import functools\n@functools.lru_cache\ndef step(x):\n    return x\n"
    "def run(data):\n    for x in data:\n        f = tf.function(step)\n        f(x)\n",
    "the loop passes what the wrapped def reads to a call": TF
    + "def run(cfg, data, update):\n    def step(x):\n        return x * cfg.scale\n"
    "    for x in data:\n        f = tf.function(step)\n        f(x)\n        update(cfg)\n",
    "the loop calls a method of what the wrapped def reads": TF
    + "def run(model, data):\n    def step(x):\n        return model(x)\n"
    "    for x in data:\n        f = tf.function(step)\n        f(x)\n        model.reset_states()\n",
}


UNSAFE["a helper the loop calls changes what the trace reads"] = (
    TF + 'CONFIG = {"scale": 1}\ndef g(t):\n    return t * CONFIG["scale"]\n'
    'def bump():\n    CONFIG["scale"] += 1\ndef train(data):\n    for b in data:\n'
    "        f = tf.function(g)\n        print(f(b))\n        bump()\n"
)


@pytest.mark.parametrize("text", UNSAFE.values(), ids=UNSAFE.keys())
def test_unsafe_when_the_trace_may_read_changing_state(text: str) -> None:
    assert _hoists(text, unsafe=True) == ["unsafe"]
    assert not _fix(text, unsafe=False).changed


# -- safe hoists ------------------------------------------------------------------------


def test_lambda_parameters_do_not_stop_the_hoist() -> None:
    text = TF + "def run(data):\n    for x in data:\n        f = tf.function(lambda y: y * 2)\n"
    text += "        f(x)\n"
    result = _fix(text, unsafe=False)
    assert result.new_text == (
        TF + "def run(data):\n    f = tf.function(lambda y: y * 2)\n    for x in data:\n"
        "        f(x)\n"
    )


def test_a_later_binding_after_the_loop_does_not_stop_the_hoist() -> None:
    text = TF + A + "for x in range(2):\n    f = tf.function(a)\n    f(x)\nf = None\n"
    assert _hoists(text, unsafe=False) == ["safe"]


def test_many_creations_in_one_loop_settle_in_one_pass() -> None:
    body = "".join(f"        f{i} = tf.function(a)\n" for i in range(5))
    text = TF + A + "def run(data):\n    for x in data:\n" + body + "        f0(x)\n"
    result = _fix(text, unsafe=False)
    assert result.new_text == (
        TF + A + "def run(data):\n" + body.replace("        f", "    f") + "    for x in data:\n"
        "        f0(x)\n"
    )
    assert [f.safety for f in result.applied] == ["safe"] * 5


def test_creations_leaving_nested_loops_to_different_places() -> None:
    text = (
        TF + A + "def run(make, data):\n    for size in (1, 2):\n        model = make(size)\n"
        "        for x in data:\n            g = tf.function(a)\n"
        "            f = tf.function(model, reduce_retracing=True)\n            f(x)\n"
        "            h = tf.function(a)\n            g(h(x))\n"
    )
    result = _fix(text, unsafe=True)
    assert result.new_text == (
        TF + A + "def run(make, data):\n    g = tf.function(a)\n    h = tf.function(a)\n"
        "    for size in (1, 2):\n        model = make(size)\n"
        "        f = tf.function(model, reduce_retracing=True)\n        for x in data:\n"
        "            f(x)\n            g(h(x))\n"
    )
    # one edit moves them all, so it is as unsafe as its least safe move
    assert [f.safety for f in result.applied] == ["unsafe"] * 3
    assert not _fix(text, unsafe=False).changed


def test_a_loop_of_nothing_but_creations_is_left_alone() -> None:
    text = TF + A + "for x in range(2):\n    f = tf.function(a)\n    g = tf.function(a)\n"
    assert not _fix(text).changed


def test_comments_blank_lines_tabs_and_crlf_are_kept() -> None:
    text = (
        TF + A + "def run(data):\r\n\tout = []\r\n\r\n\t# epochs\r\n\tfor e in range(2):\r\n"
        "\t\tfor x in data:\r\n\t\t\t# the step\r\n"
        "\t\t\tstep = tf.function(a)  # per batch\r\n\r\n\t\t\tout.append(step(x))\r\n"
        "\t\telse:\r\n\t\t\tpass\r\n\treturn out\r\n"
    )
    result = _fix(text, unsafe=False)
    assert result.new_text == (
        TF + A + "def run(data):\r\n\tout = []\r\n\r\n\t# epochs\r\n\t# the step\r\n"
        "\tstep = tf.function(a)  # per batch\r\n\tfor e in range(2):\r\n"
        "\t\tfor x in data:\r\n\r\n\t\t\tout.append(step(x))\r\n"
        "\t\telse:\r\n\t\t\tpass\r\n\treturn out\r\n"
    )


def test_with_the_other_rules_the_fix_still_settles() -> None:
    text = (
        TF + "def step(x):\n    print(x)\n    return x\n"
        "def run(data):\n    for x in data:\n        f = tf.function(step)\n"
        "        g = tf.function(step)\n        h = tf.function(lambda y: y)\n"
        "        f(g(h(x)))\n"
    )
    result = _fix(text, unsafe=False, codes=("AS101", "AS106", "AS107"))
    assert "tf.print(x)" in result.new_text
    assert "    for x in data:\n        f(g(h(x)))\n" in result.new_text


@pytest.mark.parametrize("comment", ["# autosig: ignore[AS106]", "# autosig: ignore"])
def test_a_suppressed_creation_is_not_moved_with_its_neighbours(comment: str) -> None:
    text = (
        TF + A + f"def run(data):\n    for x in data:\n        f = tf.function(a)  {comment}\n"
        "        g = tf.function(a)\n        f(g(x))\n"
    )
    assert _fix(text).new_text == (
        TF + A + "def run(data):\n    g = tf.function(a)\n    for x in data:\n"
        f"        f = tf.function(a)  {comment}\n        f(g(x))\n"
    )


SETTLE = {
    "a safe and an unsafe creation": TF
    + A
    + "def run(model, data):\n    for x in data:\n        f = tf.function(a)\n"
    "        g = tf.function(model)\n        f(g(x))\n",
    "a print fixed first, then safe": TF
    + A
    + "def p(x):\n    print(x)\n    return x\ndef run(model, data):\n    for x in data:\n"
    "        f = tf.function(a)\n        g = tf.function(model)\n        h = tf.function(p)\n"
    "        f(g(h(x)))\n",
    "a creation wrapping the one before": TF
    + A
    + "def run(data):\n    for x in data:\n        f = tf.function(a)\n"
    "        g = tf.function(f)\n        g(x)\n",
    "a lambda calling the one before": TF
    + A
    + "def run(data):\n    for x in data:\n        f = tf.function(a)\n"
    "        g = tf.function(lambda y: f(y) + 1)\n        g(x)\n",
}


@pytest.mark.parametrize("unsafe", [False, True])
@pytest.mark.parametrize("text", SETTLE.values(), ids=SETTLE.keys())
def test_with_every_rule_the_fix_settles_in_the_engines_passes(text: str, unsafe: bool) -> None:
    result = _fix(text, unsafe=unsafe, codes=("AS101", "AS102", "AS103", "AS106", "AS107"))
    if unsafe:  # every creation moved
        assert "tf.function" not in result.new_text.split("for x in data:")[1]
        assert "tf.function(a, reduce_retracing=True)\n" in result.new_text


def test_a_creation_reading_the_previous_iterations_value_stays() -> None:
    text = TF + A + "def run(data):\n    f = a\n    for x in data:\n        g = tf.function(f)\n"
    text += "        f = tf.function(a)\n        g(x)\n"
    assert not _fix(text).changed


# -- behaviour: run programs before and after a safe fix ---------------------------------
#
# A fake tf.function "traces" on its first call (runs the Python function once, on 1)
# and then replays that slope, so Python state read while tracing is frozen as in
# TensorFlow. A safe hoist must leave every call's result unchanged.

PROGRAM_HEAD = (
    "import tensorflow as tf\nimport random as rnd\nclass C:\n    k = 1\nCFG = C()\nscale = 2\n"
    "def a(x):\n    return x\ndef b(x):\n    return rnd.random() * x\n"
    "def c(x):\n    return x * CFG.k\ndef d(x):\n    return a(x) * scale\n"
    "def bump():\n    CFG.k += 1\ndef log(x):\n    return x\n"
)
CREATIONS = {
    "f": "tf.function(a)",
    "g": "tf.function(b)",
    "h": "tf.function(lambda y: y * scale)",
    "k": "tf.function(model)",
    "p": "tf.function(c)",
    "q": "tf.function(jit_compile=True)(d)",
    "r": "tf.function(lambda y: model(y))",
}
MUTATIONS = ["CFG.k = x", "model.reset()", "model = make(x)", "CFG.k += 1", "bump()", "log(x)"]


def _program(seed: int) -> str:
    import random

    rng = random.Random(seed)
    names = rng.sample(sorted(CREATIONS), rng.randint(1, 3))
    pending = [[f"{n} = {CREATIONS[n]}", f"{n}(x)"] for n in names]
    pending += [[m] for m in rng.sample(MUTATIONS, rng.randint(0, 2))]
    body = []
    while any(pending):
        body.append(rng.choice([p for p in pending if p]).pop(0))
    lines = ["def run(data, model, make):"]
    indent = "        "
    if rng.random() < 0.5:
        outer = rng.sample(MUTATIONS, rng.randint(0, 1))  # before the inner loop
        lines += ["    for e in range(2):", *("        " + m.replace("x", "e") for m in outer)]
        lines.append("        for x in data:")
        indent = "            "
    else:
        lines.append("    for x in data:")
    return PROGRAM_HEAD + "\n".join([*lines, *(indent + s for s in body)]) + "\n"


def _run(text: str) -> list[float]:
    import random
    import sys
    import types

    calls: list[float] = []

    class Traced:
        def __init__(self, fn):
            self.fn, self.slope = fn, None

        def __call__(self, x):
            if self.slope is None:
                self.slope = self.fn(1)
            calls.append(self.slope * x)
            return calls[-1]

    class Model:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            return self.k * x

        def reset(self):
            self.k += 1

    fake = types.ModuleType("tensorflow")
    fake.function = lambda fn=None, **kw: Traced(fn) if fn is not None else Traced  # type: ignore[attr-defined]
    random.seed(0)
    real = sys.modules.get("tensorflow")
    sys.modules["tensorflow"] = fake
    try:
        namespace: dict = {}
        exec(compile(text, "m.py", "exec"), namespace)
        namespace["run"]([1, 2, 3], Model(2), Model)
    finally:
        if real is not None:
            sys.modules["tensorflow"] = real
        else:
            del sys.modules["tensorflow"]
    return calls


def test_safe_hoists_keep_what_every_call_returns() -> None:
    rules = select_rules(("AS106", "AS107"))
    hoisted = 0
    for seed in range(60):
        text = _program(seed)
        result = engine.fix_text(text, "m.py", plan=None, rules=rules, unsafe_fixes=False)
        if any(f.code == "AS106" for f in result.applied):
            hoisted += 1
            assert _run(result.new_text) == _run(text), f"seed {seed}:\n{text}"
    assert hoisted >= 10

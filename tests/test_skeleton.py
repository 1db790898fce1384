"""The skeleton keeps line numbers and everything static rules report on."""

from __future__ import annotations

import textwrap

import pytest

from autosig.rules.run import check_text
from autosig.source.skeleton import marked_skeleton, skeleton

SOURCE = textwrap.dedent(
    """\
    import random
    import tensorflow as tf

    counter = 0


    def helper(x):
        print("not traced")
        return x


    class Big:
        scale = 2

        def __init__(self):
            self.n = 0

        def unrelated(self):
            print("not traced either")

        @tf.function
        def step(self, x):
            print("traced", x)
            self.n += 1
            return x * random.random()


    def slow(x):\r
        print(x)\r
        return x


    fast = tf.function(slow)
    """
)


def test_line_numbers_are_kept_and_unrelated_code_blanked() -> None:
    cut = skeleton(SOURCE)
    assert cut.count("\n") == SOURCE.count("\n")
    assert 'print("not traced")' not in cut
    assert "def slow" in cut  # target of the call form
    assert "self.n = 0" in cut  # __init__ of a kept class
    assert "\r\n" in cut  # line endings of kept lines untouched


def test_findings_are_identical_on_the_skeleton() -> None:
    from autosig.rules.context import RuleContext
    from autosig.rules.registry import select_rules
    from autosig.rules.run import check_context, violation_to_finding

    ctx = RuleContext.from_text(SOURCE, "m.py")
    full = [violation_to_finding(ctx, r, v) for r, v in check_context(ctx, select_rules())]
    assert full and check_text(SOURCE, "m.py") == full


def test_unparsable_or_irrelevant_text_is_returned_whole() -> None:
    assert skeleton("def f(:\n") == "def f(:\n"
    plain = "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    return x\n"
    assert skeleton(plain) == plain


# -- the marked skeleton static fix parses -------------------------------------------


def _fix(text: str, *, whole: bool, monkeypatch=None, unsafe: bool = True):
    from autosig.rewrite import engine
    from autosig.rules.registry import select_rules

    if whole:
        monkeypatch.setattr(engine, "marked_skeleton", lambda text, keep=None: None)
    result = engine.fix_text(text, "m.py", plan=None, rules=select_rules(), unsafe_fixes=unsafe)
    if whole:
        monkeypatch.undo()
    return result


def test_marked_skeleton_restores_every_cut_line() -> None:
    cut = marked_skeleton(SOURCE)
    assert cut is not None
    assert cut.text.count("\n") == SOURCE.count("\n")
    assert 'print("not traced")' not in cut.text
    assert cut.restore(cut.text) == SOURCE


def test_restore_refuses_a_lost_or_repeated_marker() -> None:
    cut = marked_skeleton(SOURCE)
    assert cut is not None
    lines = cut.text.splitlines(keepends=True)
    marked = [i for i, line in enumerate(lines) if cut.marker in line]
    lost = "".join(line for i, line in enumerate(lines) if i != marked[0])
    repeated = "".join(lines[: marked[0]] + [lines[marked[0]]] + lines[marked[0] :])
    in_code = cut.text.replace("counter = 0", f"counter = '{cut.marker}'")
    assert cut.restore(lost) is None
    assert cut.restore(repeated) is None
    assert cut.restore(in_code) is None


def test_fix_on_the_skeleton_equals_fix_of_the_whole_file(monkeypatch) -> None:
    fast = _fix(SOURCE, whole=False)
    whole = _fix(SOURCE, whole=True, monkeypatch=monkeypatch)
    assert fast.changed and fast.new_text == whole.new_text
    assert 'print("not traced")' in fast.new_text and "\r\n" in fast.new_text
    assert [(f.code, f.line) for f in fast.applied] == [(f.code, f.line) for f in whole.applied]
    assert [(f.code, f.line) for f in fast.findings] == [(f.code, f.line) for f in whole.findings]


def test_fix_falls_back_to_the_whole_file_when_markers_cannot_be_put_back(monkeypatch) -> None:
    from autosig.source.skeleton import MarkedSkeleton

    monkeypatch.setattr(MarkedSkeleton, "restore", lambda self, fixed: None)
    fast = _fix(SOURCE, whole=False)
    monkeypatch.undo()
    assert fast.new_text == _fix(SOURCE, whole=True, monkeypatch=monkeypatch).new_text


HOIST_AFTER_CUT_DEF = (
    "import tensorflow as tf\n\n\ndef step(x):\n    return x\n\n\n"
    "def helper(x):\r\n    return x + 1\r\n"
    "for x in range(3):\n    fast = tf.function(step)\n    fast(x)\n"
)


def test_a_hoist_next_to_a_cut_def_lands_where_the_whole_file_puts_it(monkeypatch) -> None:
    cut = marked_skeleton(HOIST_AFTER_CUT_DEF)
    assert cut is not None and sorted(cut.cut) == [8, 9]  # helper, cut whole
    fast = _fix(HOIST_AFTER_CUT_DEF, whole=False)
    whole = _fix(HOIST_AFTER_CUT_DEF, whole=True, monkeypatch=monkeypatch)
    assert fast.new_text == whole.new_text
    assert "    return x + 1\r\nfast = tf.function(step, reduce_retracing=True)\nfor x" in (
        fast.new_text
    )


# Python numbers lines at \n, \r\n and \r only; str.splitlines also splits at these.
ODD_LINE_BREAKS = ["\x0c", "\x0b", "\x1c", "\x85", "\u2028"]


def test_characters_python_keeps_inside_a_line_do_not_shift_the_cut(monkeypatch) -> None:
    from autosig.rules.context import RuleContext
    from autosig.rules.registry import select_rules
    from autosig.rules.run import check_context, violation_to_finding

    for odd in ODD_LINE_BREAKS:
        text = (
            f"import tensorflow as tf\n# a{odd}b\nS = 'x{odd}y'\n@tf.function\ndef f(x):\n"
            "    y = x\n    print(x)\ndef g(x):\n    return x\n"
        )
        ctx = RuleContext.from_text(text, "m.py")
        full = [violation_to_finding(ctx, r, v) for r, v in check_context(ctx, select_rules())]
        assert check_text(text, "m.py") == full, repr(odd)
        fast = _fix(text, whole=False)
        assert "tf.print(x)" in fast.new_text, repr(odd)
        assert fast.new_text == _fix(text, whole=True, monkeypatch=monkeypatch).new_text


def test_defs_a_hoist_reads_are_kept(monkeypatch) -> None:
    text = (
        "import tensorflow as tf\nimport random\n\ndef noise():\n    return random.random()\n\n"
        "def step(x):\n    return x + noise()\n\ndef swap():\n    global step\n    step = None\n\n"
        "def unrelated():\n    return 1\n\n"
        "for x in range(3):\n    f = tf.function(lambda y: step(y))\n    f(x)\n"
    )
    cut = marked_skeleton(text)
    assert cut is not None
    assert "return random.random()" in cut.text and "step = None" in cut.text
    assert "return 1" not in cut.text
    fast = _fix(text, whole=False, unsafe=True)
    assert fast.new_text == _fix(text, whole=True, monkeypatch=monkeypatch).new_text


WRAPPED_METHODS = {
    "options holding parentheses": "tf.function(input_signature=(tf.TensorSpec(None),))(self.step)",
    "func= keyword": "tf.function(func=self.step)",
}


@pytest.mark.parametrize("creation", WRAPPED_METHODS.values(), ids=WRAPPED_METHODS.keys())
def test_a_method_wrapped_by_a_call_form_is_kept(creation: str, monkeypatch) -> None:
    text = (
        "import tensorflow as tf\nclass M:\n    def __init__(self):\n"
        f"        self.fn = {creation}\n    def step(self, x):\n        print(x)\n"
        "        return x\n"
    )
    assert "        print(x)\n" in skeleton(text)
    fast = _fix(text, whole=False)
    assert "tf.print(x)" in fast.new_text
    assert fast.new_text == _fix(text, whole=True, monkeypatch=monkeypatch).new_text


def test_a_def_rebinding_a_global_is_kept(monkeypatch) -> None:
    # reset() makes the counter an int again: AS103 must not turn it into a tf.Variable
    text = (
        "import tensorflow as tf\ncounter = 0\n@tf.function\ndef f(x):\n    global counter\n"
        "    counter += 1\n    return x\ndef reset():\n    global counter\n    counter = 0\n"
    )
    assert skeleton(text) == text
    fast = _fix(text, whole=False, unsafe=True)
    assert "tf.Variable" not in fast.new_text
    assert fast.new_text == _fix(text, whole=True, monkeypatch=monkeypatch, unsafe=True).new_text


def test_only_cut_defs_the_kept_code_names_get_a_stub() -> None:
    text = (
        "import tensorflow as tf\ndef used():\n    return 1\ndef unused():\n    return 2\n"
        "@tf.function\ndef f(x):\n    return x, used\n"  # named, not called
    )
    cut = marked_skeleton(text)
    assert cut is not None and sorted(cut.cut) == [2, 3, 4, 5]
    assert "def used(*args, **kwargs): ..." in cut.text and "def unused" not in cut.text
    assert cut.restore(cut.text) == text


def test_defs_a_traced_function_calls_are_kept() -> None:
    """The shape-use analysis follows a traced function into the helpers it calls."""
    text = (
        "import tensorflow as tf\ndef steps(seq):\n    return range(seq.shape[1])\n"
        "def unused():\n    return 2\nclass M:\n    def _h(self, t):\n        return t\n"
        "    def other(self):\n        return 3\n    @tf.function\n    def step(self, x):\n"
        "        return self._h(x), steps(x)\n"
    )
    kept = skeleton(text)
    assert "seq.shape[1]" in kept and "return t\n" in kept
    assert "return 2" not in kept and "return 3" not in kept


def test_classes_the_traced_code_reaches_through_instances_are_kept() -> None:
    """A project layer in a module-level ``keras.Sequential``, a loss object, a class
    attribute, an attribute bound in ``__init__`` and a base class: the shape-use
    analysis follows calls of their instances into the class, so none is cut."""
    text = (
        "import keras\nimport tensorflow as tf\n"
        "class Patches(keras.layers.Layer):\n    def call(self, x):\n        return x.shape[0]\n"
        "class Loss:\n    def __call__(self, a):\n        return a.shape[1]\n"
        "class Actor(keras.Model):\n    def call(self, s):\n        return s.shape[0]\n"
        "class Base:\n    def helper(self, x):\n        return x.shape[2]\n"
        "class Unused:\n    def call(self, x):\n        return 0\n"
        "model = keras.Sequential([Patches()])\nloss = Loss()\n"
        "class Agent(Base):\n    scale = Loss()\n    def __init__(self):\n        self.actor = Actor()\n"
        "    @tf.function\n    def act(self, s):\n        return self.actor(s), model(s), loss(s)\n"
        "if __name__ == '__main__':\n    Unused()\n"
    )
    kept = skeleton(text)
    for read in ("x.shape[0]", "a.shape[1]", "s.shape[0]", "x.shape[2]"):
        assert read in kept
    assert "return 0" not in kept


def test_check_sees_names_bound_by_cut_defs() -> None:
    from autosig.rules.context import RuleContext
    from autosig.rules.registry import select_rules
    from autosig.rules.run import check_context, violation_to_finding

    # f is bound before the loop by a cut def: no hoist, so nothing for AS107 either
    # (the loop does not call f: defs a creating loop calls are kept, not cut)
    text = (
        "import tensorflow as tf\ndef a(x):\n    return x\ndef f():\n    return 1\n"
        "for x in range(3):\n    f = tf.function(a)\n    print(f)\n"
    )
    assert "return 1" not in skeleton(text)
    ctx = RuleContext.from_text(text, "m.py")
    full = [violation_to_finding(ctx, r, v) for r, v in check_context(ctx, select_rules())]
    assert check_text(text, "m.py") == full
    assert [(f.code, f.fixable) for f in full] == [("AS106", False)]


@pytest.mark.parametrize(
    "store",
    ["self.steps: int = 0", "(self.steps) = 0", "self.steps, self.other = 0, None"],
)
def test_methods_storing_a_used_attribute_in_any_form_are_kept(store: str) -> None:
    text = (
        "import tensorflow as tf\nclass T(tf.Module):\n    def __init__(self):\n"
        "        self.steps = 0\n    @tf.function\n    def step(self, x):\n"
        f"        self.steps += 1\n        return x\n    def reset(self):\n        {store}\n"
    )
    assert store in skeleton(text)


# -- rules declare what the skeleton keeps (issue 23) --------------------------------------

WRITES_ELSEWHERE = textwrap.dedent(
    """\
    import tensorflow as tf

    LIMIT = []
    TABLE = {}


    def reset():
        global LIMIT
        LIMIT = tf.zeros([3])


    def grow(items):
        TABLE["k"] = 1
        items.append(1)


    def helper(x):
        return x.shape[0]


    class Model:
        def __init__(self):
            self.items = []
            self.scale = 2

        def configure(self):
            self.scale = 3

        def other(self, y):
            return y

        def predict(self, x):
            step = tf.function(lambda x: x * self.scale)
            return step(x)

        @tf.function
        def train(self, x):
            self.items.append(x)
            for i in range(helper(x)):
                LIMIT.append(i)
            print(self.other(x))
            return x


    def loop(data):
        for x in data:
            fn = tf.function(grow)
            fn(x)
    """
)


CLASSES = textwrap.dedent(
    """\
    import tensorflow as tf

    REGISTRY = {}


    class Layer(tf.Module):
        def __init__(self, units):
            self.units = units
            self.cache = []

        def build(self, shape):
            self.kernel = tf.Variable(tf.zeros([shape, self.units]))
            self.cache.append(shape)


    class Registered:
        def register(self):
            REGISTRY["r"] = self


    class Scale:
        def __init__(self, factor):
            self.factor = factor

        def step(self, x):
            @tf.function
            def scaled(x):
                return x * self.factor

            return scaled(x)
    """
)


STATE_SET_ELSEWHERE = (
    "import tensorflow as tf\n"
    "\n"
    "COUNT = 0\n"
    "\n"
    "\n"
    "def bump():\n"
    "    global COUNT\n"
    "    COUNT = 1\n"
    "\n"
    "\n"
    "class Acc:\n"
    "    def __init__(self):\n"
    "        self.n = 0\n"
    "\n"
    "    def setup(self):\n"
    "        self.buf = []\n"
    "        self.v = 1.0\n"
    "\n"
    "    @tf.function\n"
    "    def step(self, x):\n"
    "        for i in range(3):\n"
    "            self.buf.append(x)\n"
    "        self.n += 1\n"
    "        y = float(self.v)\n"
    "        return x\n"
)


@pytest.mark.parametrize("code", [f"AS10{n}" for n in range(1, 8)])
@pytest.mark.parametrize(
    "text",
    [SOURCE, HOIST_AFTER_CUT_DEF, WRITES_ELSEWHERE, STATE_SET_ELSEWHERE],
    ids=["source", "hoist", "writes", "state"],
)
def test_what_a_rule_declares_is_all_it_reads(code: str, text: str) -> None:
    """Each rule's findings on the skeleton that keeps only what it declares equal its
    findings on the whole file: its ``skeleton_keeps`` is complete."""
    from autosig.rules.context import RuleContext
    from autosig.rules.registry import get_rule
    from autosig.rules.run import check_context

    rule = get_rule(code)

    def found(source: str) -> list[tuple[int, int, str]]:
        ctx = RuleContext.from_text(source, "m.py")
        return [(*ctx.position(v.node), v.message) for _, v in check_context(ctx, [rule()])]

    assert found(skeleton(text, rule.skeleton_keeps)) == found(text)


def test_the_skeleton_knows_no_rule() -> None:
    """What a rule reads is the rule's declaration; the skeleton only offers the kinds."""
    from pathlib import Path

    import autosig.source.skeleton as module

    assert "AS1" not in Path(module.__file__).read_text(encoding="utf-8")


def test_what_is_not_asked_for_is_cut() -> None:
    cut = skeleton(WRITES_ELSEWHERE, frozenset())
    assert "LIMIT = tf.zeros" not in cut and "self.scale = 3" not in cut
    assert "return x.shape[0]" not in cut and "return y" not in cut
    assert "items.append(1)" in cut  # a function tf.function wraps is always kept
    kept = skeleton(WRITES_ELSEWHERE)
    assert "LIMIT = tf.zeros" in kept and "self.scale = 3" in kept
    assert "return x.shape[0]" in kept and "return y" in kept


def test_classes_writing_only_their_own_attributes_are_cut() -> None:
    """A method's ``self`` is its own: a class whose methods only set their instance's
    attributes (none the kept code reads) is cut, however many methods it has; one that
    changes a module-level name the kept code uses is kept."""
    cut = skeleton(CLASSES)
    assert "self.kernel" not in cut and "self.cache.append" not in cut
    assert "class Layer: ..." not in cut  # the kept code never names it: no stub either
    assert "self.factor = factor" in cut  # the kept class's __init__
    with_registry = CLASSES.replace("return x * self.factor", "return x * REGISTRY['r']")
    assert 'REGISTRY["r"] = self' in skeleton(with_registry)
    assert check_text(CLASSES, "m.py") == check_text_whole(CLASSES)


def check_text_whole(text: str) -> list[object]:
    from autosig.rules.context import RuleContext
    from autosig.rules.registry import select_rules
    from autosig.rules.run import check_context, violation_to_finding

    ctx = RuleContext.from_text(text, "m.py")
    return [violation_to_finding(ctx, r, v) for r, v in check_context(ctx, select_rules())]


HELPERS = textwrap.dedent(
    """\
    import tensorflow as tf

    DEFAULT = Scaler()


    def pool(x):
        return reduce(x) * DEFAULT.factor


    def reduce(x):
        return tf.reduce_mean(x, axis=0)


    def unrelated(x):
        return tf.reshape(x, [x.shape[0], -1])


    class Scaler:
        factor = 2.0


    class Unused:
        def big(self):
            return 1


    def counter():
        global DEFAULT
        DEFAULT = None
    """
)


def test_a_followed_module_is_cut_to_what_the_function_reaches() -> None:
    from autosig.source.skeleton import reached_skeleton

    cut = reached_skeleton(HELPERS, ["pool"])
    assert cut.count("\n") == HELPERS.count("\n")
    assert "def pool(x):" in cut and "tf.reduce_mean" in cut  # pool and what it calls
    assert "factor = 2.0" in cut  # a class module-level code instantiates
    assert "DEFAULT = None" in cut  # a def rebinding a module name
    assert "x.shape[0]" not in cut and "def big" not in cut
    assert "def unrelated" not in cut and "class Unused" not in cut  # nobody names them
    assert reached_skeleton(HELPERS, ["unrelated"]).count("x.shape[0]") == 1
    assert reached_skeleton("def f(:\n", ["f"]) == "def f(:\n"


def test_reads_found_through_a_cut_module_are_those_of_the_whole_module(tmp_path) -> None:  # noqa: ANN001
    """shape_use follows ``helpers.pool`` into a module cut to what ``pool`` reaches."""
    from autosig.analysis.module_view import ModuleView
    from autosig.analysis.shape_reads import shape_use
    from autosig.source.discover import discover_text
    from autosig.source.project_modules import ProjectModules

    (tmp_path / "helpers.py").write_text(
        HELPERS.replace("return reduce(x)", "return tf.zeros([x.shape[1]]) + reduce(x)")
    )
    source = (
        "import tensorflow as tf\nfrom helpers import pool\n\n@tf.function\n"
        "def step(x):\n    return pool(x)\n"
    )
    (tmp_path / "train.py").write_text(source)
    wrapper, sites = discover_text(source, "train.py")

    class WholeModules(ProjectModules):
        def __call__(self, dotted: str, reach: str | None = None):  # noqa: ANN204
            return super().__call__(dotted)

    def reads(modules: ProjectModules) -> list[tuple[object, ...]]:
        found = shape_use(ModuleView(wrapper, modules), sites[0].function, ["x"]).reads["x"]
        return sorted((sorted(r.dims), r.kind, r.line, r.via) for r in found)

    cut = reads(ProjectModules.around(tmp_path / "train.py"))
    whole = reads(WholeModules.around(tmp_path / "train.py"))
    assert cut == whole and cut and cut[0][2] == 7  # line numbers of the whole module

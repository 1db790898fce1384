"""Static rules AS101-AS107: every rule's own VALID/INVALID examples, plus targeted cases."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import libcst as cst
import pytest

from autosig.errors import AutosigError
from autosig.rewrite.engine import fix_rules as fix_text
from autosig.rules.base import Invalid, Rule
from autosig.rules.context import RuleContext
from autosig.rules.registry import ALL_RULES, RULE_DOCS, get_rule, rule_doc, select_rules
from autosig.rules.run import check_context, check_text
from autosig.source.codes import ALL_CODES, VERIFY_VERDICT_CODES, code_kind, selected_codes

SECTIONS = (
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
    "## Fix safety",
)

VALID_CASES = [
    pytest.param(rule, source, id=f"{rule.code}-valid-{index}")
    for rule in ALL_RULES
    for index, source in enumerate(rule.VALID)
]
INVALID_CASES = [
    pytest.param(rule, example, id=f"{rule.code}-invalid-{index}")
    for rule in ALL_RULES
    for index, example in enumerate(rule.INVALID)
]
FIXED_CASES = [
    pytest.param(rule, example, id=f"{rule.code}-fix-{index}")
    for rule in ALL_RULES
    for index, example in enumerate(rule.INVALID)
    if example.expected is not None
]


def findings(source: str, *codes: str):
    return check_text(textwrap.dedent(source), "m.py", select=list(codes) or None)


# -- generic: every rule's examples ---------------------------------------------------------
@pytest.mark.parametrize("rule, source", VALID_CASES)
def test_valid_examples_are_not_reported(rule: type[Rule], source: str) -> None:
    assert findings(source, rule.code) == []


@pytest.mark.parametrize("rule, example", INVALID_CASES)
def test_invalid_examples_are_reported(rule: type[Rule], example: Invalid) -> None:
    found = findings(example.code, rule.code)
    assert [f.code for f in found] == [rule.code] * example.count
    for finding in found:
        assert finding.line >= 1 and finding.col >= 1
        assert "\n" not in finding.message
        assert finding.function, "every finding names its tf.function"
        assert finding.fixable == (example.expected is not None) or not finding.fixable


@pytest.mark.parametrize("rule, example", FIXED_CASES)
def test_fixes_produce_expected_source(rule: type[Rule], example: Invalid) -> None:
    fixed, applied = fix_text(example.code, "m.py", select=[rule.code], unsafe=True)
    assert fixed == example.expected
    safety = "unsafe" if example.unsafe else rule.fix_safety
    assert applied and all(f.fixable and f.fix_safety == safety for f in applied)
    cst.parse_module(fixed)  # the output parses
    assert fix_text(fixed, "m.py", select=[rule.code], unsafe=True)[0] == fixed  # idempotent
    assert [f for f in findings(fixed, rule.code) if f.fixable] == []


@pytest.mark.parametrize("rule, example", FIXED_CASES)
def test_unsafe_fixes_need_permission(rule: type[Rule], example: Invalid) -> None:
    if rule.fix_safety == "unsafe":
        assert example.unsafe  # a rule's fixes are all unsafe, or safe unless marked
    fixed, _ = fix_text(example.code, "m.py", select=[rule.code], unsafe=False)
    assert (fixed == example.code) == example.unsafe


@pytest.mark.parametrize(
    "rule, example", [c for c in INVALID_CASES if c.values[1].expected is None]
)
def test_unfixable_examples_are_left_alone(rule: type[Rule], example: Invalid) -> None:
    assert fix_text(example.code, "m.py", select=[rule.code], unsafe=True)[0] == example.code
    assert not any(f.fixable for f in findings(example.code, rule.code))


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rules_document_themselves(rule: type[Rule]) -> None:
    doc = inspect.cleandoc(rule.__doc__ or "")
    positions = [doc.find(section) for section in SECTIONS]
    assert -1 not in positions and positions == sorted(positions), rule.code
    # its module (as101_print) or its package (as106/) is named by its code
    assert rule.__module__.split(".")[2].startswith(rule.code.lower())
    assert rule.VALID and rule.INVALID and rule.summary and rule.name
    assert rule.fix_safety in ("safe", "unsafe", "none")
    if rule.fix_safety == "none":
        assert all(example.expected is None for example in rule.INVALID)
    else:
        assert any(example.expected is not None for example in rule.INVALID)


# -- registry ---------------------------------------------------------------------------------
def test_registry_lists_every_code_once_in_order() -> None:
    codes = [rule.code for rule in ALL_RULES]
    assert codes == sorted(codes) == [f"AS10{i}" for i in range(1, 8)]
    assert list(RULE_DOCS) == list(ALL_CODES)
    profile_codes = {"AS201", "AS202", "AS203", "AS204"}
    assert set(RULE_DOCS) == {*codes, *profile_codes, "AS301", "AS302"}
    assert list(ALL_CODES)[-2:] == ["AS301", "AS302"]  # verify codes sort last
    for code in RULE_DOCS:
        assert "## Fix safety" in rule_doc(code)
    assert {code: code_kind(code) for code in RULE_DOCS} == {
        **dict.fromkeys(codes, "static"),
        **dict.fromkeys(profile_codes, "profile"),
        "AS301": "verify",
        "AS302": "verify",
    }
    assert VERIFY_VERDICT_CODES == {"not equivalent": "AS301", "could not run": "AS302"}


def test_select_and_ignore_take_codes_and_prefixes() -> None:
    assert [r.code for r in select_rules()] == [r.code for r in ALL_RULES]
    assert [r.code for r in select_rules(["as101", "AS107"])] == ["AS101", "AS107"]
    assert [r.code for r in select_rules(["AS1"], ["AS10"])] == []
    assert [r.code for r in select_rules(None, ["AS101", "AS2"])][0] == "AS102"
    assert select_rules(["AS201"]) == []  # a profile code: accepted, no static rule
    assert len(select_rules(["ALL"])) == len(ALL_RULES)


def test_verify_codes_select_by_prefix_and_no_static_rule() -> None:
    assert selected_codes(["AS3"]) == {"AS301", "AS302"}
    assert selected_codes(None, ["AS302"]) == set(ALL_CODES) - {"AS302"}
    assert select_rules(["AS3"]) == []  # verify codes: accepted, no static rule
    assert len(select_rules(None, ["AS3"])) == len(ALL_RULES)


@pytest.mark.parametrize(
    "select, ignore", [(["AS108"], None), (None, ["AS4"]), (["AS303"], None), (["X1"], None)]
)
def test_unknown_codes_are_errors_naming_them(select, ignore) -> None:
    with pytest.raises(AutosigError, match="unknown rule code"):
        select_rules(select, ignore)


def test_get_rule() -> None:
    assert get_rule("as105").code == "AS105"
    with pytest.raises(AutosigError, match="AS999"):
        get_rule("AS999")
    with pytest.raises(AutosigError, match="profile finding"):
        get_rule("AS201")
    with pytest.raises(AutosigError, match="AS301 is a verify finding"):
        get_rule("AS301")


# -- context ----------------------------------------------------------------------------------
def test_unparsable_text_is_a_one_line_error_naming_the_file() -> None:
    with pytest.raises(AutosigError) as info:
        check_text("def f(:\n", "broken.py")
    assert str(info.value).startswith("broken.py: does not parse")


@pytest.mark.parametrize(
    "imports, alias, needs_import",
    [
        ("import tensorflow as tf2\n", "tf2", False),
        ("import tensorflow\n", "tensorflow", False),
        ("import tensorflow.compat.v2 as tfv2\n", "tfv2", False),
        ("from tensorflow.compat import v2 as tf\n", "tf", False),
        ("try:\n    import tensorflow as tfx\nexcept ImportError:\n    tfx = None\n", "tfx", False),
        ("from tensorflow import function\n", "tf", True),
        ("import numpy as tf_like\n", "tf", True),
    ],
)
def test_tensorflow_alias(imports: str, alias: str, needs_import: bool) -> None:
    ctx = RuleContext.from_text(imports + "x = 1\n", "m.py")
    assert ctx.tf_alias == alias
    assert (ctx.tf_import is not None) == needs_import


def test_traced_regions_skip_nested_sites_and_outside_helpers() -> None:
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        def helper(x):
            print("helper")

        @tf.function
        def outer(x):
            print("outer")
            def plain():
                print("plain")

            @tf.function
            def inner(y):
                print("inner")
                return y

            return inner(x)
        """
    )
    found = findings(source, "AS101")
    assert [(f.line, f.function) for f in found] == [
        (8, "outer"),
        (10, "outer"),
        (14, "outer.<locals>.inner"),
    ]


def test_call_form_shares_the_function_once() -> None:
    source = (
        "import tensorflow as tf\ndef slow(x):\n    print(x)\n    return x\n"
        "fast = tf.function(slow)\nfaster = tf.function(slow, jit_compile=True)\n"
    )
    assert len(findings(source, "AS101")) == 1
    assert len(findings(source, "AS107")) == 2


def test_findings_sorted_and_1_based() -> None:
    source = (
        "import random\nimport tensorflow as tf\n@tf.function\ndef f(x):\n"
        "    print(random.random())\n    return x\n"
    )
    found = findings(source)
    assert [(f.line, f.col, f.code) for f in found] == [
        (4, 1, "AS107"),
        (5, 5, "AS101"),
        (5, 11, "AS102"),
    ]
    # AS107 is unsafe here: fewer traces mean fewer trace-time random draws
    assert [f.fix_safety for f in found] == ["unsafe", "safe", "unsafe"]


# -- fixes ---------------------------------------------------------------------------------------
def test_overlapping_fixes_are_all_applied() -> None:
    source = (
        "import random\nimport tensorflow as tf\n@tf.function\ndef f(x):\n"
        "    print(f'r={random.random()}')  # keep me\n    return x\n"
    )
    fixed, applied = fix_text(source, "m.py", unsafe=True)
    assert fixed == (
        "import random\nimport tensorflow as tf\n@tf.function(reduce_retracing=True)\n"
        "def f(x):\n    tf.print('r=', tf.random.uniform([]))  # keep me\n    return x\n"
    )
    assert sorted(f.code for f in applied) == ["AS101", "AS102", "AS107"]
    assert fix_text(fixed, "m.py", unsafe=True)[0] == fixed


def test_crlf_and_comments_are_kept() -> None:
    source = (
        "# header\r\nimport tensorflow as tf\r\n\r\nclass M:\r\n    def __init__(self):\r\n"
        "        self.n = 0  # counter\r\n\r\n    @tf.function  # hot\r\n    def step(self, x):\r\n"
        "        print('x', x)  # debug\r\n        self.n += 1\r\n        return x\r\n"
    )
    fixed, _ = fix_text(source, "m.py", unsafe=True)
    assert fixed == (
        "# header\r\nimport tensorflow as tf\r\n\r\nclass M:\r\n    def __init__(self):\r\n"
        "        self.n = tf.Variable(0)  # counter\r\n\r\n"
        "    @tf.function(reduce_retracing=True)  # hot\r\n    def step(self, x):\r\n"
        "        tf.print('x', x)  # debug\r\n        self.n.assign_add(1)\r\n        return x\r\n"
    )


def test_import_is_added_once_for_several_fixes() -> None:
    source = (
        "from tensorflow import function\n@function\ndef f(x):\n    print(x)\n    print(x)\n"
        "    return x\n"
    )
    fixed, applied = fix_text(source, "m.py", select=["AS101"])
    assert len(applied) == 2
    assert fixed.count("import tensorflow as tf\n") == 1
    assert fixed.count("tf.print(x)") == 2


def test_bare_import_alias_is_used() -> None:
    source = "import tensorflow\n@tensorflow.function\ndef f(x):\n    print(x)\n    return x\n"
    fixed, _ = fix_text(source, "m.py", select=["AS101"])
    assert "    tensorflow.print(x)\n" in fixed and "import tensorflow as tf" not in fixed


def test_as107_edits_target_the_decorator_or_the_call() -> None:
    source = (
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    return x\n"
        "@tf.function(jit_compile=True)\ndef g(x):\n    return x\n"
        "def h(x):\n    return x\nfast = tf.function(h)\n"
    )
    ctx = RuleContext.from_text(source, "m.py")
    pairs = check_context(ctx, select_rules(["AS107"]))
    targets = [next(iter(v.edits)) for _, v in pairs]
    assert targets == [ctx.sites[0].decorator, ctx.sites[1].call, ctx.sites[2].call]


def test_as107_keeps_multiline_argument_layout_without_trailing_comma() -> None:
    source = (
        "import tensorflow as tf\n@tf.function(\n    jit_compile=True,\n    autograph=False)\n"
        "def f(x):\n    return x\n"
    )
    fixed, _ = fix_text(source, "m.py", select=["AS107"])
    assert fixed == (
        "import tensorflow as tf\n@tf.function(\n    jit_compile=True,\n    autograph=False,\n"
        "    reduce_retracing=True)\ndef f(x):\n    return x\n"
    )


def test_as107_single_argument_on_its_own_line() -> None:
    source = (
        "import tensorflow as tf\n@tf.function(\n    jit_compile=True\n)\ndef f(x):\n    return x\n"
    )
    fixed, _ = fix_text(source, "m.py", select=["AS107"])
    assert fixed == (
        "import tensorflow as tf\n@tf.function(\n    jit_compile=True,\n    reduce_retracing=True\n)\n"
        "def f(x):\n    return x\n"
    )


def test_as103_two_counters_added_to_one_init() -> None:
    source = (
        "import tensorflow as tf\nclass M:\n    a = 0\n    b = 0.0\n    def __init__(self):\n"
        "        super().__init__()\n    @tf.function\n    def step(self, x):\n"
        "        self.a += 1\n        self.b += 0.5\n        return x\n"
    )
    fixed, applied = fix_text(source, "m.py", select=["AS103"], unsafe=True)
    assert len(applied) == 2
    assert (
        "        super().__init__()\n        self.a = tf.Variable(0)\n"
        "        self.b = tf.Variable(0.0)\n" in fixed
    )
    assert "self.a.assign_add(1)" in fixed and "self.b.assign_add(0.5)" in fixed


def test_as103_int_counter_with_float_step_is_not_fixed() -> None:
    source = (
        "import tensorflow as tf\nclass M:\n    def __init__(self):\n        self.n = 0\n"
        "    @tf.function\n    def step(self, x):\n        self.n += 0.5\n        return x\n"
    )
    (finding,) = findings(source, "AS103")
    assert not finding.fixable and "not a number literal matching 0.5" in finding.message


def test_as103_global_set_before_the_tensorflow_import_is_not_fixed() -> None:
    source = (
        "counter = 0\nimport tensorflow as tf\n@tf.function\ndef f(x):\n"
        "    global counter\n    counter += 1\n    return x\n"
    )
    (finding,) = findings(source, "AS103")
    assert not finding.fixable and "before TensorFlow is imported" in finding.message


def test_as103_nonlocal_inside_the_traced_function_is_local_state() -> None:
    source = (
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    n = 0\n    def inc():\n"
        "        nonlocal n\n        n += 1\n    inc()\n    return x * n\n"
    )
    assert findings(source, "AS103") == []


def test_as101_split_keeps_quotes_prefixes_and_escapes() -> None:
    source = (
        'import tensorflow as tf\n@tf.function\ndef f(x):\n    print(rf"a\\d {x!r} {{b}}")\n'
        "    print(f'{x=}')\n    return x\n"
    )
    fixed, _ = fix_text(source, "m.py", select=["AS101"])
    assert '    tf.print(r"a\\d", x, r"{b}")\n' in fixed
    assert "    tf.print('x=', x)\n" in fixed


def test_as101_non_simple_format_is_kept_as_one_argument() -> None:
    source = (
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    print('%(a)s' % {'a': x})\n"
        "    return x\n"
    )
    fixed, _ = fix_text(source, "m.py", select=["AS101"])
    assert "    tf.print('%(a)s' % {'a': x})\n" in fixed


def test_as101_word_tracker_is_not_trace_logging() -> None:
    source = (
        "import tensorflow as tf\n@tf.function\ndef f(x):\n    print('tracker', x)\n    return x\n"
    )
    (finding,) = findings(source, "AS101")
    assert finding.fixable


def test_as106_nested_creation_inside_a_traced_function_is_once_per_trace() -> None:
    source = (
        "import tensorflow as tf\n@tf.function(reduce_retracing=True)\ndef outer(x):\n"
        "    inner = tf.function(lambda y: y)\n    return inner(x)\n"
    )
    assert findings(source, "AS106") == []


def test_static_rules_never_import_tensorflow() -> None:
    code = (
        "import sys\nfrom autosig.rules.run import check_text\n"
        "from autosig.rewrite.engine import fix_rules as fix_text\n"
        "src = 'import tensorflow as tf\\n@tf.function\\ndef f(x):\\n    print(x)\\n    return x\\n'\n"
        "assert len(check_text(src, 'm.py')) == 2\nfix_text(src, 'm.py', unsafe=True)\n"
        "assert 'tensorflow' not in sys.modules, 'tensorflow was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


END_TO_END = """\
import random
import tensorflow as tf

counter = 0


class Trainer(tf.Module):
    def __init__(self):
        super().__init__()
        self.steps = 0

    @tf.function
    def step(self, x):
        global counter
        print(f"step {self.steps}: sum {tf.reduce_sum(x):.2f}")
        self.steps += 1
        counter += 2
        return x * random.uniform(0.5, 1.5)
"""


@pytest.mark.tf
def test_fixed_code_runs_every_call_under_tensorflow() -> None:
    """The point of the fixes: state, RNG and printing happen per call, not per trace."""
    import tensorflow as tf

    fixed, applied = fix_text(END_TO_END, "trainer.py", unsafe=True)
    assert sorted(f.code for f in applied) == ["AS101", "AS102", "AS103", "AS103", "AS107"]
    assert check_text(fixed, "trainer.py") == []
    namespace: dict = {"__name__": "trainer_fixed"}
    exec(compile(fixed, "trainer_fixed.py", "exec"), namespace)
    trainer = namespace["Trainer"]()
    outputs = [trainer.step(tf.ones([n])) for n in (2, 3, 4, 5, 6, 7)]
    assert int(trainer.steps.numpy()) == 6  # a Python int would have stopped at the traces
    assert int(namespace["counter"].numpy()) == 12
    firsts = {round(float(out[0]), 6) for out in outputs}
    assert len(firsts) > 1, "a fresh random number per call"
    assert all(0.5 <= v <= 1.5 for v in firsts)
    assert trainer.step.experimental_get_tracing_count() <= 2  # reduce_retracing


def test_every_invalid_example_holds_the_text_its_rule_needs() -> None:
    """``check`` runs a rule only on files holding its ``TEXT_NEEDED``; a rule's own
    examples of what it reports must all pass that filter (the VALID ones need not)."""
    from autosig.rules.registry import TEXT_NEEDED

    for rule in ALL_RULES:
        needed = TEXT_NEEDED.get(rule.code)
        for example in rule.INVALID if needed is not None else ():
            assert needed.search(example.code), (rule.code, example.code)
    assert set(TEXT_NEEDED) <= {rule.code for rule in ALL_RULES}


def test_a_file_that_cannot_trigger_a_rule_never_imports_it() -> None:
    probe = (
        "import sys\n"
        "from autosig.rules.run import check_text\n"
        "check_text('import tensorflow as tf\\n@tf.function\\ndef f(x):\\n    return x\\n', 'm.py')\n"
        "print(sorted(m for m in sys.modules if m.startswith('autosig.rules.as10')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    loaded = eval(out)  # noqa: S307 - our own printed list
    assert not {"autosig.rules.as101_print", "autosig.rules.as102_random"} & set(loaded)
    assert not {"autosig.rules.as104_list_append", "autosig.rules.as105_tensor_to_python"} & set(
        loaded
    )

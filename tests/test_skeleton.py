"""The skeleton keeps line numbers and everything static rules report on."""

from __future__ import annotations

import textwrap

from autosig.rules.run import check_text
from autosig.skeleton import skeleton

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

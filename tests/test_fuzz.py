"""Fuzzing check and fix on generated sources wrapped in every tf.function form.

Two generators feed the same properties:

* a TensorFlow-flavoured one (below): bodies made of the statements the rules look for
  (print with f-strings and %-formats, Python/NumPy RNG, Python state, list appends,
  ``.numpy()``, tf.function in a loop, suppressions) nested in loops, ifs, withs and
  trys, wrapped as a decorator, a call form, a method or a nested function, spelled
  through every import alias, with LF, CRLF or mixed newlines and tabs or spaces;
* hypothesmith's grammar-based sources around and inside that code (odd comments, form
  feeds, stray ``\\r``, non-ASCII identifiers, backslashes...), which is where a
  rewriter that treats source as text instead of a tree breaks.

Properties: check and fix raise nothing but AutosigError; fix output parses; a second
fix changes nothing; nothing safe-and-fixable is left behind; every line outside the
tf.function block is byte-identical (only import lines may be added elsewhere).

Bounded for CI: AUTOSIG_FUZZ_EXAMPLES (default 40) examples per property;
scripts/fuzz_long.py runs the same tests with thousands.
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from dataclasses import dataclass

import libcst as cst
import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, settings
from hypothesis import strategies as st

from autosig.errors import AutosigError
from autosig.infer.plan import FunctionPlan, ParamPlan, Plan
from autosig.infer.specs import TensorSpecNode
from autosig.rewrite.engine import FixResult, fix_text
from autosig.rules.registry import select_rules
from autosig.rules.run import check_text

EXAMPLES = int(os.environ.get("AUTOSIG_FUZZ_EXAMPLES", "40"))
SHRINK = os.environ.get("AUTOSIG_FUZZ_SHRINK", "0") == "1"
"""Shrinking hypothesmith sources can take minutes; CI reports the unshrunk example."""
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=list(Phase) if SHRINK else [p for p in Phase if p is not Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# -- expressions ---------------------------------------------------------------------

NAMES = st.sampled_from(["x", "y", "self.w", "acc", "n", "i", "cfg.scale", "ä_var"])
LITERALS = st.sampled_from(
    [
        "1",
        "0.5",
        "-3",
        "None",
        "True",
        "'s'",
        '"double"',
        "'tracing'",
        "'{}'",
        "'a{b}c'",
        "'%d items'",
        "b'raw'",
        "'''tri\nple'''",
        "'ünï'",
        "[1, 2]",
        "(1,)",
        "{'k': 1}",
    ]
)
TF_CALLS = st.sampled_from(
    [
        "tf.ones([2])",
        "tf.reduce_sum(x)",
        "tf.shape(x)[0]",
        "np.zeros(3)",
        "len(acc)",
        "random.random()",
        "np.random.rand(2)",
        "np.random.normal(0.0, 1.0, size=3)",
        "random.randint(0, 9)",
        "x.numpy()",
        "float(x)",
        "int(y)",
        "bool(x)",
    ]
)


def _expr(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, st.sampled_from(["+", "*", "-", "@", "//", " and "]), children).map(
            lambda t: f"({t[0]} {t[1].strip()} {t[2]})"
        ),
        st.tuples(children, children).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.lists(children, max_size=3).map(lambda a: f"f({', '.join(a)})"),
        children.map(lambda e: f"f'{{{e}}} and {{{e}!r:>5}}'"),
        st.tuples(children, children).map(lambda t: f"({t[0]} if {t[1]} else None)"),
        children.map(lambda e: f"(lambda q: {e})"),
        children.map(lambda e: f"[v for v in {e}]"),
    )


EXPRS = st.recursive(st.one_of(NAMES, LITERALS, TF_CALLS), _expr, max_leaves=6)

# -- statements ----------------------------------------------------------------------


def _print_call() -> st.SearchStrategy[str]:
    arg = st.one_of(
        EXPRS,
        EXPRS.map(lambda e: f"f'value {{{e}:.3f}} done'"),
        EXPRS.map(lambda e: f"'%s and %5d' % ({e}, 1)"),
        EXPRS.map(lambda e: f"'{{}} x {{}}'.format({e}, 2)"),
        st.just("'Tracing step'"),
        st.just('f"retracing with {x.shape}"'),
    )
    kwargs = st.sampled_from(
        ["", "sep=''", "end='!\\n'", "file=sys.stderr", "flush=True", "file=fh", "*acc"]
    )
    return st.tuples(st.lists(arg, max_size=3), kwargs).map(
        lambda t: f"print({', '.join(t[0] + ([t[1]] if t[1] else []))})"
    )


SIMPLE_STATEMENTS = st.one_of(
    _print_call(),
    _print_call().map(lambda s: f"{s}  # autosig: ignore[AS101]"),
    _print_call().map(lambda s: f"{s}  # keep this comment"),
    EXPRS.map(lambda e: f"tf.print({e})"),
    st.tuples(NAMES, EXPRS).map(lambda t: f"{t[0]} = {t[1]}"),
    st.tuples(NAMES, TF_CALLS).map(lambda t: f"{t[0]} = {t[1]}"),
    st.sampled_from(
        [
            "self.count += 1",
            "self.history.append(x)",
            "acc.append(x)",
            "global STEP\nSTEP += 1",
            "n = x.numpy()",
            "g = tf.function(lambda z: z)",
            "g2 = tf.function(helper, jit_compile=True)",
            "pass",
            "# just a comment",
            "return x",
            "return",
            "yield x",
            "del acc[0]",
            "assert x is not None, 'x'",
            "raise ValueError('bad')",
            "x: int = 3",
            "(a, b) = (1, 2)",
            "acc += [x]",
            "print",
            "print(x) ; y = 1",
            "import random",
            "from numpy import random as npr\nz = npr.rand(3)",
        ]
    ),
)


def _block(level: int) -> st.SearchStrategy[list[tuple[int, str]]]:
    """A list of (indent level, line) pairs; nested compound statements to depth 2."""
    simple = SIMPLE_STATEMENTS.map(lambda s: [(level, line) for line in s.split("\n")])
    if level >= 3:
        return st.lists(simple, min_size=1, max_size=3).map(lambda bs: sum(bs, []))
    header = st.sampled_from(
        [
            "for i in range(3):",
            "for v in tf.range(n):",
            "while n < 3:",
            "if x > 0:",
            "with tf.name_scope('s'):",
            "try:",
            "def helper(z):",
            "@tf.function\ndef inner(z):",
            "class Local:",
        ]
    )
    compound = st.tuples(header, st.deferred(lambda: _block(level + 1))).map(
        lambda t: (
            [(level, h) for h in t[0].split("\n")]
            + t[1]
            + ([(level, "except Exception:"), (level + 1, "pass")] if t[0] == "try:" else [])
        )
    )
    return st.lists(st.one_of(simple, simple, compound), min_size=1, max_size=4).map(
        lambda bs: sum(bs, [])
    )


IMPORTS = {
    "tf": "import tensorflow as tf\n",
    "tf2": "import tensorflow as tf2\n",
    "tensorflow": "import tensorflow\n",
    "function": "from tensorflow import function\n",
    "tff": "from tensorflow import function as tff\n",
    "compat": "import tensorflow.compat.v2 as tf\n",
}
REFS = {
    "tf": "tf.function",
    "tf2": "tf2.function",
    "tensorflow": "tensorflow.function",
    "function": "function",
    "tff": "tff",
    "compat": "tf.function",
}
DECORATOR_ARGS = [
    "",
    "()",
    "(jit_compile=True)",
    "(\n    autograph=False,\n)",
    "(reduce_retracing=True)",
    "(input_signature=[tf.TensorSpec([None], tf.float32)])",
    "(experimental_relax_shapes=True)",
]
QUALNAMES = {
    "decorator": "step",
    "call": "step",
    "method": "Model.step",
    "nested": "outer.<locals>.step",
    "lambda": "<lambda>",
}
FORMS = tuple(QUALNAMES)


@dataclass(frozen=True)
class Source:
    """A generated module: ``prefix + block + suffix``; only ``block`` may change."""

    prefix: str
    block: str
    suffix: str
    qualname: str = "step"
    """The generated tf.function's ``__qualname__``, for a profile plan entry."""

    @property
    def text(self) -> str:
        return self.prefix + self.block + self.suffix

    @property
    def block_lines(self) -> range:
        """0-based line numbers (as libcst counts them) of the block in ``text``."""
        start = len(_lines(self.prefix))
        return range(start, start + len(_lines(self.block)))


def _render(
    form: str, alias: str, args: str, body: list[tuple[int, str]], unit: str, newlines: list[str]
) -> str:
    ref = REFS[alias]
    base = 1 if form in ("decorator", "call", "nested") else 2
    head: list[tuple[int, str]]
    tail: list[tuple[int, str]] = []
    if form == "decorator":
        head = [(0, f"@{ref}{args}".replace("\n", "\n")), (0, "def step(x, y=None):")]
    elif form == "call":
        head = [(0, "def step(x, y=None):")]
        call_args = "" if args in ("", "()") else ", " + args[1:-1].strip().rstrip(",")
        tail = [(0, f"fast = {ref}(step{call_args})")]
    elif form == "method":
        head = [(0, "class Model(object):"), (1, f"@{ref}{args}"), (1, "def step(self, x):")]
    elif form == "nested":
        head = [(0, "def outer(x):"), (1, f"@{ref}{args}"), (1, "def step(x):")]
        base = 2
        tail = [(1, "return step(x)")]
    else:  # lambda
        return f"fast = {ref}(lambda x: (x, print(x))){newlines[0]}"
    lines = head + [(base + level, line) for level, line in body] + tail
    out = []
    for i, (level, line) in enumerate(lines):
        for part in line.split("\n"):
            out.append(unit * level + part + newlines[i % len(newlines)])
    return "".join(out)


def _grammar() -> st.SearchStrategy[str]:
    import hypothesmith

    return hypothesmith.from_grammar()


GRAMMAR = st.deferred(_grammar)
"""Built once, when a test first draws from it: importing hypothesmith and building its
grammar cost about 2 s of CPU, which every test process paid at collection before."""


@st.composite
def tf_sources(draw: st.DrawFn, trivia: bool = False) -> Source:
    alias = draw(st.sampled_from(sorted(IMPORTS)))
    form = draw(st.sampled_from(FORMS))
    args = draw(st.sampled_from(DECORATOR_ARGS))
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    newlines = draw(st.sampled_from([["\n"], ["\r\n"], ["\n", "\r\n"], ["\r\n", "\n", "\n"]]))
    body = draw(_block(0))
    extra_imports = draw(
        st.sampled_from(["", "import numpy as np\n", "import random\nimport numpy as np\n"])
    )
    header = draw(
        st.sampled_from(["", '"""Module docstring."""\n', "from __future__ import annotations\n"])
    )
    prefix = header + IMPORTS[alias] + extra_imports + "import sys\n\n"
    suffix = "\n\ndef after(x):\n    print(x)  # not in a tf.function: left alone\n"
    if trivia:
        before = draw(GRAMMAR)
        after = draw(GRAMMAR)
        prefix = prefix + before + ("" if before.endswith(("\n", "\r")) or not before else "\n")
        suffix = "\n" + after
    block = _render(form, alias, args, body, unit, newlines)
    return Source(prefix, block, suffix, QUALNAMES[form])


# -- properties ----------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    """Lines as libcst and the tokenizer count them (\\r\\n, \\r or \\n end a line)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
        cst.parse_module(text)
    except (SyntaxError, ValueError, cst.ParserSyntaxError, RecursionError):
        return False
    return True


IMPORT_LINE = re.compile(r"^\s*(import\s+[\w.]+|from\s+[\w.]+\s+import\s)")


def assert_only_block_changed(source: Source, new: str) -> None:
    """Every line outside the block is kept byte for byte; only imports may be added."""
    old_lines, new_lines = _lines(source.text), _lines(new)
    block = source.block_lines
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed_old = range(i1, i2)
        outside = [i for i in changed_old if i not in block]
        inserted = new_lines[j1:j2]
        if tag == "insert" and (i1 in block or i1 == block.stop):
            continue
        if tag == "insert" and all(IMPORT_LINE.match(line) for line in inserted):
            continue
        assert not outside and (i1 in block or i2 - 1 in block), (
            f"{tag} outside the tf.function block: old {old_lines[i1:i2]!r} -> {inserted!r}"
        )


PLANS = st.sampled_from(["none", "reduce_retracing", "signature"])


def _plan(kind: str, source: Source) -> Plan | None:
    """A profile plan for the generated function, as ``autosig fix --profile`` makes."""
    if kind == "none":
        return None
    if kind == "reduce_retracing":
        entry = FunctionPlan("gen.py", source.qualname, 0, "reduce_retracing", reasons=("fuzz",))
    else:
        spec = TensorSpecNode((None, 3), "float32")
        entry = FunctionPlan(
            "gen.py", source.qualname, 0, "signature", params=(ParamPlan("x", spec, "fuzz"),)
        )
    return Plan([entry])


def fix(text: str, unsafe: bool, plan: Plan | None = None) -> FixResult:
    """What ``autosig fix`` runs on one file (all rules selected)."""
    return fix_text(text, "gen.py", plan=plan, rules=select_rules(None, None), unsafe_fixes=unsafe)


def check_fix_properties(source: Source, unsafe: bool, plan: str = "none") -> None:
    text = source.text
    note(text)
    assume(_parses(text))
    # libcst 1.9 itself drops blank lines before an indented comment at the end of a
    # file (see test_fix_keeps_blank_lines_libcst_drops); other inputs must round-trip.
    assume(cst.parse_module(text).code == text)
    try:
        check_text(text, "gen.py")
    except AutosigError as exc:
        assert "\n" not in str(exc)
        return  # a one-line user error is an allowed outcome for odd input
    try:
        result = fix(text, unsafe, _plan(plan, source))
    except AutosigError as exc:
        assert "\n" not in str(exc)
        assert "autosig bug" not in str(exc), str(exc)
        return
    new = result.new_text
    note(f"--- fixed ---\n{new}")
    assert result.changed == (new != text)
    assert result.changed == bool(result.applied), "changed without an applied fix (or not)"
    assert _parses(new), "fix output does not parse"
    again = fix(new, unsafe, _plan(plan, source))
    assert again.new_text == new and not again.applied, "fix is not idempotent"
    allowed = ("safe", "unsafe") if unsafe else ("safe",)
    left = [f for f in check_text(new, "gen.py") if f.fixable and f.fix_safety in allowed]
    assert not left, f"fixable findings left after fix: {left}"
    assert_only_block_changed(source, new)


@FUZZ
@given(tf_sources(), PLANS)
def test_fix_safe_on_tf_flavoured_sources(source: Source, plan: str) -> None:
    check_fix_properties(source, unsafe=False, plan=plan)


@FUZZ
@given(tf_sources())
def test_fix_unsafe_on_tf_flavoured_sources(source: Source) -> None:
    check_fix_properties(source, unsafe=True)


@FUZZ
@given(tf_sources(trivia=True))
def test_fix_with_hypothesmith_trivia_around(source: Source) -> None:
    check_fix_properties(source, unsafe=False)


@FUZZ
@given(GRAMMAR, st.sampled_from(sorted(REFS)))
def test_hypothesmith_module_as_tf_function_body(body: str, alias: str) -> None:
    """Arbitrary grammar-valid code indented into a tf.function body."""
    indented = "".join("    " + line if line.strip() else line for line in _lines(body))
    block = f"@{REFS[alias]}\ndef step(x):\n{indented}"
    block += ("" if block.endswith(("\n", "\r")) else "\n") + "    return x\n"
    source = Source(IMPORTS[alias] + "\n", block, "\nLAST = 1\n")
    check_fix_properties(source, unsafe=True)


@FUZZ
@given(GRAMMAR)
def test_check_never_crashes_on_any_module(text: str) -> None:
    """Plain generated modules (with a tf import prepended): errors only as AutosigError."""
    for candidate in (text, "import tensorflow as tf\n" + text):
        try:
            findings = check_text(candidate, "gen.py")
        except AutosigError as exc:
            assert "\n" not in str(exc)
            continue
        assert all(f.path == "gen.py" and f.line >= 1 for f in findings)


@pytest.mark.parametrize(
    "text",
    [
        "import tensorflow as tf\n@tf.function\ndef f(x:\n",  # does not parse
        "import tensorflow as tf\n" + "(" * 300 + ")" * 300 + "\n",  # deep nesting
        "import tensorflow as tf\n@tf.function\ndef f(x):\n" + "    x = -x\n" * 100,
        "\ufeffimport tensorflow as tf\n@tf.function\ndef f(x):\n    print(x)\n",
        "import tensorflow as tf\r@tf.function\rdef f(x):\r    print(x)\r",
    ],
    ids=["syntax-error", "deep-nesting", "long-body", "bom-in-text", "cr-only"],
)
def test_edge_inputs_fail_only_with_autosig_error(text: str) -> None:
    rules = select_rules(None, None)
    for call in (
        lambda: check_text(text, "e.py"),
        lambda: fix_text(text, "e.py", plan=None, rules=rules, unsafe_fixes=True),
    ):
        try:
            call()
        except AutosigError as exc:
            assert str(exc).startswith("e.py: ") and "\n" not in str(exc)


def test_properties_catch_a_change_outside_the_block() -> None:
    """The byte-identity check is real: a change in the suffix is caught."""
    source = Source(
        "import tensorflow as tf\n", "@tf.function\ndef f(x):\n    return x\n", "A = 1\n"
    )
    with pytest.raises(AssertionError):
        assert_only_block_changed(source, source.text.replace("A = 1", "A = 2"))
    assert_only_block_changed(source, source.text.replace("return x", "return -x"))
    assert_only_block_changed(source, "import numpy as np\n" + source.text)


LIBCST_LOSES_LINES = (
    "import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print(x)\n\n\n  # end\n"
)


def test_libcst_drops_blank_lines_before_an_indented_final_comment() -> None:
    """The libcst 1.9 bug the fuzzer found: the blank lines before ``  # end`` are lost."""
    assert cst.parse_module(LIBCST_LOSES_LINES).code != LIBCST_LOSES_LINES


def test_fix_keeps_blank_lines_libcst_drops() -> None:
    try:
        new = fix(LIBCST_LOSES_LINES, unsafe=False).new_text
    except AutosigError:
        return  # refusing the file, naming it, is acceptable
    assert new.endswith("    tf.print(x)\n\n\n  # end\n")


def test_check_work_grows_linearly_with_function_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """AS103 searches a function body for global/nonlocal declarations once, not per line.

    Counted in body searches rather than seconds, so the test cannot flake on a busy
    machine; the quadratic version searched once per assignment.
    """
    from autosig.rules import as103_python_state as as103

    searches = 0
    real_declarations = as103.declarations

    def counting_declarations(*args, **kwargs):
        nonlocal searches
        searches += 1
        return real_declarations(*args, **kwargs)

    monkeypatch.setattr(as103, "declarations", counting_declarations)

    def count(lines: int) -> int:
        nonlocal searches
        searches = 0
        check_text(
            "import tensorflow as tf\n@tf.function\ndef f(x):\n" + "    x = -x\n" * lines, "l.py"
        )
        return searches

    assert count(200) <= count(50) + 2

"""Discovery finds every spelling of tf.function (decorators, aliases, call forms)."""

from __future__ import annotations

import textwrap

import pytest

from autosig.errors import AutosigError
from autosig.source.discover import Source, discover_text


def sites_of(src: str):
    _, sites = discover_text(textwrap.dedent(src), "m.py")
    return [s.site for s in sites]


@pytest.mark.parametrize(
    "src, qualname, form",
    [
        ("import tensorflow as tf\n@tf.function\ndef f(x): return x\n", "f", "decorator"),
        ("import tensorflow as tf2\n@tf2.function()\ndef f(x): return x\n", "f", "decorator"),
        ("from tensorflow import function as g\n@g\ndef f(x): return x\n", "f", "decorator"),
        ("import tensorflow as tf\n@tf.compat.v2.function\ndef f(x): return x\n", "f", "decorator"),
        ("import tensorflow.compat.v2 as tf\n@tf.function\ndef f(x): return x\n", "f", "decorator"),
        (
            "import tensorflow as tf\ndef slow(x): return x\nfast = tf.function(slow)\n",
            "slow",
            "call",
        ),
        ("import tensorflow as tf\nfast = tf.function(lambda x: x)\n", "<lambda>", "call"),
        (
            "import tensorflow as tf\ndef slow(x): return x\nj = tf.function(jit_compile=True)(slow)\n",
            "slow",
            "call",
        ),
    ],
)
def test_spellings(src: str, qualname: str, form: str) -> None:
    (site,) = sites_of(src)
    assert (site.qualname, site.form) == (qualname, form)


def test_methods_nested_and_init_call_form() -> None:
    sites = sites_of(
        """
        import tensorflow as tf

        class M(tf.Module):
            def __init__(self):
                self.step = tf.function(self._step, jit_compile=True)

            def _step(self, x):
                return x

            @tf.function(reduce_retracing=True)
            def call(self, x):
                @tf.function
                def inner(y):
                    return y
                return inner(x)

        def outer():
            class C:
                @tf.function
                def m(self, x):
                    return x
            return C
        """
    )
    got = {(s.qualname, s.is_method, s.form) for s in sites}
    assert got == {
        ("M._step", True, "call"),
        ("M.call", True, "decorator"),
        ("M.call.<locals>.inner", False, "decorator"),
        ("outer.<locals>.C.m", True, "decorator"),
    }
    step = next(s for s in sites if s.qualname == "M._step")
    assert step.decorator_args == {"jit_compile": "True"}
    call = next(s for s in sites if s.qualname == "M.call")
    assert call.has_reduce_retracing


def test_not_tensorflow_function_is_ignored() -> None:
    assert sites_of("def function(f): return f\n@function\ndef z(): pass\n") == []
    assert sites_of("import other as tf\n@tf.function\ndef z(): pass\n") == []


def test_wrap_and_call_in_one_expression() -> None:
    (site,) = sites_of(
        "import tensorflow as tf\ndef f(x): return x\ndef g(x):\n    return tf.function(f)(x)\n"
    )
    assert (site.qualname, site.form) == ("f", "call")


def test_in_loop() -> None:
    (site,) = sites_of(
        "import tensorflow as tf\nfor i in range(3):\n    g = tf.function(lambda: i)\n"
    )
    assert site.in_loop


def test_syntax_error_is_one_line() -> None:
    with pytest.raises(AutosigError) as info:
        discover_text("def f(:\n", "bad.py")
    assert "bad.py" in str(info.value) and "\n" not in str(info.value)


def test_find_gives_the_nearest_site_with_its_lines() -> None:
    text = textwrap.dedent(
        """\
        import tensorflow as tf

        @tf.function(  # autosig: ignore
            jit_compile=True,
        )
        def step(x):
            return x


        @tf.function
        def step(x):
            return x + 1
        """
    )
    source = Source.parse(text, "m.py")
    found = source.find("step", 9)
    assert found is not None
    assert found.site.site.line == 11
    assert found.lines == (11, 12)  # the def keyword through the body
    assert found.comment_lines == source.site_lines(found.site) == [10, 11]
    first = source.find("step", 2)
    assert first is not None and first.lines == (6, 7) and first.comment_lines == [3, 4, 5, 6]
    assert source.find("missing", 1) is None
    assert Source.parse("def (", "m.py").find("step", 1) is None

"""Python-value analysis: uses where a tensor would change the meaning, and relaxations.

VALID: the parameter can become a scalar spec; INVALID: it must stay a Python value (or
needs int64). Real-TensorFlow comparisons are in tests/test_analysis_tf.py.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from infer_helpers import python_only_uses_in_text
from libcst.metadata import MetadataWrapper

from autosig.analysis.python_values import find_function, python_only_uses, required_dtypes
from autosig.source.discover import parse_module

HEADER = "import numpy as np\nimport tensorflow as tf\nfrom tensorflow import keras\n\n"


def _src(body: str, prelude: str = "", signature: str = "x, n") -> str:
    return (
        HEADER
        + textwrap.dedent(prelude)
        + f"\n@tf.function\ndef f({signature}):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )


def whys(
    body: str,
    prelude: str = "",
    dtypes: dict[str, str] | None = None,
    converted: dict[str, str] | None = None,
    qualname: str = "f",
    src: str | None = None,
) -> list[str]:
    text = src if src is not None else _src(body, prelude)
    found = python_only_uses_in_text(
        text, qualname, ["n"], ["x"], dtypes or {"x": "float32", "n": "int32"}
    )
    if converted is not None:
        wrapper = MetadataWrapper(parse_module(text), unsafe_skip_copy=True)
        function = find_function(wrapper.module, qualname)
        assert function is not None
        found = python_only_uses(wrapper, function, ["n"], ["x"], dtypes, converted=converted)
    return [u.why for u in found["n"]]


def needs(body: str, observed: int | None = None, tensors: tuple[str, ...] = ("x",)) -> dict:
    wrapper = MetadataWrapper(parse_module(_src(body)), unsafe_skip_copy=True)
    function = find_function(wrapper.module, "f")
    assert function is not None
    return required_dtypes(
        wrapper,
        function,
        ["n"],
        {"n": observed} if observed is not None else None,
        {"x": "int64", "n": "int32"},
        tensors,
    )


# -- Part 1: a tensor must not change the meaning -------------------------------------

OVERFLOW_INT64 = {
    "lcg seed": "seed = n * 1664525\nreturn tf.random.stateless_uniform([2], seed=[seed, 0])",
    "bytes seen": "b = n * 4096 * 4096\nreturn tf.cast(b, tf.float32)",
    "large constant": "return tf.cast(n * 1000003, tf.float32)",
    "product of two ints": "m = n + 1\nreturn tf.cast(n * m, tf.float64)",
    "augmented": "s = n\ns *= 100000\nreturn tf.cast(s, tf.float32)",
    "module constant": None,
    "square": "return tf.cast(n ** 2, tf.float32)",
}


@pytest.mark.parametrize("name", [k for k in OVERFLOW_INT64 if OVERFLOW_INT64[k]])
def test_arithmetic_that_may_leave_int32_needs_int64(name: str) -> None:
    assert needs(OVERFLOW_INT64[name]) == {"n": "int64"}


def test_module_constant_multiplier_needs_int64() -> None:
    src = _src("return tf.cast(n * MULT, tf.float32)", prelude="MULT = 1664525\n")
    wrapper = MetadataWrapper(parse_module(src), unsafe_skip_copy=True)
    function = find_function(wrapper.module, "f")
    assert function is not None
    assert required_dtypes(wrapper, function, ["n"]) == {"n": "int64"}


NO_OVERFLOW = {
    "small multiplier": "return tf.cast(n * 4 + 1, tf.float32)",
    "addition": "return tf.cast(n + 10, tf.float32)",
    "floor division": "return tf.cast(n // 3, tf.float32)",
    "tensor arithmetic wraps in the original too": "return x * 1000003 + n",
    "float arithmetic": "return tf.cast(n, tf.float32) * 1000003.0",
}


@pytest.mark.parametrize("body", NO_OVERFLOW.values(), ids=NO_OVERFLOW.keys())
def test_arithmetic_within_int32_keeps_int32(body: str) -> None:
    assert needs(body) == {}


def test_observed_values_raise_the_bound() -> None:
    # n * 100 fits int32 up to 2**24, but n was seen at 30 million.
    assert needs("return tf.cast(n * 100, tf.float32)") == {}
    assert needs("return tf.cast(n * 100, tf.float32)", observed=30_000_000) == {"n": "int64"}


INT64_OVERFLOW = {
    "cube": "return tf.cast(n ** 3, tf.float32)",
    "power of two": "return tf.cast(2 ** n, tf.float32)",
}


@pytest.mark.parametrize("body", INT64_OVERFLOW.values(), ids=INT64_OVERFLOW.keys())
def test_arithmetic_beyond_int64_stays_python(body: str) -> None:
    found = whys(body)
    assert any("may exceed int64" in w for w in found), found
    assert needs(body) == {}


def test_int32_overflow_is_reported_when_not_widened() -> None:
    found = whys("return tf.cast(n * 1000003, tf.float32)")
    assert any("may exceed int32" in w for w in found), found
    assert (
        whys("return tf.cast(n * 1000003, tf.float32)", dtypes={"x": "float32", "n": "int64"}) == []
    )


INT64_PARTNERS = {
    "int32 tensor partner": ("y = tf.cast(x, tf.int32)\nreturn y + n * 1000003", "meets a int32"),
    "result dtype of tf.fill": ("return tf.fill([2], n * 1000003)", "result dtype would change"),
    "tf.one_hot depth": ("return tf.one_hot([1], n)", "result dtype would change"),
    "variable of unknown dtype": ("v.assign_add(n)\nreturn x", "variable of unknown dtype"),
}


@pytest.mark.parametrize("name", INT64_PARTNERS)
def test_widened_int64_blocked_where_partners_do_not_allow(name: str) -> None:
    body, expected = INT64_PARTNERS[name]
    found = whys(
        body,
        dtypes={"x": "float32", "n": "int64"},
        converted={"n": "int32"},
    )
    assert any(expected in w for w in found), found


INT64_FINE = {
    "cast": "return tf.cast(n * 1000003, tf.float32) + x",
    "stateless seed": "return tf.random.stateless_uniform([2], seed=[n * 1664525, 0]) + x",
    "shape": "return tf.zeros([n, 2]) + x",
    "int64 tensor partner": "y = tf.cast(x, tf.int64)\nreturn y + n * 1000003",
    "tf.print": "tf.print(n * 1000003)\nreturn x",
    "tensor slice": "return x[: n * 3]",
}


@pytest.mark.parametrize("body", INT64_FINE.values(), ids=INT64_FINE.keys())
def test_widened_int64_allowed_where_partners_allow(body: str) -> None:
    assert whys(body, dtypes={"x": "float32", "n": "int64"}, converted={"n": "int32"}) == []


KEEP_PYTHON = {
    "tf.constant": ("return tf.constant(n) + x", "tf.constant() takes a Python value"),
    "tf.constant with dtype": (
        "return tf.constant(n, dtype=tf.int64)",
        "tf.constant() takes a Python value",
    ),
    "stateful seed": ("return tf.random.uniform([2], seed=n) + x", "seed=...) takes a Python"),
    "name": ("return tf.identity(x, name=n)", "name=...) takes a Python"),
    "axis keyword": ("return tf.reduce_sum(x, axis=n)", "axis=...) takes a Python"),
    "axis positional": ("return tf.reduce_sum(x, n)", "takes its axis as a Python value"),
    "squeeze axis": ("return tf.squeeze(x, n)", "takes its axis"),
    "dtype": ("return tf.zeros([2], dtype=n)", "dtype=...) takes a Python"),
    "lambda capture": ("return tf.map_fn(lambda t: t * n, x)", "captured by a lambda"),
    "lambda capture through a local": (
        "m = n + 1\nreturn tf.map_fn(lambda t: t * m, x)",
        "captured by a lambda",
    ),
    "nested function": (
        "def inner(t):\n    return t * n\nreturn inner(x)",
        "captured by nested `inner`",
    ),
    "trace-log print": ('print("tracing with", n)\nreturn x', "trace-log print"),
    "trace-log print through a local": (
        'm = n * 2\nprint("Retracing:", m)\nreturn x',
        "trace-log print",
    ),
    "shift": ("return tf.cast(1 << n, tf.float32)", "bitwise operator"),
    "bitwise and": ("return tf.cast(n & 255, tf.float32)", "bitwise operator"),
}


@pytest.mark.parametrize("name", KEEP_PYTHON)
def test_meaning_changing_uses_keep_python(name: str) -> None:
    body, expected = KEEP_PYTHON[name]
    found = whys(body)
    assert any(expected in w for w in found), found


STILL_FINE = {
    "lambda with its own n": "return tf.map_fn(lambda n: n * 2, x)",
    "attribute named n in a lambda": "return tf.map_fn(lambda t: t.n, x) * tf.cast(n, tf.float32)",
    "ordinary print": "print(n)\nreturn x",
    "stateless seed": "return tf.random.stateless_uniform([2], seed=[n, 0]) + x",
    "reduce over a tensor with a fixed axis": "return tf.reduce_sum(x * tf.cast(n, tf.float32), axis=0)",
}


@pytest.mark.parametrize("body", STILL_FINE.values(), ids=STILL_FINE.keys())
def test_tensor_safe_uses_stay_fine(body: str) -> None:
    assert whys(body) == [], body


# -- Part 2: precision -----------------------------------------------------------------

HELPERS_VALID = {
    "module helper indexing a tensor": (
        "def pick(features, k):\n    return features[..., k]\n",
        "return pick(x, n)",
    ),
    "helper by keyword": (
        "def pick(features, k):\n    return features[..., k]\n",
        "return pick(features=x, k=n)",
    ),
    "two levels": (
        "def pick(features, k):\n    return features[..., k]\n"
        "def outer(t, j):\n    return pick(t, j) * 2.0\n",
        "return outer(x, n)",
    ),
    "helper result used in tf": (
        "def scale(t, k):\n    return t * tf.cast(k, tf.float32)\n",
        "y = scale(x, n)\nreturn tf.reduce_sum(y)",
    ),
}


@pytest.mark.parametrize("name", HELPERS_VALID)
def test_helpers_that_use_the_value_as_a_tensor_are_followed(name: str) -> None:
    prelude, body = HELPERS_VALID[name]
    assert whys(body, prelude=prelude) == []


HELPERS_INVALID = {
    "range in a helper": (
        "def repeat(t, k):\n    return [t for _ in range(k)]\n",
        "return tf.stack(repeat(x, n))",
        "where `k` Python range() needs a Python int",
    ),
    "helper two levels down": (
        "def repeat(t, k):\n    return [t for _ in range(k)]\n"
        "def outer(t, j):\n    return tf.stack(repeat(t, j))\n",
        "return outer(x, n)",
        "passed to `outer(...)`",
    ),
    "helper returning the Python value": (
        "def same(k):\n    return k\n",
        "return same(n)",
        "returned as a Python value",
    ),
    "helper with *args": (
        "def pick(*args):\n    return args[0][..., args[1]]\n",
        "return pick(x, n)",
        "which may need a Python value",
    ),
    "recursive helper": (
        "def deep(t, k):\n    return deep(t, k - 1)\n",
        "return deep(x, n)",
        "which may need a Python value",
    ),
    "decorated helper": (
        "import functools\n@functools.lru_cache\ndef pick(features, k):\n    return features[..., k]\n",
        "return pick(x, n)",
        "which may need a Python value",
    ),
    "user criterion is followed": (
        "def criterion(a, b):\n    return int(b)\n",
        "return x * criterion(x, n)",
        "where `b` int() needs a Python value",
    ),
}


@pytest.mark.parametrize("name", HELPERS_INVALID)
def test_helpers_that_need_python_values_still_block(name: str) -> None:
    prelude, body, expected = HELPERS_INVALID[name]
    found = whys(body, prelude=prelude)
    assert any(expected in w for w in found), found


METHOD_SRC = HEADER + textwrap.dedent(
    """\
    class Model(tf.Module):
        def _pick(self, features, k):
            return features[:, k]

        def _repeat(self, t, k):
            return [t] * k

        @tf.function
        def good(self, x, n):
            return self._pick(x, n)

        @tf.function
        def bad(self, x, n):
            return tf.stack(self._repeat(x, n))
    """
)


def test_self_methods_are_followed() -> None:
    assert whys("", src=METHOD_SRC, qualname="Model.good") == []
    found = whys("", src=METHOD_SRC, qualname="Model.bad")
    assert any("passed to `self._repeat(...)`" in w and "repeats a Python list" in w for w in found)


def test_overridden_method_is_not_followed() -> None:
    src = METHOD_SRC + textwrap.dedent(
        """\
        class Other(Model):
            def _pick(self, features, k):
                return [features] * k
        """
    )
    found = whys("", src=src, qualname="Model.good")
    assert any("which may need a Python value" in w for w in found), found


TAPE_PRELUDE = "model = keras.Sequential([keras.layers.Dense(1)])\n"

TF_TABLE_VALID = {
    "tape.gradient of a weighted loss": (
        "def criterion(y, p):\n    return tf.reduce_mean((y - p) ** 2)\n",
        "with tf.GradientTape() as tape:\n"
        "    out = x * 2.0\n"
        "    loss = w * criterion(x, out)\n"
        "return tape.gradient(loss, [x])",
    ),
    "keras loss object": (
        "criterion = keras.losses.MeanSquaredError()\n",
        "loss = w * criterion(x, x * 2.0)\nreturn loss",
    ),
    "keras loss function": ("", "return w * keras.losses.mean_squared_error(x, x * 2.0)"),
    "keras loss object called with the weight": (
        "criterion = keras.losses.MeanSquaredError()\n",
        "return criterion(x, x * 2.0, sample_weight=w)",
    ),
    "metric update_state": (
        "metric = keras.metrics.Mean()\n",
        "metric.update_state(x, sample_weight=w)\nreturn x",
    ),
}


def weight_whys(body: str, prelude: str) -> list[str]:
    src = (
        HEADER
        + textwrap.dedent(prelude)
        + "\n@tf.function\ndef f(x, w):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )
    found = python_only_uses_in_text(src, "f", ["w"], ["x"], {"x": "float32", "w": "float32"})
    return [u.why for u in found["w"]]


@pytest.mark.parametrize("name", TF_TABLE_VALID)
def test_tf_and_keras_calls_that_take_tensors(name: str) -> None:
    prelude, body = TF_TABLE_VALID[name]
    assert weight_whys(body, prelude) == []


TF_TABLE_INVALID = {
    "keras layer size": ("", "return keras.layers.Dense(w)(x)", "takes a Python value"),
    "keras loss constructor": (
        "",
        "return keras.losses.Huber(delta=w)(x, x)",
        "takes a Python value",
    ),
    "keras metric function config": (
        "",
        "return keras.metrics.top_k_categorical_accuracy(x, x, k=w)",
        "an argument autosig does not know",
    ),
    "loss object positional beyond sample_weight": (
        "criterion = keras.losses.MeanSquaredError()\n",
        "return criterion(x, x, None, w)",
        "an argument autosig does not know",
    ),
    "unknown object call": ("", "return model(x) * w + helper(w)", "which may need a Python"),
    "user criterion returning Python": (
        "def criterion(y, p):\n    return float(p)\n",
        "return x * criterion(x, w)",
        "float() needs a Python value",
    ),
}


@pytest.mark.parametrize("name", TF_TABLE_INVALID)
def test_calls_not_in_the_table_still_block(name: str) -> None:
    prelude, body, expected = TF_TABLE_INVALID[name]
    found = weight_whys(body, prelude)
    assert any(expected in w for w in found), found


SUBSCRIPT_VALID = {
    "model output column": "p = model(x)\nreturn p[:, n]",
    "call result ellipsis": "return model(x)[..., n]",
    "tf op result": "p = tf.nn.softmax(x)\nreturn p[:, n]",
    "newaxis": "p = model(x)\nreturn p[None, n]",
}


@pytest.mark.parametrize("body", SUBSCRIPT_VALID.values(), ids=SUBSCRIPT_VALID.keys())
def test_multi_axis_subscripts_on_tensors(body: str) -> None:
    assert whys(body) == []


SUBSCRIPT_INVALID = {
    "single index on a call result": "p = model(x)\nreturn p[n]",
    "multi-axis on a Python object": "return table[:, n]",
    "multi-axis on a call without tensors": "p = load()\nreturn p[:, n]",
    "two plain indices": "p = model(x)\nreturn p[0, n]",
}


@pytest.mark.parametrize("body", SUBSCRIPT_INVALID.values(), ids=SUBSCRIPT_INVALID.keys())
def test_other_subscripts_still_block(body: str) -> None:
    assert whys(body), body


def test_unused_parameter_has_no_use() -> None:
    assert whys("return x * 2.0") == []


def test_returned_string_stays_python_with_a_reason() -> None:
    src = HEADER + "@tf.function\ndef f(x, n):\n    tf.io.write_file(n, x)\n    return n\n"
    found = python_only_uses_in_text(src, "f", ["n"], ["x"], {"x": "string", "n": "string"})
    (use,) = found["n"]
    assert "returned as a Python value" in use.why
    assert "str" in use.why and "tensor" in use.why


def test_lambda_default_captures_the_value() -> None:
    found = whys("return tf.map_fn(lambda t, k=n: t * k, x)")
    assert any("captured by a lambda" in w for w in found), found


def test_helper_with_another_decorator_is_not_followed() -> None:
    prelude = "def my_function(f):\n    return f\n@my_function\ndef pick(features, k):\n    return features[..., k]\n"
    found = whys("return pick(x, n)", prelude=prelude)
    assert any("which may need a Python value" in w for w in found), found


def test_tf_function_helper_is_followed() -> None:
    prelude = "@tf.function\ndef pick(features, k):\n    return features[..., k]\n"
    assert whys("return pick(x, n)", prelude=prelude) == []


def test_int_parameter_meeting_a_float_parameter_stays_python() -> None:
    src = HEADER + "def f(x, n, lr):\n    return x * (n * lr)\n"
    dtypes = {"x": "float32", "n": "int32", "lr": "float32"}
    found = python_only_uses_in_text(src, "f", ["n", "lr"], ["x"], dtypes)
    assert any("meets `lr` (planned float32)" in u.why for u in found["n"]), found
    assert found["lr"] == []


def test_int32_parameter_meeting_a_widened_one_stays_python() -> None:
    src = HEADER + "def f(x, n, m):\n    return tf.cast(n * 1000003 + m * 2, tf.float32)\n"
    dtypes = {"x": "float32", "n": "int64", "m": "int32"}
    found = python_only_uses_in_text(src, "f", ["n", "m"], ["x"], dtypes)
    assert any("meets `n` (planned int64)" in u.why for u in found["m"]), found


def _other_module_whys(tmp_path: Path, helpers: str, body: str, resolver: bool = True) -> list[str]:
    from autosig.source.project_modules import ProjectModules

    package = tmp_path / "proj"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(HEADER + textwrap.dedent(helpers))
    src = (
        HEADER
        + "from proj.helpers import pick\nfrom proj import helpers\n"
        + ("\n@tf.function\ndef f(x, n):\n" + textwrap.indent(textwrap.dedent(body), "    "))
    )
    wrapper = MetadataWrapper(parse_module(src), unsafe_skip_copy=True)
    function = find_function(wrapper.module, "f")
    assert function is not None
    modules = ProjectModules([tmp_path]) if resolver else None
    found = python_only_uses(
        wrapper, function, ["n"], ["x"], {"x": "float32", "n": "int32"}, modules=modules
    )
    return [u.why for u in found["n"]]


PICK = "def pick(features, k):\n    return features[..., k]\n"
REPEAT = "def pick(features, k):\n    return [features] * k\n"


def test_functions_of_other_project_modules_are_followed(tmp_path: Path) -> None:
    assert _other_module_whys(tmp_path, PICK, "return pick(x, n)") == []
    assert _other_module_whys(tmp_path, PICK, "return helpers.pick(x, n)") == []


def test_other_module_helper_needing_a_python_value_blocks(tmp_path: Path) -> None:
    found = _other_module_whys(tmp_path, REPEAT, "return tf.stack(pick(x, n))")
    assert any("repeats a Python list" in w for w in found), found


def test_without_a_resolver_other_modules_are_not_followed(tmp_path: Path) -> None:
    found = _other_module_whys(tmp_path, PICK, "return pick(x, n)", resolver=False)
    assert any("which may need a Python value" in w for w in found), found


def test_library_modules_are_not_followed(tmp_path: Path) -> None:
    from autosig.source.project_modules import ProjectModules

    resolve = ProjectModules([tmp_path])
    assert resolve("numpy") is None
    assert resolve("not a module") is None


# -- the Python-number stage's facts (number_facts, number_reads) -------------------------


def _facts(body: str, params: list[str], dtypes: dict[str, str], signature: str):  # noqa: ANN202
    from autosig.analysis.python_values import number_facts

    wrapper = MetadataWrapper(parse_module(_src(body, signature=signature)), unsafe_skip_copy=True)
    function = find_function(wrapper.module, "f")
    assert function is not None
    return number_facts(wrapper, function, params, ["x"], dtypes, {})


def test_number_reads_name_exponents_seeds_and_float32_casts() -> None:
    body = """\
    y = x ** p
    z = tf.random.stateless_uniform([2], seed=[s, 1])
    w = tf.cast(c, tf.float32) + tf.cast(c, x.dtype)
    return y + z + w + tf.cast(o, tf.int32)
    """
    dtypes = {"x": "float32", "p": "int32", "s": "int32", "c": "int32", "o": "int32"}
    facts = _facts(body, ["p", "s", "c", "o"], dtypes, "x, p, s, c, o")
    assert facts.reads["p"].exponent == "x ** p"
    assert facts.reads["s"].seed and not facts.reads["p"].seed
    assert facts.reads["c"].float32_casts == ("x",)  # float32 provided x is
    assert facts.reads["o"].float32_casts is None  # a cast to int32
    assert facts.reads["p"].float32_casts is None


def test_number_facts_give_required_dtypes_and_uses_for_planned_dtypes() -> None:
    body = """\
    tf.summary.scalar("loss", tf.reduce_sum(x), step=step)
    for _ in range(n):
        x = x + 1.0
    return x
    """
    dtypes = {"x": "float32", "step": "int32", "n": "int32"}
    facts = _facts(body, ["step", "n"], dtypes, "x, step, n")
    assert facts.required == {"step": "int64"}
    found = facts.uses_with(dict(dtypes, step="int64"), {"step": "int32", "n": "int32"})
    assert found.uses["step"] == [] and found.uses["n"]
    assert found.undecided == frozenset() and found.int64 == frozenset()


def test_uses_with_widens_seeds_only_where_int64_changes_nothing() -> None:
    body = """\
    a = tf.random.stateless_uniform([2], seed=[s, 1])
    return x + a + tf.cast(t, tf.float32) * tf.ones([2], tf.int32)[0:t]
    """
    dtypes = {"x": "float32", "s": "int32", "t": "int32"}
    facts = _facts(body, ["s", "t"], dtypes, "x, s, t")
    converted = {"s": "int32", "t": "int32"}
    found = facts.uses_with(dtypes, converted, widen=["s"])
    plain = python_only_uses(
        facts.wrapper, facts.function, ["s", "t"], ["x"], dtypes, {}, converted
    )
    assert found.int64 == frozenset({"s"})
    assert found.uses == plain  # an int64 seed changes no use

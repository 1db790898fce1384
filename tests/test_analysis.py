"""Static usage analysis: which parameters the code needs as Python values."""

from __future__ import annotations

import textwrap

import pytest
from infer_helpers import python_only_uses_in_text

from autosig.analysis.python_values import find_function
from autosig.source.discover import parse_module

HEADER = "import numpy as np\nimport tensorflow as tf\nfrom tensorflow import keras\n\n"


def uses(body: str, params: str = "n", tensors: str = "x") -> list[str]:
    """The reasons reported for parameter ``n`` of ``f(x, n, ...)`` with ``body``."""
    names = [p.strip() for p in params.split(",")]
    tensor_names = [t.strip() for t in tensors.split(",") if t.strip()]
    signature = ", ".join(tensor_names + names)
    src = (
        HEADER
        + f"@tf.function\ndef f({signature}):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )
    found = python_only_uses_in_text(src, "f", names, tensor_names)
    return [u.why for u in found[names[0]]]


PYTHON_ONLY = {
    "range in a comprehension": "return tf.add_n([x * i for i in range(n)])",
    "range in a for loop": "for i in range(n):\n    x = x + 1\nreturn x",
    "range through an alias": "m = n + 1\nk = m * 2\nreturn [x for _ in range(k)]",
    "list repetition": "parts = [x] * n\nreturn tf.concat(parts, 0)",
    "list repetition reversed": "return tf.stack(n * [x])",
    "repeat a named list": "base = [x, x]\nreturn tf.stack(base * n)",
    "slicing a Python list": "layers = [x, x + 1, x + 2]\nreturn layers[:n]",
    "indexing a Python list": "return self_layers[n]",
    "if deciding the output": "if n > 2:\n    return x\nreturn x * 2",
    "if assigning": "if n:\n    y = x\nelse:\n    y = x + 1\nreturn y",
    "while loop": "while n > 0:\n    x = x + 1\n    n -= 1\nreturn x",
    "conditional expression": "return x if n else -x",
    "dict key": "table = {n: x}\nreturn table",
    "f-string": 'tf.print(f"layer_{n}")\nreturn x',
    "percent formatting": 'name = "block_%d" % n\nreturn tf.identity(x, name=name)',
    "string concatenation": 'return tf.identity(x, name="layer" + n)',
    "int() conversion": "return x * int(n)",
    "len()": "return x * len(n)",
    "isinstance": "if isinstance(n, int):\n    tf.print(n)\nreturn x",
    "numpy call": "return x + np.zeros(n)",
    "unknown helper": "return helper(x, n)",
    "keras layer size": "return keras.layers.Dense(n)(x)",
    "tf.keras layer size": "return tf.keras.layers.Dense(n)(x)",
    "tf.split count": "return tf.split(x, n)",
    "returned as Python": "return n",
    "returned inside a structure": "return {'out': x, 'n': n}",
    "stored in Python state": "obj.count = n\nreturn x",
    "augmented state": "obj.count += n\nreturn x",
    "assert": "assert n > 0\nreturn x",
    "boolean operator": "y = n and 3\nreturn x * y",
    "not": "return x * (not n)",
    "chained comparison": "ok = 0 < n < 10\nreturn x",
    "walrus alias into range": "if (m := n) > 0:\n    pass\nreturn [x for _ in range(m)]",
    "closure": "def inner():\n    return [x for _ in range(n)]\nreturn inner()",
    "tuple unpacking alias": "a, b = n, 2\nreturn [x] * a",
    "for over a Python value": "for item in n:\n    x = x + item\nreturn x",
    "set literal": "return x, {n}",
    "python str method": "if n.endswith('.png'):\n    tf.print(x)\nreturn x",
    "python method through an alias": "m = n\nreturn x * m.bit_length()",
    "method of a tensor we cannot vouch for": "return x.__add__(n)",
}

TENSOR_SAFE = {
    "arithmetic": "return x * n + 1",
    "tf call": "return tf.cast(n, tf.float32) * x",
    "tf shape argument": "return tf.zeros([n, 3]) + x",
    "shape list through a name": "shape = [n, 3]\nreturn tf.reshape(x, shape)",
    "tf.range": "return tf.reduce_sum(tf.range(n))",
    "tensor slicing": "return x[:n]",
    "tensor slicing 2d": "return x[:, :n]",
    "slicing a derived tensor": "y = tf.reshape(x, [-1])\nreturn y[:n]",
    "variable assign_add": "self_v.assign_add(n)\nreturn x",
    "nested attribute assign": "opt.learning_rate.assign(n)\nreturn x",
    "tf.print": "tf.print('step', n)\nreturn x",
    "print": "print(n)\nreturn x",
    "abs": "return x * abs(n)",
    "if with only effects": "if n % 10 == 0:\n    tf.print(n)\nreturn x",
    "unused": "return x",
    "returned through tf": "return tf.identity(x) * n",
    "summary step": "tf.summary.scalar('loss', tf.reduce_sum(x), step=n)\nreturn x",
    "one_hot depth": "return tf.one_hot(tf.cast(x, tf.int32), n)",
    "comparison into tf.where": "return tf.where(x > n, x, n)",
    "shadowed name elsewhere": "y = x * n\nreturn y",
    "keras 3 ops": "return keras.ops.mean(x) * n",
}


@pytest.mark.parametrize("body", PYTHON_ONLY.values(), ids=PYTHON_ONLY.keys())
def test_python_only_uses_are_reported(body: str) -> None:
    assert uses(body), body


@pytest.mark.parametrize("body", TENSOR_SAFE.values(), ids=TENSOR_SAFE.keys())
def test_tensor_safe_uses_are_not_reported(body: str) -> None:
    assert uses(body) == [], body


def test_use_names_line_and_code() -> None:
    src = (
        HEADER
        + "class M:\n    @tf.function\n    def step(self, x, k):\n        y = x\n        return [y for _ in range(k)]\n"
    )
    found = python_only_uses_in_text(src, "M.step", ["k"], ["x"])
    (use,) = found["k"]
    assert use.line == 9
    assert use.code == "range(k)"
    assert use.describe() == "Python range() needs a Python int: `range(k)` (line 9)"


def test_only_requested_params_are_reported() -> None:
    src = HEADER + "def f(x, n, m):\n    return [x] * n + [x for _ in range(m)]\n"
    found = python_only_uses_in_text(src, "f", ["m"], ["x"])
    assert set(found) == {"m"}
    assert [u.code for u in found["m"]] == ["range(m)"]


def test_range_shadowed_by_a_local_function_is_not_the_builtin() -> None:
    src = (
        HEADER + "def range(n):\n    return tf.range(n)\n\ndef f(x, n):\n    return x + range(n)\n"
    )
    found = python_only_uses_in_text(src, "f", ["n"], ["x"])
    # A module-level function we cannot see into: still in doubt, but not "range()".
    assert all("range()" not in u.why for u in found["n"])


def test_tf_alias_is_resolved() -> None:
    src = "import tensorflow as tf2\n\ndef f(x, n):\n    return tf2.zeros([n]) + x\n"
    assert python_only_uses_in_text(src, "f", ["n"], ["x"]) == {"n": []}


def test_lambda_body_returned() -> None:
    src = "import tensorflow as tf\nf = tf.function(lambda x, n: n)\n"
    module = parse_module(src)
    assert find_function(module, "<lambda>") is not None
    found = python_only_uses_in_text(src, "<lambda>", ["n"], ["x"])
    assert [u.why for u in found["n"]] == ["returned as a Python value"]


def test_find_function_nested_names() -> None:
    module = parse_module(
        "class A:\n    def m(self):\n        def inner(y):\n            return y\n        return inner\n"
    )
    inner = find_function(module, "A.m.<locals>.inner")
    assert inner is not None and inner.name.value == "inner"
    assert find_function(module, "A.missing") is None
    assert find_function(module, "B.m") is None


def test_unknown_qualname_raises() -> None:
    with pytest.raises(LookupError):
        python_only_uses_in_text("def f(x):\n    return x\n", "g", ["x"])


def mixing(body: str, dtypes: dict[str, str], param: str = "n") -> list[str]:
    src = HEADER + "def f(x, w, n, lr):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    found = python_only_uses_in_text(src, "f", [param], ["x", "w"], dtypes)
    return [u.why for u in found[param]]


F32 = {"x": "float32", "w": "float32", "n": "int32", "lr": "float32"}


@pytest.mark.parametrize(
    ("body", "dtypes", "param", "flagged"),
    [
        (
            "return x * n",
            F32,
            "n",
            "meets a float32 tensor: as a int32 tensor it would need tf.cast",
        ),
        ("return x * n", {**F32, "x": "int32"}, "n", None),
        ("return x > n", F32, "n", "meets a float32 tensor"),
        ("return n * 0.5 + x", F32, "n", "meets a float: as a int32 tensor this fails"),
        ("return tf.fill([3], n / 2)", F32, "n", "true division"),
        ("return tf.fill([3], n // 2)", F32, "n", None),
        ("return tf.zeros([3]) * n", F32, "n", "meets a float32 tensor"),
        ("y = tf.cast(x, tf.int32)\nreturn y * n", F32, "n", None),
        ("y = tf.cast(x, 'int64')\nreturn y + n", F32, "n", "meets a int64 tensor"),
        ("return tf.reduce_sum(x, axis=1) * tf.cast(n, tf.float32)", F32, "n", None),
        ("return x * lr", F32, "lr", None),
        ("return x * lr", {**F32, "x": "float64"}, "lr", "meets a float64 tensor: as a float32"),
        ("return tf.matmul(x, w) * lr", F32, "lr", None),
        ("return tf.nn.relu(x) * lr", {**F32, "x": "float16"}, "lr", "meets a float16 tensor"),
        ("y = x * 2.0\nreturn y - lr", {**F32, "x": "float64"}, "lr", "meets a float64 tensor"),
        ("return tf.shape(x)[0] * n", F32, "n", "meets a tensor of unknown dtype"),
    ],
)
def test_dtype_mixing(body: str, dtypes: dict[str, str], param: str, flagged: str | None) -> None:
    found = mixing(body, dtypes, param)
    if flagged is None:
        assert found == []
    else:
        assert any(flagged in why for why in found), found


def test_structural_use_is_reported_before_a_dtype_mismatch() -> None:
    src = HEADER + "def f(x, k):\n    return tf.add_n([x * i for i in range(k)])\n"
    found = python_only_uses_in_text(src, "f", ["k"], ["x"], {"x": "float32", "k": "int32"})
    assert found["k"][0].code == "range(k)"
    assert any("meets a float32 tensor" in u.why for u in found["k"])


def test_summary_step_requires_int64() -> None:
    from libcst.metadata import MetadataWrapper

    from autosig.analysis.python_values import required_dtypes

    src = HEADER + (
        "def f(x, step, other):\n"
        "    s = step + 1\n"
        "    tf.summary.scalar('loss', tf.reduce_sum(x), step=s)\n"
        "    tf.summary.experimental.set_step(step)\n"
        "    return x * tf.cast(other, tf.float32)\n"
    )
    wrapper = MetadataWrapper(parse_module(src), unsafe_skip_copy=True)
    function = find_function(wrapper.module, "f")
    assert function is not None
    assert required_dtypes(wrapper, function, ["step", "other"]) == {"step": "int64"}


def test_analysis_never_crashes_on_arbitrary_functions() -> None:
    """hypothesmith generates valid Python; the analysis must handle any of it."""
    import libcst as cst
    from hypothesis import HealthCheck, given, settings
    from libcst.metadata import MetadataWrapper

    hypothesmith = pytest.importorskip("hypothesmith")

    from autosig.analysis.python_values import python_only_uses, required_dtypes

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(hypothesmith.from_node())
    def check(source: str) -> None:
        try:
            module = cst.parse_module(source)
        except (cst.ParserSyntaxError, RecursionError):
            return
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        functions = [
            node
            for node in _walk(wrapper.module)
            if isinstance(node, (cst.FunctionDef, cst.Lambda))
        ]
        for function in functions[:5]:
            names = [p.name.value for p in function.params.params]
            dtypes = dict.fromkeys(names, "int32")
            python_only_uses(wrapper, function, names, names[:1], dtypes)
            required_dtypes(wrapper, function, names)

    check()


def _walk(node):  # type: ignore[no-untyped-def]
    yield node
    for child in node.children:
        yield from _walk(child)

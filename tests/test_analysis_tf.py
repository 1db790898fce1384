"""The Python-value analysis against real TensorFlow (CPU): original vs tensorized.

For each pattern autosig plans a spec from a profile of small values; the test then
runs the original tf.function (Python values) and the same function with the planned
``input_signature`` on values the profile never saw (step 3000, large n) and requires
identical results, or checks that autosig keeps the parameter a Python value (and, where
it helps, that the naive int32 tensorization would indeed have changed the result).
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autosig.infer.observations import InferOptions
from autosig.infer.plan import FunctionPlan
from autosig.infer.planner import infer_function
from autosig.infer.specs import TensorSpecNode
from autosig.profile.format import CallSignature, FunctionRecord, ParamInfo

pytestmark = pytest.mark.tf

_counter = itertools.count()


def _describe(value: Any) -> dict[str, Any]:
    if isinstance(value, (int, float, str)):
        return {"kind": "python", "type": type(value).__name__, "value": value}
    array = np.asarray(value)
    return {"kind": "tensor", "shape": list(array.shape), "dtype": str(array.dtype)}


def plan_for(src: str, calls: list[dict[str, Any]]) -> FunctionPlan:
    """autosig's plan for ``f`` in ``src`` profiled on ``calls`` (param -> value), as for
    a caller that knows the domain (``guarded_trace=False``): these tests are about the
    dtype a Python number's spec takes, not about whether a signature is safe."""
    names = list(calls[0])
    signatures: dict[str, CallSignature] = {}
    for index, call in enumerate(calls):
        sig = CallSignature(
            args={n: _describe(call[n]) for n in names},
            passed=dict.fromkeys(names, "positional"),
            first_call=index,
        )
        sig = signatures.setdefault(sig.key(), sig)
        sig.calls += 1
    line = next(i for i, t in enumerate(src.splitlines(), 1) if t.startswith("def f("))
    record = FunctionRecord(
        path="m.py",
        qualname="f",
        line=line,
        source_sha256=None,
        editable=True,
        params=[ParamInfo(n, "POSITIONAL_OR_KEYWORD") for n in names],
        calls=len(calls),
        traces=len(signatures),
        signatures=list(signatures.values()),
    )
    return infer_function(record, src, InferOptions(guarded_trace=False))


def load(tmp_path: Path, src: str) -> Any:
    name = f"autosig_pyvalues_{next(_counter)}"
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def tensorized(function: Any, plan: FunctionPlan) -> Any:
    import tensorflow as tf

    assert plan.action == "signature", plan.reasons
    signature = []
    for p in plan.params:
        assert isinstance(p.spec, TensorSpecNode), p
        signature.append(tf.TensorSpec(p.spec.shape, getattr(tf, p.spec.dtype)))
    return tf.function(function.python_function, input_signature=signature)


def same(a: Any, b: Any) -> None:
    import tensorflow as tf

    flat_a, flat_b = tf.nest.flatten(a), tf.nest.flatten(b)
    assert len(flat_a) == len(flat_b)
    for x, y in zip(flat_a, flat_b, strict=True):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype, (x.dtype, y.dtype)
        np.testing.assert_array_equal(x, y)


def src_of(body: str, signature: str = "x, n", prelude: str = "") -> str:
    return (
        "import tensorflow as tf\nfrom tensorflow import keras\n\n"
        + textwrap.dedent(prelude)
        + f"\n\n@tf.function\ndef f({signature}):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )


X = np.ones([3], np.float32)
PROFILE = [{"x": X, "n": n} for n in range(1, 13)]
UNSEEN = [3000, 1_000_000, 2_000_000]

# -- Part 1: overflow gives int64, and int64 computes what Python computed ------------

INT64_CASES = {
    "lcg seed": "seed = n * 1664525\nreturn x + tf.random.stateless_uniform([3], seed=[seed, 0])",
    "bytes seen": "bytes_seen = n * 4096 * 4096\nreturn x + tf.cast(bytes_seen, tf.float32)",
    "measured step * 1000003": "return tf.cast(n * 1000003, tf.float64)",
    "augmented product": "s = n\ns *= 100000\nreturn tf.cast(s, tf.float64) + tf.cast(x, tf.float64)",
    "int64 tensor partner": "y = tf.cast(x, tf.int64)\nreturn y + n * 1000003",
}


@pytest.mark.parametrize("name", INT64_CASES)
def test_overflowing_arithmetic_gets_int64_and_matches(tmp_path: Path, name: str) -> None:
    src = src_of(INT64_CASES[name])
    plan = plan_for(src, PROFILE)
    spec = {p.name: p.spec for p in plan.params}["n"]
    assert spec == TensorSpecNode((), "int64"), plan.reasons
    module = load(tmp_path, src)
    fixed = tensorized(module.f, plan)
    for n in UNSEEN:
        same(module.f(X, n), fixed(X, n))


def test_int32_tensorization_would_have_wrapped(tmp_path: Path) -> None:
    """The measured failure the int64 rule prevents (TF-FACTS: -1294958336)."""
    import tensorflow as tf

    module = load(tmp_path, src_of("return tf.cast(n * 1000003, tf.float64)"))
    naive = tf.function(
        module.f.python_function,
        input_signature=[tf.TensorSpec([3], tf.float32), tf.TensorSpec([], tf.int32)],
    )
    original = float(module.f(X, 3000))
    assert original > 3e9
    assert float(naive(X, 3000)) == 3000 * 1000003 - 2**32  # wrapped around


KEEP_PYTHON = {
    "int64 meets an int32 tensor": "y = tf.cast(x, tf.int32)\nreturn y + n * 1000003",
    "result dtype follows the int": "return tf.fill([2], n * 1000003)",
    "beyond int64": "return tf.cast(n ** 3, tf.float64)",
    "shift": "return tf.cast(1 << n, tf.float64)",
    "tf.constant": "return tf.constant(n, dtype=tf.int64)",
    "stateful seed": "return tf.random.uniform([3], seed=n) * 0.0 + x",
    "axis": "return tf.reduce_sum(tf.reshape(x, [1, 3]), axis=n % 2)",
    "lambda capture": "return tf.map_fn(lambda t: t * tf.cast(n, tf.float32), x)",
    "nested function": "def scale(t):\n    return t * tf.cast(n, tf.float32)\nreturn scale(x)",
    "trace-log print": "print('tracing f with', n)\nreturn x * tf.cast(n, tf.float32)",
}


@pytest.mark.parametrize("name", KEEP_PYTHON)
def test_meaning_changing_uses_stay_python(tmp_path: Path, name: str) -> None:
    src = src_of(KEEP_PYTHON[name])
    plan = plan_for(src, PROFILE)
    assert plan.action != "signature", plan.reasons
    assert any("`n` must stay a Python value" in r for r in plan.reasons), plan.reasons
    module = load(tmp_path, src)
    for n in (1, 2):  # the original still runs as it did
        module.f(X, n)


# -- Part 2: relaxations, each compared on unseen values ---------------------------------


def _compare(
    tmp_path: Path, src: str, profile: list[dict[str, Any]], unseen: list[dict[str, Any]]
) -> FunctionPlan:
    plan = plan_for(src, profile)
    module = load(tmp_path, src)
    fixed = tensorized(module.f, plan)
    for call in unseen:
        same(module.f(**call), fixed(**call))
    assert fixed.experimental_get_tracing_count() == 1
    return plan


def test_helper_indexing_a_tensor_is_tensorized(tmp_path: Path) -> None:
    src = src_of(
        "return pick(x, n) * 2.0",
        prelude="def pick(features, k):\n    return features[..., k]\n",
    )
    feats = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    plan = _compare(
        tmp_path,
        src,
        [{"x": feats, "n": k} for k in (0, 1)],
        [{"x": feats, "n": k} for k in (2, 3, -1)],
    )
    assert {p.name: p.spec for p in plan.params}["n"] == TensorSpecNode((), "int32")


def test_weighted_loss_gradient_is_tensorized(tmp_path: Path) -> None:
    prelude = """\
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input([3]), keras.layers.Dense(2)])
        mse = keras.losses.MeanSquaredError()


        def criterion(y, out):
            return mse(y, out) + tf.reduce_mean(out) * 0.1
        """
    body = """\
        with tf.GradientTape() as tape:
            out = model(x)
            loss = w * criterion(y, out)
        grads = tape.gradient(loss, model.trainable_variables)
        return loss, grads
        """
    src = src_of(body, "x, y, w", prelude)
    xs = np.linspace(0, 1, 12, dtype=np.float32).reshape(4, 3)
    ys = np.ones([4, 2], np.float32)
    plan = _compare(
        tmp_path,
        src,
        [{"x": xs, "y": ys, "w": w} for w in (0.5, 1.0, 2.0)],
        [{"x": xs, "y": ys, "w": w} for w in (0.25, 3.0, 10.0)],
    )
    assert {p.name: p.spec for p in plan.params}["w"] == TensorSpecNode((), "float32")


def test_model_output_column_is_tensorized(tmp_path: Path) -> None:
    prelude = """\
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input([3]), keras.layers.Dense(4)])
        """
    src = src_of("p = model(x)\nreturn p[:, k]", "x, k", prelude)
    xs = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    _compare(
        tmp_path,
        src,
        [{"x": xs, "k": k} for k in (0, 1)],
        [{"x": xs, "k": k} for k in (2, 3)],
    )


def test_unused_epoch_is_tensorized(tmp_path: Path) -> None:
    src = src_of("return x * 2.0", "x, epoch")
    _compare(
        tmp_path,
        src,
        [{"x": X, "epoch": e} for e in (1, 2, 3)],
        [{"x": X, "epoch": e} for e in (40, 5000)],
    )


def test_checkpoint_path_string_is_tensorized(tmp_path: Path) -> None:
    src = src_of(
        "tf.io.write_file(path, tf.strings.reduce_join(tf.strings.as_string(x)))\nreturn x * 1.0",
        "x, path",
    )
    xs = np.arange(3, dtype=np.float32)
    target = tmp_path / "out"
    target.mkdir()
    plan = plan_for(src, [{"x": xs, "path": str(target / f"a{i}")} for i in range(2)])
    assert {p.name: p.spec for p in plan.params}["path"] == TensorSpecNode((), "string")
    module = load(tmp_path, src)
    fixed = tensorized(module.f, plan)
    module.f(xs, str(target / "orig"))
    fixed(xs, str(target / "fixed"))
    assert (target / "orig").read_bytes() == (target / "fixed").read_bytes()


def test_returned_string_is_an_unsafe_fix_that_says_why(tmp_path: Path) -> None:
    src = src_of("tf.io.write_file(path, 'x')\nreturn x, path", "x, path")
    plan = plan_for(src, [{"x": X, "path": str(tmp_path / f"a{i}")} for i in range(2)])
    assert plan.action == "signature" and plan.safety == "unsafe"
    (warning,) = plan.warnings
    assert "`path` is returned" in warning and "bytes tensor where it returned a str" in warning
    module = load(tmp_path, src)
    fixed = tensorized(module.f, plan)
    target = str(tmp_path / "unseen")
    _, before = module.f(X, target)
    _, after = fixed(X, target)
    assert before == target  # a str
    assert after.dtype.name == "string" and after.numpy() == target.encode()  # bytes now


def test_name_argument_string_stays_python(tmp_path: Path) -> None:
    src = src_of("return tf.identity(x, name=tag)", "x, tag")
    plan = plan_for(src, [{"x": X, "tag": t} for t in ("a", "b")])
    assert plan.action != "signature"
    assert any("name=...) takes a Python value" in r for r in plan.reasons), plan.reasons


KERAS_TABLE = {
    "loss function": ("", "return w * keras.losses.mse(y, x)"),
    "loss object with sample_weight": (
        "mse = keras.losses.MeanSquaredError()\n",
        "return mse(y, x, sample_weight=w)",
    ),
    "metric update_state": (
        "metric = keras.metrics.Mean()\n",
        "metric.reset_state()\nmetric.update_state(x, sample_weight=w)\nreturn metric.result()",
    ),
}


@pytest.mark.parametrize("name", KERAS_TABLE)
def test_keras_table_entries_take_a_tensor_weight(tmp_path: Path, name: str) -> None:
    """Each entry of analysis' tensor-taking table, Python float vs float32 tensor."""
    prelude, body = KERAS_TABLE[name]
    src = src_of(body, "x, y, w", prelude)
    xs = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    ys = np.ones([2, 3], np.float32)
    plan = _compare(
        tmp_path,
        src,
        [{"x": xs, "y": ys, "w": w} for w in (0.5, 1.0)],
        [{"x": xs, "y": ys, "w": w} for w in (0.25, 7.0)],
    )
    assert {p.name: p.spec for p in plan.params}["w"] == TensorSpecNode((), "float32")

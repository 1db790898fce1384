"""Check inference against TensorFlow itself: the spec the planner infers from two calls is
TensorFlow's ``most_specific_common_supertype`` of theirs (dense, ragged and sparse; no
spec where TensorFlow has none), and rendered signatures accept real calls, tracing once.
"""

from __future__ import annotations

import importlib.util
import itertools
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from infer_helpers import render_signature

from autosig.infer.observations import InferOptions, infer_leaf
from autosig.infer.planner import infer_function
from autosig.infer.specs import (
    RaggedSpecNode,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    shape_supertype,
)
from autosig.profile.format import CallSignature, FunctionRecord
from autosig.profile.value_tree import align

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def tf() -> Any:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return pytest.importorskip("tensorflow")


def _shape_of(tf_shape: Any) -> Any:
    return None if tf_shape.rank is None else tuple(tf_shape.as_list())


dims = st.one_of(st.integers(min_value=0, max_value=4), st.none())
shapes = st.one_of(st.none(), st.lists(dims, max_size=3).map(tuple))


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(a=shapes, b=shapes)
def test_shape_supertype_matches_tensorflow(tf: Any, a: Any, b: Any) -> None:
    ta = tf.TensorSpec(a, tf.float32)
    tb = tf.TensorSpec(b, tf.float32)
    expected = ta.most_specific_common_supertype([tb])
    assert expected is not None
    assert shape_supertype(a, b) == _shape_of(expected.shape)


def _to_tf(tf: Any, node: SpecNode) -> Any:
    if isinstance(node, TensorSpecNode):
        return tf.TensorSpec(node.shape, getattr(tf, node.dtype))
    if isinstance(node, RaggedSpecNode):
        return tf.RaggedTensorSpec(
            node.shape,
            getattr(tf, node.dtype),
            node.ragged_rank,
            getattr(tf, node.row_splits_dtype),
        )
    assert isinstance(node, SparseSpecNode)
    return tf.SparseTensorSpec(node.shape, getattr(tf, node.dtype))


def _from_tf(tf: Any, spec: Any) -> SpecNode | None:
    if spec is None:
        return None
    if isinstance(spec, tf.RaggedTensorSpec):
        return RaggedSpecNode(
            _shape_of(spec.shape), spec.dtype.name, spec.ragged_rank, spec.row_splits_dtype.name
        )
    if isinstance(spec, tf.SparseTensorSpec):
        return SparseSpecNode(_shape_of(spec.shape), spec.dtype.name)
    return TensorSpecNode(_shape_of(spec.shape), spec.dtype.name)


def _recorded(node: SpecNode) -> dict[str, Any]:
    """How the profile describes a call argument whose exact spec is ``node``."""
    shape = None if node.shape is None else list(node.shape)
    if isinstance(node, TensorSpecNode):
        return {"kind": "tensor", "dtype": node.dtype, "shape": shape}
    if isinstance(node, RaggedSpecNode):
        return {
            "kind": "ragged",
            "dtype": node.dtype,
            "shape": shape,
            "ragged_rank": node.ragged_rank,
            "row_splits_dtype": node.row_splits_dtype,
        }
    return {"kind": "sparse", "dtype": node.dtype, "shape": shape}


def _planned(a: SpecNode, b: SpecNode) -> SpecNode | None:
    """The spec the planner gives an argument seen as ``a`` in one call and ``b`` in another.

    ``relax="none"``: no shape policy on top, so what is left is the supertype rule.
    """
    place = align([(_recorded(a), 1), (_recorded(b), 1)])
    leaf = infer_leaf(place, "`x`", "none", nested=False)
    assert (leaf.spec is None) == (leaf.blocker is not None)
    return leaf.spec


SPEC_PAIRS = [
    (TensorSpecNode((3, 4), "float32"), TensorSpecNode((5, 4), "float32")),
    (TensorSpecNode((3, 4), "float32"), TensorSpecNode((3,), "float32")),
    (TensorSpecNode((3, 4), "float32"), TensorSpecNode((3, 4), "int32")),
    (TensorSpecNode((3, 4), "float32"), TensorSpecNode(None, "float32")),
    (TensorSpecNode((), "string"), TensorSpecNode((), "string")),
    (
        RaggedSpecNode((2, None), "int32", 1, "int64"),
        RaggedSpecNode((3, None), "int32", 1, "int64"),
    ),
    (
        RaggedSpecNode((2, None), "int32", 1, "int64"),
        RaggedSpecNode((3, None, None), "int32", 2, "int64"),
    ),
    (
        RaggedSpecNode((2, None), "int32", 1, "int64"),
        RaggedSpecNode((3, None), "int32", 1, "int32"),
    ),
    (
        RaggedSpecNode((2, None), "int32", 1, "int64"),
        RaggedSpecNode((2, None), "float32", 1, "int64"),
    ),
    (
        RaggedSpecNode((4, None, 3), "float32", 1, "int64"),
        RaggedSpecNode((4, None, 5), "float32", 1, "int64"),
    ),
    (SparseSpecNode((8, 100), "float32"), SparseSpecNode((4, 100), "float32")),
    (SparseSpecNode((8, 100), "float32"), SparseSpecNode((4, 100, 3), "float32")),
    (SparseSpecNode((8, 100), "float32"), SparseSpecNode((8, 100), "float64")),
]


@pytest.mark.parametrize(("a", "b"), SPEC_PAIRS)
def test_planned_spec_is_tensorflows_supertype(tf: Any, a: SpecNode, b: SpecNode) -> None:
    expected = _to_tf(tf, a).most_specific_common_supertype([_to_tf(tf, b)])
    assert _planned(a, b) == _from_tf(tf, expected)


@st.composite
def spec_pairs(draw: st.DrawFn) -> tuple[SpecNode, SpecNode]:
    """Two specs of one kind (dense, ragged or sparse), as two calls could bring them."""
    kind = draw(st.sampled_from(["tensor", "ragged", "sparse"]))
    pair: list[SpecNode] = []
    for _ in range(2):
        dtype = draw(st.sampled_from(["float32", "float64", "int32"]))
        if kind == "tensor":
            pair.append(TensorSpecNode(draw(shapes), dtype))
        elif kind == "sparse":
            pair.append(SparseSpecNode(draw(shapes), dtype))
        else:
            ragged_rank = draw(st.integers(min_value=1, max_value=2))
            outer = draw(st.lists(dims, min_size=1, max_size=2))
            shape = (outer[0], *([None] * ragged_rank), *outer[1:])
            splits = draw(st.sampled_from(["int64", "int32"]))
            pair.append(RaggedSpecNode(shape, dtype, ragged_rank, splits))
    return pair[0], pair[1]


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=spec_pairs())
def test_planned_spec_matches_tensorflow_on_random_calls(
    tf: Any, pair: tuple[SpecNode, SpecNode]
) -> None:
    a, b = pair
    expected = _to_tf(tf, a).most_specific_common_supertype([_to_tf(tf, b)])
    assert _planned(a, b) == _from_tf(tf, expected)


# -- real calls through rendered signatures ---------------------------------------------------


def _profile(
    tf: Any, fn: Any, calls: list[tuple[tuple[Any, ...], dict[str, Any]]], src: str, name: str
) -> FunctionRecord:
    """Describe real calls exactly as the recorder does, one CallSignature per distinct call."""
    from autosig.profile.describe import Binder, Describer, ScalarFolder, TFTypes

    describer = Describer(TFTypes.load())
    binder = Binder(fn)
    folder = ScalarFolder()
    signatures: dict[str, CallSignature] = {}
    for index, (args, kwargs) in enumerate(calls):
        bound, passed = binder.bind(args, kwargs)
        described = {n: describer.value(describer.token(v, n, folder, [])) for n, v in bound}
        sig = CallSignature(
            args=described,
            passed={n: p for (n, _), p in zip(bound, passed, strict=True)},
            first_call=index,
        )
        sig = signatures.setdefault(sig.key(), sig)
        sig.calls += 1
    line = next(i for i, text in enumerate(src.splitlines(), 1) if text.startswith(f"def {name}("))
    return FunctionRecord(
        path="m.py",
        qualname=name,
        line=line,
        source_sha256=None,
        editable=True,
        params=binder.param_infos(describer),
        calls=len(calls),
        traces=len(signatures),
        signatures=list(signatures.values()),
    )


def _same(tf: Any, a: Any, b: Any) -> None:
    flat_a = tf.nest.flatten(a, expand_composites=True)
    flat_b = tf.nest.flatten(b, expand_composites=True)
    assert len(flat_a) == len(flat_b)
    for x, y in zip(flat_a, flat_b, strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6)


_modules = itertools.count()
_SCRATCH: list[tempfile.TemporaryDirectory[str]] = []


@pytest.fixture(scope="module", autouse=True)
def _scratch_root() -> Any:
    """One temporary folder for the module's case files, removed when the module ends."""
    holder = tempfile.TemporaryDirectory(prefix="autosig-tf-")
    _SCRATCH.append(holder)
    yield
    _SCRATCH.remove(holder)
    holder.cleanup()


def _scratch_dir() -> Path:
    """A fresh folder for one case's file (under the module's temporary folder)."""
    return Path(tempfile.mkdtemp(dir=_SCRATCH[-1].name))


def _load(src: str, directory: Path) -> Any:
    """Import ``src`` from a real file so AutoGraph can read its source."""
    name = f"autosig_tf_case_{next(_modules)}"
    path = directory / f"{name}.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check(tf: Any, src: str, name: str, calls: list[Any], relax: str = "none") -> str:
    """Infer a signature from real calls, apply it, and replay every call through it."""
    src = textwrap.dedent(src)
    original = getattr(_load(src, _scratch_dir()), name)
    python_fn = original.python_function
    record = _profile(tf, python_fn, calls, src, name)
    assert original.experimental_get_tracing_count() == 0
    plan = infer_function(record, src, InferOptions(relax=relax, guarded_trace=False))
    assert plan.action == "signature", plan.reasons
    rendered = render_signature(plan.signature_specs)
    signed = tf.function(python_fn, input_signature=eval(rendered, {"tf": tf}))  # noqa: S307
    for args, kwargs in calls:
        _same(tf, signed(*args, **kwargs), original(*args, **kwargs))
    assert original.experimental_get_tracing_count() == record.traces > 1
    assert signed.experimental_get_tracing_count() == 1
    return rendered


def test_varying_shapes(tf: Any) -> None:
    src = """
    import tensorflow as tf

    @tf.function
    def f(x, y):
        return tf.reduce_sum(x, axis=1) + y
    """
    calls = [((tf.ones([b, n]), tf.zeros([b])), {}) for b, n in ((2, 3), (4, 3), (4, 7), (1, 1))]
    assert _check(tf, src, "f", calls) == (
        "[tf.TensorSpec(shape=[None, None], dtype=tf.float32), "
        "tf.TensorSpec(shape=[None], dtype=tf.float32)]"
    )


def test_rank_change_and_numpy(tf: Any) -> None:
    src = """
    import tensorflow as tf

    @tf.function
    def f(x):
        return tf.reduce_sum(x)
    """
    calls = [((np.ones([3, 2]),), {}), ((np.ones([5]),), {}), ((np.ones([2, 2, 2]),), {})]
    assert _check(tf, src, "f", calls) == "[tf.TensorSpec(shape=None, dtype=tf.float64)]"


def test_nested_dict_and_tuple(tf: Any) -> None:
    src = """
    import tensorflow as tf

    @tf.function
    def f(batch, pair):
        a, b = pair
        return tf.reduce_sum(batch["ids"]) + tf.cast(tf.size(batch["mask"]), tf.int32) + a + b
    """
    calls = [
        (
            (
                {"ids": tf.ones([2, n], tf.int32), "mask": tf.ones([2, n], tf.bool)},
                (tf.constant(1), tf.constant(n)),
            ),
            {},
        )
        for n in (3, 5, 8)
    ]
    rendered = _check(tf, src, "f", calls)
    assert "'ids': tf.TensorSpec(shape=[2, None], dtype=tf.int32)" in rendered


def test_ragged_and_sparse(tf: Any) -> None:
    src = """
    import tensorflow as tf

    @tf.function
    def f(r, s):
        return tf.reduce_sum(r.values) + tf.cast(tf.sparse.reduce_sum(s), tf.int32)
    """

    def sparse(n: int) -> Any:
        return tf.sparse.SparseTensor([[0, 0]], [1], [n, 10])

    calls = [
        ((tf.ragged.constant([[1, 2], [3]]), sparse(2)), {}),
        ((tf.ragged.constant([[1], [2], [3, 4, 5]]), sparse(5)), {}),
    ]
    rendered = _check(tf, src, "f", calls)
    assert "tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32, ragged_rank=1)" in rendered
    assert "tf.SparseTensorSpec(shape=[None, 10], dtype=tf.int32)" in rendered


def test_python_numbers_and_strings_tensorized(tf: Any) -> None:
    src = """
    import tensorflow as tf

    @tf.function
    def f(x, lr, step, tag, training=False):
        tf.print(tag, step)
        if step % 100 == 0:
            tf.print("checkpoint")
        return x * lr + tf.cast(step, tf.float32) + tf.cast(tf.strings.length(tag), tf.float32)
    """
    calls = [((tf.ones([3]), 0.1 * i, i, f"run{i}"), {}) for i in range(1, 6)]
    calls.append(((tf.ones([3]),), {"lr": 0.5, "step": 100, "tag": "kw"}))
    calls *= 2  # 8 calls or more show `training` is never passed (a short profile does not)
    rendered = _check(tf, src, "f", calls)
    assert rendered == (
        "[tf.TensorSpec(shape=[3], dtype=tf.float32), tf.TensorSpec(shape=[], dtype=tf.float32), "
        "tf.TensorSpec(shape=[], dtype=tf.int32), tf.TensorSpec(shape=[], dtype=tf.string)]"
    )


def test_default_before_varied_parameter_and_relax_batch(tf: Any) -> None:
    src = """
    import tensorflow as tf

    @tf.function
    def f(x, scale=2.0, shift=0.0, mode="fast", **kwargs):
        return x * scale + shift
    """
    calls = [((tf.ones([b, 4]),), {"shift": float(b)}) for b in (1, 2)]
    calls.append(((tf.ones([2, 4]), 3.0), {}))
    calls *= 3  # 8 calls or more show `mode` and `**kwargs` are never passed
    rendered = _check(tf, src, "f", calls, relax="batch")
    assert rendered == (
        "[tf.TensorSpec(shape=[None, 4], dtype=tf.float32), "
        "tf.TensorSpec(shape=[], dtype=tf.float32), tf.TensorSpec(shape=[], dtype=tf.float32)]"
    )


def test_star_args_make_signed_parameters_positional_only(tf: Any) -> None:
    """Measured: with *args, TF binds signed parameters positional-only."""
    src = """
    import tensorflow as tf

    @tf.function
    def f(x, shift=0.0, *args, mode="fast"):
        return x + shift
    """
    positional = [((tf.ones([b]), float(b)), {}) for b in (1, 2)] * 4  # 8: *args never passed
    _check(tf, src, "f", positional)
    signed = tf.function(
        lambda x, shift=0.0, *args: x + shift,
        input_signature=[tf.TensorSpec([None]), tf.TensorSpec([])],
    )
    with pytest.raises(TypeError, match="positional only"):
        signed(tf.ones([1]), shift=1.0)
    module = _load(textwrap.dedent(src), _scratch_dir())
    keyword = [((tf.ones([b]),), {"shift": float(b)}) for b in (1, 2)]
    record = _profile(tf, module.f.python_function, keyword, textwrap.dedent(src), "f")
    plan = infer_function(record, textwrap.dedent(src), InferOptions(guarded_trace=False))
    assert plan.action == "reduce_retracing"
    assert "positional-only" in plan.reasons[0]


def test_python_int_sizing_a_list_is_kept_python_and_would_fail_as_tensor(tf: Any) -> None:
    src = textwrap.dedent(
        """
        import tensorflow as tf

        @tf.function
        def f(x, k):
            return tf.add_n([x * i for i in range(k)])
        """
    )
    module = _load(src, _scratch_dir())
    calls = [((tf.ones([2]), k), {}) for k in (1, 2, 3)]
    record = _profile(tf, module.f.python_function, calls, src, "f")
    plan = infer_function(record, src, InferOptions(guarded_trace=False))
    assert plan.action == "none"  # only k varies: reduce_retracing would not help either
    assert "range(k)" in plan.reasons[0]
    # What a signature with k as a tensor would do: it cannot even trace.
    wrong = tf.function(
        module.f.python_function,
        input_signature=[tf.TensorSpec([2], tf.float32), tf.TensorSpec([], tf.int32)],
    )
    with pytest.raises(TypeError):
        wrong(tf.ones([2]), 2)


def test_tensorflow_does_not_promote_dtypes(tf: Any) -> None:
    """Why analysis reports a tensorized int meeting a float tensor: TF refuses to mix."""
    assert (tf.ones([2]) * 2).dtype == tf.float32  # the Python int is converted
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError)):
        tf.ones([2]) * tf.constant(2)
    with pytest.raises(TypeError):
        tf.constant(2) * 0.5
    assert (tf.constant(3) / 2).dtype == tf.float64

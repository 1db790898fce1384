"""The shape-use analysis's TensorFlow tables, checked against TensorFlow itself.

``analysis/tf_objects.py`` says which methods of TensorFlow objects read no static size
of their tensor arguments; ``analysis/tf_apis.py`` which ops need one
(``STATIC_SIZE_APIS``) and what the function argument of a higher-order op gets
(``HIGHER_ORDER``). Each entry is run here: a method "reads nothing" when the function
calling it, traced with every dimension None, builds and computes what the plain
function computes on several concrete sizes (stateful objects: the same state after the
same calls); an op "needs a static size" when tracing it with that dimension None fails
while the plain trace works; a feed is what the function argument's parameters see
while tracing.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import Any

import pytest

from autosig.analysis import tf_objects
from autosig.analysis.tf_apis import HIGHER_ORDER, STATIC_SIZE_APIS, normalised_api

pytestmark = pytest.mark.tf

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _tf() -> Any:
    import tensorflow as tf

    return tf


def _same_everywhere(
    make: Callable[[], tuple[Callable[..., Any], Callable[[], list[Any]]]],
    ranks: list[tuple[int, str]],
    inputs: list[tuple[Any, ...]],
) -> None:
    """``make()`` -> (function, state reader). Traced with None dims it must compute
    what the plain function computes, call by call, and leave the same state."""
    import numpy as np

    tf = _tf()
    specs = [tf.TensorSpec([None] * rank, getattr(tf, dtype)) for rank, dtype in ranks]
    relaxed_fn, relaxed_state = make()
    plain_fn, plain_state = make()
    relaxed = tf.function(relaxed_fn, input_signature=specs)
    plain = tf.function(plain_fn)
    relaxed.get_concrete_function()  # builds with every dimension None
    for args in inputs:
        want, got = plain(*args), relaxed(*args)
        for a, b in zip(tf.nest.flatten(want), tf.nest.flatten(got), strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
        for a, b in zip(plain_state(), relaxed_state(), strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def _matrix(n: int, d: int = 3) -> Any:
    tf = _tf()
    return tf.reshape(tf.sin(tf.range(n * d, dtype=tf.float32)), [n, d])


def _matrices() -> list[tuple[Any, ...]]:
    """Made when a test runs, not at collection: TensorFlow is imported only by the test
    process that runs these tests."""
    return [(_matrix(2),), (_matrix(5, 4),), (_matrix(1, 7),)]


# -- each object kind's methods ----------------------------------------------------------


def _tape() -> tuple[Callable[..., Any], Callable[[], list[Any]]]:
    tf = _tf()

    def f(x: Any) -> Any:
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x * x
            with tape.stop_recording():
                tf.identity(y)
        return tape.gradient(y, x), tape.jacobian(y, x), tape.batch_jacobian(y, x)

    def reset(x: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            tape.reset()
            tape.watch(x)
            y = tf.reduce_sum(x**3)
        return tape.gradient(y, x)

    return (lambda x: (f(x), reset(x))), list


def _tensor_array() -> tuple[Callable[..., Any], Callable[[], list[Any]]]:
    tf = _tf()

    def f(x: Any) -> Any:
        n = tf.shape(x)[0]
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True).unstack(x)
        written = tf.TensorArray(tf.float32, size=2).write(0, x).write(1, x * 2)
        scattered = tf.TensorArray(tf.float32, size=n).scatter(tf.range(n)[::-1], x)
        split = tf.TensorArray(tf.float32, size=2, infer_shape=False).split(x, [1, n - 1])
        out = (ta.read(0), ta.stack(), ta.gather([0]), ta.concat(), ta.size())
        same = ta.identity()
        same.close()
        return out, written.stack(), scattered.stack(), split.read(1)

    return f, list


def _variable() -> tuple[Callable[..., Any], Callable[[], list[Any]]]:
    tf = _tf()
    v = tf.Variable(tf.zeros([2, 3]))

    def f(x: Any) -> Any:
        v.assign(x)
        v.assign_add(x)
        v.assign_sub(x * 0.5)
        v.scatter_update(tf.IndexedSlices(x[:1] * 3.0, [0]))
        v.scatter_add(tf.IndexedSlices(x[:1], [1]))
        v.scatter_sub(tf.IndexedSlices(x[:1], [0]))
        v.scatter_nd_update([[0, 0]], x[0, :1])
        return v.read_value(), v.value()

    return f, lambda: [v.numpy()]


def _optimizer(name: str, keras_module: Any) -> Any:
    def make() -> tuple[Callable[..., Any], Callable[[], list[Any]]]:
        tf = _tf()
        w = tf.Variable(tf.ones([3, 2]))
        optimizer = getattr(keras_module.optimizers, name)(0.1)
        optimizer.build([w])

        def f(x: Any) -> Any:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(x @ w))
            optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w], strict=True))
            return loss

        return f, lambda: [w.numpy()]

    return make


def _strategy() -> tuple[Callable[..., Any], Callable[[], list[Any]]]:
    tf = _tf()
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")

    def f(x: Any) -> Any:
        out = strategy.run(lambda t: t * 2.0 + tf.cast(tf.shape(t)[0], tf.float32), args=(x,))
        local = strategy.experimental_local_results(out)
        gathered = strategy.gather(out, axis=0)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, out, axis=None), local, gathered

    return f, list


def _summary_writer() -> tuple[Callable[..., Any], Callable[[], list[Any]]]:
    tf = _tf()
    writer = tf.summary.create_file_writer(tempfile.mkdtemp())
    writer.init()

    def f(x: Any) -> Any:
        with writer.as_default(step=0):
            tf.summary.write("mean", tf.reduce_mean(x))
            tf.summary.write("values", x)
        writer.flush()
        return x * 1.0

    def noop(x: Any) -> Any:
        none = tf.summary.create_noop_writer()
        none.set_as_default(step=1)
        tf.summary.write("values", x)
        none.close()
        return x

    return (lambda x: (f(x), noop(x))), list


def test_every_method_of_the_table_is_checked_here() -> None:
    """The scenarios below call every method the table lists (a new entry needs one)."""
    checked = {
        "tf.GradientTape": {"watch", "gradient", "jacobian", "batch_jacobian"}
        | {"stop_recording", "reset"},
        "tf.TensorArray": {"write", "read", "stack", "gather", "concat", "scatter", "unstack"}
        | {"split", "size", "close", "identity"},
        "tf.Variable": {"assign", "assign_add", "assign_sub", "read_value", "value"}
        | {"scatter_update", "scatter_add", "scatter_sub", "scatter_nd_update"},
        "Keras optimizer": {"apply_gradients"},
        "Keras loss": {"__call__", "call"},
        "Keras metric": {"__call__", "update_state", "result", "reset_state", "reset_states"},
        "tf.distribute strategy": {"run", "experimental_run_v2", "reduce"}
        | {"experimental_local_results", "gather"},
        "tf.summary writer": {"as_default", "set_as_default", "flush", "close", "init"},
    }
    assert {k.name: set(k.methods) for k in tf_objects.OBJECT_KINDS} == checked


@pytest.mark.parametrize(
    "make",
    [_tape, _tensor_array, _variable, _strategy, _summary_writer],
    ids=["GradientTape", "TensorArray", "Variable", "strategy", "summary_writer"],
)
def test_object_methods_accept_any_size(make: Any) -> None:
    matrices = _matrices()
    _same_everywhere(make, [(2, "float32")], matrices if make is not _variable else matrices[:1])


def test_variable_assign_rejects_what_the_plain_trace_rejects() -> None:
    """A value of another shape fails either way (at run time with None dimensions, at
    trace time otherwise): the relaxed trace rejects nothing more and nothing less."""
    tf = _tf()
    f, _ = _variable()
    relaxed = tf.function(f, input_signature=[tf.TensorSpec([None, None])])
    for fn in (tf.function(f), relaxed):
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
            fn(_matrix(4, 5))


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_optimizer_apply_gradients_accepts_any_batch(name: str) -> None:
    import keras

    _same_everywhere(_optimizer(name, keras), [(2, "float32")], [(_matrix(n),) for n in (2, 5, 1)])


def test_keras_losses_and_metrics_are_the_same_classes_under_tf_keras() -> None:
    """The table spells ``tf.keras.losses.X`` as ``keras.losses.X``: one class."""
    import keras

    tf = _tf()
    for name in tf_objects.KERAS_LOSSES:
        assert getattr(tf.keras.losses, name) is getattr(keras.losses, name)
    for name in tf_objects.KERAS_METRICS:
        assert getattr(tf.keras.metrics, name) is getattr(keras.metrics, name)


def _labels(n: int, c: int) -> Any:
    tf = _tf()
    return tf.range(n, dtype=tf.int64) % c


def _probabilities(n: int, c: int) -> Any:
    tf = _tf()
    return tf.nn.softmax(_matrix(n, c)) * 0.5 + 0.1


SPARSE = {"SparseCategoricalCrossentropy", "SparseCategoricalAccuracy"} | {
    "SparseTopKCategoricalAccuracy"
}


@pytest.mark.parametrize("name", tf_objects.KERAS_LOSSES)
def test_keras_loss_objects_accept_any_size(name: str) -> None:
    import keras

    cls = getattr(keras.losses, name)
    sizes = ((2, 3), (5, 4), (1, 7))
    if name in SPARSE:

        def make() -> Any:
            loss = cls(from_logits=True)
            return (lambda y, p: (loss(y, p), loss.call(y, p))), list

        ranks = [(1, "int64"), (2, "float32")]
        inputs = [(_labels(n, c), _matrix(n, c)) for n, c in sizes]
    else:

        def make() -> Any:
            loss = cls()
            return (lambda y, p: (loss(y, p), loss.call(y, p))), list

        ranks = [(2, "float32"), (2, "float32")]
        inputs = [(_probabilities(n, c), _tf().nn.sigmoid(_matrix(n, c))) for n, c in sizes]
    _same_everywhere(make, ranks, inputs)


@pytest.mark.parametrize("name", tf_objects.KERAS_METRICS)
def test_keras_metric_objects_accept_any_size(name: str) -> None:
    import keras

    cls = getattr(keras.metrics, name)
    sizes = ((2, 6), (5, 6), (1, 7))

    def make() -> Any:
        metric = cls()

        def f(*args: Any) -> Any:
            metric.update_state(*args)
            metric(*args)
            out = metric.result()
            return out

        def reset() -> list[Any]:
            values = [metric.result()]
            metric.reset_state()
            metric.reset_states() if hasattr(metric, "reset_states") else None
            return values

        return f, reset

    if name in ("Mean", "Sum"):
        _same_everywhere(make, [(2, "float32")], [(_matrix(n, c),) for n, c in sizes])
    elif name in SPARSE:
        ranks = [(1, "int64"), (2, "float32")]
        _same_everywhere(make, ranks, [(_labels(n, c), _matrix(n, c)) for n, c in sizes])
    else:
        tf = _tf()
        ranks = [(2, "float32"), (2, "float32")]
        inputs = [(tf.one_hot(_labels(n, c), c), tf.nn.sigmoid(_matrix(n, c))) for n, c in sizes]
        _same_everywhere(make, ranks, inputs)


def test_the_table_knows_each_kind_by_how_it_is_made() -> None:
    assert tf_objects.method_of("tensorflow.GradientTape", "watch") is not None
    assert tf_objects.method_of("keras.optimizers.Adam", "apply_gradients") is not None
    assert tf_objects.method_of("keras.losses.Huber", "__call__") is not None
    assert tf_objects.method_of("keras.layers.Layer.add_weight", "assign") is not None
    assert tf_objects.method_of("keras.losses.huber", "__call__") is None  # a function
    assert tf_objects.method_of("keras.layers.Dense", "__call__") is None  # not an object kind


# -- ops that need a static size -----------------------------------------------------------

STATIC_SIZE_CALLS = {
    "tensorflow.unstack": (
        "lambda x: tf.unstack(x, axis=1)",
        "lambda x: tf.unstack(x, num=3, axis=1)",
    ),
    "keras.ops.unstack": (
        "lambda x: keras.ops.unstack(x, axis=1)",
        "lambda x: keras.ops.unstack(x, num=3, axis=1)",
    ),
    "keras.ops.array_split": ("lambda x: keras.ops.array_split(x, 2, axis=1)", None),
    "keras.ops.split": (
        "lambda x: keras.ops.split(x, [1, 2], axis=1)",
        "lambda x: keras.ops.split(x, 3, axis=1)",
    ),
    "keras.ops.glu": ("lambda x: keras.ops.glu(x)", None),
}


@pytest.mark.parametrize("api", sorted(STATIC_SIZE_APIS))
def test_static_size_ops_fail_with_that_dimension_none(api: str) -> None:
    """Traced with the dimension it splits None, the op fails (when traced or run) or
    computes something else; with the size given (``num=``, a number of sections) it
    does not need it."""
    import keras
    import numpy as np

    tf = _tf()
    needing, fine = STATIC_SIZE_CALLS[api]
    scope = {"tf": tf, "keras": keras}
    x = tf.reshape(tf.range(24, dtype=tf.float32), [4, 6])
    want = tf.function(eval(needing, scope))(x)  # noqa: S307 - the plain trace works
    axis = 1 if "axis=1" in needing else STATIC_SIZE_APIS[api].default_axis % 2
    shape: list[int | None] = [4, 6]
    shape[axis] = None
    relaxed = tf.function(eval(needing, scope), input_signature=[tf.TensorSpec(shape)])  # noqa: S307
    failures = (ValueError, TypeError, tf.errors.OpError)
    try:
        got = relaxed(x)
    except failures:
        got = None
    if got is not None:
        flat_want, flat_got = tf.nest.flatten(want), tf.nest.flatten(got)
        assert len(flat_want) != len(flat_got) or any(
            a.shape != b.shape or not np.allclose(a, b)
            for a, b in zip(flat_want, flat_got, strict=True)
        )
    if fine is not None:
        tf.function(eval(fine, scope), input_signature=[tf.TensorSpec([None, None])])(  # noqa: S307
            tf.reshape(tf.range(12, dtype=tf.float32), [4, 3])
        )


def test_keras_ops_shape_is_static_where_the_shape_is_known() -> None:
    import keras

    tf = _tf()
    seen = {}

    def f(x: Any) -> Any:
        seen["shape"] = keras.ops.shape(x)
        return x

    tf.function(f, input_signature=[tf.TensorSpec([None, 3])]).get_concrete_function()
    first, second = seen["shape"]
    assert tf.is_tensor(first) and second == 3 and isinstance(second, int)


# -- what a higher-order op's function argument gets ------------------------------------

HIGHER_ORDER_CALLS = {
    "tensorflow.map_fn": ("tf.map_fn(fn, x)", ["element"]),
    "tensorflow.vectorized_map": ("tf.vectorized_map(fn, x)", ["element"]),
    "tensorflow.scan": ("tf.scan(fn, x, initializer=init)", ["same", "element"]),
    "tensorflow.foldl": ("tf.foldl(fn, x, initializer=init)", ["same", "element"]),
    "tensorflow.foldr": ("tf.foldr(fn, x, initializer=init)", ["same", "element"]),
    "tensorflow.while_loop": ("tf.while_loop(lambda a, b: False, fn, [x, init])", ["same", "same"]),
    "tensorflow.cond": ("tf.cond(tf.constant(True), lambda: fn(), lambda: fn())", []),
    "tensorflow.nest.map_structure": ("tf.nest.map_structure(fn, x)", ["leaf"]),
    "keras.ops.map": ("keras.ops.map(fn, x)", ["element"]),
    "keras.ops.vectorized_map": ("keras.ops.vectorized_map(fn, x)", ["element"]),
    "keras.ops.scan": ("keras.ops.scan(fn, init, x)", ["same", "element"]),
    "keras.ops.fori_loop": ("keras.ops.fori_loop(0, 2, fn, x)", ["none", "same"]),
    "keras.ops.while_loop": (
        "keras.ops.while_loop(lambda a, b: False, fn, (x, init))",
        ["same", "same"],
    ),
    "keras.ops.associative_scan": ("keras.ops.associative_scan(fn, x)", ["slice", "slice"]),
    "keras.ops.cond": ("keras.ops.cond(True, lambda: fn(), lambda: fn())", []),
}


def _table_feeds(api: str, parameters: int) -> list[str]:
    """What the table says each of the function's parameters gets (a ``spread`` gives
    each item of its list to one parameter, as it is)."""
    out: list[str] = []
    for feed in HIGHER_ORDER[api].feeds:
        if feed.how == "spread":
            out.extend(["same"] * (parameters - len(out)))
        else:
            out.append(feed.how)
    return out


@pytest.mark.parametrize("api", sorted(HIGHER_ORDER))
def test_higher_order_ops_give_their_function_what_the_table_says(api: str) -> None:
    """The static shapes each parameter of the function argument sees while tracing:
    ``element`` drops dimension 0 of the (4, 3) tensor, ``slice`` keeps its rank,
    ``leaf`` and ``same`` keep its argument's shape, ``none`` is no tensor of the
    caller's (a loop counter)."""
    import keras

    tf = _tf()
    code, feeds = HIGHER_ORDER_CALLS[api]
    assert _table_feeds(api, len(feeds)) == feeds
    seen: list[tuple[Any, ...]] = []

    def fn(*args: Any) -> Any:
        seen.append(tuple(tuple(a.shape) if tf.is_tensor(a) else None for a in args))
        if not args:
            return tf.zeros([])
        if api in ("tensorflow.while_loop", "keras.ops.while_loop"):
            return args
        if api == "keras.ops.fori_loop":
            return args[1]
        if api == "keras.ops.scan":
            return args[0], args[0]
        return args[0]

    x = tf.reshape(tf.range(12, dtype=tf.float32), [4, 3])
    init = tf.zeros([3])
    scope = {"tf": tf, "keras": keras, "fn": fn, "x": x, "init": init}
    tf.function(lambda: eval(code, scope))()  # noqa: S307 - the op under test
    assert seen, api
    wanted = {
        "element": [(3,)],
        "slice": [(n, 3) for n in range(5)],
        "leaf": [(4, 3)],
        "same": [(4, 3), (3,)],
        "none": [None, ()],
    }
    for got, how in zip(seen[0], feeds, strict=True):
        assert got in wanted[how], (api, seen[0])
    assert normalised_api(api) == api

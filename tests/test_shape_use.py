"""The shape-use analysis: which static dimensions traced code reads (pure, no TensorFlow).

Each case is a source, the traced function's parameters and the reads expected as
``(param, dims or "all", kind)``; ``[]`` means the code reads no static shape.
"""

from __future__ import annotations

import pytest

from autosig.analysis.module_view import ModuleView
from autosig.analysis.shape_reads import shape_use
from autosig.source.discover import discover_text

TF = "import tensorflow as tf\n"

READS = {
    "tensor_array_size": (
        "@tf.function\ndef f(x):\n    ta = tf.TensorArray(tf.float32, size=x.shape[0])\n"
        "    return ta.stack()\n",
        [("x", [0], "tf")],
    ),
    "tile_multiples": (
        "@tf.function\ndef f(x, row):\n    return tf.tile(row, [x.shape[0], 1])\n",
        [("x", [0], "tf")],
    ),
    "range_bound": (
        "@tf.function\ndef f(seq):\n    for t in range(seq.shape[1]):\n        pass\n    return seq\n",
        [("seq", [1], "python")],
    ),
    "branch": (
        "@tf.function\ndef f(x):\n    if x.shape[-1] == 1:\n        return x[..., 0]\n    return x\n",
        [("x", [1], "control")],
    ),
    "unpack_shape": (
        "@tf.function\ndef f(x):\n    b, t = x.shape\n    return tf.reshape(x, [b * t])\n",
        [("x", "all", "tf")],
    ),
    "as_list": (
        "@tf.function\ndef f(x):\n    return tf.zeros(x.shape.as_list())\n",
        [("x", "all", "tf")],
    ),
    "get_shape_index": (
        "@tf.function\ndef f(x):\n    return tf.zeros([x.get_shape()[1]])\n",
        [("x", [1], "tf")],
    ),
    "len": ("@tf.function\ndef f(x):\n    return tf.zeros([len(x)])\n", [("x", [0], "tf")]),
    "unpack_tensor": (
        "@tf.function\ndef f(x):\n    a, b = x\n    return a + b\n",
        [("x", [0], "python")],
    ),
    "dict_key": (
        "cache = {}\n@tf.function\ndef f(x):\n    cache[x.shape] = 1\n    return x\n",
        [("x", "all", "python")],
    ),
    "derived_value": (
        "@tf.function\ndef f(x):\n    h = x * 2.0\n    return tf.zeros([h.shape[0]])\n",
        [("x", "all", "tf")],
    ),
    "helper_function": (
        "def steps(t):\n    return range(t.shape[1])\n@tf.function\ndef f(x):\n"
        "    for i in steps(x):\n        pass\n    return x\n",
        [("x", [1], "python")],
    ),
    "self_method": (
        "class M(tf.Module):\n    def _n(self, t):\n        return len(t)\n    @tf.function\n"
        "    def __call__(self, x):\n        return x / self._n(x)\n",
        [("x", [0], "python")],
    ),
    "outside_project": (
        "@tf.function\ndef f(model, x):\n    return model(x)\n",
        [("x", [1], "callee")],
    ),
    # no static read
    "rank_only": (
        "@tf.function\ndef f(x):\n    return tf.reshape(x, [-1]) if x.shape.rank == 2 else x\n",
        [],
    ),
    "dynamic_shape": ("@tf.function\ndef f(x):\n    return tf.zeros([tf.shape(x)[0]])\n", []),
    "trace_time_print": (
        "@tf.function\ndef f(x):\n    print('tracing', x.shape)\n    return x\n",
        [],
    ),
    "autograph_loop": (
        "@tf.function\ndef f(x):\n    for row in x:\n        tf.print(row)\n    return x\n",
        [],
    ),
    "gradients": (
        "@tf.function\ndef f(x, w):\n    with tf.GradientTape() as tape:\n        loss = tf.reduce_sum(x * w)\n"
        "    grads = tape.gradient(loss, [w])\n    for g in zip(grads, [w]):\n        pass\n    return loss\n",
        [],
    ),
    "list_append": (
        "@tf.function\ndef f(x):\n    out = []\n    out.append(x * 2.0)\n    return tf.stack(out)\n",
        [],
    ),
    "value_not_shape": ("@tf.function\ndef f(x, n):\n    return [x] * n if n else x\n", []),
}


def _reads(source: str) -> list[tuple[str, object, str]]:
    wrapper, sites = discover_text(TF + source, "m.py")
    function = sites[0].function
    params = [p.name.value for p in function.params.params if p.name.value != "self"]
    found = shape_use(ModuleView(wrapper), function, params, {p: 2 for p in params})
    out = []
    for name, reads in found.reads.items():
        for read in reads:
            dims = "all" if read.dims is None else sorted(read.dims)
            out.append((name, dims, read.kind))
    return out


@pytest.mark.parametrize("name", sorted(READS))
def test_static_reads(name: str) -> None:
    source, expected = READS[name]
    assert _reads(source) == expected


def test_autograph_off_makes_a_loop_over_a_tensor_a_read() -> None:
    source = (
        TF
        + "@tf.function(autograph=False)\ndef f(x):\n    for row in x:\n        pass\n    return x\n"
    )
    wrapper, sites = discover_text(source, "m.py")
    found = shape_use(ModuleView(wrapper), sites[0].function, ["x"], autograph=False)
    assert [(r.param, r.dims) for r in found.reads["x"]] == [("x", frozenset({0}))]


def draws_of(source: str) -> list[str]:
    """The random draws found in the first tf.function of ``source``, sorted."""
    wrapper, sites = discover_text(source, "m.py")
    return sorted(
        d.code for d in shape_use(ModuleView(wrapper), sites[0].function, ["x"]).random_draws
    )


def test_random_draws_that_depend_on_the_trace_count() -> None:
    source = TF + (
        "import random\nimport numpy as np\n@tf.function\ndef f(x):\n"
        "    a = tf.random.normal([3]) + tf.random.stateless_normal([3], seed=[1, 2])\n"
        "    g = tf.random.Generator.from_seed(1)\n"
        "    return tf.nn.dropout(x, 0.5) + random.random() + np.random.rand() + g.normal([3])\n"
    )
    assert draws_of(source) == [
        "np.random.rand()",
        "random.random()",
        "tf.nn.dropout(x, 0.5)",
        "tf.random.normal([3])",
    ]


def test_a_read_names_the_helper_it_is_in() -> None:
    source = (
        TF
        + "def helper(t):\n    return t.shape[0]\n@tf.function\ndef f(x):\n    return helper(x)\n"
    )
    wrapper, sites = discover_text(source, "m.py")
    (read,) = shape_use(ModuleView(wrapper), sites[-1].function, ["x"]).reads["x"]
    assert read.line == 3 and read.via == "helper() (called at line 6)"
    assert "helper() (called at line 6)" in read.describe()


def test_a_value_sized_from_a_static_shape_counts_for_the_parameter() -> None:
    source = (
        "@tf.function\ndef f(x):\n    z = tf.zeros([x.shape[0], 4])\n    return range(z.shape[0])\n"
    )
    reads = _reads(source)
    assert ("x", [0], "tf") in reads and ("x", "all", "python") in reads
    assert _reads("@tf.function\ndef f(x):\n    return tf.zeros([len(x.shape)])\n") == []


def test_calls_into_other_project_modules_are_followed(tmp_path) -> None:  # noqa: ANN001
    from autosig.source.project_modules import ProjectModules

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "helpers.py").write_text(
        "def steps(t):\n    return range(t.shape[1])\n\ndef scale(t):\n    return t * 2.0\n"
    )
    source = TF + (
        "import numpy as np\nfrom pkg.helpers import steps, scale\n@tf.function\ndef f(x):\n"
        "    for i in steps(x):\n        pass\n    return scale(x) + np.float32(1)\n"
    )
    (tmp_path / "pkg" / "train.py").write_text(source)
    wrapper, sites = discover_text(source, "train.py")
    modules = ProjectModules.around(tmp_path / "pkg" / "train.py")
    (read,) = shape_use(ModuleView(wrapper, modules), sites[0].function, ["x"]).reads["x"]
    assert (read.dims, read.kind, read.line) == (frozenset({1}), "python", 2)
    assert read.via == "pkg.helpers.steps() (called at line 6)"
    # without the project's modules the helpers are code outside the project
    unknown = shape_use(ModuleView(wrapper), sites[0].function, ["x"], {"x": 2}).reads["x"]
    assert {r.kind for r in unknown} == {"callee"}


# -- calls the analysis follows (issue 22): every path to a static read ----------------


def _project_reads(
    tmp_path, files: dict[str, str], params: tuple[str, ...] = ("x",)
) -> list[tuple[str, object, str, str]]:  # noqa: ANN001
    """(param, dims, kind, via) of the reads of the (first) site in ``model.py``."""
    from autosig.source.project_modules import ProjectModules

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    source = files["model.py"]
    wrapper, sites = discover_text(source, str(tmp_path / "model.py"))
    modules = ProjectModules.around(tmp_path / "model.py")
    use = shape_use(ModuleView(wrapper, modules), sites[0].function, list(params))
    out = []
    for name, reads in use.reads.items():
        for read in reads:
            dims = "all" if read.dims is None else sorted(read.dims)
            out.append((name, dims, read.kind, read.via))
    return out


FOLLOWED = {
    "project_layer_in_sequential": (
        TF + "import keras\nclass Flatten(keras.layers.Layer):\n    def call(self, x):\n"
        "        return tf.reshape(x, [x.shape[0], -1])\n"
        "model = keras.Sequential([Flatten(), keras.layers.Dense(2)])\n"
        "@tf.function\ndef f(x):\n    return model(x)\n",
        ("x", [0], "tf", "Flatten.call() (called at line 9)"),
    ),
    "project_layer_in_functional_model": (
        TF + "import keras\nclass Crop(keras.layers.Layer):\n    def call(self, x):\n"
        "        t = x.shape[1]\n        if t is None:\n            return x\n"
        "        return x[:, : t - t % 4]\n"
        "inputs = keras.Input((None, 2))\n"
        "pooled = keras.layers.GlobalAveragePooling1D()(Crop()(inputs))\n"
        "encoder = keras.Model(inputs, pooled)\n"
        "@tf.function\ndef f(x):\n    return encoder(x)\n",
        ("x", [1], "control", "Crop.call() (called at line 14)"),
    ),
    "keras_model_in_attribute": (
        TF + "class Actor(tf.keras.Model):\n    def call(self, states):\n"
        "        return tf.tile(self.log_std, [states.shape[0], 1])\n"
        "class Agent:\n    def __init__(self):\n        self.actor = Actor()\n"
        "    @tf.function\n    def act(self, x):\n        return self.actor(x)\n",
        ("x", [0], "tf", "Actor.call() (called at line 10)"),
    ),
    "keras_model_subclass_of_a_project_base": (
        TF + "class Base(tf.keras.Model):\n    def call(self, s):\n        return s.shape[0]\n"
        "class Actor(Base):\n    pass\n"
        "actor = Actor()\n@tf.function\ndef f(x):\n    return tf.zeros([actor(x)])\n",
        ("x", [0], "python", "Base.call() (called at line 10)"),
    ),
    "plain_object_in_attribute": (
        TF
        + "class Pooler:\n    def pool(self, x):\n        return tf.reduce_sum(x, 1) / x.shape[1]\n"
        "class Encoder(tf.Module):\n    def __init__(self):\n        self.pooler = Pooler()\n"
        "    @tf.function\n    def __call__(self, x):\n        return self.pooler.pool(x)\n",
        ("x", [1], "python", "Pooler.pool() (called at line 10)"),
    ),
    "loss_object_class_attribute": (
        TF + "class Contrastive:\n    def __call__(self, a):\n        return tf.range(a.shape[0])\n"
        "class Trainer(tf.Module):\n    loss_fn = Contrastive()\n"
        "    @tf.function\n    def __call__(self, x):\n        return self.loss_fn(x)\n",
        ("x", [0], "tf", "Contrastive.__call__() (called at line 9)"),
    ),
    "keras_build_reads_the_input_shape": (
        TF + "class Dense(tf.keras.layers.Layer):\n    def build(self, input_shape):\n"
        "        self.w = self.add_weight(shape=(input_shape[-1], 4))\n"
        "    def call(self, x):\n        return x @ self.w\n"
        "layer = Dense()\n@tf.function\ndef f(x):\n    return layer(x)\n",
        ("x", [1], "python", "Dense.build() (called at line 10)"),
    ),
    "map_fn_nested_def": (
        TF + "@tf.function\ndef f(x):\n    def per_example(e):\n        return e / e.shape[0]\n"
        "    return tf.map_fn(per_example, x)\n",
        ("x", "all", "python", ""),
    ),
    "map_fn_lambda": (
        TF + "@tf.function\ndef f(x):\n    return tf.map_fn(lambda e: tf.zeros([e.shape[0]]), x)\n",
        ("x", "all", "tf", ""),
    ),
    "vectorized_map_module_function": (
        TF + "def shrink(img):\n    return tf.image.resize(img, [img.shape[0] // 2, 4])\n"
        "@tf.function\ndef f(x):\n    return tf.vectorized_map(shrink, x)\n",
        ("x", "all", "tf", "shrink() (called at line 6)"),
    ),
    "scan_accumulator_keeps_the_initializer": (
        TF + "@tf.function\ndef f(x, init):\n"
        "    return tf.scan(lambda acc, e: acc + tf.zeros([acc.shape[0]]), x, init)\n",
        ("init", [0], "tf", ""),
    ),
    "while_loop_variables": (
        TF + "def body(i, v):\n    return i + 1, tf.tile(v, [1, 1]) + v.shape[1]\n"
        "@tf.function\ndef f(x):\n    return tf.while_loop(lambda i, v: i < 3, body, [0, x])\n",
        ("x", [1], "python", "body() (called at line 6)"),
    ),
    "keras_ops_unstack": (
        "import keras\n" + TF + "@tf.function\ndef f(x):\n"
        "    return [s for s in keras.ops.unstack(x, axis=1)]\n",
        ("x", [1], "tf", ""),
    ),
    "keras_ops_shape": (
        "import keras\n" + TF + "@tf.function\ndef f(x):\n"
        "    for t in range(keras.ops.shape(x)[1]):\n        pass\n    return x\n",
        ("x", [1], "python", ""),
    ),
}


@pytest.mark.parametrize("name", sorted(FOLLOWED))
def test_static_reads_behind_calls_are_found(name: str, tmp_path) -> None:  # noqa: ANN001
    source, expected = FOLLOWED[name]
    wrapper, sites = discover_text(source, str(tmp_path / "model.py"))
    function = sites[0].function
    params = [p.name.value for p in function.params.params if p.name.value != "self"]
    use = shape_use(ModuleView(wrapper), function, params, {p: 2 for p in params})
    found = [
        (n, "all" if r.dims is None else sorted(r.dims), r.kind, r.via)
        for n, reads in use.reads.items()
        for r in reads
        if r.kind != "callee"
    ]
    assert expected in found, found


def test_loss_object_of_a_class_in_another_module(tmp_path) -> None:  # noqa: ANN001
    files = {
        "losses.py": "import tensorflow as tf\nclass SumOverBatch:\n"
        "    def __call__(self, y_true, y_pred):\n"
        "        return tf.reduce_sum(y_true - y_pred) / y_true.shape[0]\n",
        "model.py": TF + "from losses import SumOverBatch\nloss_fn = SumOverBatch()\n"
        "@tf.function\ndef f(x, y):\n    return loss_fn(y, x)\n",
    }
    assert _project_reads(tmp_path, files, ("x", "y")) == [
        ("y", [0], "python", "losses.SumOverBatch.__call__() (called at line 6)")
    ]


def test_an_imported_staticmethod_called_through_its_class(tmp_path) -> None:  # noqa: ANN001
    files = {
        "geometry.py": "import tensorflow as tf\nclass Geometry:\n    @staticmethod\n"
        "    def pairwise(points):\n        n = points.shape[0]\n"
        "        return tf.reshape(points, [n, 1, -1])\n",
        "model.py": TF + "from geometry import Geometry\n@tf.function\ndef f(x):\n"
        "    return Geometry.pairwise(x)\n",
    }
    assert _project_reads(tmp_path, files) == [
        ("x", [0], "tf", "geometry.Geometry.pairwise() (called at line 5)")
    ]


def test_draws_from_a_generator_held_by_the_instance_or_the_module() -> None:
    """review7 nprng: ``self.rng = np.random.default_rng(0)`` drawn from while tracing
    draws anew at each trace; a ``tf.random.Generator`` keeps its state in a variable."""
    source = TF + (
        "import random\nimport numpy as np\nRNG = random.Random(3)\n"
        "class M(tf.Module):\n    def __init__(self):\n"
        "        self.rng = np.random.default_rng(0)\n"
        "        self.g = tf.random.Generator.from_seed(1)\n        self.items = [1, 2]\n"
        "    @tf.function\n    def __call__(self, x):\n"
        "        shift = int(self.rng.integers(0, 3)) + RNG.randint(0, 2)\n"
        "        return tf.roll(x, shift, 0) + self.g.normal([3]) + self.items.count(1)\n"
    )
    assert draws_of(source) == ["RNG.randint(0, 2)", "self.rng.integers(0, 3)"]


def test_random_draws_in_helpers_called_without_tensors_are_found(tmp_path) -> None:  # noqa: ANN001
    """A helper that only draws (no traced tensor passed in) still changes with the
    trace count: the walk follows project calls for their draws."""
    files = {
        "noise.py": "import tensorflow as tf\ndef draw():\n    return tf.random.normal([3])\n",
        "model.py": TF + "import noise\nclass Jitter(tf.keras.layers.Layer):\n"
        "    def call(self, x):\n        return x + noise.draw()\n"
        "jitter = Jitter()\n@tf.function\ndef f(x):\n    return jitter(x)\n",
    }
    from autosig.source.project_modules import ProjectModules

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    wrapper, sites = discover_text(files["model.py"], str(tmp_path / "model.py"))
    use = shape_use(
        ModuleView(wrapper, ProjectModules.around(tmp_path / "model.py")), sites[0].function, ["x"]
    )
    assert [(d.code, d.via) for d in use.random_draws] == [
        (
            "tf.random.normal([3])",
            "Jitter.call() (called at line 9) -> noise.draw() (called at line 5)",
        )
    ]


# -- TensorFlow objects are known, not code outside the project ------------------------

KNOWN_OBJECTS = {
    "tape_watch_gradient_jacobian": "    with tf.GradientTape(persistent=True) as tape:\n"
    "        tape.watch(x)\n        y = x * x\n"
    "    return tape.gradient(y, x), tape.jacobian(y, x), tape.batch_jacobian(y, x)\n",
    "tensor_array_methods": "    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)\n"
    "    ta = ta.unstack(x)\n    ta = ta.write(0, x[0])\n    return ta.stack(), ta.gather([0])\n",
    "variable_assign": "    v.assign(x)\n    v.assign_add(x)\n    v.assign_sub(x)\n    return v\n",
    "optimizer_apply_gradients": "    opt.apply_gradients([(x, v)])\n    return v\n",
    "keras_loss_object": "    return loss_object(x, x)\n",
    "keras_metric_object": "    metric(x)\n    metric.update_state(x)\n    return metric.result()\n",
    "strategy_reduce": "    return strategy.reduce('SUM', strategy.run(tf.identity, args=(x,)), axis=None)\n",
    "summary_writer": "    with writer.as_default(step=0):\n        tf.summary.write('x', x)\n"
    "    writer.flush()\n    return x\n",
}
OBJECTS = (
    "import keras\nv = tf.Variable(tf.zeros([2, 3]))\nopt = keras.optimizers.Adam()\n"
    "loss_object = tf.keras.losses.MeanSquaredError()\nmetric = keras.metrics.Mean()\n"
    "strategy = tf.distribute.MirroredStrategy()\n"
    "writer = tf.summary.create_file_writer('/tmp/logs')\n"
)


@pytest.mark.parametrize("name", sorted(KNOWN_OBJECTS))
def test_tensorflow_objects_read_no_static_size(name: str) -> None:
    source = TF + OBJECTS + "@tf.function\ndef f(x):\n" + KNOWN_OBJECTS[name]
    assert _reads(source) == []


def test_unknown_objects_stay_code_outside_the_project_and_say_so() -> None:
    """A model from a constructor parameter cannot be resolved: a read of every
    dimension but the batch, described as code the analysis cannot see."""
    source = TF + (
        "class Attack:\n    def __init__(self, model):\n        self.model = model\n"
        "    @tf.function\n    def __call__(self, x):\n        return self.model(x)\n"
    )
    wrapper, sites = discover_text(source, "m.py")
    (read,) = shape_use(ModuleView(wrapper), sites[0].function, ["x"], {"x": 4}).reads["x"]
    assert (read.kind, read.dims, read.unseen) == ("callee", frozenset({1, 2, 3}), True)
    assert "code the analysis cannot see" in read.describe()
    # a Keras layer of the library stays "outside the project" (known, not unseen)
    keras_layer = (
        TF + "dense = tf.keras.layers.Dense(3)\n@tf.function\ndef f(x):\n    return dense(x)\n"
    )
    wrapper, sites = discover_text(keras_layer, "m.py")
    (read,) = shape_use(ModuleView(wrapper), sites[0].function, ["x"], {"x": 2}).reads["x"]
    assert (read.kind, read.unseen) == ("callee", False)

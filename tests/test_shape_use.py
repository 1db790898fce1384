"""The shape-use analysis: which static dimensions traced code reads (pure, no TensorFlow).

Each case is a source, the traced function's parameters and the reads expected as
``(param, dims or "all", kind)``; ``[]`` means the code reads no static shape.
"""

from __future__ import annotations

import pytest

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
    found = shape_use(wrapper, function, params, {p: 2 for p in params})
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
    found = shape_use(wrapper, sites[0].function, ["x"], autograph=False)
    assert [(r.param, r.dims) for r in found.reads["x"]] == [("x", frozenset({0}))]


def test_random_draws_that_depend_on_the_trace_count() -> None:
    source = TF + (
        "import random\nimport numpy as np\n@tf.function\ndef f(x):\n"
        "    a = tf.random.normal([3]) + tf.random.stateless_normal([3], seed=[1, 2])\n"
        "    g = tf.random.Generator.from_seed(1)\n"
        "    return tf.nn.dropout(x, 0.5) + random.random() + np.random.rand() + g.normal([3])\n"
    )
    wrapper, sites = discover_text(source, "m.py")
    draws = shape_use(wrapper, sites[0].function, ["x"]).random_draws
    assert sorted(d.code for d in draws) == [
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
    (read,) = shape_use(wrapper, sites[-1].function, ["x"]).reads["x"]
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
    (read,) = shape_use(wrapper, sites[0].function, ["x"], modules=modules).reads["x"]
    assert (read.dims, read.kind, read.line) == (frozenset({1}), "python", 2)
    assert read.via == "pkg.helpers.steps() (called at line 6)"
    # without the project's modules the helpers are code outside the project
    unknown = shape_use(wrapper, sites[0].function, ["x"], {"x": 2}).reads["x"]
    assert {r.kind for r in unknown} == {"callee"}

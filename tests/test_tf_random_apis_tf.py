"""The generated table of stateful random APIs (``autosig/analysis/tf_random_apis.py``).

It is derived from TensorFlow itself (``scripts/gen_tf_random_apis.py``): these tests
regenerate it and fail when the installed TensorFlow or Keras says otherwise, check
the entries issue 22 named, and trace a few of them to see that their graphs really
hold the op types the table gives (the table comes from reading Python code; tracing
is the independent check).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.tf

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "autosig" / "analysis" / "tf_random_apis.py"


def _generator():
    spec = importlib.util.spec_from_file_location(
        "gen_tf_random_apis", ROOT / "scripts" / "gen_tf_random_apis.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_committed_table_is_what_this_tensorflow_gives() -> None:
    gen = _generator()
    text = gen.render(gen.generate())
    assert text == TABLE.read_text(encoding="utf-8"), (
        "autosig/analysis/tf_random_apis.py is out of date for this TensorFlow/Keras: "
        "run python scripts/gen_tf_random_apis.py and review the diff"
    )


def test_hidden_draws_keras_layers_and_generators_are_in_it_with_their_kind() -> None:
    from autosig.analysis.tf_random_apis import (
        GENERATOR,
        HIDDEN,
        SEED_GENERATOR,
        STATEFUL_RANDOM_APIS,
    )

    expected = {
        "tensorflow.nn.nce_loss": (HIDDEN, "LogUniformCandidateSampler"),
        "tensorflow.nn.sampled_softmax_loss": (HIDDEN, "LogUniformCandidateSampler"),
        "tensorflow.image.sample_distorted_bounding_box": (
            HIDDEN,
            "SampleDistortedBoundingBoxV2",
        ),
        "tensorflow.random.shuffle": (HIDDEN, "RandomShuffle"),
        "tensorflow.nn.dropout": (HIDDEN, "RandomUniform"),
        "tensorflow.random.normal": (HIDDEN, "RandomStandardNormal"),
        "tensorflow.random.categorical": (HIDDEN, "Multinomial"),
        "tensorflow.image.random_flip_left_right": (HIDDEN, "RandomUniform"),
        "tensorflow.image.random_brightness": (HIDDEN, "RandomUniform"),
        "tensorflow.image.random_crop": (HIDDEN, "RandomUniformInt"),
        "tensorflow.compat.v1.random_normal": (HIDDEN, "RandomStandardNormal"),
        "tensorflow.random.Generator.normal": (GENERATOR, "RngReadAndSkip"),
        "keras.layers.Dropout": (SEED_GENERATOR, "SeedGenerator"),
        "keras.layers.GaussianNoise": (SEED_GENERATOR, "SeedGenerator"),
        "keras.layers.RandomFlip": (SEED_GENERATOR, "SeedGenerator"),
        "keras.layers.RandomRotation": (SEED_GENERATOR, "SeedGenerator"),
        "tensorflow.keras.layers.Dropout": (SEED_GENERATOR, "SeedGenerator"),
        "keras.random.normal": (SEED_GENERATOR, "SeedGenerator"),
    }
    for name, (kind, op) in expected.items():
        assert name in STATEFUL_RANDOM_APIS, name
        found_kind, ops = STATEFUL_RANDOM_APIS[name]
        assert found_kind == kind and op in ops, (name, STATEFUL_RANDOM_APIS[name])
    for name in (
        "tensorflow.matmul",
        "tensorflow.nn.relu",
        "tensorflow.random.stateless_uniform",
        "tensorflow.random.stateless_normal",
        "tensorflow.nn.experimental.stateless_dropout",
        "tensorflow.image.stateless_random_flip_left_right",
        "keras.layers.Dense",
        "keras.layers.Conv2D",
        "keras.layers.LayerNormalization",
    ):
        assert name not in STATEFUL_RANDOM_APIS, name


def test_traced_graphs_hold_the_op_types_the_table_gives() -> None:
    """Reading code and tracing agree: each API's graph has a random op of the table's."""
    import keras
    import tensorflow as tf

    from autosig.analysis.tf_random_apis import STATEFUL_RANDOM_APIS
    from autosig.profile.random_ops import random_ops_in

    x = tf.TensorSpec([4, 3])
    image = tf.TensorSpec([8, 8, 3])
    traced = {
        "tensorflow.nn.dropout": (lambda a: tf.nn.dropout(a, 0.5), [x]),
        "tensorflow.random.shuffle": (tf.random.shuffle, [x]),
        "tensorflow.image.random_flip_left_right": (tf.image.random_flip_left_right, [image]),
        "tensorflow.image.random_brightness": (
            lambda a: tf.image.random_brightness(a, 0.2),
            [image],
        ),
        "tensorflow.nn.nce_loss": (
            lambda w, b, labels, a: tf.nn.nce_loss(w, b, labels, a, 2, 10),
            [tf.TensorSpec([10, 3]), tf.TensorSpec([10]), tf.TensorSpec([4, 1], tf.int64), x],
        ),
        "tensorflow.image.sample_distorted_bounding_box": (
            lambda boxes: tf.image.sample_distorted_bounding_box(
                tf.constant([10, 10, 3]), boxes, min_object_covered=0.1
            ),
            [tf.TensorSpec([1, 1, 4])],
        ),
    }
    for name, (fn, specs) in traced.items():
        graph = tf.function(fn).get_concrete_function(*specs).graph
        found = random_ops_in(graph)
        assert found and found <= set(STATEFUL_RANDOM_APIS[name][1]), (name, found)
    layer = keras.layers.Dropout(0.5)
    graph = tf.function(lambda a: layer(a, training=True)).get_concrete_function(x).graph
    # Keras 3 draws with stateless ops seeded from its SeedGenerator's variable
    assert not random_ops_in(graph)
    assert "AssignVariableOp" in {op.type for op in graph.get_operations()}

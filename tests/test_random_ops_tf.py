"""The stateful random op types, read from TensorFlow's op registry (real TensorFlow)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.tf


def test_registry_splits_hidden_and_variable_state() -> None:
    from autosig.profile.random_ops import hidden_state_random_ops, variable_state_random_ops

    hidden, variable = hidden_state_random_ops(), variable_state_random_ops()
    for op in (
        "RandomStandardNormal",
        "RandomUniform",
        "LogUniformCandidateSampler",
        "SampleDistortedBoundingBoxV2",
        "RandomShuffle",
        "Multinomial",
    ):
        assert op in hidden
    assert {"StatefulUniform", "RngReadAndSkip"} <= variable
    assert not hidden & variable
    # stateless draws are reproducible from their seed: never counted
    assert not {"StatelessRandomNormalV2", "StatelessRandomUniformV2"} & (hidden | variable)


def test_random_ops_found_in_nested_graphs_and_hidden_apis() -> None:
    import tensorflow as tf

    from autosig.profile.random_ops import random_ops_in

    @tf.function
    def step(x, labels, weights, biases):
        dropped = tf.nn.dropout(x, 0.5)
        loss = tf.nn.nce_loss(weights, biases, labels, x, num_sampled=2, num_classes=10)
        box = tf.image.sample_distorted_bounding_box(
            tf.constant([10, 10, 3]),
            tf.constant([[[0.0, 0.0, 1.0, 1.0]]]),
            min_object_covered=0.1,
        )
        shuffled = tf.random.shuffle(x)

        def body(i, acc):
            return i + 1, acc + tf.random.normal([2])

        _, acc = tf.while_loop(lambda i, acc: i < 3, body, (0, tf.zeros([2])))
        return dropped, loss, box, shuffled, acc

    concrete = step.get_concrete_function(
        tf.TensorSpec([4, 3]),
        tf.TensorSpec([4, 1], tf.int64),
        tf.TensorSpec([10, 3]),
        tf.TensorSpec([10]),
    )
    assert random_ops_in(concrete.graph, kinds=("hidden",)) == {
        "RandomUniform",
        "LogUniformCandidateSampler",
        "SampleDistortedBoundingBoxV2",
        "RandomShuffle",
        "RandomStandardNormal",
    }

    generator = tf.random.Generator.from_seed(1)

    @tf.function
    def draw(x):
        return x + generator.normal([2]) + tf.random.stateless_normal([2], seed=[1, 2])

    graph = draw.get_concrete_function(tf.TensorSpec([2])).graph
    assert random_ops_in(graph, kinds=("hidden",)) == set()
    assert random_ops_in(graph) == {"RngReadAndSkip"}

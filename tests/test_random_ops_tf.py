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


def test_graph_reach_follows_dataflow_from_the_draws() -> None:
    """What each output, variable write and print depends on: a deterministic output
    beside a dropout depends on no draw; a nested tf.function's outputs are mapped one
    by one; a while_loop with a draw inside is followed coarsely; Generator draws are
    their own kind."""
    import tensorflow as tf

    from autosig.profile.random_ops import (
        HIDDEN,
        VARIABLE,
        graph_reach,
        variable_state_random_ops,
    )

    v = tf.Variable(tf.zeros([3]))
    generator = tf.random.Generator.from_seed(1)

    @tf.function
    def inner(a):
        return a * tf.random.normal([3]), a + 1.0

    @tf.function
    def step(x, y):
        dropped = tf.nn.dropout(x, 0.5)
        v.assign_add(dropped)
        noisy, plain = inner(y)
        tf.print("d", dropped, end="<site>")

        def body(i, acc):
            return i + 1, acc + tf.random.uniform([3])

        _, looped = tf.while_loop(lambda i, a: i < 3, body, (0, y))
        return {
            "dropped": dropped,
            "det": y * 2.0,
            "noisy": noisy,
            "plain": plain,
            "looped": looped,
            "drawn": generator.normal([3]) + x,
        }

    concrete = step.get_concrete_function(tf.TensorSpec([3]), tf.TensorSpec([3]))
    graph = concrete.graph
    inputs = list(graph.inputs)
    resource = [j for j, t in enumerate(inputs) if t.dtype == tf.resource]
    reach = graph_reach(graph.as_graph_def(), [t.name for t in inputs], resource)
    outputs = {k: reach.of(t.name) for k, t in concrete.structured_outputs.items()}
    assert HIDDEN in outputs["dropped"] and 0 in outputs["dropped"]
    assert outputs["det"] == frozenset({1})  # beside the draws, reached by none
    assert HIDDEN in outputs["noisy"] and HIDDEN not in outputs["plain"]
    assert HIDDEN in outputs["looped"]
    assert VARIABLE in outputs["drawn"] and HIDDEN not in outputs["drawn"]
    internal = next(i for e, i in graph.captures if e is v.handle)
    handle = next(j for j, t in enumerate(inputs) if t is internal)
    assert HIDDEN in reach.writes[handle] and handle in reach.writes[handle]  # assign_add
    assert [(end, HIDDEN in deps) for end, deps in reach.prints] == [("<site>", True)]
    assert {"RandomUniform", "RandomStandardNormal"} <= set(reach.random_ops)
    assert set(reach.random_ops) & variable_state_random_ops()
    assert all(seed.startswith(("RandomUniform(", "RandomStandardNormal(")) for seed in reach.seeds)

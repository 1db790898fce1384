"""Which graph ops draw random numbers, read from TensorFlow's own op registry.

Two kinds matter to autosig, and the registry tells them apart without a hand list:

- **hidden-state** kernels: stateful ops with ``seed``/``seed2`` attributes
  (``RandomStandardNormal`` of ``tf.random.normal``, ``RandomUniform`` of
  ``tf.nn.dropout``, the candidate samplers inside ``tf.nn.nce_loss`` and
  ``sampled_softmax_loss``, ``SampleDistortedBoundingBox``, ``RandomShuffle``, ...).
  Each op in a graph keeps its own stream, so each trace starts a new one: a fix that
  changes the trace count changes the numbers drawn.
- **variable-state** kernels: stateful ops that take an RNG algorithm input
  (``tf.random.Generator``'s ``StatefulUniform``, ``RngReadAndSkip``, ...). Their state
  lives in a ``tf.Variable``, shared by every trace: the trace count does not change the
  stream, but graph, eager and XLA may still draw differently.

TensorFlow is imported only when a function here is first called (they run in profiled
and verified processes, never in static commands).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

NON_DETERMINISTIC = frozenset({"NonDeterministicInts"})
"""Stateful random ops with neither a seed nor an RNG state: always different."""


@functools.lru_cache(maxsize=1)
def _registry() -> tuple[frozenset[str], frozenset[str]]:
    from tensorflow.core.framework import op_def_pb2
    from tensorflow.python.client import pywrap_tf_session as c_api

    buffer = c_api.TF_GetAllOpList()
    try:
        ops = op_def_pb2.OpList()
        ops.ParseFromString(c_api.TF_GetBuffer(buffer))
    finally:
        c_api.TF_DeleteBuffer(buffer)
    hidden = set(NON_DETERMINISTIC)
    variable = set()
    for op in ops.op:
        if not op.is_stateful:
            continue
        attrs = {attr.name for attr in op.attr}
        if {"seed", "seed2"} <= attrs:
            hidden.add(op.name)
        elif any(arg.name in ("algorithm", "alg") for arg in op.input_arg):
            variable.add(op.name)
    return frozenset(hidden), frozenset(variable)


def hidden_state_random_ops() -> frozenset[str]:
    """Op types whose random stream belongs to the op in one graph (one per trace)."""
    return _registry()[0]


def variable_state_random_ops() -> frozenset[str]:
    """Op types that draw from a ``tf.random.Generator``'s state variable."""
    return _registry()[1]


def is_hidden_state_random(op_type: str) -> bool:
    return op_type in hidden_state_random_ops()


def is_random(op_type: str) -> bool:
    """Any stateful random draw (hidden or variable state)."""
    hidden, variable = _registry()
    return op_type in hidden or op_type in variable


def graph_op_types(graph: Any) -> list[str]:
    """Every op type in a ``tf.Graph`` and in the functions it calls (``tf.while_loop``
    bodies, nested ``tf.function``s, Keras layers' ``StatefulPartitionedCall``s)."""
    definition = graph.as_graph_def()
    types = [node.op for node in definition.node]
    for function in definition.library.function:
        types.extend(node.op for node in function.node_def)
    return types


def random_ops_in(graph: Any, kinds: Iterable[str] = ("hidden", "variable")) -> set[str]:
    """The stateful random op types a graph (with its library) runs, of ``kinds``."""
    hidden, variable = _registry()
    wanted = (hidden if "hidden" in kinds else frozenset()) | (
        variable if "variable" in kinds else frozenset()
    )
    return {op for op in graph_op_types(graph) if op in wanted}

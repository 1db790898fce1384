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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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


# -- dataflow: what the random draws reach ----------------------------------------------

HIDDEN = "hidden"
"""A dependency on a hidden-state random draw (its stream restarts with each trace)."""
VARIABLE = "variable"
"""A dependency on a ``tf.random.Generator`` draw (its state lives in a variable)."""
Dep = str | int
"""``HIDDEN``, ``VARIABLE``, or ``j``: the value of the graph's (or function's) input
``j`` (for a resource input: the value of the variable behind it when it is read)."""

_RESOURCE = 20  # types_pb2.DT_RESOURCE: kept literal, TensorFlow is not imported here
_PASS_HANDLE = frozenset({"Identity", "IdentityN"})
_READ_ONLY = frozenset(
    {
        "ReadVariableOp",
        "_ReadVariablesOp",
        "ResourceGather",
        "ResourceGatherNd",
        "VarIsInitializedOp",
        "VariableShape",
    }
)
"""Ops that take a variable's handle but never change the variable."""
_CALLS = frozenset({"PartitionedCall", "StatefulPartitionedCall"})
"""Calls of one library function whose outputs are the function's returns, in order."""


@dataclass(frozen=True)
class Reach:
    """What one graph's values depend on: random draws and its inputs (``Dep``)."""

    tensors: Mapping[str, frozenset[Dep]]
    """Every node's output tensor (``"node:0"`` as in ``Tensor.name``; node level:
    each output of a node depends on all its inputs) -> its dependencies."""
    writes: Mapping[int, frozenset[Dep]]
    """Resource input ``j`` -> what the variable behind it was assigned from (its old
    value included: ``assign_add``)."""
    prints: tuple[tuple[str, frozenset[Dep]], ...]
    """Each ``PrintV2`` op: its ``end`` attribute and what its printed values depend on."""
    random_ops: frozenset[str]
    seeds: tuple[str, ...]
    """``Op(seed, seed2)`` of every hidden-state draw: TensorFlow derives the op seed
    from the graph (its op count) when the program gave none."""

    def of(self, tensor_name: str) -> frozenset[Dep]:
        name = tensor_name if ":" in tensor_name else f"{tensor_name}:0"
        node, _, index = name.rpartition(":")
        return self.tensors.get(name, self.tensors.get(f"{node}:*", frozenset()))


@dataclass
class _Summary:
    """A library function's returns, writes and prints in terms of its arguments."""

    rets: list[frozenset[Dep]]
    writes: dict[int, frozenset[Dep]]
    prints: list[tuple[str, frozenset[Dep]]]
    random_ops: set[str]
    seeds: list[str]

    def inner(self) -> frozenset[Dep]:
        """Everything the function's effects depend on (a coarse view of a call)."""
        out: set[Dep] = set()
        for deps in (*self.rets, *self.writes.values(), *(d for _, d in self.prints)):
            out |= deps
        return frozenset(out)


class _Body:
    """Dependencies inside one graph body: a GraphDef's nodes or a FunctionDef's."""

    def __init__(
        self,
        nodes: Sequence[Any],
        args: Mapping[str, int],
        resource_args: set[int],
        library: _Library,
        function_def: bool,
    ) -> None:
        self.nodes = {node.name: node for node in nodes}
        self.args = args
        self.resource_args = resource_args
        self.library = library
        self.function_def = function_def
        self.node_deps: dict[str, frozenset[Dep]] = {}
        self.out_deps: dict[str, list[frozenset[Dep]]] = {}
        self.handles: dict[str, frozenset[int]] = {}
        self.writes: dict[int, set[Dep]] = {}
        self.prints: list[tuple[str, frozenset[Dep]]] = []
        self.random_ops: set[str] = set()
        self.seeds: list[str] = []
        hidden = hidden_state_random_ops()
        variable = variable_state_random_ops()
        for name in self._order():
            self._visit(self.nodes[name], hidden, variable)

    # references: "x" (GraphDef node or FunctionDef argument), "n:1", "n:out:1", "^ctrl"
    def _split(self, ref: str) -> tuple[str, int | None]:
        parts = ref.split(":")
        if len(parts) == 1:
            return parts[0], 0 if parts[0] not in self.args else None
        return parts[0], int(parts[-1])

    def _inputs(self, node: Any) -> list[str]:
        return [ref for ref in node.input if not ref.startswith("^")]

    def _order(self) -> list[str]:
        """Nodes, every node after its inputs (iterative DFS; a cycle is cut)."""
        order: list[str] = []
        state: dict[str, int] = {}
        for root in self.nodes:
            if root in state:
                continue
            stack = [(root, False)]
            while stack:
                name, done = stack.pop()
                if done:
                    state[name] = 2
                    order.append(name)
                    continue
                if name in state:
                    continue
                state[name] = 1
                stack.append((name, True))
                for ref in self._inputs(self.nodes[name]):
                    source, _ = self._split(ref.lstrip("^"))
                    if source in self.nodes and source not in state:
                        stack.append((source, False))
        return order

    def deps(self, ref: str) -> frozenset[Dep]:
        source, index = self._split(ref)
        if index is None:
            return frozenset({self.args[source]})
        outs = self.out_deps.get(source)
        if outs is not None and index < len(outs):
            return outs[index]
        return self.node_deps.get(source, frozenset())

    def handle_roots(self, ref: str) -> frozenset[int]:
        source, index = self._split(ref)
        if index is None:
            j = self.args[source]
            return frozenset({j}) if j in self.resource_args else frozenset()
        return self.handles.get(source, frozenset())

    def _visit(self, node: Any, hidden: frozenset[str], variable: frozenset[str]) -> None:
        inputs = self._inputs(node)
        deps: set[Dep] = set()
        for ref in inputs:
            deps |= self.deps(ref)
        op = node.op
        if op == "Placeholder" and not self.function_def and node.name in self.args:
            j = self.args[node.name]
            self.node_deps[node.name] = frozenset({j})
            if j in self.resource_args:
                self.handles[node.name] = frozenset({j})
            return
        if op in _PASS_HANDLE:
            roots = frozenset().union(*(self.handle_roots(ref) for ref in inputs))
            if roots:
                self.handles[node.name] = roots
        if op in hidden:
            deps.add(HIDDEN)
            self.random_ops.add(op)
            seed = node.attr["seed"].i if "seed" in node.attr else 0
            seed2 = node.attr["seed2"].i if "seed2" in node.attr else 0
            self.seeds.append(f"{op}({seed}, {seed2})")
        elif op in variable:
            deps.add(VARIABLE)
            self.random_ops.add(op)
        callees = [
            value.func.name
            for key, value in sorted(node.attr.items())
            if value.HasField("func") and value.func.name in self.library.functions
        ]
        callees += [
            f.name
            for _, value in sorted(node.attr.items())
            if value.HasField("list")
            for f in value.list.func
            if f.name in self.library.functions
        ]
        if op in _CALLS and len(callees) == 1:
            self._call(node, inputs, self.library.summary(callees[0]))
            return
        if callees:
            # control flow (While, If, Case, ...) and dataset functions: coarse, every
            # output and every effect depends on every input and on what the bodies draw
            for callee in callees:
                summary = self.library.summary(callee)
                deps |= {d for d in summary.inner() if not isinstance(d, int)}
                self.random_ops |= summary.random_ops
                self.seeds += summary.seeds
                if summary.writes:
                    self._write_all(inputs, deps)
                self.prints += [(end, frozenset(deps)) for end, _ in summary.prints]
        elif op == "PrintV2":
            self.prints.append((_end_attr(node), frozenset(deps)))
        elif op not in _READ_ONLY and op not in _PASS_HANDLE:
            self._write_all(inputs, deps)
        self.node_deps[node.name] = frozenset(deps)

    def _write_all(self, inputs: list[str], deps: set[Dep]) -> None:
        for ref in inputs:
            for root in self.handle_roots(ref):
                self.writes.setdefault(root, set()).update(deps)

    def _call(self, node: Any, inputs: list[str], summary: _Summary) -> None:
        def subst(deps: frozenset[Dep]) -> frozenset[Dep]:
            out: set[Dep] = set()
            for dep in deps:
                if isinstance(dep, int):
                    if dep < len(inputs):
                        out |= self.deps(inputs[dep])
                else:
                    out.add(dep)
            return frozenset(out)

        outs = [subst(deps) for deps in summary.rets]
        self.out_deps[node.name] = outs
        self.node_deps[node.name] = frozenset().union(*outs) if outs else frozenset()
        for j, deps in summary.writes.items():
            if j < len(inputs):
                for root in self.handle_roots(inputs[j]):
                    self.writes.setdefault(root, set()).update(subst(deps))
        self.prints += [(end, subst(deps)) for end, deps in summary.prints]
        self.random_ops |= summary.random_ops
        self.seeds += summary.seeds


def _end_attr(node: Any) -> str:
    end = node.attr["end"].s if "end" in node.attr else b"\n"
    return end.decode("utf-8", errors="replace")


class _Library:
    def __init__(self, functions: Iterable[Any]) -> None:
        self.functions = {f.signature.name: f for f in functions}
        self._summaries: dict[str, _Summary] = {}

    def summary(self, name: str) -> _Summary:
        if name in self._summaries:
            return self._summaries[name]
        self._summaries[name] = _Summary([], {}, [], set(), [])  # a recursive call: nothing
        function = self.functions[name]
        arg_list = list(function.signature.input_arg)
        args = {arg.name: j for j, arg in enumerate(arg_list)}
        resource = {j for j, arg in enumerate(arg_list) if arg.type == _RESOURCE}
        body = _Body(function.node_def, args, resource, self, function_def=True)
        rets = [body.deps(function.ret[arg.name]) for arg in function.signature.output_arg]
        summary = _Summary(
            rets,
            {j: frozenset(d) for j, d in body.writes.items()},
            body.prints,
            body.random_ops,
            body.seeds,
        )
        self._summaries[name] = summary
        return summary


def graph_reach(graph_def: Any, inputs: Sequence[str], resource_inputs: Iterable[int]) -> Reach:
    """Follow dataflow through a ``GraphDef`` and its function library.

    ``inputs``: the graph's input tensor names in order (``FuncGraph.inputs``: the
    arguments, then the captures); ``resource_inputs``: which of them are variable
    handles. Control dependencies carry no values and are not followed; a call of a
    library function maps its returns to its outputs one by one; control flow and
    dataset functions are followed coarsely (every output depends on every input and
    on every draw inside). Pure protobuf work: no TensorFlow import.
    """
    args = {name.rsplit(":", 1)[0]: j for j, name in enumerate(inputs)}
    library = _Library(graph_def.library.function)
    body = _Body(graph_def.node, args, set(resource_inputs), library, function_def=False)
    tensors: dict[str, frozenset[Dep]] = {}
    for name, deps in body.node_deps.items():
        tensors[f"{name}:*"] = deps
        tensors[f"{name}:0"] = deps
    for name, outs in body.out_deps.items():
        for index, deps in enumerate(outs):
            tensors[f"{name}:{index}"] = deps
    return Reach(
        tensors,
        {j: frozenset(d) for j, d in body.writes.items()},
        tuple(body.prints),
        frozenset(body.random_ops),
        tuple(sorted(body.seeds)),
    )

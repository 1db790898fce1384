"""A traced graph as comparable data, and the comparisons the verdicts rest on. Pure.

Works on a ``GraphDef`` protocol buffer (no TensorFlow import): every node of the graph
and of the functions it calls (``tf.while_loop`` bodies, ``tf.cond`` branches, nested
tf.functions), keyed by node name (functions by the order they are first referenced,
since their names carry global counters), with its op type, its attributes and its
inputs. Attributes that only carry static shapes are left out: two traces of the same
code at two sizes differ there and nowhere else unless the code reads the size. A
constant's value is kept apart (a digest), because TensorFlow folds ``tf.shape(x)`` of
a fully known shape into a constant: the value differs between sizes in a harmless way
exactly where the relaxed trace has a ``Shape`` op instead.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

LEAF_OPS = frozenset({"Const", "Placeholder"})
IGNORED_ATTRS = frozenset({"_output_shapes", "_user_specified_name", "_class", "_gradient_op_type"})
"""Attributes left out besides those holding shapes: the names a placeholder was given,
colocation hints (``loc:@name``) and a custom gradient's registered name
(``CustomGradient-1234``) carry counters, not computation."""
NodeKey = str
GRADIENT_SCOPES = ("gradient_tape/", "gradients/")


@dataclass
class CanonicalGraph:
    nodes: dict[NodeKey, tuple[Any, ...]] = field(default_factory=dict)
    """key -> (op type, attributes, inputs): equal for equal code paths."""
    order: list[NodeKey] = field(default_factory=list)
    ops: dict[NodeKey, str] = field(default_factory=dict)
    consts: dict[NodeKey, str] = field(default_factory=dict)
    """Const node -> digest of its value."""
    const_kinds: dict[NodeKey, tuple[Any, ...]] = field(default_factory=dict)
    """Const node -> (dtype, shape, (consumer op type, input position) ...): what makes
    two constants of one name in two graphs the same constant (generic names such as
    ``Const`` are reused by unrelated ops when library code takes another path)."""
    const_ints: dict[NodeKey, tuple[int, ...]] = field(default_factory=dict)
    """Small int32/int64 constants' values (shapes, sizes, axes)."""
    dtypes: dict[NodeKey, int] = field(default_factory=dict)
    """Node -> its ``dtype`` or ``T`` attribute (a dtype enum), where it has one."""
    inputs: dict[NodeKey, tuple[str, ...]] = field(default_factory=dict)
    gradient: set[NodeKey] = field(default_factory=set)
    """Nodes of gradient computations (``gradient_tape/...`` names, functions only they
    reach): TensorFlow builds them from the forward graph and its static shapes, and
    specialises them at size 1 (a broadcast's reduction) where the forward graph is the
    same."""
    raw: dict[NodeKey, str] = field(default_factory=dict)
    """key -> the node's own name (with its function's id prefix), for tracebacks."""
    functions: int = 0

    def __len__(self) -> int:
        return len(self.order)


def _attr_is_shape(value: Any) -> bool:
    which = value.WhichOneof("value")
    return which == "shape" or (which == "list" and len(value.list.shape) > 0)


class _Canonicalizer:
    """Builds a CanonicalGraph. Functions get ids by the order they are first referenced
    (from the main graph, then breadth first), and every name that embeds a function's
    name (``while_while_cond_29___redundant_placeholder0``) gets the id instead."""

    def __init__(self, graph_def: Any) -> None:
        self.library = {f.signature.name: f for f in graph_def.library.function}
        self.ids: dict[str, str] = {}
        self._number(graph_def)
        names = sorted(self.ids, key=len, reverse=True)
        variants = {v: self.ids[n] for n in names for v in (n, n.replace("/", "_"))}
        self.pattern = re.compile("|".join(re.escape(v) for v in variants)) if variants else None
        self.variants = variants
        self.out = CanonicalGraph()
        self.prefix = ""
        self.scope_names: dict[str, str] = {}
        self.in_gradient = False

    def _number(self, graph_def: Any) -> None:
        """Function ids: those the forward computation references first (breadth first),
        then those only gradient nodes reach, so a gradient function TensorFlow adds at
        one size does not shift the forward functions' ids."""
        queue: list[str] = []
        self.gradient_functions: set[str] = set()

        def see(name: str, gradient: bool) -> None:
            if name in self.library and name not in self.ids:
                self.ids[name] = f"fn{len(self.ids)}"
                queue.append(name)
                if gradient:
                    self.gradient_functions.add(name)

        def visit(nodes: Any, in_gradient: bool, which: str) -> None:
            for node in nodes:
                gradient = in_gradient or is_gradient_name(node.name)
                if which == "forward" and gradient or which == "gradient" and not gradient:
                    continue
                see(node.op, gradient)
                for key in sorted(node.attr):
                    for name in _func_names(node.attr[key]):
                        see(name, gradient)

        visit(graph_def.node, False, "forward")
        done = 0
        while done < len(queue):
            visit(self.library[queue[done]].node_def, False, "forward")
            done += 1
        forward = list(queue)
        visit(graph_def.node, False, "gradient")
        for name in forward:
            visit(self.library[name].node_def, False, "gradient")
        while done < len(queue):
            name = queue[done]
            visit(self.library[name].node_def, name in self.gradient_functions, "all")
            done += 1
        for name in self.library:  # referenced from nowhere we look: library order
            see(name, False)
        self.queue = queue

    def rename(self, text: str) -> str:
        if self.pattern is None:
            return text
        return self.pattern.sub(lambda m: self.variants[m.group(0)], text)

    def attr(self, value: Any) -> Any:
        which = value.WhichOneof("value")
        if which == "func":
            nested = tuple(sorted((k, self.attr(v)) for k, v in value.func.attr.items()))
            return ("func", self.ids.get(value.func.name, value.func.name), nested)
        if which == "list" and len(value.list.func):
            return ("funcs", tuple(self.ids.get(f.name, f.name) for f in value.list.func))
        if which == "s":
            return ("s", self.rename(value.s.decode("utf-8", "replace")))
        return value.SerializeToString(deterministic=True)

    def local(self, text: str) -> str:
        """A node or argument name within the current graph, placeholders by position."""
        if self.scope_names:
            head, sep, tail = text.lstrip("^").partition(":")
            if head in self.scope_names:
                return ("^" if text.startswith("^") else "") + self.scope_names[head] + sep + tail
        return self.rename(text) if self.prefix else text

    def add_node(self, prefix: str, node: Any) -> None:
        if node.op == "Placeholder":  # captured tensors' names carry global counters
            self.scope_names[node.name] = f"<placeholder{len(self.scope_names)}>"
        name = self.local(node.name)
        key = prefix + name
        op = ("call", self.ids[node.op]) if node.op in self.ids else node.op
        attrs = []
        for attr_name in sorted(node.attr):
            value = node.attr[attr_name]
            if attr_name in IGNORED_ATTRS or _attr_is_shape(value):
                continue
            if node.op == "Const" and attr_name == "value":
                digest = hashlib.sha1(value.tensor.SerializeToString(deterministic=True))
                self.out.consts[key] = digest.hexdigest()
                dims = tuple(d.size for d in value.tensor.tensor_shape.dim)
                self.out.const_kinds[key] = (value.tensor.dtype, dims)
                ints = _small_ints(value.tensor, dims)
                if ints is not None:
                    self.out.const_ints[key] = ints
                continue
            attrs.append((attr_name, self.attr(value)))
        inputs = tuple(self.local(i) for i in node.input)
        self.out.nodes[key] = (op, tuple(attrs), inputs)
        self.out.order.append(key)
        if self.in_gradient or is_gradient_name(node.name):
            self.out.gradient.add(key)
        self.out.ops[key] = node.op
        self.out.raw[key] = prefix + node.name
        self.out.inputs[key] = tuple(prefix + _node_of(i) for i in inputs)
        for attr_name in ("dtype", "T"):
            if attr_name in node.attr and node.attr[attr_name].WhichOneof("value") == "type":
                self.out.dtypes[key] = node.attr[attr_name].type
                break

    def run(self, graph_def: Any) -> CanonicalGraph:
        self.prefix, self.scope_names, self.in_gradient = "", {}, False
        for node in graph_def.node:
            self.add_node("", node)
        for name in self.queue:
            function = self.library[name]
            prefix = f"{self.ids[name]}/"
            signature = function.signature
            self.prefix = prefix
            self.in_gradient = name in self.gradient_functions
            self.scope_names = {a.name: f"<arg{i}>" for i, a in enumerate(signature.input_arg)}
            local = self.local
            self.out.nodes[prefix + "<signature>"] = (
                "<signature>",
                tuple((a.type, a.type_attr) for a in signature.input_arg),
                tuple((local(a.name), a.type, a.type_attr) for a in signature.output_arg),
                tuple(sorted((local(k), local(v)) for k, v in function.ret.items())),
            )
            self.out.order.append(prefix + "<signature>")
            self.out.ops[prefix + "<signature>"] = "<signature>"
            if self.in_gradient:
                self.out.gradient.add(prefix + "<signature>")
            for node in function.node_def:
                self.add_node(prefix, node)
        self.out.functions = len(self.queue)
        consumers: dict[NodeKey, list[tuple[str, int]]] = {}
        for key in self.out.order:
            for position, source in enumerate(self.out.inputs.get(key, ())):
                if source in self.out.const_kinds:
                    consumers.setdefault(source, []).append((self.out.ops[key], position))
        for key, kind in self.out.const_kinds.items():
            self.out.const_kinds[key] = (*kind, tuple(sorted(consumers.get(key, []))))
        return self.out


INT_DTYPES = {3: "<i4", 9: "<i8"}
"""DT_INT32 and DT_INT64, as NumPy dtypes of a TensorProto's little-endian content."""


def _small_ints(tensor: Any, dims: tuple[int, ...]) -> tuple[int, ...] | None:
    """The values of a small int32/int64 TensorProto, None for anything else."""
    if tensor.dtype not in INT_DTYPES:
        return None
    count = 1
    for d in dims:
        count *= max(d, 0)
    if count > 64:
        return None
    if tensor.tensor_content:
        import numpy as np

        return tuple(int(v) for v in np.frombuffer(tensor.tensor_content, INT_DTYPES[tensor.dtype]))
    values = list(tensor.int_val if tensor.dtype == 3 else tensor.int64_val)
    if len(values) == 1 and count > 1:
        values = values * count
    return tuple(int(v) for v in values)


def is_gradient_name(name: str) -> bool:
    return name.startswith(GRADIENT_SCOPES) or any(f"/{g}" in name for g in GRADIENT_SCOPES)


def _func_names(value: Any) -> list[str]:
    which = value.WhichOneof("value")
    if which == "func":
        nested = [n for v in value.func.attr.values() for n in _func_names(v)]
        return [value.func.name, *nested]
    if which == "list":
        return [f.name for f in value.list.func]
    return []


def _node_of(tensor_name: str) -> str:
    """``"^a"``, ``"a:1"``, ``"a:output:0"`` -> ``"a"``."""
    return tensor_name.lstrip("^").split(":", 1)[0]


def canonical(graph_def: Any) -> CanonicalGraph:
    return _Canonicalizer(graph_def).run(graph_def)


# -- comparisons ----------------------------------------------------------------------


def first_difference(
    a: CanonicalGraph, b: CanonicalGraph, tolerate: Callable[[NodeKey], bool] | None = None
) -> NodeKey | None:
    """A node that differs between the two graphs, None when they have the same structure
    (constants' values aside): first a node only one of them has (an op of a branch or a
    loop iteration the other lacks: its line is the one to show), then one that differs.
    Nodes ``tolerate`` accepts are not compared."""
    keep = (lambda key: True) if tolerate is None else (lambda key: not tolerate(key))
    for key in a.order:
        if key not in b.nodes and keep(key):
            return key
    for key in b.order:
        if key not in a.nodes and keep(key):
            return key
    for key in a.order:
        if key in b.nodes and a.nodes[key] != b.nodes[key] and keep(key):
            return key
    return None


def differences(a: CanonicalGraph, b: CanonicalGraph) -> set[NodeKey]:
    """Every node that differs between the two graphs (constants' values aside)."""
    out = {k for k in a.order if k not in b.nodes} | {k for k in b.order if k not in a.nodes}
    out.update(k for k in a.order if k in b.nodes and a.nodes[k] != b.nodes[k])
    return out


def describe_difference(a: CanonicalGraph, b: CanonicalGraph, key: NodeKey) -> str:
    """``op Squeeze 'Squeeze' only in the second graph`` and the like, for a reason line."""
    name = key.split("/", 1)[1] if key.startswith("fn") and "/" in key else key
    in_a, in_b = key in a.nodes, key in b.nodes
    if in_a and not in_b:
        return f"{a.ops[key]} '{name}' only in the first ({len(a)} vs {len(b)} nodes)"
    if in_b and not in_a:
        return f"{b.ops[key]} '{name}' only in the second ({len(a)} vs {len(b)} nodes)"
    if a.ops[key] != b.ops[key]:
        return f"'{name}' is {a.ops[key]} in one and {b.ops[key]} in the other"
    return f"{a.ops[key]} '{name}' has other attributes or inputs"


def same_constant(a: CanonicalGraph, b: CanonicalGraph, key: NodeKey) -> bool:
    """``key`` is a constant in both graphs, of the same dtype, shape and consumers."""
    kind = a.const_kinds.get(key)
    return kind is not None and kind == b.const_kinds.get(key)


def marks_unknown(
    concrete: Sequence[CanonicalGraph], relaxed: CanonicalGraph, key: NodeKey
) -> bool:
    """The relaxed graph's constant is the concrete ones with -1 (TensorFlow's "unknown
    size", as in ``tf.reshape(x, [-1, 4])``) where they differ, and equal elsewhere."""
    values = [g.const_ints.get(key) for g in concrete]
    mine = relaxed.const_ints.get(key)
    if mine is None or any(v is None or len(v) != len(mine) for v in values):
        return False
    for position, value in enumerate(mine):
        seen = {v[position] for v in values if v is not None}
        if len(seen) > 1 and value != -1 or len(seen) == 1 and value not in seen:
            return False
    return True


def changed_constants(graphs: Sequence[CanonicalGraph]) -> list[NodeKey]:
    """Constants present in every graph whose value is not the same in all of them."""
    first = graphs[0]
    out = []
    for key, digest in first.consts.items():
        values = {g.consts.get(key) for g in graphs}
        if None not in values and len(values | {digest}) > 1:
            out.append(key)
    return out


CALL_OPS = frozenset(
    {
        "While",
        "StatelessWhile",
        "If",
        "StatelessIf",
        "Case",
        "StatelessCase",
        "PartitionedCall",
        "StatefulPartitionedCall",
    }
)
"""Ops that pass tensors to a function: a captured tensor adds an input and a type."""
PACKING_OPS = frozenset({"Pack", "ConcatV2"})
INDEX_ARITHMETIC = frozenset({"AddV2", "Add", "Sub"})
"""Integer ops Python folds into a constant when the number is a Python int: ``p[:, k]``
slices from ``[0, k]`` to ``[0, k + 1]``, which with a tensor ``k`` are a ``Pack`` and an
``AddV2``. Only packing, adding and subtracting (``k * 1000003`` overflows int32 where
Python does not: a ``Mul`` stays a difference)."""
CALL_TYPE_ATTRS = frozenset(
    {"T", "Tin", "Tout", "_num_original_outputs", "_read_only_resource_inputs"}
)


def number_ops(graph: CanonicalGraph) -> Counter[tuple[Any, ...]]:
    """The graph's computation with its leaves left out, as a multiset of (op, attributes).

    A Python number is a constant in the original graph (inside a loop body, a constant
    of the body) and a placeholder in the graph traced with a scalar spec (inside a loop
    body, a captured input: one more input and input type on the loop). Constants,
    placeholders, what Python would have folded from only those (``Pack`` of ``[n, 0]``,
    integer ``k + 1`` of a slice bound) and the input types of loops and calls are
    therefore left out; any other op or dtype
    that differs means the spec changes what the code computes (a ``Cast``, a ``Pow``
    Python had done, a ``tf.cond`` for a Python ``if``).
    """
    leaves = {k for k in graph.order if graph.ops[k] in LEAF_OPS}
    for key in graph.order:
        op = graph.ops[key]
        if not all(i in leaves for i in graph.inputs.get(key, ())):
            continue
        if op in PACKING_OPS or op in INDEX_ARITHMETIC and graph.dtypes.get(key) in INT_DTYPES:
            leaves.add(key)
    out: Counter[tuple[Any, ...]] = Counter()
    for key in graph.order:
        if key in leaves or graph.ops[key] == "<signature>":
            continue
        op, attrs, _ = graph.nodes[key]
        if graph.ops[key] in CALL_OPS:
            attrs = tuple(a for a in attrs if a[0] not in CALL_TYPE_ATTRS)
        out[(op, attrs)] += 1
    return out


def number_difference(
    original: Counter[tuple[Any, ...]], candidate: Counter[tuple[Any, ...]]
) -> str | None:
    """None when equal; else which ops the candidate adds or lacks, for a reason line."""
    extra, missing = candidate - original, original - candidate
    if not extra and not missing:
        return None
    parts = []
    if extra:
        parts.append("adds " + ", ".join(sorted({str(op[0]) for op in extra})))
    if missing:
        parts.append("lacks " + ", ".join(sorted({str(op[0]) for op in missing})))
    return " and ".join(parts)


def constants_holding(graph_def: Any, value: int | float, to_array: Any) -> list[str]:
    """Dtype names of the small constants (main graph and functions) holding ``value``.

    ``to_array`` turns a TensorProto into a NumPy array (``tf.make_ndarray``); the value
    is compared after rounding it to each constant's dtype, as TensorFlow did.
    """
    import numpy as np

    found: list[str] = []
    for node in _all_nodes(graph_def):
        if node.op != "Const":
            continue
        tensor = node.attr["value"].tensor
        size = 1
        for dim in tensor.tensor_shape.dim:
            size *= max(dim.size, 0)
        if size > 64:
            continue
        try:
            array = to_array(tensor)
            if array.dtype.kind not in "iuf":
                continue
            with np.errstate(all="ignore"):
                target = np.asarray(value).astype(array.dtype)
            if target.item() != value and array.dtype.kind in "iu":
                continue  # the value does not fit: not this constant
            if np.any(array == target):
                name = array.dtype.name
                if name not in found:
                    found.append(name)
        except (TypeError, ValueError, OverflowError):
            continue
    return found


def cast_target(
    graph_def: Any, value: int, to_array: Any, dtype_name: Callable[[int], str]
) -> str | None:
    """The one dtype every integer constant holding ``value`` is cast to, when every use of
    each (in the main graph and in functions) is a ``Cast``; None otherwise (a constant
    used as is, casts to several dtypes, no such constant). ``dtype_name``: a DataType
    enum's name (``lambda e: tf.as_dtype(e).name``: this module imports no TensorFlow)."""
    targets: set[str] = set()
    found = False
    for nodes in _node_lists(graph_def):
        by_name = {node.name: node for node in nodes}
        consumers: dict[str, list[Any]] = {}
        for node in nodes:
            for source in node.input:
                consumers.setdefault(_node_of(source.lstrip("^")), []).append(node)
        for name, node in by_name.items():
            if node.op != "Const" or not _holds_int(node, value, to_array):
                continue
            found = True
            uses = consumers.get(name, [])
            if not uses or any(use.op != "Cast" for use in uses):
                return None
            targets.update(dtype_name(use.attr["DstT"].type) for use in uses)
    return next(iter(targets)) if found and len(targets) == 1 else None


def _holds_int(node: Any, value: int, to_array: Any) -> bool:
    tensor = node.attr["value"].tensor
    if any(dim.size != 1 for dim in tensor.tensor_shape.dim):
        return False
    try:
        array = to_array(tensor)
    except (TypeError, ValueError):
        return False
    return array.dtype.kind in "iu" and array.size == 1 and int(array.reshape(-1)[0]) == value


def _node_lists(graph_def: Any) -> Iterable[Sequence[Any]]:
    yield graph_def.node
    for function in graph_def.library.function:
        yield function.node_def


def _all_nodes(graph_def: Any) -> Iterable[Any]:
    yield from graph_def.node
    for function in graph_def.library.function:
        yield from function.node_def

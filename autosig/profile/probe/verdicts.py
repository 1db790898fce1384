"""From traced graphs and trace errors to verdicts. Pure: no TensorFlow here.

A dimension (with the dimensions tied to it) was traced at its size in the call probed
(the baseline), at other sizes and relaxed to ``None``; ``dim_verdict`` reads those:

1. every other size fails to trace -> **fixed** by the code (a varied dimension cannot
   be: the original accepted several sizes, so that is a **read** of a tie);
2. the relaxed trace fails -> **read** (its error names the line that reads the size);
3. another size that traces gives another graph (ops, dtypes, attributes, edges) ->
   **read**; TensorFlow's gradient code may differ (it specialises a broadcast's
   reduction at size 1), the forward graph may not;
5. a constant whose value follows the size (in the concrete graphs) is still the same
   constant (name, dtype, shape, consumers) in the relaxed graph -> **read**
   (``n = x.shape[0] or 1``); constants that become ops there, or vanish, are
   ``tf.shape`` folds and library fast paths (Keras' tensordot reshapes to a constant
   shape when every size is known), not reads;
6. the relaxed graph is built by other lines of the user's code than the baseline ->
   **read** (a Python branch on ``x.shape[0] is None``); library code may build it
   differently (it does, for unknown sizes), the user's own lines may not;
7. otherwise **free**, or **bounded** when some sizes do not trace at all (a pooling
   window of 2 rejects size 1): None is free for the sizes the code accepts, and the
   others fail when the op runs instead of when the code traces.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from autosig.profile.evidence import NumberEvidence
from autosig.profile.probe.graphs import (
    CanonicalGraph,
    changed_constants,
    describe_difference,
    first_difference,
    marks_unknown,
    number_difference,
    same_constant,
)

NodeKey = str


@dataclass
class TraceResult:
    """One probe trace: its graph, or the error TensorFlow raised."""

    graph: CanonicalGraph | None = None
    line_of: dict[NodeKey, str] = field(default_factory=dict)
    """Node -> the user's innermost ``file:line`` that created it."""
    error: str | None = None
    where: str | None = None
    number_ops: Counter[tuple[Any, ...]] | None = None

    @property
    def ok(self) -> bool:
        return self.graph is not None

    @property
    def lines(self) -> frozenset[str]:
        return frozenset(self.line_of.values())

    def line(self, key: NodeKey) -> str | None:
        """The user's line that made node ``key`` (a canonical key), if known."""
        if self.graph is None:
            return None
        return self.line_of.get(self.graph.raw.get(key, key))


@dataclass
class Finding:
    verdict: str
    reason: str
    error: str | None = None
    where: str | None = None


def _sizes(sizes: Sequence[int | None]) -> str:
    return ", ".join("None" if s is None else str(s) for s in sizes)


def _tolerated_gradient(a: TraceResult, b: TraceResult) -> Callable[[NodeKey], bool]:
    """Gradient nodes that may differ between two sizes: TensorFlow's own gradient code
    specialises to static shapes (a broadcast's reduction at size 1), and the gradient
    is a function of the forward graph, which is compared in full. Only nodes made from
    a line that makes gradient nodes in both graphs (the ``tape.gradient`` line): a
    custom gradient's own Python branch on a size makes ops on a line of its own."""
    assert a.graph is not None and b.graph is not None
    lines_a = {a.line(k) for k in a.graph.gradient}
    lines_b = {b.line(k) for k in b.graph.gradient}
    shared = lines_a & lines_b

    def tolerate(key: NodeKey) -> bool:
        graph, result = (a.graph, a) if key in a.graph.nodes else (b.graph, b)
        return key in graph.gradient and result.line(key) in shared

    return tolerate


def dim_verdict(
    size: int,
    varied: bool,
    baseline: TraceResult,
    results: Mapping[int | None, TraceResult],
    noise: frozenset[NodeKey] = frozenset(),
) -> Finding:
    """The verdict on a dimension of size ``size`` from its probes (``None`` = relaxed).

    ``noise``: nodes that differ between two traces at the same shapes (a name or an
    attribute with a global counter TensorFlow or a library adds, a constant whose value
    is drawn while tracing: ``random.random()``): not a difference, not a size read.
    """
    concrete = [s for s in results if s is not None]
    failed = [s for s in concrete if not results[s].ok]
    built = [s for s in concrete if results[s].ok]
    if failed and not built:
        first = results[failed[0]]
        if varied:
            return Finding(
                "read",
                f"sizes {_sizes(failed)} do not trace, yet it varied in the profile: it is "
                "tied to something the probes kept fixed",
                first.error,
                first.where,
            )
        return Finding(
            "fixed",
            f"the original code cannot trace sizes {_sizes(failed)} (only {size})",
            first.error,
            first.where,
        )
    relaxed = results.get(None)
    if relaxed is None:
        return Finding("unknown", "the relaxed trace was not made")
    if not relaxed.ok:
        return Finding("read", "the relaxed trace (None) fails", relaxed.error, relaxed.where)
    assert baseline.graph is not None and relaxed.graph is not None
    for s in built:
        other = results[s]
        assert other.graph is not None
        gradient = _tolerated_gradient(baseline, other)
        key = first_difference(
            baseline.graph, other.graph, lambda k, g=gradient: k in noise or g(k)
        )
        if key is not None:
            where = baseline.line(key) or other.line(key)
            return Finding(
                "read",
                f"the graph for size {s} differs from size {size}: "
                + describe_difference(baseline.graph, other.graph, key),
                None,
                where,
            )
    graphs = [baseline.graph, *(results[s].graph for s in built)]
    concrete_graphs = [g for g in graphs if g is not None]
    changed = changed_constants(concrete_graphs)
    baked = [
        k
        for k in changed
        if k not in baseline.graph.gradient
        and k not in noise
        and same_constant(baseline.graph, relaxed.graph, k)
        and not marks_unknown(concrete_graphs, relaxed.graph, k)
    ]
    if baked:
        key = baked[0]
        return Finding(
            "read",
            f"constant '{key}' follows the size in the traced graphs and stays a constant "
            "in the relaxed one",
            None,
            baseline.line(key),
        )
    only_base = sorted(baseline.lines - relaxed.lines)
    only_relaxed = sorted(relaxed.lines - baseline.lines)
    if only_base or only_relaxed:
        line = (only_base or only_relaxed)[0]
        which = "only the concrete" if only_base else "only the relaxed"
        return Finding(
            "read",
            f"the relaxed graph runs other lines of the code ({line} builds ops in {which} graph)",
            None,
            line,
        )
    if failed:
        first = results[failed[0]]
        return Finding(
            "bounded",
            f"size {_sizes(failed)} does not trace in the original; sizes "
            f"{_sizes([size, *built])} give the same graph and the relaxed trace builds (with "
            "None, the sizes the code rejects fail when the op runs, not when it traces)",
            first.error,
            first.where,
        )
    folds = (
        f"; {len(changed)} size constants become ops or vanish in the relaxed graph"
        if changed
        else ""
    )
    return Finding(
        "free",
        f"the relaxed trace builds; sizes {_sizes([size, *built])} give the same graph{folds}",
    )


NUMBER_DTYPES = {"int": ("int32", "int64", "float32", "float64"), "float": ("float32", "float64")}
"""Scalar spec dtypes tried for a Python number, in the order a fix would prefer them."""
CONSTANT_DTYPES = ("float16", "bfloat16")
"""Dtypes tried too, first, when the original graph holds the number in a constant of
that dtype (a Python float beside a float16 tensor takes float16)."""
FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
OTHER_DTYPES = {
    "float32": ("float64", "float16"),
    "float64": ("float32",),
    "float16": ("float32",),
    "bfloat16": ("float32",),
    "int32": ("int64",),
    "int64": ("int32",),
}
"""The dtypes a tensor argument is traced at to see whether a Python number follows it
(``Round.dtype_coupling``): the other widths of its kind that calls commonly pass."""


def cast_only_verdict(
    evidence: NumberEvidence,
    float_dtype: str,
    baseline: TraceResult,
    candidate: TraceResult,
) -> NumberEvidence:
    """An int whose every constant in the original graph feeds only ``Cast`` ops to
    ``float_dtype``: if the ``float_dtype`` scalar spec gives the original computation
    without those casts, that spec computes the same for every int (the conversion at the
    call rounds as the cast did) and also accepts the floats the original accepted (a
    later ``12.5`` where ints were seen): ``evidence`` then takes it; else unchanged."""
    if not candidate.ok or baseline.number_ops is None or candidate.number_ops is None:
        return evidence
    extra = candidate.number_ops - baseline.number_ops
    missing = baseline.number_ops - candidate.number_ops
    if extra or not missing or any(op[0] != "Cast" for op in missing):
        return evidence
    evidence.dtype, evidence.dtype_from, evidence.spec_matches = float_dtype, "cast", True
    evidence.builds = sorted({*evidence.builds, float_dtype})
    evidence.reason = (
        f"the graph only casts it to {float_dtype}: a {float_dtype} scalar spec gives the "
        "same computation, and accepts floats as the original does"
    )
    return evidence


def number_verdict(
    param: str,
    kind: str,
    baseline: TraceResult,
    results: Mapping[str, TraceResult],
    in_constants: Sequence[str],
) -> NumberEvidence:
    """The dtype TensorFlow gave a Python number, from the traces with scalar specs.

    ``in_constants``: dtypes of the baseline graph's constants holding the value.
    """
    assert baseline.number_ops is not None
    builds = [d for d, r in results.items() if r.ok]
    matching = [
        d
        for d in builds
        if results[d].number_ops is not None
        and number_difference(baseline.number_ops, results[d].number_ops) is None
    ]
    out = NumberEvidence(param=param, type=kind, builds=builds)
    tried = list(results)
    if matching and len(matching) == len(tried) and len(tried) > 1:
        out.dtype, out.dtype_from, out.spec_matches = None, "unused", True
        out.reason = (
            "scalar specs of two dtypes both give the original graph: the graph does not use it"
        )
        return out
    if len(matching) == 1 or (matching and matching[0] in in_constants):
        dtype = next((d for d in matching if d in in_constants), matching[0])
        out.dtype, out.dtype_from, out.spec_matches = dtype, "spec", True
        out.reason = f"the {dtype} scalar spec gives the original graph"
        return out
    if matching:
        out.dtype, out.dtype_from, out.spec_matches = None, "unknown", True
        out.reason = f"scalar specs of {', '.join(matching)} all give the original graph"
        return out
    out.spec_matches = False
    if len(in_constants) == 1:
        out.dtype, out.dtype_from = in_constants[0], "constant"
    why = _why_not(results, in_constants[0] if len(in_constants) == 1 else None, baseline)
    out.reason, out.where = why
    if out.dtype:
        out.reason = f"its constant is {out.dtype}; " + out.reason
    return out


def _why_not(
    results: Mapping[str, TraceResult], dtype: str | None, baseline: TraceResult
) -> tuple[str, str | None]:
    """Why no scalar spec reproduces the graph: what the spec of ``dtype`` (else of the
    first dtype that traces, else the first) does instead."""
    order = ([dtype] if dtype in results else []) + [d for d in results if d != dtype]
    built = [d for d in order if results[d].ok]
    if not built:
        first = results[order[0]]
        return f"no scalar spec traces ({order[0]}: {first.error})", first.where
    d = built[0]
    r = results[d]
    assert baseline.number_ops is not None and r.number_ops is not None
    diff = number_difference(baseline.number_ops, r.number_ops)
    extra = r.number_ops - baseline.number_ops
    where = _line_of_ops(r, extra) or _line_of_ops(baseline, baseline.number_ops - r.number_ops)
    return f"the {d} scalar spec {diff} (the code computes with the number in Python)", where


def _line_of_ops(result: TraceResult, ops: Counter[tuple[Any, ...]]) -> str | None:
    """The user line of a node of ``result`` whose (op, attributes) is among ``ops``."""
    if result.graph is None or not ops:
        return None
    wanted = {op[0] for op in ops}
    for key in result.graph.order:
        node = result.graph.nodes[key]
        if node[0] in wanted and result.line(key):
            return result.line(key)
    return None

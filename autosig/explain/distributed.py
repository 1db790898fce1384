"""What ``explain`` says about tf.distribute inputs (``PerReplica`` batches). Pure.

A step taking elements of a distributed dataset retraces for every new per-replica
shape. ``reduce_retracing=True`` does relax ``PerReplica`` specs like tensors (measured
on 2 logical CPUs: 6 traces -> 2 for one varying dimension, 3 when the batch dimension
changes later too), so the count it would reach is replayed from the profile
(``retrace_sim``) rather than assumed; ``input_signature=[D.element_spec]``, as
TensorFlow's distributed input guide writes it, reaches one trace.
"""

from __future__ import annotations

from collections.abc import Callable

from autosig.infer.plan import FunctionPlan
from autosig.infer.retrace_sim import reduce_retracing_traces
from autosig.infer.specs import ElementSpecNode
from autosig.profile.describe_distributed import distributed_params
from autosig.profile.format import FunctionRecord, Value
from autosig.profile.value_tree import leaves, replicas_of, walk_calls

REPLICA_SHAPE = "replica_shape"
"""``Change.what`` of a per-replica shape change."""
GUIDE = "TensorFlow's distributed input guide"

Differ = Callable[[str, Value, Value], list]


def diff_replicas(path: str, a: Value, b: Value, differ: Differ, change: type) -> list | None:
    """Changes between two distributed values, replica by replica (None: not both such)."""
    ra, rb = replicas_of(a), replicas_of(b)
    if ra is None or rb is None:
        return None
    if len(ra) != len(rb):
        return [change(path, "structure", f"{path}: {len(ra)} -> {len(rb)} replicas")]
    per_replica = [differ(path, x, y) for x, y in zip(ra, rb, strict=True)]
    texts = [[c.text for c in changes] for changes in per_replica]
    out = []
    if all(t == texts[0] for t in texts):
        for c in per_replica[0]:
            out.append(_as_replica(c, f"{c.text} (each of {len(ra)} replicas)", c.dims, change))
        return out
    by_kind: dict[str, list[tuple[int, object]]] = {}
    for index, changes in enumerate(per_replica):
        for c in changes:
            by_kind.setdefault(c.what, []).append((index, c))
    for _what, items in by_kind.items():
        dims = tuple(sorted({d for _, c in items for d in c.dims}))
        text = "; ".join(f"replica {i}: {c.text}" for i, c in items)
        out.append(_as_replica(items[0][1], text, dims, change))
    return out


def _as_replica(c: object, text: str, dims: tuple[int, ...], change: type) -> object:
    what = REPLICA_SHAPE if c.what in ("shape", "rank") else c.what
    return change(c.param, what, text, dims)


def dims_text(dims: tuple[int, ...]) -> str:
    if not dims:
        return "the rank"
    if len(dims) == 1:
        return f"dimension {dims[0]}"
    return "dimensions " + ", ".join(str(d) for d in dims)


def element_spec_dataset(plan: FunctionPlan | None, param: str) -> str | None:
    """The dataset whose element_spec fix gives ``param``, None when it gives none."""
    if plan is None or plan.action != "signature":
        return None
    for p in plan.params:
        if p.name == param and isinstance(p.spec, ElementSpecNode):
            return p.spec.dataset
    return None


def replica_summary(
    param: str,
    root: str,
    dims: tuple[int, ...],
    count: int,
    plan: FunctionPlan | None,
    command: str,
) -> str:
    """One summary line: what varied per replica, and where the fix is."""
    n = f"{count} trace{'s' if count != 1 else ''}"
    verb = "vary" if len(dims) > 1 else "varies"
    head = f"{dims_text(dims)} of {param} {verb} per replica in {n}"
    dataset = element_spec_dataset(plan, root)
    if dataset is not None:
        return f"{head}; fix: {command} writes input_signature=[{dataset}.element_spec]"
    return f"{head}; fix: see the note on distributed inputs"


def distributed_note(record: FunctionRecord, plan: FunctionPlan | None, command: str) -> list[str]:
    """The trace counts of both fixes for a step taking distributed values (or nothing)."""
    params = distributed_params(record, walk_calls(record))
    if not params:
        return []
    name = params[0]
    replicas = _replica_count(record, name)
    what = f"{name} is an element of a distributed dataset (PerReplica" + (
        f", {replicas} replicas)" if replicas else ")"
    )
    replayed = reduce_retracing_traces(record)
    if replayed is None:
        rr = "reduce_retracing=True relaxes per-replica shapes as it does tensors'"
    else:
        rr = (
            f"reduce_retracing=True would make it {replayed} trace{'s' if replayed != 1 else ''} "
            f"instead of {record.traces} (TensorFlow's rule replayed on the profile)"
        )
        if plan is not None and plan.action == "reduce_retracing":
            rr = f"{command} adds reduce_retracing=True: {replayed} traces instead of {record.traces}"
            rr += " (TensorFlow's rule replayed on the profile)"
    dataset = element_spec_dataset(plan, name)
    signature = f"input_signature=[{dataset or '<dataset>'}.element_spec] ({GUIDE}) makes it 1"
    if dataset is not None:
        tail = f": {command} writes it"
    elif plan is not None:
        tail = ": fix's reason for not writing it, and the code to paste, are in the next note"
    else:
        tail = ", <dataset> being the distributed dataset whose elements it takes"
    return [f"{what}: {rr}; {signature}{tail}"]


def _replica_count(record: FunctionRecord, name: str) -> int | None:
    counts = set()
    for signature in record.signatures:
        for _, leaf in leaves(signature.args.get(name)):
            replicas = replicas_of(leaf)
            if replicas is not None:
                counts.add(len(replicas))
    return counts.pop() if len(counts) == 1 else None

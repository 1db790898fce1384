"""How many traces ``reduce_retracing=True`` would have made, replayed on a profile.

TensorFlow (``tracing_compilation`` and ``TypeDispatchTable`` in 2.21) serves a call
with any traced function whose input type accepts it; on a miss with
``reduce_retracing=True`` it traces the call's type widened, in insertion order, by
every earlier traced type it has a common supertype with (shapes: equal dimensions
kept, others None; another rank: unknown rank; another dtype or Python value: no
supertype; the shape rule is ``specs.shape_supertype``, the one inference plans with).
Replaying that rule over the profile's call signatures, in the order they
first appeared, gives the count without running anything; ``explain`` states it instead
of guessing. Tests compare the replay with real TensorFlow.

Only what TensorFlow traces by type can be replayed: tensors, Python scalars,
structures, and tf.distribute values (per replica). A function with plain Python
objects (traced by identity), several tf.function objects or processes, or signatures
the profile did not keep gets no number (None).
"""

from __future__ import annotations

from typing import Any

from autosig.infer.specs import shape_supertype
from autosig.profile.format import TENSOR_KINDS, FunctionRecord, Value
from autosig.profile.value_tree import SEQUENCES, children, replicas_of

Type = tuple[Any, ...]
"""A hashable trace type: ("tensor", kind, dtype, shape) | ("python", type, value) |
("seq", kind, items) | ("dict", keys, items) | ("replicas", type, items)."""


class NotReplayable(Exception):
    """A value whose trace type the replay cannot model."""


def trace_type(value: Value) -> Type:
    """The trace type of one recorded value (raises NotReplayable)."""
    kind = value.get("kind")
    if kind in TENSOR_KINDS:
        if kind in ("ragged", "sparse"):
            raise NotReplayable(kind)
        shape = value.get("shape")
        return ("tensor", str(value.get("dtype")), None if shape is None else tuple(shape))
    if kind == "python":
        if value.get("varied"):
            raise NotReplayable("folded Python values")
        return ("python", value.get("type"), _hashable(value.get("value")))
    if kind in (*SEQUENCES, "dict"):
        if "length" in value:
            raise NotReplayable("long container")
        items = children(value)
        types = tuple(trace_type(v) for _, v in items)
        if kind == "dict":
            return ("dict", tuple(k for k, _ in items), types)
        return ("seq", kind, str(value.get("type", "")), types)
    replicas = replicas_of(value)
    if replicas is not None:
        return ("replicas", str(value.get("type")), tuple(trace_type(r) for r in replicas))
    raise NotReplayable(str(kind))


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def supertype(a: Type, b: Type) -> Type | None:
    """The most specific type accepting both, None when there is none."""
    if a[0] != b[0]:
        return None
    if a[0] == "tensor":
        if a[1] != b[1]:
            return None
        return ("tensor", a[1], shape_supertype(a[2], b[2]))
    if a[0] == "python":
        return a if a == b else None
    if a[0] in ("seq", "replicas", "dict"):
        if a[:-1] != b[:-1] or len(a[-1]) != len(b[-1]):
            return None
        items = []
        for x, y in zip(a[-1], b[-1], strict=True):
            s = supertype(x, y)
            if s is None:
                return None
            items.append(s)
        return (*a[:-1], tuple(items))
    return None


def accepts(general: Type, specific: Type) -> bool:
    """True when a function traced for ``general`` serves a call of type ``specific``."""
    return supertype(general, specific) == general


def signature_type(args: dict[str, Value]) -> Type:
    return ("dict", tuple(args), tuple(trace_type(args[name]) for name in args))


def replay(types: list[Type], reduce_retracing: bool = True) -> int:
    """Traces TensorFlow makes for calls of ``types`` in this order."""
    traced: list[Type] = []
    for call in types:
        if any(accepts(t, call) for t in traced):
            continue
        relaxed = call
        if reduce_retracing:
            for other in traced:
                widened = supertype(relaxed, other)
                if widened is not None:
                    relaxed = widened
        traced.append(relaxed)
    return len(traced)


def reduce_retracing_traces(record: FunctionRecord) -> int | None:
    """Traces of ``record``'s calls under ``reduce_retracing=True``, None if not replayable."""
    if record.signatures_dropped or record.instances > 1 or record.processes > 1:
        return None
    if not record.signatures:
        return None
    ordered = sorted(record.signatures, key=lambda s: s.first_call)
    try:
        types = [signature_type(s.args) for s in ordered]
    except NotReplayable:
        return None
    return replay(types)

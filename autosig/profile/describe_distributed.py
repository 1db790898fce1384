"""tf.distribute values (``PerReplica`` ...) in the profile: one description per replica.

A step that takes an element of a distributed dataset receives a ``PerReplica`` holding
one tensor per replica. TensorFlow traces it by its TypeSpec, which is built from those
tensors' specs: recording them (not only the spec's repr) lets ``explain`` name the
dimension that varied and simulate what ``reduce_retracing=True`` does with it, and lets
inference see that a shape varies. The value stays ``{"kind": "object"}`` with its
``spec`` text, so readers that know nothing of replicas treat it as before::

    {"kind": "object", "type": "tensorflow.python.distribute.values.PerReplica",
     "spec": "PerReplicaSpec(...)", "replicas": [{"kind": "tensor", ...}, ...]}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from autosig.profile.format import FunctionRecord, Value
from autosig.profile.value_tree import Recorded

Describer = Any
"""``autosig.profile.describe.Describer`` (which imports this module: not imported back)."""
ScalarFolder = Any

MAX_REPLICAS = 256
"""Replicas described; a larger value is recorded as a plain object with its spec."""


def distributed_components(
    describer: Describer,
    x: Any,
    param: str,
    folder: ScalarFolder,
    objects: list[tuple[str, Any]],
    depth: int,
) -> tuple[Any, ...] | None:
    """Tokens of each replica's value, or None when they cannot be read."""
    try:
        values = tuple(x.values)
    except Exception:  # noqa: BLE001 - an unusual DistributedValues: keep the spec only
        return None
    if not values or len(values) > MAX_REPLICAS:
        return None
    return tuple(describer.token(v, param, folder, objects, depth + 1) for v in values)


def distributed_value(describer: Describer, token: tuple[Any, ...]) -> Value:
    """The JSON description of a ``("distributed", type, spec, replicas)`` token."""
    _, tname, spec, replicas = token
    out: Value = {"kind": "object", "type": tname}
    if spec is not None:
        out["spec"] = repr(spec)
    out["replicas"] = [describer.value(r) for r in replicas]
    return out


def distributed_params(record: FunctionRecord, walked: Mapping[str, Recorded]) -> list[str]:
    """Parameters that received only distributed values (``value_tree.is_distributed``)
    in every recorded call (``walked``: the record's values, ``value_tree.walk_calls``)."""
    return [
        info.name for info in record.params if info.name in walked and walked[info.name].distributed
    ]

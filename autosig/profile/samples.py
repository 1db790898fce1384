"""Real input (and output) samples: array leaves kept in memory, saved to a side ``.npz``.

A sample's structure is JSON (see ``autosig.profile.format.Sample``); its arrays live
in the ``.npz`` under short keys. Saved with ``np.savez`` and loaded with
``allow_pickle=False``: object arrays are never written, so nothing is ever unpickled.
String tensors become fixed-width ``bytes`` arrays (``dtype "S"``).
"""

from __future__ import annotations

import importlib
import io
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.profile.describe import type_name
from autosig.profile.format import Value, load_profile
from autosig.profile.value_tree import children, leaves, map_leaves
from autosig.source.files import atomic_write_bytes

MAX_ARRAY_BYTES = int(os.environ.get("AUTOSIG_SAMPLE_MAX_ARRAY_BYTES", 1 << 20))
"""An input or output larger than this is not sampled (the whole call's sample is skipped)."""
MAX_FILE_BYTES = int(os.environ.get("AUTOSIG_SAMPLE_MAX_BYTES", 64 << 20))
"""Total array bytes kept per profile file; later samples are skipped."""


class Unsampleable(Exception):
    """A value that cannot (or may not) be stored: too large, object dtype, symbolic."""


class SampleStore:
    """Arrays of the samples taken so far, bounded by MAX_ARRAY_BYTES / MAX_FILE_BYTES."""

    def __init__(
        self, max_array_bytes: int = MAX_ARRAY_BYTES, max_total_bytes: int = MAX_FILE_BYTES
    ) -> None:
        self.arrays: dict[str, Any] = {}
        self.total_bytes = 0
        self.max_array_bytes = max_array_bytes
        self.max_total_bytes = max_total_bytes
        self.skipped = 0
        self._next = 0

    def key(self) -> str:
        self._next += 1
        return f"a{self._next - 1}"

    def commit(self, pending: dict[str, Any]) -> bool:
        """Keep ``pending`` arrays if they fit the file budget."""
        size = sum(a.nbytes for a in pending.values())
        if self.total_bytes + size > self.max_total_bytes:
            self.skipped += 1
            return False
        self.arrays.update(pending)
        self.total_bytes += size
        return True


class LeafConverter:
    """Turns argument/output values into sample leaves, collecting their arrays."""

    def __init__(self, types: Any, store: SampleStore) -> None:
        import numpy as np

        self.np = np
        self.t = types
        self.store = store

    def convert(self, x: Any, pending: dict[str, Any], depth: int = 0) -> Value:
        t = type(x)
        types = self.t
        if t in (int, bool, str, type(None)):
            return {"kind": "python", "type": t.__name__, "value": x}
        if t is float:
            return {
                "kind": "python",
                "type": "float",
                "value": x if math.isfinite(x) else repr(x),
            }
        if t is bytes:
            return {"kind": "python", "type": "bytes", "value": x.decode("latin-1")}
        if depth > 16:
            raise Unsampleable("nested too deep")
        if t is tuple or t is list:
            return {"kind": t.__name__, "items": [self.convert(v, pending, depth + 1) for v in x]}
        if t is dict:
            if not all(isinstance(k, str) for k in x):
                raise Unsampleable("dict with non-string keys")
            return {
                "kind": "dict",
                "items": {k: self.convert(v, pending, depth + 1) for k, v in x.items()},
            }
        if isinstance(x, tuple) and hasattr(t, "_fields"):
            return {
                "kind": "namedtuple",
                "type": type_name(t),
                "fields": list(t._fields),
                "items": [self.convert(v, pending, depth + 1) for v in x],
            }
        if isinstance(x, types.variable):
            return self._array(x.numpy(), "variable", pending)
        if isinstance(x, types.eager):
            return self._array(x.numpy(), "tensor", pending)
        if isinstance(x, types.tensor):
            raise Unsampleable("symbolic tensor")
        if isinstance(x, types.ragged):
            splits = [self._array(s.numpy(), "tensor", pending)["key"] for s in x.nested_row_splits]
            return {
                "kind": "ragged_array",
                "values": self._array(x.flat_values.numpy(), "tensor", pending)["key"],
                "row_splits": splits,
            }
        if isinstance(x, types.sparse):
            return {
                "kind": "sparse_array",
                "indices": self._array(x.indices.numpy(), "tensor", pending)["key"],
                "values": self._array(x.values.numpy(), "tensor", pending)["key"],
                "dense_shape": self._array(x.dense_shape.numpy(), "tensor", pending)["key"],
            }
        if isinstance(x, (types.ndarray, types.np_generic)):
            return self._array(self.np.array(x, copy=True), "numpy", pending)

        return {"kind": "object", "type": type_name(t)}

    def _array(self, arr: Any, source: str, pending: dict[str, Any]) -> Value:
        np = self.np
        if not isinstance(arr, np.ndarray):
            arr = np.asarray(arr)
        if arr.dtype == object:
            try:
                arr = arr.astype(np.bytes_)  # tf.string tensors
            except (TypeError, ValueError, UnicodeEncodeError):
                raise Unsampleable("object array") from None
        if arr.nbytes > self.store.max_array_bytes:
            raise Unsampleable(f"array of {arr.nbytes} bytes")
        key = self.store.key()
        pending[key] = arr
        return {"kind": "array", "key": key, "from": source}


def array_keys(value: Value | None) -> Iterable[str]:
    """Every ``.npz`` key a sample structure refers to."""
    if not isinstance(value, dict):
        return
    if value.get("kind") is None:  # a Sample.args mapping: parameter -> value
        for item in value.values():
            yield from array_keys(item)
        return
    for _, leaf in leaves(value):
        kind = leaf.get("kind") if isinstance(leaf, dict) else None
        if kind == "array":
            yield leaf["key"]
        elif kind == "ragged_array":
            yield leaf["values"]
            yield from leaf["row_splits"]
        elif kind == "sparse_array":
            yield leaf["indices"]
            yield leaf["values"]
            yield leaf["dense_shape"]
        elif kind is None:
            yield from array_keys(leaf)


def rename_keys(value: Any, mapping: Callable[[str], str]) -> Any:
    """A copy of a sample structure with every array key passed through ``mapping``."""
    if isinstance(value, list):
        return [rename_keys(v, mapping) for v in value]
    if isinstance(value, dict) and value.get("kind") is None:  # parameter -> value
        return {k: rename_keys(v, mapping) for k, v in value.items()}
    return map_leaves(value, lambda leaf: _renamed(leaf, mapping))


def _renamed(leaf: Any, mapping: Callable[[str], str]) -> Any:
    """One leaf of a sample structure with its array keys passed through ``mapping``."""
    kind = leaf.get("kind") if isinstance(leaf, dict) else ""
    if kind == "array":
        return {**leaf, "key": mapping(leaf["key"])}
    if kind == "ragged_array":
        return {
            **leaf,
            "values": mapping(leaf["values"]),
            "row_splits": [mapping(k) for k in leaf["row_splits"]],
        }
    if kind == "sparse_array":
        return {
            **leaf,
            "indices": mapping(leaf["indices"]),
            "values": mapping(leaf["values"]),
            "dense_shape": mapping(leaf["dense_shape"]),
        }
    if isinstance(leaf, list) or kind is None:
        return rename_keys(leaf, mapping)
    return leaf


def save_arrays(arrays: dict[str, Any], path: Path | str) -> None:
    """Write an ``.npz`` atomically (no pickling: object arrays were refused earlier)."""
    import numpy as np

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(Path(path), buffer.getvalue(), mode=0o644)


def load_arrays(path: Path | str) -> dict[str, Any]:
    """Read an ``.npz`` with ``allow_pickle=False``; problems are one-line AutosigErrors."""
    import numpy as np

    p = Path(path)
    try:
        with np.load(p, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise AutosigError("samples file is missing", str(p)) from None
    except (OSError, ValueError, EOFError) as exc:
        raise AutosigError(f"corrupt samples file: {exc}", str(p)) from None


def load_samples(profile_path: Path | str) -> dict[str, Any]:
    """All sample arrays of a profile (``{}`` when it has none)."""
    profile = load_profile(profile_path)
    if not profile.samples_file:
        return {}
    return load_arrays(Path(profile_path).parent / profile.samples_file)


def rebuild(value: Value, arrays: dict[str, Any], *, tensors: bool = False) -> Any:
    """The Python/NumPy value a sample leaf or structure describes.

    With ``tensors=True`` (TensorFlow must be importable) array leaves recorded from
    tensors become ``tf.Tensor``, variables ``tf.Variable``, ragged and sparse leaves
    ``tf.RaggedTensor`` / ``tf.SparseTensor``, so a replay traces like the original call;
    otherwise ragged/sparse leaves rebuild as dicts of NumPy arrays. Objects cannot be
    replayed: they raise ``ValueError`` naming the type.
    """
    kind = value.get("kind")
    if kind is None:  # Sample.args: parameter -> value
        return {k: rebuild(v, arrays, tensors=tensors) for k, v in value.items()}
    if kind == "python":
        return _python_value(value)
    if kind == "array":
        arr = arrays[value["key"]]
        if tensors and value.get("from") in ("tensor", "variable"):
            import tensorflow as tf

            t = tf.constant(arr)
            return tf.Variable(t) if value.get("from") == "variable" else t
        return arr
    if kind == "ragged_array":
        flat = arrays[value["values"]]
        splits = [arrays[k] for k in value["row_splits"]]
        if tensors:
            import tensorflow as tf

            return tf.RaggedTensor.from_nested_row_splits(flat, splits, validate=False)
        return {"values": flat, "row_splits": splits}
    if kind == "sparse_array":
        parts = {k: arrays[value[k]] for k in ("indices", "values", "dense_shape")}
        if tensors:
            import tensorflow as tf

            return tf.SparseTensor(**parts)
        return parts
    if kind == "dict":
        return {k: rebuild(v, arrays, tensors=tensors) for k, v in children(value)}
    items = [rebuild(v, arrays, tensors=tensors) for _, v in children(value)]
    if kind in ("tuple", "list"):
        return tuple(items) if kind == "tuple" else items
    if kind == "namedtuple":
        cls = _import_type(value.get("type", ""))
        if cls is not None and getattr(cls, "_fields", None) == tuple(value.get("fields", [])):
            return cls(*items)
        return tuple(items)
    raise ValueError(f"cannot replay a {value.get('type', kind)} object from a sample")


def _python_value(value: Value) -> Any:
    t = value.get("type")
    v = value.get("value")
    if t == "float" and isinstance(v, str):
        return float(v)
    if t == "bytes" and isinstance(v, str):
        return v.encode("latin-1")
    return v


def _import_type(dotted: str) -> type | None:
    module, _, qual = dotted.rpartition(".")
    while module:
        try:
            obj: Any = importlib.import_module(module)
        except ImportError:
            qual = module.rpartition(".")[2] + "." + qual
            module = module.rpartition(".")[0]
            continue
        for part in qual.split("."):
            obj = getattr(obj, part, None)
        return obj if isinstance(obj, type) else None
    return None

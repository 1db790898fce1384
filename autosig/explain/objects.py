"""Ready-to-paste code for a new object per call: the tracing protocol, or pass tensors. Pure.

TensorFlow traces an instance of a user class by identity, so a new object per call is
a new trace. For a simple class (every attribute a tensor or a Python scalar, recorded by
``describe_objects``) TensorFlow's tracing protocol fixes that: ``__tf_tracing_type__``
returns a ``tf.types.experimental.TraceType`` built from the attributes, the Python ones
compared by value, the tensors by ``TensorSpec`` and passed into the graph as inputs (so
a later object's tensor values are used, not the first one's). The number of traces that
leaves is replayed from the profile (``retrace_sim``): each distinct combination of
attribute values, tensor shapes and dtypes and the other arguments is one trace. For any
other object the advice is to pass the tensors it holds instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from autosig.infer.plan import FunctionPlan
from autosig.infer.retrace_sim import NotReplayable, Type, replay, trace_type
from autosig.profile.format import FunctionRecord, Value

CODE_INDENT = "      "
"""Each line of pasted code in a note starts with this (the note's own indent is 2)."""


def new_object_params(record: FunctionRecord) -> list[str]:
    """Parameters that were a new object on some trace."""
    names: list[str] = []
    for event in record.trace_events:
        for name in event.new_objects:
            if name not in names:
                names.append(name)
    return names


def _attribute_layout(values: Sequence[Value]) -> tuple[str, list[str], list[str]] | None:
    """(type, Python attributes, tensor attributes), the same in every call, or None."""
    types = {v.get("type") for v in values}
    layouts = set()
    for v in values:
        attributes = v.get("attributes")
        if v.get("kind") != "object" or not isinstance(attributes, dict) or not attributes:
            return None
        layouts.add(
            tuple(
                (name, "tensor" if a.get("kind") == "tensor" else "python")
                for name, a in sorted(attributes.items())
            )
        )
    if len(types) != 1 or len(layouts) != 1:
        return None
    (layout,) = layouts
    python = [name for name, kind in layout if kind == "python"]
    tensors = [name for name, kind in layout if kind == "tensor"]
    return str(types.pop()), python, tensors


def _protocol_type(value: Value) -> Type:
    attributes = value["attributes"]
    return (
        "python",
        "traced-by-attributes",
        tuple((name, trace_type(attributes[name])) for name in sorted(attributes)),
    )


def traces_with_protocol(
    record: FunctionRecord, param: str, reduce_retracing: bool | None = None
) -> int | None:
    """Traces of the profiled calls once ``param``'s class traces by its attributes.

    ``reduce_retracing``: replay with that option (default: as the function was profiled).
    """
    if record.signatures_dropped or record.instances > 1 or record.processes > 1:
        return None
    if reduce_retracing is None:
        reduce_retracing = bool(record.decorator_options.get("reduce_retracing"))
    ordered = sorted(record.signatures, key=lambda s: s.first_call)
    types = []
    try:
        for signature in ordered:
            args = signature.args
            parts = []
            for name in args:
                value = args[name]
                parts.append(_protocol_type(value) if name == param else trace_type(value))
            types.append(("dict", tuple(args), tuple(parts)))
    except (NotReplayable, KeyError, TypeError):
        return None
    return replay(types, reduce_retracing)


def _combinations(values: Sequence[Value]) -> int:
    return len({json.dumps(v.get("attributes"), sort_keys=True) for v in values})


def protocol_code(class_name: str, names: Sequence[str]) -> list[str]:
    """The TraceType class (module level) and the method for ``class_name``.

    Only for Python attributes: measured on TF 2.21, tensors held by a plain object are
    not graph inputs even when a TraceType's ``to_tensors`` returns them (the traced
    graph's inputs are recomputed with ``nest.flatten``), so the call fails.
    """
    trace_type_name = f"{class_name}TraceType"
    return [
        f"# above class {class_name}:",
        f"class {trace_type_name}(tf.types.experimental.TraceType):",
        f'    """Traces {class_name} by the values of its attributes, not by identity."""',
        f"    names = {tuple(names)!r}",
        "    def __init__(self, obj):",
        "        self.cls = type(obj)",
        "        self.values = tuple((type(v), v) for v in (getattr(obj, n) for n in self.names))",
        "    def is_subtype_of(self, other):",
        "        return self == other",
        "    def most_specific_common_supertype(self, others):",
        "        return self if all(self == other for other in others) else None",
        "    def placeholder_value(self, placeholder_context):",
        "        obj = self.cls.__new__(self.cls)",
        "        obj.__dict__.update((n, v) for n, (_, v) in zip(self.names, self.values))",
        "        return obj",
        "    def cast(self, value, cast_context):",
        "        return value",
        "    def __eq__(self, other):",
        "        return type(other) is type(self) and (self.cls, self.values) == (",
        "            other.cls,",
        "            other.values,",
        "        )",
        "    def __hash__(self):",
        "        return hash((self.cls, self.values))",
        f"# inside class {class_name}:",
        "    def __tf_tracing_type__(self, context):",
        f"        return {trace_type_name}(self)",
    ]


def object_notes(record: FunctionRecord, plan: FunctionPlan | None = None) -> list[str]:
    """One note per parameter that was a new object: code to paste, or what to pass."""
    notes = []
    fn = record.qualname
    adds_rr = (
        plan is not None
        and plan.action == "reduce_retracing"
        and not record.decorator_options.get("reduce_retracing")
    )
    for param in new_object_params(record):
        values = [s.args[param] for s in record.signatures if param in s.args]
        layout = _attribute_layout(values) if values else None
        seen = record.object_instances.get(param)
        objects = f" ({seen} distinct objects)" if seen and seen > 1 else ""
        if layout is None:
            continue  # not a simple class: the summary's advice (create it once) stands
        type_name, python, tensors = layout
        class_name = type_name.rsplit(".", 1)[-1]
        module = type_name.rsplit(".", 1)[0] if "." in type_name else "its module"
        combos = _combinations(values)
        count = traces_with_protocol(record, param)
        if count is None:
            reach = (
                f"{fn} would trace once per distinct combination of them and its other arguments"
            )
        else:
            reach = (
                f"{fn} would trace {plural(count, 'time')} instead of {record.traces} for the "
                "calls profiled"
                if count != record.traces
                else f"{fn} would still trace {plural(count, 'time')} for the calls profiled "
                "(its other arguments vary)"
            )
            relaxed = traces_with_protocol(record, param, True) if adds_rr else None
            if relaxed is not None and relaxed != count:
                reach += f", {relaxed} with the reduce_retracing=True autosig fix adds"
        if tensors:
            held = ", ".join(f"{param}.{name}" for name in tensors)
            notes.append(
                f"{param} is a new {class_name} object in calls of {fn}{objects}, traced by "
                f"identity, and it holds tensors ({', '.join(tensors)}), which TensorFlow's "
                "tracing protocol cannot pass into the graph for a plain class: pass them as "
                f"arguments instead ({held})"
                + (
                    f", with its Python values ({', '.join(python)}) as Python arguments"
                    if python
                    else ""
                )
                + f" ({plural(combos, 'distinct combination')} profiled): {reach}"
            )
            continue
        head = (
            f"{param} is a new {class_name} object in calls of {fn}{objects}, traced by "
            f"identity. TensorFlow's tracing protocol traces it by the values of its "
            f"attributes ({', '.join(python)}; {plural(combos, 'distinct combination')} "
            f"profiled) instead: {reach}. Paste, in module {module} (tf being tensorflow; "
            f"only for objects {fn} does not modify):"
        )
        code = "\n".join(CODE_INDENT + line for line in protocol_code(class_name, python))
        notes.append(f"{head}\n{code}")
    return notes


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"

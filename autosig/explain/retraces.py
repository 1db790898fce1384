"""Why each function retraced, in one line per trace. Pure: works on a Profile, no TensorFlow.

For every trace after a function object's first, the signature it traced for is
compared with the *nearest* signature that object had traced before (fewest
differences, latest on ties); each difference becomes one line naming the parameter
and what changed (``tokens shape (32, 17) -> (32, 23): dimension 1 varies``,
``lr: Python float 0.1 -> 0.05``, ``x: dtype float32 -> float64``). Traces with the
same signature as an earlier one are explained by what the profile saw instead: a new
Python object, a new tf.function object, variable creation on the first call.
Traces are then grouped into one summary line per cause with the fix that removes it.

When the caller passes the plan ``autosig fix`` makes for the function (``autosig.infer``
on the current source: see ``autosig.cli.explain``), that advice is the fixer's own
decision, not a guess: a parameter it signs is "input_signature with None there", one it
must keep a Python value says so and why, and when the whole function only gets
``reduce_retracing=True`` a note gives fix's reasons. Without a plan (library code, a
source file that moved) the advice is the generic one.

One module, because it is one pass over a function record: the signature diff, the per-
trace explanation, the grouping by cause and the text and JSON renderings all work on
the same Change/Retrace/Explanation records; the advice that needs the fix plan lives in
explain/advice.py.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from autosig.explain.distributed import (
    REPLICA_SHAPE,
    diff_replicas,
    distributed_note,
    replica_summary,
)
from autosig.explain.evidence import evidence_lines
from autosig.explain.objects import object_notes
from autosig.infer.plan import Blocker, FunctionPlan, sites_text
from autosig.infer.specs import EXPLAIN, show_shape, show_value, varying_text
from autosig.profile.format import (
    MAX_PYTHON_VALUES,
    MAX_TRACE_EVENTS,
    TENSOR_KINDS,
    FunctionRecord,
    Profile,
    TraceEvent,
    Value,
)
from autosig.profile.value_tree import children, count_leaves, step
from autosig.text import plural

KIND_NAMES = {
    "tensor": "tensor",
    "numpy": "NumPy array",
    "variable": "tf.Variable",
    "ragged": "RaggedTensor",
    "sparse": "SparseTensor",
    "python": "Python",
    "object": "object",
    "tuple": "tuple",
    "list": "list",
    "dict": "dict",
    "namedtuple": "namedtuple",
}


@dataclass
class Change:
    """One difference between two call signatures."""

    param: str
    """Parameter path: ``x``, ``batch[0]``, ``features['ids']``, ``point.x``."""
    what: str
    """shape | rank | dtype | python_value | python_type | python_varied | kind | type |
    structure | new_object | new_instance | new_process | variable_creation | unknown |
    unrecorded"""
    text: str
    dims: tuple[int, ...] = ()
    weight: int = 1
    """How many leaves the change touches: the nearest earlier signature has the least."""


@dataclass
class Retrace:
    trace: int
    """1-based number of the trace within the function."""
    call: int
    instance: int
    time_s: float
    changes: list[Change] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "; ".join(c.text for c in self.changes)


@dataclass
class Explanation:
    """What ``autosig explain`` says about one function."""

    record: FunctionRecord
    retraces: list[Retrace] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plan: FunctionPlan | None = None
    """What ``autosig fix --profile`` decided for it, when its source was found."""
    evidence: list[str] = field(default_factory=list)
    """What probe traces of its original code showed (``explain/evidence.py``)."""

    @property
    def name(self) -> str:
        return self.record.qualname

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "function": r.qualname,
            "path": r.path,
            "line": r.line,
            "editable": r.editable,
            "calls": r.calls,
            "traces": r.traces,
            "trace_time_s": r.trace_time_s,
            "call_time_s": r.call_time_s,
            "instances": r.instances,
            "retraces": [
                {
                    "trace": t.trace,
                    "call": t.call,
                    "instance": t.instance,
                    "time_s": t.time_s,
                    "cause": t.text,
                    "changes": [asdict(c) for c in t.changes],
                }
                for t in self.retraces
            ],
            "summary": self.summary,
            "notes": self.notes,
            "probe": None if r.probe is None else asdict(r.probe),
            "fix": None
            if self.plan is None
            else {
                "action": self.plan.action,
                "reasons": list(self.plan.reasons),
                "stale": self.plan.stale,
                "signed": [p.name for p in self.plan.params if p.spec is not None],
                "call_sites": None
                if self.plan.call_sites is None
                else {
                    "params": [asdict(p) for p in self.plan.call_sites.params],
                    "sites": [asdict(s) for s in self.plan.call_sites.sites],
                },
            },
        }


# -- describing values -----------------------------------------------------------------


def _python(v: Value) -> str:
    if v.get("varied"):
        return f"Python {v.get('type')} (many values)"
    return f"Python {v.get('type')} {show_value(v.get('value'), EXPLAIN)}"


def short(v: Value) -> str:
    """A short human description of a described value."""
    kind = v.get("kind")
    if kind in TENSOR_KINDS:
        return f"{KIND_NAMES[kind]} {v.get('dtype')} {show_shape(v.get('shape'), EXPLAIN)}"
    if kind == "python":
        return _python(v)
    if kind == "object":
        return f"object of type {_type_short(v.get('type', '?'))}"
    if kind in ("tuple", "list", "namedtuple"):
        return f"{kind} of {v.get('length', len(v.get('items', [])))}"
    if kind == "dict":
        return f"dict of {v.get('length', len(v.get('items', {})))}"
    return str(kind)


def _type_short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def diff_values(path: str, a: Value, b: Value) -> list[Change]:
    """Every difference from ``a`` (earlier) to ``b`` (now), innermost first."""
    ka, kb = a.get("kind"), b.get("kind")
    if ka != kb:
        return [Change(path, "kind", f"{path}: {short(a)} -> {short(b)}", weight=_w(a, b))]
    if ka in TENSOR_KINDS:
        out: list[Change] = []
        if a.get("dtype") != b.get("dtype"):
            out.append(Change(path, "dtype", f"{path}: dtype {a.get('dtype')} -> {b.get('dtype')}"))
        sa, sb = a.get("shape"), b.get("shape")
        if sa != sb:
            shapes = f"{path} shape {show_shape(sa, EXPLAIN)} -> {show_shape(sb, EXPLAIN)}"
            if sa is None or sb is None or len(sa) != len(sb):
                ra = "unknown" if sa is None else len(sa)
                rb = "unknown" if sb is None else len(sb)
                out.append(Change(path, "rank", f"{shapes}: rank {ra} -> {rb}"))
            else:
                dims = tuple(i for i, (x, y) in enumerate(zip(sa, sb, strict=True)) if x != y)
                out.append(Change(path, "shape", f"{shapes}: {varying_text(dims)}", dims))
        for key in ("ragged_rank", "row_splits_dtype"):
            if a.get(key) != b.get(key):
                out.append(Change(path, "structure", f"{path}: {key} {a.get(key)} -> {b.get(key)}"))
        return out
    if ka == "python":
        if a.get("type") != b.get("type"):
            return [Change(path, "python_type", f"{path}: {_python(a)} -> {_python(b)}")]
        if b.get("varied"):
            if a.get("varied"):
                return []
            return [
                Change(
                    path,
                    "python_varied",
                    f"{path}: Python {b.get('type')} takes more than {MAX_PYTHON_VALUES} "
                    "values (each one traces)",
                )
            ]
        if a.get("value") != b.get("value") or a.get("varied"):
            shown = show_value(b.get("value"), EXPLAIN)
            return [Change(path, "python_value", f"{path}: {_python(a)} -> {shown}")]
        return []
    if ka == "object":
        if a.get("type") != b.get("type"):
            return [
                Change(
                    path,
                    "type",
                    f"{path}: object of type {_type_short(a.get('type', '?'))} -> "
                    f"{_type_short(b.get('type', '?'))}",
                )
            ]
        replicas = diff_replicas(path, a, b, diff_values, Change)
        if replicas is not None:
            return replicas
        if a.get("spec") != b.get("spec"):
            return [
                Change(
                    path,
                    "structure",
                    f"{path}: {_type_short(b.get('type', '?'))} spec "
                    f"{_clip(a.get('spec'))} -> {_clip(b.get('spec'))}",
                )
            ]
        return []
    if ka in ("tuple", "list", "namedtuple"):
        ia, ib = children(a), children(b)
        la, lb = a.get("length", len(ia)), b.get("length", len(ib))
        if ka == "namedtuple" and a.get("type") != b.get("type"):
            return [Change(path, "type", f"{path}: {a.get('type')} -> {b.get('type')}")]
        if la != lb:
            return [
                Change(path, "structure", f"{path}: {ka} of {la} -> {lb} items", weight=_w(a, b))
            ]
        out = []
        for (i, x), (_, y) in zip(ia, ib, strict=False):
            out.extend(diff_values(path + step(b, i), x, y))
        return out
    if ka == "dict":
        ia, ib = dict(children(a)), dict(children(b))
        added = [k for k in ib if k not in ia]
        removed = [k for k in ia if k not in ib]
        if added or removed:
            parts = []
            if added:
                parts.append("keys added " + ", ".join(repr(k) for k in added))
            if removed:
                parts.append("keys removed " + ", ".join(repr(k) for k in removed))
            return [Change(path, "structure", f"{path}: " + "; ".join(parts), weight=_w(a, b))]
        out = []
        for k in ib:
            out.extend(diff_values(path + step(b, k), ia[k], ib[k]))
        return out
    return []


def _w(a: Value, b: Value) -> int:
    return count_leaves(a) + count_leaves(b)


def _clip(text: Any, limit: int = 80) -> str:
    s = str(text)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def diff_signatures(a: dict[str, Value], b: dict[str, Value]) -> list[Change]:
    out: list[Change] = []
    for name, vb in b.items():
        va = a.get(name)
        if va is None:
            out.append(Change(name, "structure", f"{name}: not passed before, now {short(vb)}"))
        else:
            out.extend(diff_values(name, va, vb))
    for name in a:
        if name not in b:
            out.append(Change(name, "structure", f"{name}: no longer passed"))
    return out


# -- explaining a function -------------------------------------------------------------


def _new_object_changes(record: FunctionRecord, event: TraceEvent, args: dict) -> list[Change]:
    out = []
    for name in event.new_objects:
        value = args.get(name, {})
        kind = value.get("kind") if isinstance(value, dict) else None
        type_text = (
            f" of type {_type_short(value.get('type', '?'))}" if kind == "object" else " inside it"
        )
        seen = record.object_instances.get(name)
        extra = f" ({seen} distinct objects seen)" if seen and seen > 1 else ""
        out.append(Change(name, "new_object", f"{name}: new object{type_text}{extra}"))
    return out


def _explain_event(
    record: FunctionRecord,
    event: TraceEvent,
    traced_before: list[tuple[int | None, int]],
    first_in_process: bool,
) -> list[Change]:
    """Changes for one trace, given (signature, call) pairs traced before on its object."""
    sigs = record.signatures
    if not traced_before:
        if first_in_process and event.process == 0:
            return [Change("", "first", "first trace")]
        if first_in_process:
            return [
                Change(
                    "",
                    "new_process",
                    f"first trace in process #{event.process + 1} (each process, worker or "
                    "run traces anew)",
                )
            ]
        owner = _owner_text(record)
        return [
            Change(
                "",
                "new_instance",
                f"first call on tf.function object #{event.instance + 1}: {owner}",
            )
        ]
    if event.signature is None or event.signature >= len(sigs):
        return [
            Change(
                "",
                "unrecorded",
                "signature not recorded (more distinct signatures than the profile keeps)",
            )
        ]
    current = sigs[event.signature].args
    candidates = [(s, c) for s, c in traced_before if s is not None and s < len(sigs)]
    same = [c for s, c in candidates if s == event.signature]
    if same:
        objects = _new_object_changes(record, event, current)
        if objects:
            return objects
        if same[-1] == event.call:
            return [
                Change(
                    "",
                    "variable_creation",
                    "traced again on the same call: the function creates tf.Variables on its "
                    "first call, so TensorFlow traces it once more without variable creation",
                )
            ]
        return [
            Change(
                "",
                "unknown",
                "same arguments as an earlier trace: something outside the arguments changed "
                "(a captured Python value or global, or a Python object passed inside a "
                "container)",
            )
        ]
    best: list[Change] | None = None
    for sig, _call in reversed(candidates):
        changes = diff_signatures(sigs[sig].args, current)
        if best is None or _distance(changes) < _distance(best):
            best = changes
    changes = list(best or [])
    changes.extend(_new_object_changes(record, event, current))
    if not changes:
        changes = [
            Change(
                "",
                "unknown",
                "arguments differ only in how they were passed (keyword, positional, default)",
            )
        ]
    return changes


def _distance(changes: list[Change]) -> int:
    return sum(c.weight for c in changes)


def _owner_text(record: FunctionRecord) -> str:
    if record.is_method:
        cls = record.qualname.rsplit(".", 1)[0]
        return f"a new {cls} object (each object gets its own tf.function and traces anew)"
    return (
        "tf.function(...) was applied again to the same Python function; each new "
        "tf.function object traces anew: create it once"
    )


def explain_function(
    record: FunctionRecord,
    profile_path: str | None = None,
    plan: FunctionPlan | None = None,
    summarise: Collection[int] | None = None,
) -> Explanation:
    """Every trace of ``record`` explained; ``plan``: what ``autosig fix`` will do with it.

    ``summarise``: the (1-based) traces the summary lines count, when only some are in
    question (a retrace budget's extra traces of one tf.function object); default all.
    """
    if not record.editable:
        plan = None  # library code: fix only prints call-site advice, explain gives its own
    exp = Explanation(record, plan=plan)
    traced: dict[int, list[tuple[int | None, int]]] = {}
    processes: set[int] = set()
    for number, event in enumerate(record.trace_events, start=1):
        before = traced.setdefault(event.instance, [])
        changes = _explain_event(record, event, before, event.process not in processes)
        processes.add(event.process)
        before.append((event.signature, event.call))
        exp.retraces.append(
            Retrace(
                trace=number,
                call=event.call,
                instance=event.instance,
                time_s=event.time_s,
                changes=changes,
            )
        )
    advice = _Advice(record, profile_path, plan)
    counted = exp.retraces
    if summarise is not None:
        wanted = set(summarise)
        counted = [r for r in exp.retraces if r.trace in wanted]
    exp.summary = _summarise(record, counted, advice)
    exp.evidence = evidence_lines(record)
    exp.notes = _notes(record)
    exp.notes.extend(distributed_note(record, plan, advice.command))
    exp.notes.extend(object_notes(record, plan))
    exp.notes.extend(advice.notes())
    others = sum(1 for r in exp.retraces if r.changes and r.changes[0].what == "new_process")
    if others:
        exp.notes.append(
            f"{others} trace{'s were' if others != 1 else ' was'} the first in another "
            f"process (the profile merges {record.processes} processes: workers or runs)"
        )
    return exp


def _summarise(record: FunctionRecord, retraces: list[Retrace], advice: _Advice) -> list[str]:
    groups: Counter[tuple[str, str, tuple[int, ...]]] = Counter()
    dtype_pairs: dict[str, str] = {}
    for retrace in retraces:
        seen: set[tuple[str, str, tuple[int, ...]]] = set()
        for change in retrace.changes:
            if change.what in ("first", "new_process"):
                continue
            key = (change.param, change.what, change.dims)
            if key not in seen:
                seen.add(key)
                groups[key] += 1
            if change.what == "dtype":
                dtype_pairs[change.param] = change.text.split("dtype ", 1)[-1]
    lines = []
    for (param, what, dims), count in groups.most_common():
        n = plural(count, "trace")
        planned = advice.planned(param, what)
        if what == "shape":
            lines.append(
                f"{varying_text(dims, of=param)} in {n}"
                + (planned or _advice_shape(record, dims, advice.command))
            )
        elif what == REPLICA_SHAPE:
            root = match.group(0) if (match := _PARAM_ROOT.match(param)) else param
            advice.pointed = advice.pointed or advice.plan is not None
            lines.append(replica_summary(param, root, dims, count, advice.plan, advice.command))
        elif what == "rank":
            lines.append(
                f"the rank of {param} changes in {n}"
                + (
                    planned
                    or "; fix: a TensorSpec of unknown rank (shape=None) or reshape at the call site"
                )
            )
        elif what == "dtype":
            lines.append(
                f"{param} changes dtype ({dtype_pairs.get(param, '')}) in {n}"
                + _advice_dtype(dtype_pairs.get(param, ""))
                + planned
            )
        elif what in ("python_value", "python_varied"):
            lines.append(
                f"Python value {param} changes in {n}"
                + (planned or _advice_python(record, advice.command))
            )
        elif what == "python_type":
            lines.append(
                f"{param} switches between Python types in {n}; fix: pass one type (or a tensor)"
                + planned
            )
        elif what == "new_object":
            lines.append(
                f"{param} is a new Python object in {n}"
                + (
                    planned
                    or "; fix: pass the same object each call (create it once); "
                    "reduce_retracing=True does not help: each new object is a new trace"
                )
            )
        elif what == "new_instance":
            lines.append(
                f"a new tf.function object traced in {n}; fix: "
                + (
                    "reuse the object"
                    if record.is_method
                    else "create the tf.function once, outside the loop or call"
                )
            )
        elif what == "variable_creation":
            build = advice.plan.build_first if advice.plan is not None else None
            lines.append(
                f"variable creation on the first call caused {n}; fix: "
                + (
                    build.advice()
                    if build is not None
                    else "create variables before the first call (e.g. optimizer.build(...))"
                )
            )
        elif what in ("kind", "type", "structure"):
            lines.append(
                f"the type or structure of {param} changes in {n}"
                + (planned or "; fix: pass one structure (or reduce_retracing=True)")
            )
        elif what == "unrecorded":
            lines.append(f"{n} with signatures not kept in the profile")
        else:
            lines.append(
                f"{n} with no difference in the arguments (captured Python state "
                "or a global changed)"
            )
    unlisted = record.traces - len(record.trace_events)
    if unlisted > 0:
        if len(record.trace_events) >= MAX_TRACE_EVENTS:
            lines.append(
                f"{unlisted} later traces are not itemised (the profile keeps {MAX_TRACE_EVENTS})"
            )
        else:
            lines.append(
                f"{unlisted} traces happened outside calls (get_concrete_function, "
                "SavedModel export)"
            )
    return lines


# -- what autosig fix will do ------------------------------------------------------------

_PARAM_ROOT = re.compile(r"[A-Za-z_]\w*")
"""The parameter a change path starts with: ``features['ids']`` -> ``features``."""
_SEE_NOTE = "see the note"
_SHAPE_KINDS = ("shape", "rank")
_PYTHON_KINDS = ("python_value", "python_varied")
_OBJECT_KINDS = ("new_object", "type", "kind", "structure")
_SUFFIX_KINDS = ("dtype", "python_type")
"""Causes whose generic advice (cast, pass one type) always holds: fix's part is added."""


@dataclass
class _Advice:
    """The fix part of each summary line, taken from the plan ``autosig fix`` made.

    ``planned`` returns "" when there is no plan or it has nothing to say about a cause;
    the caller then gives the generic advice. Shapes under ``reduce_retracing`` refer to
    a note that lists fix's reasons for not writing a signature.
    """

    record: FunctionRecord
    profile_path: str | None
    plan: FunctionPlan | None
    pointed: bool = False

    @property
    def command(self) -> str:
        if self.profile_path:
            return f"autosig fix --profile {self.profile_path}"
        return "autosig fix --profile"

    def planned(self, param_path: str, what: str) -> str:
        if self.plan is None:
            return ""
        if self.plan.stale:
            self.pointed = True
            return (
                f"; fix: re-run autosig profile first: the profile is stale for "
                f"{self.plan.qualname} ({_SEE_NOTE})"
            )
        match = _PARAM_ROOT.match(param_path)
        name = match.group(0) if match else ""
        called = self._called(name, what)
        if called:
            text = called
        elif self.plan.action == "signature":
            text = self._signed(name, what)
        elif self.plan.action == "reduce_retracing":
            text = self._reduced(name, what, self._blockers(name))
        elif self.plan.action == "guarded_trace":
            text = self._guarded(what)
        else:
            text = self._unchanged(what)
        self.pointed = self.pointed or bool(text)
        return text

    def _guarded(self, what: str) -> str:
        """Advice when fix seeds a guarded relaxed trace: shapes share it; other dtypes,
        ranks, structures and Python values trace as before."""
        if what == "shape":
            return f"; fix: {self.command} (a guarded relaxed trace with None there)"
        return f"; {self.command} seeds a guarded relaxed trace ({_SEE_NOTE})"

    def _called(self, name: str, what: str) -> str:
        """Advice when fix's call sites pass ``name`` as a tensor (a call-site plan)."""
        assert self.plan is not None
        plan = self.plan.call_sites
        if plan is None or what not in _PYTHON_KINDS:
            return ""
        param = next((p for p in plan.params if p.name == name), None)
        if param is None:
            return ""
        return (
            f"; fix: {self.command} passes it as {param.constant()} at its "
            f"call sites, {sites_text(plan.sites)}: every value then shares one trace"
        )

    def _blockers(self, name: str) -> list[Blocker]:
        """fix's reasons that name ``name`` as the parameter blocking a signature."""
        assert self.plan is not None
        return [b for b in self.plan.blockers if b.param == name]

    def _signed(self, name: str, what: str) -> str:
        assert self.plan is not None
        spec = next((p.spec for p in self.plan.params if p.name == name), None)
        if spec is None:
            return ""
        if what == "shape":
            return f"; fix: {self.command} (input_signature with None there)"
        if what == "rank":
            return f"; fix: {self.command} (input_signature with shape=None there: any rank)"
        if what in _PYTHON_KINDS:
            return (
                f"; fix: {self.command} (a scalar TensorSpec; Python values trace once per value)"
            )
        if what == "python_type":
            return f"; {self.command} makes it a scalar TensorSpec"
        if what in ("kind", "type", "structure"):
            return f"; fix: {self.command} (input_signature whose spec accepts every value seen)"
        return ""

    def _reduced(self, name: str, what: str, own: list[Blocker]) -> str:
        """Advice when fix writes only ``reduce_retracing=True`` for the function.

        reduce_retracing relaxes shapes, but Python values, dtypes and objects still
        trace once each (TF-FACTS): those lines say so and what the caller can change.
        """
        fix = self.command
        if what in _SHAPE_KINDS:
            return (
                f"; fix: {fix} adds reduce_retracing=True, not an input_signature "
                f"({self._because()}): TensorFlow then relaxes the shape to None itself after "
                "a trace or two"
            )
        if what in _PYTHON_KINDS:
            kept = next((b for b in own if b.kind == "python_use"), None)
            if kept is not None:
                return (
                    f"; fix: {fix}: {name} stays a Python value: {kept.use}; "
                    "reduce_retracing=True, which still traces once per value; instead: make "
                    "that code work on a tensor, or pass fewer distinct values"
                )
            if own:
                return (
                    f"; fix: {fix}: {name} stays a Python value: it {own[0].predicate}; "
                    "reduce_retracing=True, which still traces once per value"
                )
            return (
                f"; fix: {fix} adds only reduce_retracing=True, not an input_signature "
                f"({self._because()}), which still traces once per Python value"
            )
        if what in _OBJECT_KINDS:
            objects = what == "new_object" or any(b.kind == "object" for b in own)
            instead = (
                "objects are traced by identity, so pass the same object each call (create it once)"
                if objects
                else "pass one structure"
            )
            why = f"{name} cannot go in an input_signature" if own else self._because()
            return (
                f"; fix: {fix} adds only reduce_retracing=True ({why}), which does not stop "
                f"this: {instead}"
            )
        if what == "dtype":
            return (
                "; autosig fix adds only reduce_retracing=True, which still traces once per dtype"
            )
        if what == "python_type":
            return "; autosig fix adds only reduce_retracing=True, which does not stop this"
        return ""

    def _because(self) -> str:
        """Which parameters keep fix from writing a signature, pointing at the note."""
        assert self.plan is not None
        names = list(dict.fromkeys(b.param for b in self.plan.blockers))
        if not names:
            return _SEE_NOTE
        return f"because of {', '.join(names)}: {_SEE_NOTE}"

    def _unchanged(self, what: str) -> str:
        """Advice when fix leaves the function as it is (stale profile, already signed ...)."""
        if what not in _SHAPE_KINDS + _PYTHON_KINDS + _OBJECT_KINDS + _SUFFIX_KINDS:
            return ""
        if what == "new_object":
            return (
                "; fix: pass the same object each call (create it once); autosig fix "
                f"changes nothing here ({_SEE_NOTE})"
            )
        return f"; autosig fix changes nothing here ({_SEE_NOTE})"

    def notes(self) -> list[str]:
        """fix's decision for the whole function, when a summary line took advice from it.

        Not for signatures (the summary lines say it all), nor when no line is about
        something fix decides (a new tf.function object per call, variable creation).
        """
        plan = self.plan
        rewritten = _shape_rewrites(self.command, plan)
        return rewritten + self._decision(plan)

    def _decision(self, plan: FunctionPlan | None) -> list[str]:
        if plan is not None and plan.stale:
            return [stale_note(self.command, plan)]
        if plan is not None and plan.safety == "unsafe" and plan.action != "none":
            fix = {
                "signature": "an input_signature",
                "guarded_trace": "a guarded relaxed trace",
            }.get(plan.action, "reduce_retracing=True")
            return [
                f"{self.command} gives {plan.qualname} {fix} only with --unsafe-fixes: "
                + "; ".join(plan.warnings)
            ]
        if plan is not None and plan.action == "signature":
            said = [
                f"{self.command} writes {plan.qualname}'s input_signature as a safe fix: {r}"
                for r in plan.reasons
                if r.startswith("the domain: ")
            ]
            return said[:1] + _probe_basis(self.command, plan)
        if plan is None or not self.pointed:
            return []
        reasons = "; ".join(dict.fromkeys(plan.reasons)) or "no reason given"
        if plan.call_sites is not None and plan.action == "none":
            return [
                f"{self.command} gives {plan.qualname} no input_signature and rewrites its "
                f"calls instead (only in the files it fixes): {reasons}"
            ]
        if plan.action == "reduce_retracing":
            return [
                f"{self.command} gives {plan.qualname} reduce_retracing=True, not an "
                f"input_signature: {reasons}"
            ]
        if plan.action == "guarded_trace":
            return [f"{self.command} gives {plan.qualname} a {reasons}"]
        return [f"{self.command} leaves {plan.qualname} as it is: {reasons}"]


def _probe_basis(command: str, plan: FunctionPlan) -> list[str]:
    """For a signature: the decisions that rest on the probe traces, in the plan's words
    (the summary lines say the rest)."""
    proven = [reason for reason in plan.reasons if "probe:" in reason]
    if not proven:
        return []
    return [
        f"{command} writes {plan.qualname}'s input_signature on the probes' evidence: "
        + "; ".join(dict.fromkeys(proven))
    ]


def stale_note(command: str, plan: FunctionPlan) -> str:
    """What fix does with a function changed since it was profiled: not what the profile
    would plan, but an error naming it and the static fixes only."""
    static = (
        "reduce_retracing=True (the static fix AS107)"
        if plan.action == "reduce_retracing"
        else "none for this function"
    )
    return (
        f"the profile is stale for {plan.qualname}: it changed since it was profiled, so "
        f"{command} refuses it (an error naming it, exit 2) and makes only the static fixes "
        f"there: {static}; re-run autosig profile for an input_signature"
    )


def _shape_rewrites(command: str, plan: FunctionPlan | None) -> list[str]:
    """What fix rewrites to ``tf.shape()`` with the signature, and why it may."""
    if plan is None or plan.action == "none" or not plan.shape_rewrites:
        return []
    return [
        f"{command} also rewrites static shape reads of {plan.qualname} to tf.shape() "
        "so their dimensions can be None: " + "; ".join(r.describe() for r in plan.shape_rewrites)
    ]


def _advice_shape(record: FunctionRecord, dims: tuple[int, ...], fix: str) -> str:
    if record.editable:
        return f"; fix: {fix} (input_signature with None there)"
    if dims == (0,):
        return (
            "; library function: the batch size varies (a last partial batch?): use "
            "drop_remainder=True in Dataset.batch or a batch size that divides the data"
        )
    return (
        "; library function: pad inputs to fixed lengths (or bucket them by length) "
        "before they reach it"
    )


def _advice_dtype(pair: str) -> str:
    if "float64" in pair:
        return "; fix: cast the inputs to float32 at the call site (e.g. x.astype('float32'))"
    return "; fix: pass one dtype (cast at the call site); autosig never casts silently"


def _advice_python(record: FunctionRecord, fix: str) -> str:
    if record.editable:
        return f"; fix: {fix} (a scalar TensorSpec; Python values trace once per value)"
    return "; library function: pass the value as a tensor (tf.constant) instead"


def _notes(record: FunctionRecord) -> list[str]:
    notes = []
    if not record.editable:
        notes.append("library function (not in your project): fix the way it is called")
    variable_params = sorted(
        {
            name
            for sig in record.signatures
            for name, value in sig.args.items()
            if isinstance(value, dict) and value.get("kind") == "variable"
        }
    )
    for name in variable_params:
        notes.append(
            f"{name}: tf.Variable, traced by shape and dtype; changes to its value did not "
            "cause any retrace"
        )
    if record.graph_calls:
        notes.append(
            f"{record.graph_calls} of the calls came from inside another tf.function while "
            "it was being traced"
        )
    if record.signatures_dropped:
        notes.append(
            f"{record.signatures_dropped} further distinct signatures were seen but not kept"
        )
    return notes


def explain_profile(
    profile: Profile,
    profile_path: str | None = None,
    plans: Mapping[tuple[str | None, str, int], FunctionPlan] | None = None,
) -> list[Explanation]:
    """One Explanation per function, the most time lost to tracing first.

    ``plans`` (by ``FunctionRecord.key``): what ``autosig fix`` will do with each function
    whose source was found; the advice then repeats that decision.
    """
    plans = plans or {}
    explanations = [explain_function(f, profile_path, plans.get(f.key)) for f in profile.functions]
    explanations.sort(key=lambda e: (-e.record.trace_time_s, -e.record.traces, e.record.qualname))
    return explanations


def render_text(explanations: list[Explanation], *, limit: int | None = 20) -> str:
    """The report of ``autosig explain`` (one block per function)."""
    if not explanations:
        return "no tf.function was called while profiling\n"
    lines: list[str] = []
    for exp in explanations:
        r = exp.record
        where = f"{_short_path(r.path)}:{r.line}" if r.path else "<unknown>"
        lib = "" if r.editable else " [library]"
        lines.append(
            f"{r.qualname} ({where}){lib}: {plural(r.calls, 'call')}, "
            f"{plural(r.traces, 'trace')}, tracing {r.trace_time_s:.3f} s of "
            f"{r.call_time_s:.3f} s in calls, {plural(r.instances, 'instance')}"
        )
        shown = exp.retraces if limit is None else exp.retraces[:limit]
        for t in shown:
            if t.changes and t.changes[0].what in ("first", "new_process"):
                continue
            lines.append(f"  {r.qualname}: trace {t.trace} of {r.traces}: {t.text}")
        hidden = len(exp.retraces) - len(shown)
        if hidden > 0:
            lines.append(f"  ... {hidden} more traces (--all lists them)")
        for s in exp.summary:
            lines.append(f"  summary: {s}")
        if r.traces <= 1 and r.calls > 1:
            lines.append("  no retracing")
        for e in exp.evidence:
            lines.append(f"  probe: {e}")
        for n in exp.notes:
            lines.append(f"  note: {n}")
        lines.append("")
    return "\n".join(lines)


def _short_path(path: str) -> str:
    """Library files by their import path (``keras/src/...``), not the venv's."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def render_json(explanations: list[Explanation], profile_path: str | None = None) -> dict:
    return {
        "profile": profile_path,
        "functions": [e.to_json() for e in explanations],
    }

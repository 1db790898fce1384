"""Inference: from a profile's observed calls to a per-function plan of specs, with evidence.

For each profiled tf.function this decides one of three things: an ``input_signature``
(every parameter that varied gets a spec loose enough for every observed call and no
looser), ``reduce_retracing=True`` (a signature would reject a call or change what the
function does: Python flags, objects, dtype conflicts, Python numbers the code needs as
Python values), or nothing (traced once, stale profile, library code, already signed).
Each planned parameter carries the evidence it was derived from, and the AS2xx findings
say why the function retraced. Works on the profile's JSON data and the current source
text only: no TensorFlow, no user code.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from libcst.metadata import MetadataWrapper, PositionProvider

from autosig.analysis import PythonUse, python_only_uses, required_dtypes
from autosig.discover import FunctionSite, discover_text
from autosig.errors import AutosigError
from autosig.hashing import source_hash_from_file_text
from autosig.model import Finding
from autosig.plan import Action, FunctionPlan, ParamPlan, Plan
from autosig.profile.format import MAX_PYTHON_VALUES, FunctionRecord, ParamInfo, Profile, Value
from autosig.specs import (
    DictNode,
    ListNode,
    RaggedSpecNode,
    Shape,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    TupleNode,
)
from autosig.supertype import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    RELAX_POLICIES,
    TF_DTYPES,
    common_shape,
    python_scalar_dtype,
    relax_shape,
    shape_accepts,
    varying_dimensions,
)

NUMERIC_PYTHON = ("int", "float")
STRING_PYTHON = ("str", "bytes")
MAX_SHAPES_SHOWN = 4

STALE_REASON = "changed since it was profiled (re-run autosig profile)"
SIGNED_REASON = "already has an input_signature"
ONCE_REASON = "traced once; nothing to fix"


@dataclass
class InferOptions:
    """How inference relaxes shapes and which parameters it must keep as Python values."""

    relax: str = "none"
    """Shape policy: none (keep constant dims), batch (free dim 0), all (free every dim)."""
    overrides: Callable[[str, str, str | None], str] | None = None
    """(path, qualname, param|None) -> relax policy; e.g. ``Config.relax_for``."""
    force_python: frozenset[tuple[str, str, str]] = frozenset()
    """(path, qualname, param) never tensorized (the verifier's fallback)."""

    def relax_for(self, path: str, qualname: str, param: str | None) -> str:
        policy = self.overrides(path, qualname, param) if self.overrides else self.relax
        if policy not in RELAX_POLICIES:
            raise AutosigError(
                f"unknown relax policy {policy!r} for {qualname} "
                f"(expected one of: {', '.join(RELAX_POLICIES)})",
                path or None,
            )
        return policy


# -- public API ---------------------------------------------------------------------------


def infer_plan(
    profile: Profile, sources: Mapping[str, str], options: InferOptions | None = None
) -> Plan:
    """A plan for every profiled function whose file is in ``sources`` (path -> text).

    Library functions (not editable) are always planned, as "none" with advice, so the
    report can show them.
    """
    options = options or InferOptions()
    parsed: dict[str, _Source] = {}
    plan = Plan()
    for record in profile.functions:
        if not record.editable:
            plan.functions.append(_library_plan(record, options))
            continue
        if record.path is None or record.path not in sources:
            continue
        source = parsed.get(record.path)
        if source is None:
            source = parsed[record.path] = _Source.parse(sources[record.path], record.path)
        plan.functions.append(_plan_function(record, source, options))
    return plan


def infer_function(
    record: FunctionRecord, source_text: str | None, options: InferOptions
) -> FunctionPlan:
    """The plan of one function given the current text of its file (None: not available)."""
    if not record.editable:
        return _library_plan(record, options)
    source = None if source_text is None else _Source.parse(source_text, record.path or "")
    return _plan_function(record, source, options)


def spec_accepts(spec: SpecNode, value: Value) -> bool:
    """Whether a call argument described by ``value`` (profile format) fits ``spec``.

    Stricter than TensorFlow where TensorFlow would silently change the value: a NumPy
    array must already have the spec's dtype (TF would cast float64 to float32), a
    Python int must fit an int32 spec (TF would wrap it), Python bools never count as
    numbers, and a list never fits a tuple spec.
    """
    kind = value.get("kind")
    if isinstance(spec, TensorSpecNode):
        if kind in ("tensor", "numpy"):
            return _tensor_dtype(value) == spec.dtype and shape_accepts(
                spec.shape, _shape(value.get("shape"))
            )
        if kind == "python":
            return _python_fits(spec, value)
        return False
    if isinstance(spec, RaggedSpecNode):
        return (
            kind == "ragged"
            and value.get("dtype") == spec.dtype
            and value.get("ragged_rank") == spec.ragged_rank
            and value.get("row_splits_dtype", "int64") == spec.row_splits_dtype
            and shape_accepts(spec.shape, _shape(value.get("shape")))
        )
    if isinstance(spec, SparseSpecNode):
        return (
            kind == "sparse"
            and value.get("dtype") == spec.dtype
            and shape_accepts(spec.shape, _shape(value.get("shape")))
        )
    if isinstance(spec, (TupleNode, ListNode)):
        expected = "tuple" if isinstance(spec, TupleNode) else "list"
        items = value.get("items")
        return (
            kind == expected
            and "length" not in value
            and isinstance(items, list)
            and len(items) == len(spec.items)
            and all(spec_accepts(s, v) for s, v in zip(spec.items, items, strict=True))
        )
    if isinstance(spec, DictNode):
        items = value.get("items")
        if kind != "dict" or "length" in value or not isinstance(items, dict):
            return False
        keys = dict(spec.items)
        return set(items) == set(keys) and all(spec_accepts(keys[k], v) for k, v in items.items())
    return False


# -- value helpers ------------------------------------------------------------------------


def _shape(raw: Any) -> Shape:
    return None if raw is None else tuple(raw)


def _tensor_dtype(value: Value) -> str | None:
    """TensorFlow's dtype for a tensor/numpy description, None if it has none."""
    dtype = str(value.get("dtype"))
    if dtype in TF_DTYPES:
        return dtype
    if value.get("kind") == "numpy" and dtype.startswith(("str", "bytes")):
        return "string"
    return None


def _python_fits(spec: TensorSpecNode, value: Value) -> bool:
    if spec.shape not in (None, ()):
        return False
    ptype = value.get("type")
    if ptype in STRING_PYTHON:
        return spec.dtype == "string"
    if ptype not in NUMERIC_PYTHON:
        return False
    if ptype == "float":
        return spec.dtype in ("float16", "bfloat16", "float32", "float64")
    if spec.dtype in ("float16", "bfloat16", "float32", "float64"):
        return True
    if "value" not in value:
        return spec.dtype in ("int32", "int64")
    v = value["value"]
    if not isinstance(v, int):
        return False
    if spec.dtype == "int32":
        return INT32_MIN <= v <= INT32_MAX
    if spec.dtype == "int64":
        return INT64_MIN <= v <= INT64_MAX
    return False


def _key(value: Value) -> str:
    return json.dumps(value, sort_keys=True)


def _show_shape(shape: Shape) -> str:
    if shape is None:
        return "<unknown rank>"
    dims = ", ".join("?" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def _show_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value) if isinstance(value, str) else str(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# -- per-parameter inference --------------------------------------------------------------


@dataclass
class _PythonScalar:
    """A parameter that arrives as Python numbers/strings: maybe tensorizable."""

    types: list[str]
    values: list[Any]
    folded: bool
    dtype: str
    calls: Counter[str] = field(default_factory=Counter)

    @property
    def varied(self) -> bool:
        return self.folded or len(self.values) > 1

    @property
    def type_name(self) -> str:
        return "/".join(sorted(set(self.types)))

    def values_text(self) -> str:
        """``12 distinct values 1..12``, ``always 0.5``, ``more than 32 distinct values``."""
        if self.folded:
            return f"more than {MAX_PYTHON_VALUES} distinct values"
        if len(self.values) == 1:
            return f"always {_show_value(self.values[0])}"
        try:
            ordered = sorted(self.values)
        except TypeError:
            ordered = list(self.values)
        if len(ordered) <= 4:
            shown = ", ".join(_show_value(v) for v in ordered)
        else:
            shown = f"{_show_value(ordered[0])}..{_show_value(ordered[-1])}"
        return f"{len(ordered)} distinct values {shown}"

    def describe(self) -> str:
        return f"Python {self.type_name}, {self.values_text()}"


@dataclass
class _Leaf:
    """What one argument (or a nested part of it) allows."""

    spec: SpecNode | None = None
    python: _PythonScalar | None = None
    blocker: str | None = None
    findings: list[tuple[str, str]] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    cause: str | None = None
    """What varied between calls, for AS201's main cause."""
    variety: int = 1
    """How many distinct forms the argument took (ranks causes)."""
    dims: frozenset[int] = frozenset()
    """Tensor dimensions that varied (anywhere inside the argument)."""
    rank_varies: bool = False
    object_type: str | None = None


Observation = tuple[Value, int]
"""A value as described in one CallSignature, and how many calls used it."""


def _kinds_summary(observations: Sequence[Observation]) -> str:
    counts: Counter[str] = Counter()
    for value, calls in observations:
        kind = value.get("kind", "?")
        label = f"Python {value.get('type')}" if kind == "python" else str(kind)
        if kind == "object":
            label = str(value.get("type"))
        counts[label] += calls
    return ", ".join(f"{label} ({_plural(n, 'call')})" for label, n in counts.most_common())


def _infer_leaf(observations: Sequence[Observation], where: str, relax: str, nested: bool) -> _Leaf:
    kinds = {v.get("kind") for v, _ in observations}
    total = sum(c for _, c in observations)
    if "variable" in kinds:
        return _Leaf(
            blocker=f"{where} is a tf.Variable: a signature would pass a copy of its value "
            "(assignments inside the function would fail)",
            evidence=[f"tf.Variable in {_plural(total, 'call')}"],
        )
    if kinds <= {"tensor", "numpy"}:
        return _tensor_leaf(observations, where, relax)
    if kinds == {"ragged"} or kinds == {"sparse"}:
        return _composite_leaf(observations, where, relax, kinds.pop())
    if kinds == {"object"}:
        types = Counter(str(v.get("type")) for v, _ in observations)
        name = ", ".join(types)
        if all("spec" in v for v, _ in observations):
            return _composite_object_leaf(observations, where, name)
        return _Leaf(
            blocker=f"{where} is a Python object ({name}): it cannot be described by a spec",
            findings=[("AS204", f"{where} is a Python object ({name})")],
            evidence=[f"object {name}"],
            cause=f"{where} is a Python object ({name})",
            object_type=name,
        )
    if kinds == {"namedtuple"}:
        return _Leaf(
            blocker=f"{where} is a namedtuple: autosig does not write namedtuple specs",
            evidence=["namedtuple"],
        )
    if kinds <= {"tuple", "list", "dict"} and len(kinds) == 1:
        return _container_leaf(observations, where, relax, kinds.pop())
    if "python" in kinds and kinds <= {"python", "tensor", "numpy"}:
        if nested:
            return _nested_python_leaf(observations, where)
        return _python_leaf(observations, where)
    return _Leaf(
        blocker=f"{where} arrives as different kinds: {_kinds_summary(observations)}",
        evidence=[_kinds_summary(observations)],
        cause=f"{where} arrives as different kinds",
        variety=len(kinds),
    )


SPEC_SHAPE = re.compile(r"shape=(?:TensorShape\()?\(([^()]*)\)")
"""A shape inside a TypeSpec's repr: ``shape=(16, 6)`` or ``shape=TensorShape([16, 6])``."""


def _spec_shapes(spec_repr: str) -> list[Shape]:
    shapes: list[Shape] = []
    for match in SPEC_SHAPE.finditer(spec_repr.replace("[", "(").replace("]", ")")):
        dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
        shapes.append(
            tuple(
                None if d == "None" else int(d)
                for d in dims
                if d.lstrip("-").isdigit() or d == "None"
            )
        )
    return shapes


def _composite_object_leaf(observations: Sequence[Observation], where: str, name: str) -> _Leaf:
    """tf.data iterators and other composites: TensorFlow traces them by their TypeSpec.

    No spec node can be written for them, but their specs show what varied (a batch
    dimension, usually), which is what the report and the advice need.
    """
    specs: Counter[str] = Counter()
    for value, calls in observations:
        specs[str(value["spec"])] += calls
    per_spec = [_spec_shapes(spec) for spec in specs]
    dims: set[int] = set()
    if len({len(shapes) for shapes in per_spec}) == 1:
        for position in range(len(per_spec[0])):
            dims.update(varying_dimensions([shapes[position] for shapes in per_spec]))
    cause = None
    if len(specs) > 1:
        listed = ", ".join(map(str, sorted(dims)))
        what = f"dimension {listed} varies" if len(dims) == 1 else f"dimensions {listed} vary"
        cause = f"{where}'s element spec changes ({len(specs)} distinct specs" + (
            f"; {what})" if dims else ")"
        )
    total = sum(c for _, c in observations)
    return _Leaf(
        blocker=f"{where} is a {name}: TensorFlow traces it by its element spec, which a "
        "signature cannot name",
        evidence=[f"{name}, {_plural(total, 'call')}, {_plural(len(specs), 'distinct spec')}"],
        cause=cause,
        variety=len(specs),
        dims=frozenset(dims),
    )


def _tensor_leaf(observations: Sequence[Observation], where: str, relax: str) -> _Leaf:
    dtypes: Counter[str] = Counter()
    for value, calls in observations:
        dtypes[str(value.get("dtype"))] += calls
    if len(dtypes) > 1:
        listing = ", ".join(f"{d} ({_plural(n, 'call')})" for d, n in dtypes.most_common())
        return _Leaf(
            blocker=f"{where} arrives with different dtypes: {listing}",
            findings=[
                (
                    "AS203",
                    f"{where} arrives with different dtypes: {listing}; "
                    "each dtype is a separate trace: cast at the call sites",
                )
            ],
            evidence=[f"dtypes {listing}"],
            cause=f"{where} changes dtype ({', '.join(dtypes)})",
            variety=len(dtypes),
        )
    dtype = _tensor_dtype(observations[0][0])
    if dtype is None:
        raw = next(iter(dtypes))
        return _Leaf(
            blocker=f"{where} has dtype {raw}, which TensorFlow has no spec for",
            evidence=[f"dtype {raw}"],
        )
    shapes = [_shape(v.get("shape")) for v, _ in observations]
    shape = common_shape(shapes)
    relaxed = relax_shape(shape, relax)
    story = _shape_story(observations, shapes, shape, relaxed, relax)
    return _Leaf(
        spec=TensorSpecNode(relaxed, dtype),
        evidence=[story.evidence],
        cause=f"{where}: {story.cause}" if story.cause else None,
        variety=story.variety,
        dims=story.dims,
        rank_varies=story.rank_varies,
    )


@dataclass
class _ShapeStory:
    evidence: str
    cause: str | None
    variety: int
    dims: frozenset[int]
    rank_varies: bool


def _shape_story(
    observations: Sequence[Observation],
    shapes: Sequence[Shape],
    shape: Shape,
    relaxed: Shape,
    relax: str,
) -> _ShapeStory:
    """Evidence text for a tensor's shapes: calls, distinct shapes, what varies, policy."""
    total = sum(c for _, c in observations)
    distinct: dict[str, int] = {}
    for s, (_, calls) in zip(shapes, observations, strict=True):
        label = _show_shape(s)
        distinct[label] = distinct.get(label, 0) + calls
    labels = list(distinct)
    cause: str | None = None
    dims: list[int] = []
    rank_varies = False
    if len(labels) == 1:
        text = f"{_plural(total, 'call')}, always shape {labels[0]}"
    else:
        shown = " ".join(labels[:MAX_SHAPES_SHOWN])
        if len(labels) > MAX_SHAPES_SHOWN:
            shown += " ..."
        text = f"{_plural(total, 'call')}, {len(labels)} distinct shapes {shown}"
        dims = varying_dimensions(shapes)
        if shape is None:
            rank_varies = True
            ranks = sorted({len(s) for s in shapes if s is not None})
            text += f"; rank varies ({', '.join(map(str, ranks))}): unknown rank"
            cause = f"rank varies ({len(labels)} distinct shapes)"
        elif dims:
            what = "dimension" if len(dims) == 1 else "dimensions"
            verb = "varies" if len(dims) == 1 else "vary"
            listed = ", ".join(map(str, dims))
            text += f"; {what} {listed} {verb}"
            cause = f"{what} {listed} {verb} ({len(labels)} distinct shapes)"
    if relaxed != shape:
        text += f"; relax={relax}: {_show_shape(relaxed)}"
    return _ShapeStory(text, cause, len(labels), frozenset(dims), rank_varies)


def _composite_leaf(
    observations: Sequence[Observation], where: str, relax: str, kind: str
) -> _Leaf:
    def identity(v: Value) -> tuple[Any, ...]:
        if kind == "ragged":
            return (v.get("dtype"), v.get("ragged_rank"), v.get("row_splits_dtype", "int64"))
        return (v.get("dtype"),)

    ids: Counter[tuple[Any, ...]] = Counter()
    for value, calls in observations:
        ids[identity(value)] += calls
    if len(ids) > 1:
        listing = ", ".join(
            f"{'/'.join(map(str, i))} ({_plural(n, 'call')})" for i, n in ids.most_common()
        )
        dtypes = {i[0] for i in ids}
        findings = []
        if len(dtypes) > 1:
            findings.append(("AS203", f"{where} arrives with different dtypes: {listing}"))
        return _Leaf(
            blocker=f"{where} arrives as {kind} tensors of different types: {listing}",
            findings=findings,
            evidence=[listing],
            cause=f"{where} changes {kind} type",
            variety=len(ids),
        )
    dtype = str(observations[0][0].get("dtype"))
    if dtype not in TF_DTYPES:
        return _Leaf(blocker=f"{where} has dtype {dtype}, which TensorFlow has no spec for")
    shapes = [_shape(v.get("shape")) for v, _ in observations]
    shape = common_shape(shapes)
    relaxed = relax_shape(shape, relax)
    story = _shape_story(observations, shapes, shape, relaxed, relax)
    first = observations[0][0]
    spec: SpecNode
    if kind == "ragged":
        spec = RaggedSpecNode(
            relaxed, dtype, first.get("ragged_rank"), str(first.get("row_splits_dtype", "int64"))
        )
    else:
        spec = SparseSpecNode(relaxed, dtype)
    return _Leaf(
        spec=spec,
        evidence=[f"{kind}: {story.evidence}"],
        cause=f"{where}: {story.cause}" if story.cause else None,
        variety=story.variety,
        dims=story.dims,
        rank_varies=story.rank_varies,
    )


def _container_leaf(
    observations: Sequence[Observation], where: str, relax: str, kind: str
) -> _Leaf:
    layouts: Counter[str] = Counter()
    for value, calls in observations:
        items = value.get("items")
        if "length" in value:
            layouts[f"more than {len(items or ())} items"] += calls
        elif kind == "dict":
            layouts["keys " + ", ".join(sorted(items or {}))] += calls
        else:
            layouts[_plural(len(items or ()), "item")] += calls
    if len(layouts) > 1 or any(label.startswith("more than") for label in layouts):
        listing = "; ".join(f"{label} ({_plural(n, 'call')})" for label, n in layouts.most_common())
        return _Leaf(
            blocker=f"{where} is a {kind} whose structure varies or is too long to describe: {listing}",
            evidence=[listing],
            cause=f"{where} changes structure",
            variety=len(layouts),
        )
    first = observations[0][0]["items"]
    parts: list[tuple[Any, _Leaf]] = []
    if kind == "dict":
        for key in sorted(first):
            sub = [(v["items"][key], c) for v, c in observations]
            parts.append((key, _infer_leaf(sub, f"{where}[{key!r}]", relax, nested=True)))
    else:
        for index in range(len(first)):
            sub = [(v["items"][index], c) for v, c in observations]
            parts.append((index, _infer_leaf(sub, f"{where}[{index}]", relax, nested=True)))
    leaf = _Leaf(variety=1)
    for _, part in parts:
        leaf.findings.extend(part.findings)
        leaf.dims |= part.dims
        leaf.rank_varies |= part.rank_varies
        leaf.object_type = leaf.object_type or part.object_type
        if part.blocker and not leaf.blocker:
            leaf.blocker = part.blocker
        if part.cause and (leaf.cause is None or part.variety > leaf.variety):
            leaf.cause, leaf.variety = part.cause, part.variety
    varied = [f"[{k!r}] {'; '.join(p.evidence)}" for k, p in parts if p.cause or p.blocker]
    total = sum(c for _, c in observations)
    leaf.evidence = [
        f"{kind} of {_plural(len(parts), 'item')}, {_plural(total, 'call')}"
        + (": " + " | ".join(varied) if varied else ", every item constant")
    ]
    if leaf.blocker is None:
        specs = [p.spec for _, p in parts]
        if all(s is not None for s in specs):
            if kind == "dict":
                leaf.spec = DictNode(
                    tuple((str(k), p.spec) for k, p in parts if p.spec is not None)
                )
            elif kind == "tuple":
                leaf.spec = TupleNode(tuple(s for s in specs if s is not None))
            else:
                leaf.spec = ListNode(tuple(s for s in specs if s is not None))
    return leaf


def _nested_python_leaf(observations: Sequence[Observation], where: str) -> _Leaf:
    values = {_key(v) for v, _ in observations}
    varied = len(values) > 1 or any(v.get("varied") for v, _ in observations)
    return _Leaf(
        blocker=f"{where} is a Python value inside a nested argument: a signature would turn "
        "it into a tensor",
        evidence=["Python value" + (", varies" if varied else ", constant")],
        cause=f"{where} (a nested Python value) varies" if varied else None,
        variety=len(values) if varied else 1,
    )


def _python_leaf(observations: Sequence[Observation], where: str) -> _Leaf:
    """Python scalars, possibly mixed with tensors: flags block, numbers/strings may tensorize."""
    python = [(v, c) for v, c in observations if v.get("kind") == "python"]
    tensors = [(v, c) for v, c in observations if v.get("kind") != "python"]
    types = [str(v.get("type")) for v, _ in python]
    calls: Counter[str] = Counter()
    known: list[Any] = []
    folded = False
    for value, count in python:
        if "value" in value:
            label = _show_value(value["value"])
            if value["value"] not in known:
                known.append(value["value"])
        else:
            folded = True
            label = "<varied>"
        calls[label] += count
    distinct = len(calls) + (1 if tensors else 0)
    flag_types = [t for t in types if t not in NUMERIC_PYTHON + STRING_PYTHON]
    if flag_types:
        tname = "/".join(sorted(set(flag_types)))
        listing = ", ".join(f"{label}: {_plural(n, 'call')}" for label, n in calls.most_common())
        if folded or len(calls) > 1 or tensors:
            message = (
                f"{where} is a Python {tname} flag with {len(calls)} values ({listing}); "
                "each value is a separate trace"
            )
            return _Leaf(
                blocker=f"{where} is a Python {tname} that steers the function ({listing})",
                findings=[("AS204", message)],
                evidence=[f"Python {tname}, {listing}"],
                cause=f"{where} (Python {tname}) takes {len(calls)} values",
                variety=distinct,
            )
        return _Leaf(
            blocker=f"{where} is a Python {tname} ({listing}): a signature cannot pin it",
            evidence=[f"Python {tname}, always {listing.split(':')[0]}"],
        )
    dtype = python_scalar_dtype(types, known)
    if tensors:
        tensor_leaf = _tensor_leaf(tensors, where, "none")
        spec = tensor_leaf.spec
        if (
            not isinstance(spec, TensorSpecNode)
            or spec.shape not in (None, ())
            or not all(_python_fits(spec, v) for v, _ in python)
        ):
            return _Leaf(
                blocker=f"{where} arrives as different kinds: {_kinds_summary(observations)}",
                evidence=[_kinds_summary(observations)],
                cause=f"{where} arrives as different kinds",
                variety=distinct,
            )
        dtype = spec.dtype
    if dtype is None:
        return _Leaf(
            blocker=f"{where} arrives as Python values of mixed types ({', '.join(sorted(set(types)))})",
            evidence=[_kinds_summary(observations)],
            cause=f"{where} changes type",
            variety=distinct,
        )
    scalar = _PythonScalar(types, known, folded, dtype, calls)
    total = sum(c for _, c in observations)
    evidence = f"{scalar.describe()} ({_plural(total, 'call')})"
    if tensors:
        evidence += f"; also a scalar {dtype} tensor"
    return _Leaf(
        python=scalar,
        evidence=[evidence],
        cause=f"{where} (Python {'/'.join(sorted(set(types)))}) takes {'many' if folded else len(calls)} values"
        if scalar.varied
        else None,
        variety=distinct if scalar.varied else 1,
    )


# -- per-function planning ------------------------------------------------------------------


@dataclass
class _Source:
    """A parsed file: its text, metadata wrapper and tf.function sites (or why not)."""

    text: str
    wrapper: MetadataWrapper | None
    sites: list[FunctionSite]
    error: str | None = None

    @classmethod
    def parse(cls, text: str, path: str) -> _Source:
        try:
            wrapper, sites = discover_text(text, path)
        except AutosigError as exc:
            return cls(text, None, [], exc.message)
        return cls(text, wrapper, sites)

    def locate(self, qualname: str, line: int) -> FunctionSite | None:
        matches = [s for s in self.sites if s.function is not None and s.site.qualname == qualname]
        if not matches:
            return None
        return min(matches, key=lambda s: abs(s.site.line - line))

    def lines_of(self, site: FunctionSite) -> tuple[int, int]:
        """First and last line of the function (def keyword through the end of the body)."""
        assert self.wrapper is not None and site.function is not None
        positions = self.wrapper.resolve(PositionProvider)
        where = positions[site.function]
        return where.start.line, where.end.line

    def site_lines(self, site: FunctionSite) -> list[int]:
        """Lines where a suppression comment for this function counts."""
        assert self.wrapper is not None
        positions = self.wrapper.resolve(PositionProvider)
        lines = {site.site.line}
        function = site.function
        nodes: list[Any] = []
        if function is not None and hasattr(function, "decorators"):
            nodes.extend(function.decorators)
        if site.call is not None:
            nodes.append(site.call)
        for node in nodes:
            where = positions.get(node)
            if where is not None:
                lines.update(range(where.start.line, where.end.line + 1))
        return sorted(lines)


@dataclass
class _ParamResult:
    info: ParamInfo
    leaf: _Leaf
    needed: bool
    """Must be in the signature: varied, passed a non-default value, or has no default."""
    evidence: str
    blocker: str | None = None
    spec: SpecNode | None = None
    python_uses: list[PythonUse] = field(default_factory=list)


def _observations(record: FunctionRecord, name: str) -> list[tuple[Value, int, str]]:
    out = []
    for sig in record.signatures:
        if name in sig.args:
            out.append((sig.args[name], sig.calls, sig.passed.get(name, "positional")))
    return out


def _is_default(info: ParamInfo, value: Value, passed: str) -> bool:
    return passed == "default" or (info.default is not None and _key(value) == _key(info.default))


def _empty(value: Value) -> bool:
    return (
        value.get("kind") in ("tuple", "dict", "list")
        and not value.get("items")
        and "length" not in value
    )


def _analyze_param(record: FunctionRecord, info: ParamInfo, options: InferOptions) -> _ParamResult:
    obs = _observations(record, info.name)
    path = record.path or ""
    where = f"`{info.name}`"
    if info.kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
        star = "*" if info.kind == "VAR_POSITIONAL" else "**"
        used = [v for v, _, _ in obs if not _empty(v)]
        leaf = _Leaf(evidence=["always empty" if not used else "receives arguments"])
        result = _ParamResult(info, leaf, needed=False, evidence=leaf.evidence[0])
        if used:
            result.blocker = (
                f"`{star}{info.name}` receives arguments: input_signature cannot describe "
                f"{star}{info.name}"
            )
            leaf.cause = f"`{star}{info.name}` varies"
        return result
    relax = options.relax_for(path, record.qualname, info.name)
    if record.signatures_dropped:
        relax = "all"  # calls we did not see may have other sizes in any dimension
    leaf = _infer_leaf([(v, c) for v, c, _ in obs], where, relax, nested=False) if obs else _Leaf()
    all_default = bool(obs) and all(_is_default(info, v, p) for v, _, p in obs)
    needed = not all_default
    evidence = "; ".join(leaf.evidence) or "no calls recorded"
    if all_default:
        evidence = f"always its default ({evidence})"
    result = _ParamResult(info, leaf, needed=needed, evidence=evidence)
    if info.kind == "KEYWORD_ONLY" and needed:
        result.blocker = (
            f"keyword-only {where} is passed values other than its default: TensorFlow's "
            "input_signature cannot cover keyword-only parameters"
        )
    elif leaf.blocker:
        result.blocker = leaf.blocker
    elif not obs:
        result.blocker = f"{where} was never seen in a recorded call"
    elif (path, record.qualname, info.name) in options.force_python and (
        leaf.python is not None or needed
    ):
        result.blocker = f"{where} is kept as a Python value (verification fallback)"
    elif leaf.spec is not None:
        result.spec = leaf.spec
    return result


def _plan_function(
    record: FunctionRecord, source: _Source | None, options: InferOptions
) -> FunctionPlan:
    base = {
        "path": record.path or "",
        "qualname": record.qualname,
        "line": record.line,
        "calls": record.calls,
        "traces": record.traces,
    }
    where = record.path or "<unknown file>"
    if source is None:
        return FunctionPlan(
            action="none", reasons=(f"the source of {where} is not available",), **base
        )
    if source.error is not None:
        return FunctionPlan(action="none", reasons=(f"{where} {source.error}",), **base)
    site = source.locate(record.qualname, record.line)
    if site is None:
        return FunctionPlan(
            action="none",
            reasons=(
                f"no tf.function named {record.qualname} found in {where} "
                "(moved, renamed or no longer a tf.function? re-run autosig profile)",
            ),
            **base,
        )
    base["line"] = site.site.line
    first, last = source.lines_of(site)
    if (
        record.source_sha256
        and source_hash_from_file_text(source.text, first, last) != record.source_sha256
    ):
        return FunctionPlan(action="none", reasons=(STALE_REASON,), stale=True, **base)
    if site.site.has_input_signature:
        return FunctionPlan(action="none", reasons=(SIGNED_REASON,), **base)

    results = [_analyze_param(record, info, options) for info in record.params]
    once = _traced_once(record)
    if record.calls <= 1 or once is not None:
        reason = "called once; nothing to fix" if record.calls <= 1 else str(once)
        params = tuple(ParamPlan(r.info.name, None, r.evidence) for r in results)
        return FunctionPlan(action="none", params=params, reasons=(reason,), **base)

    _decide_python_params(record, source, site, results)
    action, reasons, signed = _decide_action(record, site, results)
    params = tuple(
        ParamPlan(r.info.name, r.spec if r.info.name in signed else None, r.evidence)
        for r in results
    )
    findings = _findings(record, site, source, results, action, reasons)
    return FunctionPlan(
        action=action, params=params, reasons=tuple(reasons), findings=tuple(findings), **base
    )


def _traced_once(record: FunctionRecord) -> str | None:
    """Why no retrace happened, or None when some tf.function object traced twice.

    Traces add up over the instances of a class (each has its own tf.function) and over
    the processes of a merged profile (each traces afresh): a signature cannot bring
    those below one per instance and process.
    """
    if record.traces <= 1:
        return ONCE_REASON
    events = record.trace_events
    if events and len(events) == record.traces:
        per_owner = Counter((e.process, e.instance) for e in events)
        if max(per_owner.values()) > 1:
            return None
        owners = len(per_owner)
    elif record.traces <= max(record.instances, record.processes, 1):
        owners = record.traces
    else:
        return None
    processes = len({e.process for e in events}) if events else record.processes
    what = "per process" if processes > 1 and owners == processes else "per instance"
    if processes > 1 and owners > processes:
        what = "per instance and process"
    return f"traced once {what} ({owners} tf.function objects); nothing to fix"


def _decide_python_params(
    record: FunctionRecord, source: _Source, site: FunctionSite, results: list[_ParamResult]
) -> None:
    """Tensorize Python scalars the code uses only where a tensor can go."""
    candidates = [r for r in results if r.blocker is None and r.leaf.python is not None]
    if not candidates:
        return
    function = site.function
    assert function is not None and source.wrapper is not None
    required = required_dtypes(source.wrapper, function, [r.info.name for r in candidates])
    for r in candidates:
        assert r.leaf.python is not None
        needed = required.get(r.info.name)
        if needed and r.leaf.python.dtype in ("int32", "int64"):
            r.leaf.python.dtype = needed
    tensor_params = [r.info.name for r in results if r.leaf.spec is not None]
    dtypes = {
        r.info.name: r.leaf.spec.dtype for r in results if isinstance(r.leaf.spec, TensorSpecNode)
    }
    for r in candidates:
        assert r.leaf.python is not None
        dtypes[r.info.name] = r.leaf.python.dtype
    uses = python_only_uses(
        source.wrapper, function, [r.info.name for r in candidates], tensor_params, dtypes
    )
    for r in candidates:
        assert r.leaf.python is not None
        found = uses.get(r.info.name, [])
        if found:
            r.python_uses = found
            r.blocker = f"`{r.info.name}` must stay a Python value: {found[0].describe()}"
        else:
            r.spec = TensorSpecNode((), r.leaf.python.dtype)


def _decide_action(
    record: FunctionRecord,
    site: FunctionSite,
    results: list[_ParamResult],
) -> tuple[Action, list[str], set[str]]:
    """(action, reasons, names of the parameters that go in the signature)."""
    reasons: list[str] = []
    positional = [r for r in results if r.info.kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    others = [r for r in results if r not in positional]
    if not record.params and record.signatures:
        reasons.append("the parameters of the function are unknown (no Python signature)")
    if not record.signatures:
        reasons.append("no call signature was recorded")
    needed_at = [i for i, r in enumerate(positional) if r.needed]
    last = needed_at[-1] if needed_at else -1
    signed = positional[: last + 1]
    blockers = [r.blocker for r in signed if r.blocker]
    blockers += [
        r.blocker
        for r in others
        if r.blocker and (r.needed or r.info.kind in ("VAR_POSITIONAL", "VAR_KEYWORD"))
    ]
    for r in signed:
        if r.blocker is None and r.spec is None:
            blockers.append(f"`{r.info.name}` has no spec")
    star = next((r.info.name for r in others if r.info.kind == "VAR_POSITIONAL"), None)
    if star is not None:
        # Measured (TF 2.21): with *args, signed parameters become positional-only.
        for r in signed:
            if any(sig.passed.get(r.info.name) == "keyword" for sig in record.signatures):
                blockers.append(
                    f"`{r.info.name}` is passed by keyword, but next to `*{star}` an "
                    "input_signature makes it positional-only"
                )
    reasons.extend(b for b in blockers if b)
    identical = len(record.signatures) == 1 and not record.signatures_dropped
    if identical and not any(r.leaf.object_type for r in results):
        return (
            "none",
            [
                f"retraced with identical arguments ({record.traces} traces, one call signature): "
                "a signature cannot help; variables created on the first call? "
                "(build optimizers and layers before the first call)"
            ],
            set(),
        )
    if reasons:
        if site.site.has_reduce_retracing:
            return "none", ["already has reduce_retracing=True", *reasons], set()
        return "reduce_retracing", reasons, set()
    names = {r.info.name for r in signed}
    out = [
        f"input_signature covers {_plural(len(signed), 'parameter')} from {_plural(record.calls, 'call')}"
    ]
    for r in positional[last + 1 :] + others:
        out.append(f"`{r.info.name}` left out: {r.evidence}")
    if record.signatures_dropped:
        out.append(
            f"{record.signatures_dropped} call signatures were not recorded: every tensor "
            "dimension is left free so unseen shapes still fit (verify before trusting it)"
        )
    return "signature", out, names


def _findings(
    record: FunctionRecord,
    site: FunctionSite,
    source: _Source,
    results: list[_ParamResult],
    action: Action,
    reasons: list[str],
) -> list[Finding]:
    path = record.path or ""
    line, col = site.site.line, site.site.col
    fixable = action in ("signature", "reduce_retracing")
    out: list[Finding] = []

    def add(code: str, message: str, can_fix: bool = fixable) -> None:
        out.append(
            Finding(
                path=path,
                line=line,
                col=col,
                code=code,
                message=message,
                function=record.qualname,
                fixable=can_fix,
                fix_safety="safe" if can_fix else "none",
            )
        )

    cause = _main_cause(results) or reasons[0]
    if record.traces > 1:
        add(
            "AS201",
            f"{record.traces} traces for {_plural(record.calls, 'call')}; main cause: {cause}",
        )
    for r in results:
        python = r.leaf.python
        if python is not None and python.varied:
            message = (
                f"Python {python.type_name} argument `{r.info.name}` takes "
                f"{python.values_text()}: every new value is a new trace"
            )
            if r.spec is not None and action == "signature":
                message += f"; planned as tf.TensorSpec([], tf.{python.dtype})"
            elif r.python_uses:
                message += f"; kept as a Python value: {r.python_uses[0].describe()}"
            add("AS202", message)
        for code, text in r.leaf.findings:
            if code == "AS204" and r.leaf.object_type is not None:
                count = record.object_instances.get(r.info.name)
                if count:
                    text += f", {_plural(count, 'distinct instance')}: each new one is a new trace"
            add(code, text)
    return _unsuppressed(out, source, site)


def _main_cause(results: list[_ParamResult]) -> str | None:
    causes = [(r.leaf.variety, r.leaf.cause) for r in results if r.leaf.cause]
    if not causes:
        return None
    causes.sort(key=lambda c: -c[0])
    text = str(causes[0][1])
    if len(causes) > 1:
        text += f" (and {len(causes) - 1} more)"
    return text


def _unsuppressed(findings: list[Finding], source: _Source, site: FunctionSite) -> list[Finding]:
    try:
        from autosig.suppress import Suppressions
    except ImportError:  # suppressions not available in this build
        return findings
    try:
        suppressions = Suppressions.from_text(source.text)
    except Exception:  # noqa: BLE001 - a comment scanner failure must not lose findings
        return findings
    lines = source.site_lines(site)
    return [f for f in findings if not suppressions.is_suppressed(f.code, lines)]


def _library_plan(record: FunctionRecord, options: InferOptions) -> FunctionPlan:
    """Library code cannot be edited: say what the caller can change instead."""
    results = [_analyze_param(record, info, options) for info in record.params]
    advice: list[str] = []
    for r in results:
        if 0 in r.leaf.dims:
            advice.append(
                "feed one batch size: dataset.batch(n, drop_remainder=True) with a single n, "
                "or drop_remainder=False so the batch dimension is None"
            )
        if r.leaf.rank_varies or r.leaf.dims - {0}:
            advice.append("pad inputs to fixed shapes (padded_batch or bucketing)")
        for code, _ in r.leaf.findings:
            if code == "AS203":
                advice.append("cast inputs to one dtype (float32) before passing them")
        if r.leaf.python is not None and r.leaf.python.varied:
            advice.append(f"pass `{r.info.name}` as a tensor instead of a Python number")
        if _has_numpy_float64(record, r.info.name):
            advice.append("cast inputs to float32 (NumPy float64 arrays become float64 graphs)")
    if record.traces <= max(1, record.instances):
        advice = [ONCE_REASON]
    advice = list(dict.fromkeys(advice)) or ["nothing autosig can change in library code"]
    where = f"{record.path}:{record.line}" if record.path else record.qualname
    reason = f"library function ({where}), not editable: " + "; ".join(advice)
    findings: list[Finding] = []
    if record.traces > 1:
        cause = _main_cause(results) or "see autosig explain"
        findings.append(
            Finding(
                path=record.path or "<library>",
                line=record.line,
                col=1,
                code="AS201",
                message=f"{record.traces} traces for {_plural(record.calls, 'call')}; main cause: {cause}; {'; '.join(advice)}",
                function=record.qualname,
            )
        )
    return FunctionPlan(
        path=record.path or "",
        qualname=record.qualname,
        line=record.line,
        action="none",
        params=tuple(ParamPlan(r.info.name, None, r.evidence) for r in results),
        reasons=(reason,),
        findings=tuple(findings),
        calls=record.calls,
        traces=record.traces,
    )


def _has_numpy_float64(record: FunctionRecord, name: str) -> bool:
    def walk(value: Value) -> bool:
        if value.get("kind") == "numpy" and value.get("dtype") == "float64":
            return True
        items = value.get("items")
        if isinstance(items, dict):
            return any(walk(v) for v in items.values())
        if isinstance(items, list):
            return any(walk(v) for v in items)
        return False

    return any(walk(sig.args[name]) for sig in record.signatures if name in sig.args)


__all__ = [
    "InferOptions",
    "infer_function",
    "infer_plan",
    "spec_accepts",
]

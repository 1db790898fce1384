"""From a profile's recorded calls to what each parameter allows, with the evidence in words.

For each parameter of a profiled function this reads the recorded values of every call
signature (the profile's JSON descriptions) and returns a ``ParamResult``: the spec that
accepts every observed call and no more (or what blocks one), whether the parameter
must be in a signature at all, and the evidence and causes the report shows. Only the
profile's data is read here; the function's code is judged later (``planner``).

One module, because it is one recursion: ``infer_leaf`` dispatches an argument on its
kind to the tensor, Python-value, object and structure inferers, the structure inferer
calls ``infer_leaf`` on each item (the items every call recorded, aligned by the one
walk over the record's values, ``value_tree.walk_calls``), and all of them fill the same
``Leaf`` record and word their evidence the same way. Split, those parts imported each
other in a circle of small files; together they read top-down in the order the data
flows:

- reading value descriptions (``Observation``, ``kinds_summary``);
- the ``Leaf`` record and the dispatch on an argument's kind (``infer_leaf``);
- tensors (dense, NumPy, ragged, sparse): one spec loose enough for every call;
- Python values: flags block a signature, numbers and strings may tensorize;
- objects TensorFlow traces by their TypeSpec (tf.data iterators);
- the parameter: its kind, its default, the user's shape policy (``InferOptions``);
- over the parameters: the cause that varied most (``main_cause``).

What the calls and traces show about the whole function, and the stage that asks this
module for each parameter, are ``observed`` (``observe``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autosig.analysis.python_values import PythonUse
from autosig.errors import AutosigError
from autosig.infer.plan import Blocker, BlockerKind
from autosig.infer.specs import (
    NUMERIC_PYTHON,
    RELAX_POLICIES,
    STRING_PYTHON,
    TF_DTYPES,
    DictNode,
    ListNode,
    RaggedSpecNode,
    Shape,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    TupleNode,
    common_shape,
    python_fits,
    python_scalar_dtype,
    relax_shape,
    shape_of,
    show_shape,
    show_value,
    tensor_dtype,
    varying_dimensions,
    varying_text,
)
from autosig.profile.format import (
    MAX_PYTHON_VALUES,
    FunctionRecord,
    ParamInfo,
    Value,
)
from autosig.profile.value_tree import Place, Recorded
from autosig.text import plural

if TYPE_CHECKING:
    from autosig.source.config import Config


# -- recorded values -----------------------------------------------------------------


Observation = tuple[Value, int]
"""A value as described in one CallSignature, and how many calls used it."""


def value_key(value: Value) -> str:
    """A hashable identity of a description: equal keys, equal values."""
    return json.dumps(value, sort_keys=True)


def kinds_summary(observations: Sequence[Observation]) -> str:
    """``tensor (3 calls), Python int (2 calls)``: what an argument arrived as."""
    counts: Counter[str] = Counter()
    for value, calls in observations:
        kind = value.get("kind", "?")
        label = f"Python {value.get('type')}" if kind == "python" else str(kind)
        if kind == "object":
            label = str(value.get("type"))
        counts[label] += calls
    return ", ".join(f"{label} ({plural(n, 'call')})" for label, n in counts.most_common())


# -- what one argument allows --------------------------------------------------------


@dataclass
class PythonScalar:
    """A parameter that arrives as Python numbers/strings: maybe tensorizable."""

    types: list[str]
    values: list[Any]
    folded: bool
    """More distinct values were seen than the profile keeps."""
    dtype: str

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
            return f"always {show_value(self.values[0])}"
        try:
            ordered = sorted(self.values)
        except TypeError:
            ordered = list(self.values)
        if len(ordered) <= 4:
            shown = ", ".join(show_value(v) for v in ordered)
        else:
            shown = f"{show_value(ordered[0])}..{show_value(ordered[-1])}"
        return f"{len(ordered)} distinct values {shown}"

    def describe(self) -> str:
        return f"Python {self.type_name}, {self.values_text()}"


@dataclass
class Leaf:
    """What one argument (or a nested part of it) allows."""

    spec: SpecNode | None = None
    python: PythonScalar | None = None
    blocker: str | None = None
    """Why no spec can be written; it starts with the ``where`` the leaf was inferred for."""
    blocker_kind: BlockerKind = "argument"
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


def mixed_kinds_leaf(observations: Sequence[Observation], where: str, variety: int) -> Leaf:
    """An argument that arrived as kinds no single spec covers (tensor and object, ...)."""
    summary = kinds_summary(observations)
    return Leaf(
        blocker=f"{where} arrives as different kinds: {summary}",
        evidence=[summary],
        cause=f"{where} arrives as different kinds",
        variety=variety,
    )


def infer_leaf(place: Place, where: str, relax: str, nested: bool) -> Leaf:
    """What one argument, as every call recorded it (``place``), allows; ``where`` names
    it in messages."""
    observations = place.seen
    kinds = {v.get("kind") for v, _ in observations}
    total = sum(c for _, c in observations)
    if "variable" in kinds:
        return Leaf(
            blocker=f"{where} is a tf.Variable: a signature would pass a copy of its value "
            "(assignments inside the function would fail)",
            evidence=[f"tf.Variable in {plural(total, 'call')}"],
        )
    if kinds <= {"tensor", "numpy"}:
        return tensor_leaf(observations, where, relax)
    if kinds == {"ragged"} or kinds == {"sparse"}:
        return composite_leaf(observations, where, relax, kinds.pop())
    if kinds == {"object"}:
        types = Counter(str(v.get("type")) for v, _ in observations)
        name = ", ".join(types)
        if all("spec" in v for v, _ in observations):
            return spec_object_leaf(observations, where, name)
        return Leaf(
            blocker=f"{where} is a Python object ({name}): it cannot be described by a spec",
            blocker_kind="object",
            findings=[("AS204", f"{where} is a Python object ({name})")],
            evidence=[f"object {name}"],
            cause=f"{where} is a Python object ({name})",
            object_type=name,
        )
    if kinds == {"namedtuple"}:
        return Leaf(
            blocker=f"{where} is a namedtuple: autosig does not write namedtuple specs",
            evidence=["namedtuple"],
        )
    if kinds <= {"tuple", "list", "dict"} and len(kinds) == 1:
        return _container_leaf(place, where, relax, kinds.pop())
    if "python" in kinds and kinds <= {"python", "tensor", "numpy"}:
        if nested:
            return nested_python_leaf(observations, where)
        return python_leaf(observations, where)
    return mixed_kinds_leaf(observations, where, len(kinds))


def _container_leaf(place: Place, where: str, relax: str, kind: str) -> Leaf:
    observations = place.seen
    layouts: Counter[str] = Counter()
    for value, calls in observations:
        items = value.get("items")
        if "length" in value:
            layouts[f"more than {len(items or ())} items"] += calls
        elif kind == "dict":
            layouts["keys " + ", ".join(sorted(items or {}))] += calls
        else:
            layouts[plural(len(items or ()), "item")] += calls
    if (
        place.items is None
        or len(layouts) > 1
        or any(label.startswith("more than") for label in layouts)
    ):
        listing = "; ".join(f"{label} ({plural(n, 'call')})" for label, n in layouts.most_common())
        return Leaf(
            blocker=f"{where} is a {kind} whose structure varies or is too long to describe: {listing}",
            evidence=[listing],
            cause=f"{where} changes structure",
            variety=len(layouts),
        )
    parts = [
        (key, infer_leaf(item, where + step, relax, nested=True))
        for step, key, item in place.items  # every call has its layout (same keys or length)
    ]
    leaf = Leaf(variety=1)
    for _, part in parts:
        leaf.findings.extend(part.findings)
        leaf.dims |= part.dims
        leaf.rank_varies |= part.rank_varies
        leaf.object_type = leaf.object_type or part.object_type
        if part.blocker and not leaf.blocker:
            leaf.blocker, leaf.blocker_kind = part.blocker, part.blocker_kind
        if part.cause and (leaf.cause is None or part.variety > leaf.variety):
            leaf.cause, leaf.variety = part.cause, part.variety
    varied = [f"[{k!r}] {'; '.join(p.evidence)}" for k, p in parts if p.cause or p.blocker]
    total = sum(c for _, c in observations)
    leaf.evidence = [
        f"{kind} of {plural(len(parts), 'item')}, {plural(total, 'call')}"
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


# -- tensors -------------------------------------------------------------------------
# The dtype must be one; the shape is the common supertype of the observed shapes,
# relaxed by the user's policy. The evidence says how many shapes were seen and which
# dimensions varied: what a reviewer checks before trusting a ``None``.


MAX_SHAPES_SHOWN = 4


def tensor_leaf(observations: Sequence[Observation], where: str, relax: str) -> Leaf:
    """A dense tensor or NumPy array: a ``TensorSpecNode`` unless its dtype varies."""
    dtypes: Counter[str] = Counter()
    for value, calls in observations:
        dtypes[str(value.get("dtype"))] += calls
    if len(dtypes) > 1:
        listing = ", ".join(f"{d} ({plural(n, 'call')})" for d, n in dtypes.most_common())
        return Leaf(
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
    dtype = tensor_dtype(observations[0][0])
    if dtype is None:
        raw = next(iter(dtypes))
        return Leaf(
            blocker=f"{where} has dtype {raw}, which TensorFlow has no spec for",
            evidence=[f"dtype {raw}"],
        )
    story = _shape_story(observations, relax)
    return story.leaf(TensorSpecNode(story.relaxed, dtype), where)


def composite_leaf(observations: Sequence[Observation], where: str, relax: str, kind: str) -> Leaf:
    """A ragged or sparse tensor (``kind``): its spec, unless its type varies."""

    def identity(v: Value) -> tuple[Any, ...]:
        if kind == "ragged":
            return (v.get("dtype"), v.get("ragged_rank"), v.get("row_splits_dtype", "int64"))
        return (v.get("dtype"),)

    ids: Counter[tuple[Any, ...]] = Counter()
    for value, calls in observations:
        ids[identity(value)] += calls
    if len(ids) > 1:
        listing = ", ".join(
            f"{'/'.join(map(str, i))} ({plural(n, 'call')})" for i, n in ids.most_common()
        )
        dtypes = {i[0] for i in ids}
        findings = []
        if len(dtypes) > 1:
            findings.append(("AS203", f"{where} arrives with different dtypes: {listing}"))
        return Leaf(
            blocker=f"{where} arrives as {kind} tensors of different types: {listing}",
            findings=findings,
            evidence=[listing],
            cause=f"{where} changes {kind} type",
            variety=len(ids),
        )
    dtype = str(observations[0][0].get("dtype"))
    if dtype not in TF_DTYPES:
        return Leaf(blocker=f"{where} has dtype {dtype}, which TensorFlow has no spec for")
    story = _shape_story(observations, relax)
    first = observations[0][0]
    spec: SpecNode
    if kind == "ragged":
        spec = RaggedSpecNode(
            story.relaxed,
            dtype,
            first.get("ragged_rank"),
            str(first.get("row_splits_dtype", "int64")),
        )
    else:
        spec = SparseSpecNode(story.relaxed, dtype)
    return story.leaf(spec, where, label=f"{kind}: ")


@dataclass
class _ShapeStory:
    """The shape a spec gets from the observed shapes, and how that reads in the report."""

    relaxed: Shape
    """Accepts every observed shape, loosened by the shape policy."""
    evidence: str
    cause: str | None
    variety: int
    dims: frozenset[int]
    rank_varies: bool

    def leaf(self, spec: SpecNode, where: str, label: str = "") -> Leaf:
        return Leaf(
            spec=spec,
            evidence=[label + self.evidence],
            cause=f"{where}: {self.cause}" if self.cause else None,
            variety=self.variety,
            dims=self.dims,
            rank_varies=self.rank_varies,
        )


def _shape_story(observations: Sequence[Observation], relax: str) -> _ShapeStory:
    """Evidence text for a tensor's shapes: calls, distinct shapes, what varies, policy."""
    shapes = [shape_of(v.get("shape")) for v, _ in observations]
    shape = common_shape(shapes)
    relaxed = relax_shape(shape, relax)
    total = sum(c for _, c in observations)
    distinct: dict[str, int] = {}
    for s, (_, calls) in zip(shapes, observations, strict=True):
        label = show_shape(s)
        distinct[label] = distinct.get(label, 0) + calls
    labels = list(distinct)
    cause: str | None = None
    dims: list[int] = []
    rank_varies = False
    if len(labels) == 1:
        text = f"{plural(total, 'call')}, always shape {labels[0]}"
    else:
        shown = " ".join(labels[:MAX_SHAPES_SHOWN])
        if len(labels) > MAX_SHAPES_SHOWN:
            shown += " ..."
        text = f"{plural(total, 'call')}, {len(labels)} distinct shapes {shown}"
        dims = varying_dimensions(shapes)
        if shape is None:
            rank_varies = True
            ranks = sorted({len(s) for s in shapes if s is not None})
            text += f"; rank varies ({', '.join(map(str, ranks))}): unknown rank"
            cause = f"rank varies ({len(labels)} distinct shapes)"
        elif dims:
            text += f"; {varying_text(dims)}"
            cause = f"{varying_text(dims)} ({len(labels)} distinct shapes)"
    if relaxed != shape:
        text += f"; relax={relax}: {show_shape(relaxed)}"
    return _ShapeStory(relaxed, text, cause, len(labels), frozenset(dims), rank_varies)


# -- Python values -------------------------------------------------------------------
# A Python bool or enum steers control flow, so it keeps its retraces (AS204). A number
# or string can become a scalar ``TensorSpec`` when one dtype holds every value seen (the
# planner then checks that the code does not need it as a Python value). Inside a nested
# argument a Python value always blocks: a signature would make it a tensor there.


def nested_python_leaf(observations: Sequence[Observation], where: str) -> Leaf:
    """A Python value inside a tuple/list/dict argument."""
    values = {value_key(v) for v, _ in observations}
    varied = len(values) > 1 or any(v.get("varied") for v, _ in observations)
    return Leaf(
        blocker=f"{where} is a Python value inside a nested argument: a signature would turn "
        "it into a tensor",
        evidence=["Python value" + (", varies" if varied else ", constant")],
        cause=f"{where} (a nested Python value) varies" if varied else None,
        variety=len(values) if varied else 1,
    )


def python_leaf(observations: Sequence[Observation], where: str) -> Leaf:
    """Python scalars, possibly mixed with tensors: flags block, numbers/strings may tensorize."""
    python = [(v, c) for v, c in observations if v.get("kind") == "python"]
    tensors = [(v, c) for v, c in observations if v.get("kind") != "python"]
    types = [str(v.get("type")) for v, _ in python]
    calls: Counter[str] = Counter()
    known: list[Any] = []
    folded = False
    for value, count in python:
        if "value" in value:
            label = show_value(value["value"])
            if value["value"] not in known:
                known.append(value["value"])
        else:
            folded = True
            label = "<varied>"
        calls[label] += count
    distinct = len(calls) + (1 if tensors else 0)
    flag_types = [t for t in types if t not in NUMERIC_PYTHON + STRING_PYTHON]
    if flag_types:
        return _flag_leaf(where, "/".join(sorted(set(flag_types))), calls, folded, bool(tensors))
    dtype = python_scalar_dtype(types, known)
    if tensors:
        spec = tensor_leaf(tensors, where, "none").spec
        if (
            not isinstance(spec, TensorSpecNode)
            or spec.shape not in (None, ())
            or not all(python_fits(spec, v) for v, _ in python)
        ):
            return mixed_kinds_leaf(observations, where, distinct)
        dtype = spec.dtype
    if dtype is None:
        return Leaf(
            blocker=f"{where} arrives as Python values of mixed types ({', '.join(sorted(set(types)))})",
            evidence=[kinds_summary(observations)],
            cause=f"{where} changes type",
            variety=distinct,
        )
    scalar = PythonScalar(types, known, folded, dtype)
    total = sum(c for _, c in observations)
    evidence = f"{scalar.describe()} ({plural(total, 'call')})"
    if tensors:
        evidence += f"; also a scalar {dtype} tensor"
    return Leaf(
        python=scalar,
        evidence=[evidence],
        cause=f"{where} (Python {'/'.join(sorted(set(types)))}) takes {'many' if folded else len(calls)} values"
        if scalar.varied
        else None,
        variety=distinct if scalar.varied else 1,
    )


def _flag_leaf(
    where: str, tname: str, calls: Counter[str], folded: bool, also_tensors: bool
) -> Leaf:
    """A Python bool/None/enum (``tname``): it steers the function, so it cannot be a spec.

    ``calls`` counts the calls per value shown; ``also_tensors``: other calls passed a tensor.
    """
    listing = ", ".join(f"{label}: {plural(n, 'call')}" for label, n in calls.most_common())
    if folded or len(calls) > 1 or also_tensors:
        message = (
            f"{where} is a Python {tname} flag with {len(calls)} values ({listing}); "
            "each value is a separate trace"
        )
        return Leaf(
            blocker=f"{where} is a Python {tname} that steers the function ({listing})",
            findings=[("AS204", message)],
            evidence=[f"Python {tname}, {listing}"],
            cause=f"{where} (Python {tname}) takes {len(calls)} values",
            variety=len(calls) + (1 if also_tensors else 0),
        )
    return Leaf(
        blocker=f"{where} is a Python {tname} ({listing}): a signature cannot pin it",
        evidence=[f"Python {tname}, always {listing.split(':')[0]}"],
    )


# -- objects traced by their TypeSpec ------------------------------------------------
# tf.data iterators and other composites: no spec node can be written for them, so they
# block a signature; their recorded spec text still shows what varied (a batch
# dimension, usually), which the report and the advice for library code need.


SPEC_SHAPE = re.compile(r"shape=(?:TensorShape\()?\(([^()]*)\)")
"""A shape inside a TypeSpec's repr: ``shape=(16, 6)`` or ``shape=TensorShape([16, 6])``."""


def spec_object_leaf(observations: Sequence[Observation], where: str, name: str) -> Leaf:
    """An object of type ``name`` whose every observation carries its TypeSpec's repr."""
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
        cause = f"{where}'s element spec changes ({len(specs)} distinct specs" + (
            f"; {varying_text(sorted(dims))})" if dims else ")"
        )
    total = sum(c for _, c in observations)
    return Leaf(
        blocker=f"{where} is a {name}: TensorFlow traces it by its element spec, which a "
        "signature cannot name",
        evidence=[f"{name}, {plural(total, 'call')}, {plural(len(specs), 'distinct spec')}"],
        cause=cause,
        variety=len(specs),
        dims=frozenset(dims),
    )


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


# -- one parameter -------------------------------------------------------------------


@dataclass
class InferOptions:
    """How inference relaxes shapes and which parameters it must keep as Python values."""

    relax: str = "auto"
    """Shape policy: auto (free a constant dim where no static read of it is found), none
    (keep constant dims), batch (free dim 0), all (free every dim)."""
    overrides: Callable[[str, str, str | None], str] | None = None
    """(path, qualname, param|None) -> relax policy; e.g. ``Config.relax_for``."""
    force_python: frozenset[tuple[str, str, str]] = frozenset()
    """(path, qualname, param) never tensorized (the verifier's fallback)."""
    try_uncertain: bool = False
    """Tensorize Python numbers and strings whose uses the analysis cannot decide, as an
    unsafe fix (``fix --verify --unsafe-fixes``: verification then keeps or drops them;
    ``analysis.python_values.NumberUses.undecided``)."""
    root: Path | None = None
    """The profile's project root: where the shape-use analysis finds imported modules."""
    guarded_trace: bool = True
    """False: an ``input_signature`` also where nothing shows the domain
    (``autosig.infer.guarded_trace``; the caller knows the domain)."""
    unsafe_fixes: bool = False
    """``fix --unsafe-fixes``: a signature nothing shows the domain of is planned (unsafe)
    rather than its safe default (``guarded_trace.settle``)."""

    @classmethod
    def from_config(
        cls,
        config: Config,
        root: Path,
        relax: str | None = None,
        force_python: Iterable[tuple[str, str, str]] = (),
    ) -> InferOptions:
        """The shape policy ``fix``, ``explain`` and ``verify`` all plan with.

        A parameter's or function's ``[tool.autosig.functions]`` override, else
        ``relax`` (``fix --relax``), else the config's ``relax``. Profile paths are
        relative to ``root`` (the profile's project root), whatever the working
        directory.
        """
        default = (relax or config.relax).lower()

        def overrides(path: str, qualname: str, param: str | None) -> str:
            absolute = Path(path) if Path(path).is_absolute() else root / path
            return config.relax_for(absolute, qualname, param, default=default)

        return cls(
            relax=default, overrides=overrides, force_python=frozenset(force_python), root=root
        )

    def relax_for(self, path: str, qualname: str, param: str | None) -> str:
        policy = self.overrides(path, qualname, param) if self.overrides else self.relax
        if policy not in RELAX_POLICIES:
            raise AutosigError(
                f"unknown relax policy {policy!r} for {qualname} "
                f"(expected one of: {', '.join(RELAX_POLICIES)})",
                path or None,
            )
        return policy


@dataclass
class ParamResult:
    info: ParamInfo
    leaf: Leaf
    needed: bool
    """Must be in the signature: varied, passed a non-default value, or has no default."""
    evidence: str
    blocker: Blocker | None = None
    """Why the parameter cannot have a spec (it is a reason of the plan if it must have one)."""
    spec: SpecNode | None = None
    python_uses: list[PythonUse] = field(default_factory=list)
    relax: str = "auto"
    """The shape policy this parameter was inferred with (``auto``: decided later)."""
    tried: list[PythonUse] = field(default_factory=list)
    """Uses the analysis could not decide, for a parameter tensorized on trial."""
    warning: str | None = None
    """Why its spec makes the fix unsafe (a returned string becomes a bytes tensor)."""
    probe_reason: str | None = None
    """What the probes showed about this Python number's spec (for the plan's reasons)."""


def analyze_param(
    record: FunctionRecord, info: ParamInfo, recorded: Recorded | None, options: InferOptions
) -> ParamResult:
    """What the recorded calls say about parameter ``info`` of ``record`` (``recorded``:
    its values, ``value_tree.walk_calls``; None: no call signature has it)."""
    obs = recorded.seen if recorded is not None else []
    path = record.path or ""
    where = f"`{info.name}`"
    if info.kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
        star = "*" if info.kind == "VAR_POSITIONAL" else "**"
        used = [v for v, _, _ in obs if not _empty(v)]
        leaf = Leaf(evidence=["always empty" if not used else "receives arguments"])
        result = ParamResult(info, leaf, needed=False, evidence=leaf.evidence[0])
        if used:
            result.blocker = Blocker.stated(
                info.name,
                "parameter",
                f"`{star}{info.name}`",
                f"receives arguments: input_signature cannot describe {star}{info.name}",
            )
            leaf.cause = f"`{star}{info.name}` varies"
        return result
    relax = options.relax_for(path, record.qualname, info.name)
    if record.signatures_dropped:
        relax = "all"  # calls we did not see may have other sizes in any dimension
    leaf = infer_leaf(recorded.place, where, relax, nested=False) if recorded else Leaf()
    all_default = bool(obs) and all(_is_default(info, v, p) for v, _, p in obs)
    needed = not all_default
    evidence = "; ".join(leaf.evidence) or "no calls recorded"
    if all_default:
        evidence = f"always its default ({evidence})"
    result = ParamResult(info, leaf, needed=needed, evidence=evidence, relax=relax)
    if info.kind == "KEYWORD_ONLY" and needed:
        result.blocker = Blocker.stated(
            info.name,
            "parameter",
            f"keyword-only {where}",
            "is passed values other than its default: TensorFlow's "
            "input_signature cannot cover keyword-only parameters",
        )
    elif leaf.blocker:
        predicate = leaf.blocker.removeprefix(where).strip()
        result.blocker = Blocker(info.name, leaf.blocker_kind, leaf.blocker, predicate)
    elif not obs:
        result.blocker = Blocker.stated(
            info.name, "parameter", where, "was never seen in a recorded call"
        )
    elif (path, record.qualname, info.name) in options.force_python and (
        leaf.python is not None or needed
    ):
        result.blocker = Blocker.stated(
            info.name, "parameter", where, "is kept as a Python value (verification fallback)"
        )
    elif leaf.spec is not None:
        result.spec = leaf.spec
    return result


def _is_default(info: ParamInfo, value: Value, passed: str) -> bool:
    return passed == "default" or (
        info.default is not None and value_key(value) == value_key(info.default)
    )


def _empty(value: Value) -> bool:
    return (
        value.get("kind") in ("tuple", "dict", "list")
        and not value.get("items")
        and "length" not in value
    )


def main_cause(results: list[ParamResult]) -> str | None:
    """The cause of the parameter that took the most distinct forms (None: no cause known)."""
    causes = [(r.leaf.variety, r.leaf.cause) for r in results if r.leaf.cause]
    if not causes:
        return None
    causes.sort(key=lambda c: -c[0])
    text = str(causes[0][1])
    if len(causes) > 1:
        text += f" (and {len(causes) - 1} more)"
    return text

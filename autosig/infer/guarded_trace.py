"""Signature or guarded relaxed trace: which one a function gets, and why.

An ``input_signature`` rejects what does not fit its specs (another dtype, rank, list
length or dict key; a parameter it leaves out) and casts float64 NumPy arrays to
float32. That is right where the domain is known; a short profile (fewer than
``MIN_CALLS_FOR_DEFAULTS`` calls) does not show it: one dtype, one rank, one list
length, a float32 instance of a class whose next instance is float64, a trailing
parameter never passed. There the plan writes a *guarded relaxed trace* instead:
``f.get_concrete_function(<specs>)`` once, after the objects the function reads exist
(``guarded_trace_placement``). Measured on TF 2.21 (``scripts/measure_guarded_trace.py``):
later calls that fit the specs reuse that trace; every other call (float64 tensors or
NumPy arrays, Python floats, another rank, another structure) traces anew exactly as
the original would. It never rejects or converts what the original accepted.

It is not written (the signature stays, its narrowing said in the reasons) where it
cannot help or cannot be placed safely:

- a Python number or string in the signature: each value traces anew either way;
- the shape reads rewritten to ``tf.shape()``, or a distributed dataset's element spec;
- stateful random ops (static table or the probes' graphs, first-call initializers
  included): a trace at import runs before the program's ``tf.random.set_seed``, and
  tracing fewer times changes the streams;
- variables created on the first call (the profile saw TensorFlow trace that call
  again): the seeding trace would be the one creating them, with its relaxed shapes,
  and one that fails counts as the first call: every later call then raises "Creating
  variables on a non-first call" (measured: ``seeding_a_lazily_built_model``);
- Python state the project changes that the trace reads (``analysis/trace_state.py``);
- a shape policy set in the config for the function (the user asked for a signature);
- no placement (``guarded_trace_placement``).

A module-level seeding call that would be the import's first TensorFlow work (the module
creates no tensor or variable of its own at import) starts the runtime there: the fix is
then *unsafe* (``tf.config`` thread and device settings after the import raise), as a
module-level model build is (``analysis/model_build.py``).

Dimensions: a dimension that varied keeps the plan's ``None`` (the same shape-use
analysis and probes judged it); one that never varied is ``None`` only when the probes
found it free or bounded, otherwise it keeps its size: a call with another size then
traces anew, as the original would, at no cost to the domain.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator

import libcst as cst

from autosig.analysis.model_build import runtime_started
from autosig.infer.action import COVERS, Decision
from autosig.infer.dimensions import ShapeDecision
from autosig.infer.domain_evidence import asked, narrowing_text
from autosig.infer.guarded_trace_placement import NoPlacement, Placement, Seeded, place_seeding
from autosig.infer.observations import InferOptions, ParamResult
from autosig.infer.observed import Observed
from autosig.infer.plan import Action, GuardedTrace
from autosig.infer.specs import (
    DictNode,
    ElementSpecNode,
    ListNode,
    RaggedSpecNode,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    TupleNode,
    render_spec,
)
from autosig.profile.format import FunctionRecord
from autosig.source.discover import FunctionSite, Source
from autosig.source.metadata import MetadataView

RUNTIME_REASON = (
    "the seeding trace is the module's first TensorFlow work at import: it starts the "
    "runtime, and `tf.config` threading or device settings made after the import then "
    "raise (measured: device_config_after_seeding)"
)
PROVEN_FREE = ("free", "bounded")


@dataclasses.dataclass(frozen=True)
class GuardedChoice:
    """The planner's answer: write the guarded trace (``guarded``), or keep the
    signature and say why (``kept``: a reason for the plan; empty when the domain is
    known and nothing needs saying)."""

    guarded: GuardedTrace | None
    specs: dict[str, SpecNode]
    """The specs of the seeding call, by parameter (dimensions pinned where unproven)."""
    kept: str = ""
    unsafe: str | None = None
    """Why writing it may change behaviour (the plan's warning), else None."""
    shown: str = ""
    """What shows the domain, where the signature is the fix (``domain_evidence``)."""
    refusal: str = ""
    """Why no guarded trace, alone (``kept`` says it after what the signature narrows)."""


@dataclasses.dataclass(frozen=True)
class GuardedFacts:
    """What the choice reads of the domain evidence (asked by the stages before this
    one), the profile and the file, gathered once per function (``gather``): the first
    choice (``decide``) and the paired trace's (``paired_trace.pair``) read it."""

    signed: list[ParamResult]
    """The parameters a signature would hold."""
    shown: str | None
    """What shows the domain (``domain_evidence``), or None."""
    why_not: str
    """Why nothing shows it (with ``shown`` None)."""
    creates_variables: bool
    """The first call creates variables (``Observed.first_call_variables``)."""
    seen: dict[str, dict[str, set]]
    """The tensor shapes the profile saw, by parameter (``Observed.shapes``)."""
    source: Source = dataclasses.field(repr=False)
    site: FunctionSite = dataclasses.field(repr=False)

    @functools.cached_property
    def placement(self) -> Placement | NoPlacement | Seeded | None:
        """Where a seeding call goes in the function's own file (None: not in a file),
        asked only when a choice needs it: a placement is a pass over the whole file."""
        if self.site.function is None:
            return None
        assert self.source.wrapper is not None
        return place_seeding(MetadataView(self.source.wrapper), self.site.function)

    @functools.cached_property
    def runtime_started(self) -> bool:
        """The module starts TensorFlow's runtime at import anyway (asked for a
        module-level placement)."""
        assert self.source.wrapper is not None
        return runtime_started(MetadataView(self.source.wrapper))


def gather(
    source: Source,
    site: FunctionSite,
    observed: Observed,
    decision: Decision,
    domain: tuple[str | None, str] | None,
) -> GuardedFacts | None:
    """The facts of the choice, or None where no signature is planned at all (no
    guarded trace to choose). ``domain``: ``domain_evidence.evidence`` of the signed
    parameters, asked by the planner where the signature narrows nothing it knows of
    (None: not asked)."""
    if not decision.narrowing and decision.action != "signature":
        return None
    signed = [r for r in observed.results if r.info.name in decision.signed]
    shown, why_not = domain if domain is not None else (None, "")
    creates = observed.first_call_variables[0]
    seen = observed.shapes
    return GuardedFacts(signed, shown, why_not, creates, seen, source, site)


def domain_unknown(facts: GuardedFacts, decision: Decision) -> str | None:
    """Why a signature would narrow what the original accepts with nothing showing the
    calls stay within it, or None (evidence shows the domain: keep the signature;
    ``domain_evidence``)."""
    if decision.narrowing:
        return "; ".join(decision.narrowing)
    if facts.shown is not None:
        return None
    return (
        f"{narrowing_text(facts.signed)}; nothing shows the calls stay within it ({facts.why_not})"
    )


@dataclasses.dataclass(frozen=True)
class Guarded:
    """The stage's answer (``decide``): the function's action and reasons with or without
    a guarded trace."""

    action: Action
    reasons: list[str]
    guarded: GuardedTrace | None = None
    unsafe: str | None = None
    """Why the guarded trace may change behaviour (the plan's warning)."""
    narrowed: str | None = None
    """With an unsafe signature: what it narrows (the plan's warning)."""
    signature_kept_out: bool = False
    """A signature was planned but not written, nothing showing its domain: the call
    sites may pass its Python numbers as tensors instead (``call_site_plan``)."""
    facts: GuardedFacts | None = None
    """What the choice read (None: the guarded trace is off, or no signature planned)."""


def decide(
    record: FunctionRecord,
    source: Source,
    site: FunctionSite,
    observed: Observed,
    decision: Decision,
    shapes: ShapeDecision,
    options: InferOptions,
    domain: tuple[str | None, str] | None = None,
) -> Guarded:
    """The guarded-trace stage: where a signature would narrow what the original accepts
    with nothing showing the domain (``domain``: what ``domain_evidence`` found, asked
    where ``decision`` is a signature narrowing nothing it knows of), the guarded trace
    (its specs set on ``observed.results``), or what ``settle`` keeps instead; else
    ``decision``'s action and reasons."""
    facts = None
    if options.guarded_trace:
        facts = gather(source, site, observed, decision, domain)
    choice = choose(facts, record, site, decision, shapes) if facts is not None else None
    reasons = decision.reasons
    if choice is None:
        return Guarded(decision.action, reasons, facts=facts)
    guarded = choice.guarded
    if guarded is None:  # a signature with evidence of the domain, or not safe
        settled = settle(choice, decision, reasons, shapes, site, options.unsafe_fixes, record)
        kept_out = bool(choice.kept) and decision.action == "signature"
        return Guarded(
            settled.action, settled.reasons, None, None, settled.narrowed, kept_out, facts
        )
    for r in observed.results:
        r.spec = choice.specs.get(r.info.name)
    own = set(decision.narrowing)  # the signature's words, not the guarded trace's
    reasons = [
        f"{trace_reason(choice)}: calls that fit reuse it, every other call traces as "
        "the original would (nothing rejected or cast)",
        *(r for r in reasons if r not in own and not r.startswith(COVERS)),
    ]
    return Guarded("guarded_trace", reasons, guarded, choice.unsafe, facts=facts)


def trace_reason(choice: GuardedChoice) -> str:
    """How the plan's reason for a written guarded trace starts: why not a signature,
    and the one trace of which specs, where."""
    guarded = choice.guarded
    assert guarded is not None
    shown = ", ".join(f"{name}: {render_spec(spec)}" for name, spec in choice.specs.items())
    return (
        f"guarded relaxed trace, not an input_signature: {guarded.why}; one trace of "
        f"({shown}) {guarded.where}"
    )


def choose(
    facts: GuardedFacts,
    record: FunctionRecord,
    site: FunctionSite,
    decision: Decision,
    shapes: ShapeDecision,
    tensorized: frozenset[str] = frozenset(),
    at_instances: bool = False,
) -> GuardedChoice | None:
    """The guarded trace for a function whose signature would narrow the domain, or why
    it cannot be written (``kept``); with evidence of the domain (the signature is the
    fix), a choice saying it (``shown``); None when no signature is planned at all.
    ``tensorized``: Python numbers the call sites will pass as tensors (``call_site_plan``):
    their scalar specs seed the trace like the tensors' (``paired_trace.pair``).
    ``at_instances``: a method seeded in its callers' files, after each recorded call's
    instance is made (``paired_trace``; found there by ``analysis/instance_bindings``),
    so no place in its own file is needed."""
    why = domain_unknown(facts, decision)
    if why is None:
        if decision.action != "signature":
            return None
        return GuardedChoice(None, {}, shown=facts.shown or "")
    signed = facts.signed
    refusal = _refusal(record, facts, shapes, tensorized)
    placement = None  # a pass over the whole file: asked only where it decides
    if refusal is None and at_instances:
        refusal = _not_outermost(site)
    elif refusal is None:
        placement = facts.placement
        assert placement is not None
        if isinstance(placement, NoPlacement):
            refusal = f"no place for the seeding call: {placement.reason}"
        else:
            refusal = _not_outermost(site)
    if refusal is not None:
        return GuardedChoice(
            None, {}, kept=f"{why}; no guarded relaxed trace: {refusal}", refusal=refusal
        )
    specs = {r.info.name: _pinned(record, facts, r) for r in signed}
    if at_instances:
        guarded = GuardedTrace(
            why=why, where=INSTANCES_WHERE, params=tuple(specs), at_instances=True
        )
        return GuardedChoice(guarded, specs)
    assert placement is not None
    where = (
        placement.describe()
        if isinstance(placement, Placement)
        else f"already in the file (line {placement.line})"  # type: ignore[union-attr]
    )
    unsafe = None
    if isinstance(placement, Placement) and placement.init is None:
        if not facts.runtime_started:
            if not shapes.use.state_reads:
                # not placed: the safe default (``settle``) applies instead
                return GuardedChoice(
                    None,
                    {},
                    kept=f"{why}; no guarded relaxed trace: {RUNTIME_REASON}",
                    refusal=RUNTIME_REASON,
                )
            # it reads Python state at trace time, which code outside the project may
            # change (issue 22): any fix that traces less keeps the first value, so only
            # the unsafe guarded trace is offered (measured: reduce_retracing there broke
            # 2 contract programs of class 22)
            unsafe = RUNTIME_REASON
    guarded = GuardedTrace(why=why, where=where, params=tuple(specs), line=placement.line)
    return GuardedChoice(guarded, specs, unsafe=unsafe)


INSTANCES_WHERE = (
    "in the callers' files, right after the statement making each recorded call's "
    "instance (nothing touches it before that call)"
)


def _not_outermost(site: FunctionSite) -> str | None:
    if site.decorator is None:
        return "the tf.function is not a decorator of its def"
    if not outermost(site):
        return (
            "tf.function is not its outermost decorator: the name the seeding call "
            "goes through is the wrapper's, which has no get_concrete_function"
        )
    return None


UNSAFE_OFFER = (
    "the input_signature is an unsafe fix here (`autosig fix --unsafe-fixes` writes it, "
    "as does a shape policy for the function in the config)"
)


@dataclasses.dataclass(frozen=True)
class Settled:
    """The planner's action where no guarded trace is written (``settle``)."""

    action: Action
    reasons: list[str]
    narrowed: str | None = None
    """With an unsafe signature: what it narrows (the plan's warning)."""


def settle(
    choice: GuardedChoice,
    decision: Decision,
    reasons: list[str],
    shapes: ShapeDecision,
    site: FunctionSite,
    unsafe_fixes: bool,
    record: FunctionRecord | None = None,
) -> Settled:
    """The action and reasons where ``choice`` wrote no guarded trace.

    A signature with evidence of the domain stays (its evidence said). A signature
    without it is offered as an unsafe fix, its warning naming what it narrows; the safe
    default is ``reduce_retracing=True`` where a tensor shape varied (TensorFlow's own
    relaxation traces anew whatever does not fit, it rejects nothing), else nothing.
    It is not safe either (then only the unsafe offer) where a dimension is read: a
    definite static read, a dimension the probes of ``record`` found read or whose
    relaxed trace failed (reduce_retracing relaxes any dimension a later call changes,
    not only the ones that varied); or where the trace reads Python state (tracing fewer
    times keeps the value an older trace read, ``analysis/trace_state.py``).
    A decision that is not a signature (a parameter a signature would leave out) stays.
    """
    if choice.shown:
        return Settled(decision.action, [*reasons, f"the domain: {choice.shown}"])
    if not choice.kept:
        return Settled(decision.action, reasons)
    if decision.action != "signature":
        return Settled(decision.action, [*reasons, f"no input_signature: {choice.kept}"])
    if unsafe_fixes:
        return Settled(
            "signature", reasons, f"the input_signature narrows the domain: {choice.kept}"
        )
    offer = f"{UNSAFE_OFFER}: {choice.kept}"
    blocked = [*shapes.reduce_retracing_blockers, *probe_read_blockers(record, shapes)]
    blocked.extend(state_blockers(shapes))
    if site.site.has_reduce_retracing:
        return Settled("none", ["already has reduce_retracing=True", offer])
    if not shapes.shape_varies:
        return Settled("none", [offer, NO_SHAPE_VARIED])
    if blocked:
        return Settled("none", [offer, *blocked])
    rest = [r for r in reasons if not r.startswith(COVERS) and " left out: " not in r]
    return Settled("reduce_retracing", [offer, REDUCE_RETRACING_SAFE, *rest])


def probe_read_blockers(record: FunctionRecord | None, shapes: ShapeDecision) -> list[str]:
    """The dimensions the probes found read (or whose relaxed trace failed): a later call
    with another size there makes reduce_retracing relax it, and that trace breaks (or
    builds another graph). Where static reads are rewritten to ``tf.shape()`` the probes
    traced the code before the rewrite: the static rules decide (as in ``dimensions``)."""
    out = list(shapes.relaxed_warnings)
    probe = record.probe if record is not None else None
    if probe is None or shapes.rewrites:
        return out
    for d in probe.dims:
        if d.varied:
            continue  # a dimension that varied: ``dimensions`` judged it (blockers, warnings)
        if d.verdict == "read" or (d.verdict != "fixed" and d.relaxed_builds is False):
            why = d.reason or d.error or "the graph changes with its size"
            where = f", {d.where}" if d.where else ""
            out.append(
                f"reduce_retracing=True would relax `{d.param}` dimension {d.dim} when a "
                f"call changes it, and the probes found it read ({why}{where})"
            )
    return out


def state_blockers(shapes: ShapeDecision) -> list[str]:
    """Python state read while tracing: with reduce_retracing a relaxed trace serves later
    calls and keeps the value it read, where the original traced anew and read it again.
    Blocked: state the project changes (``state_reason``), and a global read through
    another module (``config.SCALE``, ``hparams.X``): a settings module that code outside
    the project (a harness, a notebook) sets between calls, where no project write shows
    it (review21 p11). Not blocked: the function's own module globals and ``self``
    attributes the project never changes (weights, a kernel, a model: cases 07, 13, 14,
    23 keep reduce_retracing)."""
    if shapes.state_reason:
        return [f"reduce_retracing=True is not safe: {shapes.state_reason}"]
    reads = [r for r in shapes.use.state_reads if r.kind == "global" and "." in r.code]
    if not reads:
        return []
    shown = ", ".join(r.describe() for r in reads[:2])
    return [
        f"reduce_retracing=True is not safe: it reads Python state while tracing ({shown}): "
        "a relaxed trace keeps the value it read, where the original traced anew and read "
        "it again, and code outside the project may change it"
    ]


NO_SHAPE_VARIED = (
    "reduce_retracing=True would not help: no tensor shape varied (only dtypes, Python "
    "values or structures)"
)
REDUCE_RETRACING_SAFE = (
    "reduce_retracing=True instead: TensorFlow relaxes the shapes that varied and traces "
    "anew every call that does not fit, rejecting and casting nothing"
)


def outermost(site: FunctionSite) -> bool:
    """``site``'s tf.function is the first (outermost) decorator of its def."""
    function = site.function
    return (
        isinstance(function, cst.FunctionDef)
        and bool(function.decorators)
        and function.decorators[0] is site.decorator
    )


def _refusal(
    record: FunctionRecord,
    facts: GuardedFacts,
    shapes: ShapeDecision,
    tensorized: frozenset[str] = frozenset(),
) -> str | None:
    """Why the guarded trace cannot help or is not safe here (None: it may be written)."""
    signed = facts.signed
    if not signed:
        return "no tensor parameter to seed"
    missing = [r.info.name for r in signed if r.spec is None]
    if missing:
        return f"`{missing[0]}` has no spec"
    numbers = [
        r.info.name for r in signed if r.leaf.python is not None and r.info.name not in tensorized
    ]
    if numbers:
        return (
            f"`{numbers[0]}` is a Python value in the calls: each value traces anew "
            "with or without a seeding trace"
        )
    if any(_has(r.spec, ElementSpecNode) for r in signed):
        return "a distributed dataset's element spec is the signature"
    if shapes.rewrites:
        return "static shape reads are rewritten to tf.shape() with a signature"
    if shapes.random_reason:
        return "it draws stateful random numbers: a trace at import runs before the program seeds"
    random = record.probe.random if record.probe is not None else None
    if random is not None and (random.hidden or random.first_call_only):
        ops = ", ".join(dict.fromkeys([*random.hidden, *random.first_call_only]))
        return (
            f"the probes found stateful random ops ({ops}): a trace at import runs before "
            "the program seeds"
        )
    if facts.creates_variables:
        return (
            "its first call creates variables (TensorFlow traced it again): the seeding "
            "trace would create them with relaxed shapes"
        )
    if shapes.state_reason:
        return f"it reads Python state the project changes ({shapes.state_reason})"
    if shapes.relaxed_warnings:
        return "a relaxed dimension is read (the probes saw another graph at another size)"
    policies = asked(signed)
    if policies:
        return f"the config sets its shape policy ({', '.join(policies)}): a signature"
    return None


def _has(spec: SpecNode | None, kind: type) -> bool:
    return any(isinstance(node, kind) for node in _nodes(spec))


def _nodes(spec: SpecNode | None) -> Iterator[SpecNode]:
    if spec is None:
        return
    yield spec
    if isinstance(spec, (TupleNode, ListNode)):
        for item in spec.items:
            yield from _nodes(item)
    elif isinstance(spec, DictNode):
        for _, item in spec.items:
            yield from _nodes(item)


def _pinned(record: FunctionRecord, facts: GuardedFacts, r: ParamResult) -> SpecNode:
    """``r``'s spec with every dimension that never varied and that the probes did not
    find free kept at its size."""
    assert r.spec is not None
    seen = facts.seen.get(r.info.name, {})
    name = r.info.name

    def walk(node: SpecNode, path: str, inner: str) -> SpecNode:
        if isinstance(node, (TensorSpecNode, RaggedSpecNode, SparseSpecNode)):
            return _pin_leaf(record, node, path, seen.get(inner, set()))
        if isinstance(node, TupleNode):
            return TupleNode(
                tuple(walk(i, f"{path}[{k}]", f"{inner}[{k}]") for k, i in enumerate(node.items))
            )
        if isinstance(node, ListNode):
            return ListNode(
                tuple(walk(i, f"{path}[{k}]", f"{inner}[{k}]") for k, i in enumerate(node.items))
            )
        if isinstance(node, DictNode):
            return DictNode(
                tuple((k, walk(v, f"{path}[{k!r}]", f"{inner}[{k!r}]")) for k, v in node.items)
            )
        return node

    return walk(r.spec, name, "")


def _pin_leaf(record: FunctionRecord, node, path: str, shapes: set) -> SpecNode:  # noqa: ANN001
    shape = node.shape
    if shape is None or not shapes or any(s is None or len(s) != len(shape) for s in shapes):
        return node
    new = list(shape)
    for dim, size in enumerate(shape):
        if size is not None:
            continue
        sizes = {s[dim] for s in shapes}
        if len(sizes) != 1 or None in sizes:
            continue  # it varied: the plan's None stays
        evidence = record.probe.dim(path, dim) if record.probe is not None else None
        if evidence is not None and evidence.verdict in PROVEN_FREE:
            continue
        if isinstance(node, RaggedSpecNode) and dim > 0:
            continue  # a ragged dimension's size is per row
        new[dim] = next(iter(sizes))
    return dataclasses.replace(node, shape=tuple(new))

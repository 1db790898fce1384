"""From a function's per-parameter results and its current source to its plan.

Checks come first, in the order a user would want them explained: source available,
function still there, unchanged since profiling, not already signed, retraced at all;
only then are its parameters analysed (``observations``) and judged against its code:

- which Python numbers may become scalar tensors (the Python-value analysis);
- which dimensions a signature may leave free (the shape-use analysis): one that never
  varied is at risk when a later call could bring another size the original handled
  (the batch dimension, any dimension of a method's argument, any dimension seen in only
  a few calls); it is freed only when no static read of it is found, else kept fixed and
  the fix is *unsafe*; one that varied but is read statically forbids both a signature
  and ``reduce_retracing``; a read that steers control flow forbids any free dimension;
- the action: an ``input_signature`` covering the positional parameters up to the last
  one that must be in it, ``reduce_retracing=True`` when a parameter blocks that, or
  nothing (one trace per instance or process, identical arguments, library code, for
  which the caller gets advice instead);
- the AS2xx findings that say why the function retraced.

One module, because these are the steps of one decision made in order on the same
``ParamResult`` list (each step narrows what the next may do), and every step's words
end up in the same plan's reasons; apart, each step only made sense with the others.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from autosig.analysis.dataset_elements import dataset_of_calls
from autosig.analysis.python_values import (
    RETURNED_STRING,
    PythonUse,
    python_only_uses,
    required_dtypes,
)
from autosig.analysis.shape_reads import (
    ShapeRead,
    ShapeUse,
    autograph_enabled,
    callee_reads_dim,
    shape_use,
)
from autosig.errors import AutosigError
from autosig.infer.observations import InferOptions, ParamResult, analyze_param
from autosig.infer.plan import (
    Action,
    Blocker,
    CallSitePlan,
    FunctionPlan,
    ParamPlan,
    Plan,
    ShapeRewrite,
    TensorizedParam,
    constant_text,
    sites_text,
)
from autosig.infer.shape_rewrites import choose_rewrites
from autosig.infer.specs import (
    DictNode,
    ElementSpecNode,
    ListNode,
    RaggedSpecNode,
    Shape,
    SparseSpecNode,
    SpecNode,
    TensorSpecNode,
    TupleNode,
)
from autosig.profile.describe_distributed import distributed_params, replicas_of
from autosig.profile.format import TENSOR_KINDS, FunctionRecord, Profile, Value
from autosig.source.discover import FunctionSite, discover_text
from autosig.source.hashing import source_hash_from_file_text
from autosig.source.project_modules import ModuleResolver, ProjectModules
from autosig.source.sites import Finding
from autosig.source.suppress import Suppressions
from autosig.text import plural

# --- strings ---------------------------------------------------------------
# A string parameter that is also returned: a ``tf.string`` spec only as an unsafe fix.
#
# A path string used only by TensorFlow ops (``tf.io.write_file(path, ...)``) takes a
# ``tf.TensorSpec([], tf.string)`` safely. When the function also returns it, callers
# get a scalar ``bytes`` tensor where they got a ``str``: their comparisons, formatting
# and ``os.path`` calls change. That is still what most users want (one trace instead of
# one per path), so it is offered as an unsafe fix whose warning says exactly that.


def returned_only(uses: Sequence[PythonUse]) -> bool:
    """The parameter's only uses that need a Python value are returning it."""
    return bool(uses) and all(use.why == RETURNED_STRING for use in uses)


def returned_warning(name: str, uses: Sequence[PythonUse]) -> str:
    """The unsafe fix's warning: the return type changes."""
    return (
        f"`{name}` is returned (`{uses[0].code}`, line {uses[0].line}): with a tf.string "
        "spec the function returns a scalar bytes tensor where it returned a str"
    )


# --- uncertain -------------------------------------------------------------
# Python-value parameters the analysis cannot decide, and what ``fix --verify`` does.
#
# Most uses that keep a parameter a Python value are certain (``range(n)``, an f-string,
# ``axis=n``). Some are not: a call autosig cannot follow, an argument it does not know,
# an index into something it cannot tell from a tensor. A wrong guess there fails loudly
# or changes outputs, both of which verification sees. So ``fix --verify
# --unsafe-fixes`` tries such a parameter as a scalar tensor and keeps it only when the
# rewritten program verifies on the profiled calls; without them the report says that
# they could settle it. The fix is unsafe: the profiled calls are evidence, not a proof
# that every other value the original accepts behaves the same (``mylib.pick(x, k)``
# may branch on ``k`` in a way no profiled value reached).


def undecided(uses: Sequence[PythonUse], optimistic: Sequence[PythonUse]) -> bool:
    """The analysis cannot decide whether the parameter must stay a Python value.

    ``uses``: what the analysis found; ``optimistic``: what it finds when everything it
    cannot decide is assumed to be a tensor (``x * table[k]`` then no longer mixes a
    Python int into a float tensor). Undecided: some use is uncertain, and under that
    assumption no certain one is left.
    """
    return any(not use.certain for use in uses) and all(not use.certain for use in optimistic)


def settle_hint(name: str) -> str:
    """Appended to the blocker of an undecided parameter when not trying it."""
    return (
        "; the analysis cannot decide, and `autosig fix --verify --unsafe-fixes` could "
        f"settle it (it tries `{name}` as a tensor and keeps that only if verification "
        "passes on the profiled calls, an unsafe fix: evidence, not proof)"
    )


def tried_reason(name: str, uses: Sequence[PythonUse]) -> str:
    """The plan's reason for a parameter tensorized on trial (``fix --verify``)."""
    return (
        f"`{name}` tried as a tensor although the analysis cannot decide "
        f"({uses[0].describe()}): kept only if verification passes on the profiled calls"
    )


def tried_warning(name: str) -> str:
    """Why a parameter tensorized on trial makes the fix unsafe."""
    return (
        f"`{name}` is a tensor on trial: verification on the profiled calls is evidence, "
        "not a proof that every other value behaves the same"
    )


# -- entry points --------------------------------------------------------------------


STALE_REASON = "changed since it was profiled (re-run autosig profile)"


SIGNED_REASON = "already has an input_signature"


def infer_plan(
    profile: Profile, sources: Mapping[str, str], options: InferOptions | None = None
) -> Plan:
    """A plan for every profiled function whose file is in ``sources`` (path -> text).

    Library functions (not editable) are always planned, as "none" with advice, so the
    report can show them.
    """
    options = options or InferOptions()
    parsed: dict[str, Source] = {}
    modules: dict[str, ProjectModules | None] = {}
    """Per file: the project modules its functions call into, parsed once for all of them."""
    plan = Plan()
    for record in profile.functions:
        if not record.editable:
            plan.functions.append(library_plan(record, options))
            continue
        if record.path is None or record.path not in sources:
            continue
        source = parsed.get(record.path)
        if source is None:
            source = parsed[record.path] = Source.parse(sources[record.path], record.path)
            modules[record.path] = _project_modules(options, record.path)
        plan.functions.append(_plan_function(record, source, options, modules[record.path]))
    return plan


def infer_function(
    record: FunctionRecord, source_text: str | None, options: InferOptions
) -> FunctionPlan:
    """The plan of one function given the current text of its file (None: not available)."""
    if not record.editable:
        return library_plan(record, options)
    source = None if source_text is None else Source.parse(source_text, record.path or "")
    return _plan_function(record, source, options, _project_modules(options, record.path))


def _project_modules(options: InferOptions, path: str | None) -> ProjectModules | None:
    """Where a file's imported project modules are found: beside it, above it, the root."""
    if options.root is None or not path:
        return None
    return ProjectModules.around(options.root / path, options.root)


def _plan_function(
    record: FunctionRecord,
    source: Source | None,
    options: InferOptions,
    modules: ProjectModules | None,
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

    results = [analyze_param(record, info, options) for info in record.params]
    once = traced_once(record)
    if record.calls <= 1 or once is not None:
        reason = "called once; nothing to fix" if record.calls <= 1 else str(once)
        params = tuple(ParamPlan(r.info.name, None, r.evidence) for r in results)
        return FunctionPlan(action="none", params=params, reasons=(reason,), **base)

    decide_python_params(source, site, results, modules, options.try_uncertain)
    policies = {r.info.name: r.relax for r in results}
    shapes = decide_shapes(source, site, record, results, policies, modules)
    distributed = plan_distributed(source, site, record, results, shapes.use)
    decision = decide_action(record, site, results, shapes)
    action, reasons = decision.action, decision.reasons
    if distributed is not None:
        reasons.append(distributed.reason)
    call_sites, call_reasons = plan_call_sites(record, results, action)
    reasons.extend(call_reasons)
    params = tuple(
        ParamPlan(r.info.name, r.spec if r.info.name in decision.signed else None, r.evidence)
        for r in results
    )
    warnings: list[str] = []
    tried = [r for r in results if r.tried and r.info.name in decision.signed]
    if action == "signature":
        reasons.extend(tried_reason(r.info.name, r.tried) for r in tried)
        warnings.extend(r.warning for r in results if r.warning and r.info.name in decision.signed)
        warnings.extend(shapes.warnings)
        if shapes.relaxed:
            reasons.append(
                "None where no static read was found (batch, method or short-profile "
                f"dimensions that never varied): {', '.join(shapes.relaxed)}"
            )
    tensorized = {p.name for p in call_sites.params} if call_sites is not None else set()
    if tensorized:
        reasons.extend(
            tried_reason(r.info.name, r.tried)
            for r in results
            if r.tried and r.info.name in tensorized
        )
        warnings.extend(r.warning for r in results if r.warning and r.info.name in tensorized)
    if (action != "none" or call_sites is not None) and shapes.random_reason:
        warnings.append(shapes.random_reason)
    rewrites = tuple(shapes.rewrites) if action != "none" else ()
    if rewrites:
        reasons.append(
            "static shape reads rewritten to tf.shape() so their dimensions can be None: "
            + "; ".join(r.describe() for r in rewrites)
        )
    findings = function_findings(record, site, source, results, action, reasons, tensorized)
    return FunctionPlan(
        action=action,
        params=params,
        reasons=tuple(reasons) + tuple(f"unsafe: {w}" for w in warnings),
        blockers=tuple(decision.blockers),
        findings=tuple(findings),
        safety="unsafe" if warnings else "safe",
        warnings=tuple(warnings),
        tried=tuple(r.info.name for r in tried) if action == "signature" else (),
        shape_rewrites=rewrites,
        call_sites=call_sites,
        **base,
    )


# --- distributed inputs ---------------------------------------------------------
# A step that takes elements of a distributed dataset: ``input_signature=[D.element_spec]``.
#
# A ``tf.function`` called with ``PerReplica`` batches (``for x in dist_dataset:
# step(x)``) retraces for every new per-replica shape. No ``tf.TensorSpec`` can name a
# ``PerReplica``; TensorFlow's distributed input guide writes
# ``@tf.function(input_signature=[dist_dataset.element_spec])`` instead, which traces once.
# That fix is written only when it is safe, all of this checked on the source:
#
# - the function is decorated (the signature is evaluated with the decorator), has one
#   parameter and the profile saw only distributed values in it;
# - ``D = <strategy>.experimental_distribute_dataset(...)`` (or
#   ``distribute_datasets_from_function``) is the only binding of ``D`` in the scope of the
#   ``def`` and stands before it in the same block, so ``D`` exists, and is that dataset,
#   when the decorator runs;
# - every use of the function's name is a call with one argument that is an element of
#   ``D``: the target of ``for x in D``, ``next(it)`` with ``it = iter(D)``, or
#   ``next(iter(D))``; so every call gets a value ``D.element_spec`` describes (tf.data
#   guarantees its elements match it: measured, an ``element_spec`` pins a dimension only
#   when every element has that size, e.g. ``batch(n, drop_remainder=True)``, so no
#   relaxed batch dimension is needed);
# - the shape-use analysis (which follows ``strategy.run(fn, args=...)`` into ``fn``)
#   finds no static read of the parameter's shape: ``element_spec`` may leave any
#   dimension ``None`` where the original traces saw a number.
#
# Otherwise the plan keeps what inference decided (``reduce_retracing=True`` where shapes
# vary) and says why, with the code to paste.

GUIDE = "TensorFlow's distributed input guide"


@dataclass(frozen=True)
class DistributedInput:
    """What was found for a step taking distributed values."""

    param: str
    dataset: str | None
    """The distributed dataset its calls take elements of (None: not found)."""
    written: bool
    reason: str
    """For the plan's reasons: what fix writes, or why not and what to paste."""


def paste_code(dataset: str, decorator: str = "@tf.function") -> str:
    return f"{decorator}(input_signature=[{dataset}.element_spec])"


def plan_distributed(
    source: Source,
    site: FunctionSite,
    record: FunctionRecord,
    results: list[ParamResult],
    use: ShapeUse,
) -> DistributedInput | None:
    """Give the distributed parameter ``D.element_spec`` when safe (``results`` updated)."""
    params = distributed_params(record)
    if not params:
        return None
    name = params[0]
    assert source.wrapper is not None
    dataset, why_not = dataset_of_calls(source.wrapper, site)
    if why_not is None:
        why_not = _other_blockers(record, site, results, name)
    if why_not is None:
        why_not = _shape_reads(use, name)
    if why_not is None:
        assert dataset is not None
        for r in results:
            if r.info.name == name:
                r.spec = ElementSpecNode(dataset)
                r.blocker = None
        return DistributedInput(
            name,
            dataset,
            True,
            f"`{name}` takes elements of the distributed dataset `{dataset}`: "
            f"input_signature=[{dataset}.element_spec], as {GUIDE} writes it",
        )
    shown = dataset or "dist_dataset"
    return DistributedInput(
        name,
        dataset,
        False,
        f"`{name}` is an element of a distributed dataset (PerReplica): "
        f"`{paste_code(shown)}` would trace it once ({GUIDE}), but autosig does not write it: "
        f"{why_not}",
    )


def _other_blockers(
    record: FunctionRecord, site: FunctionSite, results: list[ParamResult], name: str
) -> str | None:
    if site.decorator is None or not isinstance(site.function, cst.FunctionDef):
        return "it is not a decorated def (the signature belongs in its decorator)"
    if site.site.is_method:
        return "it is a method"
    others = [r.info.name for r in results if r.info.name != name]
    if others or len(record.params) != 1:
        return f"it takes other parameters too ({', '.join(others) or 'unknown'})"
    if results and results[0].info.kind not in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD"):
        return f"`{name}` is not a positional parameter"
    return None


def _shape_reads(use: ShapeUse, name: str) -> str | None:
    definite = [r for r in use.reads.get(name, []) if r.definite]
    if not definite:
        return None
    return (
        f"{definite[0].describe()}: element_spec may leave that dimension None "
        "(compute it with tf.shape() instead)"
    )


# -- call sites ----------------------------------------------------------------------
# A function with an object among its arguments (a Keras model, a callable) gets no
# input_signature, and every new value of a Python int, float or string argument is a new
# trace (explain(model, images, class_index) called once per class). Where the
# Python-value analysis found that the function's code uses such a parameter only where a
# tensor works the same (decide_python_params left it a scalar spec), its callers can pass
# tf.constant(value, dtype) instead: one trace for every value. Offered only where it
# removes traces (not when each retrace brings a new object) and only for the call sites
# the profile recorded in editable files; rewrite/call_sites.py makes the edits.


POSITIONAL_KINDS = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")


def plan_call_sites(
    record: FunctionRecord, results: list[ParamResult], action: Action
) -> tuple[CallSitePlan | None, list[str]]:
    """The call-site plan of a function that gets no signature, and the reasons said.

    ``results`` are the parameters after ``decide_python_params`` decided which Python
    values may become tensors; ``action`` is the decorator decision (a signature makes
    call sites moot). Returns (None, []) where call sites are not the remedy at all, and (None,
    [why]) where they would be but cannot be used.
    """
    if action == "signature":
        return None, []
    objects = [r for r in results if r.blocker is not None and r.leaf.object_type is not None]
    if not objects:
        return None, []
    scalars = [r for r in results if _tensorizable(r)]
    if not scalars:
        return None, []
    names = ", ".join(f"`{r.info.name}`" for r in scalars)
    if record.trace_events[1:] and all(e.new_objects for e in record.trace_events[1:]):
        return None, [
            f"passing {names} as tensors at the call sites would not help: every retrace "
            "came with a new object (pass the same object each call)"
        ]
    sites = tuple(s for s in record.call_sites if s.editable and s.path is not None)
    if not sites:
        why = (
            "the profile has no call sites (recorded by an older autosig: re-run autosig profile)"
            if not record.call_sites and not record.call_sites_dropped
            else "none of its recorded call sites is in the project's own code"
        )
        return None, [f"{names} could be passed as tensors at the call sites, but {why}"]
    params = tuple(_tensorized_param(record, r) for r in scalars)
    unrecorded = sum(s.calls for s in record.call_sites if s not in sites)
    plan = CallSitePlan(
        callee=_callee_name(record.qualname),
        params=params,
        sites=sites,
        unrecorded=unrecorded + record.call_sites_dropped,
    )
    return plan, [describe_call_sites(plan, objects[0].info.name)]


def _tensorizable(r: ParamResult) -> bool:
    """A varying Python number/string the Python-value analysis found safe as a tensor."""
    python = r.leaf.python
    return (
        python is not None
        and python.varied
        and r.blocker is None
        and r.spec is not None
        and r.info.kind in POSITIONAL_KINDS
    )


def _tensorized_param(record: FunctionRecord, r: ParamResult) -> TensorizedParam:
    positional = [p.name for p in record.params if p.kind in POSITIONAL_KINDS]
    index = positional.index(r.info.name) if r.info.name in positional else None
    assert r.leaf.python is not None
    return TensorizedParam(r.info.name, index, r.leaf.python.dtype, r.leaf.python.describe())


def _callee_name(qualname: str) -> str | None:
    name = qualname.rsplit(".", 1)[-1]
    return None if name == "__call__" or name.startswith("<") else name


def describe_call_sites(plan: CallSitePlan, blocking: str) -> str:
    """One reason line: what the call sites get and why the function gets no signature."""
    wraps = ", ".join(constant_text(p.name, p.dtype) for p in plan.params)
    return (
        f"call sites pass {wraps} ({plural(len(plan.sites), 'call site')}, "
        f"{sites_text(plan.sites)}): `{blocking}` keeps an input_signature out, and the "
        "code uses these values only as tensors, so every value shares one trace"
    )


# -- the function's current source ---------------------------------------------------


@dataclass
class Source:
    """A parsed file: its text, metadata wrapper and tf.function sites (or why not)."""

    text: str
    wrapper: MetadataWrapper | None
    sites: list[FunctionSite]
    error: str | None = None

    @classmethod
    def parse(cls, text: str, path: str) -> Source:
        try:
            wrapper, sites = discover_text(text, path)
        except AutosigError as exc:
            return cls(text, None, [], exc.message)
        return cls(text, wrapper, sites)

    def locate(self, qualname: str, line: int) -> FunctionSite | None:
        """The tf.function ``qualname`` nearest to ``line`` (the profile's line may be old)."""
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


# -- Python numbers that may become tensors ------------------------------------------
# A Python int the code uses as a range bound, a shape or an index must stay a Python
# value; one it only feeds to TensorFlow ops takes a ``TensorSpec([], dtype)`` with the
# dtype the ops need: int64 for a summary step or where Python arithmetic on it may leave
# int32 range (``step * 1000003``: an int32 tensor wraps around, a Python int does not).


def decide_python_params(
    source: Source,
    site: FunctionSite,
    results: list[ParamResult],
    modules: ModuleResolver | None = None,
    try_uncertain: bool = False,
) -> None:
    """Tensorize Python scalars the code uses only where a tensor can go.

    ``modules`` (``autosig.source.project_modules.ProjectModules``) lets the analysis follow calls
    into other project modules; without it only same-module functions are followed.
    ``try_uncertain``: also tensorize those whose every use the analysis cannot decide
    (``fix --verify``); otherwise their blocker says that ``--verify`` could settle it.
    """
    candidates = [r for r in results if r.blocker is None and r.leaf.python is not None]
    if not candidates:
        return
    function = site.function
    assert function is not None and source.wrapper is not None
    names = [r.info.name for r in candidates]
    tensor_params = [r.info.name for r in results if r.leaf.spec is not None]
    dtypes = {
        r.info.name: r.leaf.spec.dtype for r in results if isinstance(r.leaf.spec, TensorSpecNode)
    }
    observed: dict[str, int] = {}
    converted: dict[str, str] = {}
    for r in candidates:
        assert r.leaf.python is not None
        converted[r.info.name] = r.leaf.python.dtype
        dtypes[r.info.name] = r.leaf.python.dtype
        ints = [v for v in r.leaf.python.values if isinstance(v, int) and not isinstance(v, bool)]
        if ints:
            observed[r.info.name] = max(abs(v) for v in ints)
    required = required_dtypes(
        source.wrapper, function, names, observed, dtypes, tensor_params, modules
    )
    for r in candidates:
        assert r.leaf.python is not None
        needed = required.get(r.info.name)
        if needed and r.leaf.python.dtype in ("int32", "int64"):
            r.leaf.python.dtype = needed
            dtypes[r.info.name] = needed
    uses = python_only_uses(
        source.wrapper, function, names, tensor_params, dtypes, observed, converted, modules
    )
    optimistic: dict[str, list[PythonUse]] = {}
    if any(not u.certain for found in uses.values() for u in found):
        optimistic = python_only_uses(
            source.wrapper,
            function,
            names,
            tensor_params,
            dtypes,
            observed,
            converted,
            modules,
            optimistic=True,
        )
    for r in candidates:
        assert r.leaf.python is not None
        found = uses.get(r.info.name, [])
        unsure = undecided(found, optimistic.get(r.info.name, []))
        if found and try_uncertain and unsure:
            r.tried = found
            r.warning = tried_warning(r.info.name)
            r.spec = TensorSpecNode((), r.leaf.python.dtype)
        elif returned_only(found) and r.leaf.python.dtype == "string":
            r.warning = returned_warning(r.info.name, found)
            r.spec = TensorSpecNode((), "string")
        elif found:
            r.python_uses = found
            use = found[0].describe() + (settle_hint(r.info.name) if unsure else "")
            r.blocker = Blocker.stated(
                r.info.name,
                "python_use",
                f"`{r.info.name}`",
                f"must stay a Python value: {use}",
                use=use,
            )
        else:
            r.spec = TensorSpecNode((), r.leaf.python.dtype)


# -- dimensions a signature may leave free -------------------------------------------


MIN_CALLS = 8
"""Fewer calls than this do not show that a dimension is constant."""


AUTO = "auto"


RANDOM_REASON = (
    "it draws stateful random numbers ({draws}): each trace keeps its own random state, "
    "so tracing fewer times changes the numbers drawn (tf.random.stateless_* and "
    "tf.random.Generator are unaffected)"
)


@dataclass
class ShapeDecision:
    """What the shape-use analysis allows for one function."""

    use: ShapeUse
    blockers: list[Blocker] = field(default_factory=list)
    """Why no relaxed trace at all (neither a signature nor reduce_retracing)."""
    warnings: list[str] = field(default_factory=list)
    """Dimensions kept fixed without proof: the signature is an unsafe fix."""
    relaxed: list[str] = field(default_factory=list)
    """Dimensions freed because no static read of them was found (for the evidence)."""
    random_reason: str | None = None
    shape_varies: bool = False
    """Some tensor dimension (or rank) varied between the profiled calls."""
    rewrites: list[ShapeRewrite] = field(default_factory=list)
    """Static reads rewritten to ``tf.shape()`` so their dimension can be None."""

    @property
    def reduce_retracing_blockers(self) -> list[str]:
        """Definite static reads: reduce_retracing would relax those dimensions too."""
        out = [b.reason for b in self.blockers]
        for reads in self.use.reads.values():
            definite = [read for read in reads if read.definite]
            if definite:
                out.append(definite[0].against_reduce_retracing())
        return out


def _tensor_shapes(value: Value, path: str = "") -> Iterator[tuple[str, Any]]:
    """(where in the argument, shape) of every tensor inside one recorded value."""
    kind = value.get("kind")
    if kind in TENSOR_KINDS:
        shape = value.get("shape")
        yield path, None if shape is None else tuple(shape)
    for index, replica in enumerate(replicas_of(value) or ()):
        yield from _tensor_shapes(replica, f"{path}(replica {index})")
    items = value.get("items")
    if isinstance(items, dict):
        for key, item in items.items():
            yield from _tensor_shapes(item, f"{path}[{key!r}]")
    elif isinstance(items, list):
        for index, item in enumerate(items):
            yield from _tensor_shapes(item, f"{path}[{index}]")


def tensor_shapes(record: FunctionRecord) -> dict[str, dict[str, set[Any]]]:
    """Parameter -> place inside it -> the shapes seen there, over every call signature."""
    out: dict[str, dict[str, set[Any]]] = {}
    for signature in record.signatures:
        for name, value in signature.args.items():
            for path, shape in _tensor_shapes(value):
                out.setdefault(name, {}).setdefault(path, set()).add(shape)
    return out


def decide_shapes(
    source: Source,
    site: FunctionSite,
    record: FunctionRecord,
    results: list[ParamResult],
    policies: dict[str, str],
    modules: ModuleResolver | None = None,
) -> ShapeDecision:
    """Apply the shape policy to every tensor parameter's spec (``results`` are updated).

    ``policies`` maps a parameter to its relax policy (``auto``, ``none``, ``batch``,
    ``all``); specs arrive relaxed by ``batch``/``all`` already and unrelaxed for
    ``auto``/``none``.
    """
    shapes = tensor_shapes(record)
    carriers = [r for r in results if r.info.name in shapes]
    tensors = [r for r in carriers if r.spec is not None and r.leaf.python is None]
    ranks: dict[str, int | None] = {}
    for r in carriers:
        seen = shapes[r.info.name].get("", set())
        lengths = {None if s is None else len(s) for s in seen}
        if len(lengths) == 1 and None not in lengths and len(shapes[r.info.name]) == 1:
            ranks[r.info.name] = lengths.pop()
    assert source.wrapper is not None and site.function is not None
    names = [r.info.name for r in carriers]
    autograph = autograph_enabled(site.site.decorator_args)
    structures = [n for n in names if _always_container(record, n)]
    use = shape_use(source.wrapper, site.function, names, ranks, autograph, modules, structures)
    few_calls = record.calls < MIN_CALLS
    to_free, varying, dense = _wanted_free(tensors, policies, site, few_calls)
    if site.decorator is None:
        to_free = set()  # tf.function(f): f stays a Python function others may call as is
    dynamic = choose_rewrites(
        source.wrapper,
        site.function,
        use,
        to_free,
        varying,
        dense,
        autograph=autograph,
        modules=modules,
    )
    use = dynamic.without_rewritten(use)
    decision = ShapeDecision(use=use, rewrites=dynamic.rewrites)
    decision.shape_varies = any(
        len(seen) > 1 for places in shapes.values() for seen in places.values()
    )
    if use.random_draws:
        draws = ", ".join(d.describe() for d in use.random_draws[:2])
        decision.random_reason = RANDOM_REASON.format(draws=draws)
    control = use.control()
    for r in tensors:
        assert r.spec is not None
        name = r.info.name
        reads = use.reads.get(name, [])
        nested = not isinstance(r.spec, (TensorSpecNode, RaggedSpecNode, SparseSpecNode))
        policy = policies.get(name, AUTO)
        new_leaves: dict[int, Shape] = {}
        for index, leaf in enumerate(_leaves(r.spec)):
            shape = leaf.shape
            definite = [x for x in reads if x.definite]
            if shape is None:
                if definite or control:
                    decision.blockers.append(_conflict(name, name, None, (definite or control)[0]))
                continue
            new_shape = list(shape)
            for dim, size in enumerate(shape):
                dim_reads = [x for x in reads if nested or callee_reads_dim(x, dim)]
                hard = [x for x in dim_reads if x.definite]
                label = _dim_label(name, dim, nested)
                if size is None:
                    if hard or control:
                        decision.blockers.append(_conflict(name, label, dim, (hard or control)[0]))
                    continue
                if policy != AUTO:
                    if _at_risk(dim, site, few_calls):
                        why = f"relax={policy} keeps it fixed"
                        decision.warnings.append(_pinned(label, size, record.calls, why))
                    continue
                if not _at_risk(dim, site, few_calls):
                    continue
                blocking = dim_reads or control
                if blocking:
                    decision.warnings.append(
                        _pinned(label, size, record.calls, blocking[0].describe())
                    )
                    continue
                new_shape[dim] = None
                decision.relaxed.append(label)
            if tuple(new_shape) != tuple(shape):
                new_leaves[index] = tuple(new_shape)
        if new_leaves:
            r.spec = _replace_leaves(r.spec, new_leaves)
    return decision


TensorLeaf = TensorSpecNode | RaggedSpecNode | SparseSpecNode


def _always_container(record: FunctionRecord, name: str) -> bool:
    """``name`` was a tuple, list or dict in every recorded call."""
    kinds = {s.args[name].get("kind") for s in record.signatures if name in s.args}
    return bool(kinds) and kinds <= {"tuple", "list", "dict", "namedtuple"}


def _leaves(spec: SpecNode) -> Iterator[TensorLeaf]:
    if isinstance(spec, (TensorSpecNode, RaggedSpecNode, SparseSpecNode)):
        yield spec
    elif isinstance(spec, (TupleNode, ListNode)):
        for item in spec.items:
            yield from _leaves(item)
    elif isinstance(spec, DictNode):
        for _, item in spec.items:
            yield from _leaves(item)


def _replace_leaves(spec: SpecNode, shapes: dict[int, Shape]) -> SpecNode:
    counter = iter(range(1_000_000))

    def walk(node: SpecNode) -> SpecNode:
        if isinstance(node, (TensorSpecNode, RaggedSpecNode, SparseSpecNode)):
            index = next(counter)
            return dataclasses.replace(node, shape=shapes[index]) if index in shapes else node
        if isinstance(node, TupleNode):
            return TupleNode(tuple(walk(i) for i in node.items))
        if isinstance(node, ListNode):
            return ListNode(tuple(walk(i) for i in node.items))
        if isinstance(node, DictNode):
            return DictNode(tuple((k, walk(v)) for k, v in node.items))
        return node

    return walk(spec)


def _wanted_free(
    tensors: list[ParamResult], policies: dict[str, str], site: FunctionSite, few_calls: bool
) -> tuple[set[tuple[str, int]], set[tuple[str, int]], dict[str, int | None]]:
    """(dimensions the policy wants None, those that varied, plain tensors -> rank)."""
    to_free: set[tuple[str, int]] = set()
    varying: set[tuple[str, int]] = set()
    dense: dict[str, int | None] = {}
    for r in tensors:
        spec = r.spec
        if not isinstance(spec, TensorSpecNode) or spec.shape is None:
            continue
        name = r.info.name
        dense[name] = len(spec.shape)
        auto = policies.get(name, AUTO) == AUTO
        for dim, size in enumerate(spec.shape):
            if size is None:
                varying.add((name, dim))
                to_free.add((name, dim))
            elif auto and _at_risk(dim, site, few_calls):
                to_free.add((name, dim))
    return to_free, varying, dense


def _at_risk(dim: int, site: FunctionSite, few_calls: bool) -> bool:
    return dim == 0 or site.site.is_method or few_calls


def _dim_label(name: str, dim: int, nested: bool) -> str:
    return f"`{name}` (a dimension {dim} inside it)" if nested else f"`{name}` dimension {dim}"


def _conflict(name: str, label: str, dim: int | None, read: ShapeRead) -> Blocker:
    """Why parameter ``name`` (at ``label``) can have neither a relaxed nor a fixed shape."""
    what = "its rank varies" if dim is None else "it varies between calls"
    predicate = (
        f"{what}, but {read.describe()}: a relaxed trace would make it None "
        "(no signature and no reduce_retracing; compute it with tf.shape() instead)"
    )
    return Blocker(name, "shape_read", f"{label}: {predicate}", predicate)


def _pinned(label: str, size: int, calls: int, why: str) -> str:
    return (
        f"{label} seen only as {size} in {plural(calls, 'call')} and kept fixed ({why}): "
        "the signature rejects other sizes the original accepts"
    )


# -- the action ----------------------------------------------------------------------


ONCE_REASON = "traced once; nothing to fix"


def traced_once(record: FunctionRecord) -> str | None:
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


NO_HELP_REASON = (
    "reduce_retracing=True would not help: only Python values or objects vary, and each "
    "value or object is a trace either way"
)


@dataclass
class Decision:
    """The action for one function, its reasons, and which parameters it signs."""

    action: Action
    reasons: list[str]
    blockers: list[Blocker] = field(default_factory=list)
    """The reasons that name a parameter blocking a signature (each is in ``reasons``)."""
    signed: set[str] = field(default_factory=set)
    """Names of the parameters that go in the signature."""


def decide_action(
    record: FunctionRecord,
    site: FunctionSite,
    results: list[ParamResult],
    shapes: ShapeDecision,
) -> Decision:
    """A signature, reduce_retracing or nothing for the function, and why."""
    if shapes.blockers:
        conflicts = list(dict.fromkeys(shapes.blockers))
        return Decision("none", [b.reason for b in conflicts], conflicts)
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
            blockers.append(
                Blocker.stated(r.info.name, "parameter", f"`{r.info.name}`", "has no spec")
            )
    star = next((r.info.name for r in others if r.info.kind == "VAR_POSITIONAL"), None)
    if star is not None:
        # Measured (TF 2.21): with *args, signed parameters become positional-only.
        for r in signed:
            if any(sig.passed.get(r.info.name) == "keyword" for sig in record.signatures):
                blockers.append(
                    Blocker.stated(
                        r.info.name,
                        "parameter",
                        f"`{r.info.name}`",
                        f"is passed by keyword, but next to `*{star}` an "
                        "input_signature makes it positional-only",
                    )
                )
    reasons.extend(b.reason for b in blockers)
    identical = len(record.signatures) == 1 and not record.signatures_dropped
    if identical and not any(r.leaf.object_type for r in results):
        return Decision(
            "none",
            [
                f"retraced with identical arguments ({record.traces} traces, one call signature): "
                "a signature cannot help; variables created on the first call? "
                "(build optimizers and layers before the first call)"
            ],
        )
    if reasons:
        if site.site.has_reduce_retracing:
            return Decision("none", ["already has reduce_retracing=True", *reasons], blockers)
        if not shapes.shape_varies:
            return Decision("none", [*reasons, NO_HELP_REASON], blockers)
        unsafe_reads = shapes.reduce_retracing_blockers
        if unsafe_reads:
            return Decision("none", [*reasons, *unsafe_reads], blockers)
        return Decision("reduce_retracing", reasons, blockers)
    out = [
        f"input_signature covers {plural(len(signed), 'parameter')} from {plural(record.calls, 'call')}"
    ]
    for r in positional[last + 1 :] + others:
        out.append(f"`{r.info.name}` left out: {r.evidence}")
    if record.signatures_dropped:
        out.append(
            f"{record.signatures_dropped} call signatures were not recorded: every tensor "
            "dimension is left free so unseen shapes still fit (verify before trusting it)"
        )
    return Decision("signature", out, signed={r.info.name for r in signed})


# -- findings ------------------------------------------------------------------------


def function_findings(
    record: FunctionRecord,
    site: FunctionSite,
    source: Source,
    results: list[ParamResult],
    action: Action,
    reasons: list[str],
    tensorized: Collection[str] = (),
) -> list[Finding]:
    """The findings of an editable function whose plan is ``action`` for ``reasons``.

    ``tensorized``: parameters its call sites will pass as tensors (a call-site plan).
    """
    path = record.path or ""
    line, col = site.site.line, site.site.col
    fixable = action in ("signature", "reduce_retracing") or bool(tensorized)
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

    if record.traces > 1:
        add("AS201", retrace_message(record, main_cause(results) or reasons[0]))
    for r in results:
        python = r.leaf.python
        if python is not None and python.varied:
            message = (
                f"Python {python.type_name} argument `{r.info.name}` takes "
                f"{python.values_text()}: every new value is a new trace"
            )
            if r.spec is not None and action == "signature":
                message += f"; planned as tf.TensorSpec([], tf.{python.dtype})"
            elif r.info.name in tensorized:
                message += (
                    f"; planned as tf.constant({r.info.name}, tf.{python.dtype}) at its call sites"
                )
            elif r.python_uses:
                message += f"; kept as a Python value: {r.python_uses[0].describe()}"
            add("AS202", message)
        for code, text in r.leaf.findings:
            if code == "AS204" and r.leaf.object_type is not None:
                count = record.object_instances.get(r.info.name)
                if count:
                    text += f", {plural(count, 'distinct instance')}: each new one is a new trace"
            add(code, text)
    return _unsuppressed(out, source, site)


def retrace_message(record: FunctionRecord, cause: str) -> str:
    """AS201's message: ``5 traces for 12 calls; main cause: ...``."""
    return f"{record.traces} traces for {plural(record.calls, 'call')}; main cause: {cause}"


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


def _unsuppressed(findings: list[Finding], source: Source, site: FunctionSite) -> list[Finding]:
    assert source.wrapper is not None
    suppressions = Suppressions.from_module(source.wrapper.module, source.text)
    lines = source.site_lines(site)
    return [f for f in findings if not suppressions.is_suppressed(f.code, lines)]


# -- library functions ---------------------------------------------------------------
# Keras ``train_step`` and the like are not editable: the same per-parameter analysis
# runs, but its result is advice on what the caller can change, shown with AS201.


def library_plan(record: FunctionRecord, options: InferOptions) -> FunctionPlan:
    """Library code cannot be edited: say what the caller can change instead."""
    results = [analyze_param(record, info, options) for info in record.params]
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
        cause = main_cause(results) or "see autosig explain"
        findings.append(
            Finding(
                path=record.path or "<library>",
                line=record.line,
                col=1,
                code="AS201",
                message=f"{retrace_message(record, cause)}; {'; '.join(advice)}",
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

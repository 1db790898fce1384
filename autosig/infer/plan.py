"""The fix plan: what inference decided for each profiled function, with its evidence.

Produced by ``autosig.infer.planner`` from a profile, consumed by ``autosig.rewrite``,
``autosig fix``, ``verify``, ``explain`` and the report. Pure data, apart from the planner
so that those consumers import it without the analyses (libcst) behind a plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from autosig.infer.specs import SpecNode
from autosig.profile.format import CallSite
from autosig.source.sites import Finding, FixSafety

Action = Literal["signature", "guarded_trace", "reduce_retracing", "none"]
"""``guarded_trace``: ``f.get_concrete_function(<the params' specs>)`` once, after setup
(``autosig.infer.guarded_trace``), where a signature would narrow the domain."""

BlockerKind = Literal["argument", "object", "parameter", "python_use", "shape_read"]
"""Why a parameter keeps a signature out:

- ``argument``: what its values allow (dtypes or structure vary, a Python flag, a
  tf.Variable, a value TensorFlow has no spec for ...);
- ``object``: it is a Python object (TensorFlow traces it by identity);
- ``parameter``: the kind of parameter or how it is passed (``*args``, keyword-only,
  by keyword next to ``*args``, never seen, kept a Python value by verify's fallback);
- ``python_use``: it is a Python number the code needs as a Python value;
- ``shape_read``: a dimension that varied is read statically by the code.
"""


@dataclass(frozen=True)
class Blocker:
    """One of a plan's reasons that names the parameter keeping a signature out."""

    param: str
    kind: BlockerKind
    reason: str
    """The reason as it reads in ``FunctionPlan.reasons``."""
    predicate: str
    """What ``reason`` says of the parameter, without naming it (``is a Python bool ...``)."""
    use: str = ""
    """``python_use`` only: the code that needs the Python value."""

    @classmethod
    def stated(
        cls, param: str, kind: BlockerKind, subject: str, predicate: str, use: str = ""
    ) -> Blocker:
        """The blocker whose reason is ``subject`` (naming ``param``) then ``predicate``."""
        return cls(param, kind, f"{subject} {predicate}", predicate, use)


@dataclass(frozen=True)
class ParamPlan:
    """The planned spec of one parameter and why."""

    name: str
    spec: SpecNode | None
    """None: the parameter stays out of the signature (trailing default never varied)."""
    evidence: str
    """e.g. '44 calls, 7 distinct shapes: (32, 17), (32, 23), ...; dimension 1 varies'"""


@dataclass(frozen=True)
class ShapeRewrite:
    """A static shape read the fix rewrites to ``tf.shape()`` (``autosig.infer.shape_rewrites.choose_rewrites``).

    Found again by its place relative to the function's name (``offset`` lines below
    the ``def`` line, at ``column``) and its code, so the rewrite finds it after the
    decorator above it grew. ``x.shape[i]`` becomes ``tf.shape(x)[i]``; an unpacking
    ``b, t, d = x.shape`` (``rank`` names) gets ``tf.shape(x)[k]`` for the ``dims`` made
    dynamic and keeps ``x.shape[k]`` for the others.
    """

    line: int
    offset: int
    column: int
    code: str
    why: str
    """What the value does, e.g. 'it only sizes a TensorArray'."""
    dims: tuple[int, ...] = ()
    rank: int | None = None

    def replacement(self, tf: str = "tf") -> str:
        """The new code (``tf``: the file's TensorFlow alias)."""
        value, _, index = self.code.rpartition(".shape")
        if self.rank is None:
            return f"{tf}.shape({value}){index}"
        return ", ".join(
            f"{tf}.shape({value})[{dim}]" if dim in self.dims else f"{value}.shape[{dim}]"
            for dim in range(self.rank)
        )

    def describe(self, tf: str = "tf") -> str:
        """```x.shape[0]` -> `tf.shape(x)[0]` (line 9): it only sizes a TensorArray``."""
        return f"`{self.code}` -> `{self.replacement(tf)}` (line {self.line}): {self.why}"


@dataclass(frozen=True)
class ArgumentPosition:
    """Where a call passes a parameter (as ``TensorizedParam`` says it)."""

    name: str
    index: int | None
    from_end: int | None = None


@dataclass(frozen=True)
class TensorizedParam:
    """A Python number or string parameter the callers should pass as a scalar tensor."""

    name: str
    index: int | None
    """Its position among the parameters callers pass positionally (``self`` of a method
    not counted); None for a keyword-only parameter."""
    dtype: str
    """``int32``, ``int64``, ``float32``, ``string``: what ``tf.constant`` is given."""
    evidence: str
    from_end: int | None = None
    """Its position counted from the last positional parameter (0: the last), where that
    binds it in every call that does not raise: the function takes no ``*args`` and its
    last positional parameter has no default, so a call passing ``f(*batch, epoch)``
    fills all positional parameters and ``epoch`` is the last. None otherwise."""
    follows: tuple[ArgumentPosition, ...] = ()
    """Tensor parameters whose dtype the probe saw the number follow (``img + g * step``):
    a call site passes it as a tensor only where the code there fixes their dtype to
    ``dtype`` (``analysis/static_dtypes.py``)."""
    python_type: str = ""
    """``int``, ``float`` or ``str``: the one Python type the calls passed."""

    @property
    def default_dtype(self) -> bool:
        """``dtype`` is what ``tf.constant`` gives a value of ``python_type`` without one:
        the call site then writes ``tf.constant(x)``, which keeps the original's own
        reading of other values at that site (review5: a float there is a float32
        tensor, an int beyond int32 an int64 one, as TensorFlow reads the Python value;
        ``tf.constant(x, tf.int32)`` raised for 1.0 and wrapped 2**31 + 5 silently).
        Ints and strings only (``DEFAULT_DTYPES``)."""
        return DEFAULT_DTYPES.get(self.python_type) == self.dtype

    def constant(self, tf: str = "tf") -> str:
        """How the rewritten argument reads (``tf.constant(k)``, ``tf.constant(k, tf.int64)``)."""
        return constant_text(self.name, self.dtype, tf, self.default_dtype)


DEFAULT_DTYPES = {"int": "int32", "str": "string"}
"""The dtype ``tf.constant`` gives a Python value of each type (an int beyond int32:
int64), where writing none keeps the original's reading of other values: an int site
passed a float or an int beyond int32 (review5). Not floats (review6): an int or a bool
at a float site would become an int32 or bool tensor, where ``tf.constant(x,
tf.float32)`` reads them as the original's float context does."""


@dataclass(frozen=True)
class CallSitePlan:
    """Wrap varying Python values in ``tf.constant`` where the function is called.

    For a function that cannot get an ``input_signature`` (an object among its
    arguments) but whose varying Python numbers or strings the code uses only as tensors:
    passing those as tensors makes every value share one trace. Only the recorded call
    sites are rewritten, and only in the files being fixed.
    """

    callee: str | None
    """The name call sites use (``explain`` for ``explain`` and ``Explainer.explain``);
    None for ``__call__``, whose calls are matched by their recorded position alone."""
    params: tuple[TensorizedParam, ...]
    sites: tuple[CallSite, ...]
    """Recorded call sites in editable files, in order of first call."""
    unrecorded: int = 0
    """Eager calls whose site is not among ``sites`` (library code, past the cap)."""


MAX_SITES_SHOWN = 4


def constant_text(name: str, dtype: str, tf: str = "tf", default: bool = False) -> str:
    """``tf.constant(class_index, tf.int64)``, or ``tf.constant(class_index)`` where the
    dtype is the one TensorFlow gives the value itself: how a rewritten argument reads."""
    return f"{tf}.constant({name})" if default else f"{tf}.constant({name}, {tf}.{dtype})"


def sites_text(sites: tuple[CallSite, ...] | list[CallSite]) -> str:
    """``model.py:31 (10 calls), driver.py:8 (1 call)``: the first few call sites."""
    shown = [
        f"{s.where} ({s.calls} call{'' if s.calls == 1 else 's'})" for s in sites[:MAX_SITES_SHOWN]
    ]
    if len(sites) > MAX_SITES_SHOWN:
        shown.append(f"{len(sites) - MAX_SITES_SHOWN} more")
    return ", ".join(shown)


@dataclass(frozen=True)
class ModelBuild:
    """Keras models or layers the first call builds, and what fix inserts to build them
    before it (``autosig.analysis.model_build``)."""

    inputs: tuple[tuple[str, tuple[int | None, ...], str], ...] = ()
    """(parameter, shape, dtype) on the call that built them: the fix finds its edit
    again from these on each pass."""
    statements: tuple[str, ...] = ()
    """What fix inserts (``model.build((None, 8))``, ``model(tf.zeros((32, 8), tf.float32))``);
    empty: nothing."""
    line: int = 0
    """The line they go after."""
    unsafe: str | None = None
    """Why building earlier may change results (then only ``--unsafe-fixes`` writes it)."""
    why_not: str = ""
    """Why nothing is inserted, when ``statements`` is empty."""

    def advice(self) -> str:
        if self.statements:
            where = f"`{'`, `'.join(self.statements)}` after line {self.line}"
            if self.unsafe:
                return f"autosig fix --unsafe-fixes inserts {where} (unsafe: {self.unsafe})"
            return f"autosig fix inserts {where}"
        return f"build the model before the first call (not automatic: {self.why_not})"


@dataclass(frozen=True)
class BuildFirst:
    """The function created variables on its first call (TensorFlow traced that call
    again), and what fix does about it: build the models and the optimizer before the
    first call."""

    retraces: int
    """Traces the profile saw repeat a call because the first one created variables."""
    only_cause: bool
    """Every retrace of the function is one of those (nothing else to fix)."""
    statement: str | None = None
    """What fix inserts (``optimizer.build(model.trainable_variables)``); None: nothing."""
    line: int = 0
    """The line it goes after."""
    why_not: str = ""
    """Why nothing is inserted, when ``statement`` is None."""
    models: ModelBuild | None = None
    """Models the first call builds (None: none found)."""
    optimizer: bool = True
    """The function applies gradients with an optimizer (False: only models to build)."""

    def advice(self) -> str:
        parts = [self.models.advice()] if self.models is not None else []
        if self.statement is not None:
            parts.append(f"autosig fix inserts `{self.statement}` after line {self.line}")
        elif self.optimizer or not parts:
            parts.append(
                f"build the optimizer before the first call (not automatic: {self.why_not})"
            )
        return "; then ".join(parts)


@dataclass(frozen=True)
class GuardedTrace:
    """A guarded relaxed trace instead of a signature (``autosig.infer.guarded_trace``):
    the params' specs seed one trace; calls that fit reuse it, others trace as before."""

    why: str
    """Why not a signature: what the profile does not show."""
    where: str
    """Where the seeding call goes (``after line 12``, ``at the end of `M.__init__```)."""
    params: tuple[str, ...]
    """The parameters it passes specs for, in order."""
    line: int = 0
    at_instances: bool = False
    """A method's seed, written in its callers' files right after the statement making
    each recorded call's instance (``analysis/instance_bindings.py``), not in its own."""


@dataclass(frozen=True)
class Unpaired:
    """A function's plan without the guarded trace it pairs with call-site tensors
    (``FunctionPlan.unpaired``): what ``fix`` writes when the call sites are not all
    among the files it fixes (``paired_trace.settle_pairs``)."""

    action: Action
    params: tuple[ParamPlan, ...]
    reasons: tuple[str, ...]
    safety: FixSafety
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class FunctionPlan:
    """What to do with one function: a signature, reduce_retracing, or nothing."""

    path: str
    qualname: str
    line: int
    action: Action
    params: tuple[ParamPlan, ...] = ()
    reasons: tuple[str, ...] = ()
    """Why this action (and why not a signature, when reduce_retracing)."""
    blockers: tuple[Blocker, ...] = ()
    """The reasons above that name a parameter blocking a signature, in the same order."""
    findings: tuple[Finding, ...] = ()
    """AS201-AS204 findings derived from the profile."""
    calls: int = 0
    traces: int = 0
    stale: bool = False
    """The function's source changed since profiling: nothing is planned for it."""
    safety: FixSafety = "safe"
    """``unsafe``: the fix may change behaviour (see ``warnings``); needs --unsafe-fixes."""
    warnings: tuple[str, ...] = ()
    """Why the fix is unsafe: dimensions pinned without proof, random streams that change."""
    tried: tuple[str, ...] = ()
    """Parameters tensorized although the analysis could not decide (``fix --verify``
    only: verification keeps the signature or falls back;
    ``autosig.analysis.python_values.NumberUses.undecided``)."""
    shape_rewrites: tuple[ShapeRewrite, ...] = ()
    """Static shape reads rewritten to ``tf.shape()`` together with the fix, so the
    dimensions they read can be None."""
    call_sites: CallSitePlan | None = None
    """Python values to pass as tensors at the call sites (beside ``action``, which then
    is ``none`` or ``reduce_retracing``)."""
    build_first: BuildFirst | None = None
    """Variables created on the first call, and the optimizer.build(...) fix inserts."""
    guarded: GuardedTrace | None = None
    """With ``action == "guarded_trace"``: why and where."""
    suppressed_on: int | None = None
    """The line of the ``# autosig: ignore`` comment that covers this plan's rewrite
    (AS201): the plan leaves the function as it is (``findings.honour_comments``)."""
    unpaired: Unpaired | None = None
    """With a guarded trace whose specs take the Python numbers the call sites pass as
    tensors (``call_sites``): the plan without it. The seeding trace helps only calls
    that pass tensors, so where a call site is not rewritten (not among the files fixed)
    it would be one trace more: ``paired_trace.settle_pairs`` falls back to this."""

    @property
    def seeded_at_instances(self) -> bool:
        """A method whose guarded trace is seeded in its callers' files
        (``GuardedTrace.at_instances``), not in its own."""
        return self.guarded is not None and self.guarded.at_instances

    @property
    def signature_specs(self) -> list[SpecNode]:
        return [p.spec for p in self.params if p.spec is not None]


@dataclass
class Plan:
    functions: list[FunctionPlan] = field(default_factory=list)

    def for_site(self, path: str, qualname: str, line: int) -> FunctionPlan | None:
        matches = [f for f in self.functions if f.path == path and f.qualname == qualname]
        exact = [f for f in matches if f.line == line]
        if exact:
            return exact[0]
        return matches[0] if len(matches) == 1 else None

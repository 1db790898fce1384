"""What TensorFlow showed about a function when the profile traced its original code again.

``autosig profile`` traces the *original* Python function of each tf.function that
retraced once more per candidate (``autosig/profile/probe/``): a dimension relaxed to
``None`` or set to other sizes, a Python number given as a scalar tensor of some dtype.
The graphs TensorFlow builds, and the errors it raises, are the evidence kept here, per
function (``FunctionRecord.probe``), with one summary per profile (``Profile.probes``).
No TensorFlow here: these are the small records the profile file stores, and the rules
that combine two of them (rounds of one process, processes, runs).

Per dimension of a tensor argument (``DimEvidence.verdict``):

- ``free``: the relaxed trace (``None`` there) builds, every other size probed builds,
  the graphs for those sizes are the same op for op (types, dtypes, attributes, edges;
  TensorFlow's own gradient nodes aside), no constant that changed with the size is
  still the same constant in the relaxed graph (``tf.shape`` folds become ``Shape``
  ops), and the relaxed graph is built by the same lines of the user's code.
  Evidence over the sizes probed, not a proof for every size.
- ``fixed``: the original code itself cannot trace another size: every other size
  probed failed (a conv kernel's channels, a Dense layer's input); the error and the
  user's ``file:line`` are kept. A method's verdict is about the instance probed.
- ``read``: the graph changes with the size (a Python loop over ``range(x.shape[1])``,
  ``if x.shape[0] == 1``), the relaxed trace fails (``TensorArray(size=x.shape[0])``,
  ``x / x.shape[0]``), a size-derived constant stays a constant in the relaxed graph,
  or other lines build the relaxed graph; ``where`` names the line.
- ``bounded``: as free for the sizes the code traces, but some sizes probed do not trace
  at all (a pooling window of 2 rejects size 1): a signature with ``None`` there makes
  those sizes fail when the op runs instead of when the code traces.
- ``unknown``: the probes could not decide (a probe stopped by the budget, runs that
  disagree only by an unknown).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

VERDICTS = ("free", "bounded", "fixed", "read", "unknown")
MAX_TRACE_OUTPUT = 400
"""Characters of trace-time output kept per function."""
MAX_LISTED = 20
"""Names kept in a list of skipped candidates or functions."""


@dataclass
class DimEvidence:
    """One dimension of one tensor argument, and what the probes showed about it."""

    param: str
    """The argument's path: ``x``, ``batch[0]``, ``features['ids']``, ``point.x``."""
    dim: int
    verdict: str
    """free | bounded | fixed | read | unknown (see the module docstring)."""
    size: int | None
    """The size it had in the call probed (the baseline)."""
    varied: bool = False
    """It took several sizes in the profile (when it was probed)."""
    probed: list[int | None] = field(default_factory=list)
    """The other sizes traced (None: relaxed)."""
    tied: list[str] = field(default_factory=list)
    """Other dimensions (``param:dim``) set to the same sizes in the same probes."""
    reason: str = ""
    """One line: why this verdict."""
    error: str | None = None
    """First line of TensorFlow's error (fixed, or read because a trace failed)."""
    where: str | None = None
    """The user's ``file:line`` that raised, or that the graph difference comes from."""
    probes: int = 1
    """Rounds (processes, instances) whose probes agree on this verdict."""
    relaxed_builds: bool | None = None
    """The relaxed trace (None here) built. For ``fixed``: a signature with None there
    would reject other sizes when the op runs instead of when the code traces."""

    @property
    def key(self) -> tuple[str, int]:
        return (self.param, self.dim)

    @property
    def label(self) -> str:
        return f"{self.param}:{self.dim}"


@dataclass
class NumberEvidence:
    """A Python int or float argument: the dtype TensorFlow gave it, and its values."""

    param: str
    type: str
    """int | float"""
    dtype: str | None = None
    """The dtype its constant had in the original graph (Python numbers are weakly typed:
    they take the other operand's dtype); None when unused or not found."""
    dtype_from: str = "unknown"
    """spec (a scalar spec of ``dtype`` reproduces the original graph) | cast (an int the
    graph only casts to the float ``dtype``: that spec gives the graph without the casts)
    | constant (found as a constant holding the value in the original graph) | unused
    (every scalar spec gives the original graph: the graph does not use it) | unknown"""
    spec_matches: bool | None = None
    """The graph with ``tf.TensorSpec([], dtype)`` there has the original's structure."""
    builds: list[str] = field(default_factory=list)
    """The scalar spec dtypes tried whose trace builds at all (tried: the constant's dtype
    first, float16 and bfloat16 included, then int32, int64, float32, float64 (floats:
    float32, float64) until one reproduces the graph)."""
    reason: str = ""
    where: str | None = None
    """The user's ``file:line`` where a scalar spec failed or changed the graph."""
    count: int = 0
    """Traces that saw a value of it (each new value traces; summed over processes)."""
    min: float | None = None
    max: float | None = None
    float32_exact: bool | None = None
    """Every value seen is exactly a float32 (0.5 and 3.0 are; 0.01 is not)."""
    float32_keeps_digits: bool | None = None
    """float32 keeps every value as written (its shortest decimal, at most 15 significant
    digits): true for 0.01 or 1e-4, false for 1700000000.25 (a timestamp: float32 steps
    by 128 there) or 0.1234567891."""
    float32_max_abs_error: float | None = None
    exceeds_int32: bool | None = None
    """Some int value seen lies outside the int32 range."""
    follows: list[str] | None = None
    """The tensor arguments (paths) of the number's ``dtype`` whose dtype it follows: each
    such argument traced at another dtype (float32 -> float64, float16; int32 -> int64),
    the number's constant took that dtype too (weak typing). ``[]``: it kept ``dtype``
    with every one of them; None: not probed (no such argument, or an older profile)."""
    kept_with: list[str] = field(default_factory=list)
    """The tensor arguments (paths) probed so that the number kept ``dtype`` with them:
    at every other dtype the original traces (at none: the code fixes their dtype)."""
    dtype_probes: list[str] = field(default_factory=list)
    """What each of those traces showed, one line each (for ``explain``)."""

    @property
    def needs_float64(self) -> bool:
        """A float32 tensor would lose digits of a value seen (timestamps near 1.7e9)."""
        return self.type == "float" and self.float32_keeps_digits is False


@dataclass
class RandomEvidence:
    """The stateful random ops of the function's steady-state graph (from their op types,
    ``autosig/profile/random_ops.py``)."""

    hidden: list[str] = field(default_factory=list)
    """Ops whose stream belongs to the graph (``RandomStandardNormal``, nce_loss's sampler):
    a fix that changes the trace count changes the numbers drawn."""
    generator: list[str] = field(default_factory=list)
    """``tf.random.Generator`` ops (state in a variable, shared by every trace)."""
    first_call_only: list[str] = field(default_factory=list)
    """Ops only in the first trace's graph, not in the steady state (initializers of
    weights built on the first call): no reason for a random-stream warning."""


@dataclass
class ProbeEvidence:
    """Everything the probes showed about one function (all rounds merged)."""

    rounds: int = 0
    """Probe rounds run (one per retrace that brought new candidates)."""
    probes: int = 0
    """Traces made by the probes."""
    time_s: float = 0.0
    baseline_ops: int | None = None
    """Ops in the steady-state graph traced for the call probed."""
    dims: list[DimEvidence] = field(default_factory=list)
    numbers: list[NumberEvidence] = field(default_factory=list)
    random: RandomEvidence | None = None
    skipped: list[str] = field(default_factory=list)
    """Candidates not probed, with why (``x:1: budget``)."""
    failures: list[str] = field(default_factory=list)
    """Rounds that could not run, with why (the baseline trace failed, a stall ...)."""
    trace_output: str = ""
    """What the function printed while the probes traced it (bounded)."""

    def dim(self, param: str, dim: int) -> DimEvidence | None:
        return next((d for d in self.dims if d.key == (param, dim)), None)

    def number(self, param: str) -> NumberEvidence | None:
        return next((n for n in self.numbers if n.param == param), None)


@dataclass
class ProbeStats:
    """The probes of a whole profile: how many, how long, what the budget left out."""

    enabled: bool = True
    budget_s: float | None = None
    """Seconds allowed per recorded process (None: no limit)."""
    processes: int = 1
    rounds: int = 0
    probes: int = 0
    time_s: float = 0.0
    skipped_rounds: int = 0
    """Rounds not run (or cut short) because the budget was spent."""
    skipped_functions: list[str] = field(default_factory=list)
    failures: int = 0
    note: str | None = None
    """Why probes did not run at all (disabled, no ``os.fork`` on this platform)."""
    probed_objects: int = 0
    """Instances whose methods were probed (a round runs while they are alive)..."""
    alive_at_exit: int = 0
    """... and how many of them were still alive when the profile was written: the
    measure of what probing only at exit would have missed."""

    def summary(self) -> str:
        """One line for ``autosig profile`` and ``explain``."""
        if not self.enabled:
            return f"probes: off ({self.note or 'disabled'})"
        budget = "no limit" if self.budget_s is None else f"budget {self.budget_s:g} s"
        text = (
            f"probes: {self.probes} trace{'s' if self.probes != 1 else ''} in "
            f"{self.rounds} round{'s' if self.rounds != 1 else ''}, {self.time_s:.2f} s "
            f"({budget} per process)"
        )
        if self.skipped_rounds:
            names = ", ".join(self.skipped_functions[:3])
            more = "" if len(self.skipped_functions) <= 3 else ", ..."
            text += f"; {self.skipped_rounds} skipped for the budget ({names}{more})"
        if self.failures:
            text += f"; {self.failures} could not run"
        if self.note:
            text += f"; {self.note}"
        return text


# -- combining evidence ---------------------------------------------------------------


def _union(a: list[Any], b: list[Any], limit: int | None = None) -> list[Any]:
    out = list(dict.fromkeys([*a, *b]))
    return out if limit is None else out[:limit]


def merge_dim(a: DimEvidence, b: DimEvidence) -> DimEvidence:
    """Two verdicts on one dimension (rounds, instances, processes, runs).

    Agreeing verdicts add up; ``free`` and ``bounded`` are ``bounded`` (one probe saw a
    size the code rejects). ``fixed`` at two different sizes means the size depends on
    the instance or run, and anything but agreement between ``free`` and ``fixed`` is a
    dimension the code ties to something the probes did not see: both become ``read``,
    the conservative verdict (the dimension stays fixed). ``unknown`` yields to the other.
    """
    probed = _union(a.probed, b.probed)
    tied = _union(a.tied, b.tied)
    builds = [x for x in (a.relaxed_builds, b.relaxed_builds) if x is not None]
    relaxed = all(builds) if builds else None
    if a.verdict == "unknown" or b.verdict == "unknown":
        known = b if a.verdict == "unknown" else a
        return _with(known, probed=probed, tied=tied, varied=a.varied or b.varied)
    if a.verdict == b.verdict and (a.verdict != "fixed" or a.size == b.size):
        return _with(
            a, probed=probed, tied=tied, varied=a.varied or b.varied, probes=a.probes + b.probes
        )
    if {a.verdict, b.verdict} == {"free", "bounded"}:  # one probe saw a size fail
        bounded = a if a.verdict == "bounded" else b
        return _with(
            bounded,
            probed=probed,
            tied=tied,
            varied=a.varied or b.varied,
            probes=a.probes + b.probes,
            relaxed_builds=relaxed,
        )
    if a.verdict == "read" or b.verdict == "read":
        first = a if a.verdict == "read" else b
        return _with(
            first, probed=probed, tied=tied, varied=a.varied or b.varied, probes=a.probes + b.probes
        )
    if a.verdict == b.verdict == "fixed":
        reason = f"fixed at {a.size} in one probe and at {b.size} in another: the size depends on the instance or run"
    else:
        reason = f"{a.verdict} at size {a.size}, {b.verdict} at size {b.size}: the probes disagree"
    return DimEvidence(
        param=a.param,
        dim=a.dim,
        verdict="read",
        size=a.size,
        varied=True if a.size != b.size else a.varied or b.varied,
        probed=probed,
        tied=tied,
        reason=reason,
        error=a.error or b.error,
        where=a.where or b.where,
        probes=a.probes + b.probes,
        relaxed_builds=relaxed,
    )


def _with(d: DimEvidence, **changes: Any) -> DimEvidence:
    values = {**d.__dict__, **changes}
    return DimEvidence(**values)


def merge_number(a: NumberEvidence, b: NumberEvidence) -> NumberEvidence:
    """Two observations of one Python number: values pooled; the graph facts must agree.

    A probe that found nothing (``unknown``) or no use (``unused``) yields to one that
    found the dtype; two that found different dtypes are a ``conflict`` (no dtype).
    """
    graph = (
        "dtype",
        "dtype_from",
        "spec_matches",
        "builds",
        "reason",
        "where",
        "follows",
        "kept_with",
        "dtype_probes",
    )
    weak = ("unknown", "unused")
    if (
        a.dtype_from in weak
        and b.dtype_from not in weak
        or (a.dtype_from == "unknown" and b.dtype_from == "unused")
    ):
        first, second = b, a
    else:
        first, second = a, b
    out = NumberEvidence(**{**a.__dict__, **{k: getattr(first, k) for k in graph}})
    out.builds = list(first.builds)
    if second.dtype_from not in weak and (first.dtype, first.spec_matches) != (
        second.dtype,
        second.spec_matches,
    ):
        out.dtype_from = "conflict"
        out.spec_matches = False
        out.dtype = first.dtype if first.dtype == second.dtype else None
        out.reason = (
            f"the probes disagree: {first.dtype} ({first.dtype_from}) and "
            f"{second.dtype} ({second.dtype_from})"
        )
        out.builds = [d for d in first.builds if d in second.builds]
    if a.follows is not None or b.follows is not None:  # followed in either: followed
        out.follows = sorted({*(a.follows or ()), *(b.follows or ())})
        out.kept_with = sorted({*a.kept_with, *b.kept_with} - set(out.follows))
        out.dtype_probes = sorted({*a.dtype_probes, *b.dtype_probes})
    out.count = a.count + b.count
    out.min = _pick(min, a.min, b.min)
    out.max = _pick(max, a.max, b.max)
    out.float32_exact = _both(a.float32_exact, b.float32_exact)
    out.float32_keeps_digits = _both(a.float32_keeps_digits, b.float32_keeps_digits)
    out.float32_max_abs_error = _pick(max, a.float32_max_abs_error, b.float32_max_abs_error)
    exceeds = [x for x in (a.exceeds_int32, b.exceeds_int32) if x is not None]
    out.exceeds_int32 = any(exceeds) if exceeds else None
    return out


def _pick(how: Any, a: Any, b: Any) -> Any:
    values = [x for x in (a, b) if x is not None]
    return how(values) if values else None


def _both(a: bool | None, b: bool | None) -> bool | None:
    values = [x for x in (a, b) if x is not None]
    return all(values) if values else None


def merge_random(a: RandomEvidence | None, b: RandomEvidence | None) -> RandomEvidence | None:
    if a is None or b is None:
        return a or b
    hidden = sorted(set(a.hidden) | set(b.hidden))
    generator = sorted(set(a.generator) | set(b.generator))
    steady = set(hidden) | set(generator)
    first = sorted((set(a.first_call_only) | set(b.first_call_only)) - steady)
    return RandomEvidence(hidden=hidden, generator=generator, first_call_only=first)


def merge_evidence(a: ProbeEvidence | None, b: ProbeEvidence | None) -> ProbeEvidence | None:
    """Evidence of one function from two rounds, processes or runs."""
    if a is None or b is None:
        return a or b
    dims = {d.key: d for d in a.dims}
    for d in b.dims:
        dims[d.key] = merge_dim(dims[d.key], d) if d.key in dims else d
    numbers = {n.param: n for n in a.numbers}
    for n in b.numbers:
        numbers[n.param] = merge_number(numbers[n.param], n) if n.param in numbers else n
    output = a.trace_output
    if len(output) < MAX_TRACE_OUTPUT and b.trace_output and b.trace_output not in output:
        output = (output + b.trace_output)[:MAX_TRACE_OUTPUT]
    probed = {d.label for d in dims.values()}
    skipped = [s for s in _union(a.skipped, b.skipped) if s.split(": ", 1)[0] not in probed]
    return ProbeEvidence(
        rounds=a.rounds + b.rounds,
        probes=a.probes + b.probes,
        time_s=a.time_s + b.time_s,
        baseline_ops=a.baseline_ops if a.baseline_ops is not None else b.baseline_ops,
        dims=sorted(dims.values(), key=lambda d: (d.param, d.dim)),
        numbers=list(numbers.values()),
        random=merge_random(a.random, b.random),
        skipped=skipped[:MAX_LISTED],
        failures=_union(a.failures, b.failures, MAX_LISTED),
        trace_output=output,
    )


def merge_stats(a: ProbeStats | None, b: ProbeStats | None) -> ProbeStats | None:
    if a is None or b is None:
        return a or b
    return ProbeStats(
        enabled=a.enabled or b.enabled,
        budget_s=a.budget_s if a.budget_s == b.budget_s else _pick(max, a.budget_s, b.budget_s),
        processes=a.processes + b.processes,
        rounds=a.rounds + b.rounds,
        probes=a.probes + b.probes,
        time_s=a.time_s + b.time_s,
        skipped_rounds=a.skipped_rounds + b.skipped_rounds,
        skipped_functions=_union(a.skipped_functions, b.skipped_functions, MAX_LISTED),
        failures=a.failures + b.failures,
        note=a.note if a.note == b.note else (a.note or b.note),
        probed_objects=a.probed_objects + b.probed_objects,
        alive_at_exit=a.alive_at_exit + b.alive_at_exit,
    )


# -- JSON -------------------------------------------------------------------------------


def evidence_from_json(d: dict[str, Any] | None) -> ProbeEvidence | None:
    if d is None:
        return None
    random = d.get("random")
    return ProbeEvidence(
        rounds=int(d.get("rounds", 0)),
        probes=int(d.get("probes", 0)),
        time_s=float(d.get("time_s") or 0.0),
        baseline_ops=d.get("baseline_ops"),
        dims=[DimEvidence(**x) for x in d.get("dims", [])],
        numbers=[_number_from_json(x) for x in d.get("numbers", [])],
        random=None if random is None else RandomEvidence(**random),
        skipped=[str(x) for x in d.get("skipped", [])],
        failures=[str(x) for x in d.get("failures", [])],
        trace_output=str(d.get("trace_output", "")),
    )


def _number_from_json(d: dict[str, Any]) -> NumberEvidence:
    values = dict(d)
    for name in ("min", "max", "float32_max_abs_error"):
        if isinstance(values.get(name), float) and not math.isfinite(values[name]):
            values[name] = None
    return NumberEvidence(**values)


def stats_from_json(d: dict[str, Any] | None) -> ProbeStats | None:
    return None if d is None else ProbeStats(**d)

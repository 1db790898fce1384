"""Which Python numbers (and strings) a signature takes as scalar tensors.

A Python int the code uses as a range bound, a shape or an index must stay a Python
value; one it only feeds to TensorFlow ops takes a ``TensorSpec([], dtype)`` with the
dtype the ops need: int64 for a summary step or where Python arithmetic on it may leave
int32 range (``step * 1000003``: an int32 tensor wraps around, a Python int does not).

A string parameter that is also returned: a ``tf.string`` spec only as an unsafe fix.

A path string used only by TensorFlow ops (``tf.io.write_file(path, ...)``) takes a
``tf.TensorSpec([], tf.string)`` safely. When the function also returns it, callers
get a scalar ``bytes`` tensor where they got a ``str``: their comparisons, formatting
and ``os.path`` calls change. That is still what most users want (one trace instead of
one per path), so it is offered as an unsafe fix whose warning says exactly that.

Python-value parameters the analysis cannot decide, and what ``fix --verify`` does.

Most uses that keep a parameter a Python value are certain (``range(n)``, an f-string,
``axis=n``). Some are not: a call autosig cannot follow, an argument it does not know,
an index into something it cannot tell from a tensor. A wrong guess there fails loudly
or changes outputs, both of which verification sees. So ``fix --verify
--unsafe-fixes`` tries such a parameter as a scalar tensor and keeps it only when the
rewritten program verifies on the profiled calls; without them the report says that
they could settle it. The fix is unsafe: the profiled calls are evidence, not a proof
that every other value the original accepts behaves the same (``mylib.pick(x, k)``
may branch on ``k`` in a way no profiled value reached).
"""

from __future__ import annotations

from autosig.analysis.python_values import RETURNED_STRING, NumberFacts, number_facts
from autosig.infer.observations import ParamResult
from autosig.infer.plan import Blocker
from autosig.infer.probe_evidence import NumberProof, ProbeProofs
from autosig.infer.specs import TensorSpecNode
from autosig.source.discover import FunctionSite, Source
from autosig.source.project_modules import ModuleResolver

EXPONENT = (
    "it is an exponent ({code}): TensorFlow computes a power by a constant exponent "
    "differently from one by a tensor (measured: 9.0 ** 2 is 81.0 with the constant, "
    "81.0000076 with a float32 scalar tensor), so a tensor changes results"
)
SETTLE_HINT = (
    "; the analysis cannot decide, and `autosig fix --verify --unsafe-fixes` could "
    "settle it (it tries `{name}` as a tensor and keeps that only if verification "
    "passes on the profiled calls, an unsafe fix: evidence, not proof)"
)
"""Appended to the blocker of an undecided parameter when not trying it."""
TRIED_REASON = (
    "`{name}` tried as a tensor although the analysis cannot decide "
    "({use}): kept only if verification passes on the profiled calls"
)
"""The plan's reason for a parameter tensorized on trial (``fix --verify``)."""
TRIED_WARNING = (
    "`{name}` is a tensor on trial: verification on the profiled calls is evidence, "
    "not a proof that every other value behaves the same"
)
"""Why a parameter tensorized on trial makes the fix unsafe."""
RETURNED_WARNING = (
    "`{name}` is returned (`{code}`, line {line}): with a tf.string "
    "spec the function returns a scalar bytes tensor where it returned a str"
)
"""The unsafe fix's warning for a string whose only use needing a Python value is
returning it: the return type changes."""


def decide_python_params(
    source: Source,
    site: FunctionSite,
    results: list[ParamResult],
    proofs: ProbeProofs,
    modules: ModuleResolver | None = None,
    try_uncertain: bool = False,
    short: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """Tensorize Python scalars the code uses only where a tensor can go; returns the
    plan's reason for each parameter tensorized on trial (``try_uncertain``), by name.

    The Python-value analysis is asked once for what holds whatever the dtypes
    (``python_values.number_facts``: the dtypes TensorFlow arguments and int32 overflow
    require, how each number is read), then, once the dtypes are planned, for the uses
    that keep a number a Python value (``NumberFacts.uses_with``).

    ``short``: in a profile too short to show the domain
    (``action.MIN_CALLS_FOR_DEFAULTS``), the parameters every call passed a Python int:
    one that only ever becomes a float32 takes a float32 spec (a float the original
    accepts fits), and one an int64 spec computes the same for takes int64 (a value past
    int32 the original takes exactly does not wrap): ``_widen_for_domain``.

    ``proofs``: what the profile's probes proved (``probe_evidence.probe_proofs``); where they
    show the dtype TensorFlow gave a number in the original graph, the spec takes that
    dtype, and a number no scalar spec reproduces the graph for stays a Python value.

    ``modules`` (``autosig.source.project_modules.ProjectModules``) lets the analysis follow calls
    into other project modules; without it only same-module functions are followed.
    ``try_uncertain``: also tensorize those whose every use the analysis cannot decide
    (``fix --verify``); otherwise their blocker says that ``--verify`` could settle it.
    """
    candidates = [r for r in results if r.blocker is None and r.leaf.python is not None]
    if not candidates:
        return {}
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
    facts = number_facts(source.wrapper, function, names, tensor_params, dtypes, observed, modules)
    for r in candidates:
        assert r.leaf.python is not None
        needed = facts.required.get(r.info.name)
        if needed and r.leaf.python.dtype in ("int32", "int64"):
            r.leaf.python.dtype = needed
            dtypes[r.info.name] = needed
    unmatched: dict[str, NumberProof] = {}
    """Numbers no scalar spec reproduces the graph for: Python values, unless the
    analysis keeps them for its own reason first (its words are the better ones)."""
    for r in candidates:
        proof = proofs.numbers.get(r.info.name)
        dtype = _probed_dtype(r, proof)
        if dtype is not None:
            dtypes[r.info.name] = dtype
        elif proof is not None and proof.dtype is None and r.probe_reason is None:
            unmatched[r.info.name] = proof
    seeds: list[ParamResult] = []
    if short and not any(r.leaf.object_type for r in results):
        # (an object keeps a signature out: the call sites pass the values, and
        # their domain is the recorded calls themselves)
        seeds = _widen_for_domain(facts, [r for r in candidates if r.info.name in short], dtypes)
    found = facts.uses_with(dtypes, converted, widen=[r.info.name for r in seeds])
    for r in seeds:
        if r.info.name in found.int64:
            assert r.leaf.python is not None
            r.leaf.python.dtype = dtypes[r.info.name] = "int64"
            r.probe_reason = (
                f"`{r.info.name}`: a scalar int64 spec: a profile this short does not show the "
                "values stay in int32 (an int32 spec wraps a larger one silently, the original "
                "converts it to int64), and no use computes otherwise with int64"
            )
    tried: dict[str, str] = {}
    for r in candidates:
        assert r.leaf.python is not None
        name = r.info.name
        uses = found.uses.get(name, [])
        unsure = name in found.undecided
        why: str | None = None
        if uses and try_uncertain and unsure:
            r.tried = uses
            r.warning = TRIED_WARNING.format(name=name)
            r.spec = TensorSpecNode((), r.leaf.python.dtype)
            tried[name] = TRIED_REASON.format(name=name, use=uses[0].describe())
        elif (
            uses
            and all(use.why == RETURNED_STRING for use in uses)
            and r.leaf.python.dtype == "string"
        ):
            code, line = uses[0].code, uses[0].line
            r.warning = RETURNED_WARNING.format(name=name, code=code, line=line)
            r.spec = TensorSpecNode((), "string")
        elif uses:
            r.python_uses = uses
            why = uses[0].describe() + (SETTLE_HINT.format(name=name) if unsure else "")
        elif (power := facts.reads[name].exponent) is not None:
            why = EXPONENT.format(code=power)
        elif name in unmatched:
            why = unmatched[name].why
        else:
            r.spec = TensorSpecNode((), r.leaf.python.dtype)
        if why is not None:
            r.blocker = Blocker.stated(
                name, "python_use", f"`{name}`", f"must stay a Python value: {why}", use=why
            )
    return tried


# -- the domain a short profile does not show ----------------------------------------


def _widen_for_domain(
    facts: NumberFacts, candidates: list[ParamResult], dtypes: dict[str, str]
) -> list[ParamResult]:
    """Int-only numbers of a short profile: the spec that also takes what the profile did
    not show (a float later, an int past int32), where it computes the same on the ints.

    float32 where every use of the number is a cast to float32 (``tf.cast(n,
    tf.float32)``, ``tf.cast(n, x.dtype)`` of a float32 tensor ``x``,
    ``tf.image.adjust_brightness(image, n)`` of a float32 image): TensorFlow converts an
    int and its float32 spec to the same float32 (one rounding from the exact int), and
    a Python float to the float32 the spec makes. Returned, to widen to int64: the seeds
    (read inside a ``seed=`` argument), which int64 takes where the Python-value analysis
    finds no use an int64 tensor changes (it checks what the int32 conversion gave: a
    cast, a shape, a stateless seed, an int64 partner; ``NumberFacts.uses_with``): an int32
    spec would wrap a larger value silently, where the original converts it to int64.
    """
    ints = [
        r
        for r in candidates
        if r.leaf.python is not None
        and set(r.leaf.python.types) == {"int"}
        and dtypes.get(r.info.name) == "int32"
    ]
    for r in list(ints):
        assert r.leaf.python is not None
        casts = facts.reads[r.info.name].float32_casts
        if casts is not None and all(dtypes.get(x) == "float32" for x in casts):
            r.leaf.python.dtype = dtypes[r.info.name] = "float32"
            r.probe_reason = (
                f"`{r.info.name}`: a scalar float32 spec: only ints seen, in a profile too "
                "short to show no float comes, and every use casts it to float32 (the same "
                "float32 for an int; a float fits)"
            )
            ints.remove(r)
    return [r for r in ints if facts.reads[r.info.name].seed]


# -- the probes' dtype --------------------------------------------------------------


def _probed_dtype(r: ParamResult, proof: NumberProof | None) -> str | None:
    """Apply the probes' evidence to Python number ``r``: its dtype (None: no change).

    The dtype TensorFlow gave the number in the original graph, when a scalar spec of it
    reproduces that graph (widened to int64 where the values or the Python-value analysis
    need it: int32 arithmetic wraps where Python's does not). No scalar spec reproduces
    the graph: the caller keeps it a Python value (a timestamp Python subtracts in
    float64), unless it is an int the analysis already widened to int64 (exact).
    """
    python = r.leaf.python
    if proof is None or python is None or python.dtype == "string":
        return None
    name = r.info.name
    if proof.dtype == "":
        r.probe_reason = f"`{name}`: a scalar {python.dtype} spec ({proof.why})"
        return None
    if proof.dtype is not None:
        dtype = proof.dtype
        if python.dtype == "int64" and dtype == "int32" or proof.evidence.exceeds_int32:
            dtype = "int64" if dtype in ("int32", "int64") else dtype
        python.dtype = dtype
        r.probe_reason = f"`{name}`: a scalar {dtype} spec ({proof.why})"
        return dtype
    if python.dtype == "int64" and set(python.types) == {"int"}:
        r.probe_reason = (
            f"`{name}`: a scalar int64 spec: Python computes on it before TensorFlow sees "
            f"it, exactly as int64 arithmetic does ({proof.why})"
        )
        return None
    return None

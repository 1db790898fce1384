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

from collections.abc import Sequence

import libcst as cst

from autosig.analysis.python_values import (
    RETURNED_STRING,
    PythonUse,
    python_only_uses,
    required_dtypes,
)
from autosig.infer.observations import ParamResult
from autosig.infer.plan import Blocker
from autosig.infer.probe_evidence import NumberProof, number_proof
from autosig.infer.specs import TensorSpecNode
from autosig.profile.evidence import ProbeEvidence
from autosig.source.discover import FunctionSite, Source
from autosig.source.metadata import MetadataView, iter_tree
from autosig.source.project_modules import ModuleResolver


def decide_python_params(
    source: Source,
    site: FunctionSite,
    results: list[ParamResult],
    modules: ModuleResolver | None = None,
    try_uncertain: bool = False,
    probe: ProbeEvidence | None = None,
    short: frozenset[str] = frozenset(),
) -> None:
    """Tensorize Python scalars the code uses only where a tensor can go.

    ``short``: in a profile too short to show the domain
    (``action.MIN_CALLS_FOR_DEFAULTS``), the parameters every call passed a Python int:
    one that only ever becomes a float32 takes a float32 spec (a float the original
    accepts fits), and one an int64 spec computes the same for takes int64 (a value past
    int32 the original takes exactly does not wrap): ``widen_for_domain``.

    ``probe``: the profile's probe evidence for the function; where it shows the dtype
    TensorFlow gave a number in the original graph, the spec takes that dtype, and a
    number no scalar spec reproduces the graph for stays a Python value
    (``probe_evidence.number_proof``).

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
    unmatched: dict[str, NumberProof] = {}
    """Numbers no scalar spec reproduces the graph for: Python values, unless the
    analysis keeps them for its own reason first (its words are the better ones)."""
    for r in candidates:
        proof = number_proof(probe, r.info.name)
        dtype = _probed_dtype(r, proof)
        if dtype is not None:
            dtypes[r.info.name] = dtype
        elif proof is not None and proof.dtype is None and r.probe_reason is None:
            unmatched[r.info.name] = proof
    if short and not any(r.leaf.object_type for r in results):
        # (an object keeps a signature out: the call sites pass the values, and
        # their domain is the recorded calls themselves)
        widen_for_domain(
            source,
            function,
            [r for r in candidates if r.info.name in short],
            dtypes,
            tensor_params,
            observed,
            converted,
            modules,
        )
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
        elif (power := _exponent(source.wrapper, function, r.info.name)) is not None:
            r.blocker = Blocker.stated(
                r.info.name,
                "python_use",
                f"`{r.info.name}`",
                f"must stay a Python value: {power}",
                use=power,
            )
        elif r.info.name in unmatched:
            why = unmatched[r.info.name].why
            r.blocker = Blocker.stated(
                r.info.name,
                "python_use",
                f"`{r.info.name}`",
                f"must stay a Python value: {why}",
                use=why,
            )
        else:
            r.spec = TensorSpecNode((), r.leaf.python.dtype)


# -- exponents ------------------------------------------------------------------------

POW_APIS = frozenset(
    {
        "tensorflow.math.pow",
        "tensorflow.pow",
        "tensorflow.experimental.numpy.power",
        "builtins.pow",
    }
)
EXPONENT = (
    "it is an exponent ({code}): TensorFlow computes a power by a constant exponent "
    "differently from one by a tensor (measured: 9.0 ** 2 is 81.0 with the constant, "
    "81.0000076 with a float32 scalar tensor), so a tensor changes results"
)


def _exponent(wrapper, function: cst.FunctionDef | cst.Lambda, name: str) -> str | None:  # noqa: ANN001
    """Why ``name`` must stay a Python value as an exponent (``x ** n``,
    ``tf.math.pow(x, n)``), read directly in ``function``; None when it is not one."""
    view = MetadataView(wrapper)
    for node in iter_tree(function.body):
        if not (isinstance(node, cst.Name) and node.value == name and _is_read(view, node)):
            continue
        parent = view.parent(node)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Power):
            if parent.right is node:
                return EXPONENT.format(code=view.code(parent))
        if isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.PowerAssign):
            if parent.value is node:
                return EXPONENT.format(code=view.code(parent).strip())
        call = view.parent(parent) if isinstance(parent, cst.Arg) else None
        if isinstance(call, cst.Call) and view.qualified_names(call.func) & POW_APIS:
            assert isinstance(parent, cst.Arg)
            index = list(call.args).index(parent)
            keyword = parent.keyword.value if parent.keyword is not None else None
            if keyword in ("y", "exp", "x2") or (keyword is None and index == 1):
                return EXPONENT.format(code=view.code(call))
    return None


# -- the domain a short profile does not show ----------------------------------------

FLOAT32_NAMES = frozenset({"tensorflow.float32", "tensorflow.dtypes.float32"})
CASTS = frozenset({"tensorflow.cast", "tensorflow.dtypes.cast"})
CAST_TO_IMAGE_DTYPE = {"tensorflow.image.adjust_brightness": (1, "delta")}
"""APIs that cast a number argument (position, keyword) to their image's dtype
(``math_ops.cast(delta, image.dtype)`` for float16/float32 images)."""


def widen_for_domain(
    source: Source,
    function: cst.FunctionDef | cst.Lambda,
    candidates: list[ParamResult],
    dtypes: dict[str, str],
    tensor_params: list[str],
    observed: dict[str, int],
    converted: dict[str, str],
    modules: ModuleResolver | None,
) -> None:
    """Int-only numbers of a short profile: the spec that also takes what the profile did
    not show (a float later, an int past int32), where it computes the same on the ints.

    float32 where every use of the number is a cast to float32 (``tf.cast(n,
    tf.float32)``, ``tf.cast(n, x.dtype)`` of a float32 tensor ``x``,
    ``tf.image.adjust_brightness(image, n)`` of a float32 image): TensorFlow converts an
    int and its float32 spec to the same float32 (one rounding from the exact int), and
    a Python float to the float32 the spec makes. int64 for a seed (read inside a
    ``seed=`` argument) where the Python-value analysis finds no use an int64 tensor
    changes (it checks what the int32 conversion gave: a
    cast, a shape, a stateless seed, an int64 partner): an int32 spec would wrap a larger
    value silently, where the original converts it to int64.
    """
    assert source.wrapper is not None
    view = MetadataView(source.wrapper)
    ints = [
        r
        for r in candidates
        if r.leaf.python is not None
        and set(r.leaf.python.types) == {"int"}
        and dtypes.get(r.info.name) == "int32"
    ]
    for r in list(ints):
        assert r.leaf.python is not None
        if _only_float32_casts(view, function, r.info.name, dtypes):
            r.leaf.python.dtype = dtypes[r.info.name] = "float32"
            r.probe_reason = (
                f"`{r.info.name}`: a scalar float32 spec: only ints seen, in a profile too "
                "short to show no float comes, and every use casts it to float32 (the same "
                "float32 for an int; a float fits)"
            )
            ints.remove(r)
    if not ints:
        return
    ints = [r for r in ints if _seeds(view, function, r.info.name)]
    if not ints:
        return
    names = [r.info.name for r in ints]
    wide = dict(dtypes, **dict.fromkeys(names, "int64"))
    base = python_only_uses(
        source.wrapper, function, names, tensor_params, dtypes, observed, converted, modules
    )
    widened = python_only_uses(
        source.wrapper, function, names, tensor_params, wide, observed, converted, modules
    )
    for r in ints:
        assert r.leaf.python is not None
        if base.get(r.info.name) or widened.get(r.info.name):
            continue
        r.leaf.python.dtype = dtypes[r.info.name] = "int64"
        r.probe_reason = (
            f"`{r.info.name}`: a scalar int64 spec: a profile this short does not show the "
            "values stay in int32 (an int32 spec wraps a larger one silently, the original "
            "converts it to int64), and no use computes otherwise with int64"
        )


def _seeds(view: MetadataView, function: cst.FunctionDef | cst.Lambda, name: str) -> bool:
    """``name`` is read inside a ``seed=`` argument (``seed=[seed, 1]``): a seed, hashed
    or counted, whose values a short profile does not bound."""
    for node in iter_tree(function.body):
        if isinstance(node, cst.Name) and node.value == name and _is_read(view, node):
            for ancestor in view.ancestors(node):
                if isinstance(ancestor, cst.Arg) and ancestor.keyword is not None:
                    if ancestor.keyword.value == "seed":
                        return True
                if ancestor is function:
                    break
    return False


def _only_float32_casts(
    view: MetadataView, function: cst.FunctionDef | cst.Lambda, name: str, dtypes: dict[str, str]
) -> bool:
    """Every read of parameter ``name`` in ``function`` is the number a float32 cast takes."""
    body = function.body
    reads = [
        node
        for node in iter_tree(body)
        if isinstance(node, cst.Name) and node.value == name and _is_read(view, node)
    ]
    if not reads:
        return False
    return all(_cast_to_float32(view, node, dtypes) for node in reads)


def _is_read(view: MetadataView, node: cst.Name) -> bool:
    parent = view.parent(node)
    if isinstance(parent, cst.AssignTarget) or (
        isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node
    ):
        return False
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return False
    return not (isinstance(parent, cst.Arg) and parent.keyword is node)


def _cast_to_float32(view: MetadataView, node: cst.Name, dtypes: dict[str, str]) -> bool:
    arg = view.parent(node)
    call = view.parent(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(arg, cst.Arg) or not isinstance(call, cst.Call) or arg.value is not node:
        return False
    names = view.qualified_names(call.func)
    index = call.args.index(arg)
    keyword = arg.keyword.value if arg.keyword is not None else None
    if names & CASTS:
        if not (keyword == "x" or (keyword is None and index == 0)):
            return False
        target = next(
            (a.value for a in call.args if a.keyword and a.keyword.value == "dtype"), None
        )
        positional = [a.value for a in call.args if a.keyword is None]
        if target is None and len(positional) > 1:
            target = positional[1]
        return target is not None and _float32_dtype(view, target, dtypes)
    for api, (position, word) in CAST_TO_IMAGE_DTYPE.items():
        if api in names and (keyword == word or (keyword is None and index == position)):
            image = call.args[0].value if call.args and call.args[0].keyword is None else None
            return isinstance(image, cst.Name) and dtypes.get(image.value) == "float32"
    return False


def _float32_dtype(view: MetadataView, node: cst.BaseExpression, dtypes: dict[str, str]) -> bool:
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value == "float32"
    if view.qualified_names(node) & FLOAT32_NAMES:
        return True
    return (
        isinstance(node, cst.Attribute)
        and node.attr.value == "dtype"
        and isinstance(node.value, cst.Name)
        and dtypes.get(node.value.value) == "float32"
    )


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


# -- strings returned as they came --------------------------------------------------


def returned_only(uses: Sequence[PythonUse]) -> bool:
    """The parameter's only uses that need a Python value are returning it."""
    return bool(uses) and all(use.why == RETURNED_STRING for use in uses)


def returned_warning(name: str, uses: Sequence[PythonUse]) -> str:
    """The unsafe fix's warning: the return type changes."""
    return (
        f"`{name}` is returned (`{uses[0].code}`, line {uses[0].line}): with a tf.string "
        "spec the function returns a scalar bytes tensor where it returned a str"
    )


# -- uses the analysis cannot decide -----------------------------------------------


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

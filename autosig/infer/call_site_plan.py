"""The call-site plan: callers pass ``tf.constant(value, dtype)`` where no signature can.

A function with an object among its arguments (a Keras model, a callable) gets no
input_signature, and every new value of a Python int, float or string argument is a new
trace (explain(model, images, class_index) called once per class). Where the
Python-value analysis found that the function's code uses such a parameter only where a
tensor works the same (decide_python_params left it a scalar spec), its callers can pass
tf.constant(value, dtype) instead: one trace for every value. Offered only where it
removes traces (not when each retrace brings a new object) and only for the call sites
the profile recorded in editable files; rewrite/call_sites.py makes the edits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from autosig.infer.observations import ParamResult
from autosig.infer.plan import (
    Action,
    ArgumentPosition,
    CallSitePlan,
    TensorizedParam,
    sites_text,
)
from autosig.infer.probe_evidence import ProbeProofs
from autosig.infer.specs import DictNode, ListNode, SpecNode, TupleNode
from autosig.profile.evidence import NumberEvidence
from autosig.profile.format import FunctionRecord
from autosig.text import plural

POSITIONAL_KINDS = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")


def plan_call_sites(
    record: FunctionRecord,
    results: list[ParamResult],
    action: Action,
    proofs: ProbeProofs,
    narrowed: bool = False,
) -> tuple[CallSitePlan | None, list[str]]:
    """The call-site plan of a function that gets no signature, and the reasons said.

    ``results`` are the parameters after ``decide_python_params`` decided which Python
    values may become tensors; ``action`` is the decorator decision (a signature makes
    call sites moot); ``proofs``, the function's probe evidence read once. ``narrowed``: a signature was planned but not written, because
    nothing shows the domain of its tensor parameters (``guarded_trace.settle``): the
    Python numbers it would have taken as tensors are passed as tensors by the callers
    instead. A number whose dtype may follow a tensor parameter's (``_coupled``): the
    number's own dtype is fixed by ``tf.constant``, where a Python number adapts to the
    tensor it meets. Then, with ``narrowed``, no plan (the unsafe route is the signature,
    and the safe default stays safe), else a warning on its result (the plan is unsafe).
    Returns (None, []) where call
    sites are not the remedy at all, and (None, [why]) where they would be but cannot be
    used.
    """
    if action == "signature":
        return None, []
    objects = [r for r in results if r.blocker is not None and r.leaf.object_type is not None]
    if not objects and not narrowed:
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
    probed = {r.info.name: proofs.recorded_numbers.get(r.info.name) for r in scalars}
    params = tuple(_with_follows(record, p, probed[p.name]) for p in params)
    coupled = {p.name: _coupled(p, results, probed[p.name]) for p in params}
    if narrowed and any(coupled.values()):
        # the unsafe route is the signature itself (``--unsafe-fixes``); the safe fix
        # (reduce_retracing) stays safe without the call-site tensors
        why = next(w for w in coupled.values() if w)
        return None, [f"no call-site tensors as a safe fix: {why}"]
    for r in scalars:
        warning = coupled[r.info.name]
        if warning is not None:
            r.warning = "; ".join(w for w in (r.warning, warning) if w)
    unrecorded = sum(s.calls for s in record.call_sites if s not in sites)
    plan = CallSitePlan(
        callee=record.callee,
        params=params,
        sites=sites,
        unrecorded=unrecorded + record.call_sites_dropped,
    )
    blocking = objects[0].info.name if objects else None
    return plan, [describe_call_sites(plan, blocking)]


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


def _coupled(
    param: TensorizedParam, results: list[ParamResult], probed: NumberEvidence | None = None
) -> str | None:
    """Why ``tf.constant(value, dtype)`` may break a call the original accepts (None: the
    number's dtype does not follow a tensor parameter). A Python number is weakly typed:
    in ``x * k`` it takes ``x``'s dtype, so a float64 ``x`` works in the original, where a
    float32 tensor ``k`` raises. The profile shows the tensor parameters' dtypes only in
    the calls recorded: where one of them has the number's dtype, the number may follow
    it (a number whose dtype no tensor parameter has, an int index beside float images,
    or a function whose only tensors are such numbers, keeps its dtype whatever the
    tensors'). ``probed``: the probe traced each such parameter at other dtypes
    (``Round.dtype_coupling``). Where the number followed one, its dtype is that
    argument's: a call site passes it where the code there fixes the argument's dtype
    (``TensorizedParam.follows``). Where it kept its dtype, it meets something else of
    that dtype (a variable, a model's output), the probed instance's: no evidence."""
    if param.dtype == "string":
        return None
    same = [
        r.info.name
        for r in results
        if r.spec is not None
        and r.leaf.python is None
        and any(getattr(n, "dtype", None) == param.dtype for n in _spec_nodes(r.spec))
    ]
    if not same:
        return None
    if probed is not None and probed.follows is not None and probed.dtype == param.dtype:
        followed = [name for name in same if any(_within(p, name) for p in probed.follows)]
        if followed and not param.follows:
            return (
                f"`{param.name}` passed as a {param.dtype} tensor would break calls the "
                f"original accepts: the probe traced `{followed[0]}` at another dtype and "
                f"`{param.name}` followed it (a Python number takes the dtype of the tensor "
                f"it meets), where a {param.dtype} tensor raises"
            )
        kept = [n for n in same if any(_within(p, n) for p in probed.kept_with)]
        if followed and set(followed) | set(kept) == set(same):
            return None  # only where the call site fixes their dtype (``param.follows``)
        if kept:
            # review5: what it meets instead (a model's output, a variable) is the probed
            # instance's: another instance or a Keras dtype policy may give it another
            return (
                f"`{param.name}` passed as a {param.dtype} tensor may break calls the "
                f"original accepts: the probe saw it keep {param.dtype} beside `{kept[0]}` "
                "at other dtypes, so it meets something else of that dtype (a variable, a "
                "model's output), which another instance or a Keras dtype policy may make "
                "another dtype (a Python number adapts to it, a tensor raises)"
            )
    return (
        f"`{param.name}` passed as a {param.dtype} tensor may break calls the original "
        f"accepts: a Python number takes the dtype of the tensor it meets, and `{same[0]}` "
        f"had that dtype ({param.dtype}) in every recorded call, which nothing shows is its "
        f"only one (another dtype of `{same[0]}` then meets a {param.dtype} tensor and raises)"
    )


def _with_follows(
    record: FunctionRecord, param: TensorizedParam, probed: NumberEvidence | None
) -> TensorizedParam:
    """``param`` with the top-level tensor parameters the probe saw its dtype follow,
    where each is passed by position or name (a call site then shows their dtype)."""
    if probed is None or not probed.follows or probed.dtype != param.dtype:
        return param
    names = list(dict.fromkeys(_top(path) for path in probed.follows))
    if any(_top(path) != path for path in probed.follows):
        return param  # a leaf inside a structure: no argument shows its dtype
    follows = tuple(ArgumentPosition(name, *_position(record, name)) for name in names)
    return dataclasses.replace(param, follows=tuple(follows))


def _top(path: str) -> str:
    """``batch['x']`` -> ``batch``: the parameter an argument path belongs to."""
    return path.split("[", 1)[0].split(".", 1)[0]


def _within(path: str, name: str) -> bool:
    """Argument path ``path`` (``x``, ``batch['x']``, ``pair[0]``) is parameter ``name``'s."""
    return path == name or path.startswith((f"{name}[", f"{name}."))


def _spec_nodes(spec: SpecNode) -> Iterator[SpecNode]:
    yield spec
    if isinstance(spec, (TupleNode, ListNode)):
        for item in spec.items:
            yield from _spec_nodes(item)
    elif isinstance(spec, DictNode):
        for _, item in spec.items:
            yield from _spec_nodes(item)


def _tensorized_param(record: FunctionRecord, r: ParamResult) -> TensorizedParam:
    index, from_end = _position(record, r.info.name)
    assert r.leaf.python is not None
    python = r.leaf.python
    types = set(python.types)
    python_type = next(iter(types)) if len(types) == 1 else ""
    return TensorizedParam(
        r.info.name, index, python.dtype, python.describe(), from_end, python_type=python_type
    )


def _position(record: FunctionRecord, name: str) -> tuple[int | None, int | None]:
    """Parameter ``name``'s index among the positional parameters, and its index from
    the last where every call that does not raise fills them all (no ``*args``, a last
    positional parameter without default: ``TensorizedParam.from_end``)."""
    params = [p for p in record.params if p.kind in POSITIONAL_KINDS]
    positional = [p.name for p in params]
    index = positional.index(name) if name in positional else None
    filled = (
        index is not None
        and params[-1].default is None
        and not any(p.kind == "VAR_POSITIONAL" for p in record.params)
    )
    return index, (len(positional) - 1 - index if filled and index is not None else None)


def describe_call_sites(plan: CallSitePlan, blocking: str | None) -> str:
    """One reason line: what the call sites get and why the function gets no signature
    (``blocking``: the object parameter; None: the signature would narrow the domain)."""
    wraps = ", ".join(p.constant() for p in plan.params)
    why = (
        f"`{blocking}` keeps an input_signature out"
        if blocking is not None
        else "an input_signature would narrow its tensor parameters' domain"
    )
    only = "".join(
        f"; `{p.name}` only where the call shows "
        f"{' and '.join(f'`{f.name}`' for f in p.follows)} to be {p.dtype} (the probe saw "
        "its dtype follow theirs)"
        for p in plan.params
        if p.follows
    )
    return (
        f"call sites pass {wraps} ({plural(len(plan.sites), 'call site')}, "
        f"{sites_text(plan.sites)}): {why}, and the code uses these values only as "
        f"tensors, so every value shares one trace{only}"
    )

"""Property tests: an inferred signature accepts every call the profile saw, and no more
freedom than the calls (and the shape policy) justify."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autosig.infer.observations import InferOptions
from autosig.infer.planner import infer_function
from autosig.infer.specs import (
    TensorSpecNode,
    common_shape,
    relax_shape,
    shape_accepts,
    shape_supertype,
    spec_accepts,
)
from autosig.profile.format import CallSignature, FunctionRecord, ParamInfo

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

dims = st.one_of(st.integers(min_value=0, max_value=6), st.none())
shapes = st.one_of(st.none(), st.lists(dims, max_size=3).map(tuple))


# -- pure shape rules ----------------------------------------------------------------------


@SETTINGS
@given(shapes, shapes)
def test_supertype_is_commutative_and_accepts_both(a: Any, b: Any) -> None:
    s = shape_supertype(a, b)
    assert s == shape_supertype(b, a)
    assert shape_accepts(s, a) and shape_accepts(s, b)


@SETTINGS
@given(shapes, shapes, shapes)
def test_supertype_is_associative(a: Any, b: Any, c: Any) -> None:
    assert shape_supertype(shape_supertype(a, b), c) == shape_supertype(a, shape_supertype(b, c))


@SETTINGS
@given(st.lists(shapes, min_size=1, max_size=6))
def test_common_shape_is_the_most_specific(all_shapes: list[Any]) -> None:
    s = common_shape(all_shapes)
    assert all(shape_accepts(s, x) for x in all_shapes)
    # Most specific: any shape accepting all of them also accepts s.
    for candidate in all_shapes + [s]:
        if all(shape_accepts(candidate, x) for x in all_shapes):
            assert shape_accepts(candidate, s)


@SETTINGS
@given(shapes, st.sampled_from(["none", "batch", "all"]))
def test_relax_keeps_rank_and_accepts_the_original(shape: Any, policy: str) -> None:
    relaxed = relax_shape(shape, policy)
    assert shape_accepts(relaxed, shape)
    assert (relaxed is None) == (shape is None)
    if shape is not None:
        assert len(relaxed) == len(shape)


# -- whole profiles ---------------------------------------------------------------------------

DTYPES = ["float32", "int32", "float64", "string"]


@st.composite
def tensor_param(draw: st.DrawFn, calls: int) -> list[dict[str, Any]]:
    rank = draw(st.integers(0, 3))
    varying_rank = draw(st.booleans()) and draw(st.booleans())
    dtype = draw(st.sampled_from(DTYPES))
    kind = draw(st.sampled_from(["tensor", "tensor", "numpy"]))
    conflict = draw(st.integers(0, 9)) == 0
    base = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    out = []
    for i in range(calls):
        r = draw(st.integers(0, 3)) if varying_rank else rank
        shape = [
            draw(st.sampled_from([base[d], base[d], draw(st.integers(1, 5))]))
            if d < len(base)
            else draw(st.integers(1, 5))
            for d in range(r)
        ]
        d = "float16" if conflict and i == calls - 1 else dtype
        out.append({"kind": kind, "shape": shape, "dtype": d})
    return out


@st.composite
def python_param(draw: st.DrawFn, calls: int) -> list[dict[str, Any]]:
    kind = draw(st.sampled_from(["int", "float", "str", "int_big"]))
    values: list[Any]
    if kind == "int":
        values = draw(st.lists(st.integers(-100, 100), min_size=calls, max_size=calls))
    elif kind == "int_big":
        values = draw(st.lists(st.integers(-(2**40), 2**40), min_size=calls, max_size=calls))
    elif kind == "float":
        values = draw(st.lists(st.floats(-10, 10, allow_nan=False), min_size=calls, max_size=calls))
    else:
        values = draw(st.lists(st.text(max_size=5), min_size=calls, max_size=calls))
    return [{"kind": "python", "type": type(v).__name__, "value": v} for v in values]


@st.composite
def flag_param(draw: st.DrawFn, calls: int) -> list[dict[str, Any]]:
    """Values no signature may take: Python bools, None, objects, variables."""
    kind = draw(st.sampled_from(["bool", "none", "object", "variable"]))
    out: list[dict[str, Any]] = []
    for _ in range(calls):
        if kind == "bool":
            out.append({"kind": "python", "type": "bool", "value": draw(st.booleans())})
        elif kind == "none":
            out.append({"kind": "python", "type": "NoneType", "value": None})
        elif kind == "object":
            out.append({"kind": "object", "type": "mod.Config"})
        else:
            out.append({"kind": "variable", "shape": [2], "dtype": "float32"})
    return out


@st.composite
def nested_param(draw: st.DrawFn, calls: int) -> list[dict[str, Any]]:
    keys = draw(st.lists(st.sampled_from("abcd"), min_size=1, max_size=3, unique=True))
    columns = {k: draw(tensor_param(calls)) for k in keys}
    as_tuple = draw(st.booleans())
    out = []
    for i in range(calls):
        if as_tuple:
            out.append({"kind": "tuple", "items": [columns[k][i] for k in keys]})
        else:
            out.append({"kind": "dict", "items": {k: columns[k][i] for k in keys}})
    return out


@st.composite
def profiles(draw: st.DrawFn, flags: bool = False) -> tuple[FunctionRecord, str]:
    calls = draw(st.integers(2, 8))
    count = draw(st.integers(1, 4))
    columns: list[list[dict[str, Any]]] = []
    kinds = [tensor_param, python_param, nested_param] + ([flag_param] if flags else [])
    for _ in range(count):
        columns.append(draw(st.one_of([k(calls) for k in kinds])))
    names = [f"p{i}" for i in range(count)]
    # Some trailing parameters have defaults; some calls leave them out.
    defaults: dict[str, dict[str, Any]] = {}
    first_default = draw(st.integers(0, count))
    for i in range(first_default, count):
        defaults[names[i]] = columns[i][0]
    signatures: dict[str, CallSignature] = {}
    for c in range(calls):
        args: dict[str, Any] = {}
        passed: dict[str, str] = {}
        for i, name in enumerate(names):
            if name in defaults and draw(st.booleans()):
                args[name], passed[name] = defaults[name], "default"
            else:
                args[name] = columns[i][c]
                passed[name] = draw(st.sampled_from(["positional", "keyword"]))
        sig = CallSignature(args=args, passed=passed, first_call=c)
        sig = signatures.setdefault(sig.key(), sig)
        sig.calls += 1
    params = ", ".join(
        f"{n}=None" if n in defaults else n for n in names
    )  # default values in source text do not matter to inference
    src = (
        "import tensorflow as tf\n\n\n@tf.function\n"
        f"def f({params}):\n    tf.print({', '.join(names)})\n    return tf.constant(0)\n"
    )
    record = FunctionRecord(
        path="m.py",
        qualname="f",
        line=5,
        source_sha256=None,
        editable=True,
        params=[ParamInfo(n, "POSITIONAL_OR_KEYWORD", defaults.get(n)) for n in names],
        calls=calls,
        traces=len(signatures),
        signatures=list(signatures.values()),
    )
    return record, src


def _has_dtype_conflict(record: FunctionRecord) -> bool:
    def leaves(value: dict[str, Any], path: str = "") -> list[tuple[str, str]]:
        items = value.get("items")
        if isinstance(items, dict):
            return [leaf for k, v in items.items() for leaf in leaves(v, f"{path}/{k}")]
        if isinstance(items, list):
            return [leaf for i, v in enumerate(items) for leaf in leaves(v, f"{path}/{i}")]
        if value.get("kind") in ("python", "object"):
            return []
        return [(path, value["dtype"])]

    for info in record.params:
        seen: dict[str, set[str]] = {}
        for sig in record.signatures:
            for path, dtype in leaves(sig.args[info.name]):
                seen.setdefault(path, set()).add(dtype)
        if any(len(d) > 1 for d in seen.values()):
            return True
    return False


def _has_flag(record: FunctionRecord) -> bool:
    def flag(value: dict[str, Any]) -> bool:
        if value["kind"] == "python":
            return value["type"] in ("bool", "NoneType")
        return value["kind"] in ("object", "variable")

    return any(flag(v) for sig in record.signatures for v in sig.args.values())


def _left_out_in_a_short_profile(plan: Any) -> bool:
    """A parameter only ever its default in a short profile: a signature leaving it out
    would reject calls passing it, so the plan takes the conservative action."""
    return any("does not show it is never passed" in reason for reason in plan.reasons)


@SETTINGS
@given(profiles(flags=True), st.sampled_from(["none", "batch", "all"]))
def test_signature_accepts_every_recorded_call(
    case: tuple[FunctionRecord, str], relax: str
) -> None:
    record, src = case
    plan = infer_function(record, src, InferOptions(relax=relax, guarded_trace=False))
    if record.traces <= 1:
        assert plan.action == "none"
        return
    if _has_dtype_conflict(record):
        # reduce_retracing where shapes vary too; otherwise nothing can help
        assert plan.action in ("reduce_retracing", "none")
        assert "AS203" in {f.code for f in plan.findings}
        return
    if not _has_flag(record) and not _left_out_in_a_short_profile(plan):
        # Tensors, nests of tensors and tensor-safe Python scalars: always signable.
        assert plan.action == "signature", plan.reasons
    elif plan.action != "signature":
        # reduce_retracing where a shape varies, nothing where only Python values do
        assert plan.action in ("reduce_retracing", "none") and plan.reasons
        return
    signed = [p for p in plan.params if p.spec is not None]
    # The signature covers a prefix of the parameters (input_signature is positional).
    assert [p.name for p in plan.params[: len(signed)]] == [p.name for p in signed]
    defaults = {info.name: info.default for info in record.params}
    for sig in record.signatures:
        for p in plan.params:
            value = sig.args[p.name]
            if p.spec is not None:
                assert spec_accepts(p.spec, value), (p.spec, value)
            else:
                # Left out: pinned to its default, so every call must have passed it.
                assert sig.passed[p.name] == "default" or value == defaults[p.name]


@SETTINGS
@given(profiles())
def test_no_more_freedom_than_observed(case: tuple[FunctionRecord, str]) -> None:
    record, src = case
    # relax=none: exactly the observed freedom (auto may free more, where proven safe)
    plan = infer_function(record, src, InferOptions(relax="none"))
    if plan.action != "signature":
        return
    for p in plan.params:
        if not isinstance(p.spec, TensorSpecNode):
            continue
        values = [sig.args[p.name] for sig in record.signatures]
        if any(v["kind"] == "python" for v in values):
            assert p.spec.shape == ()
            continue
        observed = [None if v["shape"] is None else tuple(v["shape"]) for v in values]
        assert p.spec.shape == common_shape(observed)

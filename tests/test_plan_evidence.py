"""The plan uses the probe evidence (issue 21 stage B): one test per rule, no TensorFlow.

Records are built as the profile writes them (``FunctionRecord.probe``); the evidence is
what stage A's probes record (``autosig/profile/evidence.py``). Real TensorFlow checks of
the same rules: the golden cases 23-26 and the contract suite (``test_contract_tf.py``).
"""

from __future__ import annotations

import textwrap
from typing import Any

from test_infer import plan_of as infer_plan_of
from test_infer import py, record, specs, tensor

from autosig.infer.specs import TensorSpecNode
from autosig.profile.evidence import DimEvidence, NumberEvidence, ProbeEvidence, RandomEvidence

MODEL_CALL = textwrap.dedent(
    """\
    import tensorflow as tf

    model = None


    @tf.function
    def step(x, y):
        return model(x) + y
    """
)
"""``model(x)``: code outside the project, which today's rules say may read any
dimension of ``x`` but its batch."""

METHOD = textwrap.dedent(
    """\
    import tensorflow as tf


    class Adapter(tf.Module):
        def __init__(self, model):
            self.model = model

        @tf.function
        def __call__(self, x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                out = self.model(x)
            return tape.gradient(out, x)
    """
)


def plan_of(src: str, rec: Any, **options: Any) -> Any:
    """The plan with an input_signature also for these short profiles (which would get a
    guarded relaxed trace, ``test_guarded_trace.py``): the rules under test here are the
    signature's."""
    return infer_plan_of(src, rec, guarded_trace=False, **options)


def dim(param: str, d: int, verdict: str, size: int, **more: Any) -> DimEvidence:
    return DimEvidence(param, d, verdict, size, probed=[size + 1, 1, None], **more)


def calls_xy(batches: tuple[int, ...] = (4, 5, 6), width: int = 8) -> list[dict[str, Any]]:
    return [{"x": tensor(b, width), "y": tensor(b, 1)} for b in batches]


def step_plan(*dims: DimEvidence, batches: tuple[int, ...] = (4, 5, 6)) -> Any:
    rec = record(MODEL_CALL, calls_xy(batches), qualname="step")
    rec.probe = ProbeEvidence(rounds=1, probes=7, dims=list(dims))
    return plan_of(MODEL_CALL, rec)


# -- dimensions ------------------------------------------------------------------------


def test_without_evidence_the_conservative_rules_stay() -> None:
    rec = record(MODEL_CALL, calls_xy(), qualname="step")
    plan = plan_of(MODEL_CALL, rec)
    assert plan.safety == "unsafe"  # x's width kept fixed on 3 calls: model(x) may read it
    assert specs(plan)["x"] == TensorSpecNode((None, 8), "float32")
    assert not any("probe:" in r for r in plan.reasons)


def test_fixed_by_the_code_stays_fixed_without_the_unsafe_label() -> None:
    plan = step_plan(
        dim("x", 0, "free", 4, varied=True),
        dim("x", 1, "fixed", 8, error="ValueError: Input 0 ... expected axis -1", where="m.py:7"),
    )
    assert (plan.action, plan.safety) == ("signature", "safe")
    assert specs(plan)["x"] == TensorSpecNode((None, 8), "float32")
    (why,) = [r for r in plan.reasons if "probe:" in r]
    assert "`x` dimension 1 kept at 8 (probe: fixed by the code (m.py:7" in why


def test_free_frees_a_dimension_that_never_varied() -> None:
    """The precision gain: y's second dimension (1 in every call) was kept fixed."""
    plan = step_plan(dim("x", 1, "fixed", 8), dim("y", 1, "free", 1))
    assert plan.safety == "safe"
    assert specs(plan)["y"] == TensorSpecNode((None, None), "float32")
    assert any("`y` dimension 1 None (probe: free" in r for r in plan.reasons)


def test_bounded_is_relaxed_and_says_what_changes() -> None:
    error = "ValueError: Negative dimension size caused by subtracting 3 from 1"
    plan = step_plan(dim("x", 1, "bounded", 8, error=error, where="m.py:7"))
    assert (plan.safety, specs(plan)["x"]) == ("safe", TensorSpecNode((None, None), "float32"))
    (why,) = [r for r in plan.reasons if "probe:" in r]
    assert "fails when the op runs instead of when the code traces" in why


def test_read_stays_fixed_and_unsafe_with_the_probed_line() -> None:
    plan = step_plan(dim("x", 1, "read", 8, where="m.py:7", reason="the graph changes"))
    assert plan.safety == "unsafe"
    assert specs(plan)["x"] == TensorSpecNode((None, 8), "float32")
    assert "probe: read (m.py:7: the graph changes)" in plan.warnings[0]


def test_a_varied_dimension_whose_relaxed_trace_fails_blocks_any_relaxed_trace() -> None:
    error = "TypeError: Failed to convert elements of [None, 1] to Tensor"
    read = dim("x", 0, "read", 4, varied=True, error=error, where="m.py:7", relaxed_builds=False)
    plan = step_plan(read)
    assert plan.action == "none"
    assert "it varies between calls, but the code reads it (probe: read (m.py:7" in plan.reasons[0]


def test_a_varied_dimension_read_by_another_graph_makes_the_fix_unsafe() -> None:
    """The relaxed trace builds, but another size gave another graph: not proven safe."""
    reason = "the graph for size 5 differs from size 4"
    read = dim("x", 0, "read", 4, varied=True, reason=reason, where="m.py:7", relaxed_builds=True)
    plan = step_plan(read, dim("x", 1, "fixed", 8))
    assert (plan.action, plan.safety) == ("signature", "unsafe")
    assert (
        "`x` dimension 0 varies, and a relaxed trace makes it None although probe: read"
        in (plan.warnings[0])
    )


def test_tied_dimensions_are_relaxed_only_together() -> None:
    """y's dimension 1 is free only together with x's, which stays fixed by a relax policy."""
    rec = record(MODEL_CALL, calls_xy(), qualname="step")
    rec.probe = ProbeEvidence(
        dims=[dim("x", 1, "free", 8, tied=["y:1"]), dim("y", 1, "free", 1, tied=["x:1"])]
    )
    plan = plan_of(
        MODEL_CALL, rec, overrides=lambda p, q, param: "none" if param == "x" else "auto"
    )
    assert specs(plan)["y"] == TensorSpecNode((None, 1), "float32")
    assert any("only together with x:1" in r for r in plan.reasons + plan.warnings)


def test_a_method_s_fixed_dimension_is_none_when_the_relaxed_trace_builds() -> None:
    """A method's signature is every instance's; another instance may wrap another model."""
    calls = [{"x": tensor(b, 28, 28, 1)} for b in (16, 7, 3)]
    rec = record(METHOD, calls, qualname="Adapter.__call__", is_method=True)
    rec.probe = ProbeEvidence(
        dims=[
            dim("x", 0, "free", 16, varied=True),
            dim("x", 1, "bounded", 28),
            dim("x", 2, "bounded", 28),
            dim("x", 3, "fixed", 1, relaxed_builds=True, where="m.py:11", error="ValueError"),
        ]
    )
    plan = plan_of(METHOD, rec)
    assert (plan.action, plan.safety) == ("signature", "safe")
    assert specs(plan)["x"] == TensorSpecNode((None, None, None, None), "float32")
    assert any("for the instance probed" in r for r in plan.reasons)


def test_a_method_s_fixed_dimension_stays_unsafe_when_the_relaxed_trace_fails() -> None:
    calls = [{"x": tensor(b, 28, 28, 1)} for b in (16, 7, 3)]
    rec = record(METHOD, calls, qualname="Adapter.__call__", is_method=True)
    rec.probe = ProbeEvidence(
        dims=[dim("x", d, "fixed", s, relaxed_builds=False) for d, s in ((1, 28), (2, 28), (3, 1))]
    )
    plan = plan_of(METHOD, rec)
    assert plan.safety == "unsafe"
    assert "the relaxed trace does not build" in plan.warnings[0]


# -- Python numbers --------------------------------------------------------------------

POW = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def focal(p, gamma):
        return tf.math.multiply(1.0 - p, gamma)  # (a power: the exponent rule)
    """
)


def pow_plan(values: tuple[Any, ...], number: NumberEvidence | None) -> Any:
    rec = record(POW, [{"p": tensor(3), "gamma": py(v)} for v in values], qualname="focal")
    if number is not None:
        rec.probe = ProbeEvidence(numbers=[number], dims=[dim("p", 0, "free", 3)])
    return plan_of(POW, rec)


def test_an_int_in_a_float_context_takes_the_float_dtype_tensorflow_gave_it() -> None:
    evidence = NumberEvidence("gamma", "int", "float32", "spec", spec_matches=True)
    plan = pow_plan((0, 1, 2), evidence)
    assert specs(plan)["gamma"] == TensorSpecNode((), "float32")
    assert any(
        "`gamma`: a scalar float32 spec (probe: TensorFlow gave it float32" in r
        for r in plan.reasons
    )
    assert specs(pow_plan((0, 1, 2), None))["gamma"] == TensorSpecNode((), "int32")  # no probe


def test_a_number_no_scalar_spec_reproduces_stays_python() -> None:
    evidence = NumberEvidence(
        "gamma",
        "float",
        None,
        "unknown",
        spec_matches=False,
        where="m.py:6",
        reason="the float32 scalar spec adds Sub (the code computes with the number in Python)",
        float32_keeps_digits=False,
    )
    plan = pow_plan((1_700_000_000.25, 1_700_000_002.75), evidence)
    assert specs(plan)["gamma"] is None
    assert any("`gamma` must stay a Python value: probe: no scalar spec" in r for r in plan.reasons)


def test_float64_where_the_graph_holds_the_number_as_float64() -> None:
    evidence = NumberEvidence("gamma", "float", "float64", "spec", spec_matches=True)
    assert specs(pow_plan((0.1, 0.05), evidence))["gamma"] == TensorSpecNode((), "float64")


def test_int64_when_values_exceed_int32_even_if_the_graph_took_int32() -> None:
    evidence = NumberEvidence(
        "gamma", "int", "int32", "spec", spec_matches=True, exceeds_int32=True
    )
    plan = pow_plan((1, 3_000_000_000), evidence)
    assert specs(plan)["gamma"] == TensorSpecNode((), "int64")


# -- random ops ------------------------------------------------------------------------


def test_random_ops_in_the_steady_state_graph_make_a_fix_unsafe() -> None:
    """A draw the static analysis cannot see (a sampler inside tf.nn.nce_loss, a project
    layer's tf.random.normal) is in the graph's op types."""
    rec = record(MODEL_CALL, calls_xy(), qualname="step")
    rec.probe = ProbeEvidence(
        dims=[dim("x", 1, "fixed", 8)], random=RandomEvidence(hidden=["LogUniformCandidateSampler"])
    )
    plan = plan_of(MODEL_CALL, rec)
    assert plan.safety == "unsafe"
    assert (
        "probe: the steady-state graph has the stateful random ops LogUniformCandidateSampler"
        in (" ".join(plan.warnings))
    )
    rec.probe.random = RandomEvidence(first_call_only=["RandomStandardNormal"])
    assert plan_of(MODEL_CALL, rec).safety == "safe"  # weights built on the first call only


UNPACKED = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def encode(x):
        b, t, d = x.shape
        h = tf.zeros([b, d])
        for i in range(t):
            h = tf.tanh(x[:, i] + h)
        return h
    """
)


def test_reads_the_static_rewrite_makes_dynamic_are_not_held_against_it() -> None:
    """The probes traced the code before ``b, t, d = x.shape`` became ``tf.shape(x)``:
    their read verdicts describe reads the fix removes."""
    calls = [{"x": tensor(2, t, 3)} for t in range(2, 11)]
    rec = record(UNPACKED, calls, qualname="encode")
    error = "TypeError: 'NoneType' object cannot be interpreted as an integer"
    rec.probe = ProbeEvidence(
        dims=[
            dim("x", 0, "read", 2, where="m.py:8", relaxed_builds=False, error=error),
            dim("x", 1, "read", 2, varied=True, where="m.py:9", relaxed_builds=False, error=error),
        ]
    )
    plan = plan_of(UNPACKED, rec)
    # `d` (dimension 2) stays read: kept at 3, which 9 calls do not show constant (review21)
    assert (plan.action, plan.safety) == ("signature", "unsafe")
    assert any("`x` dimension 2 seen only as 3" in w for w in plan.warnings)
    assert specs(plan)["x"] == TensorSpecNode((None, None, 3), "float32")
    assert plan.shape_rewrites

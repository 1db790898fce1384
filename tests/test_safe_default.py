"""The safe default where no evidence shows a function's domain (review21 items 8, 9, 7, 11).

``guarded_trace.settle`` writes ``reduce_retracing=True`` as the safe fix only where no
dimension is read (static reads, the probes' ``read`` verdicts, ``probe_read_blockers``)
and the trace reads no Python state (``state_blockers``); ``call_site_plan`` passes a
Python number as ``tf.constant`` safely only where its dtype cannot follow a tensor
parameter's (``_coupled``). Valid/invalid pairs; the real TensorFlow runs of the
reviewer's programs are ``test_safe_default_tf.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_infer import plan_of, py, record, tensor

from autosig.profile.evidence import DimEvidence, NumberEvidence, ProbeEvidence
from autosig.profile.format import CallSite

pytestmark = pytest.mark.filterwarnings("ignore")

# a method of a class without an `__init__` of its own: no place for a guarded trace
METHOD = "import tensorflow as tf\n{head}\n\nclass M(tf.Module):\n    @tf.function\n    def f(self, {params}):\n{body}"
COLUMNS = METHOD.format(
    head="",
    params="x",
    body=(
        "        total = tf.zeros([])\n"
        '        for c in getattr(tf, "unstack")(x, axis=1):\n'
        "            total += tf.reduce_sum(c)\n"
        "        return total\n"
    ),
)


def safe_default(src: str, rec: Any) -> Any:
    return plan_of(src, rec, guarded_trace=True)


def columns_record(verdict: str, relaxed_builds: bool) -> Any:
    calls = [{"x": tensor(n, 3)} for n in range(2, 10)]
    rec = record(COLUMNS, calls, qualname="M.f", is_method=True)
    rec.probe = ProbeEvidence(
        rounds=1,
        dims=[
            DimEvidence("x", 0, "free", 2, varied=True, relaxed_builds=True),
            DimEvidence(
                "x",
                1,
                verdict,
                3,
                relaxed_builds=relaxed_builds,
                reason="the relaxed trace (None) fails" if not relaxed_builds else "",
                where="prog.py:9" if not relaxed_builds else None,
            ),
        ],
    )
    return rec


# -- 1. a dimension the probes found read blocks reduce_retracing ---------------------------


def test_free_dimensions_keep_reduce_retracing_safe() -> None:
    plan = safe_default(COLUMNS, columns_record("free", True))
    assert (plan.action, plan.safety) == ("reduce_retracing", "safe")


def test_a_dimension_the_probes_found_read_blocks_reduce_retracing() -> None:
    """review21 p8g: `tf.unstack(x, axis=1)` behind getattr, width 3 in the profile; a
    relaxed width raises, so width 4 after width 3 would raise under reduce_retracing."""
    plan = safe_default(COLUMNS, columns_record("read", False))
    assert plan.action == "none"
    assert any(
        "`x` dimension 1 when a call changes it, and the probes found it read" in r
        and "prog.py:9" in r
        for r in plan.reasons
    )


# -- 2. trace-time Python state blocks reduce_retracing --------------------------------------

PLAIN = METHOD.format(head="", params="x", body="        return tf.reduce_sum(x) * 2.0\n")
STATEFUL = METHOD.format(
    head="import config\n", params="x", body="        return tf.reduce_sum(x) * config.SCALE\n"
)


def test_no_state_read_keeps_reduce_retracing_safe() -> None:
    calls = [{"x": tensor(n, 3)} for n in range(2, 10)]
    plan = safe_default(PLAIN, record(PLAIN, calls, qualname="M.f", is_method=True))
    assert (plan.action, plan.safety) == ("reduce_retracing", "safe")


def test_a_state_read_while_tracing_blocks_reduce_retracing(tmp_path: Path) -> None:
    """review21 p11: a harness outside the project sets the global before each call; a
    relaxed trace would keep the first value (3, 6, 6, 6, 6 for 3, 6, 9, 12, 15)."""
    calls = [{"x": tensor(n, 3)} for n in range(2, 10)]
    (tmp_path / "config.py").write_text("SCALE = 1.0\n")
    (tmp_path / "mod.py").write_text(STATEFUL)
    rec = record(STATEFUL, calls, qualname="M.f", is_method=True, path="mod.py")
    plan = plan_of(STATEFUL, rec, guarded_trace=True, root=tmp_path)
    assert plan.action == "none"
    assert any("reads Python state while tracing (`config.SCALE`" in r for r in plan.reasons)


# -- 3. a call-site tf.constant whose dtype may follow a tensor parameter -------------------


def number_plan(body: str, value: Any) -> Any:
    src = METHOD.format(head="", params="x, k", body=f"        return {body}\n")
    calls = [{"x": tensor(n, 3), "k": py(type(value)(n))} for n in range(2, 10)]
    rec = record(src, calls, qualname="M.f", is_method=True)
    rec.call_sites = [CallSite("pkg/driver.py", 5, calls=8, col=4)]
    return safe_default(src, rec)


def test_an_int_used_only_as_an_int_is_a_safe_call_site_tensor() -> None:
    body = "tf.reduce_sum(x) + tf.cast(tf.reduce_sum(tf.range(k)), tf.float32)"
    plan = number_plan(body, 1)
    assert plan.call_sites is not None
    assert plan.call_sites.params[0].dtype == "int32"
    # paired with a seed after the caller makes the instance; reduce_retracing where the
    # caller's file is not fixed (``settle_pairs``)
    assert (plan.action, plan.safety) == ("guarded_trace", "safe")
    assert plan.unpaired is not None and plan.unpaired.action == "reduce_retracing"


def test_a_number_meeting_a_tensor_parameter_of_its_dtype_is_unsafe() -> None:
    """review21 p12: `reduce_sum(x) + k`: a Python k adapts to float64 x, a float32
    tensor k raises there."""
    plan = number_plan("tf.reduce_sum(x) + k", 1.5)
    # no call-site tensors as a safe fix; the safe default stays, the signature (which
    # takes `k` as a tensor) is the unsafe route
    assert plan.call_sites is None
    assert (plan.action, plan.safety) == ("reduce_retracing", "safe")
    assert any(
        "no call-site tensors as a safe fix: `k` passed as a float32 tensor may break calls" in r
        and "`x` had that dtype (float32)" in r
        for r in plan.reasons
    )


def probed_number(plan_input: Any, **fields: Any) -> Any:
    """``number_plan``'s record with the probe's dtype-coupling evidence for ``k``."""
    body, value = plan_input
    src = METHOD.format(head="", params="x, k", body=f"        return {body}\n")
    calls = [{"x": tensor(n, 3), "k": py(type(value)(n))} for n in range(2, 10)]
    rec = record(src, calls, qualname="M.f", is_method=True)
    rec.call_sites = [CallSite("pkg/driver.py", 5, calls=8, col=4)]
    number = NumberEvidence("k", "float", "float32", "spec", True, ["float32"], **fields)
    rec.probe = ProbeEvidence(numbers=[number])
    return safe_default(src, rec)


KERAS_LOSS = ("tf.reduce_sum(tf.cast(x, tf.float32)) * k", 1.5)


def test_a_number_the_probe_saw_keep_its_dtype_beside_the_tensor_stays_unsafe() -> None:
    """review5: `weight * loss(net(x))`: with `x` float64 the number stayed float32 (it
    meets the profiled net's float32 output), but another instance's net (float64) or a
    mixed precision policy gives that output another dtype: no evidence, no plan."""
    plan = probed_number(KERAS_LOSS, follows=[], kept_with=["x"])
    assert plan.call_sites is None
    assert any(
        "the probe saw it keep float32 beside `x` at other dtypes" in r for r in plan.reasons
    ), plan.reasons


def test_a_number_the_probe_saw_follow_the_tensor_is_a_tensor_only_where_its_dtype_shows() -> None:
    """golden 23: `img + gradients * step_size`: with `img` float64 the number is float64;
    a call site passes it as float32 only where the code there shows `x` is float32
    (``rewrite/call_sites.py``, ``analysis/static_dtypes.py``)."""
    plan = probed_number(("tf.reduce_sum(x) + k", 1.5), follows=["x"], kept_with=[])
    assert plan.call_sites is not None
    (param,) = plan.call_sites.params
    assert [f.name for f in param.follows] == ["x"]
    assert any("`k` only where the call shows `x` to be float32" in r for r in plan.reasons), (
        plan.reasons
    )


def test_a_tensor_parameter_the_probe_did_not_try_keeps_the_number_coupled() -> None:
    """Evidence about other arguments (or none: an older profile) proves nothing for `x`."""
    for fields in ({"follows": [], "kept_with": ["other"]}, {}):
        plan = probed_number(KERAS_LOSS, **fields)
        assert plan.call_sites is None
        assert any("`x` had that dtype (float32)" in r for r in plan.reasons), plan.reasons


# -- 4. the wording of the unsafe offer -----------------------------------------------------


def test_the_unsafe_offer_names_both_ways_and_does_not_repeat_itself() -> None:
    calls = [{"x": tensor(n, 3)} for n in range(2, 10)]
    plan = safe_default(PLAIN, record(PLAIN, calls, qualname="M.f", is_method=True))
    offer = plan.reasons[0]
    assert offer.startswith("the input_signature is an unsafe fix here")
    assert "`autosig fix --unsafe-fixes` writes it" in offer
    assert "a shape policy for the function in the config" in offer
    assert offer.count("input_signature, an unsafe fix") == 0
    assert offer.count("an unsafe fix") == 1

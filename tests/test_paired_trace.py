"""A guarded relaxed trace paired with call-site tensors (``infer/paired_trace.py``).

Valid/invalid pairs: a module-level function whose calls pass a varying tensor and a
Python number the call sites will pass as ``tf.constant`` gets one seeding trace with
the number's scalar spec; a method gets it after the statement making the recorded
call's instance (not in ``__init__``: review5); where nothing shows the number's dtype
at the call sites, or the call sites are not among the files fixed, the plan without
it. The real TensorFlow runs (original and fixed on calls the profile never saw) are
the golden cases'.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_infer import plan_of, py, record, tensor

from autosig.infer.paired_trace import settle_pairs
from autosig.infer.plan import ArgumentPosition, Plan
from autosig.profile.evidence import NumberEvidence, ProbeEvidence
from autosig.profile.format import CallSite
from autosig.rewrite.call_sites import unpassed_tensors

pytestmark = pytest.mark.filterwarnings("ignore")

SMOOTH = """import tensorflow as tf

KERNEL = tf.ones([3, 3, 1, 1])


@tf.function
def smooth(image, step_size):
    return image + step_size * tf.nn.conv2d(image, KERNEL, 1, "SAME")
"""

SMOOTHER = """import tensorflow as tf


class Smoother(tf.Module):
    def __init__(self):
        super().__init__()
        self.kernel = tf.ones([3, 3, 1, 1])

    @tf.function
    def __call__(self, image, step_size):
        return image + step_size * tf.nn.conv2d(image, self.kernel, 1, "SAME")
"""


def smoother_plan(source: str = SMOOTH, **number: Any) -> Any:
    calls = [
        {"image": tensor(1, 8 + n, 8 + n, 1), "step_size": py(0.01 * (n + 1))} for n in range(8)
    ]
    method = source is SMOOTHER
    qualname = "Smoother.__call__" if method else "smooth"
    rec = record(source, calls, qualname=qualname, is_method=method)
    rec.call_sites = [CallSite("pkg/driver.py", 5, calls=8, col=4, positional=2)]
    evidence = NumberEvidence("step_size", "float", "float32", "spec", True, ["float32"], **number)
    rec.probe = ProbeEvidence(numbers=[evidence])
    return plan_of(source, rec, guarded_trace=True)


FOLLOWS = {"follows": ["image"], "kept_with": []}


def test_a_number_passed_as_a_tensor_at_the_call_sites_joins_the_seeding_trace() -> None:
    plan = smoother_plan(**FOLLOWS)
    assert (plan.action, plan.safety) == ("guarded_trace", "safe"), plan.reasons
    assert plan.call_sites is not None and plan.unpaired is not None
    specs = {p.name: p.spec for p in plan.params}
    assert specs["step_size"].shape == () and specs["step_size"].dtype == "float32"
    assert specs["image"].shape[1:3] == (None, None)
    assert any("its scalar specs for `step_size`" in r for r in plan.reasons), plan.reasons
    assert plan.unpaired.action == "reduce_retracing"


def test_a_method_is_seeded_where_its_caller_makes_the_instance() -> None:
    """Not in ``__init__`` (review5: it runs for every instance before its caller
    configures it): after the statement making the recorded call's instance, where
    nothing touches it before the call; elsewhere the plan without the seed."""
    plan = smoother_plan(SMOOTHER, **FOLLOWS)
    assert plan.action == "guarded_trace" and plan.guarded is not None, plan.reasons
    assert plan.guarded.at_instances and plan.unpaired is not None
    assert any(
        "right after the statement making each recorded call's instance" in r for r in plan.reasons
    )

    def driver(setup: str) -> dict[str, str]:
        # the call on line 5, column 4, where the profile recorded it
        body = f"{setup}    image = tf.image.resize(raw, (8, 8)).numpy()\n    smooth(image, 0.5)\n"
        return {"pkg/driver.py": f"import tensorflow as tf\ndef run(mod, raw):\n{body}"}

    made = driver("    smooth = mod.Smoother()\n")
    assert unpassed_tensors(plan, made) is None
    fixed = {"pkg/mod.py", "pkg/driver.py"}
    (kept,) = settle_pairs(Plan([plan]), fixed, lambda e: unpassed_tensors(e, made)).functions
    assert kept.action == "guarded_trace"
    for setup, why in (
        ("    smooth = mod.make()\n", "not bound to a new `Smoother(...)`"),
        ("    smooth = mod.Smoother(); smooth.kernel = raw\n", "shares its line"),
        ("    global smooth\n", "declared global or nonlocal"),
    ):
        texts = driver(setup)
        problem = unpassed_tensors(plan, texts)
        assert problem is not None and why in problem.why, problem
        assert not problem.changes
        (alone,) = settle_pairs(
            Plan([plan]), fixed, lambda e, t=texts: unpassed_tensors(e, t)
        ).functions
        assert alone.action == "reduce_retracing" and why in alone.reasons[-1]
        assert alone.safety == "safe"
    # review8: the caller changes what the trace reads after the call: neither the seed
    # nor the call-site tensors alone (fewer traces keep the old state) is safe
    changed = driver("    smooth = mod.Smoother(kernel)\n")
    text = changed["pkg/driver.py"].replace(
        "import tensorflow as tf\n", "import tensorflow as tf; kernel = make()\n"
    )
    changed["pkg/driver.py"] = text + "    kernel.assign(raw)\n"
    refused = unpassed_tensors(plan, changed)
    assert refused is not None and refused.changes, refused
    (left,) = settle_pairs(Plan([plan]), fixed, lambda e: unpassed_tensors(e, changed)).functions
    assert left.action == "reduce_retracing" and left.safety == "unsafe", left.reasons
    assert any("line 6 uses `kernel`, handed to the constructor" in w for w in left.warnings)


def test_a_number_that_may_follow_the_tensors_dtype_gets_no_pair() -> None:
    """No probe evidence (an older profile): nothing shows its dtype stays."""
    plan = smoother_plan()
    assert plan.action != "guarded_trace" and plan.unpaired is None
    assert plan.call_sites is None


def test_a_number_that_follows_the_tensor_is_passed_where_the_call_fixes_its_dtype() -> None:
    """golden 23: `img + gradients * step_size`: a call site passes `step_size` as a
    float32 tensor only where the code there shows the image is float32."""
    plan = smoother_plan(**FOLLOWS)
    assert plan.action == "guarded_trace" and plan.call_sites is not None
    (param,) = plan.call_sites.params
    assert param.follows == (ArgumentPosition("image", 0, 1),)
    assert any(
        "`step_size` only where the call shows `image` to be float32" in r for r in plan.reasons
    )

    def driver(image: str) -> dict[str, str]:
        body = f"    image = {image}\n    smooth(image, 0.5)\n"
        # the call on line 5, column 4, where the profile recorded it
        text = f"import numpy as np\nimport tensorflow as tf\ndef run(smooth, raw):\n{body}"
        return {"pkg/driver.py": text}

    shown = driver("tf.image.resize(raw, (8, 8)).numpy()")
    assert unpassed_tensors(plan, shown) is None
    unshown = driver("np.asarray(raw)")
    why = unpassed_tensors(plan, unshown)
    assert why is not None and "nothing here shows `image` is float32" in why.why, why
    fixed = {"pkg/mod.py", "pkg/driver.py"}
    (kept,) = settle_pairs(Plan([plan]), fixed, lambda e: unpassed_tensors(e, shown)).functions
    assert kept.action == "guarded_trace"
    (alone,) = settle_pairs(Plan([plan]), fixed, lambda e: unpassed_tensors(e, unshown)).functions
    assert alone.action == "reduce_retracing" and "nothing here shows" in alone.reasons[-1]


def test_call_sites_outside_the_files_fixed_leave_the_plan_without_the_pair() -> None:
    plan = smoother_plan(**FOLLOWS)
    kept = settle_pairs(Plan([plan]), {"pkg/mod.py", "pkg/driver.py"}).functions[0]
    assert kept == plan
    (alone,) = settle_pairs(Plan([plan]), {"pkg/mod.py"}).functions
    assert (alone.action, alone.guarded, alone.unpaired) == ("reduce_retracing", None, None)
    assert alone.params == plan.unpaired.params
    assert alone.reasons[-1] == (
        "no guarded relaxed trace with the call sites' tensors: pkg/driver.py:5 (8 calls) "
        "not among the files fixed (fix them too)"
    )
    assert alone.call_sites == plan.call_sites  # listed as call sites to change


WRAPPED = SMOOTH.replace(
    "@tf.function\n", "def logged(f):\n    return f\n\n\n@logged\n@tf.function\n"
)


def test_a_pair_refused_for_another_reason_says_that_reason() -> None:
    """review7/8: the plan without the pair used to end with "`step_size` is a Python
    value in the calls", which the call-site tensors settle; what keeps the guarded
    trace out is the decorator above tf.function, and the plan says so."""
    plan = smoother_plan(WRAPPED, **FOLLOWS)
    assert plan.action != "guarded_trace" and plan.unpaired is None, plan.reasons
    assert plan.call_sites is not None
    refused = [r for r in plan.reasons if r.startswith("no guarded relaxed trace with the call")]
    assert refused == [
        "no guarded relaxed trace with the call sites' tensors: tf.function is not its "
        "outermost decorator: the name the seeding call goes through is the wrapper's, "
        "which has no get_concrete_function"
    ], plan.reasons
    assert (plan.action, plan.safety) == ("reduce_retracing", "safe")


def test_a_number_left_a_python_value_at_the_call_sites_refuses_the_pair_by_name() -> None:
    """review8: `scale` is 2.0 in every call, so the call sites keep passing it as a
    Python number; the seeding trace would hold a tensor for it."""
    source = SMOOTH.replace("(image, step_size)", "(image, step_size, scale)").replace(
        "return image +", "return scale * image +"
    )
    calls = [
        {"image": tensor(1, 8 + n, 8 + n, 1), "step_size": py(0.01 * (n + 1)), "scale": py(2.0)}
        for n in range(8)
    ]
    rec = record(source, calls, qualname="smooth")
    rec.call_sites = [CallSite("pkg/driver.py", 5, calls=8, col=4, positional=3)]
    evidence = NumberEvidence("step_size", "float", "float32", "spec", True, ["float32"], **FOLLOWS)
    rec.probe = ProbeEvidence(numbers=[evidence])
    plan = plan_of(source, rec, guarded_trace=True)
    assert plan.call_sites is not None and plan.action == "reduce_retracing", plan.reasons
    assert plan.reasons[-1] == (
        "no guarded relaxed trace with the call sites' tensors: `scale` stays a Python value "
        "at the call sites, and a call passing one does not fit a trace seeded with a tensor "
        "for it"
    )

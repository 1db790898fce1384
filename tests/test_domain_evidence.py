"""An input_signature is labelled safe only with evidence of the domain (issue 21).

Valid/invalid pairs for each kind of evidence (``infer/domain_evidence.py``,
``analysis/dataset_loops.py``), for what a signature without it becomes
(``guarded_trace.settle``: the guarded trace, else an unsafe signature whose safe default
is reduce_retracing=True or nothing), and for the exponent rule (``python_params``).
Real TensorFlow runs of original vs fixed programs: ``test_domain_evidence_tf.py``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper
from test_infer import plan_of as known_domain_plan
from test_infer import py, record, tensor

from autosig.analysis.dataset_loops import ElementArgs, element_args, file_facts, loop_facts
from autosig.infer.domain_evidence import narrows
from autosig.infer.observations import ParamResult
from autosig.infer.specs import DictNode, ListNode, TensorSpecNode
from autosig.profile.format import CallSite

pytestmark = pytest.mark.filterwarnings("ignore")


def plan_of(src: str, rec: Any, **options: Any) -> Any:
    return known_domain_plan(src, rec, **{"guarded_trace": True, **options})


def args_at(src: str, line: int, col: int | None = None) -> ElementArgs | str:
    wrapper = MetadataWrapper(cst.parse_module(textwrap.dedent(src)))
    return element_args(loop_facts(wrapper), line, col)


# -- dataset loops: valid / invalid ---------------------------------------------------------

LOOPS = """\
import tensorflow as tf
import model as m
ds = tf.data.Dataset.from_tensor_slices((xs, ys)).shuffle(10)
batches = ds.batch(4)
for x, y in batches:
    m.step(x, y)
for i, (x, y) in enumerate(batches.take(3)):
    m.step(x, training=y)
for x in [1, 2]:
    m.step(x, 1)
def train(d):
    for b in d.batch(2):
        m.step(b["x"])
for x, y in ds:
    x = x * 2
    m.step(x, y)
for i, x in enumerate(ds):
    m.step(i, x)
"""


def test_elements_of_a_tf_data_loop_are_found() -> None:
    found = args_at(LOOPS, 6, 4)
    assert isinstance(found, ElementArgs)
    assert found.positional == {0, 1} and found.dataset == "batches"


def test_a_dataset_chain_and_enumerate_are_followed() -> None:
    found = args_at(LOOPS, 8, 4)
    assert isinstance(found, ElementArgs)
    assert found.positional == {0} and found.keywords == {"training"}


def test_a_python_list_loop_is_not_a_dataset() -> None:
    assert isinstance(args_at(LOOPS, 10, 4), str)


def test_a_parameter_of_unknown_kind_is_not_a_dataset() -> None:
    assert isinstance(args_at(LOOPS, 13, 8), str)


def test_an_element_reassigned_in_the_loop_is_not_an_element() -> None:
    found = args_at(LOOPS, 16, 4)
    assert isinstance(found, ElementArgs) and found.positional == {1}  # y only


def test_the_enumerate_counter_is_not_an_element() -> None:
    found = args_at(LOOPS, 18, 4)
    assert isinstance(found, ElementArgs) and found.positional == {1}


def elements(src: str, line: int) -> bool:
    return isinstance(args_at(src, line), ElementArgs)


ONE_BINDING = """\
import tensorflow as tf
ds = tf.data.Dataset.from_tensor_slices(images).batch(8)
for images in ds:
    step(images)
"""


def test_one_binding_of_the_dataset_is_evidence() -> None:
    assert elements(ONE_BINDING, 4)


@pytest.mark.parametrize(
    "binding",
    [
        # p3: two tf.data bindings with other element specs
        "if SYNTHETIC:\n    ds = tf.data.Dataset.from_tensors(zeros).repeat(3)\n"
        "else:\n    ds = tf.data.Dataset.from_tensor_slices(images).batch(8)",
        "ds = tf.data.Dataset.from_tensor_slices(images)\nds = ds.batch(8)",
    ],
)
def test_a_dataset_name_bound_twice_is_no_evidence(binding: str) -> None:
    src = f"import tensorflow as tf\n{binding}\nfor images in ds:\n    step(images)\n"
    assert not elements(src, src.count("\n"))


FROM_PARAMS = """\
import tensorflow as tf
import numpy as np
DATA = np.ones([10, 3], np.float32)
def run(features, n):
    data = {source}
    ds = tf.data.Dataset.from_tensor_slices(data).batch(n).map(lambda x: x * 2)
    for x in ds:
        step(x)
"""


@pytest.mark.parametrize(
    ("source", "ok"),
    [
        ("DATA", True),  # a module constant; `n` (a batch size) and the lambda's `x` are fine
        ("features", False),  # p1: the caller's array, whose dtype follows the caller
        ("features / 7", False),
        ("np.asarray(features, np.float32)", False),  # conservative: any parameter read
    ],
)
def test_a_dataset_built_from_parameters_is_no_evidence(source: str, ok: bool) -> None:
    src = FROM_PARAMS.format(source=source)
    if source == "DATA":
        src = src.replace(".batch(n)", ".batch(4)")
    assert elements(src, 8) is ok


ELEMENT_BODY = """\
import tensorflow as tf
ds = tf.data.Dataset.from_tensor_slices(data).batch(6)
for batch in ds:
    {change}
    step(batch)
"""


@pytest.mark.parametrize(
    ("change", "ok"),
    [
        ("y = tf.cast(batch['x'], tf.float16)", True),
        ("out[batch] = 1", True),
        ("batch['x'] = tf.cast(batch['x'], tf.float16)", False),  # p4
        ("batch = tf.cast(batch, tf.float16)", False),
        ("batch += 1", False),
        ("batch.x = 1", False),
        ("batch.update(x=1)", False),
        ("a, (batch, b) = 1, (2, 3)", False),
        ("match 1:\n        case batch:\n            pass", False),
        ("with f() as batch:\n        pass", False),
        ("del batch['x']", False),
    ],
)
def test_an_element_changed_in_the_loop_is_no_evidence(change: str, ok: bool) -> None:
    assert (
        elements(ELEMENT_BODY.format(change=change), ELEMENT_BODY.format(change=change).count("\n"))
        is ok
    )


@pytest.mark.parametrize(
    ("pipeline", "ok"),
    [
        ("tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.float32))", True),
        (
            "tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([None]))",
            True,
        ),
        # p7: the element's rank is not fixed statically
        ("tf.data.Dataset.range(4).map(lambda i: tf.numpy_function(load, [i], tf.float32))", False),
        ("tf.data.Dataset.range(4).map(lambda i: tf.py_function(load, [i], tf.float32))", False),
        ("tf.data.Dataset.range(4).map(wrapped).batch(2)", False),
        ("tf.data.Dataset.from_generator(gen, output_types=tf.float32)", False),
    ],
)
def test_an_untyped_pipeline_stage_is_no_evidence(pipeline: str, ok: bool) -> None:
    src = (
        "import tensorflow as tf\n"
        "def wrapped(i):\n    return tf.numpy_function(load, [i], tf.float32)\n"
        f"ds = {pipeline}\nfor x in ds:\n    step(x)\n"
    )
    assert elements(src, 6) is ok


# -- the choice with and without evidence ---------------------------------------------------

STEP = "import tensorflow as tf\n\n\n@tf.function\ndef step(x, y):\n    return x * 2.0 + y\n"
DRIVER_DATASET = """\
import tensorflow as tf
import numpy as np
from model import step
ds = tf.data.Dataset.from_tensor_slices((np.ones([10, 3], np.float32), np.ones([10], np.float32)))
for x, y in ds.batch(4):
    step(x, y)
"""
DRIVER_LIST = """\
import numpy as np
from model import step
for n in (4, 4, 2):
    x, y = np.ones([n, 3], np.float32), np.ones([n], np.float32)
    step(x, y)
"""


def step_record(tmp_path: Path, driver: str, line: int) -> Any:
    (tmp_path / "driver.py").write_text(driver)
    calls = [{"x": tensor(n, 3), "y": tensor(n)} for n in (4, 4, 2)]
    rec = record(STEP, calls, qualname="step", path="model.py")
    rec.call_sites = [CallSite("driver.py", line, calls=3, col=4)]
    return rec


def test_calls_passing_dataset_elements_keep_the_signature_safe(tmp_path: Path) -> None:
    rec = step_record(tmp_path, DRIVER_DATASET, 6)
    plan = plan_of(STEP, rec, root=tmp_path)
    assert (plan.action, plan.safety) == ("signature", "safe")
    assert any(
        r.startswith("the domain: every recorded call (3 calls, 1 call site) passes elements")
        for r in plan.reasons
    )


def test_calls_passing_other_arrays_do_not_show_the_domain(tmp_path: Path) -> None:
    rec = step_record(tmp_path, DRIVER_LIST, 5)
    plan = plan_of(STEP, rec, root=tmp_path)
    # model.py does no TensorFlow work at import (no seeding there) and step reads no
    # Python state at trace time: the safe default, reduce_retracing=True
    assert (plan.action, plan.safety) == ("reduce_retracing", "safe")
    assert "`x`: only float32 tensors of rank 2 (a float64 NumPy array is cast" in (plan.reasons[0])
    unsafe = plan_of(STEP, rec, root=tmp_path, unsafe_fixes=True)
    assert (unsafe.action, unsafe.safety) == ("signature", "unsafe")
    assert "the input_signature narrows the domain" in unsafe.warnings[0]


PHASED = STEP.replace("return x * 2.0 + y", "return x * PHASE + y").replace(
    "import tensorflow as tf\n", "import tensorflow as tf\n\nPHASE = 2.0\n"
)


def test_trace_time_state_keeps_the_unsafe_guarded_trace() -> None:
    """A global read while tracing, which code outside the project may change (issue
    22): reduce_retracing would keep its first value as any fix that traces less; only
    the unsafe guarded trace is offered (contract class 22 stays unfixed, not broken)."""
    assert "PHASE = 2.0" in PHASED
    calls = [{"x": tensor(n, 3), "y": tensor(n)} for n in (4, 3, 2)]
    plan = plan_of(PHASED, record(PHASED, calls, qualname="step", path="model.py"))
    assert (plan.action, plan.safety) == ("guarded_trace", "unsafe")


def test_unrecorded_calls_are_no_evidence(tmp_path: Path) -> None:
    rec = step_record(tmp_path, DRIVER_DATASET, 6)
    rec.calls += 2  # two calls from elsewhere (another tf.function)
    assert plan_of(STEP, rec, root=tmp_path).action != "signature"


def test_a_config_policy_is_the_user_asking() -> None:
    calls = [{"x": tensor(n, 3), "y": tensor(n)} for n in (4, 3, 2)]
    rec = record(STEP, calls, qualname="step")
    assert plan_of(STEP, rec, relax="batch").action == "signature"
    assert plan_of(STEP, rec, relax="all").action == "signature"
    assert plan_of(STEP, rec).action != "signature"


def test_relax_none_is_not_asking_for_a_signature() -> None:
    """review21 item 10: `--relax none` sounds cautious; it asks for no relaxation, so it
    is no evidence of the domain (the signature is the unsafe offer)."""
    calls = [{"x": tensor(n, 3), "y": tensor(n)} for n in (4, 3, 2)]
    rec = record(STEP, calls, qualname="step")
    plan = plan_of(STEP, rec, relax="none")
    assert (plan.action, plan.safety) != ("signature", "safe")
    unsafe = plan_of(STEP, rec, relax="none", unsafe_fixes=True)
    assert unsafe.safety == "unsafe"


# -- without evidence: the safe default ------------------------------------------------------

MODULE_TF = (
    "import tensorflow as tf\n\n\nclass M(tf.Module):\n    @tf.function\n"
    "    def f(self, x):\n        return x * 2.0\n"
)


def test_no_placement_and_shapes_varied_reduce_retracing() -> None:
    calls = [{"x": tensor(n, 3)} for n in range(2, 10)]
    plan = plan_of(MODULE_TF, record(MODULE_TF, calls, qualname="M.f", is_method=True))
    # a method of a class without an `__init__` of its own: nowhere to seed
    assert (plan.action, plan.safety) == ("reduce_retracing", "safe")
    assert plan.reasons[0].startswith("the input_signature is an unsafe fix here")
    assert "`autosig fix --unsafe-fixes` writes it" in plan.reasons[0]


def test_no_shape_varied_nothing_safe() -> None:
    calls = [{"x": tensor(3, dtype=d)} for d in ("float32", "float32", "float64")] * 3
    plan = plan_of(MODULE_TF, record(MODULE_TF, calls, qualname="M.f", is_method=True))
    assert plan.action == "none"


# -- what a signature narrows ---------------------------------------------------------------


def result(name: str, spec: Any) -> ParamResult:
    calls = [{name: tensor(2)}]
    rec = record("", calls)
    from autosig.infer.observations import InferOptions, analyze_param
    from autosig.profile.value_tree import walk_calls

    r = analyze_param(rec, rec.params[0], walk_calls(rec)[name], InferOptions())
    r.spec = spec
    return r


def test_narrows_names_dtype_rank_cast_list_and_keys() -> None:
    x = result("x", TensorSpecNode((None, 3), "float32"))
    ids = result("ids", TensorSpecNode((None,), "int32"))
    xs = result("xs", ListNode((TensorSpecNode((None,), "float32"),) * 2))
    batch = result("batch", DictNode((("x", TensorSpecNode((None,), "int64")),)))
    said = narrows([x, ids, xs, batch])
    assert said[0] == (
        "`x`: only float32 tensors of rank 2 (a float64 NumPy array is cast to float32 silently)"
    )
    assert said[1] == "`ids`: only int32 tensors of rank 1"
    assert said[2].startswith("`xs`: a list of exactly 2 items")
    assert said[3].startswith("`batch`: a dict with exactly the keys 'x' (another key raises)")


# -- exponents stay Python values -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "python"),
    [
        ("tf.math.pow(x, g)", True),
        ("x ** g", True),
        ("tf.pow(x, y=g)", True),
        ("tf.math.pow(g, x)", False),  # the base: a tensor computes the same
        ("x * g", False),
    ],
)
def test_an_exponent_stays_a_python_value(body: str, python: bool) -> None:
    src = f"import tensorflow as tf\n\n\n@tf.function\ndef f(x, g):\n    return {body}\n"
    calls = [{"x": tensor(n), "g": py(n / 4)} for n in range(2, 10)]
    plan = known_domain_plan(src, record(src, calls))
    g = next(p for p in plan.params if p.name == "g")
    assert (g.spec is None) == python, plan.reasons
    if python:
        assert any("`g` must stay a Python value: it is an exponent" in r for r in plan.reasons)


# -- dataset evidence says nothing about a dimension the signature keeps fixed ---------------

WIDTH = "import tensorflow as tf\n\n\n@tf.function\ndef step(x, y):\n    return {body}\n"


@pytest.mark.parametrize(
    ("body", "safety"),
    [
        ("x * 2.0 + y[:, None]", "safe"),  # dimension 1 is read by nothing: freed
        ("tf.reshape(x, [-1, x.shape[1]]) + y[:, None]", "unsafe"),  # p5: kept at 3
    ],
)
def test_a_dimension_kept_fixed_is_unsafe_whatever_the_profile_length(
    tmp_path: Path, body: str, safety: str
) -> None:
    src = WIDTH.format(body=body)
    (tmp_path / "driver.py").write_text(DRIVER_DATASET)
    calls = [{"x": tensor(n, 3), "y": tensor(n)} for n in (4, 4, 2) * 4]  # 12 calls
    rec = record(src, calls, qualname="step", path="model.py")
    rec.call_sites = [CallSite("driver.py", 6, calls=12, col=4)]
    plan = plan_of(src, rec, root=tmp_path, unsafe_fixes=True)
    assert (plan.action, plan.safety) == ("signature", safety)
    if safety == "unsafe":
        assert any("`x` dimension 1 seen only as 3 in 12 calls" in w for w in plan.warnings)


SERVING = DRIVER_DATASET + "def predict_one(row):\n    return step(np.asarray(row)[None], 0.0)\n"


@pytest.mark.parametrize(("driver", "ok"), [(DRIVER_DATASET, True), (SERVING, False)])
def test_an_unrecorded_call_in_the_file_is_no_evidence(
    tmp_path: Path, driver: str, ok: bool
) -> None:
    """review21 p2: a serving path beside the dataset loop, never run by the profile."""
    rec = step_record(tmp_path, driver, 6)
    plan = plan_of(STEP, rec, root=tmp_path)
    assert ((plan.action, plan.safety) == ("signature", "safe")) is ok
    if not ok:
        assert any(
            "driver.py:8 refers to `step` outside the recorded calls" in r for r in plan.reasons
        )


@pytest.mark.parametrize(
    ("qualname", "callee"),
    [("step", "step"), ("Trainer.step", "step"), ("Model.__call__", None), ("<lambda>", None)],
)
def test_the_name_the_calls_go_through(qualname: str, callee: str | None) -> None:
    """``FunctionRecord.callee``: what the dataset-loop questions and the call-site
    rewrite match calls by (``__call__``: any name, matched by position alone)."""
    assert record(STEP, [{"x": tensor(4, 3)}], qualname=qualname).callee == callee


def test_the_parameters_a_call_passes_as_elements() -> None:
    found = args_at(LOOPS, 8)
    assert isinstance(found, ElementArgs)
    # `m.step(x, training=y)`: position 0 and the keyword; a position past the
    # function's positional parameters names none
    assert found.covered(["x", "y"]) == {"x", "training"}
    assert found.covered([]) == {"training"}


def test_a_call_sites_file_is_read_once_while_unchanged(tmp_path: Path) -> None:
    (tmp_path / "driver.py").write_text(DRIVER_DATASET)
    first = file_facts("driver.py", tmp_path)
    assert first is not None and file_facts(str(tmp_path / "driver.py"), None) is first
    (tmp_path / "driver.py").write_text(DRIVER_DATASET + "\n# changed\n")
    assert file_facts("driver.py", tmp_path) is not first
    assert file_facts("missing.py", tmp_path) is None
    (tmp_path / "broken.py").write_text("def (:\n")
    assert file_facts("broken.py", tmp_path) is None

"""Steps taking elements of a distributed dataset: when ``fix`` writes
``input_signature=[D.element_spec]`` and what ``explain`` says. No TensorFlow: the
profile's PerReplica values are written by hand, as the recorder stores them (its own
test, ``test_distributed_tf.py``, checks that with real TensorFlow).
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from autosig.cli import cli
from autosig.explain.retraces import explain_function, render_text
from autosig.infer.planner import infer_plan
from autosig.infer.retrace_sim import reduce_retracing_traces
from autosig.infer.specs import ElementSpecNode, render_spec
from autosig.profile.format import (
    CallSignature,
    FunctionRecord,
    ParamInfo,
    Profile,
    TraceEvent,
    save_profile,
)

PROFILE = ".autosig/profile.json"
PER_REPLICA = "tensorflow.python.distribute.values.PerReplica"


def per_replica(*shape: int | None, dtype: str = "int32", replicas: int = 2) -> dict[str, Any]:
    """A PerReplica of ``replicas`` tensors of one shape, as the recorder describes it."""
    tensor = {"kind": "tensor", "shape": list(shape), "dtype": dtype}
    return {
        "kind": "object",
        "type": PER_REPLICA,
        "spec": f"PerReplicaSpec(... shape={tuple(shape)} ...)",
        "replicas": [dict(tensor) for _ in range(replicas)],
    }


def element(batch: int, length: int) -> dict[str, Any]:
    """One element of a padded (tokens, targets) distributed dataset."""
    return {
        "kind": "tuple",
        "items": [per_replica(batch, length), per_replica(batch, dtype="float32")],
    }


SHAPES = [(2, 22), (2, 18), (2, 13), (2, 23), (2, 20), (1, 4)]
"""Per-replica (batch, length) of golden case 18's six steps."""


def step_record(qualname: str = "train_step", line: int = 0, shapes=SHAPES) -> FunctionRecord:
    calls = [{"batch": element(b, n)} for b, n in shapes]
    return FunctionRecord(
        path="model.py",
        qualname=qualname,
        line=line,
        source_sha256=None,
        editable=True,
        params=[ParamInfo("batch", "POSITIONAL_OR_KEYWORD")],
        calls=len(calls),
        traces=len(calls),
        signatures=[
            CallSignature(args=a, passed={"batch": "positional"}, calls=1, first_call=i)
            for i, a in enumerate(calls)
        ],
        trace_events=[TraceEvent(call=i, signature=i) for i in range(len(calls))],
    )


HEAD = """\
import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
"""

REPLICA = """
def replica_step(inputs):
    tokens, targets = inputs
    return tf.reduce_sum(tf.cast(tokens, tf.float32)) - tf.reduce_sum(targets)
"""

STEP = """
@tf.function
def train_step(batch):
    losses = strategy.run(replica_step, args=(batch,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)
"""

DATASET = "dist_dataset = strategy.experimental_distribute_dataset(make_dataset())\n"

LOOP = """
def train():
    for batch in dist_dataset:
        train_step(batch)
"""


def plan_for(source: str, record: FunctionRecord | None = None):
    record = record or step_record(line=_def_line(source, "train_step"))
    plan = infer_plan(Profile(functions=[record]), {"model.py": source})
    (entry,) = plan.functions
    return entry


def _def_line(source: str, name: str) -> int:
    for number, text in enumerate(source.splitlines(), start=1):
        if text.lstrip().startswith(f"def {name}("):
            return number
    raise AssertionError(name)


def test_module_level_dataset_before_the_step_gets_the_guides_signature() -> None:
    source = HEAD + DATASET + REPLICA + STEP + LOOP
    entry = plan_for(source)
    assert entry.action == "signature", entry.reasons
    assert entry.safety == "safe"
    (param,) = entry.params
    assert param.spec == ElementSpecNode("dist_dataset")
    assert render_spec(param.spec) == "dist_dataset.element_spec"
    assert any("TensorFlow's distributed input guide" in r for r in entry.reasons)


@pytest.mark.parametrize(
    "loop",
    [
        "\ndef train():\n    it = iter(dist_dataset)\n    for _ in range(3):\n"
        "        train_step(next(it))\n",
        "\ndef train():\n    train_step(next(iter(dist_dataset)))\n",
        "\ndef train():\n    it = iter(dist_dataset)\n    batch = next(it)\n    train_step(batch)\n",
        "\nfor batch in dist_dataset:\n    train_step(batch)\n",
    ],
    ids=["next-of-iter-name", "next-iter-inline", "assigned-next", "module-loop"],
)
def test_every_way_of_taking_an_element_is_recognised(loop: str) -> None:
    entry = plan_for(HEAD + DATASET + REPLICA + STEP + loop)
    assert entry.action == "signature", entry.reasons


def test_dataset_and_step_in_the_same_function() -> None:
    body = textwrap.indent(
        DATASET + REPLICA + STEP + "\nfor batch in dist_dataset:\n    train_step(batch)\n", "    "
    )
    source = HEAD + "\n\ndef main():\n" + body
    record = step_record("main.<locals>.train_step", _def_line(source, "train_step"))
    entry = plan_for(source, record)
    assert entry.action == "signature", entry.reasons
    assert entry.params[0].spec == ElementSpecNode("dist_dataset")


def _refused(source: str, why: str) -> None:
    entry = plan_for(source)
    assert entry.action != "signature"
    assert not any(isinstance(p.spec, ElementSpecNode) for p in entry.params)
    joined = " ".join(entry.reasons)
    assert "input_signature=[dist_dataset.element_spec]" in joined, joined
    assert why in joined, joined


def test_dataset_assigned_after_the_decorator_is_not_used() -> None:
    _refused(HEAD + REPLICA + STEP + DATASET + LOOP, "after the decorator runs")


def test_dataset_assigned_twice_is_not_used() -> None:
    source = HEAD + DATASET + REPLICA + STEP + LOOP + "\n" + DATASET
    _refused(source, "not visibly an element of a distributed dataset")


def test_dataset_assigned_inside_a_with_block_is_not_used() -> None:
    source = HEAD + "with strategy.scope():\n    " + DATASET + REPLICA + STEP + LOOP
    _refused(source, "not assigned in the block")


def test_step_called_with_anything_else_is_not_signed() -> None:
    loop = LOOP + "\n\ndef evaluate(batch):\n    return train_step(batch)\n"
    _refused(HEAD + DATASET + REPLICA + STEP + loop, "not visibly an element")


def test_step_passed_around_as_a_value_is_not_signed() -> None:
    loop = LOOP + "\n\nSTEPS = [train_step]\n"
    _refused(HEAD + DATASET + REPLICA + STEP + loop, "used other than by a call")


def test_elements_of_two_datasets_are_not_signed() -> None:
    other = "eval_dataset = strategy.experimental_distribute_dataset(make_dataset())\n"
    loop = LOOP + "\n\ndef evaluate():\n    for batch in eval_dataset:\n        train_step(batch)\n"
    _refused(HEAD + DATASET + other + REPLICA + STEP + loop, "more than one dataset")


def test_a_static_shape_read_in_the_replica_function_blocks_it() -> None:
    replica = REPLICA.replace(
        "    return",
        "    width = tokens.shape[1]\n    tokens = tf.reshape(tokens, [-1, width])\n    return",
    )
    _refused(HEAD + DATASET + replica + STEP + LOOP, "tokens.shape[1]")
    entry = plan_for(HEAD + DATASET + replica + STEP + LOOP)
    assert entry.action == "none"  # reduce_retracing would relax that dimension too


def test_unpacking_the_element_is_not_a_shape_read() -> None:
    """``tokens, targets = inputs`` unpacks a Python tuple (the profile says so)."""
    entry = plan_for(HEAD + DATASET + REPLICA + STEP + LOOP)
    assert entry.action == "signature"
    assert not any("tokens, targets" in r for r in entry.reasons)


def test_a_step_with_more_parameters_is_not_signed() -> None:
    step = STEP.replace("def train_step(batch):", "def train_step(batch, scale=1.0):")
    source = HEAD + DATASET + REPLICA + step + LOOP
    record = step_record(line=_def_line(source, "train_step"))
    record.params.append(ParamInfo("scale", "POSITIONAL_OR_KEYWORD", {"kind": "python"}))
    entry = plan_for(source, record)
    assert entry.action != "signature"
    assert "takes other parameters too (scale)" in " ".join(entry.reasons)


def test_reduce_retracing_is_planned_when_the_signature_cannot_be() -> None:
    """PerReplica shapes vary: reduce_retracing helps (it used to be 'would not help')."""
    entry = plan_for(HEAD + REPLICA + STEP + DATASET + LOOP)
    assert entry.action == "reduce_retracing", entry.reasons
    assert not any("would not help" in r for r in entry.reasons)


# -- explain ------------------------------------------------------------------------------


def test_replay_of_golden_18_gives_the_measured_three() -> None:
    assert reduce_retracing_traces(step_record()) == 3
    one_dimension = [(2, n) for n in (22, 18, 13, 23, 20, 9)]
    assert reduce_retracing_traces(step_record(shapes=one_dimension)) == 2


def test_explain_names_the_dimension_per_replica() -> None:
    lines = [r.text for r in explain_function(step_record()).retraces]
    assert lines[1] == "batch[0] shape (2, 22) -> (2, 18): dimension 1 varies (each of 2 replicas)"
    assert "batch[1] shape (2,) -> (1,): dimension 0 varies (each of 2 replicas)" in lines[5]


def test_replicas_that_change_differently_are_listed_each() -> None:
    rec = step_record(shapes=[(2, 5), (2, 7)])
    second = rec.signatures[1].args["batch"]["items"][0]["replicas"]
    second[1] = {"kind": "tensor", "shape": [1, 7], "dtype": "int32"}
    (_, change) = [r.text for r in explain_function(rec).retraces]
    assert change.startswith("replica 0: batch[0] shape (2, 5) -> (2, 7): dimension 1 varies; ")
    assert "replica 1: batch[0] shape (2, 5) -> (1, 7): dimensions 0, 1 vary" in change


def test_explain_without_a_plan_gives_both_counts() -> None:
    text = render_text([explain_function(step_record(), PROFILE)])
    assert "does not stop this" not in text
    assert "dimension 1 of batch[0] varies per replica in 4 traces" in text
    assert "reduce_retracing=True would make it 3 traces instead of 6" in text
    assert "input_signature=[<dataset>.element_spec]" in text
    assert "makes it 1" in text


@contextmanager
def inside(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _project(tmp_path: Path, source: str) -> Path:
    (tmp_path / "model.py").write_text(source)
    record = step_record(line=_def_line(source, "train_step"))
    save_profile(Profile(functions=[record], project_root=str(tmp_path)), tmp_path / PROFILE)
    return tmp_path


def _run(where: Path, *args: str) -> str:
    with inside(where):
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def test_explain_and_fix_through_the_cli(tmp_path: Path) -> None:
    where = _project(tmp_path, HEAD + DATASET + REPLICA + STEP + LOOP)
    text = _run(where, "explain", PROFILE)
    assert (
        "fix: autosig fix --profile .autosig/profile.json writes "
        "input_signature=[dist_dataset.element_spec]" in text
    )
    assert "would make it 3 traces instead of 6" in text
    _run(where, "fix", "model.py", "--profile", PROFILE)
    fixed = (where / "model.py").read_text()
    assert "@tf.function(input_signature=[dist_dataset.element_spec])\ndef train_step" in fixed
    with inside(where):
        again = CliRunner().invoke(cli, ["fix", "model.py", "--profile", PROFILE, "--diff"])
    assert again.exit_code == 0, again.output  # idempotent: nothing left to change


def test_explain_gives_the_code_to_paste_when_fix_cannot(tmp_path: Path) -> None:
    where = _project(tmp_path, HEAD + REPLICA + STEP + DATASET + LOOP)
    text = _run(where, "explain", PROFILE)
    assert "adds reduce_retracing=True: 3 traces instead of 6" in text
    assert "`@tf.function(input_signature=[dist_dataset.element_spec])` would trace it once" in text
    assert "move the assignment above the function" in text
    assert "does not stop this" not in text

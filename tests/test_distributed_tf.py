"""tf.distribute inputs with real TensorFlow on two logical CPU devices.

Logical devices must be configured before TensorFlow initialises its devices, so every
program here runs in its own subprocess (``python script.py``, under ``autosig profile``
where a profile is needed). Checked: the recorder's per-replica description, the replay
of ``reduce_retracing=True`` against TensorFlow's own count, the measured facts the fix
relies on (an ``element_spec`` pins a dimension only when every element has that size),
and ``autosig fix`` on a project: the rewritten program computes the same losses and
weights, on elements the profile never saw too, with one trace.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autosig.infer.retrace_sim import reduce_retracing_traces
from autosig.profile.format import load_profile

pytestmark = [pytest.mark.tf, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
PROFILE = ".autosig/profile.json"

DEVICES = """\
import tensorflow as tf

_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
)
"""


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(ROOT))
    return out


def run(args: list[str], cwd: Path, forks: Any = None) -> subprocess.CompletedProcess[str]:
    """``args`` in ``cwd``; with ``forks``, the program autosig runs is its fork."""
    environ = forks.launch_env(env()) if forks is not None else env()
    proc = subprocess.run(args, cwd=cwd, env=environ, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), f"{args}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return proc


def autosig(*args: str, cwd: Path, forks: Any = None) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "autosig", *args], cwd, forks)


def last_json(stdout: str, tag: str) -> dict:
    lines = [line for line in stdout.splitlines() if line.startswith(tag + " ")]
    assert lines, stdout
    return json.loads(lines[-1][len(tag) + 1 :])


REPLAY = (
    DEVICES
    + """
import json
import sys

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
relax = sys.argv[1] == "reduce_retracing"


def padded(lengths, batch, drop=False):
    rows = tf.ragged.constant([[1] * n for n in lengths], dtype=tf.int32)
    data = tf.data.Dataset.from_tensor_slices(rows).map(lambda r: r)
    return strategy.experimental_distribute_dataset(data.padded_batch(batch, drop_remainder=drop))


@tf.function(reduce_retracing=relax)
def lengths_step(x):
    return strategy.run(lambda t: tf.reduce_sum(t), args=(x,))


@tf.function(reduce_retracing=relax)
def partial_step(x):
    return strategy.run(lambda t: tf.reduce_sum(t), args=(x,))


@tf.function(reduce_retracing=relax)
def tuple_step(x):
    return strategy.run(lambda t: tf.reduce_sum(t[0]) + tf.reduce_sum(t[1]), args=(x,))


counts = {}
for fn, lengths, batch in [
    (lengths_step, [3, 9, 5, 7, 2, 8, 4, 6, 1, 10, 11, 12], 2),
    (partial_step, [3, 9, 5, 7, 2, 8, 4, 6, 1, 10, 11, 12, 13, 14], 4),
]:
    for element in padded(lengths, batch):
        fn(element)
    counts[fn.__name__] = fn.experimental_get_tracing_count()
rows = tf.ragged.constant([[1] * n for n in [2, 6, 3, 8, 8, 1, 5]], dtype=tf.int32)
pairs = tf.data.Dataset.from_tensor_slices((rows, tf.range(7))).map(lambda r, y: (r, y))
for element in strategy.experimental_distribute_dataset(pairs.padded_batch(2)):
    tuple_step(element)
counts["tuple_step"] = tuple_step.experimental_get_tracing_count()
print("COUNTS " + json.dumps(counts))
pinned = padded([4] * 12, 4, drop=True)
shapes = {tuple(t.shape) for element in pinned for t in element.values}
print("PINNED " + json.dumps({"spec": [s.shape.as_list() for s in pinned.element_spec._component_specs],
                               "shapes": sorted(list(s) for s in shapes)}))
free = padded([3, 4, 5, 6, 7], 4)
print("FREE " + json.dumps([s.shape.as_list() for s in free.element_spec._component_specs]))
"""
)


def test_replay_matches_tensorflow_and_element_spec_facts(tmp_path: Path, tf_forks: Any) -> None:
    (tmp_path / "replay.py").write_text(REPLAY)
    # profiled as a fork of the worker's TensorFlow import (tf_forks; golden 18 profiles
    # a distributed step in a process of its own)
    proc = autosig(
        "profile",
        "-o",
        PROFILE,
        "--",
        *tf_forks.launcher(),
        "replay.py",
        "plain",
        cwd=tmp_path,
        forks=tf_forks,
    )
    plain = last_json(proc.stdout, "COUNTS")
    replayed = tf_forks.run(["replay.py", "reduce_retracing"], tmp_path, env())  # a fork
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    relaxed = last_json(replayed.stdout, "COUNTS")
    assert plain["lengths_step"] == 6 and relaxed["lengths_step"] == 2  # the 6 -> 2
    assert relaxed["partial_step"] == 3  # the batch dimension relaxes later: one more
    profile = load_profile(tmp_path / PROFILE)
    records = {f.qualname: f for f in profile.functions}
    # The recorder describes each replica's tensor (and the tuple element's parts).
    value = records["lengths_step"].signatures[0].args["x"]
    assert value["type"].endswith("PerReplica")
    assert [r["kind"] for r in value["replicas"]] == ["tensor", "tensor"]
    pair = records["tuple_step"].signatures[0].args["x"]
    assert pair["kind"] == "tuple" and all("replicas" in i for i in pair["items"])
    # Replaying each function's recorded calls gives what reduce_retracing really did.
    for name, count in relaxed.items():
        assert records[name].traces == plain[name]
        assert reduce_retracing_traces(records[name]) == count, name
    # element_spec pins the batch only with drop_remainder=True, and then every element
    # has that size: the guide's signature needs no relaxed batch dimension.
    pinned = last_json(proc.stdout, "PINNED")
    assert pinned["spec"] == [[2, None], [2, None]]  # padded_batch: the length stays None
    assert pinned["shapes"] == [[2, 4]]
    assert last_json(proc.stdout, "FREE") == [[None, None], [None, None]]


MODEL = (
    DEVICES
    + '''
strategy = tf.distribute.MirroredStrategy([d.name for d in tf.config.list_logical_devices("CPU")])
GLOBAL_BATCH = 6


def make_dataset():
    """Feature sequences of uneven lengths in a dict, shuffled, padded per batch."""
    lengths = [1 + (7 * i) % 11 for i in range(20)]
    rows = tf.ragged.constant([[0.1 * (i + j) for j in range(n)] for i, n in enumerate(lengths)])
    targets = tf.constant([float(i % 4) for i in range(20)])
    data = tf.data.Dataset.from_tensor_slices((rows, targets)).map(lambda r, y: {"x": r, "y": y})
    return data.shuffle(20, seed=3).padded_batch(GLOBAL_BATCH)


dist_dataset = strategy.experimental_distribute_dataset(make_dataset())

with strategy.scope():
    scale = tf.Variable(0.5, aggregation=tf.VariableAggregation.SUM)


def replica_step(features):
    with tf.GradientTape() as tape:
        prediction = tf.reduce_sum(features["x"], axis=1) * scale
        per_example = tf.square(prediction - features["y"])
        loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH)
    scale.assign_sub(0.01 * tape.gradient(loss, scale))
    return loss


@tf.function
def step(features):
    losses = strategy.run(replica_step, args=(features,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)


def epoch():
    it = iter(dist_dataset)
    return [float(step(next(it))) for _ in range(4)]
'''
)

DRIVER = """\
import importlib.util
import json
import os
import sys

spec = importlib.util.spec_from_file_location("model", sys.argv[1])
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)
print("LOSSES " + " ".join(f"{v:.6f}" for v in model.epoch()))
print("TRACES " + json.dumps(model.step.experimental_get_tracing_count()))
if os.environ.get("MORE") == "1":  # two more epochs: shuffles the profile never saw
    print("MORE " + " ".join(f"{v:.6f}" for v in model.epoch() + model.epoch()))
print(f"SCALE {model.scale.numpy():.6f}")
"""


def test_fix_writes_the_element_spec_signature_and_keeps_results(
    tmp_path: Path, tf_forks: Any
) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "driver.py").write_text(DRIVER)
    autosig(
        "profile",
        "-o",
        PROFILE,
        "--",
        *tf_forks.launcher(),
        "driver.py",
        "model.py",
        cwd=tmp_path,
        forks=tf_forks,
    )
    (tmp_path / "original.py").write_text(MODEL)
    autosig("fix", "model.py", "--profile", PROFILE, cwd=tmp_path)
    fixed = (tmp_path / "model.py").read_text()
    assert "@tf.function(input_signature=[dist_dataset.element_spec])\ndef step(" in fixed
    outputs = {}
    for name in ("original.py", "model.py"):
        proc = tf_forks.run(["driver.py", name], tmp_path, {**env(), "MORE": "1"})  # a fork
        assert proc.returncode == 0, proc.stderr[-3000:]
        outputs[name] = proc.stdout.splitlines()
    traces = {name: last_json("\n".join(lines), "TRACES") for name, lines in outputs.items()}
    assert traces["original.py"] >= 3 and traces["model.py"] == 1, traces
    same = [line for line in outputs["original.py"] if not line.startswith("TRACES")]
    assert same == [line for line in outputs["model.py"] if not line.startswith("TRACES")]
    assert any(line.startswith("MORE ") for line in same)

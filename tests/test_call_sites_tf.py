"""Call-site tensorization with real TensorFlow: the rewritten program computes the same.

A program whose tf.functions take a model object plus Python numbers (a class index, a
step counter that needs int64, a float temperature) is profiled and fixed with the real
CLI; then the original and the rewritten program run on values the profile never saw
(other and negative class indices, steps beyond int32) and must print the same
results, with fewer traces.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.tf, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent

MODEL = textwrap.dedent(
    """\
    import numpy as np
    import tensorflow as tf


    class Classifier(tf.Module):
        def __init__(self, classes):
            super().__init__()
            rng = np.random.default_rng(3)
            self.w = tf.Variable(rng.normal(size=(6, classes)).astype("float32"))

        def __call__(self, x):
            return tf.nn.relu(x) @ self.w


    @tf.function
    def explain(model, x, class_index):
        with tf.GradientTape() as tape:
            tape.watch(x)
            score = tf.reduce_sum(model(x)[:, class_index])
        return tape.gradient(score, x)


    @tf.function
    def jitter(model, x, step, temperature):
        seed = step * 1000003 % 7919
        logits = model(x) / temperature
        return tf.nn.softmax(logits) + tf.cast(seed, tf.float32) * 1e-6


    def run(model, x, classes, steps, temperatures):
        maps = [explain(model, x, c) for c in classes]
        mixes = []
        for step, temperature in zip(steps, temperatures):
            mixes.append(jitter(model, x, step, temperature))
        return maps, mixes
    """
)

DRIVER = textwrap.dedent(
    """\
    import importlib.util
    import json
    import os
    import sys

    import numpy as np

    spec = importlib.util.spec_from_file_location("model", sys.argv[1])
    model = importlib.util.module_from_spec(spec)
    sys.modules["model"] = model
    spec.loader.exec_module(model)

    classifier = model.Classifier(6)
    x = np.random.default_rng(5).normal(size=(3, 6)).astype("float32")


    def show(label, classes, steps, temperatures):
        maps, mixes = model.run(classifier, x, classes, steps, temperatures)
        print(json.dumps({
            "label": label,
            "maps": [np.round(m.numpy(), 6).tolist() for m in maps],
            "mixes": [np.round(m.numpy(), 6).tolist() for m in mixes],
        }))


    show("profiled", range(4), [1, 2, 3, 4, 5], [0.5, 1.0, 0.5, 2.0, 1.0])
    if os.environ.get("UNSEEN") == "1":
        show("unseen", [4, 5, -1, -6], [3_000_000_000, 2**40, -7, 0], [0.25, 3.0, 1.5, 0.1])
    traces = {
        "explain": model.explain.experimental_get_tracing_count(),
        "jitter": model.jitter.experimental_get_tracing_count(),
    }
    print("TRACES " + json.dumps(traces))
    """
)


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done


def _results(stdout: str) -> tuple[list[dict], dict[str, int]]:
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    (traces,) = [json.loads(line[7:]) for line in stdout.splitlines() if line.startswith("TRACES")]
    return rows, traces


def test_rewritten_call_sites_compute_the_same_on_unseen_values(
    tmp_path: Path, tf_forks: Any
) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "driver.py").write_text(DRIVER)
    python = sys.executable
    # the profiled program is a fork of the worker's TensorFlow import (tf_forks)
    profiled = _run(
        [python, "-m", "autosig", "profile", "--", *tf_forks.launcher(), "driver.py", "model.py"],
        tmp_path,
        **tf_forks.launch_env({}),
    )
    assert profiled.returncode == 0, profiled.stderr[-3000:]
    shutil.copyfile(tmp_path / "model.py", tmp_path / "original.py")
    # jitter's temperature meets a float32 tensor and `x` was float32 in every call,
    # which nothing shows is its only dtype: its call-site plan is an unsafe fix
    fix = [python, "-m", "autosig", "fix", "model.py", "--profile", ".autosig/profile.json"]
    fixed = _run([*fix, "--unsafe-fixes"], tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    text = (tmp_path / "model.py").read_text()
    assert "maps = [explain(model, x, tf.constant(c)) for c in classes]" in text
    wrapped = "tf.constant(step, tf.int64), tf.constant(temperature, tf.float32)"
    assert f"jitter(model, x, {wrapped})" in text
    assert text.count("tf.constant(") == 3 and "input_signature" not in text
    assert "Fixed 1 file: 2 call sites passing tensors." in fixed.stderr

    # the programs themselves: forks of one TensorFlow import (conftest's tf_forks)
    before = tf_forks.run(["driver.py", "original.py"], tmp_path, _env(UNSEEN="1"))
    after = tf_forks.run(["driver.py", "model.py"], tmp_path, _env(UNSEEN="1"))
    assert before.returncode == 0 and after.returncode == 0, before.stderr + after.stderr
    rows_before, traces_before = _results(before.stdout)
    rows_after, traces_after = _results(after.stdout)
    assert [r["label"] for r in rows_before] == ["profiled", "unseen"]
    assert rows_after == rows_before
    assert traces_before == {"explain": 8, "jitter": 9}
    assert traces_after == {"explain": 1, "jitter": 1}

    again = _run([*fix, "--diff", "--unsafe-fixes"], tmp_path)
    assert again.returncode == 0 and again.stdout == ""

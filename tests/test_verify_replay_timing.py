"""Step time: one statistic for workload runs and replays; the replay's interleaved timer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autosig.verify.runs import RunResult
from autosig.verify.timing import median_step, steady_state, time_interleaved

# -- the statistic ------------------------------------------------------------------------


def test_warm_up_excluded_per_run() -> None:
    assert steady_state([9.0, 1.0, 2.0]) == [1.0, 2.0]
    assert steady_state([9.0]) == [9.0]  # nothing else: the warm-up is all there is
    assert steady_state([]) == []
    # two processes, each with its own first trace: both excluded
    assert median_step([[9.0, 1.0, 3.0], [8.0, 2.0]]) == 2.0
    assert median_step([[5.0, 1.0]], warmup=0) == 3.0
    assert median_step([]) is None


def test_workload_runs_use_the_same_statistic(tmp_path: Path) -> None:
    """Normal mode: per process timings from the status files, warm-up call dropped."""
    run = RunResult("original", "graph")
    entry = {"file": str(tmp_path / "m.py"), "qualname": "step", "line": 3}
    run.statuses = [
        {"timings": [{**entry, "seconds": [0.5, 0.01, 0.03]}]},
        {"timings": [{**entry, "seconds": [0.4, 0.02]}]},
    ]
    assert run.step_times(tmp_path) == {("m.py", "step"): [[0.5, 0.01, 0.03], [0.4, 0.02]]}
    assert run.median_step(tmp_path, "m.py", "step") == 0.02
    assert run.median_step(tmp_path, "m.py", "other") is None


# -- the interleaved timer ----------------------------------------------------------------


class FakeClock:
    """Each call advances time by the duration the current callable declares."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_interleaved_rounds_rotate_order_and_time_every_call() -> None:
    clock = FakeClock()
    log: list[str] = []

    def make(variant: str, index: int, cost: float):
        def call() -> None:
            log.append(f"{variant}{index}")
            clock.now += cost

        return call

    calls = {
        "original": [make("o", i, 0.002) for i in range(2)],
        "rewritten": [make("r", i, 0.001) for i in range(2)],
    }
    out = time_interleaved(calls, min_calls=6, min_rounds=2, clock=clock)
    # 6 calls over 2 inputs: 3 rounds; input by input, variant order rotated per round
    assert log == ["o0", "r0", "o1", "r1", "r0", "o0", "r1", "o1", "o0", "r0", "o1", "r1"]
    assert out["original"] == pytest.approx([0.002] * 6)
    assert out["rewritten"] == pytest.approx([0.001] * 6)


def test_slow_steps_stop_at_the_budget_after_one_round() -> None:
    clock = FakeClock()

    def slow() -> None:
        clock.now += 1.5

    out = time_interleaved({"original": [slow], "rewritten": [slow]}, budget_s=2.0, clock=clock)
    assert len(out["original"]) == 1 and len(out["rewritten"]) == 1


def test_nothing_to_time() -> None:
    assert time_interleaved({"original": [], "rewritten": []}) == {"original": [], "rewritten": []}


# -- replay on CPU ------------------------------------------------------------------------

MODEL = """\
import tensorflow as tf


@tf.function
def step(x):
    return tf.reduce_sum(tf.tanh(x) * 2.0, axis=-1)
"""

TRAIN = """\
import tensorflow as tf

from model import step

# 8 calls with the elements of a tf.data dataset: evidence of the domain, so the fix is
# an input_signature (one trace after) and not a guarded trace or reduce_retracing
batches = tf.data.Dataset.range(3, 11).map(lambda n: tf.random.uniform((4, n)))
for x in batches:
    step(x)
"""


@pytest.mark.tf
def test_replay_reports_median_step_and_compiles(tmp_path: Path, tf_forks: Any) -> None:
    from autosig.profile.format import load_profile
    from autosig.report.verdicts import render
    from autosig.verify.candidate import build_candidate
    from autosig.verify.replay import replay_candidate
    from autosig.verify.runner import VerifySettings

    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN)
    # the profiled program is a fork of the worker's TensorFlow import (tf_forks): the
    # replay's report is tested here, not how a command starts
    profiled = subprocess.run(
        [sys.executable, "-m", "autosig", "profile", "--", *tf_forks.launcher(), "train.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=tf_forks.launch_env({**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}),
        timeout=120,
        check=False,
    )
    assert profiled.returncode == 0, profiled.stderr
    profile_path = tmp_path / ".autosig" / "profile.json"
    profile = load_profile(profile_path)
    candidate = build_candidate(profile, tmp_path)
    report = replay_candidate(profile, profile_path, candidate, VerifySettings(device="cpu"))
    (verdict,) = report.functions
    assert verdict.status == "equivalent"
    graph, xla = verdict.modes
    for outcome in (graph, xla):
        before, after = outcome.median_step_s
        assert before is not None and after is not None
        assert 0 < before < 0.1 and 0 < after < 0.1
        assert outcome.trace_time_s == (None, None)  # a replay does not measure it
    assert graph.traces == (8, 1)
    assert xla.xla_compiles == (8, 8)  # one trace after, but one compile per shape
    text = render(report, "text")
    assert "median step ? ->" not in text and "median step" in text
    assert "timed interleaved" in text
    modes = json.loads(render(report, "json"))["functions"][0]["modes"]
    assert all(None not in m["median_step_s"] for m in modes)
    assert modes[1]["xla_compiles"] == [8, 8]

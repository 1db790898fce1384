"""End-to-end verification on small real programs (TensorFlow, CPU, subprocesses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

MODEL = """\
import tensorflow as tf

SCALE = tf.constant(2.0)  # eager work at import: the guarded trace's seeding adds none


@tf.function
def step(x):
    return tf.reduce_sum(x * SCALE, axis=-1)


@tf.function
def repeat(x, n):
    parts = [x for _ in range(n)]
    return tf.concat(parts, axis=0)
"""

TRAIN = """\
import numpy as np
import tensorflow as tf

from model import repeat, step

for n in range(3, 9):
    step(tf.constant(np.random.rand(4, n), tf.float32))
for n in (1, 2, 3):
    repeat(tf.ones([2]), n)
print("done")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def _autosig(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autosig", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
        timeout=300,
        check=False,
    )


@pytest.mark.tf
def test_verify_variable_length_inputs_equivalent_graph_and_xla(project: Path) -> None:
    profiled = _autosig(project, "profile", "--", sys.executable, "train.py")
    assert profiled.returncode == 0, profiled.stderr
    done = _autosig(project, "verify", "--format", "json", "--", sys.executable, "train.py")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["modes"] == ["graph", "xla"]
    assert report["device"]["device"] == "cpu"
    step = next(f for f in report["functions"] if f["qualname"] == "step")
    assert step["status"] == "equivalent"
    assert "guarded_trace" in step["changes"]  # 6 calls: a short profile (issue 21)
    graph, xla = step["modes"]
    assert graph["traces"] == [6, 1] and graph["calls_compared"] == 6
    assert xla["traces"][1] == 1
    assert xla["xla_compiles"][1] == 6  # one trace, but XLA compiles per concrete shape
    assert (project / "model.py").read_text() == MODEL  # nothing written
    assert "Verified 2 functions" in done.stderr


@pytest.mark.tf
def test_tensorized_list_size_is_caught_and_not_written(project: Path) -> None:
    from autosig.infer.plan import FunctionPlan, ParamPlan, Plan
    from autosig.infer.specs import TensorSpecNode
    from autosig.profile.format import load_profile
    from autosig.profile.launch import run_recorded
    from autosig.verify.gate import gate_fixes

    out = project / ".autosig" / "profile.json"
    import os

    cwd = os.getcwd()
    os.chdir(project)
    try:
        assert run_recorded([sys.executable, "train.py"], out) == 0
    finally:
        os.chdir(cwd)
    profile = load_profile(out)
    mistaken = FunctionPlan(
        path="model.py",
        qualname="repeat",
        line=11,
        action="signature",
        params=(
            ParamPlan("x", TensorSpecNode((2,), "float32"), "by hand"),
            ParamPlan("n", TensorSpecNode((), "int32"), "by hand: the mistake"),
        ),
    )
    result = gate_fixes(profile, project, plan=Plan([mistaken]))
    assert result.fallbacks, result.messages()
    first = result.fallbacks[0]
    assert first.qualname == "repeat" and first.reason.startswith("could not run")
    assert "n as Python value" in first.action
    written = result.texts.get("model.py", "")
    assert "TensorSpec(shape=[], dtype=tf.int32)" not in written
    assert result.report is not None and result.report.exit_code == 0
    assert (project / "model.py").read_text() == MODEL

"""Evidence of the domain with real TensorFlow (issue 21): the whole pipeline
(``autosig profile``, ``autosig fix``) on a project whose step is called from a loop
over a ``tf.data`` dataset (the signature is the safe fix: every call passes dataset
elements) and on the same step called with NumPy arrays (no evidence: the safe default,
``reduce_retracing=True``); the original and the fixed module then run on inputs the
profile never saw (another batch size; a float64 array the signature would cast)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tf, pytest.mark.slow]

AUTOSIG = Path(sys.executable).with_name("autosig")

MODEL = """\
import tensorflow as tf


@tf.function
def step(x, y):
    return tf.reduce_sum(x * 1.5, axis=1) + y
"""

DATASET_DRIVER = """\
import json
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model

batch = int(os.environ.get("BATCH", "4"))
xs = np.arange(30, dtype=np.float32).reshape(10, 3) / 7
ys = np.arange(10, dtype=np.float32)
ds = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(batch)
out = []
for x, y in ds:
    out.append(model.step(x, y).numpy().tolist())
print(json.dumps({"out": out, "traces": model.step.experimental_get_tracing_count()}))
"""

ARRAY_DRIVER = """\
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model

dtype = os.environ.get("DTYPE", "float32")
out = []
for n in (4, 4, 2) if dtype == "float32" else (3,):
    x = np.full([n, 3], 1.0 + 1e-12, dtype=dtype)
    y = np.ones([n], dtype=dtype)
    out.append(model.step(x, y).numpy().tolist())
print(json.dumps({"out": out, "traces": model.step.experimental_get_tracing_count()}))
"""


def run(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": "", **(env or {})}
    done = subprocess.run(
        list(args), cwd=root, capture_output=True, text=True, env=full, timeout=600, check=False
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.stdout + done.stderr


def project(tmp_path: Path, driver: str) -> tuple[Path, str]:
    """Profile and fix a copy; return the fixed copy and the fix's summary."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (root / "model.py").write_text(MODEL)
    (root / "driver.py").write_text(driver)
    run(root, str(AUTOSIG), "profile", "--", sys.executable, "driver.py")
    summary = run(root, str(AUTOSIG), "fix", "model.py", "--profile", ".autosig/profile.json")
    return root, summary


def results(root: Path, module: str, env: dict[str, str]) -> dict:
    (root / "model.py").write_text(module)
    out = run(root, sys.executable, "driver.py", env=env)
    (line,) = [line for line in out.splitlines() if line.startswith('{"out"')]
    return json.loads(line)


def test_dataset_elements_keep_the_signature_and_its_results(tmp_path: Path) -> None:
    root, summary = project(tmp_path, DATASET_DRIVER)
    fixed = (root / "model.py").read_text()
    assert "input_signature=" in fixed, summary
    assert "(unsafe" not in summary
    for batch in ("3", "7"):  # sizes the profile never saw
        original = results(root, MODEL, {"BATCH": batch})
        after = results(root, fixed, {"BATCH": batch})
        assert after["out"] == original["out"]
        assert after["traces"] == 1 < original["traces"]


def test_numpy_arrays_get_the_safe_default_that_casts_nothing(tmp_path: Path) -> None:
    root, summary = project(tmp_path, ARRAY_DRIVER)
    fixed = (root / "model.py").read_text()
    assert "input_signature" not in fixed and "reduce_retracing=True" in fixed, summary
    assert "an unsafe fix here" in summary or "not a signature" in summary
    # a float64 array: a float32 signature would cast 1.000000000001 to 1.0
    original = results(root, MODEL, {"DTYPE": "float64"})
    after = results(root, fixed, {"DTYPE": "float64"})
    assert after["out"] == original["out"]

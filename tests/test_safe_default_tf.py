"""The safe default with real TensorFlow, on the reviewer's programs (review21 p8g, p11,
p12): ``autosig profile``, ``autosig fix`` (safe fixes only), then the original and the
fixed program run on inputs the profile never saw and must print the same. Before the
fix: p8g raised ValueError at width 4 (reduce_retracing relaxed a dimension the probes
found read), p11 printed 3, 6, 6, 6, 6 for 3, 6, 9, 12, 15 (reduce_retracing kept the
trace-time value of a global), p12 raised TypeError for float64 `x` (the call site passed
`tf.constant(k, tf.float32)`). Unit pairs: ``test_safe_default.py``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tf, pytest.mark.slow]

AUTOSIG = Path(sys.executable).with_name("autosig")

P8G = """\
import sys
import numpy as np
import tensorflow as tf


@tf.function
def columns(x):
    total = tf.zeros([])
    for c in getattr(tf, "unstack")(x, axis=1):
        total += tf.reduce_sum(c)
    return total


UNSEEN = len(sys.argv) > 1 and sys.argv[1] == "unseen"
widths = [3, 3, 3, 4] if UNSEEN else [3, 3, 3, 3]
for n, w in zip([2, 5, 7, 9], widths):
    print(float(columns(np.ones([n, w], np.float32))))
"""

P12 = """\
import sys
import numpy as np
import tensorflow as tf


@tf.function
def shifted(x, k):
    return tf.reduce_sum(x) + k


UNSEEN = len(sys.argv) > 1 and sys.argv[1] == "unseen"
dtype = np.float64 if UNSEEN else np.float32   # e.g. data loaded from another file
for i, k in enumerate([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]):
    print(float(shifted(np.ones([2 + i % 3, 3], dtype), k)))
"""

P11_MODEL = """\
import tensorflow as tf

import config


@tf.function
def scaled_mean(x):
    n = tf.cast(x.shape[0], tf.float32)
    return tf.reduce_sum(x) / n * config.SCALE
"""

P11_HARNESS = """\
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import config
import model_a
for epoch, batch in enumerate([2, 3, 4, 5, 6]):
    config.SCALE = 1.0 + epoch
    print(float(model_a.scaled_mean(np.ones([batch, 3], np.float32))))
"""


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.run(
        list(args), cwd=cwd, capture_output=True, text=True, env=env, timeout=600, check=False
    )


def outcome(done: subprocess.CompletedProcess[str]) -> tuple[int, str]:
    return done.returncode, done.stdout


def fix(cwd: Path, target: str, profile: Path) -> str:
    done = run(cwd, str(AUTOSIG), "fix", target, "--profile", str(profile))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.stdout + done.stderr


@pytest.mark.parametrize("name, program", [("p8g", P8G), ("p12", P12)])
def test_the_fixed_program_matches_the_original_on_unseen_inputs(
    tmp_path: Path, name: str, program: str
) -> None:
    original, fixed = tmp_path / "original", tmp_path / "fixed"
    original.mkdir()
    (original / "prog.py").write_text(program)
    done = run(original, str(AUTOSIG), "profile", "--", sys.executable, "prog.py")
    assert done.returncode == 0, done.stderr[-3000:]
    shutil.copytree(original, fixed)
    said = fix(fixed, "prog.py", fixed / ".autosig" / "profile.json")
    assert (
        "reduce_retracing=True would" in said
        or "may break calls" in said
        or "would break calls" in said
        or "(the probe saw it follow), and nothing here shows" in said  # the site is left
    ), said
    want = outcome(run(original, sys.executable, "prog.py", "unseen"))
    assert want[0] == 0
    assert outcome(run(fixed, sys.executable, "prog.py", "unseen")) == want


def test_a_global_set_outside_the_project_keeps_its_value(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "config.py").write_text("SCALE = 1.0\n")
    (tmp_path / "proj" / "model_a.py").write_text(P11_MODEL)
    (tmp_path / "harness.py").write_text(P11_HARNESS)
    done = run(tmp_path, str(AUTOSIG), "profile", "--", sys.executable, "harness.py", "proj")
    assert done.returncode == 0, done.stderr[-3000:]
    shutil.copytree(tmp_path / "proj", tmp_path / "original")
    said = fix(tmp_path / "proj", "model_a.py", tmp_path / ".autosig" / "profile.json")
    assert "reads Python state while tracing" in said, said
    want = outcome(run(tmp_path, sys.executable, "harness.py", "original"))
    assert want[0] == 0 and want[1].startswith("3.0\n6.0\n9.0\n12.0\n15.0")
    assert outcome(run(tmp_path, sys.executable, "harness.py", "proj")) == want

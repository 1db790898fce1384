"""explain's tracing-protocol code for a new object per call, pasted and run with real TF.

A program calls a tf.function with a new ``Scaler`` each time (a Python float and a
string attribute); ``autosig profile`` records it, ``autosig explain`` prints the code
to paste and the trace count it would reach. The test pastes that code into the class,
runs the same calls, and checks TensorFlow's own count and the results.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from autosig.explain.objects import CODE_INDENT

pytestmark = [pytest.mark.tf, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent

MODEL = """\
import tensorflow as tf


class Scaler:
    \"\"\"Built afresh for every call, as a config object often is.\"\"\"

    def __init__(self, factor, mode):
        self.factor = factor
        self.mode = mode


@tf.function
def apply(x, scaler):
    y = x * scaler.factor
    return tf.reduce_sum(y) if scaler.mode == "sum" else tf.reduce_max(y)
"""

DRIVER = """\
import importlib.util
import json
import sys

import tensorflow as tf

spec = importlib.util.spec_from_file_location("model", sys.argv[1])
model = importlib.util.module_from_spec(spec)
sys.modules["model"] = model
spec.loader.exec_module(model)
x = tf.constant([1.0, 2.0, 3.0])
out = []
for i in range(12):
    factor = [0.5, 2.0, 0.5, 1.5][i % 4]
    mode = "sum" if i % 3 else "max"
    out.append(float(model.apply(x, model.Scaler(factor, mode))))
print("OUT " + json.dumps(out))
print("TRACES " + json.dumps(model.apply.experimental_get_tracing_count()))
"""


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(ROOT))
    return out


def run(args: list[str], cwd: Path, forks: Any = None) -> str:
    """``args`` in ``cwd``; with ``forks``, the program autosig runs is its fork."""
    environ = forks.launch_env(env()) if forks is not None else env()
    proc = subprocess.run(args, cwd=cwd, env=environ, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{args}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return proc.stdout


def forked(forks: Any, args: list[str], cwd: Path) -> str:
    proc = forks.run(args, cwd, env())
    assert proc.returncode == 0, f"{args}\n{proc.stdout}\n{proc.stderr[-3000:]}"
    return proc.stdout


def tagged(stdout: str, tag: str):
    line = next(line for line in stdout.splitlines() if line.startswith(tag + " "))
    return json.loads(line[len(tag) + 1 :])


def pasted(explained: str, class_name: str) -> tuple[str, str]:
    """The module-level code and the method, as a user would copy them from the note."""
    lines = explained.splitlines()
    start = next(i for i, line in enumerate(lines) if "tracing protocol" in line)
    code = []
    for line in lines[start + 1 :]:
        if not line.startswith(CODE_INDENT):
            break
        code.append(line[len(CODE_INDENT) :])
    split = code.index(f"# inside class {class_name}:")
    return "\n".join(code[1:split]) + "\n", "\n".join(code[split + 1 :]) + "\n"


def test_pasted_tracing_protocol_reaches_the_count_explain_gives(
    tmp_path: Path, tf_forks: Any
) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "driver.py").write_text(DRIVER)
    # the profiled program too is a fork (tests/tf_fork_python.py): what explain says
    # about the run is tested here, not how a command starts
    profiled = run(
        [sys.executable, "-m", "autosig", "profile", "--", *tf_forks.launcher(), "driver.py"]
        + ["model.py"],
        tmp_path,
        tf_forks,
    )
    assert tagged(profiled, "TRACES") == 12  # a new Scaler every call
    explained = run([sys.executable, "-m", "autosig", "explain"], tmp_path)
    head = next(line for line in explained.splitlines() if "tracing protocol" in line)
    # (factor, mode): factor cycles over 3 values (period 4), mode over 2 (period 3).
    combos = {([0.5, 2.0, 0.5, 1.5][i % 4], i % 3 == 0) for i in range(12)}
    assert len(combos) == 6
    assert "values of its attributes (factor, mode; 6 distinct combinations profiled)" in head
    assert "apply would trace 6 times instead of 12" in head, head
    module_code, method = pasted(explained, "Scaler")
    fixed = MODEL.replace("class Scaler:", module_code + "\n\nclass Scaler:").replace(
        "        self.mode = mode\n", "        self.mode = mode\n\n" + method
    )
    (tmp_path / "fixed.py").write_text(fixed)
    # the programs themselves: forks of one TensorFlow import (conftest's tf_forks)
    before = forked(tf_forks, ["driver.py", "model.py"], tmp_path)
    after = forked(tf_forks, ["driver.py", "fixed.py"], tmp_path)
    assert tagged(after, "TRACES") == 6
    assert tagged(after, "OUT") == tagged(before, "OUT")
    assert textwrap.dedent(method).startswith("def __tf_tracing_type__(self, context):")

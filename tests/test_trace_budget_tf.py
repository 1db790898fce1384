"""The retrace budget for CI, with real TensorFlow: pytest sessions in a subprocess.

``pytest --autosig-max-traces=N`` and ``[tool.autosig] max-traces`` fail the session
when a tf.function of the project traces more than its budget, naming explain's cause
of each extra trace and the test that made it; a budget that holds passes, a function
suppressed with ``# autosig: ignore[AS201]`` has none; ``autosig.expect_traces`` holds
one block of one test to a budget. Unit tests of the config and the report are in
``test_trace_budget.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.tf, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]

MODEL = """\
import tensorflow as tf


@tf.function
def step(x):
    return x * 2.0


@tf.function
def grow(x):
    return tf.reduce_sum(x)


@tf.function  # autosig: ignore[AS201]
def quiet(x):
    return x + 1.0


class Scaler(tf.Module):
    @tf.function
    def __call__(self, x, factor):
        return x * factor
"""

TESTS = """\
import pytest
import tensorflow as tf

import autosig
from model import Scaler, grow, quiet, step


def test_step_three_shapes():
    for n in (2, 3, 4):
        step(tf.ones([n]))


def test_grow_two_shapes():
    grow(tf.ones([2]))
    grow(tf.ones([3]))


def test_quiet_is_suppressed():
    for n in (2, 3, 4):
        quiet(tf.ones([n]))


def test_expect_traces_holds():
    scaler = Scaler()
    with autosig.expect_traces(scaler.__call__, at_most=1):
        for _ in range(3):
            scaler(tf.ones([2]), tf.constant(2.0))


def test_expect_traces_names_the_cause():
    scaler = Scaler()
    scaler(tf.ones([2]), 1.0)
    with pytest.raises(AssertionError) as info:
        with autosig.expect_traces(scaler.__call__, at_most=1):
            scaler(tf.ones([2]), 2.0)
            scaler(tf.ones([2]), 3.0)
            scaler(tf.ones([2]), 3.0)
    message = str(info.value)
    assert message.startswith(
        "Scaler.__call__ (model.py:21) traced 2 times in this block, at most 1 expected:"
    ), message
    assert "trace 4 of 4: factor: Python float 2.0 -> 3.0" in message, message  # 2nd Scaler
    assert "summary: Python value factor changes in 1 trace; fix:" in message, message
    assert "new tf.function object" not in message, message  # its first trace is no extra
"""

CONFIG = """\
[tool.autosig.max-traces]
default = 1
"model.py::step" = 3
"model.py::Scaler.__call__" = 5
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("budget")
    (root / "model.py").write_text(MODEL)
    (root / "tests").mkdir()
    (root / "tests" / "test_model.py").write_text(TESTS)
    (root / "pyproject.toml").write_text(CONFIG)
    (root / "conftest.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n"
    )
    return root


def pytest_run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def budget_section(output: str) -> str:
    return output.split("autosig: tf.functions over their trace budget", 1)[1]


def test_the_config_budget_fails_the_session_naming_the_cause_and_the_test(project: Path) -> None:
    done = pytest_run(project)
    out = done.stdout
    assert "5 passed" in out, out + done.stderr  # every test passed ...
    assert done.returncode == 1, out  # ... but grow traced twice, over its budget of 1
    report = budget_section(out)
    assert (
        "model.py:10: grow traced 2 times, over its budget of 1 (max-traces in pyproject.toml)"
    ) in report
    assert (
        "  trace 2 of 2 in tests/test_model.py::test_grow_two_shapes: "
        "x shape (2,) -> (3,): dimension 0 varies"
    ) in report
    assert "summary: dimension 0 of x varies in 1 trace; fix: autosig fix --profile" in report
    # step's and Scaler's own budgets hold; quiet is suppressed
    assert "step" not in report and "quiet" not in report and "Scaler" not in report


def test_the_command_line_budget_holds_and_xdist_workers_report_theirs(project: Path) -> None:
    held = pytest_run(project, "--autosig-max-traces=2")
    assert held.returncode == 0, held.stdout + held.stderr
    assert "over their trace budget" not in held.stdout

    under_xdist = pytest_run(project, "-n", "2", "--autosig-max-traces=1")
    report = budget_section(under_xdist.stdout)
    assert under_xdist.returncode == 1, under_xdist.stdout
    assert "grow traced 2 times, over its budget of 1 (--autosig-max-traces)" in report
    assert "[gw" in report  # said by the worker that ran it
    assert "model.py:5: step" not in report  # its own entry in the config (3) wins


def test_expect_traces_records_the_block_itself_when_nothing_records() -> None:
    tf = pytest.importorskip("tensorflow")
    import autosig
    from autosig.profile.recorder import active_recorder

    assert active_recorder() is None

    @tf.function
    def double(x):
        return x * 2

    with autosig.expect_traces(double, at_most=1):
        double(tf.ones([2]))
        double(tf.ones([2]))
    with pytest.raises(AssertionError) as info:
        with autosig.expect_traces(double, at_most=1):
            double(tf.ones([3]))
            double(tf.ones([4]))
    assert "double" in str(info.value) and "traced 2 times in this block" in str(info.value)
    assert "trace 2 of 2: x shape (3,) -> (4,): dimension 0 varies" in str(info.value)
    assert active_recorder() is None  # its own recording ended with the block
    with pytest.raises(TypeError, match="expect_traces needs a tf.function"):
        autosig.expect_traces(len)

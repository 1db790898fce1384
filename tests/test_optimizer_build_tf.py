"""optimizer.build(...) before the first step, with TensorFlow: one trace, same training.

``optimizer_cases.py`` trains each loop before and after the fix from the same seed
(one TensorFlow start for all); here losses, weights and optimizer slots are compared
exactly, and the step's traces counted.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.tf, pytest.mark.slow]

SCRIPT = Path(__file__).with_name("optimizer_cases.py")


@pytest.fixture(scope="module")
def rows(tf_forks: Any) -> dict[str, dict]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
    # one script run, a fork of the worker's TensorFlow import (conftest's tf_forks)
    done = tf_forks.run([str(SCRIPT)], Path.cwd(), env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    found = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {row["case"]: row for row in found}


def _cases() -> list[str]:
    sys.path.insert(0, str(SCRIPT.parent))
    from optimizer_cases import CASES

    return sorted(CASES)


@pytest.mark.parametrize("name", _cases())
def test_building_first_trains_identically_with_one_trace(rows: dict[str, dict], name: str) -> None:
    row = rows[name]
    original, fixed = row["original"], row["fixed"]
    assert row["applied"] == ["optimizer_build"], row["new_text"]
    assert "error" not in original and "error" not in fixed, (original, fixed)
    assert original["losses"] and original["slots"]
    for key in ("losses", "weights", "slots"):
        assert fixed[key] == original[key], key  # exactly: the same ops on the same values
    assert (original["traces"], fixed["traces"]) == (2, 1)


def test_a_model_without_variables_yet_is_left_alone_and_why(rows: dict[str, dict]) -> None:
    """A Sequential without Input has no variables when the optimizer is made: building
    there makes the first step fail, so fix inserts nothing."""
    row = rows["sequential_without_input"]
    assert row["applied"] == []
    assert row["fixed"] == row["original"] and row["original"]["traces"] == 2
    assert row["forced"]["error"].startswith("ValueError")

"""A lazily built Keras model built before the first call, with TensorFlow: one trace,
same results, also on inputs the profile never saw.

``model_build_cases.py`` runs each program before and after the fix from the same seed
(one TensorFlow start for all); here outputs, unseen calls (other batch sizes, float64
NumPy), weights and optimizer slots are compared exactly, and the traces counted.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.tf, pytest.mark.slow]

SCRIPT = Path(__file__).with_name("model_build_cases.py")


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
    from model_build_cases import CASES

    return sorted(CASES)


@pytest.mark.parametrize("name", _cases())
def test_building_first_gives_the_same_results_with_one_trace(
    rows: dict[str, dict], name: str
) -> None:
    row = rows[name]
    original, fixed = row["original"], row["fixed"]
    assert "model_build" in row["applied"], row["new_text"]
    if "optimizer" in row["new_text"]:
        assert row["applied"] == ["model_build", "optimizer_build"], row["new_text"]
    assert "error" not in original and "error" not in fixed, (original, fixed)
    assert original["outputs"] and original["unseen"] and original["weights"]
    for key in ("outputs", "unseen", "weights", "slots"):
        assert fixed[key] == original[key], key  # exactly: the same ops on the same values
    assert (original["traces"], fixed["traces"]) == (2, 1)


def test_a_layer_whose_build_draws_its_seed_is_built_only_as_an_unsafe_fix(
    rows: dict[str, dict],
) -> None:
    """``add_weight(initializer="random_normal")`` takes its seed from Python's random
    when it runs: building before the program's own random.random() changes both."""
    row = rows["custom_layer_add_weight"]
    assert row["applied"] == [] and row["fixed"] == row["original"]
    assert row["forced_applied"] == [["model_build", "unsafe"]]
    forced, original = row["forced"], row["original"]
    assert forced["traces"] == 1 and original["traces"] == 2
    assert forced["weights"] != original["weights"]  # what the label is about

"""The guarded relaxed trace with real TensorFlow: original vs fixed on inputs the
profile never saw (``guarded_programs.py``, one TensorFlow process for all)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from contract_cases import run_differences, total_traces  # noqa: E402
from guarded_programs import PROGRAMS  # noqa: E402

pytestmark = [pytest.mark.tf, pytest.mark.slow]

SCRIPT = Path(__file__).with_name("guarded_programs.py")


@pytest.fixture(scope="module")
def rows(tf_forks: Any) -> dict[str, dict]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
    env["PYTHONPATH"] = str(SCRIPT.parent.parent)
    # one script run, a fork of the worker's TensorFlow import (conftest's tf_forks)
    done = tf_forks.run([str(SCRIPT)], Path.cwd(), env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    parsed = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {row["case"]: row for row in parsed}


@pytest.mark.parametrize("case", PROGRAMS, ids=[c.name for c in PROGRAMS])
def test_the_guarded_trace_keeps_every_result(case, rows: dict[str, dict]) -> None:  # noqa: ANN001
    row = rows[case.name]
    assert "guarded relaxed trace" in row["summary"], row["summary"]
    assert "get_concrete_function" in row["new_text"]["model.py"]
    assert not run_differences(row["original"], row["fixed"]), row["summary"]
    assert total_traces(row["fixed"]) == 1 < total_traces(row["original"])


def test_a_subclass_instance_traces_as_before(rows: dict[str, dict]) -> None:
    row = rows["subclass_sets_its_attribute_after_init"]
    assert "if type(self) is __class__:" in row["new_text"]["model.py"]
    scaled = row["fixed"]["unseen"][0]["result"]
    assert scaled["value"] == [[6.0], [6.0]]  # the subclass's scale 2.0, not a reused trace

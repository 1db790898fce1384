"""AS106's per-instance cache with TensorFlow: same results, one trace per instance.

``cache_cases.py`` runs each method before and after the fix on several instances and
inputs (one TensorFlow start for all); here the results and trace counts are compared.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.tf, pytest.mark.slow]

SCRIPT = Path(__file__).with_name("cache_cases.py")

TRACES = {
    # case: (traces before, traces after): every call traced before; after, one trace
    # per instance and input signature (and the optimizer's variable creation)
    "nested_def_reads_self": (9, 4),  # 2 instances x 2 shapes
    "bound_method_called_at_once": (6, 3),  # 3 instances
    "assigned_then_called_twice": (9, 3),  # 3 instances
    "closed_over_locals_become_arguments": (8, 6),  # 2 instances x 3 (factor, offset) values
    "subclass_overrides_and_calls_super": (10, 5),  # 1 + 2 x 2: each class its own cache
    "optimizer_inside_the_cached_step": (10, 4),  # 2 instances x 2 (slots on the 1st call)
}


@pytest.fixture(scope="module")
def rows(tf_forks: Any) -> dict[str, dict]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
    # one script run, a fork of the worker's TensorFlow import (conftest's tf_forks)
    done = tf_forks.run([str(SCRIPT)], Path.cwd(), env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    found = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {row["case"]: row for row in found}


def test_every_case_ran(rows: dict[str, dict]) -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    from cache_cases import CASES

    assert set(rows) == set(CASES)
    for name, row in rows.items():
        assert row["applied"], name
        for run in ("original", "fixed"):
            assert "error" not in row[run], (name, run, row[run])
            assert row[run]["values"], (name, run)


@pytest.mark.parametrize("name", sorted(TRACES))
def test_the_cached_method_computes_the_same_with_fewer_traces(
    rows: dict[str, dict], name: str
) -> None:
    row = rows[name]
    assert row["fixed"]["values"] == row["original"]["values"], row["new_text"]
    assert (row["original"]["traces"], row["fixed"]["traces"]) == TRACES[name]


def test_safe_fixes_are_labelled_safe(rows: dict[str, dict]) -> None:
    for name in (
        "nested_def_reads_self",
        "bound_method_called_at_once",
        "optimizer_inside_the_cached_step",
    ):
        assert rows[name]["applied"] == ["AS106:safe"], name
    assert rows["closed_over_locals_become_arguments"]["applied"] == ["AS106:unsafe"]
    assert sorted(rows["subclass_overrides_and_calls_super"]["applied"]) == [
        "AS106:safe",  # Base
        "AS106:unsafe",  # Shifted derives from Base
    ]


def test_an_attribute_changed_between_calls_is_why_the_fix_is_unsafe(
    rows: dict[str, dict],
) -> None:
    """The cached trace keeps the threshold of its first call: the results differ, which
    is what the unsafe label says."""
    row = rows["attribute_changed_between_calls"]
    assert row["applied"] == ["AS106:unsafe"]
    assert row["original"]["values"] == [[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    assert row["fixed"]["values"] == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]


def test_an_attribute_changed_by_another_file_makes_the_fix_unsafe(
    rows: dict[str, dict],
) -> None:
    """The script beside the module rebinds the threshold: the scan of the project's
    other files sees it, and the results show what the cache would have broken."""
    row = rows["attribute_changed_by_another_file"]
    assert row["applied"] == ["AS106:unsafe"]
    assert row["original"]["values"] == [[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    assert row["fixed"]["values"] == [[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]


@pytest.mark.parametrize(
    "name", ["config_dict_changed_through_an_alias", "settings_attribute_changed_by_the_script"]
)
def test_state_changed_through_an_alias_makes_the_fix_unsafe(
    name: str, rows: dict[str, dict]
) -> None:
    """Issue 22: ``self.config`` is the module dict the script changes, and
    ``self.settings.threshold`` an attribute the script sets on the shared object. Both
    were safe fixes before the analysis followed the alias; the results show what the
    cache changes (the first value stays)."""
    row = rows[name]
    assert row["applied"] == ["AS106:unsafe"]
    assert row["original"]["values"] != row["fixed"]["values"]
    assert row["fixed"]["values"][0] == row["fixed"]["values"][1]
    assert row["original"]["values"][0] == row["fixed"]["values"][0]


def test_a_copied_instance_is_why_copying_makes_the_fix_unsafe(rows: dict[str, dict]) -> None:
    """A shallow copy shares the cached function, bound to the original instance."""
    row = rows["instance_copied"]
    assert row["applied"] == ["AS106:unsafe"]
    assert row["original"]["values"] == [2.0, 5.0]
    assert row["fixed"]["values"] == [2.0, 2.0]

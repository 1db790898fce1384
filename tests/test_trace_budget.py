"""The retrace budget without TensorFlow: the config, and the report from a profile.

The sessions with real TensorFlow are in ``test_trace_budget_tf.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autosig.errors import AutosigError
from autosig.explain.budget import Budget, over_budget
from autosig.profile.format import CallSignature, FunctionRecord, ParamInfo, Profile, TraceEvent
from autosig.source.config import load_config


def write_config(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.autosig]\n{body}")
    return tmp_path


def test_max_traces_is_a_number_or_a_table_with_per_function_budgets(tmp_path: Path) -> None:
    config = load_config([write_config(tmp_path, "max-traces = 2\n")])
    assert config.max_traces == 2 and config.max_traces_for(tmp_path / "a.py", "f") == 2
    (tmp_path / "pyproject.toml").write_text(
        '[tool.autosig.max-traces]\ndefault = 1\n"src/train.py::Trainer.step" = 3\n'
        '"tests/*.py::helper" = 4\n'
    )
    config = load_config([tmp_path])
    assert config.max_traces_for(tmp_path / "src" / "train.py", "Trainer.step") == 3
    assert config.max_traces_for(tmp_path / "src" / "train.py", "other") == 1
    assert config.max_traces_for(tmp_path / "tests" / "test_a.py", "helper") == 4
    (tmp_path / "pyproject.toml").write_text('[tool.autosig.max-traces]\n"a.py::f" = 2\n')
    config = load_config([tmp_path])
    assert config.max_traces_for(tmp_path / "a.py", "f") == 2
    assert config.max_traces_for(tmp_path / "a.py", "g") is None  # no default: no budget


@pytest.mark.parametrize(
    "body, message",
    [
        ("max-traces = 0\n", "'tool.autosig.max-traces': expected a positive number of traces"),
        ('max-traces = "2"\n', "expected a positive number of traces, got '2'"),
        ("[tool.autosig.max-traces]\nstep = 2\n", 'expected "default" or a key "<path>::<qual'),
        ('[tool.autosig.max-traces]\n"a.py::f" = true\n', "got True"),
    ],
)
def test_a_bad_budget_is_an_error_naming_the_key(tmp_path: Path, body: str, message: str) -> None:
    write_config(tmp_path, body)
    with pytest.raises(AutosigError) as info:
        load_config([tmp_path])
    assert message in str(info.value)
    assert str(tmp_path / "pyproject.toml") in str(info.value)


def record(qualname: str, line: int, shapes: list[tuple[int, int]]) -> FunctionRecord:
    """A function traced once per (instance, n) pair: x of shape (n,)."""
    signatures = []
    events = []
    for call, (instance, n) in enumerate(shapes):
        args = {"x": {"kind": "tensor", "shape": [n], "dtype": "float32"}}
        signatures.append(CallSignature(args=args, passed={"x": "positional"}, calls=1))
        events.append(TraceEvent(call=call, signature=call, instance=instance))
    return FunctionRecord(
        path="model.py",
        qualname=qualname,
        line=line,
        source_sha256=None,
        editable=True,
        params=[ParamInfo("x", "POSITIONAL_OR_KEYWORD")],
        calls=len(shapes),
        traces=len(shapes),
        instances=len({i for i, _ in shapes}),
        signatures=signatures,
        trace_events=events,
    )


SOURCE = """\
import tensorflow as tf


@tf.function
def step(x):
    return x


@tf.function  # autosig: ignore[AS201]
def quiet(x):
    return x
"""


def test_each_extra_trace_is_explained_with_the_test_that_made_it(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(SOURCE)
    step = record("step", 5, [(0, 2), (0, 3), (1, 2), (0, 4)])
    quiet = record("quiet", 10, [(0, 2), (0, 3), (0, 4)])
    profile = Profile(functions=[step, quiet], project_root=str(tmp_path))
    found = over_budget(
        profile,
        lambda r: Budget(1, "--autosig-max-traces"),
        root=tmp_path,
        tests={(step.key, 3): "tests/test_a.py::test_big"},
    )
    (over,) = found  # quiet is suppressed; step's object #2 traced once
    assert over.lines()[:3] == [
        "model.py:5: step (tf.function object #1) traced 3 times, over its budget of 1 "
        "(--autosig-max-traces)",
        "  trace 2 of 4: x shape (2,) -> (3,): dimension 0 varies",
        "  trace 4 of 4 in tests/test_a.py::test_big: x shape (3,) -> (4,): dimension 0 varies",
    ]
    assert over.lines()[3].startswith("  summary: dimension 0 of x varies in 2 traces; fix: ")
    assert over_budget(profile, lambda r: Budget(3, "x"), root=tmp_path) == []
    assert over_budget(profile, lambda r: None, root=tmp_path) == []

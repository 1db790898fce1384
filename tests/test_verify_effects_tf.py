"""Blind spots of verification, each with real TensorFlow on CPU (issue 13).

Each test runs a small program on its original source and on a hand-written rewrite
(served by the import hook, never written) and checks the verdict: a rewrite that
changes only a tf.Variable, one whose exception the program catches, one that changes
a value, tf.print and random ops under XLA, and ``fix --verify`` keeping the good
change of a file whose other change fails.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.tf

PYTHON = [sys.executable]
"""``python`` for the workloads: each test's is a fork of the worker's TensorFlow import
(``forked_python``); what is tested is verify's verdict, not how the program starts."""


@pytest.fixture(autouse=True)
def _workloads_forked(forked_python: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "PYTHON", forked_python)


def _verify(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    original: str,
    rewritten: str,
    driver: str,
    *,
    xla: bool = False,
    xla_baseline: bool = False,
) -> Any:
    from autosig.verify.candidate import Candidate
    from autosig.verify.runner import VerifySettings, verify_candidate

    (project / "model.py").write_text(original)
    (project / "driver.py").write_text(driver)
    monkeypatch.chdir(project)
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    candidate = Candidate(
        root=project.resolve(), originals={"model.py": original}, texts={"model.py": rewritten}
    )
    settings = VerifySettings(xla=xla, xla_baseline=xla_baseline, device="cpu")
    report, _ = verify_candidate([*PYTHON, "driver.py"], candidate, settings)
    assert (project / "model.py").read_text() == original  # nothing written
    return report


def _mode(report: Any, qualname: str, mode: str) -> Any:
    verdict = next(f for f in report.functions if f.qualname == qualname)
    outcome = verdict.mode(mode)
    assert outcome is not None, verdict.to_json()
    return outcome


COUNTER = """\
import tensorflow as tf


class Counter(tf.Module):
    def __init__(self):
        self.seen = tf.Variable(0.0, dtype=tf.float64)

    @tf.function
    def add(self, count):
        self.seen.assign_add(tf.cast(count * 65536 * 65536, tf.float64))
"""
COUNTER_DRIVER = """\
from model import Counter

c = Counter()
for count in range(1, 6):
    c.add(count)
print("total", c.seen.numpy())
"""


def test_variable_only_function_whose_rewrite_changes_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewritten = COUNTER.replace(
        "    @tf.function\n",
        "    @tf.function(input_signature=[tf.TensorSpec([], tf.int32)])\n",
    )
    report = _verify(tmp_path, monkeypatch, COUNTER, rewritten, COUNTER_DRIVER)
    graph = _mode(report, "Counter.add", "graph")
    assert graph.status == "not equivalent", graph.detail
    assert "call 1 of 5 (variables)" in graph.detail
    assert "variable Variable:0" in graph.detail
    assert report.exit_code == 1


def test_same_rewrite_of_a_variable_only_function_that_keeps_it_is_equivalent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewritten = COUNTER.replace(
        "    @tf.function\n",
        "    @tf.function(input_signature=[tf.TensorSpec([], tf.int64)])\n",
    )
    report = _verify(tmp_path, monkeypatch, COUNTER, rewritten, COUNTER_DRIVER)
    graph = _mode(report, "Counter.add", "graph")
    assert graph.status == "equivalent", graph.detail
    assert graph.detail.startswith("all 5 calls equal")
    assert report.exit_code == 0


REPEAT = """\
import tensorflow as tf


@tf.function
def repeat(x, n):
    parts = [x for _ in range(n)]
    return tf.concat(parts, axis=0)
"""
REPEAT_DRIVER = """\
import tensorflow as tf

from model import repeat

done = 0
for n in (1, 2, 3, 4):
    try:
        repeat(tf.ones([2]), n)
        done += 1
    except TypeError:
        pass
print("done", done)
"""


def test_exception_the_program_catches_is_not_equivalent_and_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewritten = REPEAT.replace(
        "@tf.function\n",
        "@tf.function(input_signature=[tf.TensorSpec([2], tf.float32), "
        "tf.TensorSpec([], tf.int32)])\n",
    )
    report = _verify(tmp_path, monkeypatch, REPEAT, rewritten, REPEAT_DRIVER)
    graph = _mode(report, "repeat", "graph")
    assert report.runs[1].exit_code == 0  # the program itself went on
    assert graph.status == "not equivalent", graph.detail
    assert "(exception)" in graph.detail and "rewritten raised" in graph.detail
    assert f"{(tmp_path / 'model.py').resolve()}:6" in graph.detail  # range(n)
    assert "..." not in graph.detail  # the first line, in full
    assert report.exit_code == 1


BRANCH = """\
import tensorflow as tf


@tf.function
def scale(x):
    if x.shape[0] == 1:
        return x * 2.0
    return x * 3.0
"""
BRANCH_DRIVER = """\
import tensorflow as tf

from model import scale

for n in (1, 2, 3):
    scale(tf.ones([n]))
"""


def test_numerically_different_rewrite_is_not_equivalent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewritten = BRANCH.replace(
        "@tf.function\n", "@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])\n"
    )
    report = _verify(tmp_path, monkeypatch, BRANCH, rewritten, BRANCH_DRIVER)
    graph = _mode(report, "scale", "graph")
    assert graph.status == "not equivalent", graph.detail
    assert "call 1 of 3 (outputs)" in graph.detail
    assert "2.0 -> 3.0" in graph.detail
    assert report.exit_code == 1


PRINTS = """\
import tensorflow as tf


@tf.function
def loud(x):
    tf.print("sum", tf.reduce_sum(x))
    return x * 2.0


@tf.function
def quiet(x):
    return tf.reduce_sum(x * x, axis=-1)
"""
PRINTS_DRIVER = """\
import tensorflow as tf

from model import loud, quiet

for n in (2, 3, 4):
    loud(tf.ones([n]))
    quiet(tf.ones([2, n]))
"""


def test_tf_print_under_xla_is_not_applicable_and_the_rest_is_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewritten = PRINTS.replace("@tf.function\n", "@tf.function(reduce_retracing=True)\n")
    report = _verify(
        tmp_path, monkeypatch, PRINTS, rewritten, PRINTS_DRIVER, xla=True, xla_baseline=True
    )
    loud = _mode(report, "loud", "xla")
    assert loud.status == "not applicable", loud.detail
    assert "original cannot be compiled either" in loud.detail
    assert "StringFormat" in loud.detail or "PrintV2" in loud.detail
    assert _mode(report, "loud", "graph").status == "equivalent"
    quiet = _mode(report, "quiet", "xla")
    assert quiet.status == "equivalent", quiet.detail
    assert quiet.xla_compiles[1] == 3  # one XLA compile per new shape
    assert quiet.traces[1] == 2 and "bucket or pad" in quiet.advice
    assert report.exit_code == 0


def test_tf_print_output_is_compared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rewritten = PRINTS.replace(
        'tf.print("sum", tf.reduce_sum(x))', 'tf.print("sum", tf.reduce_sum(x) + 1.0)'
    )
    report = _verify(tmp_path, monkeypatch, PRINTS, rewritten, PRINTS_DRIVER)
    graph = _mode(report, "loud", "graph")
    assert graph.status == "not equivalent", graph.detail
    assert "(print)" in graph.detail
    assert _mode(report, "quiet", "graph").status == "equivalent"


RANDOM = """\
import tensorflow as tf


@tf.function
def noisy(x, scale):
    return x + scale * tf.random.normal(tf.shape(x))
"""
RANDOM_DRIVER = """\
import tensorflow as tf

from model import noisy

for step in range(4):
    noisy(tf.zeros([3]), 0.5 + step)
"""


def test_random_op_under_xla_is_different_by_design(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the signature autosig writes ([None]: a pinned [3] would reject the unseen
    # batches verify also tries, which the original accepts)
    rewritten = RANDOM.replace(
        "@tf.function\n",
        "@tf.function(input_signature=[tf.TensorSpec([None], tf.float32), "
        "tf.TensorSpec([], tf.float32)])\n",
    )
    report = _verify(tmp_path, monkeypatch, RANDOM, rewritten, RANDOM_DRIVER, xla=True)
    xla = _mode(report, "noisy", "xla")
    assert xla.status == "different by design", xla.detail
    assert "RandomStandardNormal" in xla.detail and "XLA draws other numbers" in xla.detail
    # graph mode: 4 traces of the original each restarted the random stream, the
    # rewrite (1 trace) continues it: different by design too, said why
    graph = _mode(report, "noisy", "graph")
    assert graph.status == "different by design", graph.detail
    assert "4 traces" in graph.detail
    assert report.exit_code == 0


def test_random_function_whose_rewrite_changes_the_shape_is_not_equivalent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewritten = RANDOM.replace(
        "x + scale * tf.random.normal(tf.shape(x))", "x[:2] + scale * tf.random.normal([2])"
    )
    report = _verify(tmp_path, monkeypatch, RANDOM, rewritten, RANDOM_DRIVER, xla=True)
    for mode in ("graph", "xla"):
        outcome = _mode(report, "noisy", mode)
        assert outcome.status == "not equivalent", outcome.detail
        assert "shape [3] -> [2]" in outcome.detail
    assert report.exit_code == 1


GATE_MODEL = """\
import tensorflow as tf


@tf.function
def good(x):
    return tf.reduce_sum(x * 2.0, axis=-1)


@tf.function
def bad(x):
    if x.shape[0] == 1:
        return x * 2.0
    return x * 3.0
"""
GATE_DRIVER = """\
import tensorflow as tf

from model import bad, good

for n in range(3, 9):
    good(tf.ones([4, n]))
for n in (1, 2, 3):
    bad(tf.ones([n]))
"""


def test_fix_verify_keeps_the_good_change_of_a_file_whose_other_change_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autosig.infer.plan import FunctionPlan, ParamPlan, Plan
    from autosig.infer.specs import TensorSpecNode
    from autosig.profile.format import load_profile
    from autosig.profile.launch import run_recorded
    from autosig.rules.registry import select_rules
    from autosig.verify.gate import gate_fixes

    (tmp_path / "model.py").write_text(GATE_MODEL)
    (tmp_path / "driver.py").write_text(GATE_DRIVER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    out = tmp_path / ".autosig" / "profile.json"
    assert run_recorded([*PYTHON, "driver.py"], out) == 0
    profile = load_profile(out)
    plan = Plan(
        [
            FunctionPlan(
                path="model.py",
                qualname="good",
                line=4,
                action="signature",
                # what autosig's planner writes: a pinned batch of 4 would fail the
                # unseen batch of 1, which the original accepts
                params=(ParamPlan("x", TensorSpecNode((None, None), "float32"), "varied"),),
            ),
            FunctionPlan(
                path="model.py",
                qualname="bad",
                line=9,
                action="signature",
                params=(ParamPlan("x", TensorSpecNode((None,), "float32"), "the mistake"),),
            ),
        ]
    )
    rules = select_rules(None, None)
    result = gate_fixes(profile, tmp_path, plan=plan, rules_for=lambda rel: rules)
    written = result.texts.get("model.py")
    assert written is not None, result.messages()
    assert "def good" in written and "TensorSpec(shape=[None, None]" in written
    bad_part = written.split("def good")[1]
    assert "TensorSpec(shape=[None]" not in bad_part
    assert "reduce_retracing" not in bad_part  # a dropped change never comes back
    assert "model.py" not in result.withheld
    messages = "\n".join(result.messages())
    assert "withheld" in messages and "bad" in messages and "not equivalent" in messages
    assert "verified: model.py" in messages and "good" in messages
    assert result.report is not None and result.report.exit_code == 0
    assert os.path.exists(out)


NESTED = """\
import tensorflow as tf


@tf.function
def inner(x):
    return x * 2.0


@tf.function
def outer(x):
    return inner(x) + 1.0
"""
NESTED_DRIVER = """\
import tensorflow as tf

from model import outer

for n in (2, 3, 4):
    outer(tf.ones([n]))
"""


def test_function_called_only_inside_another_is_covered_by_its_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewritten = NESTED.replace(
        "@tf.function\ndef outer",
        "@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])\ndef outer",
    )
    report = _verify(tmp_path, monkeypatch, NESTED, rewritten, NESTED_DRIVER)
    outer = _mode(report, "outer", "graph")
    assert outer.status == "equivalent" and outer.detail.startswith("all 3 calls equal")
    inner = _mode(report, "inner", "graph")
    assert inner.status == "equivalent", inner.detail
    assert "called only inside outer" in inner.detail
    assert report.exit_code == 0


def test_second_verify_reuses_the_stored_original_run_until_the_source_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autosig.verify.candidate import Candidate
    from autosig.verify.runner import VerifySettings, verify_candidate

    rewritten = BRANCH.replace("@tf.function\n", "@tf.function(reduce_retracing=True)\n")
    first = _verify(tmp_path, monkeypatch, BRANCH, rewritten, BRANCH_DRIVER)
    assert not any("reused" in note for note in first.notes)
    candidate = Candidate(
        root=tmp_path.resolve(), originals={"model.py": BRANCH}, texts={"model.py": rewritten}
    )
    cmd = [*PYTHON, "driver.py"]
    again, _ = verify_candidate(cmd, candidate, VerifySettings(xla=False, device="cpu"))
    assert any("original (graph): reused" in note for note in again.notes), again.notes
    assert [f.status for f in again.functions] == [f.status for f in first.functions]
    fresh, _ = verify_candidate(
        cmd, candidate, VerifySettings(xla=False, device="cpu", reuse=False)
    )
    assert not any("reused" in note for note in fresh.notes)
    changed = BRANCH.replace("x * 3.0", "x * 4.0")
    (tmp_path / "model.py").write_text(changed)
    edited = Candidate(
        root=tmp_path.resolve(),
        originals={"model.py": changed},
        texts={"model.py": rewritten.replace("x * 3.0", "x * 4.0")},
    )
    later, _ = verify_candidate(cmd, edited, VerifySettings(xla=False, device="cpu"))
    assert not any("reused" in note for note in later.notes)

"""Verify cannot be talked into "different by design" (issue 22), real TensorFlow on CPU.

One small program, verified once against a hand-written rewrite, whose functions each
probe one promise:

- ``noisy_pair``: its only changed output is the dropout's: different by design, and
  the report says what the draws reach;
- ``noisy_bad``: a deterministic output beside the dropout changed: not equivalent;
- ``train`` / ``evaluate``: the dropout is written into a variable that another
  function reads: both by design through the variable, nothing else;
- ``log_step``: AS101 turned one print into tf.print, and a float32 signature lost the
  precision of another tf.print's elapsed time: the lost precision still fails;
- ``Counter.count``: AS103's new variable is reported with its values, not "equivalent";
- ``head``: a signature pinned the batch at the only size the workload used: every
  recorded call passes, the unseen batch of 1 fails, named as an unseen input.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.tf, pytest.mark.slow]

MODEL = """\
import tensorflow as tf

w = tf.Variable(tf.ones([3]), name="w")


@tf.function
def noisy_pair(x, scale):
    return tf.nn.dropout(x, 0.5), x * scale


@tf.function
def noisy_bad(x, scale):
    return tf.nn.dropout(x, 0.5), x * scale


@tf.function
def train(x):
    w.assign_add(tf.reduce_mean(tf.nn.dropout(x, 0.5), axis=0))
    return tf.reduce_sum(x)


@tf.function
def evaluate(x):
    return tf.linalg.matvec(x, w)


@tf.function
def log_step(now, start):
    print("step")
    tf.print("elapsed", now - start)
    return tf.constant(0)


class Counter(tf.Module):
    def __init__(self):
        self.calls = 0

    @tf.function
    def count(self, x):
        self.calls += 1
        return x * 2.0


@tf.function
def head(x):
    return tf.reduce_sum(x, axis=1)
"""
DRIVER = """\
import tensorflow as tf
from model import Counter, evaluate, head, log_step, noisy_bad, noisy_pair, train

c = Counter()
for n in (2, 3, 4, 5):
    x = tf.reshape(tf.range(n * 3, dtype=tf.float32), [n, 3])
    noisy_pair(x, 0.5)
    noisy_bad(x, 0.5)
    train(x)
    evaluate(x)
    log_step(1700000000.0 + n * 0.25, 1700000000.0)
    c.count(x)
    head(tf.ones([8, 3]) * n)
"""
ROWS = "input_signature=[tf.TensorSpec([None, 3], tf.float32)]"
PAIR = "input_signature=[tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([], tf.float32)]"
TIMES = "input_signature=[tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)]"
EDITS = [
    ("@tf.function\ndef noisy_pair", f"@tf.function({PAIR})\ndef noisy_pair"),
    ("@tf.function\ndef noisy_bad", f"@tf.function({PAIR})\ndef noisy_bad"),
    (
        "x * scale\n\n\n@tf.function\ndef train",
        "x * tf.round(scale)\n\n\n@tf.function\ndef train",
    ),
    ("@tf.function\ndef train", f"@tf.function({ROWS})\ndef train"),
    ("@tf.function\ndef evaluate", f"@tf.function({ROWS})\ndef evaluate"),
    ("@tf.function\ndef log_step", f"@tf.function({TIMES})\ndef log_step"),
    ('    print("step")', '    tf.print("step")'),
    ("self.calls = 0", "self.calls = tf.Variable(0)"),
    ("self.calls += 1", "self.calls.assign_add(1)"),
    (
        "@tf.function\ndef head",
        "@tf.function(input_signature=[tf.TensorSpec([8, 3], tf.float32)])\ndef head",
    ),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, tf_forks: Any) -> Any:
    from autosig.rewrite.engine import AppliedFix
    from autosig.verify.candidate import Candidate
    from autosig.verify.runner import VerifySettings, verify_candidate

    project = tmp_path_factory.mktemp("honesty")
    rewritten = MODEL
    for old, new in EDITS:
        assert old in rewritten, old
        rewritten = rewritten.replace(old, new, 1)
    (project / "model.py").write_text(MODEL)
    (project / "driver.py").write_text(DRIVER)
    applied = [
        AppliedFix("AS101", "log_step", 29, "safe", "print() -> tf.print()"),
        AppliedFix("AS103", "Counter.count", 40, "unsafe", "self.calls -> tf.Variable"),
    ]
    candidate = Candidate(
        root=project.resolve(),
        originals={"model.py": MODEL},
        texts={"model.py": rewritten},
        applied={"model.py": applied},
    )
    # the workload runs as a fork of the worker's TensorFlow import (conftest's
    # forked_python): verify's verdicts are tested here, not how a command starts
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        patch.setenv("AUTOSIG_TEST_FORK_SOCKET", str(tf_forks.socket))
        settings = VerifySettings(xla=False, device="cpu", reuse=False)
        result, _ = verify_candidate([*tf_forks.launcher(), "driver.py"], candidate, settings)
    assert (project / "model.py").read_text() == MODEL  # nothing written
    return result


def _graph(report: Any, qualname: str) -> Any:
    verdict = next(f for f in report.functions if f.qualname == qualname)
    outcome = verdict.mode("graph")
    assert outcome is not None, verdict.to_json()
    return outcome


def test_only_the_random_output_is_by_design(report: Any) -> None:
    pair = _graph(report, "noisy_pair")
    assert pair.status == "different by design", pair.detail
    assert "the draws reach output[0]; everything else compared exactly" in pair.detail


def test_deterministic_output_beside_a_dropout_must_fail(report: Any) -> None:
    bad = _graph(report, "noisy_bad")
    assert bad.status == "not equivalent", bad.detail
    assert "(outputs): output[1]" in bad.detail and "0.5 -> " in bad.detail
    assert report.exit_code == 1


def test_a_variable_a_dropout_reaches_is_by_design_where_it_is_read(report: Any) -> None:
    train = _graph(report, "train")
    assert train.status == "different by design", train.detail
    assert "reach variable w:0" in train.detail
    evaluate = _graph(report, "evaluate")
    assert evaluate.status == "different by design", evaluate.detail
    assert "it reads w:0" in evaluate.detail


def test_lost_print_precision_fails_beside_an_as101_print(report: Any) -> None:
    log = _graph(report, "log_step")
    assert log.status == "not equivalent", log.detail
    assert "(print)" in log.detail and "'elapsed 0.5' -> 'elapsed 0'" in log.detail
    assert "model.py:30" in log.detail  # the print that lost precision, not AS101's


def test_as103_state_is_reported_changed_on_purpose_with_its_values(report: Any) -> None:
    count = _graph(report, "Counter.count")
    assert count.status == "different by design", count.detail
    assert "state changed on purpose" in count.detail
    assert "after each call: 1, 2, 3, 4" in count.detail
    assert count.effects is not None and count.effects.new_state


def test_unseen_batch_fails_where_every_recorded_call_passes(report: Any) -> None:
    head = _graph(report, "head")
    assert head.status == "not equivalent", head.detail
    assert head.effects is not None and head.effects.equal  # the recorded calls pass
    assert head.detail.startswith("on an unseen input: batch 1 of 8 (x [1, 3])")
    assert "rewritten raised TypeError" in head.detail
    assert head.unseen is not None and len(head.unseen.checked) == 2  # batch 1 and 7
    assert head.unseen.pinned == ["dim 1 3 -> 2 (x [8, 2])"]  # pinned, not freed
    data = head.to_json()["unseen"]
    assert data["checked"] == 2 and data["failed"].startswith("batch 1 of 8")
    pair = _graph(report, "noisy_pair")
    # the signature pins dim 1 (3 features): a shorter one is not an unseen-input check
    assert pair.unseen is not None and pair.unseen.pinned == ["dim 1 3 -> 2 (x [2, 2])"]
    assert "1 unseen shape checked" in pair.detail
    from autosig.report.verdicts import summary_line

    assert "unseen input shapes checked" in summary_line(report)

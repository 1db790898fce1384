"""Python values the analysis cannot decide: the hint without --verify, the try with it.

``table[k]`` on a module-level name bound to a call, ``k`` passed to code autosig cannot
follow: a tensor there may work or not. Without ``--verify`` fix keeps ``k`` a Python
value and says that ``fix --verify`` could settle it; with ``--verify`` it tries ``k``
as a scalar tensor and keeps the signature only if verification passes. Certain uses
(``range(k)``) never get the hint and are never tried.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from infer_helpers import python_only_uses_in_text

from autosig.cli import cli
from autosig.infer.observations import InferOptions
from autosig.infer.planner import infer_function
from autosig.profile.format import CallSignature, FunctionRecord, ParamInfo, Profile, save_profile

PROFILE = ".autosig/profile.json"
HEADER = "import tensorflow as tf\nimport mylib\n\n"
PRELUDE = """\
def load_scales():
    return [0.5 * (i + 1) for i in range(6)]


table = tf.Variable(tf.range(6, dtype=tf.float32) * 10.0)
scales = load_scales()
weights = [0.5, 1.0, 1.5]
"""


def uses(body: str) -> list[Any]:
    src = HEADER + PRELUDE + "\n\ndef f(x, k):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return python_only_uses_in_text(src, "f", ["k"], ["x"], {"x": "float32", "k": "int32"})["k"]


CERTAINTY = {
    "index into a name bound to a call": ("return x * table[k]", False),
    "index into a name bound to a helper's list": ("return x * scales[k]", False),
    "unknown library call": ("return mylib.pick(x, k)", False),
    "index into a list literal": ("return x * weights[k]", True),
    "index into a local list": ("w = [1.0, 2.0]\nreturn x * w[k]", True),
    "range": ("return [x for _ in range(k)]", True),
    "f-string": ("return tf.identity(x, name=f'step{k}')", True),
}


@pytest.mark.parametrize("name", CERTAINTY)
def test_uses_say_whether_the_analysis_can_decide(name: str) -> None:
    body, certain = CERTAINTY[name]
    found = uses(body)
    assert found, "a use must be found"
    assert found[0].certain is certain, found


def record(qualname: str, line: int, ks: list[int]) -> FunctionRecord:
    x = {"kind": "tensor", "shape": [3], "dtype": "float32"}
    signatures = [
        CallSignature(
            args={"x": x, "k": {"kind": "python", "type": "int", "value": k}},
            passed={"x": "positional", "k": "positional"},
            calls=1,
        )
        for k in ks
    ]
    return FunctionRecord(
        path="model.py",
        qualname=qualname,
        line=line,
        source_sha256=None,
        editable=True,
        params=[ParamInfo("x", "POSITIONAL_OR_KEYWORD"), ParamInfo("k", "POSITIONAL_OR_KEYWORD")],
        calls=len(ks),
        traces=len(ks),
        signatures=signatures,
    )


MODEL = (
    HEADER
    + PRELUDE
    + """

@tf.function
def lookup(x, k):
    return x * table[k]


@tf.function
def pyramid(x, k):
    return tf.add_n([x * float(i) for i in range(k)] + [mylib.pick(x, k)])
"""
)
LOOKUP_LINE = MODEL.splitlines().index("def lookup(x, k):") + 1
PYRAMID_LINE = MODEL.splitlines().index("def pyramid(x, k):") + 1


def test_undecided_parameter_is_tried_only_when_verifying() -> None:
    rec = record("lookup", LOOKUP_LINE, [0, 1, 2, 3])
    plain = infer_function(rec, MODEL, InferOptions(guarded_trace=False))
    assert plain.action == "none" and not plain.tried
    assert any(
        "`autosig fix --verify --unsafe-fixes` could settle it" in r for r in plain.reasons
    ), plain.reasons
    tried = infer_function(rec, MODEL, InferOptions(try_uncertain=True, guarded_trace=False))
    assert tried.action == "signature" and tried.tried == ("k",)
    assert any("`k` tried as a tensor" in r for r in tried.reasons), tried.reasons
    # evidence from the profiled calls, not a proof for every other value: unsafe
    assert tried.safety == "unsafe"
    assert any("`k` is a tensor on trial" in w for w in tried.warnings), tried.warnings


def test_a_certain_use_beside_an_undecided_one_is_never_tried() -> None:
    rec = record("pyramid", PYRAMID_LINE, [1, 2, 3])
    for options in (
        InferOptions(guarded_trace=False),
        InferOptions(try_uncertain=True, guarded_trace=False),
    ):
        plan = infer_function(rec, MODEL, options)
        assert plan.action != "signature" and not plan.tried
        assert not any("could settle it" in r for r in plan.reasons), plan.reasons


def test_fix_without_verify_says_verify_could_settle_it(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    records = [
        record("lookup", LOOKUP_LINE, [0, 1, 2, 3]),
        record("pyramid", PYRAMID_LINE, [1, 2, 3]),
    ]
    save_profile(Profile(functions=records, project_root=str(tmp_path)), tmp_path / PROFILE)
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["fix", "model.py", "--profile", PROFILE, "--diff"])
    finally:
        os.chdir(before)
    assert result.exit_code == 0, result.output  # nothing would change
    lines = result.stderr.splitlines()
    (lookup,) = [line for line in lines if "lookup (line" in line]
    assert "`k` must stay a Python value: indexes or slices" in lookup
    assert (
        "the analysis cannot decide, and `autosig fix --verify --unsafe-fixes` could settle it"
        in lookup
    )
    (pyramid,) = [line for line in lines if "pyramid (line" in line]
    assert "range() needs a Python int" in pyramid and "could settle" not in pyramid


# -- with real TensorFlow: fix --verify keeps what verifies, falls back for the rest --

VERIFY_MODEL = """\
import tensorflow as tf


def load_scales():
    return [0.5 * (i + 1) for i in range(6)]


table = tf.Variable(tf.range(6, dtype=tf.float32) * 10.0)
scales = load_scales()


@tf.function
def lookup(x, k):
    return x * table[k]


@tf.function
def scaled(x, k):
    return x * scales[k]
"""
VERIFY_DRIVER = """\
import sys

import numpy as np

import model

x = np.ones([3], np.float32)
for k in range(4):
    print(float(np.sum(model.lookup(x, k))), float(np.sum(model.scaled(x, k))))
if len(sys.argv) > 1:  # calls outside the profile
    for k in (5, -1):
        print(float(np.sum(model.lookup(x, k))), float(np.sum(model.scaled(x, k))))
print("TRACES", model.lookup.experimental_get_tracing_count())
"""


@pytest.mark.tf
@pytest.mark.slow
def test_fix_verify_keeps_the_tried_tensor_that_verifies_and_falls_back_for_the_other(
    tmp_path: Path, tf_forks: Any
) -> None:
    (tmp_path / "model.py").write_text(VERIFY_MODEL)
    (tmp_path / "driver.py").write_text(VERIFY_DRIVER)
    checkout = Path(__file__).resolve().parent.parent
    plain = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(checkout)}
    # the programs (profiled, verified, run on unseen calls) are forks of the worker's
    # TensorFlow import (conftest's tf_forks): what fix --verify decides is tested here
    env = tf_forks.launch_env(plain)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args), cwd=tmp_path, env=env, capture_output=True, text=True, check=False
        )

    autosig = [sys.executable, "-m", "autosig"]
    assert run(*autosig, "profile", "--", *tf_forks.launcher(), "driver.py").returncode == 0
    original = tf_forks.run(["driver.py", "unseen"], tmp_path, plain)
    assert original.returncode == 0 and "TRACES 6" in original.stdout, original.stderr
    # without --unsafe-fixes nothing is tried: the profiled calls are no proof
    untried = run(*autosig, "fix", "model.py", "--profile", PROFILE, "--verify", "--diff")
    assert untried.returncode in (0, 1) and not untried.stdout, untried.stderr
    assert "--verify --unsafe-fixes` could settle it" in untried.stderr, untried.stderr
    assert "tried as a tensor" not in untried.stderr
    fixed = run(*autosig, "fix", "model.py", "--profile", PROFILE, "--verify", "--unsafe-fixes")
    # `scaled` keeps its retraces (its `k` indexes a Python list): a problem left
    assert fixed.returncode == 1, fixed.stderr
    err = fixed.stderr
    assert "verified: model.py:13: lookup [input_signature]: equivalent; `k` tried" in err, err
    assert "fallback: model.py: scaled: verification failed (could not run" in err
    assert "list indices must be integers or slices" in err
    assert "kept k as Python value (k tried as a tensor" in err
    text = (tmp_path / "model.py").read_text()
    line = text.splitlines().index("def scaled(x, k):") + 1  # in the file as written
    assert line > 18  # lookup's signature moved it down
    assert f"scaled (line {line}): not fixed: `k` is kept as a Python value (verification" in err
    lookup, scaled = text.split("def lookup")[0], text.split("def lookup")[1]
    assert "tf.TensorSpec(shape=[], dtype=tf.int32)" in lookup
    assert "input_signature" not in scaled
    rewritten = tf_forks.run(["driver.py", "unseen"], tmp_path, plain)
    assert rewritten.returncode == 0, rewritten.stderr
    assert rewritten.stdout.replace("TRACES 1", "TRACES 6") == original.stdout

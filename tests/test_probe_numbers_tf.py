"""Probe verdicts on Python numbers and trace-time noise, with real TensorFlow, and the
fix they lead to compared with the original on calls the profile never saw.

- a constant drawn while tracing (``random.random()``) differs between two traces of the
  same shapes: nondeterministic, not a size read (golden 02 had it as a read);
- a Python float beside a float16 tensor takes float16 (tried as a scalar spec dtype);
- an int the graph only casts to float32 takes a float32 spec: it computes the same and
  still accepts a float (12.5) as the original does, where an int32 spec rejects it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from probe_programs import NUMBERS_AND_NOISE
from test_probe_tf import profile, program_env, run

from autosig.profile.evidence import ProbeEvidence

pytestmark = [pytest.mark.tf, pytest.mark.slow]


@pytest.fixture(scope="module")
def profiled(
    tmp_path_factory: pytest.TempPathFactory, tf_forks: Any
) -> tuple[Path, dict[str, ProbeEvidence]]:
    tmp = tmp_path_factory.mktemp("numbers")
    data, _ = profile(tmp, NUMBERS_AND_NOISE, forks=tf_forks)
    out = {}
    for record in data.functions:
        assert record.probe is not None, record.qualname
        out[record.qualname] = record.probe
    return tmp, out


def test_a_constant_drawn_while_tracing_is_noise_not_a_size_read(profiled) -> None:
    _, evidence = profiled
    d = evidence["jitter"].dim("x", 0)
    assert d.verdict == "free", d.reason
    assert evidence["jitter"].dim("x", 1).verdict == "free"


def test_a_float_beside_a_float16_tensor_is_float16(profiled) -> None:
    _, evidence = profiled
    scale = evidence["half"].number("scale")
    assert (scale.dtype, scale.dtype_from, scale.spec_matches) == ("float16", "spec", True)
    assert "float16" in scale.builds


def test_an_int_only_cast_to_float32_takes_a_float32_spec(profiled) -> None:
    _, evidence = profiled
    n = evidence["counted_mean"].number("n")
    assert (n.dtype, n.dtype_from, n.spec_matches) == ("float32", "cast", True), n.reason
    assert "only casts it to float32" in n.reason


def test_the_probe_says_whether_a_number_follows_a_tensor_arguments_dtype(profiled) -> None:
    """A Python number takes the dtype of the tensor it meets: `x * scale` follows `x`
    (traced as float32, `scale` became float32), `reduce_sum(cast(x, float32)) * w` does
    not (`x` as float64 or float16: `w` stays float32), so only `w` may be a caller's
    `tf.constant(w, tf.float32)` whatever dtype `x` has."""
    _, evidence = profiled
    scale = evidence["half"].number("scale")
    assert (scale.follows, scale.kept_with) == (["x"], []), scale.dtype_probes
    assert scale.dtype_probes == ["`x` as float32: `scale` follows it to float32"]
    w = evidence["weighted_total"].number("w")
    assert (w.dtype, w.follows, w.kept_with) == ("float32", [], ["x"]), w.dtype_probes
    assert w.dtype_probes == [
        "`x` as float64: `w` stays float32",
        "`x` as float16: `w` stays float32",
    ]
    # float32 by its cast: `x` as float64 or float16 does not trace, which shows nothing
    # (another instance's state may take them): neither followed nor kept
    n = evidence["counted_mean"].number("n")
    assert (n.follows, n.kept_with) == ([], []), n.dtype_probes
    assert all("the original does not trace it" in line for line in n.dtype_probes)


def test_the_fix_computes_the_same_on_calls_the_profile_never_saw(profiled, tf_forks) -> None:
    tmp, _ = profiled
    # the program before and after the fix: forks of one TensorFlow import (tf_forks)
    original = tf_forks.run(["prog.py", "--unseen"], tmp, program_env())
    assert original.returncode == 0, original.stderr[-2000:]
    # the program calls with tensors it makes itself, which show nothing of the domain:
    # the signature (what this test is about: its scalar specs' dtypes) is an unsafe fix
    fixed = run(
        [
            sys.executable,
            "-m",
            "autosig",
            "fix",
            "prog.py",
            "--profile",
            ".autosig/profile.json",
            "--unsafe-fixes",
        ],
        tmp,
    )
    assert fixed.returncode in (0, 1), fixed.stderr[-2000:]
    text = (tmp / "prog.py").read_text()
    assert "tf.TensorSpec(shape=[], dtype=tf.float16)" in text, text
    assert "tf.TensorSpec(shape=[], dtype=tf.float32)" in text, text
    after = tf_forks.run(["prog.py", "--unseen"], tmp, program_env())
    assert after.returncode == 0, after.stderr[-2000:]
    assert "UNSEEN mean" in after.stdout  # 12.5 after ints: an int32 spec would reject it
    assert _numbers(after.stdout) == pytest.approx(_numbers(original.stdout), rel=1e-6)


def _numbers(text: str) -> list[float]:
    """Every number printed. A division by a constant (the original's Python int) is a
    multiplication by its reciprocal after Grappler's folding, by a tensor a division:
    float32 results may differ in the last place."""
    return [float(n) for n in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text)]

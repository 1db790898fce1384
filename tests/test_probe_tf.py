"""Probe traces with real TensorFlow: each verdict on a small program, the program's own
output unchanged by the probes, the budget. Every program runs under ``autosig profile``
(a subprocess, as a user runs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from probe_programs import MANY, SIDE_EFFECTS, VERDICTS

from autosig.profile.evidence import ProbeEvidence
from autosig.profile.format import Profile, load_profile

pytestmark = [pytest.mark.tf, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent


def program_env() -> dict[str, str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(ROOT)}
    env.pop("AUTOSIG_PROBE_BUDGET", None)
    return env


def run(args: list[str], cwd: Path, forks: Any = None) -> subprocess.CompletedProcess[str]:
    """``args`` in ``cwd``; with ``forks``, the programs autosig runs are its forks."""
    env = forks.launch_env(program_env()) if forks is not None else program_env()
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def profile(
    tmp: Path, program: str, *options: str, forks: Any
) -> tuple[Profile, subprocess.CompletedProcess[str]]:
    """``autosig profile`` of ``program``, run as a fork of ``forks`` (``tf_forks``):
    what the probes find in a run, not how a command starts, is tested here."""
    (tmp / "prog.py").write_text(program)
    done = run(
        [sys.executable, "-m", "autosig", "profile", *options, "--", *forks.launcher(), "prog.py"],
        tmp,
        forks,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return load_profile(tmp / ".autosig" / "profile.json"), done


def line_of(program: str, marker: str) -> int:
    return next(i for i, text in enumerate(program.splitlines(), 1) if marker in text)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory, tf_forks: Any) -> dict[str, ProbeEvidence]:
    tmp = tmp_path_factory.mktemp("verdicts")
    data, done = profile(tmp, VERDICTS, forks=tf_forks)
    assert "probes:" in done.stderr  # the outcome line reports them
    out = {}
    for record in data.functions:
        assert record.probe is not None, record.qualname
        out[record.qualname] = record.probe
    out["<stats>"] = data.probes  # type: ignore[assignment]
    out["<explain>"] = run([sys.executable, "-m", "autosig", "explain"], tmp).stdout  # type: ignore[assignment]
    return out


def where(marker: str) -> str:
    return f"prog.py:{line_of(VERDICTS, marker)}"


def test_deepdream_dims_free_and_channels_fixed_by_the_code(verdicts: dict) -> None:
    evidence = verdicts["DeepDream.__call__"]
    assert [evidence.dim("img", d).verdict for d in (0, 1, 2)] == ["free", "free", "fixed"]
    channels = evidence.dim("img", 2)
    assert channels.size == 3 and channels.where == where("# CONV")
    assert "Depth of input (4) is not a multiple of input depth of filter (3)" in channels.error
    assert evidence.number("steps").dtype == "int32" and evidence.number("steps").spec_matches
    assert evidence.number("step_size").dtype == "float32"


def test_tensorarray_size_is_a_read(verdicts: dict) -> None:
    d = verdicts["tensor_array"].dim("x", 0)
    assert d.verdict == "read" and d.where == where("# TENSORARRAY")
    assert verdicts["tensor_array"].dim("x", 1).verdict == "free"


def test_if_size_is_one_is_a_read_seen_only_at_size_one(verdicts: dict) -> None:
    d = verdicts["if_one"].dim("x", 0)
    assert d.verdict == "read" and d.where == where("# SQUEEZE") and 1 in d.probed
    assert "size 1" in d.reason


def test_a_python_loop_over_a_size_is_a_read(verdicts: dict) -> None:
    d = verdicts["range_loop"].dim("x", 1)
    assert d.verdict == "read" and d.where == where("# RANGE")


def test_dividing_by_a_static_size_fails_relaxed(verdicts: dict) -> None:
    d = verdicts["mean_by_static"].dim("x", 0)
    assert d.verdict == "read" and "relaxed" in d.reason and d.where == where("# STATIC DIVIDE")
    assert verdicts["mean_by_static"].dim("x", 1).verdict == "free"


def test_python_int_exponent_is_float32(verdicts: dict) -> None:
    gamma = verdicts["focal"].number("gamma")
    assert (gamma.type, gamma.dtype, gamma.dtype_from, gamma.spec_matches) == (
        "int",
        "float32",
        "spec",
        True,
    )


def test_timestamp_float_needs_float64(verdicts: dict) -> None:
    t = verdicts["stamp"].number("t")
    assert t.needs_float64 and t.float32_keeps_digits is False and t.float32_max_abs_error >= 3
    assert t.spec_matches is False and t.where == where("# STAMP") and "Sub" in t.reason


def test_seed_beyond_int32_is_int64(verdicts: dict) -> None:
    seed = verdicts["noise"].number("seed")
    assert (seed.dtype, seed.spec_matches, seed.exceeds_int32) == ("int64", True, True)


def test_slice_index_arithmetic_is_what_python_folded(verdicts: dict) -> None:
    k = verdicts["column"].number("k")
    assert (k.dtype, k.spec_matches) == ("int32", True)
    step = verdicts["scaled_step"].number("step")
    assert step.spec_matches is False and "Mul" in step.reason  # Python's ints do not overflow


def test_nce_loss_sampler_is_a_stateful_random_op(verdicts: dict) -> None:
    random = verdicts["nce"].random
    assert random is not None and "LogUniformCandidateSampler" in random.hidden
    assert verdicts["nce"].dim("ids", 0).verdict == "free"  # tied to labels' batch
    assert verdicts["nce"].dim("labels", 1).verdict == "fixed"  # num_true=1


def test_weights_built_in_the_first_call_are_not_a_random_draw(verdicts: dict) -> None:
    evidence = verdicts["Lazy.__call__"]
    assert (
        evidence.random.hidden == [] and "RandomStandardNormal" in evidence.random.first_call_only
    )
    assert evidence.dim("x", 1).verdict == "fixed" and evidence.dim("x", 1).where == where(
        "# MATMUL"
    )


def test_an_eager_op_at_trace_time_stops_the_round_instead_of_hanging(verdicts: dict) -> None:
    evidence = verdicts["counted"]
    assert evidence.dims == [] and any("eager op" in f for f in evidence.failures)


def test_explain_shows_the_evidence(verdicts: dict) -> None:
    text = verdicts["<explain>"]
    assert "probe: img: dims 0, 1 free; dim 2 fixed by the code (prog.py:" in text
    assert "probe: gamma: Python int -> float32 in the graph" in text
    assert "probe: stateful random ops: LogUniformCandidateSampler" in text
    assert text.rstrip().splitlines()[-1].startswith("probes: ")
    stats = verdicts["<stats>"]
    assert stats.rounds >= 13 and stats.probes > 50 and stats.skipped_rounds == 0


def test_the_program_prints_the_same_with_and_without_probes(tmp_path: Path, tf_forks: Any) -> None:
    """Random streams with a global seed, Python counters and lists mutated while
    tracing, trace-time prints, a Keras model with dropout, Keras' name counter."""
    (tmp_path / "prog.py").write_text(SIDE_EFFECTS)
    plain = tf_forks.run(["prog.py"], tmp_path, program_env())  # a fork, as the profiled runs
    assert plain.returncode == 0, plain.stderr[-2000:]
    data, probed = profile(tmp_path, SIDE_EFFECTS, forks=tf_forks)
    _, unprobed = profile(tmp_path, SIDE_EFFECTS, "--no-probe", forks=tf_forks)
    assert probed.stdout == plain.stdout == unprobed.stdout
    probed_functions = {f.qualname: f.probe for f in data.functions}
    for name in ("noisy", "Counter.__call__", "train_step"):
        evidence = probed_functions[name]
        assert evidence is not None and evidence.probes >= 4 and not evidence.failures, name
    assert "tracing noisy" in probed_functions["noisy"].trace_output  # captured, not printed
    assert probed_functions["noisy"].random.hidden == ["RandomStandardNormal"]


def test_the_budget_bounds_the_probes_and_says_what_it_left_out(
    tmp_path: Path, tf_forks: Any
) -> None:
    data, done = profile(tmp_path, MANY, "--probe-budget", "0.6", forks=tf_forks)
    stats = data.probes
    assert stats is not None and stats.budget_s == 0.6 and stats.skipped_rounds >= 1
    assert stats.time_s < 0.6 + 2.0  # one round may run to the deadline, never past it by much
    skipped = [s for f in data.functions if f.probe for s in f.probe.skipped]
    assert skipped and all(s.endswith(": budget") for s in skipped)
    assert "skipped for the budget" in done.stderr
    off, _ = profile(tmp_path, MANY, "--no-probe", forks=tf_forks)
    assert off.probes is not None and not off.probes.enabled
    assert all(f.probe is None for f in off.functions)

"""Verification parts that need no TensorFlow: device choice, comparison, import hook."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

from autosig.errors import AutosigError
from autosig.profile.format import Sample
from autosig.verify import import_hook
from autosig.verify.arrays import Tolerance, compare_arrays
from autosig.verify.compare import (
    compare_by_design,
    compare_function,
    compare_outputs,
    inputs_differ,
)
from autosig.verify.device import HIDE_GPUS, select_device
from autosig.verify.gate import _python_params
from autosig.verify.runs import launch_command
from autosig.verify.xla import count_compiles, dump_flags

# -- device -----------------------------------------------------------------------------


def test_auto_picks_gpu_when_visible() -> None:
    choice = select_device("auto", list_gpus=lambda: ["/physical_device:GPU:0"])
    assert choice.device == "gpu"
    assert choice.gpus == ("/physical_device:GPU:0",)
    assert "CUDA_VISIBLE_DEVICES" not in choice.env
    assert "GPU:0" in choice.describe()


def test_auto_falls_back_to_cpu_and_hides_gpus() -> None:
    choice = select_device("auto", list_gpus=lambda: [])
    assert choice.device == "cpu"
    assert choice.env == {"CUDA_VISIBLE_DEVICES": HIDE_GPUS}
    assert "no GPU" in choice.describe()


def test_explicit_gpu_without_gpu_is_an_error() -> None:
    with pytest.raises(AutosigError, match="sees no GPU"):
        select_device("gpu", list_gpus=lambda: [])
    assert select_device("gpu", list_gpus=lambda: ["g0"]).device == "gpu"


def test_cpu_never_probes() -> None:
    def probe() -> list[str]:
        raise AssertionError("probed")

    choice = select_device("CPU", list_gpus=probe)
    assert choice.device == "cpu" and choice.env["CUDA_VISIBLE_DEVICES"] == HIDE_GPUS
    with pytest.raises(AutosigError, match="unknown device"):
        select_device("tpu", list_gpus=probe)


# -- comparison -------------------------------------------------------------------------


def test_float_tolerance_depends_on_dtype() -> None:
    tol = Tolerance()
    a = np.array([1.0, 2.0], np.float32)
    assert compare_arrays(a, a * (1 + 1e-6), tol).equal
    bad = compare_arrays(a, a * (1 + 1e-3), tol)
    assert not bad.equal and bad.max_rel == pytest.approx(1e-3, rel=1e-2)
    assert compare_arrays(a.astype(np.float16), (a * (1 + 5e-4)).astype(np.float16), tol).equal
    assert not compare_arrays(a.astype(np.float64), a.astype(np.float64) * (1 + 1e-6), tol).equal
    assert compare_arrays(a, a * (1 + 1e-3), Tolerance(rtol=1e-2)).equal


def test_exact_for_ints_strings_and_dtype_shape_mismatch() -> None:
    tol = Tolerance()
    assert not compare_arrays(np.array([1, 2]), np.array([1, 3]), tol).equal
    assert compare_arrays(np.array([b"a"]), np.array([b"a"]), tol).equal
    assert not compare_arrays(np.array([b"a"]), np.array([b"b"]), tol).equal
    assert "dtype" in compare_arrays(np.zeros(2, np.float32), np.zeros(2), tol).reason
    assert "shape" in compare_arrays(np.zeros(2), np.zeros(3), tol).reason
    nan = np.array([np.nan, 1.0])
    assert compare_arrays(nan, nan.copy(), tol).equal
    assert not compare_arrays(nan, np.array([0.0, 1.0]), tol).equal


def _arr(key: str) -> dict:
    return {"kind": "array", "key": key, "from": "tensor"}


def test_structures_ragged_and_first_mismatch() -> None:
    old = {"a": np.array([1.0], np.float32), "s": np.array([0, 2, 3]), "v": np.arange(3.0)}
    new = {"a": np.array([1.5], np.float32), "s": np.array([0, 2, 3]), "v": np.arange(3.0)}
    ragged = {"kind": "ragged_array", "values": "v", "row_splits": ["s"]}
    out = {"kind": "tuple", "items": [_arr("a"), ragged]}
    leaves = compare_outputs(out, out, old, new, Tolerance())
    assert [leaf.equal for leaf in leaves] == [False, True, True]
    other = {"kind": "list", "items": [_arr("a")]}
    assert "structure" in compare_outputs(out, other, old, new, Tolerance())[0].reason
    samples_old = [Sample(0, i, {}, outputs=_arr("a" if i == 2 else "v")) for i in range(4)]
    verdict = compare_function(samples_old, samples_old, old, new, Tolerance())
    assert verdict.status == "not equivalent"
    assert verdict.first_mismatch is not None and verdict.first_mismatch.call == 2
    assert verdict.calls_compared == 4 and verdict.max_abs == pytest.approx(0.5)
    assert "call 2" in verdict.summary()
    none = compare_function([], samples_old, old, new, Tolerance())
    assert none.status == "not compared"


def test_by_design_checks_shape_and_range_only() -> None:
    old = {"r": np.array([0.1, 0.9]), "w": np.array([0.2, 0.3, 0.4])}
    new = {"r": np.array([0.5, 0.7]), "w": np.array([5.0, 9.0])}
    s = [Sample(0, 0, {}, outputs=_arr("r"))]
    tol = Tolerance()
    assert compare_by_design(s, s, old, new, "AS102", tol).status == "different by design"
    far = {"r": np.array([5.0, 9.0])}
    assert compare_by_design(s, s, old, far, "AS102", tol).status == "not equivalent"
    t = [Sample(0, 0, {}, outputs=_arr("w"))]
    assert compare_by_design(t, t, old, new, "AS102", tol).status == "not equivalent"


def test_by_design_compares_outputs_the_draws_do_not_reach_exactly() -> None:
    old = {"r": np.array([0.1, 0.9]), "d": np.array([1.0, 2.0])}
    new = {"r": np.array([0.5, 0.7]), "d": np.array([1.0, 2.5])}
    both = {"kind": "tuple", "items": [_arr("r"), _arr("d")]}
    s = [Sample(0, 0, {}, outputs=both)]
    drawn = {"output[0]"}.__contains__
    verdict = compare_by_design(s, s, old, new, "dropout", Tolerance(), random=drawn)
    assert verdict.status == "not equivalent"
    leaf = verdict.first_mismatch.first_difference if verdict.first_mismatch else None
    assert leaf is not None and leaf.where == "output[1]"
    same = {**new, "d": old["d"]}
    verdict = compare_by_design(s, s, old, same, "dropout", Tolerance(), random=drawn)
    assert verdict.status == "different by design"
    nothing = compare_by_design(s, s, old, old, "dropout", Tolerance(), random=lambda w: False)
    assert nothing.status == "equivalent"  # the draws reach no output: nothing by design


def test_calls_with_different_inputs_are_not_compared() -> None:
    arrays_old = {"x": np.array([1.0]), "y": np.array([1.0])}
    arrays_new = {"x": np.array([2.0]), "y": np.array([1.0])}
    old = [Sample(0, 0, {"x": _arr("x")}), Sample(0, 1, {"x": _arr("y")})]
    kept_old, kept_new, skipped = inputs_differ(old, old, arrays_old, arrays_new)
    assert skipped == 1 and [s.call for s in kept_old] == [1] and len(kept_new) == 1


# -- import hook ------------------------------------------------------------------------


def test_import_hook_serves_rewritten_source_without_writing(tmp_path, monkeypatch) -> None:
    pkg = tmp_path / "hookpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    original = "def value():\n    return 'original'\n"
    (pkg / "mod.py").write_text(original)
    rewritten = "# rewritten\ndef value():\n    return 'rewritten'\n"
    monkeypatch.syspath_prepend(str(tmp_path))
    finder = import_hook.install({str(pkg / "mod.py"): rewritten})
    try:
        module = importlib.import_module("hookpkg.mod")
        assert module.value() == "rewritten"
        assert module.__file__ == str(pkg / "mod.py")
        assert inspect.getsource(module.value).startswith("def value():\n    return 'rewritten'")
        assert finder.served == [str((pkg / "mod.py").resolve())]
    finally:
        sys.meta_path.remove(finder)
        import_hook._INSTALLED = None
        for name in ("hookpkg.mod", "hookpkg"):
            sys.modules.pop(name, None)
    assert (pkg / "mod.py").read_text() == original
    assert not list(pkg.rglob("*.pyc")) or all("mod" not in p.name for p in pkg.rglob("*.pyc"))


def test_script_launch_only_when_the_script_is_rewritten(tmp_path) -> None:
    script = tmp_path / "train.py"
    script.write_text("")
    cmd = ["python3", "-u", str(script), "--steps", "3"]
    assert launch_command(cmd, set()) == cmd
    launched = launch_command(cmd, {str(script.resolve())})
    assert launched == [
        "python3",
        "-u",
        "-m",
        "autosig.verify.import_hook",
        str(script),
        "--steps",
        "3",
    ]
    assert launch_command(["python", "-m", "pkg"], {str(script)}) == ["python", "-m", "pkg"]
    assert launch_command(["pytest", str(script)], {str(script)}) == ["pytest", str(script)]


# -- XLA compile counting and gate helpers ------------------------------------------------


def test_compile_count_reads_xla_module_dumps(tmp_path) -> None:
    import json

    from autosig.verify.xla import FUNCTIONS_FILE

    dump = tmp_path / "123"
    dump.mkdir()
    noted = []
    for i, name in enumerate(["train_step", "train_step", "predict"]):
        stem = f"module_{i:04d}.a_inference_{name}_{10 + i}__XlaMustCompile_true_config.2"
        (dump / f"{stem}.before_optimizations.txt").write_text("")
        (dump / f"{stem}.cpu_after_optimizations.txt").write_text("")
        site = {"file": "/p/m.py", "qualname": name, "line": 3 if name == "predict" else 7}
        noted.append(json.dumps({"name": f"__inference_{name}_{10 + i}", **site}))
    (dump / FUNCTIONS_FILE).write_text("\n".join(noted) + "\n")
    counts = count_compiles(tmp_path)
    assert counts.lookup("/p/m.py", "train_step") == 2
    assert counts.lookup("/p/m.py", "predict") == 1
    assert "--xla_dump_to=" in dump_flags(tmp_path, ["train_step"])


def test_python_params_found_in_nested_signatures() -> None:
    from autosig.profile.format import CallSignature, FunctionRecord, Profile

    record = FunctionRecord("m.py", "f", 3, None, True)
    record.signatures = [
        CallSignature(
            args={
                "x": {"kind": "tensor", "shape": [2], "dtype": "float32"},
                "n": {"kind": "python", "type": "int", "value": 2},
                "cfg": {
                    "kind": "tuple",
                    "items": [{"kind": "python", "type": "float", "value": 1.0}],
                },
                "opt": {"kind": "python", "type": "NoneType", "value": None},
            },
            passed={},
        )
    ]
    assert _python_params(Profile([record]), "m.py", "f") == ["n", "cfg"]


def test_timing_target_unwraps_tf_style_method_wrappers() -> None:
    """TF serves methods through a wrapper defined in TF whose __wrapped__ is the bound method."""
    import functools

    from autosig.verify.xla import _target

    class Model:
        def step(self, x):
            return x

    bound = Model().step

    @functools.wraps(bound)
    def tf_wrapper(*args, **kwargs):
        return bound(*args, **kwargs)

    assert _target(tf_wrapper) is Model.step
    assert _target(functools.partial(Model.step, None)) is Model.step
    assert _target(object()) is None


def test_verify_honours_a_suppression_on_the_def_line(tmp_path: Path) -> None:
    """`# autosig: ignore` means the same to verify as to check, fix and explain."""
    from autosig.profile.format import CallSignature, FunctionRecord, Profile
    from autosig.verify.candidate import build_candidate

    def sig(rows: int) -> CallSignature:
        return CallSignature(
            args={"x": {"kind": "tensor", "shape": [rows, 3], "dtype": "float32"}},
            passed={"x": "positional"},
            calls=1,
            traces=1,
        )

    record = FunctionRecord(
        path="m.py",
        qualname="step",
        line=4,
        source_sha256=None,
        editable=True,
        calls=2,
        traces=2,
        signatures=[sig(2), sig(5)],
    )
    profile = Profile(functions=[record], project_root=str(tmp_path))
    text = "import tensorflow as tf\n\n@tf.function\ndef step(x):{}\n    return x * 2\n"
    plain = build_candidate(profile, tmp_path, sources={"m.py": text.format("")})
    assert plain.changed_files() == ["m.py"]
    ignored = text.format("  # autosig: ignore")
    quiet = build_candidate(profile, tmp_path, sources={"m.py": ignored})
    assert quiet.changed_files() == []
    assert quiet.plan.functions[0].action == "none"


def test_verify_options_reach_its_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each verify option (tolerances, reuse, XLA baseline, kept calls) lands in the
    settings the runs use; a renamed or dropped option fails here, without TensorFlow."""
    from click.testing import CliRunner

    from autosig.cli import cli
    from autosig.cli import verify as verify_command

    seen = {}

    def fake_verify(profile_path, args, settings, unsafe_fixes, output, before):  # noqa: ANN001, ANN202
        seen["settings"], seen["args"], seen["before"] = settings, args, before
        return 0

    monkeypatch.setattr(verify_command, "_verify", fake_verify)
    options = ["--rtol", "0.001", "--atol", "0.0001", "--no-reuse", "--xla-baseline"]
    options += ["--calls", "7", "--device", "cpu", "--before", "HEAD"]
    result = CliRunner().invoke(cli, ["verify", *options, "--", "python", "train.py"])
    assert result.exit_code == 0, result.output
    settings = seen["settings"]
    assert (settings.rtol, settings.atol, settings.reuse) == (0.001, 0.0001, False)
    assert (settings.xla_baseline, settings.sample_calls, settings.device) == (True, 7, "cpu")
    assert seen["args"] == ["python", "train.py"] and seen["before"] == "HEAD"
    defaults = CliRunner().invoke(cli, ["verify", "--", "python", "train.py"])
    assert defaults.exit_code == 0 and seen["settings"].reuse is True and seen["before"] is None


def test_a_missing_default_profile_points_to_the_one_written_elsewhere(tmp_path: Path) -> None:
    """'autosig profile -o p.json' then 'autosig verify -- CMD': say --profile p.json."""
    import os

    from click.testing import CliRunner

    from autosig.cli import cli
    from autosig.profile.format import Profile, save_profile

    save_profile(Profile(), tmp_path / "p.json")
    (tmp_path / "notes.json").write_text('{"not": "a profile"}')
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        verify = CliRunner().invoke(cli, ["verify", "--", "python", "train.py"])
        explain = CliRunner().invoke(cli, ["explain"])
    finally:
        os.chdir(old)
    assert verify.exit_code == 2
    assert verify.stderr == (
        ".autosig/profile.json: error: no such profile; run 'autosig profile -- CMD' first "
        "(found p.json: pass --profile p.json)\n"
    )
    assert "(found p.json: autosig explain p.json)" in str(explain.exception)  # main(): exit 2

"""``autosig explain`` advises what ``autosig fix --profile`` really does. No TensorFlow.

Each scenario writes a small module and a profile of it, runs ``explain`` and
``fix --diff`` on the same files, and checks that both tell the same story: a
signature, a scalar spec, or ``reduce_retracing=True`` with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from autosig.cli import cli
from autosig.explain.advice import PROFILE_CODES_OFF, STATIC_ONLY, fix_plans
from autosig.explain.retraces import explain_function, render_text
from autosig.infer.plan import Blocker, FunctionPlan, ParamPlan
from autosig.infer.specs import TensorSpecNode
from autosig.profile.format import (
    CallSignature,
    FunctionRecord,
    ParamInfo,
    Profile,
    TraceEvent,
    load_profile,
    save_profile,
)

PROFILE = ".autosig/profile.json"


def tensor(*shape: int | None, dtype: str = "float32") -> dict[str, Any]:
    return {"kind": "tensor", "shape": list(shape), "dtype": dtype}


def py(value: Any) -> dict[str, Any]:
    return {"kind": "python", "type": type(value).__name__, "value": value}


def obj(type_name: str) -> dict[str, Any]:
    return {"kind": "object", "type": type_name}


def traced_every_call(
    qualname: str, line: int, calls: list[dict[str, Any]], **fields: Any
) -> FunctionRecord:
    """A function in model.py traced once per call, each call a new signature."""
    return FunctionRecord(
        path="model.py",
        qualname=qualname,
        line=line,
        source_sha256=None,
        editable=True,
        params=[ParamInfo(name, "POSITIONAL_OR_KEYWORD") for name in calls[0]],
        calls=len(calls),
        traces=len(calls),
        signatures=[
            CallSignature(args=args, passed=dict.fromkeys(args, "positional"), calls=1)
            for args in calls
        ],
        trace_events=[TraceEvent(call=i, signature=i) for i in range(len(calls))],
        **fields,
    )


@contextmanager
def inside(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def project(tmp_path: Path, source: str, *records: FunctionRecord) -> Path:
    (tmp_path / "model.py").write_text(textwrap.dedent(source))
    save_profile(Profile(functions=list(records), project_root=str(tmp_path)), tmp_path / PROFILE)
    return tmp_path


def explain(where: Path, *args: str) -> str:
    with inside(where):
        result = CliRunner().invoke(cli, ["explain", PROFILE, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def fix_diff(where: Path, *args: str) -> str:
    with inside(where):
        result = CliRunner().invoke(
            cli, ["fix", "model.py", "--profile", PROFILE, "--diff", *args], catch_exceptions=False
        )
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def summaries(text: str, param: str) -> list[str]:
    return [line for line in text.splitlines() if "summary:" in line and f" {param} " in line]


PYRAMID = """\
import tensorflow as tf


@tf.function
def pyramid(signal, levels):
    return [tf.reduce_mean(signal) * level for level in range(levels)]
"""
PYRAMID_CALLS = [{"signal": tensor(2, n), "levels": py(2 + n % 3)} for n in (8, 9, 10, 11)]


def test_python_int_fix_keeps_is_not_advised_as_a_scalar_spec(tmp_path: Path) -> None:
    where = project(tmp_path, PYRAMID, traced_every_call("pyramid", 4, PYRAMID_CALLS))
    text = explain(where)
    (levels,) = summaries(text, "levels")
    assert "scalar TensorSpec" not in levels
    assert "levels stays a Python value: Python range() needs a Python int" in levels
    assert "reduce_retracing=True, which still traces once per value" in levels
    (signal,) = summaries(text, "signal")
    assert "adds reduce_retracing=True, not an input_signature (because of levels" in signal
    assert "input_signature with None there" not in text
    assert (
        "note: autosig fix --profile .autosig/profile.json gives pyramid reduce_retracing=True"
        in text
    )
    # ... and that is what fix writes.
    assert "+@tf.function(reduce_retracing=True)" in fix_diff(where)


def test_python_int_fix_tensorizes_is_advised_as_a_scalar_spec(tmp_path: Path) -> None:
    source = """\
    import tensorflow as tf


    @tf.function
    def scale(x, factor):
        return x * tf.cast(factor, x.dtype)
    """
    calls = [{"x": tensor(4, n), "factor": py(n)} for n in (1, 2, 3)]
    where = project(tmp_path, source, traced_every_call("scale", 5, calls))
    text = explain(where)
    # nothing shows x's domain (float32, rank 2): the signature is an unsafe fix and the
    # safe one is reduce_retracing=True, which still traces once per value (issue 21)
    (factor,) = summaries(text, "factor")
    assert "adds only reduce_retracing=True, not an input_signature" in factor
    diff = fix_diff(where)
    assert "reduce_retracing=True" in diff and "input_signature" not in diff
    # only ints in 3 calls, only ever cast to x's float32: a float32 spec (a later 2.5 fits)
    diff = fix_diff(where, "--unsafe-fixes")
    assert "input_signature" in diff and "tf.TensorSpec(shape=[], dtype=tf.float32)" in diff


def test_object_argument_gives_reduce_retracing_and_the_reason(tmp_path: Path) -> None:
    source = """\
    import tensorflow as tf


    @tf.function
    def step(x, loss_fn):
        return loss_fn(x)
    """
    calls = [
        {"x": tensor(n, 4), "loss_fn": obj("keras.losses.MeanSquaredError")} for n in (8, 16, 4)
    ]
    record = traced_every_call("step", 5, calls, object_instances={"loss_fn": 3})
    record.trace_events[2].new_objects = ["loss_fn"]
    where = project(tmp_path, source, record)
    text = explain(where)
    (x,) = summaries(text, "x")
    assert "adds reduce_retracing=True, not an input_signature (because of loss_fn" in x
    (loss,) = summaries(text, "loss_fn")
    assert "loss_fn cannot go in an input_signature" in loss
    assert "pass the same object each call" in loss and "or use reduce_retracing" not in loss
    assert "`loss_fn` is a Python object (keras.losses.MeanSquaredError)" in text
    assert "+@tf.function(reduce_retracing=True)" in fix_diff(where)


def test_moved_source_keeps_the_generic_advice(tmp_path: Path) -> None:
    where = project(tmp_path, PYRAMID, traced_every_call("pyramid", 4, PYRAMID_CALLS))
    (where / "model.py").unlink()
    text = explain(where)
    (levels,) = summaries(text, "levels")
    assert levels.endswith("(a scalar TensorSpec; Python values trace once per value)")
    assert "note: autosig fix" not in text


def test_stale_source_says_only_the_static_fix_applies(tmp_path: Path) -> None:
    record = traced_every_call("pyramid", 4, PYRAMID_CALLS)
    record.source_sha256 = "0" * 64  # profiled from other source than model.py has now
    where = project(tmp_path, PYRAMID, record)
    text = explain(where)
    (levels,) = summaries(text, "levels")
    assert levels.endswith(
        "fix: re-run autosig profile first: the profile is stale for pyramid (see the note)"
    )
    assert (
        "note: the profile is stale for pyramid: it changed since it was profiled, so autosig "
        "fix --profile .autosig/profile.json refuses it (an error naming it, exit 2) and makes "
        "only the static fixes there: reduce_retracing=True (the static fix AS107); re-run "
        "autosig profile for an input_signature"
    ) in text
    diff = fix_diff(where)
    assert "+@tf.function(reduce_retracing=True)" in diff


def test_stale_source_with_reduce_retracing_already_changes_nothing(tmp_path: Path) -> None:
    record = traced_every_call("pyramid", 4, PYRAMID_CALLS)
    record.source_sha256 = "0" * 64
    source = PYRAMID.replace("@tf.function\n", "@tf.function(reduce_retracing=True)\n")
    where = project(tmp_path, source, record)
    text = explain(where)
    (levels,) = summaries(text, "levels")
    assert levels.endswith("the profile is stale for pyramid (see the note)")
    assert "only the static fixes there: none for this function" in text
    assert "@@" not in fix_diff(where)


def test_stale_source_is_named_once_on_stderr_and_an_unsafe_static_fix_is_not_promised(
    tmp_path: Path,
) -> None:
    """AS107's reduce_retracing is unsafe here (the tensor goes to code outside the
    project): fix does not apply it without --unsafe-fixes, so explain does not promise it."""
    source = """\
    import tensorflow as tf
    import signal_stats

    w = tf.Variable(1.0)


    @tf.function
    def pyramid(signal, levels):
        w.assign_add(signal_stats.mean(signal))
        return [w * level for level in range(levels)]
    """
    record = traced_every_call("pyramid", 4, PYRAMID_CALLS)
    record.source_sha256 = "0" * 64
    where = project(tmp_path, source, record)
    with inside(where):
        result = CliRunner().invoke(cli, ["explain", PROFILE], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stderr == (
        f"autosig: warning: {PROFILE}: stale for pyramid (changed since it was profiled): "
        "'autosig fix --profile' refuses it; re-run 'autosig profile'\n"
    )
    assert "only the static fixes there: none for this function" in result.stdout
    with inside(where):
        fixed = CliRunner().invoke(cli, ["fix", "model.py", "--profile", PROFILE, "--diff"])
    assert fixed.exit_code == 2 and "@@" not in fixed.stdout  # refused, as explain said
    assert "pyramid changed since .autosig/profile.json was recorded" in fixed.stderr


def test_config_without_profile_rules_says_so(tmp_path: Path) -> None:
    source = """\
    import tensorflow as tf


    @tf.function
    def scale(x, factor):
        return x * tf.cast(factor, x.dtype)
    """
    calls = [{"x": tensor(4, n), "factor": py(n)} for n in (1, 2, 3)]
    where = project(tmp_path, source, traced_every_call("scale", 5, calls))
    (where / "pyproject.toml").write_text('[tool.autosig]\nignore = ["AS2"]\n')
    text = explain(where)
    assert f"{PROFILE_CODES_OFF}; {STATIC_ONLY}" in text
    assert "scalar TensorSpec" not in text
    diff = fix_diff(where)
    assert "+@tf.function(reduce_retracing=True)" in diff and "input_signature" not in diff
    (where / "pyproject.toml").write_text('[tool.autosig]\nignore = ["AS2", "AS107"]\n')
    text = explain(where)
    assert f"leaves scale as it is: {PROFILE_CODES_OFF}" in text
    assert "@@" not in fix_diff(where)


def test_library_functions_get_no_plan(tmp_path: Path) -> None:
    record = traced_every_call("pyramid", 4, PYRAMID_CALLS)
    record.editable = False
    where = project(tmp_path, PYRAMID, record)
    assert fix_plans(load_profile(where / PROFILE), where / PROFILE) == {}
    assert "library function: pass the value as a tensor" in explain(where)


def test_json_carries_fix_decision(tmp_path: Path) -> None:
    where = project(tmp_path, PYRAMID, traced_every_call("pyramid", 4, PYRAMID_CALLS))
    (function,) = json.loads(explain(where, "--format", "json"))["functions"]
    assert function["fix"]["action"] == "reduce_retracing"
    assert function["fix"]["signed"] == []
    assert "range()" in function["fix"]["reasons"][0]


def test_profile_found_from_a_moved_checkout(tmp_path: Path) -> None:
    """The recorded root names another directory: the profile's .autosig/ folder wins."""
    where = project(tmp_path, PYRAMID, traced_every_call("pyramid", 4, PYRAMID_CALLS))
    profile = load_profile(where / PROFILE)
    profile.project_root = "/nonexistent/original/checkout"
    save_profile(profile, where / PROFILE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with inside(elsewhere):
        plans = fix_plans(load_profile(where / PROFILE), where / PROFILE)
    assert [p.action for p in plans.values()] == ["reduce_retracing"]


# -- the pure part: explain_function given a plan ------------------------------------------


def plan_for(
    record: FunctionRecord, action: str, signed: dict[str, Any], *blockers: Blocker
) -> FunctionPlan:
    return FunctionPlan(
        path=record.path or "",
        qualname=record.qualname,
        line=record.line,
        action=action,  # type: ignore[arg-type]
        params=tuple(ParamPlan(p.name, signed.get(p.name), "") for p in record.params),
        reasons=tuple(b.reason for b in blockers),
        blockers=blockers,
    )


def test_signed_plan_keeps_todays_wording() -> None:
    record = traced_every_call("f", 3, [{"x": tensor(n, 2), "k": py(n)} for n in (1, 2)])
    plan = plan_for(
        record,
        "signature",
        {"x": TensorSpecNode((None, 2), "float32"), "k": TensorSpecNode((), "int32")},
    )
    assert (
        explain_function(record, PROFILE, plan).summary == explain_function(record, PROFILE).summary
    )


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        (
            Blocker.stated(
                "k",
                "argument",
                "`k`",
                "is a Python bool that steers the function (True: 1 call, False: 1 call)",
            ),
            "k stays a Python value: it is a Python bool that steers the function",
        ),
        (
            Blocker.stated(
                "k",
                "parameter",
                "keyword-only `k`",
                "is passed values other than its default: TensorFlow's input_signature "
                "cannot cover keyword-only parameters",
            ),
            "k stays a Python value: it is passed values other than its default",
        ),
    ],
)
def test_blocker_named_per_parameter(reason: Blocker, expected: str) -> None:
    record = traced_every_call("f", 3, [{"x": tensor(n, 2), "k": py(n)} for n in (1, 2)])
    summary = explain_function(
        record, PROFILE, plan_for(record, "reduce_retracing", {}, reason)
    ).summary
    (k,) = [s for s in summary if "Python value k" in s]
    assert expected in k
    (x,) = [s for s in summary if " of x " in s]
    assert "(because of k: see the note)" in x


def test_library_record_ignores_a_plan() -> None:
    record = traced_every_call("f", 3, [{"x": tensor(n, 2)} for n in (1, 2)])
    record.editable = False
    plan = plan_for(
        record,
        "reduce_retracing",
        {},
        Blocker.stated("x", "argument", "`x`", "arrives with different dtypes"),
    )
    text = render_text([explain_function(record, PROFILE, plan)])
    assert "library function" in text and "reduce_retracing" not in text


# -- no TensorFlow ------------------------------------------------------------------------

BLOCKED = r"""
import json, sys

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tensorflow", "keras", "tf_keras"):
            raise ImportError(f"{name} is forbidden here")
        return None

sys.meta_path.insert(0, Refuse())
from autosig.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "keras"))
print(json.dumps({"code": code, "loaded": loaded}), file=sys.stderr)
"""


def test_explain_with_source_imports_no_tensorflow(tmp_path: Path) -> None:
    where = project(tmp_path, PYRAMID, traced_every_call("pyramid", 4, PYRAMID_CALLS))
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKED, "explain", PROFILE],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report == {"code": None, "loaded": []} or report == {"code": 0, "loaded": []}, (
        proc.stderr
    )
    assert "levels stays a Python value" in proc.stdout

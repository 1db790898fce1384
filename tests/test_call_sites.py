"""Call-site tensorization without TensorFlow: when it is planned, and the edit itself.

The edit is checked as source pairs through the fix engine (what ``autosig fix`` runs),
the plan through inference on recorded calls; ``test_call_sites_tf.py`` runs the
rewritten programs.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from autosig.cli import cli
from autosig.infer.observations import InferOptions
from autosig.infer.plan import CallSitePlan, FunctionPlan, Plan, TensorizedParam
from autosig.infer.planner import infer_function
from autosig.profile.format import (
    CallSignature,
    CallSite,
    FunctionRecord,
    ParamInfo,
    Profile,
    TraceEvent,
    save_profile,
)
from autosig.rewrite.engine import fix_text

# -- the edit: source pairs ------------------------------------------------------------------

MODEL = """\
import tensorflow as tf


@tf.function
def explain(model, images, class_index):
    return images * tf.cast(class_index, tf.float32)


def run(model, images, classes):
    out = []
    for c in classes:  # one call per class
        out.append(explain(model, images, c))  # keep this comment
    out.append(explain(model, images, class_index=len(classes) + 1))
    return out
"""


def site(line: int, col: int, **extra: Any) -> CallSite:
    extra.setdefault("scope", "run")
    extra.setdefault("scope_line", 9)
    extra.setdefault("positional", 3)
    return CallSite("model.py", line, calls=extra.pop("calls", 4), col=col, **extra)


def plan(*sites: CallSite, dtype: str = "int32", **entry: Any) -> Plan:
    callee = entry.pop("callee", "explain")
    index, from_end = entry.pop("index", 2), entry.pop("from_end", None)
    params = (TensorizedParam("class_index", index, dtype, "Python int", from_end),)
    return Plan(
        [
            FunctionPlan(
                path=entry.pop("path", "model.py"),
                qualname=entry.pop("qualname", "explain"),
                line=5,
                action="none",
                call_sites=CallSitePlan(callee, params, tuple(sites)),
                **entry,
            )
        ]
    )


DEFAULT_SITES = (
    site(12, 19),
    site(13, 15, positional=2, keywords=["class_index"]),
)


def fixed(text: str, the_plan: Plan, path: str = "model.py", **options: Any):
    return fix_text(
        text,
        path,
        plan=the_plan,
        rules=[],
        unsafe_fixes=options.pop("unsafe_fixes", False),
        **options,
    )


def test_positional_and_keyword_arguments_are_wrapped_and_nothing_else_changes() -> None:
    result = fixed(MODEL, plan(*DEFAULT_SITES))
    assert result.new_text == MODEL.replace(
        "explain(model, images, c))  # keep",
        "explain(model, images, tf.constant(c, tf.int32)))  # keep",
    ).replace(
        "class_index=len(classes) + 1)",
        "class_index=tf.constant(len(classes) + 1, tf.int32))",
    )
    assert [(f.code, f.line, f.qualname, f.target) for f in result.applied] == [
        ("call_site", 12, "explain", "model.py"),
        ("call_site", 13, "explain", "model.py"),
    ]
    assert result.call_sites_already == set()


def test_a_second_run_changes_nothing_and_says_nothing_about_the_sites() -> None:
    once = fixed(MODEL, plan(*DEFAULT_SITES)).new_text
    again = fixed(once, plan(*DEFAULT_SITES))
    assert not again.changed and not again.applied
    assert not [line for line in again.left if "call of explain" in line]
    assert again.call_sites_already == {("model.py", "explain")}


def test_lines_above_the_calling_function_may_move() -> None:
    """The line is counted from the enclosing function's first line: a header added
    above it (or a signature autosig wrote on another function) does not stale it."""
    moved = "# a new header\n# of two lines\n" + MODEL
    result = fixed(moved, plan(*DEFAULT_SITES))
    assert result.new_text.count("tf.constant(") == 2
    assert [f.line for f in result.applied] == [14, 15]


def test_a_line_that_no_longer_holds_the_call_is_skipped_and_said() -> None:
    edited = MODEL.replace("out.append(explain(model, images, c))", "out.append(c)")
    result = fixed(edited, plan(*DEFAULT_SITES))
    assert result.new_text.count("tf.constant(") == 1  # the other site still is rewritten
    (line,) = [item for item in result.left if "not rewritten" in item]
    assert line.startswith("line 12: call of explain not rewritten: no call of `explain`")
    assert "re-run autosig profile" in line


def test_the_call_must_pass_its_arguments_as_when_it_was_recorded() -> None:
    result = fixed(MODEL, plan(site(12, 19, positional=2, keywords=["class_index"])))
    assert not result.changed
    assert "passes 3 positional and 0 keyword arguments" in result.left[0]


def test_star_arguments_are_skipped() -> None:
    text = MODEL.replace("explain(model, images, c))", "explain(*(model, images, c)))")
    result = fixed(text, plan(site(12, 19, positional=3)))
    assert not result.changed
    assert "*args/**kwargs" in result.left[0]


def test_an_argument_after_an_unpacked_batch_is_wrapped_where_its_position_is_certain() -> None:
    """golden 21: `train_step(*batch(rng, size), epoch)`: the function takes no *args and
    its last parameter has no default, so every call that does not raise fills all three
    positional parameters and the trailing argument is `class_index` (from_end 0)."""
    text = MODEL.replace("explain(model, images, c))", "explain(*(model, images), c))")
    result = fixed(text, plan(site(12, 19, positional=3), from_end=0))
    assert "explain(*(model, images), tf.constant(c, tf.int32))" in result.new_text
    # a keyword argument may fill a positional parameter: the position is not certain
    keyword = text.replace("explain(*(model, images), c))", "explain(*(model,), c, images=1))")
    left = fixed(keyword, plan(site(12, 19, positional=3), from_end=0))
    assert not left.changed and "*args/**kwargs" in left.left[0]
    # a last parameter with a default (from_end None): `f(*batch, c)` may leave it out
    assert not fixed(text, plan(site(12, 19, positional=3))).changed


def test_an_argument_that_already_is_a_tensor_is_left() -> None:
    text = MODEL.replace("explain(model, images, c))", "explain(model, images, tf.constant(c)))")
    result = fixed(text, plan(site(12, 19)))
    assert not result.changed
    assert "`tf.constant(c)` already is a tensor" in result.left[0]


def test_the_dtype_and_the_files_own_alias() -> None:
    text = MODEL.replace("import tensorflow as tf", "import tensorflow as tf2").replace(
        "tf.", "tf2."
    )
    result = fixed(text, plan(site(12, 19), dtype="int64"))
    assert "explain(model, images, tf2.constant(c, tf2.int64))" in result.new_text


DRIVER = '''\
"""Runs the classes (no TensorFlow import here)."""
from model import explain


def main(model, images):
    for c in range(3):
        explain(model, images, c)


CLASS = 7
explain(None, None, CLASS)
'''


def test_a_file_without_tensorflow_gets_the_import_and_stays_idempotent() -> None:
    sites = (
        CallSite("driver.py", 7, 3, col=8, scope="main", scope_line=5, positional=3),
        CallSite("driver.py", 11, 1, col=0, scope="<module>", scope_line=1, positional=3),
    )
    the_plan = plan(*sites)
    result = fixed(DRIVER, the_plan, path="driver.py")
    assert "import tensorflow as tf\n" in result.new_text
    assert "explain(model, images, tf.constant(c, tf.int32))" in result.new_text
    assert "explain(None, None, tf.constant(CLASS, tf.int32))" in result.new_text
    assert [f.target for f in result.applied] == ["model.py", "model.py"]
    again = fixed(result.new_text, the_plan, path="driver.py")
    # the added import moved the module-level call one line down: found as done
    assert not again.changed and not again.left
    assert again.call_sites_already == {("model.py", "explain")}


def test_module_level_code_before_the_tensorflow_import_is_not_rewritten() -> None:
    text = "explain(None, None, 3)\nimport tensorflow as tf\n"
    sites = (CallSite("x.py", 1, 1, col=0, scope="<module>", scope_line=1, positional=3),)
    result = fixed(text, plan(*sites), path="x.py")
    assert not result.changed
    assert "TensorFlow is imported only after" in result.left[0]


def test_dunder_call_is_found_by_its_column_and_two_calls_on_a_line_apart() -> None:
    text = textwrap.dedent(
        """\
        import tensorflow as tf

        def run(smooth, image):
            return smooth(image, 1) + smooth(image, 2)
        """
    )
    sites = (
        CallSite("m.py", 4, 1, col=30, scope="run", scope_line=3, positional=2),
        CallSite("m.py", 4, 1, col=11, scope="run", scope_line=3, positional=2),
    )
    the_plan = plan(*sites, callee=None, qualname="Smoother.__call__", path="m.py", index=1)
    result = fixed(text, the_plan, path="m.py")
    assert "smooth(image, tf.constant(1, tf.int32)) + smooth(image, tf.constant(2, tf.int32))" in (
        result.new_text
    )
    # without columns two calls of the same name on one line are ambiguous
    bare = tuple(CallSite("m.py", 4, 1, scope="run", scope_line=3, positional=2) for _ in "ab")
    named = plan(*bare, callee="smooth", qualname="smooth", path="m.py", index=1)
    assert not fixed(text, named, path="m.py").changed


def test_unsafe_plans_need_unsafe_fixes_and_crlf_stays() -> None:
    the_plan = plan(*DEFAULT_SITES, safety="unsafe", warnings=("it draws random numbers",))
    result = fixed(MODEL, the_plan)
    assert not result.changed
    assert (
        "unsafe fix, not applied without --unsafe-fixes: it draws random numbers"
        in (result.left[0])
    )
    crlf = MODEL.replace("\n", "\r\n")
    result = fixed(crlf, the_plan, unsafe_fixes=True)
    assert result.new_text.count("\r\n") == crlf.count("\r\n") and "\n" not in (
        result.new_text.replace("\r\n", "")
    )
    assert result.applied[0].safety == "unsafe"


# -- the plan --------------------------------------------------------------------------------


def tensor(*shape: int) -> dict[str, Any]:
    return {"kind": "tensor", "shape": list(shape), "dtype": "float32"}


def recorded(
    src: str,
    values: list[Any],
    *,
    sites: list[CallSite] | None = None,
    new_objects: bool = False,
) -> FunctionRecord:
    """``explain(model, images, class_index)`` called once per value, one trace each."""
    params = [ParamInfo(n, "POSITIONAL_OR_KEYWORD") for n in ("model", "images", "class_index")]
    signatures = []
    for call, value in enumerate(values):
        args = {
            "model": {"kind": "object", "type": "keras.Sequential"},
            "images": tensor(4, 12),
            "class_index": {"kind": "python", "type": type(value).__name__, "value": value},
        }
        signatures.append(CallSignature(args, dict.fromkeys(args, "positional"), 1, call, traces=1))
    events = [
        TraceEvent(call=i, signature=i, new_objects=["model"] if new_objects else [])
        for i in range(len(values))
    ]
    line = next(i for i, t in enumerate(src.splitlines(), 1) if t.startswith("def explain"))
    return FunctionRecord(
        path="model.py",
        qualname="explain",
        line=line,
        source_sha256=None,
        editable=True,
        params=params,
        calls=len(values),
        traces=len(values),
        signatures=signatures,
        trace_events=events,
        object_instances={"model": len(values) if new_objects else 1},
        call_sites=sites if sites is not None else [site(12, 19, calls=len(values))],
    )


def planned(body: str, values: list[Any] | None = None, **extra: Any) -> FunctionPlan:
    src = textwrap.dedent(
        """\
        import tensorflow as tf


        @tf.function
        def explain(model, images, class_index):
        """
    ) + textwrap.indent(textwrap.dedent(body), "    ")
    return infer_function(recorded(src, values or list(range(6)), **extra), src, InferOptions())


def test_a_position_from_the_end_only_where_every_call_fills_the_parameters() -> None:
    """A default on the last parameter, or a ``*args``, lets ``f(*batch, c)`` bind ``c``
    elsewhere: no position from the end (the unpacking call is then left as it is)."""
    extras = {
        "scale=1.0": ParamInfo(
            "scale", "POSITIONAL_OR_KEYWORD", {"kind": "python", "type": "float", "value": 1.0}
        ),
        "*rest": ParamInfo("rest", "VAR_POSITIONAL"),
    }
    for text, extra in extras.items():
        src = (
            "import tensorflow as tf\n\n\n@tf.function\n"
            f"def explain(model, images, class_index, {text}):\n"
            "    return model(images)[:, class_index]\n"
        )
        rec = recorded(src, list(range(6)))
        rec.params = [*rec.params, extra]
        entry = infer_function(rec, src, InferOptions())
        assert entry.call_sites is not None, entry.reasons
        (param,) = entry.call_sites.params
        assert (param.index, param.from_end) == (2, None), text


def test_an_index_used_only_as_a_tensor_is_planned_at_the_call_sites() -> None:
    entry = planned("logits = model(images)\nreturn logits[:, class_index]\n")
    assert entry.action == "none" and entry.safety == "safe"
    assert entry.call_sites is not None
    (param,) = entry.call_sites.params
    assert (param.name, param.index, param.dtype) == ("class_index", 2, "int32")
    assert param.from_end == 0  # the last parameter, without a default: always filled
    assert [s.line for s in entry.call_sites.sites] == [12]
    # int32 is what TensorFlow gives a Python int itself: `tf.constant(class_index)`, which
    # reads a float or an int beyond int32 at that call as TensorFlow reads the Python
    # value (review5: `tf.constant(x, tf.int32)` raised for 1.0, wrapped 2**31 + 5)
    assert param.default_dtype
    assert any(r.startswith("call sites pass tf.constant(class_index) (") for r in entry.reasons)
    (as202,) = [f for f in entry.findings if f.code == "AS202"]
    assert "planned as tf.constant(class_index) at its call sites" in as202.message


def test_arithmetic_that_may_leave_int32_asks_for_int64() -> None:
    entry = planned("return images * tf.cast(class_index * 1000003, tf.float32)\n")
    assert entry.call_sites is not None and entry.call_sites.params[0].dtype == "int64"


@pytest.mark.parametrize(
    "body, why",
    [
        ("return [images] * class_index\n", "repeats a Python list"),
        ("for _ in range(class_index):\n    images = images + 1\nreturn images\n", "range()"),
        ("return images, class_index\n", "returned as a Python value"),
    ],
)
def test_no_call_site_plan_where_the_code_needs_the_python_value(body: str, why: str) -> None:
    entry = planned(body)
    assert entry.call_sites is None
    assert any(why in r for r in entry.reasons), entry.reasons


def test_not_offered_where_it_removes_no_trace_or_nothing_can_be_found() -> None:
    body = "return images * tf.cast(class_index, tf.float32)\n"
    fresh = planned(body, new_objects=True)
    assert fresh.call_sites is None
    assert any("every retrace came with a new object" in r for r in fresh.reasons)
    old = planned(body, sites=[])
    assert old.call_sites is None
    assert any("re-run autosig profile" in r for r in old.reasons)
    library = planned(body, sites=[CallSite("/venv/keras/x.py", 3, 6, editable=False)])
    assert library.call_sites is None
    assert any("project's own code" in r for r in library.reasons)


def test_stateful_random_draws_make_it_unsafe() -> None:
    entry = planned("noise = tf.random.normal([4, 12])\nreturn images * noise[:, class_index]\n")
    assert entry.call_sites is not None and entry.safety == "unsafe"
    assert "random" in entry.warnings[0]


def test_floats_and_strings_get_their_dtype() -> None:
    floats = planned("return images * class_index\n", values=[0.5, 0.25, 2.0])
    assert floats.call_sites is not None and floats.call_sites.params[0].dtype == "float32"
    strings = planned(
        "return tf.strings.length(class_index) + tf.shape(images)[0]\n", values=["a", "bb"]
    )
    assert strings.call_sites is not None and strings.call_sites.params[0].dtype == "string"


# -- the fix command: PATH decides which files are written -----------------------------------

CLI_MODEL = """\
import tensorflow as tf


@tf.function
def explain(model, images, class_index):
    return images * tf.cast(class_index, tf.float32)
"""

CLI_DRIVER = """\
from model import explain


def main(model, images):
    for c in range(6):
        explain(model, images, c)
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "model.py").write_text(CLI_MODEL)
    (tmp_path / "driver.py").write_text(CLI_DRIVER)
    sites = [
        CallSite("driver.py", 6, 6, col=8, scope="main", scope_line=4, positional=3),
    ]
    record = recorded(CLI_MODEL, list(range(6)), sites=sites)
    save_profile(Profile([record], project_root=str(tmp_path)), tmp_path / "p.json")
    return tmp_path


def run(args: list[str], cwd: Path) -> Any:
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def test_call_sites_outside_path_are_listed_not_written(project: Path) -> None:
    result = run(["fix", "model.py", "--profile", "p.json"], project)
    assert (project / "driver.py").read_text() == CLI_DRIVER
    assert (project / "model.py").read_text() == CLI_MODEL
    assert "call sites not in the files being fixed, not written: driver.py:6 (6 calls)" in (
        result.stderr
    )
    assert "pass tf.constant(class_index) there" in result.stderr
    # nothing passes tensors now: explain's findings are problems left
    assert result.exit_code == 1
    assert "none of its recorded call sites was rewritten" in result.stderr


def test_a_call_site_file_in_path_is_written(project: Path) -> None:
    result = run(["fix", ".", "--profile", "p.json"], project)
    assert result.exit_code == 0, result.stderr
    text = (project / "driver.py").read_text()
    assert "import tensorflow as tf\n" in text
    assert "explain(model, images, tf.constant(c))" in text
    assert "driver.py: fixed: tensors passed at 1 call site of explain" in result.stderr
    assert "Fixed 1 file: 1 call site passing tensors." in result.stderr
    again = run(["fix", ".", "--profile", "p.json", "--diff"], project)
    assert again.exit_code == 0 and again.stdout == ""
    data = json.loads((project / "p.json").read_text())
    assert data["functions"][0]["call_sites"][0]["path"] == "driver.py"


def test_verify_compares_the_called_function_and_counts_its_call_site_fixes() -> None:
    """A call site rewritten in driver.py is a change of explain (model.py): verify
    compares model.py's functions, and names the change among explain's."""
    from autosig.rewrite.engine import AppliedFix
    from autosig.verify.candidate import Candidate

    candidate = Candidate(root=Path("/project"), texts={"driver.py": "..."})
    candidate.applied["driver.py"] = [
        AppliedFix("call_site", "explain", 6, "safe", "passes ...", target="model.py"),
        AppliedFix("AS101", "explain", 9, "safe", "print"),  # a driver.py function
    ]
    assert candidate.compared_paths() == {"driver.py", "model.py"}
    assert [f.code for f in candidate.fixes_for("model.py", "explain")] == ["call_site"]
    assert [f.code for f in candidate.fixes_for("driver.py", "explain")] == ["AS101"]


def test_one_call_reaching_two_functions_that_want_other_dtypes_is_left() -> None:
    """``obj.explain(...)`` recorded for two classes' tf.functions: int32 for one, int64
    for the other; neither is right for both calls, so the argument stays a Python int."""
    text = MODEL.replace("explain(model, images, c))", "model.explain(images, c))")
    where = site(12, 19, positional=2)
    one = plan(where, qualname="A.explain", index=1).functions[0]
    two = plan(where, qualname="B.explain", index=1, dtype="int64").functions[0]
    result = fixed(text, Plan([one, two]))
    assert not result.changed and not result.applied
    assert len([line for line in result.left if "wants another dtype" in line]) == 2
    same = plan(where, qualname="B.explain", index=1).functions[0]
    result = fixed(text, Plan([one, same]))
    assert "model.explain(images, tf.constant(c, tf.int32))" in result.new_text


def test_only_the_calling_file_given_plans_the_function_from_its_file_unwritten(
    project: Path,
) -> None:
    result = run(["fix", "driver.py", "--profile", "p.json"], project)
    assert result.exit_code == 0, result.stderr
    assert "explain(model, images, tf.constant(c))" in (project / "driver.py").read_text()
    assert (project / "model.py").read_text() == CLI_MODEL
    assert "none of its" not in result.stderr  # the profile's root was found


def test_explain_names_the_call_sites_and_the_dtype(project: Path) -> None:
    text = run(["explain", "p.json"], project)
    assert text.exit_code == 0, text.stderr
    assert (
        "fix: autosig fix --profile p.json passes it as tf.constant(class_index) at "
        "its call sites, driver.py:6 (6 calls): every value then shares one trace"
    ) in text.stdout
    assert "rewrites its calls instead (only in the files it fixes)" in text.stdout
    data = json.loads(run(["explain", "p.json", "--format", "json"], project).stdout)
    (function,) = data["functions"]
    plan = function["fix"]["call_sites"]
    assert plan["params"][0]["dtype"] == "int32"
    assert [(s["path"], s["line"], s["calls"]) for s in plan["sites"]] == [("driver.py", 6, 6)]


def test_an_ignore_comment_on_the_function_leaves_its_callers_alone(project: Path) -> None:
    ignored = CLI_MODEL.replace("@tf.function\n", "@tf.function  # autosig: ignore[AS201]\n")
    (project / "model.py").write_text(ignored)
    result = run(["fix", ".", "--profile", "p.json"], project)
    assert (project / "driver.py").read_text() == CLI_DRIVER, result.stderr
    assert "tf.constant" not in result.stderr


# -- a method's seed where its caller makes the instance (``rewrite/instance_seeds.py``) --

CALLER = """\
import tensorflow as tf


def main(mod, images):
    smooth = mod.Smoother(3)
    total = 0.0
    for n, image in enumerate(images):
        total += smooth(image, 0.1 * n)  # the recorded call
    return total
"""


def method_plan(*sites: CallSite, **entry: Any) -> Plan:
    from autosig.infer.guarded_trace import INSTANCES_WHERE
    from autosig.infer.plan import GuardedTrace, ParamPlan
    from autosig.infer.specs import TensorSpecNode

    params = (TensorizedParam("step_size", 1, "float32", "Python float"),)
    specs = (
        ParamPlan("image", TensorSpecNode((None, None, 3), "float32"), ""),
        ParamPlan("step_size", TensorSpecNode((), "float32"), ""),
    )
    sites = sites or (CallSite("d.py", 8, 4, col=17, scope="main", scope_line=4, positional=2),)
    guarded = GuardedTrace("why", INSTANCES_WHERE, ("image", "step_size"), at_instances=True)
    return Plan(
        [
            FunctionPlan(
                path="m.py",
                qualname="Smoother.__call__",
                line=9,
                action="guarded_trace",
                params=specs,
                call_sites=CallSitePlan(None, params, sites),
                guarded=guarded,
                **entry,
            )
        ]
    )


def test_a_methods_seed_follows_the_statement_making_its_instance() -> None:
    result = fixed(CALLER, method_plan(), path="d.py")
    assert result.new_text == CALLER.replace(
        "    smooth = mod.Smoother(3)\n",
        "    smooth = mod.Smoother(3)\n"
        "    try:  # autosig: guarded relaxed trace: other calls trace as before\n"
        "        smooth.__call__.get_concrete_function(\n"
        "            tf.TensorSpec(shape=[None, None, 3], dtype=tf.float32),\n"
        "            tf.TensorSpec(shape=[], dtype=tf.float32),\n"
        "        )\n"
        "    except Exception:  # specs the code cannot trace: nothing seeded\n"
        "        pass\n",
    ).replace("smooth(image, 0.1 * n)", "smooth(image, tf.constant(0.1 * n, tf.float32))")
    assert [(f.code, f.line) for f in result.applied] == [("call_site", 8), ("guarded_trace", 5)]
    again = fixed(result.new_text, method_plan(), path="d.py")
    assert not again.changed and not again.applied, again.left


def test_no_seed_where_the_instance_is_configured_before_the_call() -> None:
    text = CALLER.replace("    total = 0.0\n", "    smooth.strength = 2\n")
    result = fixed(text, method_plan(), path="d.py")
    assert "get_concrete_function" not in result.new_text
    assert any("line 6 uses `smooth` otherwise than calling" in line for line in result.left), (
        result.left
    )


def test_a_profile_recorded_with_the_seed_in_the_file_finds_its_calls() -> None:
    """review7: a fixed program profiled again records lines below the seed as they are;
    they are not moved down by it a second time."""
    seeded = fixed(CALLER, method_plan(), path="d.py").new_text
    text = seeded.replace("    return total\n", "    return total + explain(m, images, 3)\n")
    line = text.splitlines().index("    return total + explain(m, images, 3)") + 1
    sites = (CallSite("d.py", line, 1, col=19, scope="main", scope_line=4, positional=3),)
    result = fixed(text, plan(*sites, path="d.py"), path="d.py")
    assert "explain(m, images, tf.constant(3, tf.int32))" in result.new_text, result.left


def test_a_programs_try_around_a_seed_moves_no_line() -> None:
    """review8 blocks: only the seed's own ``try`` counts, not the program's around it."""
    text = CALLER.replace(
        "    smooth = mod.Smoother(3)\n    total = 0.0\n    for n, image in enumerate(images):\n"
        "        total += smooth(image, 0.1 * n)  # the recorded call\n",
        "    try:\n        smooth = mod.Smoother(3)\n        total = 0.0\n"
        "        for n, image in enumerate(images):\n"
        "            total += smooth(image, 0.1 * n)  # the recorded call\n"
        "    except ValueError:\n        raise\n",
    )
    site = CallSite("d.py", 9, 4, col=21, scope="main", scope_line=4, positional=2)
    first = fixed(text, method_plan(site), path="d.py")
    assert "        try:  # autosig: guarded relaxed trace" in first.new_text, first.left
    again = fixed(first.new_text, method_plan(site), path="d.py")
    assert not again.changed and not again.applied, again.left

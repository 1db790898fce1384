"""``autosig fix``: writes, --diff, --patch-out, exit codes, bad files, profiles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from autosig.cli import cli
from autosig.source.hashing import source_hash_from_file_text

DIRTY = """\
import tensorflow as tf


@tf.function
def step(x):
    print(x)
    return x * 2
"""
FIXED = DIRTY.replace("@tf.function\n", "@tf.function(reduce_retracing=True)\n").replace(
    "    print(x)", "    tf.print(x)"
)
LEFT = """\
import tensorflow as tf


@tf.function(reduce_retracing=True)
def step(x):
    return x.numpy()
"""
"""Nothing to fix, one finding left (AS105 has no automatic fix)."""

BROKEN = "import tensorflow as tf\n\n@tf.function\ndef f(x:\n    return x\n"

TRAIN = """\
import tensorflow as tf


class Model(tf.Module):
    @tf.function(jit_compile=True)
    def step(self, x, lr):
        return x * lr


@tf.function
def other(x, cfg):
    return x
"""


def run(args: list[str], cwd: Path) -> Result:
    """Invoke the CLI in ``cwd`` (paths in diffs and messages are relative to it)."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "dirty.py").write_text(DIRTY)
    (tmp_path / "pkg" / "left.py").write_text(LEFT)
    (tmp_path / "pkg" / "plain.py").write_text("x = 1\n")
    return tmp_path


def test_fix_writes_and_exits_1_when_findings_remain(tree: Path) -> None:
    result = run(["fix", "pkg"], tree)
    assert result.exit_code == 1, result.output
    assert (tree / "pkg" / "dirty.py").read_text() == FIXED
    assert (tree / "pkg" / "left.py").read_text() == LEFT
    assert "pkg/left.py:6:12: AS105" in result.stdout
    assert "pkg/dirty.py: fixed: 2 fixes (AS101, AS107)" in result.stderr
    assert "Fixed 1 file: 2 fixes; 1 problem left" in result.stderr


def test_fix_exits_0_when_everything_is_fixed(tree: Path) -> None:
    result = run(["fix", "pkg/dirty.py"], tree)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    again = run(["fix", "pkg/dirty.py"], tree)
    assert again.exit_code == 0 and "Nothing to fix in 1 file." in again.stderr


def test_diff_prints_and_writes_nothing(tree: Path) -> None:
    result = run(["fix", "pkg", "--diff"], tree)
    assert result.exit_code == 1
    assert (tree / "pkg" / "dirty.py").read_text() == DIRTY
    assert result.stdout.startswith("--- a/pkg/dirty.py\n+++ b/pkg/dirty.py\n@@ ")
    assert "-@tf.function\n+@tf.function(reduce_retracing=True)\n" in result.stdout
    assert "would fix" in result.stderr and "AS105" not in result.stdout
    run(["fix", "pkg"], tree)
    assert run(["fix", "pkg", "--diff"], tree).exit_code == 0  # second --diff: nothing to do


def test_patch_out_then_apply(tree: Path) -> None:
    result = run(["fix", "pkg", "--patch-out", "fixes.patch"], tree)
    assert result.exit_code == 0  # the patch is written: '&& autosig apply' must run
    assert (tree / "pkg" / "dirty.py").read_text() == DIRTY
    assert "Wrote the diff to fixes.patch" in result.stderr
    applied = run(["apply", "fixes.patch"], tree)
    assert applied.exit_code == 0, applied.output
    assert (tree / "pkg" / "dirty.py").read_text() == FIXED


def test_patch_out_with_nothing_to_change_is_empty_and_exits_0(tree: Path) -> None:
    result = run(["fix", "pkg/left.py", "--patch-out", "none.patch"], tree)
    assert result.exit_code == 0
    assert (tree / "none.patch").read_bytes() == b""


def test_bad_file_exit_2_others_still_fixed(tree: Path) -> None:
    (tree / "pkg" / "broken.py").write_text(BROKEN)
    (tree / "pkg" / "latin.py").write_bytes(b"x = '\xe9'  # tf.function\n")
    result = run(["fix", "pkg"], tree)
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert [line.split(":")[0] for line in errors] == ["pkg/broken.py", "pkg/latin.py"]
    assert (tree / "pkg" / "broken.py").read_text() == BROKEN
    assert (tree / "pkg" / "dirty.py").read_text() == FIXED


def test_missing_path_is_exit_2(tree: Path) -> None:
    result = run(["fix", "nope.py"], tree)
    assert result.exit_code == 2 and "nope.py: error: no such file" in result.stderr


def test_select_and_ignore(tree: Path) -> None:
    run(["fix", "pkg/dirty.py", "--select", "AS101"], tree)
    assert "@tf.function\n" in (tree / "pkg" / "dirty.py").read_text()
    assert "tf.print(x)" in (tree / "pkg" / "dirty.py").read_text()
    (tree / "pkg" / "dirty.py").write_text(DIRTY)
    run(["fix", "pkg/dirty.py", "--ignore", "AS101"], tree)
    assert (tree / "pkg" / "dirty.py").read_text() == DIRTY.replace(
        "@tf.function\n", "@tf.function(reduce_retracing=True)\n"
    )


def test_unsafe_fixes_are_named_in_the_summary(tree: Path) -> None:
    source = "import random\nimport tensorflow as tf\n\n@tf.function(reduce_retracing=True)\ndef f(x):\n    return x * random.random()\n"
    (tree / "r.py").write_text(source)
    safe = run(["fix", "r.py", "--diff"], tree)
    assert safe.exit_code == 0 and safe.stdout == ""
    unsafe = run(["fix", "r.py", "--diff", "--unsafe-fixes"], tree)
    assert unsafe.exit_code == 1
    assert "+    return x * tf.random.uniform([])" in unsafe.stdout
    assert "1 unsafe fix (AS102)" in unsafe.stderr
    run(["fix", "r.py", "--unsafe-fixes", "--patch-out", "r.patch"], tree)
    header = (tree / "r.patch").read_text().split("--- a/r.py")[0]
    assert "# r.py: changes: 1 unsafe fix (AS102)" in header
    assert "#   UNSAFE AS102 line 6 in f: random.random()" in header
    assert run(["apply", "r.patch"], tree).exit_code == 0
    assert "tf.random.uniform([])" in (tree / "r.py").read_text()


def test_json_format_lists_what_is_left(tree: Path) -> None:
    result = run(["fix", "pkg/left.py", "--format", "json"], tree)
    assert [f["code"] for f in json.loads(result.stdout)] == ["AS105"]


def test_verify_needs_a_profile(tree: Path) -> None:
    result = run(["fix", "pkg", "--verify"], tree)
    assert result.exit_code == 2 and "--verify needs --profile" in result.stderr
    assert (tree / "pkg" / "dirty.py").read_text() == DIRTY


def test_jobs_gives_the_same_result(tree: Path) -> None:
    for i in range(5):
        (tree / "pkg" / f"d{i}.py").write_text(DIRTY)
    result = run(["fix", "pkg", "-j", "2", "--diff"], tree)
    assert result.exit_code == 1
    assert result.stdout.count("+@tf.function(reduce_retracing=True)") == 6


# -- with a profile --------------------------------------------------------------------------


def tensor(*shape: int) -> dict[str, object]:
    return {"kind": "tensor", "shape": list(shape), "dtype": "float32"}


def write_profile(root: Path, train: str, *, stale: bool = False) -> Path:
    """A hand-written profile: step retraced on shapes and a Python float; other on objects."""

    def sha(qualname: str) -> str:
        lines = train.splitlines()
        start = next(i for i, line in enumerate(lines) if f"def {qualname.split('.')[-1]}(" in line)
        end = start + 1
        return source_hash_from_file_text(train, start + 1, end + 1)

    step_calls = [((32, 17), 0.1), ((32, 20), 0.2), ((32, 24), 0.3)]
    profile = {
        "autosig_profile": 1,
        "project_root": str(root),
        "functions": [
            {
                "path": "src/train.py",
                "qualname": "Model.step",
                "line": 6,
                "source_sha256": "0" * 64 if stale else sha("Model.step"),
                "editable": True,
                "is_method": True,
                "params": [
                    {"name": "x", "kind": "POSITIONAL_OR_KEYWORD"},
                    {"name": "lr", "kind": "POSITIONAL_OR_KEYWORD"},
                ],
                "calls": 3,
                "traces": 3,
                # every call passes elements of a tf.data dataset: the evidence a safe
                # input_signature needs (issue 21; LOOP below)
                "call_sites": [{"path": "src/loop.py", "line": 6, "calls": 3, "col": 4}],
                "signatures": [
                    {
                        "args": {
                            "x": tensor(*shape),
                            "lr": {"kind": "python", "type": "float", "value": lr},
                        },
                        "passed": {"x": "positional", "lr": "positional"},
                        "calls": 1,
                        "traces": 1,
                    }
                    for shape, lr in step_calls
                ],
            },
            {
                "path": "src/train.py",
                "qualname": "other",
                "line": 11,
                "source_sha256": sha("other"),
                "editable": True,
                "params": [
                    {"name": "x", "kind": "POSITIONAL_OR_KEYWORD"},
                    {"name": "cfg", "kind": "POSITIONAL_OR_KEYWORD"},
                ],
                "calls": 2,
                "traces": 2,
                "object_instances": {"cfg": 2},
                "signatures": [
                    {
                        "args": {"x": tensor(4), "cfg": {"kind": "object", "type": "mod.Config"}},
                        "passed": {"x": "positional", "cfg": "positional"},
                        "calls": 2,
                        "traces": 2,
                    }
                ],
            },
            {
                "path": "elsewhere/lib.py",
                "qualname": "helper",
                "line": 3,
                "source_sha256": None,
                "editable": True,
                "params": [{"name": "x", "kind": "POSITIONAL_OR_KEYWORD"}],
                "calls": 2,
                "traces": 2,
                "signatures": [
                    {
                        "args": {"x": tensor(n)},
                        "passed": {"x": "positional"},
                        "calls": 1,
                        "traces": 1,
                    }
                    for n in (1, 2)
                ],
            },
        ],
    }
    path = root / ".autosig" / "profile.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(profile))
    return path


LOOP = """\
import tensorflow as tf
from train import Model
ds = tf.data.Dataset.from_tensor_slices(tf.zeros([96, 17])).batch(32)
m = Model()
for x in ds:
    m.step(x, 0.1)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(TRAIN)
    (tmp_path / "src" / "loop.py").write_text(LOOP)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "lib.py").write_text(
        "import tensorflow as tf\n@tf.function\ndef helper(x):\n    return x\n"
    )
    return tmp_path


def test_profile_end_to_end(project: Path) -> None:
    profile = write_profile(project, TRAIN)
    # run from inside src/: the profile's paths are relative to its project root
    result = run(["fix", "train.py", "--profile", str(profile)], project / "src")
    # `other` varies only in a Python object: reduce_retracing cannot help, so it is left
    assert result.exit_code == 1, result.output
    new = (project / "src" / "train.py").read_text()
    assert new == TRAIN.replace(
        "    @tf.function(jit_compile=True)\n",
        "    @tf.function(jit_compile=True, input_signature=[\n"
        "        tf.TensorSpec(shape=[None, None], dtype=tf.float32),\n"  # method: batch freed
        "        tf.TensorSpec(shape=[], dtype=tf.float32),\n"
        "    ])\n",
    )
    assert "input_signature for Model.step" in result.stderr
    assert "`cfg` is a Python object" in result.stderr
    assert "reduce_retracing=True would not help" in result.stderr
    # profiled code outside the PATH arguments is never written
    assert (
        (project / "elsewhere" / "lib.py")
        .read_text()
        .startswith("import tensorflow as tf\n@tf.function\n")
    )
    again = run(["fix", "train.py", "--profile", str(profile), "--diff"], project / "src")
    assert again.exit_code == 0 and again.stdout == ""


def test_profile_without_profile_codes_selected_is_static_only(project: Path) -> None:
    profile = write_profile(project, TRAIN)
    result = run(["fix", "src", "--profile", str(profile), "--select", "AS1", "--diff"], project)
    assert "input_signature" not in result.stdout
    assert "+@tf.function(reduce_retracing=True)" in result.stdout  # AS107


def test_stale_function_refused_others_fixed(project: Path) -> None:
    profile = write_profile(project, TRAIN, stale=True)
    result = run(["fix", "src", "--profile", str(profile), "--ignore", "AS107"], project)
    assert result.exit_code == 2  # the README: a stale profile is an error
    new = (project / "src" / "train.py").read_text()
    assert "input_signature" not in new
    assert "@tf.function\ndef other" in new  # only an object varies: nothing helps
    said = [line for line in result.stderr.splitlines() if "Model.step" in line]
    assert said == [
        f"src/train.py: error: Model.step changed since {profile} was recorded: not fixed "
        "from the profile (re-run autosig profile)"
    ], result.stderr


def test_bad_profile_is_exit_2_and_nothing_written(project: Path) -> None:
    bad = project / "bad.json"
    bad.write_text("{not json")
    result = run(["fix", "src", "--profile", str(bad)], project)
    assert result.exit_code == 2 and "bad.json: error: corrupt profile" in result.stderr
    assert (project / "src" / "train.py").read_text() == TRAIN


def test_relax_option_is_passed_to_inference(project: Path) -> None:
    profile = write_profile(project, TRAIN)
    fixed = run(["fix", "src", "--profile", str(profile), "--diff"], project)
    assert "tf.TensorSpec(shape=[None, None], dtype=tf.float32)" in fixed.stdout  # auto
    pinned = run(["fix", "src", "--profile", str(profile), "--relax", "none", "--diff"], project)
    assert "input_signature" not in pinned.stdout  # a method's pinned batch: unsafe
    assert "unsafe fix, not applied without --unsafe-fixes" in pinned.stderr
    assert "`x` dimension 0 seen only as 32" in pinned.stderr
    forced = ["--relax", "none", "--unsafe-fixes", "--diff"]
    pinned = run(["fix", "src", "--profile", str(profile), *forced], project)
    assert "tf.TensorSpec(shape=[32, None], dtype=tf.float32)" in pinned.stdout
    relaxed = run(["fix", "src", "--profile", str(profile), "--relax", "batch", "--diff"], project)
    assert relaxed.exit_code == 1
    assert "tf.TensorSpec(shape=[None, None], dtype=tf.float32)" in relaxed.stdout


NO_TF = """
import sys
from autosig.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "keras"))
print("LOADED", loaded, file=sys.stderr)
"""


def test_fix_never_imports_tensorflow_even_with_a_profile(project: Path) -> None:
    profile = write_profile(project, TRAIN)
    for args in (["fix", "src", "--diff"], ["fix", "src", "--profile", str(profile), "--diff"]):
        proc = subprocess.run(
            [sys.executable, "-c", NO_TF, *args],
            cwd=project,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert "+@tf.function" in proc.stdout or "input_signature" in proc.stdout
        assert "LOADED []" in proc.stderr


# -- files skipped as over max-file-size ----------------------------------------------------


def test_a_skipped_file_is_counted_apart_and_annotated(tree: Path) -> None:
    big = DIRTY + "# padding\n" * 20
    (tree / "pkg" / "dirty.py").write_text(big)
    limit = str(len(big) - 1)  # dirty.py is over it, left.py under it
    result = run(["fix", "pkg/dirty.py", "--max-file-size", limit], tree)
    assert result.exit_code == 0, result.output  # a skip is a warning, not an error
    assert (tree / "pkg" / "dirty.py").read_text() == big
    assert result.stderr.splitlines()[-1] == (
        "Nothing to fix in 0 files; 1 file skipped (over the size limit)."
    )
    github = run(["fix", "pkg", "--max-file-size", limit, "--format", "github"], tree)
    assert github.exit_code == 1  # left.py's AS105 remains
    lines = github.stdout.splitlines()
    assert any(line.startswith("::warning file=pkg/left.py,line=6") for line in lines)
    assert [line for line in lines if "title=file skipped" in line] == [
        f"::warning file=pkg/dirty.py,title=file skipped::skipped: {len(big)} bytes is over "
        f"the max-file-size of {limit} bytes (raise it with --max-file-size or the config's "
        "'max-file-size'; 0 = no limit)"
    ]
    assert github.stderr.splitlines()[-1] == (
        "Nothing to fix in 2 files; 1 problem left (see above); 1 file skipped "
        "(over the size limit)."
    )


# -- a selection that leaves fix nothing to run ---------------------------------------------


def test_select_of_profile_codes_needs_a_profile(tree: Path) -> None:
    result = run(["fix", "pkg", "--select", "AS2"], tree)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --select AS2 leaves no rule for autosig fix to run: AS201, AS202, AS203, "
        "AS204 are profile codes (add --profile FILE)\n"
    )
    assert (tree / "pkg" / "dirty.py").read_text() == DIRTY


def test_select_of_verify_codes_is_an_error_even_with_a_profile(project: Path) -> None:
    profile = write_profile(project, TRAIN)
    result = run(["fix", "src", "--profile", str(profile), "--select", "AS301"], project)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: --select AS301 leaves no rule for autosig fix to run: AS301 is a verify code "
        "(use autosig verify)\n"
    )
    assert (project / "src" / "train.py").read_text() == TRAIN


def test_select_of_profile_codes_with_a_profile_signs_only(project: Path) -> None:
    profile = write_profile(project, TRAIN)
    result = run(["fix", "src", "--profile", str(profile), "--select", "AS2", "--diff"], project)
    assert result.exit_code == 1, result.output  # changes to review
    assert "input_signature=[" in result.stdout
    assert "tf.print" not in result.stdout


def test_config_select_of_profile_codes_without_profile_names_the_config(tree: Path) -> None:
    config = tree / "pyproject.toml"
    config.write_text('[tool.autosig]\nselect = ["AS2"]\n')
    result = run(["fix", "pkg"], tree)
    assert result.exit_code == 2
    assert result.stderr.startswith(f'{config}: error: select = ["AS2"] leaves no rule')
    assert (tree / "pkg" / "dirty.py").read_text() == DIRTY


# -- issue 15: suppressions, staleness, deliberate prints, reports of dry runs ----------


def with_trace_events(profile: Path) -> Path:
    """The hand-written profile with one trace event per call of Model.step."""
    data = json.loads(profile.read_text())
    step = data["functions"][0]
    step["trace_events"] = [{"call": n, "signature": n} for n in range(3)]
    for n, signature in enumerate(step["signatures"]):
        signature["first_call"] = n
    profile.write_text(json.dumps(data))
    return profile


def test_ignore_on_the_def_line_is_honoured_by_fix_profile_and_explain(project: Path) -> None:
    profile = with_trace_events(write_profile(project, TRAIN))
    plain = run(["explain", str(profile)], project)
    assert "suppressed" not in plain.stdout and "input_signature" in plain.stdout, plain.stdout
    for comment in ("# autosig: ignore", "# autosig: ignore[AS201]"):
        train = TRAIN.replace("def step(self, x, lr):", f"def step(self, x, lr):  {comment}")
        (project / "src" / "train.py").write_text(train)
        result = run(["fix", "src", "--profile", str(profile), "--diff"], project)
        assert "input_signature" not in result.stdout, (comment, result.stdout)
        assert "changed since" not in result.stderr  # a comment is not a code change
        explained = run(["explain", str(profile)], project)
        assert explained.exit_code == 0, explained.output
        assert "suppressed by '# autosig: ignore' on line 6" in explained.stdout, explained.stdout
    # on the decorator line too
    train = TRAIN.replace(
        "@tf.function(jit_compile=True)", "@tf.function(jit_compile=True)  # autosig: ignore"
    )
    (project / "src" / "train.py").write_text(train)
    result = run(["fix", "src", "--profile", str(profile), "--diff"], project)
    assert "input_signature" not in result.stdout


def test_comments_and_formatting_inside_a_function_keep_its_profile(project: Path) -> None:
    profile = write_profile(project, TRAIN)
    edited = TRAIN.replace(
        "        return x * lr\n",
        "        # scale by the learning rate\n\n        return x   *   lr  # why\n",
    )
    (project / "src" / "train.py").write_text(edited)
    result = run(["fix", "src", "--profile", str(profile), "--diff"], project)
    assert result.exit_code == 1, result.output  # changes to review, no error
    assert "input_signature for Model.step" in result.stderr, result.stderr
    assert "input_signature=[" in result.stdout
    assert "changed since" not in result.stderr


def test_a_print_that_logs_tracing_is_not_a_problem_left(tmp_path: Path) -> None:
    source = (
        "import tensorflow as tf\n\n\n@tf.function(reduce_retracing=True)\ndef step(x):\n"
        '    print("Tracing step")\n    return x * 2\n'
    )
    (tmp_path / "m.py").write_text(source)
    result = run(["fix", "m.py"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "logs tracing on purpose" in result.stdout  # still reported
    assert (tmp_path / "m.py").read_text() == source
    # one count for the summary and the exit code: the print is not a problem left
    assert result.stderr.splitlines()[-1] == (
        "Nothing to fix in 1 file; 1 tracing print kept on purpose."
    )
    # a real problem next to it still exits 1
    (tmp_path / "m.py").write_text(source.replace("return x * 2", "return x.numpy()"))
    both = run(["fix", "m.py"], tmp_path)
    assert both.exit_code == 1
    assert both.stderr.splitlines()[-1] == (
        "Nothing to fix in 1 file; 1 problem left (see above); 1 tracing print kept on purpose."
    )


def test_a_stale_function_is_an_error_not_also_a_problem_left(project: Path) -> None:
    """The summary counts what it lists: three findings, and the stale function as its
    one error line (its static fix, AS107, is unsafe here, so nothing is written)."""
    text = TRAIN.replace(
        "        return x * lr\n", "        return self.w.assign_add(tf.reduce_sum(x)) * lr\n"
    )
    (project / "src" / "train.py").write_text(text)
    profile = write_profile(project, text, stale=True)
    result = run(["fix", "src/train.py", "--profile", str(profile)], project)
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert len(errors) == 1 and "Model.step changed since" in errors[0]
    assert len(result.stdout.splitlines()) == 3  # AS107 of step, AS201 and AS204 of other
    assert result.stderr.splitlines()[-1] == (
        "Nothing to fix in 1 file; 3 problems left (see above); 1 error."
    )


NUMPY_BELOW = TRAIN.replace(
    "def other(x, cfg):\n    return x\n", "def other(x, cfg):\n    return x.numpy()\n"
)


def test_report_lines_of_a_dry_run_point_at_the_file_on_disk(project: Path) -> None:
    (project / "src" / "train.py").write_text(NUMPY_BELOW)
    profile = write_profile(project, NUMPY_BELOW)
    on_disk = NUMPY_BELOW.splitlines().index("    return x.numpy()") + 1
    result = run(["fix", "src", "--profile", str(profile), "--diff", "--format", "json"], project)
    data = json.loads(result.stdout)
    assert "input_signature=[" in data["diff"]  # lines were added above the finding
    lines = [f["line"] for f in data["findings"] if f["code"] == "AS105"]
    assert lines == [on_disk], data["findings"]
    text = run(["fix", "src", "--profile", str(profile), "--patch-out", "p.patch"], project)
    assert f"src/train.py:{on_disk}:" in text.stdout, text.stdout
    summary = run(["fix", "src", "--profile", str(profile), "--diff"], project)
    assert f"  - line {on_disk}: AS105 " in summary.stderr, summary.stderr
    github = run(["fix", "src", "--profile", str(profile), "--diff", "--format", "github"], project)
    assert github.stdout.startswith("--- a/src/train.py")  # stdout stays a patch
    assert f"::warning file=src/train.py,line={on_disk}," in github.stderr, github.stderr


def test_patch_out_that_cannot_be_written_does_not_claim_it_was(tree: Path) -> None:
    (tree / "blocker").write_text("")
    result = run(["fix", "pkg", "--patch-out", "blocker/p.patch"], tree)
    assert result.exit_code == 2
    assert "blocker/p.patch" in result.stderr and "error" in result.stderr
    assert "Wrote" not in result.stderr


def test_readme_patch_out_one_liner_applies_the_fixes(project: Path) -> None:
    """The README's exact command line, run by a shell with the console script."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    line = next(
        raw.split("#")[0].strip()
        for raw in readme.splitlines()
        if raw.startswith("autosig fix")
        and "--patch-out fixes.patch" in raw
        and "&& autosig apply fixes.patch" in raw
    )
    write_profile(project, TRAIN)
    script = Path(sys.executable).parent / "autosig"
    assert script.exists(), "the console script is needed to run the README's line"
    env = {**os.environ, "PATH": f"{script.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-c", line], cwd=project, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "Patched 1 file." in done.stderr
    assert "input_signature=[" in (project / "src" / "train.py").read_text()


def test_fix_dash_reads_stdin_and_writes_the_fixed_source_to_stdout(tmp_path: Path) -> None:
    def fix_stdin(*args: str, data: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "autosig", "fix", "-", *args],
            cwd=tmp_path,
            input=data,
            capture_output=True,
            timeout=120,
        )

    crlf = DIRTY.replace("\n", "\r\n").encode()
    result = fix_stdin(data=crlf)
    assert result.returncode == 0, result.stderr
    assert result.stdout == FIXED.replace("\n", "\r\n").encode()  # line endings kept
    left = fix_stdin(data=LEFT.encode())
    assert (left.returncode, left.stdout) == (1, LEFT.encode())
    assert left.stderr.decode().startswith("-:6:12: AS105 ")
    diff = fix_stdin("--diff", data=DIRTY.encode())
    assert diff.returncode == 1 and diff.stdout.startswith(b"--- a/-\n+++ b/-\n@@ ")
    broken = fix_stdin(data=BROKEN.encode())
    assert broken.returncode == 2 and broken.stdout == BROKEN.encode()  # buffer not lost
    assert b"-: error: does not parse (line 4" in broken.stderr
    assert not list(tmp_path.iterdir())  # nothing written


def test_no_python_files_warns_as_check_does(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = run(["fix", "empty"], tmp_path)
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "warning: no Python files found under the given paths",
        "Nothing to fix in 0 files.",
    ]


def test_a_binary_py_file_is_named_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(b"@tf.function\x00\xff")
    result = run(["fix", "blob.py"], tmp_path)
    assert result.exit_code == 2
    assert "blob.py: error: skipped: binary data, not Python source (a NUL byte at byte 12)" in (
        result.stderr
    )
    assert (tmp_path / "blob.py").read_bytes() == b"@tf.function\x00\xff"


WITHHELD = TRAIN.replace(
    "def other(x, cfg):\n    return x\n", "def other(x, cfg):\n    return x.numpy()\n"
)


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_withheld_file_reports_lines_of_the_file_on_disk(
    project: Path, monkeypatch: pytest.MonkeyPatch, dry_run: bool
) -> None:
    """fix --verify withholds the whole file: its report's lines are the file's own (the
    signature the rewrite added would have moved the .numpy() on line 12 down), nothing
    says it was written, and --diff exits 1: there is something to look at."""
    import autosig.verify.gate as gate

    (project / "src" / "train.py").write_text(WITHHELD)
    profile = write_profile(project, WITHHELD)
    plain = run(["fix", "src/train.py", "--profile", str(profile), "--diff"], project)
    assert "@@ -2,7 +2,10 @@" in plain.stdout  # the rewrite moves the lines below down
    monkeypatch.setattr(
        gate,
        "gate_fixes",
        lambda *a, **k: gate.GateResult(withheld={"src/train.py": "Model.step is not equivalent"}),
    )
    args = ["fix", "src/train.py", "--profile", str(profile), "--verify"]
    result = run([*args, "--diff"] if dry_run else args, project)
    assert result.exit_code == 1, result.output
    assert (project / "src" / "train.py").read_text() == WITHHELD
    assert "written" not in result.stderr.replace("not written", "")
    assert "Nothing to fix in 1 file; verified 0 functions, withheld 1 (verification failed)" in (
        result.stderr
    )
    if dry_run:
        assert result.stdout == ""
        assert "  - line 12: AS105" in result.stderr
    else:
        assert "src/train.py:12:12: AS105" in result.stdout
        assert "src/train.py:11:5: AS204" in result.stdout  # not written: lines as on disk


def test_profile_findings_are_placed_in_the_file_as_written(project: Path) -> None:
    """A written signature moves the functions below it: the report of a write speaks
    of the written file, the report of --diff of the file on disk, for static and profile
    findings alike."""
    (project / "src" / "train.py").write_text(WITHHELD)
    profile = write_profile(project, WITHHELD)
    args = ["fix", "src/train.py", "--profile", str(profile)]
    dry = run([*args, "--diff", "--format", "json"], project)
    assert [(f["code"], f["line"]) for f in json.loads(dry.stdout)["findings"]] == [
        ("AS105", 12),
        ("AS201", 11),
        ("AS204", 11),
    ]
    written = run(args, project)
    lines = (project / "src" / "train.py").read_text().splitlines()
    assert lines[13] == "def other(x, cfg):" and lines[14].endswith("x.numpy()")
    assert "src/train.py:15:12: AS105" in written.stdout
    assert "src/train.py:14:5: AS204" in written.stdout
    assert "  - other (line 14): not fixed:" in written.stderr

"""A path string the function also returns: an unsafe fix, named as such. No TensorFlow.

Only ``tf.io`` uses it, so a ``tf.string`` spec would trace once; but the function
returns it, and callers would get a bytes tensor instead of a ``str``. Plain ``fix``
leaves it (saying why and that it is unsafe), ``fix --unsafe-fixes`` writes it and
names it unsafe in the summary. Real TensorFlow: tests/test_analysis_tf.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner
from infer_helpers import python_only_uses_in_text

from autosig.cli import cli
from autosig.profile.format import CallSignature, FunctionRecord, ParamInfo, Profile, save_profile

PROFILE = ".autosig/profile.json"
MODEL = """\
import tensorflow as tf


@tf.function
def save(x, path):
    tf.io.write_file(path, tf.io.serialize_tensor(x))
    return path


@tf.function
def save_named(x, path):
    tf.io.write_file(path, tf.io.serialize_tensor(x))
    return "saved " + path
"""


def record(qualname: str, line: int) -> FunctionRecord:
    x = {"kind": "tensor", "shape": [3], "dtype": "float32"}
    signatures = [
        CallSignature(
            args={"x": x, "path": {"kind": "python", "type": "str", "value": f"out/{i}.t"}},
            passed={"x": "positional", "path": "positional"},
            calls=1,
        )
        for i in range(3)
    ]
    params = [ParamInfo("x", "POSITIONAL_OR_KEYWORD"), ParamInfo("path", "POSITIONAL_OR_KEYWORD")]
    return FunctionRecord(
        path="model.py",
        qualname=qualname,
        line=line,
        source_sha256=None,
        editable=True,
        params=params,
        calls=3,
        traces=3,
        signatures=signatures,
    )


def fix(tmp_path: Path, *args: str) -> tuple[int, str]:
    (tmp_path / "model.py").write_text(MODEL)
    # a relaxing shape policy set in the config: the user asks for signatures (the evidence of
    # the domain a safe one needs, issue 21); the subject here is the string spec
    (tmp_path / "pyproject.toml").write_text('[tool.autosig]\nrelax = "batch"\n')
    records = [record("save", 5), record("save_named", 11)]
    save_profile(Profile(functions=records, project_root=str(tmp_path)), tmp_path / PROFILE)
    before = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(cli, ["fix", "model.py", "--profile", PROFILE, *args])
    finally:
        os.chdir(before)
    return result.exit_code, result.stderr


def test_returned_path_is_left_without_unsafe_fixes_and_says_why(tmp_path: Path) -> None:
    code, err = fix(tmp_path, "--diff")
    assert code == 0, err  # nothing would change
    (save,) = [line for line in err.splitlines() if "save (line" in line]
    assert "unsafe fix, not applied without --unsafe-fixes" in save
    assert "`path` is returned (`return path`, line 7)" in save
    assert "bytes tensor where it returned a str" in save


def test_unsafe_fixes_write_the_string_spec_and_name_it_unsafe(tmp_path: Path) -> None:
    code, err = fix(tmp_path, "--unsafe-fixes")
    text = (tmp_path / "model.py").read_text()
    save, named = text.split("\n\n\n@tf.function")[1:]
    assert "tf.TensorSpec(shape=[], dtype=tf.string)," in save and "def save(" in save
    assert named.startswith("\ndef save_named(")  # joined into a str: no signature
    assert "model.py: fixed: input_signature for save (unsafe)" in err
    assert "(unsafe: `path` is returned (`return path`, line 7)" in err
    assert "joined into a Python string" in err  # why save_named keeps its Python str
    assert code == 1  # save_named is left


def test_a_helper_returning_the_path_does_not_block_its_caller() -> None:
    src = (
        "import tensorflow as tf\n\n\ndef write(p, x):\n    tf.io.write_file(p, x)\n    return p\n"
        "\n\n@tf.function\ndef f(x, path):\n    write(path, x)\n    return x\n"
    )
    found = python_only_uses_in_text(src, "f", ["path"], ["x"], {"x": "string", "path": "string"})
    assert found["path"] == []
    used = src.replace("    write(path, x)\n    return x", "    return write(path, x)")
    found = python_only_uses_in_text(used, "f", ["path"], ["x"], {"x": "string", "path": "string"})
    assert [u.why for u in found["path"]] == [
        "returned as a Python value: a tf.string spec would make the function return a bytes "
        "tensor where it returned a str"
    ]

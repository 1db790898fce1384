"""The README's promises stay true: its rule table is generated from the rules' own docs,
and its "What it does" block runs, line by line, on a fresh project."""

from __future__ import annotations

from pathlib import Path

import pytest

from autosig.rules.registry import markdown_table

README = Path(__file__).resolve().parent.parent / "README.md"


def test_rule_table_is_generated_from_the_rules() -> None:
    assert markdown_table().strip() in README.read_text(encoding="utf-8")


def test_readme_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    root = README.parent
    assert (root / "scripts" / "demo.sh").exists() and (root / "scripts" / "test.sh").exists()
    assert "scripts/test.sh" in (root / ".ci" / "run").read_text()


# -- the "What it does" block, run as it is ------------------------------------------------

MODEL = """\
import tensorflow as tf


@tf.function
def scale(x):
    return x * 2.0
"""
UNUSED = """\
import tensorflow as tf


@tf.function
def never_called(x):
    return tf.reduce_sum(x)
"""
TRAIN = """\
import tensorflow as tf

from src.model import scale

# elements of a tf.data dataset: the evidence a safe input_signature needs
rows = tf.data.Dataset.range(2, 10).map(lambda n: tf.range(n, dtype=tf.float32))
for x in rows:
    print(float(tf.reduce_sum(scale(x))))
print("TRACES", scale.experimental_get_tracing_count())
"""
EXPECTED_EXIT = {
    "check": 1,  # AS107 findings
    "profile": 0,
    "explain": 0,
    "fix --diff": 1,  # changes to review
    "verify": 0,
    "fix --verify": 1,  # never_called's AS107 is not run by the workload: withheld, left
}


def readme_workflow() -> list[list[str]]:
    """The commands of the README's "What it does" block, comments dropped."""
    text = README.read_text(encoding="utf-8")
    block = text.split("## What it does", 1)[1].split("```", 2)[1]
    import shlex

    return [shlex.split(line.split("  #")[0]) for line in block.strip().splitlines()]


def _kind(args: list[str]) -> str:
    sub = args[1]
    if sub == "fix":
        return "fix --diff" if "--diff" in args else "fix --verify"
    return sub


@pytest.mark.tf
@pytest.mark.slow
def test_the_what_it_does_block_works_top_to_bottom_on_a_fresh_clone(tmp_path: Path) -> None:
    """Each line as the README gives it, in its order, in a fresh git repository; then
    what each step promises: fix --verify writes only what verified (a file the workload
    never runs is not written), the later verify compares the written files with HEAD
    (reusing the stored original run), and .autosig/ stays out of git status."""
    import os
    import subprocess
    import sys

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(MODEL)
    (tmp_path / "src" / "unused.py").write_text(UNUSED)
    (tmp_path / "train.py").write_text(TRAIN)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "clone"]):
        subprocess.run([*git, *args], cwd=tmp_path, check=True)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": str(README.parent)}
    outputs: dict[str, list[subprocess.CompletedProcess[str]]] = {}
    commands = readme_workflow()
    assert [_kind(c) for c in commands] == [
        "check", "profile", "explain", "fix --diff", "verify", "fix --verify", "verify",
    ]  # fmt: skip
    for args in commands:
        assert args[0] == "autosig"
        argv = [
            sys.executable,
            "-m",
            "autosig",
            *[sys.executable if a == "python" else a for a in args[1:]],
        ]
        done = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
        )
        kind = _kind(args)
        assert done.returncode == EXPECTED_EXIT[kind], (
            f"{' '.join(args)}\n{done.stdout}\n{done.stderr}"
        )
        outputs.setdefault(kind, []).append(done)

    before, after = outputs["verify"]
    assert "src/model.py:5: scale [input_signature]: equivalent" in before.stdout, before.stdout
    fixed = outputs["fix --verify"][0].stderr
    assert "verify: verified: src/model.py:5: scale [input_signature]: equivalent" in fixed
    assert (
        "verify: not run: src/unused.py: never_called [AS107]: the workload never called it"
    ) in fixed
    assert "verified 1 function, 1 not run by the workload (not verified, not written)" in fixed
    assert "verify: written" not in fixed
    assert (tmp_path / "src" / "unused.py").read_text() == UNUSED
    assert (
        "input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)]"
        in (tmp_path / "src" / "model.py").read_text()
    )
    # after writing: the files against HEAD, the original run reused
    assert "scale [input_signature]: equivalent" in after.stdout, after.stdout + after.stderr
    assert "traces 8 -> 1" in after.stdout
    assert "verifying them against HEAD (--before HEAD)" in after.stdout
    assert "reused the run stored" in after.stdout
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tmp_path, capture_output=True, text=True
    )
    assert status.stdout == " M src/model.py\n"

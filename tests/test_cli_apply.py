"""``autosig apply``: all or nothing, --dry-run, --root, stdin, exit codes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from autosig.cli import cli
from autosig.rewrite.patch import unified_diff

OLD = "".join(f"x{i} = {i}\n" for i in range(30))
NEW = OLD.replace("x3 = 3\n", "x3 = 33\n").replace("x25 = 25\n", "x25 = 2525\n")


def run(args: list[str], cwd: Path, stdin: bytes | None = None) -> Result:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, args, input=stdin, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(OLD)
    (tmp_path / "src" / "b.py").write_bytes(OLD.replace("\n", "\r\n").encode())
    patch = unified_diff(OLD, NEW, "src/a.py") + unified_diff(
        OLD.replace("\n", "\r\n"), NEW.replace("\n", "\r\n"), "src/b.py"
    )
    (tmp_path / "fixes.patch").write_bytes(patch.encode())
    return tmp_path


def test_apply_writes_every_file(project: Path) -> None:
    result = run(["apply", "fixes.patch"], project)
    assert result.exit_code == 0, result.output
    assert (project / "src" / "a.py").read_text() == NEW
    assert (project / "src" / "b.py").read_bytes() == NEW.replace("\n", "\r\n").encode()
    assert "Patched 2 files." in result.stderr


def test_dry_run_writes_nothing(project: Path) -> None:
    result = run(["apply", "fixes.patch", "--dry-run"], project)
    assert result.exit_code == 0
    assert "Would patch src/a.py" in result.stderr
    assert (project / "src" / "a.py").read_text() == OLD


def test_stale_hunk_exit_2_nothing_written(project: Path) -> None:
    (project / "src" / "b.py").write_bytes(
        OLD.replace("x26 = 26", "x26 = 0").replace("\n", "\r\n").encode()
    )
    result = run(["apply", "fixes.patch"], project)
    assert result.exit_code == 2
    assert "hunk 2 of src/b.py no longer matches (line 23)" in result.stderr
    assert (project / "src" / "a.py").read_text() == OLD


def test_root_option(project: Path) -> None:
    elsewhere = project / "sub"
    elsewhere.mkdir()
    result = run(["apply", "../fixes.patch", "--root", ".."], elsewhere)
    assert result.exit_code == 0, result.output
    assert (project / "src" / "a.py").read_text() == NEW


def test_patch_from_stdin(project: Path) -> None:
    result = run(["apply", "-"], project, stdin=(project / "fixes.patch").read_bytes())
    assert result.exit_code == 0, result.output
    assert (project / "src" / "b.py").read_bytes() == NEW.replace("\n", "\r\n").encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "no such patch file"), (b"", "the patch is empty"), (b"\xff\xfe", "not UTF-8")],
)
def test_bad_patch_files(project: Path, content: bytes | None, message: str) -> None:
    if content is not None:
        (project / "bad.patch").write_bytes(content)
    result = run(["apply", "bad.patch"], project)
    assert result.exit_code == 2 and message in result.stderr
    assert (project / "src" / "a.py").read_text() == OLD


def test_recount_after_adding_a_line_by_hand(project: Path) -> None:
    patch = (project / "fixes.patch").read_bytes()  # bytes: b.py's hunks are CRLF
    (project / "fixes.patch").write_bytes(patch.replace(b"+x3 = 33\n", b"+x3 = 33\n+x3b = 3\n", 1))
    refused = run(["apply", "fixes.patch"], project)
    assert refused.exit_code == 2 and "--recount" in refused.stderr
    applied = run(["apply", "fixes.patch", "--recount"], project)
    assert applied.exit_code == 0, applied.output
    assert (project / "src" / "a.py").read_text() == NEW.replace("x3 = 33\n", "x3 = 33\nx3b = 3\n")


def test_a_file_that_is_no_patch_is_named(project: Path) -> None:
    (project / "bad.py").write_text("x = (\n")
    result = run(["apply", "bad.py"], project)
    assert result.exit_code == 2
    assert result.stderr == (
        "bad.py: error: no file changes found in the patch (is it a unified diff?)\n"
    )

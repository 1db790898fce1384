"""Bad input at the command line: one clear line naming the file, exit 2, the rest done.

Every case runs the real ``check`` / ``fix`` / ``apply`` commands on a small tree with
one bad thing in it next to a good file, and asserts: the bad file is named on one line
of stderr, the exit code is 2 where it is an error, the good file is still checked or
fixed, and nothing is half-written (bad files keep their bytes, no temp files remain).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from autosig.cli import cli
from autosig.profile.format import CallSignature, FunctionRecord, Profile

GOOD = """\
import tensorflow as tf


@tf.function
def step(x):
    print(x)
    return x * 2
"""
GOOD_FIXED = """\
import tensorflow as tf


@tf.function(reduce_retracing=True)
def step(x):
    tf.print(x)
    return x * 2
"""
BROKEN = "import tensorflow as tf\n\n@tf.function\ndef f(x:\n    return x\n"


# -- helpers ---------------------------------------------------------------------------


def run(args: list[str], cwd: Path) -> Result:
    """Run ``autosig ARGS`` in-process in ``cwd`` (display paths are relative to it)."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        os.chdir(old)


def run_process(args: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    return subprocess.run(
        [sys.executable, "-m", "autosig", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        **kwargs,  # type: ignore[arg-type]
    )


def tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    return root


def error_lines(stderr: str, name: str) -> list[str]:
    return [line for line in stderr.splitlines() if name in line and "error" in line]


def assert_one_error(output: str, name: str, *words: str) -> str:
    """Exactly one output line names ``name`` as an error; it contains ``words``.

    ``check`` prints errors with its report on stdout (ruff style), the other commands
    on stderr, so both streams are searched.
    """
    lines = error_lines(output, name)
    assert len(lines) == 1, output
    assert "Traceback" not in output
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def no_temp_files(root: Path) -> None:
    leftovers = [p for p in root.rglob("*") if "autosig-tmp" in p.name]
    assert not leftovers, leftovers


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def deny(monkeypatch: pytest.MonkeyPatch, path: Path, *, read: bool, write: bool) -> None:
    """Make ``path`` unreadable (or its directory unwritable) for this process.

    Tests run as root here, and root ignores permission bits; the venv's Python lives
    under /root, so dropping to another user is not possible either. Non-root runs use
    the real permission bits; root runs make the same system calls fail the same way.
    """
    if os.geteuid() != 0:
        if read:
            path.chmod(0o000)
        if write:
            path.parent.chmod(0o555)
        return
    import pathlib
    import tempfile as tempfile_module

    target = path.resolve()
    if read:
        real_read = pathlib.Path.read_bytes

        def read_bytes(self: Path) -> bytes:
            if self.resolve() == target:
                raise PermissionError(13, "Permission denied", str(self))
            return real_read(self)

        monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    if write:
        real_mkstemp = tempfile_module.mkstemp

        def mkstemp(*args: object, **kwargs: object) -> tuple[int, str]:
            if Path(str(kwargs.get("dir", ""))).resolve() == target.parent:
                raise PermissionError(13, "Permission denied", str(target.parent))
            return real_mkstemp(*args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr(tempfile_module, "mkstemp", mkstemp)


# -- files that are not good Python text -------------------------------------------------


@pytest.mark.parametrize("command", ["check", "fix"])
def test_syntax_error_is_one_line_and_others_are_processed(tmp_path: Path, command: str) -> None:
    tree(tmp_path, {"good.py": GOOD, "bad.py": BROKEN})
    result = run([command, "."], tmp_path)
    assert result.exit_code == 2
    assert_one_error(result.stdout + result.stderr, "bad.py", "does not parse")
    assert (tmp_path / "bad.py").read_text() == BROKEN
    if command == "check":
        assert "good.py:6:5: AS101" in result.stdout
    else:
        assert (tmp_path / "good.py").read_text() == GOOD_FIXED
    no_temp_files(tmp_path)


@pytest.mark.parametrize("command", ["check", "fix"])
def test_non_utf8_bytes_name_the_byte(tmp_path: Path, command: str) -> None:
    raw = GOOD.replace("print(x)", "print('caf\udce9', x)").encode("utf-8", "surrogateescape")
    tree(tmp_path, {"good.py": GOOD, "latin_without_cookie.py": raw})
    result = run([command, "."], tmp_path)
    assert result.exit_code == 2
    where = f"at byte {raw.index(bytes([0xE9]))}"
    assert_one_error(
        result.stdout + result.stderr, "latin_without_cookie.py", "not valid utf-8", where
    )
    assert (tmp_path / "latin_without_cookie.py").read_bytes() == raw
    if command == "fix":
        assert (tmp_path / "good.py").read_text() == GOOD_FIXED


def test_latin1_coding_declaration_is_kept_byte_for_byte(tmp_path: Path) -> None:
    source = "# -*- coding: latin-1 -*-\n" + GOOD.replace("print(x)", "print('café', x)")
    tree(tmp_path, {"latin.py": source.encode("latin-1")})
    check = run(["check", "latin.py"], tmp_path)
    assert check.exit_code == 1 and "AS101" in check.stdout
    fix = run(["fix", "latin.py"], tmp_path)
    assert fix.exit_code == 0, fix.stderr
    data = (tmp_path / "latin.py").read_bytes()
    assert data.startswith(b"# -*- coding: latin-1 -*-\n")
    assert b"tf.print('caf\xe9', x)" in data  # still latin-1, not UTF-8
    assert b"\xc3\xa9" not in data
    compile(data, "latin.py", "exec")


def test_utf8_bom_and_crlf_are_kept(tmp_path: Path) -> None:
    raw = b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode("utf-8")
    tree(tmp_path, {"bom.py": raw})
    result = run(["fix", "bom.py"], tmp_path)
    assert result.exit_code == 0, result.stderr
    data = (tmp_path / "bom.py").read_bytes()
    assert data == b"\xef\xbb\xbf" + GOOD_FIXED.replace("\n", "\r\n").encode("utf-8")
    assert run(["fix", "bom.py", "--diff"], tmp_path).exit_code == 0


def test_mixed_newlines_each_line_keeps_its_own(tmp_path: Path) -> None:
    lines = GOOD.splitlines(keepends=True)
    mixed = "".join(line.replace("\n", "\r\n") if i % 2 else line for i, line in enumerate(lines))
    tree(tmp_path, {"mixed.py": mixed})
    assert run(["fix", "mixed.py"], tmp_path).exit_code == 0
    data = (tmp_path / "mixed.py").read_bytes().decode()
    new_lines = data.splitlines(keepends=True)
    assert len(new_lines) == len(lines)
    for i, (old, new) in enumerate(zip(lines, new_lines, strict=True)):
        ending = "\r\n" if i % 2 else "\n"
        assert new.endswith(ending) and not new.endswith("\r\r\n"), (i, old, new)
        if "print" not in old and "@tf.function" not in old:
            assert new == old.replace("\n", ending)


def test_tab_indentation_is_kept(tmp_path: Path) -> None:
    tree(tmp_path, {"tabs.py": GOOD.replace("    ", "\t")})
    assert run(["fix", "tabs.py"], tmp_path).exit_code == 0
    assert (tmp_path / "tabs.py").read_text() == GOOD_FIXED.replace("    ", "\t")


@pytest.mark.parametrize(
    "content", ["", "\n", "# tf.function in a comment only\n", "\ufeff"], ids=repr
)
def test_empty_and_trivial_files(tmp_path: Path, content: str) -> None:
    tree(tmp_path, {"empty.py": content})
    before = (tmp_path / "empty.py").read_bytes()
    check = run(["check", "empty.py"], tmp_path)
    assert check.exit_code == 0, check.output
    fix = run(["fix", "empty.py"], tmp_path)
    assert fix.exit_code == 0, fix.output
    assert (tmp_path / "empty.py").read_bytes() == before


def test_10mb_file_without_a_tf_function_is_not_parsed(tmp_path: Path) -> None:
    """A 10 MB generated module: read, prefiltered, never parsed (parsing takes minutes)."""
    row = "    (0.123456789, 'a string literal', [1, 2, 3]),\n"
    big = "DATA = [\n" + row * (10 * 1024 * 1024 // len(row)) + "]\n"
    tree(tmp_path, {"big_data.py": big, "good.py": GOOD})
    assert (tmp_path / "big_data.py").stat().st_size >= 10 * 1024 * 1024
    result = run_process(["check", ".", "-j", "1"], tmp_path)
    assert result.returncode == 1, result.stderr
    assert "good.py:6:5: AS101" in result.stdout
    assert "big_data.py" not in result.stdout + result.stderr


# -- paths that are not plain files -------------------------------------------------------


def test_symlink_loops_do_not_hang(tmp_path: Path) -> None:
    tree(tmp_path, {"pkg/good.py": GOOD})
    (tmp_path / "pkg" / "up").symlink_to("..")  # directory loop
    (tmp_path / "pkg" / "a.py").symlink_to("b.py")  # file loop a -> b -> a
    (tmp_path / "pkg" / "b.py").symlink_to("a.py")
    (tmp_path / "pkg" / "self.py").symlink_to("self.py")
    result = run_process(["check", "."], tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.count("good.py:6:5: AS101") == 1  # walked once, not via pkg/up
    named = run_process(["check", "pkg/self.py", "pkg/good.py"], tmp_path)
    assert named.returncode == 2
    assert_one_error(named.stdout + named.stderr, "self.py")
    assert "good.py:6:5: AS101" in named.stdout


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree(tmp_path, {"good.py": GOOD, "secret.py": GOOD})
    deny(monkeypatch, tmp_path / "secret.py", read=True, write=False)
    check = run(["check", "."], tmp_path)
    assert check.exit_code == 2, check.output
    assert_one_error(check.output, "secret.py", "ermission denied")
    assert "good.py:6:5: AS101" in check.stdout
    fix = run(["fix", "."], tmp_path)
    assert fix.exit_code == 2
    assert_one_error(fix.output, "secret.py", "ermission denied")
    assert (tmp_path / "good.py").read_text() == GOOD_FIXED
    monkeypatch.undo()
    (tmp_path / "secret.py").chmod(0o644)
    assert (tmp_path / "secret.py").read_text() == GOOD


def test_read_only_directory_fix_fails_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No temp file can be created next to the file: one error, the file untouched."""
    tree(tmp_path, {"locked/step.py": GOOD, "open/good.py": GOOD})
    deny(monkeypatch, tmp_path / "locked" / "step.py", read=False, write=True)
    result = run(["fix", ".", "-j", "1"], tmp_path)
    monkeypatch.undo()
    (tmp_path / "locked").chmod(0o755)
    assert result.exit_code == 2, result.output
    assert_one_error(result.output, "step.py", "cannot write")
    assert (tmp_path / "locked" / "step.py").read_text() == GOOD
    assert (tmp_path / "open" / "good.py").read_text() == GOOD_FIXED
    no_temp_files(tmp_path)


def test_read_only_file_keeps_its_mode(tmp_path: Path) -> None:
    tree(tmp_path, {"ro.py": GOOD})
    (tmp_path / "ro.py").chmod(0o444)
    result = run(["fix", "ro.py"], tmp_path)
    assert result.exit_code in (0, 2)
    data = (tmp_path / "ro.py").read_text()
    assert data in (GOOD, GOOD_FIXED)  # wholly old (refused) or wholly new
    if result.exit_code == 2:
        assert_one_error(result.stdout + result.stderr, "ro.py")
    assert (tmp_path / "ro.py").stat().st_mode & 0o777 == 0o444
    no_temp_files(tmp_path)


def test_directory_named_like_a_python_file(tmp_path: Path) -> None:
    tree(tmp_path, {"x.py/inner.py": GOOD})
    for args in (["check", "."], ["check", "x.py"]):
        result = run(args, tmp_path)
        assert result.exit_code == 1, result.output
        assert "inner.py:6:5: AS101" in result.stdout
        assert "error" not in result.stderr
    assert run(["fix", "x.py"], tmp_path).exit_code == 0
    assert (tmp_path / "x.py" / "inner.py").read_text() == GOOD_FIXED


def test_missing_path_is_named_and_others_checked(tmp_path: Path) -> None:
    tree(tmp_path, {"good.py": GOOD})
    result = run(["check", "gone.py", "good.py"], tmp_path)
    assert result.exit_code == 2
    assert_one_error(result.stdout + result.stderr, "gone.py", "no such file")
    assert "good.py:6:5: AS101" in result.stdout


@pytest.mark.parametrize("command", ["check", "fix"])
def test_file_deleted_between_walk_and_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """check and fix (one collector) walk first and read later: a file gone by then is
    one error."""
    from autosig.source import collect as collector

    tree(tmp_path, {"good.py": GOOD, "vanishing.py": GOOD})
    real_walk = collector.iter_python_files

    def walk_then_delete(*args: object, **kwargs: object) -> Iterator[object]:
        for item in real_walk(*args, **kwargs):  # type: ignore[arg-type]
            if isinstance(item, Path) and item.name == "vanishing.py":
                item.unlink()
            yield item

    monkeypatch.setattr(collector, "iter_python_files", walk_then_delete)
    result = run([command, ".", *(["--diff"] if command == "fix" else [])], tmp_path)
    assert result.exit_code == 2
    assert_one_error(result.stdout + result.stderr, "vanishing.py", "no such file")
    assert "good.py" in result.stdout


def _fix_with_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hook: object) -> Result:
    """Run ``fix`` inline, calling ``hook(path)`` after each file is fixed, before writing."""
    from autosig.rewrite import batch as fix_command

    real = fix_command.fix_task

    def fix_then_hook(task: object) -> object:
        outcome = real(task)  # type: ignore[arg-type]
        hook(tmp_path / task.display)  # type: ignore[attr-defined,operator]
        return outcome

    monkeypatch.setattr(fix_command, "fix_task", fix_then_hook)
    return run(["fix", ".", "-j", "1"], tmp_path)


def test_file_deleted_during_fix_is_not_recreated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree(tmp_path, {"good.py": GOOD, "vanishing.py": GOOD})

    def delete(path: Path) -> None:
        if path.name == "vanishing.py":
            path.unlink()

    result = _fix_with_hook(tmp_path, monkeypatch, delete)
    assert (tmp_path / "good.py").read_text() == GOOD_FIXED
    assert not (tmp_path / "vanishing.py").exists()
    assert result.exit_code == 2
    assert_one_error(result.stdout + result.stderr, "vanishing.py")


def test_file_edited_during_fix_keeps_the_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree(tmp_path, {"good.py": GOOD, "edited.py": GOOD})
    edited = GOOD + "\n# saved by the user's editor while autosig ran\n"

    def edit(path: Path) -> None:
        if path.name == "edited.py":
            path.write_text(edited)

    result = _fix_with_hook(tmp_path, monkeypatch, edit)
    assert (tmp_path / "good.py").read_text() == GOOD_FIXED
    assert (tmp_path / "edited.py").read_text() == edited
    assert result.exit_code == 2
    assert_one_error(result.stdout + result.stderr, "edited.py", "changed")


# -- profiles ---------------------------------------------------------------------------


def _profile(root: str | None, path: str = "good.py") -> Profile:
    def sig(rows: int) -> CallSignature:
        return CallSignature(
            args={"x": {"kind": "tensor", "shape": [rows, 3], "dtype": "float32"}},
            passed={"x": "positional"},
            calls=1,
            traces=1,
        )

    record = FunctionRecord(
        path=path,
        qualname="step",
        line=5,
        source_sha256="0" * 64,
        editable=True,
        calls=2,
        traces=2,
        signatures=[sig(2), sig(5)],
    )
    return Profile(functions=[record], project_root=root)


def _bad_profiles(root: Path) -> dict[str, tuple[bytes, str]]:
    """name -> (bytes, a word the error line must contain)."""
    good = _profile(str(root)).dumps()
    data = json.loads(good)
    newer = {**data, "autosig_profile": 99}
    bad_type = json.loads(good)
    bad_type["functions"][0]["calls"] = "many"
    return {
        "truncated.json": (good[: len(good) // 2].encode(), "truncated"),
        "garbage.json": (b"\x00\x01 not json at all", "corrupt"),
        "pickle.json": (b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00", "profile"),
        "foreign.json": (b'{"traceEvents": [], "displayTimeUnit": "ms"}', "not an autosig"),
        "list.json": (b"[1, 2, 3]", "not an autosig"),
        "newer.json": (json.dumps(newer).encode(), "newer"),
        "bad_type.json": (json.dumps(bad_type).encode(), "corrupt"),
        "empty.json": (b"", "profile"),
    }


def test_bad_profiles_fix_refuses_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "src"
    tree(src, {"good.py": GOOD})
    before = snapshot(src)
    for name, (content, word) in _bad_profiles(src).items():
        profile = tmp_path / name
        profile.write_bytes(content)
        result = run(["fix", "src", "--profile", str(profile)], tmp_path)
        assert result.exit_code == 2, (name, result.output)
        line = assert_one_error(result.stdout + result.stderr, name)
        assert word in line, (name, line)
        assert snapshot(src) == before, name
    missing = run(["fix", "src", "--profile", "nope.json"], tmp_path)
    assert missing.exit_code == 2
    assert_one_error(missing.stdout + missing.stderr, "nope.json", "no such profile")
    no_temp_files(tmp_path)


def test_bad_profiles_explain_one_line(tmp_path: Path) -> None:
    for name, (content, word) in _bad_profiles(tmp_path).items():
        if name not in ("truncated.json", "pickle.json", "newer.json"):
            continue
        (tmp_path / name).write_bytes(content)
        result = run_process(["explain", name], tmp_path)
        assert result.returncode == 2, (name, result.stderr)
        assert word in assert_one_error(result.stdout + result.stderr, name), name


def test_stale_profile_function_is_refused_rest_fixed(tmp_path: Path) -> None:
    """A profile whose function changed since profiling: that function gets no signature."""
    tree(tmp_path, {"good.py": GOOD})
    (tmp_path / "p.json").write_text(_profile(str(tmp_path)).dumps())
    result = run(["fix", "good.py", "--profile", "p.json"], tmp_path)
    assert "changed since it was profiled" in result.stderr
    assert "input_signature" not in (tmp_path / "good.py").read_text()
    assert (tmp_path / "good.py").read_text() == GOOD_FIXED  # static fixes still made


def test_profile_from_another_project_is_named(tmp_path: Path) -> None:
    tree(tmp_path, {"good.py": GOOD})
    other = _profile("/somewhere/else/project", path="model/train.py")
    (tmp_path / "other.json").write_text(other.dumps())
    result = run(["fix", "good.py", "--profile", "other.json", "--diff"], tmp_path)
    lines = [line for line in result.stderr.splitlines() if "other.json" in line]
    assert len(lines) == 1, result.stderr
    assert "project" in lines[0]


def test_profile_of_a_moved_checkout_still_applies(tmp_path: Path) -> None:
    """A profile whose recorded root no longer exists is matched from its .autosig/ folder."""
    from autosig.profile.format import ParamInfo
    from autosig.source.hashing import source_hash_from_file_text

    tree(tmp_path, {"good.py": GOOD})
    profile = _profile("/checkout/that/moved")
    profile.functions[0].source_sha256 = source_hash_from_file_text(GOOD, 5, 7)
    profile.functions[0].params = [ParamInfo("x", "POSITIONAL_OR_KEYWORD")]
    (tmp_path / ".autosig").mkdir()
    (tmp_path / ".autosig" / "profile.json").write_text(profile.dumps())
    result = run(["fix", "good.py", "--profile", ".autosig/profile.json", "--diff"], tmp_path)
    # 2 calls: a guarded relaxed trace, not a signature (the profile's plan was used);
    # unsafe here: the module creates no tensor at import, the seeding would start TF
    said = result.stdout + result.stderr
    assert "guarded relaxed trace" in said or "first TensorFlow work" in said, said
    assert "warning" not in result.stderr


# -- patches ----------------------------------------------------------------------------


def test_stale_patch_changes_nothing(tmp_path: Path) -> None:
    tree(tmp_path, {"a.py": GOOD, "b.py": GOOD})
    made = run(["fix", ".", "--patch-out", "fix.patch"], tmp_path)
    assert made.exit_code == 0, made.output  # the patch was written
    assert snapshot(tmp_path).keys() >= {"a.py", "b.py", "fix.patch"}
    (tmp_path / "b.py").write_text(GOOD.replace("print(x)", "print(x, 'edited')"))
    before = snapshot(tmp_path)
    result = run(["apply", "fix.patch"], tmp_path)
    assert result.exit_code == 2
    assert_one_error(result.stdout + result.stderr, "b.py")
    assert snapshot(tmp_path) == before  # a.py, whose hunks still match, is not written
    no_temp_files(tmp_path)


@pytest.mark.parametrize(
    "patch",
    [b"", b"not a diff\n", b"\xff\xfe binary", b"--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n"],
    ids=["empty", "text", "binary", "truncated-hunk"],
)
def test_malformed_patch_is_one_line(tmp_path: Path, patch: bytes) -> None:
    tree(tmp_path, {"a.py": GOOD, "bad.patch": patch})
    before = snapshot(tmp_path)
    result = run(["apply", "bad.patch"], tmp_path)
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if "error" in line]
    assert len(errors) == 1, result.stderr
    assert snapshot(tmp_path) == before


# -- concurrency ------------------------------------------------------------------------


def test_two_fix_runs_at_once(tmp_path: Path) -> None:
    """Two ``autosig fix`` on one tree at the same time: every file ends wholly fixed."""
    files = {f"pkg{i % 4}/m{i}.py": GOOD.replace("step", f"step{i}") for i in range(40)}
    tree(tmp_path, files)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "autosig", "fix", ".", "-j", "2"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode in (0, 2), err
        assert "Traceback" not in err
    for name, text in files.items():
        fixed = GOOD_FIXED.replace("step", text.split("def ")[1].split("(")[0])
        assert (tmp_path / name).read_text() == fixed, name
    no_temp_files(tmp_path)
    again = run(["fix", ".", "--diff"], tmp_path)
    assert again.exit_code == 0 and again.stdout == ""


# -- scale ------------------------------------------------------------------------------


def _read_all(fd: int, sink: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        sink.append(chunk)


@pytest.mark.slow
def test_10000_files_finish_and_show_progress_on_a_terminal(tmp_path: Path) -> None:
    """A 10,000-file tree: check finishes, and a terminal on stderr sees a progress bar."""
    import pty
    import threading
    import time

    plain = "def helper_{i}(x):\n    return x + {i}\n"
    for i in range(10_000):
        d = tmp_path / f"pkg{i // 500}"
        if i % 500 == 0:
            d.mkdir()
        text = GOOD.replace("step", f"step{i}") if i % 40 == 0 else plain.format(i=i)
        (d / f"m{i}.py").write_text(text)
    master, slave = pty.openpty()
    sink: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(master, sink), daemon=True)
    reader.start()
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "autosig", "check", ".", "--format", "json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "COLUMNS": "100"},
        timeout=300,
    )
    seconds = time.monotonic() - start
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    terminal = b"".join(sink).decode("utf-8", "replace")
    assert proc.returncode == 1, terminal
    findings = json.loads(proc.stdout)
    assert len({f["path"] for f in findings}) == 250  # every file holding a site
    assert "autosig check" in terminal and "250/250" in terminal, terminal[-500:]
    assert "10000 files" in terminal or "10,000 files" in terminal, terminal[-300:]
    print(f"10,000 files (250 with sites): {seconds:.1f} s; stderr tail: {terminal[-160:]!r}")

"""``autosig check``: formats, exit codes, config, excludes, prefilter, parallelism, progress."""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from autosig.cli import COMMANDS, cli
from autosig.progress import Progress
from autosig.rules.checker import check_paths
from autosig.source.config import Config, load_config

DIRTY = """\
import tensorflow as tf


@tf.function
def step(x):
    print(x)
    return x * 2
"""
"""A print inside a tf.function: AS101 (and AS107, no signature) with the real rules."""

CLEAN = """\
import tensorflow as tf


@tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
def double(x):
    return x * 2
"""

BROKEN = "import tensorflow as tf\n\n@tf.function\ndef f(x:\n    return x\n"
"""Mentions tf.function but does not parse."""

NO_FUNCTION_BROKEN = "def f(:\n    this is not python at all\n"
"""Does not parse either, but cannot hold a tf.function: never parsed, never reported."""

FINDING_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>AS\d{3}) \S.*$")


def run(args: list[str]) -> Result:
    return CliRunner().invoke(cli, ["check", *args])


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def codes(result: Result) -> list[tuple[str, str]]:
    """(file name, code) for each text finding line on stdout."""
    found = []
    for line in result.stdout.splitlines():
        match = FINDING_LINE.match(line)
        if match:
            found.append((Path(match["path"]).name, match["code"]))
    return found


# -- exit codes and formats ---------------------------------------------------------


def test_clean_file_exits_0(tmp_path: Path) -> None:
    make_tree(tmp_path, {"clean.py": CLEAN})
    result = run([str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr.strip() == "No findings in 1 file."


def test_findings_exit_1_ruff_style_text(tmp_path: Path) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY, "clean.py": CLEAN})
    result = run([str(tmp_path)])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines and all(FINDING_LINE.match(line) for line in lines), lines
    assert f"{tmp_path / 'dirty.py'}:6:5: AS101 " in result.stdout
    assert ("clean.py", "AS107") not in codes(result)
    assert re.match(
        r"Found \d+ findings? in 1 of 2 files checked \(\d+ fixable with `autosig fix`",
        result.stderr,
    )


def test_quiet_drops_the_summary(tmp_path: Path) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY})
    result = run(["-q", str(tmp_path)])
    assert result.exit_code == 1 and result.stderr == "" and "AS101" in result.stdout


def test_json_format(tmp_path: Path) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY})
    result = run(["--format", "json", str(tmp_path)])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    as101 = [d for d in data if d["code"] == "AS101"]
    assert len(as101) == 1
    assert set(as101[0]) == {"path", "line", "col", "code", "message", "function", "fixable"}
    assert as101[0]["line"] == 6 and as101[0]["col"] == 5 and as101[0]["function"] == "step"
    assert isinstance(as101[0]["fixable"], bool)


def test_json_clean_is_empty_list(tmp_path: Path) -> None:
    make_tree(tmp_path, {"clean.py": CLEAN})
    result = run(["--output-format", "json", str(tmp_path)])
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def test_sarif_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, {"pkg/dirty.py": DIRTY, "pkg/broken.py": BROKEN})
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--format", "sarif", "pkg"])
    assert result.exit_code == 2
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0" and "sarif-2.1.0" in log["$schema"]
    run_ = log["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "autosig" and driver["informationUri"].startswith("https://")
    rule_ids = [r["id"] for r in driver["rules"]]
    for result_ in run_["results"]:
        assert result_["ruleId"] in rule_ids
        assert rule_ids[result_["ruleIndex"]] == result_["ruleId"]
        loc = result_["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "pkg/dirty.py"
        assert loc["region"]["startLine"] >= 1 and loc["region"]["startColumn"] >= 1
    assert "AS101" in {r["ruleId"] for r in run_["results"]}
    invocation = run_["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "pkg/broken.py" in note["message"]["text"]


def test_github_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY, "broken.py": BROKEN})
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--format", "github", "."])
    assert result.exit_code == 2
    lines = result.stdout.splitlines()
    assert "::warning file=dirty.py,line=6,col=5,title=AS101::AS101 " in "\n".join(lines)
    assert all(line.startswith(("::warning ", "::error ")) for line in lines)
    assert any(line.startswith("::error file=broken.py::does not parse") for line in lines)


def test_output_file(tmp_path: Path) -> None:
    make_tree(tmp_path, {"src/dirty.py": DIRTY})
    target = tmp_path / "out.json"
    result = run(["--format", "json", "-o", str(target), str(tmp_path / "src")])
    assert result.exit_code == 1 and result.stdout == ""
    assert any(d["code"] == "AS101" for d in json.loads(target.read_text()))


# -- errors: exit 2, one line naming the file, other files still checked ----------------


def test_bad_path_is_reported_and_others_still_checked(tmp_path: Path) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY})
    missing = tmp_path / "missing.py"
    result = run([str(missing), str(tmp_path / "dirty.py")])
    assert result.exit_code == 2
    assert f"{missing}: error: no such file or directory" in result.stdout
    assert ("dirty.py", "AS101") in codes(result)
    assert "Traceback" not in result.output


def test_syntax_error_and_good_file_both_reported(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a_broken.py": BROKEN, "b_dirty.py": DIRTY})
    result = run([str(tmp_path)])
    assert result.exit_code == 2  # errors win over findings
    error_lines = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert len(error_lines) == 1
    assert error_lines[0].startswith(f"{tmp_path / 'a_broken.py'}: error: does not parse (line ")
    assert ("b_dirty.py", "AS101") in codes(result)
    assert "1 error" in result.stderr and "Traceback" not in result.output


def test_non_utf8_file_is_an_error(tmp_path: Path) -> None:
    make_tree(tmp_path, {"latin.py": DIRTY.encode() + b"# caf\xe9\n", "dirty.py": DIRTY})
    result = run([str(tmp_path)])
    assert result.exit_code == 2
    (line,) = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert line.startswith(f"{tmp_path / 'latin.py'}: error: not valid utf-8 text at byte")
    assert ("dirty.py", "AS101") in codes(result)


def test_bad_config_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {"pyproject.toml": '[tool.autosig]\nignroe = ["AS101"]\n', "dirty.py": DIRTY},
    )
    result = run([str(tmp_path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.strip() == (
        f"{tmp_path / 'pyproject.toml'}: error: unknown key 'tool.autosig.ignroe'; did you mean "
        "'ignore'? (known: select, ignore, exclude, per-path-ignores, unsafe-fixes, relax, jobs, "
        "functions, max-file-size, max-traces, cache-dir)"
    )


def test_explicit_missing_config(tmp_path: Path) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY})
    result = run(["--config", str(tmp_path / "nope.toml"), str(tmp_path)])
    assert result.exit_code == 2 and "nope.toml: error: config file not found" in result.stderr


def test_bad_select_code_is_a_usage_error(tmp_path: Path) -> None:
    result = run(["--select", "AS101,print", str(tmp_path)])
    assert result.exit_code == 2 and "'print' is not a rule code" in result.stderr


def test_unknown_rule_code_is_a_usage_error(tmp_path: Path) -> None:
    result = run(["--ignore", "AS108", str(tmp_path)])
    assert result.exit_code == 2 and "unknown rule code 'AS108'" in result.stderr


def test_jobs_must_be_positive(tmp_path: Path) -> None:
    result = run(["-j", "0", str(tmp_path)])
    assert result.exit_code == 2 and "0 is not a positive number of processes" in result.stderr


# -- selection, excludes, per-path ignores ------------------------------------------------


def test_select_and_ignore_options(tmp_path: Path) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY})
    everything = {c for _, c in codes(run([str(tmp_path)]))}
    assert {"AS101", "AS107"} <= everything
    assert {c for _, c in codes(run(["--select", "AS101", str(tmp_path)]))} == {"AS101"}
    ignored = {c for _, c in codes(run(["--ignore", "as101", "--ignore", "AS107", str(tmp_path)]))}
    assert ignored == everything - {"AS101", "AS107"}


def test_config_select_and_cli_override(tmp_path: Path) -> None:
    make_tree(tmp_path, {"pyproject.toml": '[tool.autosig]\nselect = ["AS107"]\n', "d.py": DIRTY})
    assert {c for _, c in codes(run([str(tmp_path)]))} == {"AS107"}
    assert {c for _, c in codes(run(["--select", "AS101", str(tmp_path)]))} == {"AS101"}


def test_exclude_option_and_config(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            "src/dirty.py": DIRTY,
            "src/gen/out.py": DIRTY,
            "legacy/old.py": DIRTY,
            "pyproject.toml": '[tool.autosig]\nexclude = ["legacy"]\n',
        },
    )
    result = run([str(tmp_path)])
    assert {name for name, _ in codes(result)} == {"dirty.py", "out.py"}
    result = run(["--exclude", "gen", str(tmp_path)])
    assert {name for name, _ in codes(result)} == {"dirty.py"}
    assert "in 1 of 1 file checked" in result.stderr


def test_config_exclude_is_relative_to_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.autosig]\nexclude = ["src/gen/*"]\n',
            "src/dirty.py": DIRTY,
            "src/gen/out.py": DIRTY,
        },
    )
    monkeypatch.chdir(tmp_path / "src")
    result = CliRunner().invoke(cli, ["check", "."])
    assert {name for name, _ in codes(result)} == {"dirty.py"}


def test_per_path_ignores(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.autosig.per-path-ignores]\n"tests/*" = ["AS101"]\n',
            "src/dirty.py": DIRTY,
            "tests/test_dirty.py": DIRTY,
        },
    )
    found = codes(run([str(tmp_path)]))
    assert ("dirty.py", "AS101") in found
    assert ("test_dirty.py", "AS101") not in found
    assert ("test_dirty.py", "AS107") in found


# -- prefilter, parallelism, determinism -----------------------------------------------------


def test_prefilter_never_parses_files_without_function(tmp_path: Path) -> None:
    make_tree(tmp_path, {"notes.py": NO_FUNCTION_BROKEN, "clean.py": CLEAN})
    result = run([str(tmp_path)])
    assert result.exit_code == 0, result.output  # the broken file was never parsed
    assert result.stderr.strip() == "No findings in 2 files."
    outcome = check_paths([tmp_path], Config(root=tmp_path), jobs=1)
    assert (outcome.files_seen, outcome.files_parsed) == (2, 1)
    # The same text with a tf.function mention is parsed, and fails.
    (tmp_path / "notes.py").write_text("# uses tf.function\n" + NO_FUNCTION_BROKEN)
    assert run([str(tmp_path)]).exit_code == 2


def many_files(root: Path, n: int = 12) -> Path:
    files: dict[str, str | bytes] = {}
    for i in range(n):
        files[f"pkg{i % 3}/m{i:02d}.py"] = DIRTY if i % 2 else CLEAN
    files["pkg1/zz_broken.py"] = BROKEN
    return make_tree(root, files)


def test_jobs_2_same_output_as_jobs_1(tmp_path: Path) -> None:
    many_files(tmp_path)
    one = run(["-j", "1", str(tmp_path)])
    two = run(["-j", "2", str(tmp_path)])
    assert one.exit_code == two.exit_code == 2
    assert one.stdout == two.stdout and one.stderr == two.stderr
    lines = [line for line in one.stdout.splitlines() if FINDING_LINE.match(line)]
    keys = []
    for line in lines:
        m = FINDING_LINE.match(line)
        assert m
        keys.append((m["path"], int(m["line"]), int(m["col"])))
    assert keys == sorted(keys) and len(lines) >= 12


def test_jobs_2_really_uses_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many_files(tmp_path)
    pools: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor  # imported by the checker only for a pool

    def counting(max_workers: int) -> object:
        pools.append(max_workers)
        return real(max_workers=max_workers)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", counting)
    parallel = check_paths([tmp_path], Config(root=tmp_path), jobs=2)
    assert pools == [2]
    inline = check_paths([tmp_path], Config(root=tmp_path), jobs=1)
    assert pools == [2]
    assert parallel.findings == inline.findings
    assert [str(e) for e in parallel.errors] == [str(e) for e in inline.errors]
    assert parallel.files_parsed == 13


def test_a_dying_worker_pool_finishes_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker killed mid-run (OOM, segfault) must not lose or duplicate any file."""
    many_files(tmp_path)

    class DiesAfterTwo:
        def __init__(self, max_workers: int) -> None:
            pass

        def __enter__(self) -> DiesAfterTwo:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def map(self, fn, tasks, chunksize=1):  # noqa: ANN001, ANN201
            for task in list(tasks)[:2]:
                yield fn(task)
            raise concurrent.futures.process.BrokenProcessPool("a worker died")

    inline = check_paths([tmp_path], Config(root=tmp_path), jobs=1)
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", DiesAfterTwo)
    recovered = check_paths([tmp_path], Config(root=tmp_path), jobs=2)
    assert recovered.findings == inline.findings
    assert [str(e) for e in recovered.errors] == [str(e) for e in inline.errors]


def test_few_files_run_inline_even_with_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY})
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", None)  # would crash if used
    assert check_paths([tmp_path], load_config([tmp_path]), jobs=8).findings


def test_a_crashing_rule_is_one_error_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree(tmp_path, {"a.py": DIRTY, "b.py": DIRTY})
    import autosig.rules.run as rules_run

    real = rules_run.check_text

    def flaky(text: str, path: str, select=None, ignore=None):  # noqa: ANN001, ANN202
        if path.endswith("a.py"):
            raise ValueError("boom")
        return real(text, path, select=select, ignore=ignore)

    monkeypatch.setattr(rules_run, "check_text", flaky)
    outcome = check_paths([tmp_path], Config(root=tmp_path), jobs=1)
    (error,) = outcome.errors
    assert error.path and error.path.endswith("a.py") and "ValueError: boom" in str(error)
    assert {Path(f.path).name for f in outcome.findings} == {"b.py"}


# -- progress -----------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_silent_when_not_a_terminal() -> None:
    stream = io.StringIO()
    with Progress(10, "x", delay=0.0, file=stream) as bar:
        for _ in range(10):
            bar.advance()
        assert not bar.shown
    assert stream.getvalue() == ""


def test_progress_silent_for_short_work_on_a_terminal() -> None:
    stream = FakeTerminal()
    with Progress(10, "x", delay=60.0, file=stream) as bar:
        for _ in range(10):
            bar.advance()
    assert stream.getvalue() == ""


def test_progress_shown_for_slow_work_on_a_terminal() -> None:
    stream = FakeTerminal()
    with Progress(10, "checking", delay=0.0, file=stream) as bar:
        for _ in range(5):
            bar.advance()
        assert bar.shown
    assert "checking" in stream.getvalue()


def test_progress_can_be_disabled() -> None:
    stream = FakeTerminal()
    with Progress(10, "x", delay=0.0, file=stream, enabled=False) as bar:
        bar.advance(5)
    assert stream.getvalue() == ""


# -- help and a real process ------------------------------------------------------------------


def test_help_has_examples_and_exit_codes() -> None:
    result = CliRunner().invoke(cli, ["check", "--help"])
    assert result.exit_code == 0
    for needle in (
        "--format",
        "--jobs",
        "--exclude",
        "--select",
        "--config",
        "Examples:",
        "Exit codes",
    ):
        assert needle in result.stdout


def test_no_python_files_warns(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("tf.function\n")
    result = run([str(tmp_path)])
    assert result.exit_code == 0
    assert "warning: no Python files found" in result.stderr


def test_pre_commit_hooks_run_real_commands() -> None:
    yaml = pytest.importorskip("yaml")
    hooks_file = Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml"
    hooks = {h["id"]: h for h in yaml.safe_load(hooks_file.read_text())}
    assert set(hooks) == {"autosig-check", "autosig-fix"}
    for hook in hooks.values():
        program, subcommand = hook["entry"].split()
        assert program == "autosig" and subcommand in COMMANDS
        assert hook["language"] == "python" and hook["types"] == ["python"]


def test_real_subprocess(tmp_path: Path) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY, "clean.py": CLEAN})
    proc = subprocess.run(
        [sys.executable, "-m", "autosig", "check", "--format", "json", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert {(d["path"], d["code"]) for d in data} >= {("dirty.py", "AS101")}
    assert proc.stderr.startswith("Found ")
    clean = subprocess.run(
        [sys.executable, "-m", "autosig", "check", "clean.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert clean.returncode == 0 and clean.stdout == ""


# -- files skipped as over max-file-size ----------------------------------------------------


def test_a_skipped_file_is_counted_apart_in_the_summary(tmp_path: Path) -> None:
    big = DIRTY + "# padding\n" * 20
    make_tree(tmp_path, {"big.py": big, "clean.py": CLEAN})
    limit = str(len(big) - 1)
    result = run(["--max-file-size", limit, str(tmp_path / "big.py")])
    assert result.exit_code == 0, result.output  # documented: a skip does not change it
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "No findings in 0 files; 1 file skipped (over the size limit)."
    )
    both = run(["--max-file-size", limit, str(tmp_path)])
    assert both.stderr.splitlines()[-1] == (
        "No findings in 1 file; 1 file skipped (over the size limit)."
    )
    quiet = run(["-q", "--max-file-size", limit, str(tmp_path)])
    assert len(quiet.stderr.splitlines()) == 1 and "big.py: warning: skipped" in quiet.stderr


def test_a_skipped_file_shows_in_sarif_and_github(tmp_path: Path) -> None:
    make_tree(tmp_path, {"big.py": DIRTY, "small.py": DIRTY.replace("step", "s")})
    big = tmp_path / "big.py"
    args = ["--max-file-size", str(len(DIRTY) - 1), str(big), str(tmp_path / "small.py")]
    sarif = json.loads(run(["--format", "sarif", *args]).stdout)
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is True  # a skip is a warning, not a failure
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "warning" and "skipped" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == big.as_uri()
    assert note["properties"] == {"skipped": True, "size": len(DIRTY), "limit": len(DIRTY) - 1}
    assert sarif["runs"][0]["results"]  # small.py was still checked
    github = run(["--format", "github", *args])
    assert github.exit_code == 1
    skip_lines = [line for line in github.stdout.splitlines() if "title=file skipped" in line]
    assert len(skip_lines) == 1
    assert skip_lines[0].startswith(f"::warning file={big},title=file skipped::skipped: ")
    # json stays a list of findings; the skip is on stderr and in the summary
    as_json = run(["--format", "json", *args])
    assert isinstance(json.loads(as_json.stdout), list)
    assert "1 file skipped" in as_json.stderr and "big.py: warning: skipped" in as_json.stderr


# -- a selection that leaves check nothing to run -------------------------------------------


@pytest.mark.parametrize(
    ("select", "why"),
    [
        ("AS301", "AS301 is a verify code (use autosig verify)"),
        ("AS3", "AS301, AS302 are verify codes (use autosig verify)"),
        ("AS2", "AS201, AS202, AS203, AS204 are profile codes (use autosig fix --profile FILE)"),
    ],
)
def test_select_of_only_non_static_codes_is_an_error(tmp_path: Path, select: str, why: str) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY})
    result = run(["--select", select, str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: --select {select} leaves no rule for autosig check to run: {why}\n"
    )
    assert result.stdout == ""


def test_select_with_some_static_code_still_runs(tmp_path: Path) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY})
    result = run(["--select", "AS101,AS3", str(tmp_path)])
    assert result.exit_code == 1 and codes(result) == [("dirty.py", "AS101")]


def test_select_whose_static_codes_are_all_ignored_is_an_error(tmp_path: Path) -> None:
    make_tree(tmp_path, {"dirty.py": DIRTY})
    result = run(["--select", "AS101,AS2", "--ignore", "AS1", str(tmp_path)])
    assert result.exit_code == 2
    assert "AS101 is ignored" in result.stderr and "profile codes" in result.stderr
    everything = run(["--ignore", "ALL", str(tmp_path)])
    assert everything.exit_code == 2
    assert everything.stderr == "error: --ignore ALL ignores every rule autosig check runs\n"


def test_config_select_of_only_verify_codes_names_the_config(tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    make_tree(tmp_path, {"pyproject.toml": '[tool.autosig]\nselect = ["AS3"]\n', "d.py": DIRTY})
    result = run([str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f'{config}: error: select = ["AS3"] leaves no rule for autosig check to run: '
        "AS301, AS302 are verify codes (use autosig verify)\n"
    )
    # --select replaces the config's selection, so it can still run check
    assert codes(run(["--select", "AS101", str(tmp_path)])) == [("d.py", "AS101")]


# -- issue 15: no PATH, stdin, Python's syntax error messages ------------------------------


def run_in(cwd: Path, args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autosig", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def test_check_without_a_path_checks_the_current_directory(tmp_path: Path) -> None:
    make_tree(tmp_path, {"sub/dirty.py": DIRTY, "clean.py": CLEAN})
    result = run_in(tmp_path, ["check"])
    assert result.returncode == 1, result.stderr
    assert b"sub/dirty.py:6:5: AS101 " in result.stdout
    assert b"in 1 of 2 files checked" in result.stderr


def test_check_dash_reads_stdin_and_reports_it_as_dash(tmp_path: Path) -> None:
    result = run_in(tmp_path, ["check", "-", "--select", "AS101"], stdin=DIRTY.encode())
    assert result.returncode == 1, result.stderr
    assert result.stdout.decode().splitlines() == [
        "-:6:5: AS101 print() in tf.function `step` runs only while it is traced, not on every "
        "call; use tf.print to print each call's values"
    ]
    clean = run_in(tmp_path, ["check", "-"], stdin=CLEAN.encode())
    assert (clean.returncode, clean.stdout) == (0, b"")
    mixed = run_in(tmp_path, ["check", "-", "."], stdin=b"")
    assert mixed.returncode == 2 and b"'-' (stdin) must be the only PATH" in mixed.stderr


def test_syntax_error_is_said_as_python_says_it(tmp_path: Path) -> None:
    source = 'import tensorflow as tf\n\n@tf.function\ndef f(x):\n    print("x"\n    return x\n'
    make_tree(tmp_path, {"bad.py": source})
    result = run([str(tmp_path / "bad.py")])
    assert result.exit_code == 2
    assert result.stdout == (
        f"{tmp_path / 'bad.py'}: error: does not parse (line 5, column 10): '(' was never closed\n"
    )


def test_summary_counts_files_with_findings_apart_from_files_checked(tmp_path: Path) -> None:
    make_tree(tmp_path, {"a.py": DIRTY, "b.py": DIRTY, "c.py": CLEAN, "d.py": "x = 1\n"})
    result = run([str(tmp_path)])
    assert re.match(r"Found 4 findings in 2 of 4 files checked \(", result.stderr), result.stderr


def test_a_binary_py_file_is_an_error_naming_it_and_the_rest_is_checked(tmp_path: Path) -> None:
    """Python refuses a NUL byte in source: such a file is not skipped silently."""
    make_tree(tmp_path, {"blob.py": b"import tensorflow\x00\x01\xff", "model.py": DIRTY})
    result = run([str(tmp_path)])
    assert result.exit_code == 2
    assert (
        f"{tmp_path / 'blob.py'}: error: skipped: binary data, not Python source "
        "(a NUL byte at byte 17)\n"
    ) in result.output
    assert "AS101" in result.stdout  # model.py still checked

"""The result cache of ``autosig check``: same findings with and without it, nothing parsed
on a re-check of unchanged files, and every input of a result invalidating it (the
file's bytes, the config, the selected rules, a project module the analysis followed,
the project files AS106's per-instance cache asked, autosig's own code)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from autosig.cli import cli
from autosig.rules import check_cache as result_cache
from autosig.rules import run as rules_run
from autosig.rules.check_cache import CACHE_DIR_NAME, ResultCache, package_fingerprint

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

PRINTS = """\
import tensorflow as tf


@tf.function
def step(x):
    print(x)
    return x * 2
"""

USES_HELPER = """\
import tensorflow as tf

from helpers import pool


@tf.function
def step(x):
    return pool(x) * 2
"""

HELPER_MEAN = "import tensorflow as tf\n\n\ndef pool(x):\n    return tf.reduce_mean(x, axis=0)\n"
HELPER_STATIC = (
    "import tensorflow as tf\n\n\ndef pool(x):\n    return tf.reshape(x, [x.shape[0], -1])\n"
)

PREDICTOR = """\
import tensorflow as tf


class Predictor:
    def __init__(self, scale):
        self.scale = scale

    def predict(self, x):
        @tf.function
        def step(x):
            return x * self.scale

        return step(x)
"""


def run(args: list[str], cwd: Path) -> Result:
    """``autosig check ARGS`` in-process in ``cwd``, inline (so parses can be counted)."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["check", "-j", "1", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``check_text`` parses (each call is one file parsed)."""
    seen: list[str] = []
    real = rules_run.check_text

    def counting(text: str, path: str, select=None, ignore=None):  # noqa: ANN001, ANN202
        seen.append(Path(path).name)
        return real(text, path, select=select, ignore=ignore)

    monkeypatch.setattr(rules_run, "check_text", counting)
    return seen


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project (``pyproject.toml``) with the cache inside it: ``.autosig_cache``."""
    os.environ.pop(result_cache.ENV_CACHE_DIR, None)  # the fixture in conftest restores it
    (tmp_path / "pyproject.toml").write_text("[tool.autosig]\n")
    return tmp_path


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def golden_tree(root: Path) -> None:
    """Every golden case's model, hand fix and driver: many rules, fixes and findings."""
    for case in sorted(GOLDEN.iterdir()):
        for source in sorted(case.glob("*.py")):
            target = root / case.name / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


# -- same findings, nothing parsed -------------------------------------------------------


def test_findings_are_identical_with_and_without_the_cache(project: Path, parses: list[str]):
    golden_tree(project)
    write(project, {"broken.py": "import tensorflow as tf\n@tf.function\ndef f(x:\n"})
    formats = ("text", "json", "sarif", "github")
    without = {f: run(["--no-cache", "--format", f, "."], project) for f in formats}
    assert not (project / CACHE_DIR_NAME).exists()  # --no-cache writes nothing
    parsed_without = len(parses)
    cold = {f: run(["--format", f, "."], project) for f in formats}
    warm = {f: run(["--format", f, "."], project) for f in formats}
    for f in formats:
        assert without[f].exit_code == cold[f].exit_code == warm[f].exit_code == 2
        assert without[f].stdout == cold[f].stdout == warm[f].stdout, f
        assert without[f].stderr == cold[f].stderr == warm[f].stderr, f
    assert "AS101" in warm["text"].stdout and "broken.py: error" in warm["text"].stdout
    # Only the first cached run parses (each file once); the other formats and runs, none.
    assert len(parses) == parsed_without + parsed_without // len(formats)


def test_a_recheck_of_an_unchanged_tree_parses_nothing(project: Path, parses: list[str]):
    write(project, {"a.py": PRINTS, "b.py": USES_HELPER, "helpers.py": HELPER_STATIC})
    first = run(["."], project)
    assert sorted(parses) == ["a.py", "b.py"]
    parses.clear()
    again = run(["."], project)
    assert parses == []
    assert (again.exit_code, again.stdout, again.stderr) == (
        first.exit_code,
        first.stdout,
        first.stderr,
    )


def test_worker_processes_fill_and_read_the_same_cache(project: Path) -> None:
    """Results (and what they read) come back from worker processes and are stored."""
    write(project, {f"m{i}.py": PRINTS for i in range(6)})
    write(project, {"b.py": USES_HELPER, "helpers.py": HELPER_STATIC})
    parallel = run(["-j", "2", "."], project)
    entries = list((project / CACHE_DIR_NAME).glob("*/*.json"))
    assert len(entries) == 7
    helper = [e for e in entries if json.loads(e.read_text())["path"].endswith("b.py")]
    assert json.loads(helper[0].read_text())["dependencies"]
    inline = run(["--no-cache", "."], project)
    assert parallel.stdout == inline.stdout


# -- what invalidates an entry -----------------------------------------------------------


def test_a_changed_file_is_parsed_again(project: Path, parses: list[str]) -> None:
    write(project, {"a.py": PRINTS, "b.py": PRINTS})
    run(["."], project)
    parses.clear()
    write(project, {"a.py": PRINTS.replace("print(x)", "print(x, x)")})
    result = run(["."], project)
    assert parses == ["a.py"]
    assert "a.py:6:5: AS101" in result.stdout


def test_config_and_selected_rules_are_part_of_the_key(project: Path, parses: list[str]):
    write(project, {"a.py": PRINTS})
    assert "AS101" in run(["."], project).stdout
    parses.clear()
    only_107 = run(["--select", "AS107", "."], project)
    assert parses == ["a.py"] and "AS101" not in only_107.stdout
    write(project, {"pyproject.toml": '[tool.autosig]\nignore = ["AS107"]\n'})
    parses.clear()
    ignored = run(["."], project)
    assert parses == ["a.py"] and "AS107" not in ignored.stdout and "AS101" in ignored.stdout
    write(project, {"pyproject.toml": '[tool.autosig.per-path-ignores]\n"a.py" = ["AS101"]\n'})
    parses.clear()
    per_path = run(["."], project)
    assert parses == ["a.py"] and "AS101" not in per_path.stdout and "AS107" in per_path.stdout
    parses.clear()
    assert run(["."], project).stdout == per_path.stdout
    assert parses == []


def test_a_project_module_the_analysis_followed_invalidates_it(project: Path, parses):
    """AS107's fix safety depends on what ``helpers.pool`` reads of its argument."""
    write(project, {"model.py": USES_HELPER, "helpers.py": HELPER_MEAN})
    safe = run(["model.py"], project)
    assert "1 fixable" in safe.stderr
    write(project, {"helpers.py": HELPER_STATIC})
    parses.clear()
    unsafe = run(["model.py"], project)
    assert parses == ["model.py"]
    assert "x.shape[0]" in unsafe.stdout and "0 fixable" in unsafe.stderr
    assert run(["--no-cache", "model.py"], project).stdout == unsafe.stdout


def test_a_project_module_appearing_later_invalidates_it(project: Path, parses) -> None:
    """A module that was not there (so not followed) is looked for again."""
    write(project, {"model.py": USES_HELPER})
    run(["model.py"], project)
    write(project, {"helpers.py": HELPER_STATIC})
    parses.clear()
    result = run(["model.py"], project)
    assert parses == ["model.py"] and "x.shape[0]" in result.stdout


def test_another_file_writing_an_attribute_invalidates_as106(project: Path, parses) -> None:
    """AS106's per-instance cache is safe only while no other project file may rebind
    what its trace reads."""
    write(project, {"model.py": PREDICTOR, "train.py": "from model import Predictor\n"})
    safe = run(["model.py"], project)
    assert "may change" not in safe.stdout
    write(project, {"train.py": "from model import Predictor\np = Predictor(1.0)\np.scale = 3.0\n"})
    parses.clear()
    unsafe = run(["model.py"], project)
    assert parses == ["model.py"]
    assert "train.py:3 may change" in unsafe.stdout
    assert run(["--no-cache", "model.py"], project).stdout == unsafe.stdout
    parses.clear()
    run(["model.py"], project)
    assert parses == []


def test_another_autosig_never_reads_the_entries(
    project: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, {"a.py": PRINTS})
    run(["."], project)
    (old,) = (project / CACHE_DIR_NAME).glob("*/")
    monkeypatch.setattr(result_cache, "code_fingerprint", lambda: "f" * 64)
    parses.clear()
    run(["."], project)
    assert parses == ["a.py"]
    assert not old.exists()  # the other version's entries are removed
    assert [p.name for p in (project / CACHE_DIR_NAME).glob("*/")] == ["0.1.0-ffffffffffffffff"]


def test_any_change_to_autosig_s_source_changes_the_fingerprint(tmp_path: Path) -> None:
    """An editable install's edit counts, not only a new version number."""
    package = Path(result_cache.__file__).resolve().parent.parent
    copy = tmp_path / "autosig"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = package_fingerprint(copy)
    assert package_fingerprint(copy) == before
    rule = copy / "rules" / "as101_print.py"
    rule.write_text(rule.read_text() + "\n# an edit\n")
    edited = package_fingerprint(copy)
    assert edited != before
    (copy / "rules" / "new_rule.py").write_text("")
    assert package_fingerprint(copy) != edited


# -- where it lives, and damage -----------------------------------------------------------


def test_the_cache_lives_in_the_project_and_ignores_itself(project: Path) -> None:
    write(project, {"src/a.py": PRINTS})
    run(["src"], project)
    folder = project / CACHE_DIR_NAME
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=project,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert CACHE_DIR_NAME not in status


def test_cache_dir_option_environment_and_config(project: Path, tmp_path_factory) -> None:
    write(project, {"a.py": PRINTS})
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    run(["--cache-dir", str(elsewhere / "c"), "."], project)
    assert list((elsewhere / "c").glob("*/*.json")) and not (project / CACHE_DIR_NAME).exists()
    write(project, {"pyproject.toml": '[tool.autosig]\ncache-dir = "build/autosig"\n'})
    run(["."], project)
    assert list((project / "build" / "autosig").glob("*/*.json"))
    os.environ[result_cache.ENV_CACHE_DIR] = str(elsewhere / "env")
    run(["."], project)
    assert list((elsewhere / "env").glob("*/*.json"))


def test_a_damaged_entry_is_a_miss_not_an_error(project: Path, parses: list[str]) -> None:
    write(project, {"a.py": PRINTS})
    first = run(["."], project)
    for entry in (project / CACHE_DIR_NAME).glob("*/*.json"):
        entry.write_text('{"format": 1, "source": "')
    parses.clear()
    again = run(["."], project)
    assert parses == ["a.py"] and again.stdout == first.stdout
    for entry in (project / CACHE_DIR_NAME).glob("*/*.json"):
        data = json.loads(entry.read_text())
        data["findings"] = [{"nonsense": 1}]
        entry.write_text(json.dumps(data))
    parses.clear()
    assert run(["."], project).stdout == first.stdout and parses == ["a.py"]


def test_an_unwritable_cache_folder_is_no_cache(project: Path) -> None:
    write(project, {"a.py": PRINTS})
    (project / CACHE_DIR_NAME).write_text("a file where the folder would be")
    result = run(["."], project)
    assert result.exit_code == 1 and "AS101" in result.stdout


def test_internal_errors_are_not_cached(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    write(project, {"a.py": PRINTS})

    def broken(text: str, path: str, select=None, ignore=None):  # noqa: ANN001, ANN202
        raise ValueError("boom")

    monkeypatch.setattr(rules_run, "check_text", broken)
    assert "internal error" in run(["."], project).stdout
    monkeypatch.undo()
    assert "AS101" in run(["."], project).stdout


def test_stdin_is_cached_by_content(project: Path) -> None:
    old = Path.cwd()
    os.chdir(project)
    try:
        first = CliRunner().invoke(cli, ["check", "-"], input=PRINTS)
        again = CliRunner().invoke(cli, ["check", "-"], input=PRINTS)
    finally:
        os.chdir(old)
    assert first.exit_code == again.exit_code == 1
    assert first.stdout == again.stdout and "-:6:5: AS101" in again.stdout
    assert len(list((project / CACHE_DIR_NAME).glob("*/*.json"))) == 1


def test_concurrent_runs_leave_only_whole_entries(project: Path) -> None:
    """Runs in separate processes at once: each entry is written whole (temp + rename)."""
    golden_tree(project)
    command = [sys.executable, "-m", "autosig", "check", "-q", "-j", "1", "."]
    runs = [
        subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    outputs = [proc.communicate(timeout=300) for proc in runs]
    assert len({out for out, _ in outputs}) == 1
    entries = list((project / CACHE_DIR_NAME).glob("*/*.json"))
    assert entries and all(json.loads(e.read_text())["format"] == 1 for e in entries)
    assert not list((project / CACHE_DIR_NAME).glob("*/.tmp-*"))
    cached = subprocess.run(command, cwd=project, capture_output=True, timeout=300)
    assert cached.stdout == outputs[0][0]


def test_the_key_names_path_and_rules() -> None:
    key = ResultCache.key
    assert key("a.py", None, ()) == key("a.py", None, ())
    assert len({key("a.py", None, ()), key("b.py", None, ()), key("a.py", ("AS101",), ())}) == 3
    assert key("a.py", None, ("AS101",)) != key("a.py", None, ())


def test_file_digests_are_read_again_only_when_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autosig.source import dependencies

    monkeypatch.setattr(dependencies, "_DIGESTS", {})
    path = tmp_path / "helpers.py"
    path.write_text(HELPER_MEAN)
    reads: list[str] = []
    real_open = open

    def counting_open(file, mode="r", *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if str(file) == str(path):
            reads.append(mode)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting_open)
    first = dependencies.file_digest(path)
    assert dependencies.file_digest(path) == first and len(reads) == 1  # stat only
    stat = path.stat()
    path.write_text(HELPER_STATIC)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert dependencies.file_digest(path) != first and len(reads) == 2
    # an earlier run's digests are trusted while the file's stamp is the same
    stored = dependencies.known_digests()
    assert stored is not None
    monkeypatch.setattr(dependencies, "_DIGESTS", {})
    dependencies.remember_digests(stored)
    assert dependencies.file_digest(path) == dependencies.file_digest(path) and len(reads) == 2

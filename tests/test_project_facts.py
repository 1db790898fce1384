"""The project files' facts kept in the result cache (``project_writes.remember_facts``).

A check of one changed file in a large project asks which other files may change an
attribute its trace reads; what each file may do (and its scan) is kept beside the
result cache's entries, so the next run reads only files that changed or that the
question concerns, and gives the same findings as a run that reads everything.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from autosig.analysis import project_writes
from autosig.cli import cli
from autosig.rules import check_cache as result_cache

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

WRITES = "from model import Predictor\np = Predictor(1.0)\np.scale = 3.0\n"
OTHERS = {f"pkg/mod{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(12)}


def run(args: list[str], cwd: Path) -> Result:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["check", "-j", "1", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    os.environ.pop(result_cache.ENV_CACHE_DIR, None)  # the fixture in conftest restores it
    (tmp_path / "pyproject.toml").write_text("[tool.autosig]\n")
    for name, text in {"model.py": PREDICTOR, "train.py": WRITES, **OTHERS}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(project_writes, "_FACTS", {})
    monkeypatch.setattr(project_writes, "_facts_changed", False)
    monkeypatch.setattr(project_writes, "_keeping_facts", False)
    monkeypatch.setattr(project_writes, "_facts_file", None)
    return tmp_path


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The project files whose text the scan reads."""
    seen: list[str] = []
    real = project_writes.ProjectWrites._text

    def counting(self, path: Path):  # noqa: ANN001, ANN202
        seen.append(path.name)
        return real(self, path)

    monkeypatch.setattr(project_writes.ProjectWrites, "_text", counting)
    return seen


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what this process knows of the project's files, as a new process would."""
    monkeypatch.setattr(project_writes, "_FACTS", {})
    monkeypatch.setattr(project_writes, "_facts_changed", False)
    monkeypatch.setattr(project_writes, "_keeping_facts", False)
    monkeypatch.setattr(project_writes, "_facts_file", None)


def edit(path: Path, line: str = "# edited\n") -> None:
    path.write_text(path.read_text() + line)


def test_a_second_check_of_one_file_does_not_read_the_project_again(
    project: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run(["model.py"], project)
    assert "train.py:3 may change" in first.stdout
    assert len(reads) == 1 + len(OTHERS)  # every other file, once
    (folder,) = (project / result_cache.CACHE_DIR_NAME).glob("*/")
    stored = json.loads((folder / result_cache.FACTS).read_text())
    assert str(project / "train.py") in stored  # beside this autosig's entries

    edit(project / "model.py")  # its result entry no longer holds: checked again
    new_process(monkeypatch)
    reads.clear()
    second = run(["model.py"], project)
    assert reads == []  # facts and scans from the cache, every file unchanged
    assert second.stdout == first.stdout
    new_process(monkeypatch)
    assert run(["--no-cache", "model.py"], project).stdout == second.stdout


def test_a_changed_file_is_read_again_never_trusted_stale(
    project: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "train.py:3 may change" in run(["model.py"], project).stdout
    (project / "train.py").write_text("from model import Predictor\np = Predictor(1.0)\n")
    (project / "pkg/mod3.py").write_text("def f(p):\n    p.scale = 2\n")
    edit(project / "model.py")
    new_process(monkeypatch)
    reads.clear()
    again = run(["model.py"], project)
    assert sorted(reads) == ["mod3.py", "train.py"]
    assert "pkg/mod3.py:2 may change" in again.stdout
    new_process(monkeypatch)
    assert run(["--no-cache", "model.py"], project).stdout == again.stdout


def test_facts_a_run_did_not_need_are_kept(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run(["model.py"], project)
    (folder,) = (project / result_cache.CACHE_DIR_NAME).glob("*/")
    before = json.loads((folder / result_cache.FACTS).read_text())
    (project / "other.py").write_text("def g(x):\n    return x\n")
    edit(project / "model.py")
    new_process(monkeypatch)
    run(["model.py"], project)
    after = json.loads((folder / result_cache.FACTS).read_text())
    assert before.keys() < after.keys()


def test_damaged_facts_are_ignored(
    project: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run(["model.py"], project)
    (folder,) = (project / result_cache.CACHE_DIR_NAME).glob("*/")
    stored = json.loads((folder / result_cache.FACTS).read_text())
    stored[str(project / "train.py")] = ["not", "facts"]
    (folder / result_cache.FACTS).write_text(json.dumps(stored))
    edit(project / "model.py")
    new_process(monkeypatch)
    reads.clear()
    assert run(["model.py"], project).stdout == first.stdout
    assert reads == ["train.py"]
    (folder / result_cache.FACTS).write_text("{truncated")
    edit(project / "model.py")
    new_process(monkeypatch)
    assert run(["model.py"], project).stdout == first.stdout


@pytest.mark.parametrize(
    "text",
    [
        "x.scale = 1\n",
        "x.scales = 1\n",
        "rescale = 2\n",
        "getattr(x, 'sc\\x61le')\n",
        "getattr(x, 'scale_')  # \\\n",
        "name = 'scale'\n",
        "é_scale = scale\n",
    ],
)
def test_the_word_list_answers_as_the_text_search(text: str) -> None:
    """Whether a file concerns a question is the same from its kept facts as from its text."""
    with_text = project_writes._FileText.of(text, keep=True)
    with_words = project_writes._FileText.of(text, keep=False, words=True)
    for attribute in ("scale", "scales", "sc", "x", "é_scale"):
        answers = []
        for read in (with_text, with_words):
            seen: list[bool] = []
            project = project_writes.ProjectWrites(Path("/nonexistent"))
            project._read[Path("/p/a.py")] = read
            project.paths = [Path("/p/a.py")]
            project._text = lambda path: text  # type: ignore[method-assign]
            project._scanned[Path("/p/a.py")] = project_writes.FileWrites()
            for _ in project._files(Path("/p/b.py"), _asker(attribute, seen)):
                pass
            answers.append(seen)
        assert answers[0] == answers[1], (text, attribute)


def _asker(attribute: str, seen: list[bool]):  # noqa: ANN202
    """The ``concerns`` that ``ProjectWrites.writes`` asks with, recording its answer."""
    captured: dict[str, object] = {}

    class Spy(project_writes.ProjectWrites):
        def _files(self, exclude, concerns):  # noqa: ANN001, ANN202
            captured["concerns"] = concerns
            return iter(())

    Spy(Path("/nonexistent")).writes(attribute, Path("/x"))
    concerns = captured["concerns"]

    def recording(read, text):  # noqa: ANN001, ANN202
        answer = concerns(read, text)  # type: ignore[operator]
        seen.append(answer)
        return answer

    return recording

"""``autosig verify --before REV|PATCH``: the version before a written fix, without TensorFlow.

The end-to-end run (the README's block: fix --verify, then verify against HEAD) is in
``test_readme.py``; here the earlier text of each file, from git and from a patch undone.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from autosig.errors import AutosigError
from autosig.profile.format import FunctionRecord, Profile
from autosig.rewrite.patch import check_patch, unified_diff
from autosig.verify.before import earlier_texts, find_earlier, written_candidate
from autosig.verify.candidate import Candidate

BEFORE = "import tensorflow as tf\n\n\n@tf.function\ndef step(x):\n    return x\n"
AFTER = BEFORE.replace("@tf.function\n", "@tf.function(reduce_retracing=True)\n")


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "model.py").write_text(BEFORE)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "before")
    (tmp_path / "model.py").write_text(AFTER)  # the fix, written
    return tmp_path


def profile_of(root: Path) -> Profile:
    record = FunctionRecord("model.py", "step", 5, None, True, calls=2, traces=2)
    return Profile(functions=[record], project_root=str(root))


def test_head_gives_the_committed_text_and_is_found_when_the_rewrite_is_written(
    repo: Path,
) -> None:
    assert earlier_texts("HEAD", repo, ["model.py"]) == {"model.py": BEFORE}
    written = Candidate(root=repo, originals={"model.py": AFTER})  # rewrite changes nothing
    assert find_earlier(repo, written) == "HEAD"
    pending = Candidate(root=repo, originals={"model.py": AFTER}, texts={"model.py": "x"})
    assert find_earlier(repo, pending) is None  # there is a rewrite to verify in memory
    git(repo, "commit", "-qam", "fixed")
    assert find_earlier(repo, written) is None  # HEAD is the written version: nothing known


def test_the_written_files_are_the_rewritten_side(repo: Path) -> None:
    candidate, notes = written_candidate(profile_of(repo), repo, "HEAD")
    assert candidate.texts == {"model.py": AFTER}
    assert candidate.originals["model.py"] == BEFORE
    assert candidate.original_sources_by_absolute_path() == {
        str((repo / "model.py").resolve()): BEFORE
    }
    assert notes[0] == (
        "compared the files as they are (rewritten) with their version in HEAD (original): model.py"
    )


def test_a_patch_is_undone_from_the_current_files(repo: Path) -> None:
    patch = repo / "fixes.patch"
    patch.write_text(unified_diff(BEFORE, AFTER, "model.py"))
    assert earlier_texts(str(patch), repo, ["model.py"], patch_root=repo) == {"model.py": BEFORE}
    (repo / "model.py").write_text(BEFORE)  # not applied: undoing it cannot match
    with pytest.raises(AutosigError, match="does not hold this patch's change"):
        check_patch(patch.read_text(), repo, reverse=True)


def test_a_bad_revision_or_no_git_is_one_line(repo: Path, tmp_path_factory) -> None:
    with pytest.raises(AutosigError, match="--before nope: no such git revision"):
        earlier_texts("nope", repo, ["model.py"])
    elsewhere = tmp_path_factory.mktemp("plain")
    with pytest.raises(AutosigError, match="is not in a git repository"):
        earlier_texts("HEAD", elsewhere, ["model.py"])
    git(repo, "commit", "-qam", "fixed")
    with pytest.raises(AutosigError, match="the same as in HEAD: nothing to verify"):
        written_candidate(profile_of(repo), repo, "HEAD")

"""``autosig verify --before REV|PATCH``: verify a fix that is already written.

After ``autosig fix`` wrote its rewrite, the files on disk are the rewritten side and
the rewrite computed from them changes nothing. The original side is then the version
before the fix: the files at a git revision (``HEAD``: the last commit) or the files
with a patch undone (the ``fix --patch-out`` patch that ``autosig apply`` applied). The
original run is served that version by the import hook; the rewritten run the files
as they are. ``find_earlier`` picks ``HEAD`` by itself when the rewrite changes nothing
and git knows the files differ from it. No TensorFlow here.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from autosig.errors import AutosigError
from autosig.profile.format import Profile
from autosig.rewrite.patch import check_patch, read_patch
from autosig.source.files import decode_source
from autosig.verify.candidate import Candidate, build_candidate, profiled_sources


def earlier_texts(
    spec: str, root: Path, rels: Iterable[str], patch_root: Path | None = None
) -> dict[str, str]:
    """Relative path -> its text before the change, for the files ``spec`` changed.

    ``spec`` is a patch file (undone from the current files; its paths are relative to
    ``patch_root``, the current directory by default, as ``autosig apply`` reads them)
    or a git revision.
    """
    wanted = set(rels)
    if Path(spec).is_file():
        out: dict[str, str] = {}
        base = patch_root or Path.cwd()
        for planned in check_patch(read_patch(spec), base, reverse=True):
            rel = _relative(planned.path, root)
            if rel in wanted and planned.new_text != planned.source.text:
                out[rel] = planned.new_text
        if not out:
            raise AutosigError("the patch changes none of the profiled files", spec)
        return out
    return _git_texts(spec, root, wanted)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _git(args: list[str], cwd: Path) -> bytes | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _git_texts(revision: str, root: Path, rels: set[str]) -> dict[str, str]:
    top = _git(["rev-parse", "--show-toplevel"], root)
    if top is None:
        raise AutosigError(
            f"--before {revision}: not a patch file, and {root} is not in a git repository"
        )
    if _git(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], root) is None:
        raise AutosigError(f"--before {revision}: no such git revision (or patch file)")
    repo = Path(top.decode().strip()).resolve()
    out: dict[str, str] = {}
    for rel in sorted(rels):
        path = (root / rel).resolve()
        try:
            name = path.relative_to(repo).as_posix()
        except ValueError:
            continue
        data = _git(["show", f"{revision}:{name}"], repo)
        if data is None:  # not in that revision: new since, nothing to compare it with
            continue
        text, _, _ = decode_source(data, f"{revision}:{name}")
        out[rel] = text
    return out


def find_earlier(root: Path, candidate: Candidate) -> str | None:
    """``HEAD`` when the rewrite changes nothing and git has an earlier version of a
    profiled file that differs from it (a fix written since the last commit), else None."""
    if candidate.texts or not candidate.originals:
        return None
    try:
        earlier = _git_texts("HEAD", root, set(candidate.originals))
    except AutosigError:
        return None
    differs = any(earlier[rel] != candidate.originals[rel] for rel in earlier)
    return "HEAD" if differs else None


def written_candidate(
    profile: Profile,
    root: Path,
    spec: str,
    *,
    unsafe_fixes: bool = False,
    patch_root: Path | None = None,
    **build: Any,
) -> tuple[Candidate, list[str]]:
    """The files as they are (rewritten side) against their version ``spec`` (original).

    The plan and fixes are those ``fix`` makes from the earlier version (what the report
    names per function); the notes say which files are compared and where the files
    differ from autosig's own rewrite of that version (other edits are compared too).
    """
    root = root.resolve()
    current, errors = profiled_sources(profile, root)
    if errors:
        raise errors[0]
    earlier = earlier_texts(spec, root, current, patch_root)
    changed = {rel: text for rel, text in earlier.items() if text != current[rel]}
    if not changed:
        raise AutosigError(
            f"--before {spec}: the profiled files are the same as in {spec}: nothing to verify"
        )
    sources: Mapping[str, str] = {**current, **changed}
    fixed = build_candidate(
        profile, root, unsafe_fixes=unsafe_fixes, sources=dict(sources), **build
    )
    candidate = replace(
        fixed,
        texts={rel: current[rel] for rel in changed},
        served_originals=frozenset(changed),
    )
    notes = [
        f"compared the files as they are (rewritten) with their version in {spec} "
        f"(original): {', '.join(sorted(changed))}"
    ]
    others = sorted(rel for rel in changed if fixed.texts.get(rel) != current[rel])
    if others:
        notes.append(
            f"{', '.join(others)}: not exactly autosig's rewrite of the version in {spec}; "
            "every difference is compared, other edits included"
        )
    return candidate, notes

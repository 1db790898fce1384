"""Unified diffs of fixes, and applying a reviewed patch without surprises.

``unified_diff`` is difflib's, split on ``\\n`` only so a CRLF file's ``\\r`` stays in
each line and comes back on apply, with git's ``\\ No newline at end of file``
marker. ``apply_patch`` parses with unidiff and checks every hunk of every file
before it writes anything: a patch reviewed yesterday is refused as a whole, naming
the file and hunk, if the code changed under it or a file is read-only. Files are
rewritten atomically in their own encoding, BOM and mode, and renamed into place
only once every new file is written (``files.write_sources``).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from unidiff import PatchSet, UnidiffParseError
from unidiff.constants import DEV_NULL, LINE_TYPE_NO_NEWLINE

from autosig.errors import AutosigError
from autosig.source.files import (
    SourceFile,
    atomic_write_bytes,
    is_read_only,
    read_source,
    write_sources,
)

NO_NEWLINE = "\\ No newline at end of file\n"
CONTEXT_LINES = 3


def split_at_newlines(text: str) -> list[str]:
    """Lines of ``text`` with their endings, split at ``\\n`` only (``\\r`` stays put)."""
    return re.findall(r"[^\n]*\n|[^\n]+\Z", text)


def display_path(path: Path | str, root: Path | str | None = None) -> str:
    """``path`` relative to ``root`` (default: the current directory), POSIX form.

    Paths outside ``root`` stay absolute (a patch never climbs out with ``..``).
    """
    absolute = os.path.abspath(path)
    base = os.path.abspath(root if root is not None else os.getcwd())
    try:
        relative = os.path.relpath(absolute, base)
    except ValueError:  # another drive on Windows
        return Path(absolute).as_posix()
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return Path(absolute).as_posix()
    return Path(relative).as_posix()


def unified_diff(old: str, new: str, path: str) -> str:
    """A ``git diff``-style unified diff of one file (``""`` when nothing changed)."""
    if old == new:
        return ""
    lines = difflib.unified_diff(
        split_at_newlines(old), split_at_newlines(new), f"a/{path}", f"b/{path}", n=CONTEXT_LINES
    )
    out: list[str] = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:  # the last line of a file without a final newline
            out.append(line + "\n" + NO_NEWLINE)
    return "".join(out)


def read_patch(path: Path | str) -> str:
    """A patch file's text, exactly (no newline translation: CRLF lines must survive)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise AutosigError("no such patch file", str(p)) from None
    except IsADirectoryError:
        raise AutosigError("is a directory, not a patch file", str(p)) from None
    except OSError as exc:
        raise AutosigError(f"cannot read patch: {exc.strerror or exc}", str(p)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AutosigError(f"patch is not UTF-8 text (byte {exc.start})", str(p)) from None


def write_patch(path: Path | str, patch_text: str) -> None:
    """Write a patch file byte for byte (UTF-8, line endings as they are)."""
    atomic_write_bytes(path, patch_text.encode("utf-8"), 0o644)


@dataclass
class PlannedWrite:
    """One file of a patch, checked and ready to be written."""

    path: Path
    display: str
    source: SourceFile
    new_text: str
    hunks: int


def check_patch(
    patch_text: str, root: Path, *, recount: bool = False, reverse: bool = False
) -> list[PlannedWrite]:
    """Parse ``patch_text`` and check every hunk against the files under ``root``.

    Returns the new text of every file; raises AutosigError (naming the file and hunk)
    for a malformed patch or a hunk whose context or removed lines no longer match.
    ``reverse``: undo the patch instead (the files hold its change; the new text is
    what they were before it, as ``patch -R`` gives).
    """
    patch = _parse(recount_hunks(patch_text) if recount else patch_text)
    planned: list[PlannedWrite] = []
    seen: set[Path] = set()
    for patched in patch:
        name = _target_name(patched)
        target = _resolve(root, name)
        if target in seen:
            raise AutosigError("the patch changes this file twice; merge its parts first", name)
        seen.add(target)
        source = read_source(target)
        new_text = _apply_hunks(patched, source.text, name, reverse=reverse)
        if new_text != source.text and is_read_only(target):
            raise AutosigError(
                "read-only file; nothing was patched (make it writable or drop it from the patch)",
                name,
            )
        planned.append(PlannedWrite(target, name, source, new_text, len(patched)))
    return planned


def apply_patch(
    patch_text: str, root: Path, *, dry_run: bool = False, recount: bool = False
) -> list[Path]:
    """Apply a unified diff under ``root``: all files or, if any hunk is stale, none.

    ``recount``: trust the hunks' lines over the counts in their ``@@`` headers (a
    patch edited by hand, like ``git apply --recount``). Returns the paths written
    (or that would be, with ``dry_run``).
    """
    planned = check_patch(patch_text, root, recount=recount)
    if not dry_run:
        write_sources(
            [(item.source, item.new_text) for item in planned if item.new_text != item.source.text]
        )
    return [item.path for item in planned]


# -- parsing -----------------------------------------------------------------------------


def _parse(patch_text: str) -> PatchSet:
    if not patch_text.strip():
        raise AutosigError("the patch is empty: nothing to apply")
    try:
        patch = PatchSet(split_at_newlines(patch_text))
    except UnidiffParseError as exc:
        raise AutosigError(
            f"not a valid unified diff: {exc} (if you added or removed lines by hand, the "
            "counts in its '@@ -a,b +c,d @@' header no longer match: apply with --recount)"
        ) from None
    if not patch:
        raise AutosigError("no file changes found in the patch (is it a unified diff?)")
    return patch


_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$", re.DOTALL)


def recount_hunks(patch_text: str) -> str:
    """``patch_text`` with every hunk header's line counts recomputed from its lines.

    A hunk runs to the next hunk header, the next file's ``---``/``+++`` pair or
    ``diff`` line, or the end. Lines outside hunks are kept as they are.
    """
    lines = split_at_newlines(patch_text)
    out: list[str] = []
    index = 0
    while index < len(lines):
        header = _HUNK_HEADER.match(lines[index])
        if header is None:
            out.append(lines[index])
            index += 1
            continue
        body_end = index + 1
        while body_end < len(lines) and not _ends_hunk(lines, body_end):
            body_end += 1
        body = lines[index + 1 : body_end]
        while body and body[-1] in ("\n", "\r\n"):
            body.pop()  # blank lines after a hunk separate it from what follows
        old = sum(1 for line in body if line[:1] in (" ", "-") or line in ("\n", "\r\n"))
        new = sum(1 for line in body if line[:1] in (" ", "+") or line in ("\n", "\r\n"))
        start_old, start_new, rest = header.group(1), header.group(2), header.group(3)
        out.append(f"@@ -{start_old},{old} +{start_new},{new} @@{rest}")
        out.extend(lines[index + 1 : body_end])
        index = body_end
    return "".join(out)


def _ends_hunk(lines: list[str], index: int) -> bool:
    line = lines[index]
    if line.startswith("@@ ") or line.startswith("diff "):
        return True
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return line.startswith("--- ") and following.startswith("+++ ")


def _target_name(patched: object) -> str:
    name = patched.path  # type: ignore[attr-defined]
    if patched.is_binary_file:  # type: ignore[attr-defined]
        raise AutosigError("binary patches are not supported", name)
    # /dev/null only: unidiff also calls a file emptied by its one hunk "removed"
    if DEV_NULL in (patched.source_file, patched.target_file):  # type: ignore[attr-defined]
        raise AutosigError(
            "the patch creates or deletes this file; autosig apply only changes existing files",
            name,
        )
    if patched.is_rename:  # type: ignore[attr-defined]
        raise AutosigError("the patch renames this file; renames are not supported", name)
    return name


def _resolve(root: Path, name: str) -> Path:
    """The file ``name`` under ``root``. Absolute paths (files outside the directory
    ``fix --diff`` ran in) are taken as they are; ``..`` that climbs out is refused."""
    if name.startswith('"') and name.endswith('"'):
        name = name[1:-1]
    path = Path(name)
    if path.is_absolute():
        return path
    if ".." in path.parts:
        raise AutosigError(
            "path climbs out of the directory the patch is applied in (..); "
            "apply it from a directory above the file, or pass --root",
            name,
        )
    return root / path


# -- applying ----------------------------------------------------------------------------


def _hunk_sides(hunk: Iterable[object]) -> tuple[list[str], list[str]]:
    """(source lines, target lines) of a hunk, honouring ``\\ No newline`` markers."""
    source: list[str] = []
    target: list[str] = []
    last_kind = None
    for line in hunk:
        kind = line.line_type  # type: ignore[attr-defined]
        value = line.value  # type: ignore[attr-defined]
        if kind == LINE_TYPE_NO_NEWLINE:
            if last_kind in ("-", " ") and source:
                source[-1] = _chomp(source[-1])
            if last_kind in ("+", " ") and target:
                target[-1] = _chomp(target[-1])
            continue
        if kind in ("-", " "):
            source.append(value)
        if kind in ("+", " "):
            target.append(value)
        last_kind = kind
    return source, target


def _chomp(line: str) -> str:
    return line[:-1] if line.endswith("\n") else line


def _apply_hunks(patched: Iterable[object], text: str, name: str, reverse: bool = False) -> str:
    lines = split_at_newlines(text)
    out: list[str] = []
    cursor = 0
    hunks = list(patched)
    for number, hunk in enumerate(hunks, start=1):
        source, target = _hunk_sides(hunk)
        first, length = hunk.source_start, hunk.source_length  # type: ignore[attr-defined]
        if reverse:
            source, target = target, source
            first, length = hunk.target_start, hunk.target_length  # type: ignore[attr-defined]
        start = first - 1 if length else first
        where = _locate(lines, source, start, cursor)
        if where is None and reverse:
            raise AutosigError(
                f"hunk {number} of {name} does not match the file (line {max(start, 0) + 1}): "
                "it does not hold this patch's change (not applied, or edited since)"
            )
        if where is None:
            line = max(start, 0) + 1
            if source != target and _locate(lines, target, start, cursor) is not None:
                raise AutosigError(
                    f"hunk {number} of {name} no longer matches (line {line}): the file "
                    "already has its change (was the patch applied before?); nothing was changed"
                )
            raise AutosigError(
                f"hunk {number} of {name} no longer matches (line {line}); nothing was "
                "changed: the file was edited after the patch was made. "
                "Re-run autosig fix --diff to make a new patch"
            )
        out.extend(lines[cursor:where])
        out.extend(target)
        cursor = where + len(source)
    out.extend(lines[cursor:])
    return "".join(out)


def _locate(lines: list[str], source: list[str], start: int, cursor: int) -> int | None:
    """Where ``source`` sits in ``lines``: at ``start``, else the nearest exact match.

    Like git apply, a hunk may have moved (lines added above it) but must match
    exactly, and never before the end of the previous hunk.
    """
    size = len(source)

    def fits(at: int) -> bool:
        return at >= cursor and at + size <= len(lines) and lines[at : at + size] == source

    if fits(start):
        return start
    for offset in range(1, len(lines) + 1):
        for at in (start - offset, start + offset):
            if fits(at):
                return at
        if start - offset < cursor and start + offset + size > len(lines):
            break
    return None

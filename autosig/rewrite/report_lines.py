"""Which file a fix report's line numbers speak of.

A dry run (``--diff``, ``--patch-out``, a rewrite ``--verify`` withholds) reports lines
of the file on disk; a written file reports lines of the file as written. The engine
reports static findings at lines of the rewrite and profile findings (AS2xx) at lines
of the file as read; these helpers move each to the file the report speaks of.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from autosig.source.sites import Finding

if TYPE_CHECKING:
    from autosig.rewrite.engine import FixResult


def place(result: FixResult, old_text: str, *, on_disk: bool) -> None:
    """Put ``result``'s findings and "left" lines at lines of the file on disk
    (``on_disk``: a dry run or a rewrite not written), else of the file as written."""
    if on_disk:
        result.findings = _on_disk(result.findings, old_text, result)
        result.left = _left_on_disk(result.left, old_text, result)
    else:
        result.findings = _in_written(result.findings, old_text, result)
        result.left = _left_in_written(result.left, old_text, result)


def on_disk(findings: Sequence[Finding], old_text: str, result: FixResult) -> list[Finding]:
    """Findings of a dry run, with lines of the file on disk (``fix -`` reports these)."""
    return _on_disk(findings, old_text, result)


def _from_profile(finding: Finding) -> bool:
    """A profile finding (AS2xx) is placed at the profiled function's line in the file as
    read; a static finding at its line in the text the rules ran on, the rewrite."""
    return finding.code.startswith("AS2")


def _on_disk(findings: Sequence[Finding], old_text: str, result: FixResult) -> list[Finding]:
    """Findings of a dry run (or of a rewrite not written), with lines in the file on
    disk: static findings mapped back from the rewrite, profile findings already there."""
    if not result.changed or not findings:
        return list(findings)
    to_old = line_map(result.new_text, old_text)
    return [f if _from_profile(f) else replace(f, line=to_old(f.line)) for f in findings]


def _in_written(findings: Sequence[Finding], old_text: str, result: FixResult) -> list[Finding]:
    """Findings of a written file, with lines in the file as written: profile findings
    mapped forward from the file as read."""
    if not result.changed or not findings:
        return list(findings)
    to_new = line_map(old_text, result.new_text)
    return [replace(f, line=to_new(f.line)) if _from_profile(f) else f for f in findings]


def _left_on_disk(left: list[str], old_text: str, result: FixResult) -> list[str]:
    """The engine's "line N: CODE ..." items of a dry run, with lines of the file on disk."""
    if not result.changed:
        return left
    to_old = line_map(result.new_text, old_text)
    return [
        re.sub(r"^line (\d+):", lambda m: f"line {to_old(int(m.group(1)))}:", item) for item in left
    ]


def _left_in_written(left: list[str], old_text: str, result: FixResult) -> list[str]:
    """The engine's "name (line N): ..." items (lines of the file as read, where the plan
    placed the function), with lines of the file as written."""
    if not result.changed:
        return left
    to_new = line_map(old_text, result.new_text)
    return [
        re.sub(
            r"^(\S+) \(line (\d+)\):",
            lambda m: f"{m.group(1)} (line {to_new(int(m.group(2)))}):",
            item,
        )
        for item in left
    ]


def line_map(new: str, old: str) -> Callable[[int], int]:
    """Map a 1-based line of ``new`` to the line of ``old`` it came from.

    Unchanged lines map exactly; a line inside a rewritten block maps to the same
    offset into the block it replaced (its last line when the new block is longer).
    """
    import difflib

    blocks = difflib.SequenceMatcher(
        None, new.splitlines(), old.splitlines(), autojunk=False
    ).get_opcodes()

    def to_old(line: int) -> int:
        index = line - 1
        for _tag, i1, i2, j1, j2 in blocks:
            if i1 <= index < i2 or (i1 == i2 == index):
                if j2 <= j1:
                    return j1 + 1 if j1 > 0 else 1
                return min(j1 + (index - i1), j2 - 1) + 1
        return line

    return to_old

"""``# autosig: ignore`` and ``# autosig: ignore[AS101,AS201]`` suppression comments.

Comments are found with ``tokenize`` (or libcst's Comment nodes when tokenize rejects
the file), never with a regex over raw lines, so ``"# autosig: ignore"`` inside a
string literal suppresses nothing. Codes may be prefixes (``ignore[AS1]``).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper

from autosig.source.metadata import PositionProvider

DIRECTIVE = re.compile(r"#\s*autosig\s*:\s*ignore\b(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)

ALL = None
"""Marker for a bare ``# autosig: ignore`` that silences every code."""


@dataclass
class Suppressions:
    """Which codes are silenced on which (1-based) lines."""

    by_line: dict[int, frozenset[str] | None] = field(default_factory=dict)

    @classmethod
    def from_text(cls, text: str) -> Suppressions:
        try:
            comments = list(_tokenize_comments(text))
        except (tokenize.TokenError, SyntaxError):
            comments = list(_libcst_comments(cst.parse_module(text)))
        return cls._from_comments(comments)

    @classmethod
    def from_module(cls, module: cst.Module, text: str | None = None) -> Suppressions:
        """Like ``from_text`` but falls back to the already parsed module."""
        if text is None:
            text = module.code
        if "autosig" not in text:
            return cls()
        try:
            return cls._from_comments(list(_tokenize_comments(text)))
        except (tokenize.TokenError, SyntaxError):
            return cls._from_comments(list(_libcst_comments(module)))

    @classmethod
    def of_file(cls, text: str, module: cst.Module | None) -> Suppressions:
        """The comments of one version of a file, read once for all its functions (they
        depend on the text alone: the reading is kept for the text, the last
        ``FILES_KEPT`` texts). From ``module`` (the text's parse) when tokenize rejects
        the text; a file that does not parse still has comments that count (tokenize
        alone); unreadable comments suppress nothing. Treat the result as read-only."""
        known = _FILES.pop(text, None)
        if known is None:
            if module is not None:
                known = cls.from_module(module, text)
            else:
                try:
                    known = cls.from_text(text)
                except Exception:  # noqa: BLE001 - unreadable comments suppress nothing
                    known = cls()
        _FILES[text] = known
        while len(_FILES) > FILES_KEPT:
            del _FILES[next(iter(_FILES))]
        return known

    @classmethod
    def _from_comments(cls, comments: Iterable[tuple[int, str]]) -> Suppressions:
        by_line: dict[int, frozenset[str] | None] = {}
        for line, comment in comments:
            for match in DIRECTIVE.finditer(comment):
                codes = _parse_codes(match.group("codes"))
                previous = by_line.get(line, frozenset())
                if codes is ALL or previous is ALL:
                    by_line[line] = ALL
                else:
                    by_line[line] = previous | codes
        return cls(by_line)

    def is_suppressed(self, code: str, lines: Iterable[int]) -> bool:
        """True when any of ``lines`` carries an ignore comment covering ``code``."""
        code = code.upper()
        for line in lines:
            if line not in self.by_line:
                continue
            codes = self.by_line[line]
            if codes is ALL or any(code.startswith(c) for c in codes):
                return True
        return False

    def __bool__(self) -> bool:
        return bool(self.by_line)


FILES_KEPT = 16
"""How many files' readings ``Suppressions.of_file`` keeps (a plan reads one file's
functions one after the other, a profile's files in turn)."""

_FILES: dict[str, Suppressions] = {}
"""``Suppressions.of_file``'s readings by text, least recently used first."""


def _parse_codes(raw: str | None) -> frozenset[str] | None:
    if raw is None:
        return ALL
    codes = frozenset(c.strip().upper() for c in raw.split(",") if c.strip())
    return codes or ALL


def _tokenize_comments(text: str) -> Iterable[tuple[int, str]]:
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def _libcst_comments(module: cst.Module) -> Iterable[tuple[int, str]]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)

    class _Comments(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[tuple[int, str]] = []

        def visit_Comment(self, node: cst.Comment) -> None:
            self.found.append((positions[node].start.line, node.value))

    visitor = _Comments()
    wrapper.visit(visitor)
    return visitor.found

"""What a rule is: code, docs in ruff's sections, Fixit-style examples, detection, fix.

A rule inspects a parsed module through a RuleContext and yields Violations
(``rules/violation.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from autosig.rules.context import RuleContext
from autosig.rules.violation import Violation
from autosig.source.sites import FixSafety
from autosig.source.skeleton import Keep


@dataclass(frozen=True)
class Invalid:
    """An example that must be reported; ``expected`` is the fixed source (None: no fix)."""

    code: str
    expected: str | None = None
    count: int = 1
    unsafe: bool = False
    """The expected fix needs --unsafe-fixes."""


class Rule:
    """Base class. Subclasses set the ClassVars and implement ``check``.

    The class docstring is the rule's documentation, in ruff's sections:
    ``What it does``, ``Why is this bad?``, ``Example``, ``Use instead``, ``Fix safety``.
    ``autosig rule CODE`` prints it; the README's rule table is generated from it.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    """One line for tables: what the rule finds."""
    fix_safety: ClassVar[FixSafety] = "none"
    skeleton_keeps: ClassVar[frozenset[Keep]] = frozenset()
    """What the rule reads beyond the traced code, so the skeleton ``check`` and ``fix``
    parse keeps it (``source.skeleton.Keep``); written as ``frozenset({Keep.X, ...})`` so
    the registry reads it without importing the rule."""
    VALID: ClassVar[list[str]] = []
    INVALID: ClassVar[list[Invalid]] = []

    def check(self, ctx: RuleContext) -> Iterable[Violation]:
        raise NotImplementedError

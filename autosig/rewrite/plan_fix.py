"""What a plan fix is: one kind of change the profile's plan asks for, beside ``Rule``.

A rule finds a problem in the source and says how to fix it; a plan fix carries out a
decision ``infer`` made from the profile (an ``input_signature``, ``reduce_retracing=True``,
tensors at the call sites, ``optimizer.build(...)``). Each kind declares in one place its
code, its edits for a site given the site's plan entry (or for the file's recorded
calls), how the summary names what it did and what it says of what it left;
``autosig.rewrite.fix_kinds`` lists the kinds with their precedence as data, and the engine
(``autosig.rewrite.engine``) loops over them as it loops over the rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

from autosig.source.codes import STATIC_CODES
from autosig.source.sites import Finding, FixSafety
from autosig.source.skeleton import Keep

if TYPE_CHECKING:  # the kinds' edits need libcst; their words (the summary's) do not
    from autosig.infer.plan import FunctionPlan
    from autosig.rules.context import RuleContext
    from autosig.rules.violation import Violation
    from autosig.source.discover import FunctionSite

UNSAFE_NOT_APPLIED = "unsafe fix, not applied without --unsafe-fixes"

Section = Literal["why", "where"]
"""Where a kind's note stands in a file's summary: ``why`` before the shape reads
rewritten with a fix (``AppliedFix.details``), ``where`` after them."""


@dataclass(frozen=True)
class AppliedFix:
    """One change the engine made, for the summary, the diff header and the verifier."""

    code: str
    """Rule code (``AS101``), or a plan fix's code (``signature``, ``reduce_retracing``,
    ``call_site``, ``optimizer_build``: ``autosig.rewrite.fix_kinds``)."""
    qualname: str | None
    line: int
    safety: FixSafety
    description: str
    col: int = 1
    details: tuple[str, ...] = ()
    """More lines for the summary (the shape reads rewritten with a signature)."""
    target: str | None = None
    """For ``call_site``: the profile path of the function called (``qualname``)."""

    @property
    def unsafe(self) -> bool:
        return self.safety == "unsafe"

    @property
    def from_profile(self) -> bool:
        """Made for the profile's plan, not for a static rule."""
        return self.code not in STATIC_CODES

    def finding(self, path: str) -> Finding:
        """This fix as the finding it fixed (a fixable one, of its safety)."""
        return Finding(
            path=path,
            line=self.line,
            col=self.col,
            code=self.code,
            message=self.description,
            function=self.qualname,
            fixable=True,
            fix_safety=self.safety,
        )


@dataclass(frozen=True)
class FixOptions:
    """What every kind is told about the run."""

    unsafe_fixes: bool
    untouched: frozenset[str] = frozenset()
    """Functions (qualnames) ``fix --verify`` leaves exactly as they are."""

    def allows(self, safety: FixSafety) -> bool:
        return safety == "safe" or (self.unsafe_fixes and safety == "unsafe")


@dataclass
class SiteFix:
    """What one kind does at one site in one pass: a candidate edit, or why not."""

    violation: Violation | None = None
    """The edits (taken with the rules' when they do not clash, else next pass)."""
    fix: AppliedFix | None = None
    """How the change is reported once taken."""
    problem: str | None = None
    """Why the plan's fix is not made here; the kind's ``account`` says it, after the
    last pass."""
    said: str | None = None
    """A line for what is left, said as it is (the last pass's)."""


@dataclass
class FileFix:
    """What a kind that rewrites the file's recorded calls did, before sites are matched."""

    new_text: str | None = None
    """The file with the calls rewritten (None: unchanged)."""
    applied: list[AppliedFix] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    already: set[tuple[str, str]] = field(default_factory=set)
    """(function path, qualname) with a call here that already passes what is planned."""


@dataclass(frozen=True)
class Outcome:
    """A plan entry of the file after the passes, as one kind sees it."""

    entry: FunctionPlan
    matched: bool
    """A site of the file was matched to it (same qualname and line, or the only one)."""
    site: FunctionSite | None
    """Its site in the fixed text."""
    problem: str | None
    """This kind's ``SiteFix.problem`` there in the last pass."""
    done: frozenset[tuple[str, str]]
    """(qualname, code) of every plan fix made in the file."""

    @property
    def name(self) -> str:
        return f"{self.entry.qualname} (line {self.entry.line})"


@dataclass(frozen=True)
class Account:
    """What a kind says, after the passes, about a plan entry it answers for."""

    lines: tuple[str, ...] = ()
    unfixable: bool = False
    """The entry's findings stay open (reported unfixable)."""


class PlanFix:
    """Base class of the plan's fix kinds: override what the kind does; the defaults do
    nothing, so a kind that acts on sites never sees a file's calls and the reverse."""

    code: ClassVar[str]
    """``AppliedFix.code`` of its changes; the registry line names the same code."""
    skeleton_keeps: ClassVar[frozenset[Keep]] = frozenset()
    """What it reads beyond the traced code, kept in the skeleton ``fix`` parses."""

    # -- edits -----------------------------------------------------------------------

    def file_entries(self, entries: Sequence[FunctionPlan], path: str) -> list[FunctionPlan]:
        """The entries (of the whole plan) whose calls it rewrites in the file ``path`` (a
        profile path); any makes the engine parse the whole file and run ``fix_file``."""
        return []

    def fix_file(
        self,
        ctx: RuleContext,
        entries: Sequence[FunctionPlan],
        path: str,
        options: FixOptions,
    ) -> FileFix:
        """Rewrite the recorded calls of ``entries`` in the file (run once, first)."""
        return FileFix()

    def fix_site(
        self, ctx: RuleContext, site: FunctionSite, entry: FunctionPlan, options: FixOptions
    ) -> SiteFix | None:
        """Its change at ``site``, planned by ``entry`` (not stale), each pass; None: none."""
        return None

    # -- what it says ----------------------------------------------------------------

    def account(self, outcome: Outcome) -> Account | None:
        """What it says about a plan entry after the passes (None: not its entry; the
        next kind in the registry's order is asked)."""
        return None

    def label(self, names: Sequence[str]) -> str:
        """A file's summary: what it did, to the functions ``names`` (one per change)."""
        raise NotImplementedError

    def total(self, count: int) -> str:
        """The closing line: ``count`` changes of this kind over every file."""
        raise NotImplementedError

    def notes(self, fix: AppliedFix) -> Iterable[tuple[Section, str]]:
        """More lines of a file's summary about one of its changes."""
        return ()


def answered(outcome: Outcome) -> Account:
    """What a kind that edits the site itself says of an entry it did not fix: no site
    was matched, or why its edit was not made (the entry's findings stay open)."""
    if not outcome.matched:
        return Account(
            (
                f"{outcome.name}: not fixed: no tf.function of that name at that line in "
                "this file (moved or renamed since profiling?)",
            ),
            unfixable=True,
        )
    if outcome.problem is not None:
        return Account((f"{outcome.name}: not fixed: {outcome.problem}",), unfixable=True)
    return Account()

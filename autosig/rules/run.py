"""Run rules over a file: violations -> suppressions -> findings.

Their fixes are applied by the one fix loop, ``autosig.rewrite.engine``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from autosig.rules.base import Rule
from autosig.rules.context import RuleContext
from autosig.rules.registry import select_rules, skeleton_keeps
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite
from autosig.source.fast_visit import read_only_visits
from autosig.source.sites import Finding, FixSafety
from autosig.source.skeleton import skeleton


class SiteIndex:
    """Finds the tf.function site a node belongs to (its traced function, or its creation)."""

    def __init__(self, ctx: RuleContext) -> None:
        self.ctx = ctx
        self.by_node: dict[int, FunctionSite] = {}
        for site in ctx.sites:
            for node in (site.function, site.call, site.decorator):
                if node is not None:
                    self.by_node.setdefault(id(node), site)

    def site_of(self, node: cst.CSTNode) -> FunctionSite | None:
        for candidate in (node, *self.ctx.ancestors(node)):
            site = self.by_node.get(id(candidate))
            if site is not None:
                return site
        return None


def check_context(ctx: RuleContext, rules: Sequence[Rule]) -> list[tuple[Rule, Violation]]:
    """Every unsuppressed violation of ``rules`` in ``ctx``, sorted by position and code."""
    found: list[tuple[tuple[int, int, str], Rule, Violation]] = []
    suppressions = ctx.suppressions
    index = SiteIndex(ctx)
    for rule in rules:
        for violation in rule.check(ctx):
            site = index.site_of(violation.node)
            if violation.function is None and site is not None:
                violation.function = site.site.qualname
            if suppressions and suppressions.is_suppressed(
                rule.code, ctx.suppression_lines(violation.node, site)
            ):
                continue
            line, col = ctx.position(violation.node)
            found.append(((line, col, rule.code), rule, violation))
    found.sort(key=lambda item: item[0])
    return [(rule, violation) for _, rule, violation in found]


def is_fixable(violation: Violation) -> bool:
    return bool(violation.edits) if violation.fixable is None else violation.fixable


def fix_safety_of(rule: Rule, violation: Violation) -> FixSafety:
    """The safety of this violation's fix: its own if set, else its rule's."""
    return violation.fix_safety if violation.fix_safety is not None else rule.fix_safety


def violation_to_finding(ctx: RuleContext, rule: Rule, violation: Violation) -> Finding:
    line, col = ctx.position(violation.node)
    fixable = is_fixable(violation)
    return Finding(
        path=ctx.path,
        line=line,
        col=col,
        code=rule.code,
        message=violation.message,
        function=violation.function,
        fixable=fixable,
        fix_safety=fix_safety_of(rule, violation) if fixable else "none",
    )


def check_text(
    text: str,
    path: str,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
) -> list[Finding]:
    """Static findings for one file's text (AutosigError if it does not parse).

    Works on ``skeleton(text)``: same lines, irrelevant functions blanked (all but what
    the rules declare they read), same findings at a fraction of libcst's metadata cost;
    runs (and imports) only the rules the text may trigger (``registry.TEXT_NEEDED``).
    """
    rules = select_rules(select, ignore, text=text)
    if not rules:
        return []
    with read_only_visits():  # libcst's visitor passes without their node copies
        ctx = RuleContext.from_text(skeleton(text, skeleton_keeps()), path)
        return [violation_to_finding(ctx, r, v) for r, v in check_context(ctx, rules)]

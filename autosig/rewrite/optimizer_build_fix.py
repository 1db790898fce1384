"""The plan fix ``optimizer_build``: ``optimizer.build(...)`` before the first call.

The plan (``autosig.infer.build_first``) says a function created variables on its
first call and that a build can be written; the edit itself is found again on each
pass's parse (``autosig.analysis.optimizer_build``), since the nodes change between
passes. Once inserted, the next pass finds the optimizer built and adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from autosig.analysis.optimizer_build import OptimizerBuild, plan_optimizer_build
from autosig.infer.plan import FunctionPlan
from autosig.rewrite.plan_fix import (
    UNSAFE_NOT_APPLIED,
    Account,
    AppliedFix,
    FixOptions,
    Outcome,
    PlanFix,
    SiteFix,
)
from autosig.rules.context import RuleContext
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite
from autosig.source.sites import FixSafety
from autosig.source.skeleton import Keep
from autosig.text import plural


class OptimizerBuildFix(PlanFix):
    code = "optimizer_build"
    skeleton_keeps = frozenset({Keep.ATTRIBUTE_WRITERS})
    """Every ``.trainable`` store and ``M.add``/``M.pop`` in the file
    (``analysis/optimizer_build.py`` refuses on them)."""

    def fix_site(
        self, ctx: RuleContext, site: FunctionSite, entry: FunctionPlan, options: FixOptions
    ) -> SiteFix | None:
        build = entry.build_first
        if build is None or build.statement is None or site.function is None:
            return None
        if site.site.qualname in options.untouched:
            return None
        found = plan_optimizer_build(ctx, site.function)
        if not isinstance(found, OptimizerBuild):
            return None  # built already (an earlier pass), or the file changed meanwhile
        why_unsafe = _trainable_elsewhere(ctx)
        if why_unsafe and not options.unsafe_fixes:
            return SiteFix(
                said=f"{entry.qualname} (line {entry.line}): optimizer.build not inserted: "
                f"{UNSAFE_NOT_APPLIED}: {why_unsafe}"
            )
        description = (
            f"{found.describe()}: the optimizer's variables exist before the first call, which "
            f"traced {build.retraces + 1} times for it"
        )
        if why_unsafe:
            description += f" (unsafe: {why_unsafe})"
        violation = Violation(
            node=found.anchor,
            message="optimizer_build",
            edits=dict(found.edits),
            function=site.site.qualname,
        )
        safety: FixSafety = "unsafe" if why_unsafe else "safe"
        fix = AppliedFix(self.code, site.site.qualname, found.line, safety, description)
        return SiteFix(violation, fix)

    def account(self, outcome: Outcome) -> Account | None:
        entry = outcome.entry
        built = (entry.qualname, self.code) in outcome.done
        if built and entry.build_first is not None and entry.build_first.only_cause:
            return Account()  # its only retrace came from the optimizer's variables, built now
        return None

    def label(self, names: Sequence[str]) -> str:
        return f"optimizer.build(...) before the first call of {', '.join(names)}"

    def total(self, count: int) -> str:
        return f"{plural(count, 'optimizer')} built before the first step"


def _trainable_elsewhere(ctx: RuleContext) -> str | None:
    """The build fixes the variable list at set-up; the file itself never changes it
    (``autosig.analysis.optimizer_build``), but a helper in another file that sets
    ``.trainable`` before the first step would make the list the step passes another
    one, which the optimizer, built for the first, then refuses."""
    found = ctx.project_writes.changes("trainable")
    if found is None:
        return None  # text from stdin: no project to look in
    if found.place is not None:
        return (
            f"{found.place} may change `.trainable`: if that runs "
            "between the set-up and the first step, the step passes other variables than "
            "the optimizer was built for"
        )
    if found.unchecked:
        return (
            "not every file of the project could be checked for `.trainable` changes "
            "(too many, too large or unreadable)"
        )
    return None

"""What the kinds that edit a tf.function's own arguments share (``input_signature``,
``reduce_retracing=True``): when the plan's fix may be made at a site, and the static
shape reads the plan rewrites to ``tf.shape()`` with it, so the dimensions they read can
be None. The reads go with the relaxed trace that needs them, or not at all.
"""

from __future__ import annotations

from autosig.infer.plan import FunctionPlan
from autosig.rewrite.dynamic_shape import shape_rewrite_edits
from autosig.rewrite.plan_fix import (
    UNSAFE_NOT_APPLIED,
    Account,
    AppliedFix,
    FixOptions,
    Outcome,
    PlanFix,
    SiteFix,
    answered,
)
from autosig.rewrite.signature import SiteEdit
from autosig.rules.context import RuleContext
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite

RECREATED = (
    "a new tf.function object is created each time (AS106), so it traces anyway; "
    "create it once and profile again"
)


class DecoratorFix(PlanFix):
    """A kind whose plan entries say ``action == code``: ``edit`` and ``description``."""

    def edit(self, ctx: RuleContext, site: FunctionSite, entry: FunctionPlan) -> SiteEdit:
        """The change to the tf.function's arguments."""
        raise NotImplementedError

    def description(self, entry: FunctionPlan) -> str:
        """What the change is, for the summary (its safety is added)."""
        raise NotImplementedError

    def fix_site(
        self, ctx: RuleContext, site: FunctionSite, entry: FunctionPlan, options: FixOptions
    ) -> SiteFix | None:
        if entry.action != self.code:
            return None
        if not options.allows(entry.safety):
            return SiteFix(problem=f"{UNSAFE_NOT_APPLIED}: " + "; ".join(entry.warnings))
        if id(site) in ctx.recreated_sites:
            return SiteFix(problem=RECREATED)
        edit = self._with_shape_reads(ctx, site, entry, self.edit(ctx, site, entry))
        if edit.problem is not None:
            return SiteFix(problem=edit.problem)
        if not edit.changes:
            return None
        violation = Violation(
            node=site.function or site.call or site.tf_reference,
            message=entry.action,
            edits=dict(edit.edits),
            imports=list(edit.imports),
            function=site.site.qualname,
        )
        return SiteFix(violation, self._applied(site, entry, ctx.tf_alias))

    def account(self, outcome: Outcome) -> Account | None:
        if outcome.entry.action != self.code:
            return None
        return answered(outcome)

    @staticmethod
    def _with_shape_reads(
        ctx: RuleContext, site: FunctionSite, entry: FunctionPlan, edit: SiteEdit
    ) -> SiteEdit:
        if edit.problem is not None or not entry.shape_rewrites:
            return edit
        reads = shape_rewrite_edits(ctx, site, entry.shape_rewrites)
        if edit.changes and reads.missing:
            missing = ", ".join(f"`{r.code}` (line {r.line})" for r in reads.missing)
            return SiteEdit(problem=f"the static shape reads to rewrite were not found: {missing}")
        edit.edits.update(reads.edits)
        edit.imports.extend(i for i in reads.imports if i not in edit.imports)
        return edit

    def _applied(self, site: FunctionSite, entry: FunctionPlan, tf: str) -> AppliedFix:
        description = self.description(entry)
        if entry.safety == "unsafe":
            description += " (unsafe: " + "; ".join(entry.warnings) + ")"
        return AppliedFix(
            self.code,
            site.site.qualname,
            site.site.line,
            entry.safety,
            description,
            site.site.col,
            tuple(r.describe(tf) for r in entry.shape_rewrites),
        )

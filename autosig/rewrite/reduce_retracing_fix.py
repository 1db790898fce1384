"""The plan fix ``reduce_retracing``: ``reduce_retracing=True`` where no signature can be
written but a relaxed trace helps (a tensor shape varies and is not read statically)."""

from __future__ import annotations

from collections.abc import Sequence

from autosig.infer.plan import FunctionPlan
from autosig.rewrite.decorator_fix import DecoratorFix
from autosig.rewrite.plan_fix import Account, Outcome
from autosig.rewrite.signature import SiteEdit, reduce_retracing_edit
from autosig.rules.context import RuleContext
from autosig.source.discover import FunctionSite


class ReduceRetracingFix(DecoratorFix):
    code = "reduce_retracing"

    def edit(self, ctx: RuleContext, site: FunctionSite, entry: FunctionPlan) -> SiteEdit:
        return reduce_retracing_edit(ctx, site)

    def description(self, entry: FunctionPlan) -> str:
        why = entry.reasons[0] if entry.reasons else "no signature can be written"
        return f"reduce_retracing=True: {why}"

    def account(self, outcome: Outcome) -> Account | None:
        entry, site = outcome.entry, outcome.site
        said = super().account(outcome)
        if said is not None and (said.lines or said.unfixable):
            return said
        if said is not None:
            why = "; ".join(entry.reasons) or "no signature can be written"
            verb = "gets" if (entry.qualname, self.code) in outcome.done else "has"
            return Account(
                (f"{outcome.name}: {verb} reduce_retracing=True, not a signature: {why}",)
            )
        if site is not None and site.site.has_reduce_retracing and entry.findings:
            # fixed by an earlier run: the same outcome as applying reduce_retracing now
            why = "; ".join(r for r in entry.reasons if "reduce_retracing" not in r)
            return Account((f"{outcome.name}: has reduce_retracing=True, not a signature: {why}",))
        return None

    def label(self, names: Sequence[str]) -> str:
        return f"reduce_retracing=True for {', '.join(names)}"

    def total(self, count: int) -> str:
        return f"{count} reduce_retracing"

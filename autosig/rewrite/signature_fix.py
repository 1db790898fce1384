"""The plan fix ``signature``: ``input_signature=[...]`` of the specs inference planned."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from autosig.infer.plan import FunctionPlan
from autosig.rewrite.decorator_fix import DecoratorFix
from autosig.rewrite.plan_fix import AppliedFix, Section
from autosig.rewrite.signature import SiteEdit, signature_edit
from autosig.rules.context import RuleContext
from autosig.source.discover import FunctionSite
from autosig.text import plural


class SignatureFix(DecoratorFix):
    code = "signature"

    def edit(self, ctx: RuleContext, site: FunctionSite, entry: FunctionPlan) -> SiteEdit:
        return signature_edit(ctx, site, entry.signature_specs)

    def description(self, entry: FunctionPlan) -> str:
        specs = len(entry.signature_specs)
        description = f"input_signature with {specs} spec{'s' if specs != 1 else ''}"
        if entry.calls:
            description += f" from {entry.calls} profiled calls ({entry.traces} traces)"
        return description

    def label(self, names: Sequence[str]) -> str:
        return f"input_signature for {', '.join(names)}"

    def total(self, count: int) -> str:
        return f"{plural(count, 'function')} signed"

    def notes(self, fix: AppliedFix) -> Iterable[tuple[Section, str]]:
        if fix.unsafe:  # reduce_retracing's own line says why
            yield "why", f"{fix.qualname} (line {fix.line}): {fix.description}"

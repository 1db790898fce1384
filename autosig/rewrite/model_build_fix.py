"""The plan fix ``model_build``: a lazily built Keras model built before the first call.

The plan (``autosig.infer.build_first``) says a function created variables on its first
call, that a Keras model or layer it calls on a parameter was made without its inputs,
and the shapes that call had; the edit itself is found again on each pass's parse
(``autosig.analysis.model_build``), since the nodes change between passes. Once
inserted, the next pass finds the model built and adds nothing; ``optimizer_build``
then finds the model built too and builds the optimizer after it.
"""

from __future__ import annotations

from collections.abc import Sequence

from autosig.analysis.model_build import ModelBuildEdit, ModelInput, plan_model_build
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
from autosig.text import plural


class ModelBuildFix(PlanFix):
    code = "model_build"

    def fix_site(
        self, ctx: RuleContext, site: FunctionSite, entry: FunctionPlan, options: FixOptions
    ) -> SiteFix | None:
        build = entry.build_first
        models = build.models if build is not None else None
        if models is None or not models.statements or site.function is None:
            return None
        if site.site.qualname in options.untouched:
            return None
        inputs = {name: ModelInput(tuple(shape), dtype) for name, shape, dtype in models.inputs}
        found = plan_model_build(ctx, site.function, inputs)
        if not isinstance(found, ModelBuildEdit):
            return None  # built already (an earlier pass), or the file changed meanwhile
        if found.unsafe and not options.unsafe_fixes:
            return SiteFix(
                said=f"{entry.qualname} (line {entry.line}): model build not inserted: "
                f"{UNSAFE_NOT_APPLIED}: {found.unsafe}"
            )
        assert build is not None
        description = (
            f"{found.describe()}: the model's variables exist before the first call, which "
            f"traced {build.retraces + 1} times for it"
        )
        if found.unsafe:
            description += f" (unsafe: {found.unsafe})"
        violation = Violation(
            node=found.anchor,
            message="model_build",
            edits=dict(found.edits),
            function=site.site.qualname,
        )
        safety: FixSafety = "unsafe" if found.unsafe else "safe"
        fix = AppliedFix(self.code, site.site.qualname, found.line, safety, description)
        return SiteFix(violation, fix)

    def account(self, outcome: Outcome) -> Account | None:
        entry = outcome.entry
        build = entry.build_first
        built = (entry.qualname, self.code) in outcome.done
        if built and build is not None and build.only_cause and not build.optimizer:
            return Account()  # its only retrace came from building the model, built now
        return None

    def label(self, names: Sequence[str]) -> str:
        return f"Keras model built before the first call of {', '.join(names)}"

    def total(self, count: int) -> str:
        return f"{plural(count, 'model')} built before the first call"

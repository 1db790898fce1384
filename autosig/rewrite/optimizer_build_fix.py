"""The engine's hook for ``optimizer.build(...)``: one plan entry in, one candidate edit out.

The plan (``autosig.infer.build_first``) says a function created variables on its
first call and that a build can be written; the edit itself is found again on each
pass's parse (``autosig.analysis.optimizer_build``), since the nodes change between
passes. Once inserted, the next pass finds the optimizer built and adds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from autosig.analysis.optimizer_build import OptimizerBuild, plan_optimizer_build
from autosig.infer.plan import FunctionPlan
from autosig.rules.context import RuleContext
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite
from autosig.source.skeleton import Keep

OPTIMIZER_BUILD_KEEPS = frozenset({Keep.ATTRIBUTE_WRITERS})
"""What the skeleton ``fix`` parses must keep for this fix: every ``.trainable`` store and
``M.add``/``M.pop`` in the file (``analysis/optimizer_build.py`` refuses on them)."""


@dataclass(frozen=True)
class BuildEdit:
    """The candidate edit, with what the summary says about it."""

    violation: Violation
    line: int
    description: str
    why_unsafe: str | None = None
    """Set when another file of the project may change which variables are trainable."""


def optimizer_build_fix(
    ctx: RuleContext, site: FunctionSite, entry: FunctionPlan
) -> BuildEdit | None:
    """The edit inserting the build for ``site``; None when there is none."""
    build = entry.build_first
    if build is None or build.statement is None or site.function is None:
        return None
    found = plan_optimizer_build(ctx, site.function)
    if not isinstance(found, OptimizerBuild):
        return None  # built already (an earlier pass), or the file changed meanwhile
    description = (
        f"{found.describe()}: the optimizer's variables exist before the first call, which "
        f"traced {build.retraces + 1} times for it"
    )
    violation = Violation(
        node=found.anchor,
        message="optimizer_build",
        edits=dict(found.edits),
        function=site.site.qualname,
    )
    return BuildEdit(violation, found.line, description, _trainable_elsewhere(ctx))


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

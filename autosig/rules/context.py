"""What every rule receives: one file (``FileContext``) and the facts rules share.

As ruff's checker holds the semantic model its rules share, the rule context holds,
each computed at most once per parse and only when asked, the facts several rules and
the fix engine need: ``project_writes`` (what the project's other files write,
inherited from ``FileContext``) and AS106's re-created sites (``recreated``,
``recreated_sites``: AS106 reports them, AS107 and the profile plan leave the ones with
no safe fix alone). So no rule imports another rule.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from autosig.rules.file_context import FileContext
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite

_RECREATING = (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_RECREATING += (cst.FunctionDef, cst.Lambda)
"""Where a tf.function made inside may be made again: loops, comprehensions, functions."""


class RuleContext(FileContext):
    """One parsed file plus everything rules need to inspect and fix it, and the facts
    they share."""

    @cached_property
    def recreated(self) -> list[tuple[FunctionSite, Violation]]:
        """Each tf.function AS106 finds re-created (in a loop, or on every call) with its
        violation and the hoist or per-instance cache that fixes it, when there is one.

        Computed once per parse: AS106, AS107 and the fix engine all ask. A file whose
        tf.functions are all made at module or class level (most) has none: AS106's
        analysis is then not even imported."""
        if not any(self._made_in_a_function_or_loop(site) for site in self.sites):
            return []
        from autosig.rules.as106.sites import recreated_site_violations

        return list(recreated_site_violations(self))

    def _made_in_a_function_or_loop(self, site: FunctionSite) -> bool:
        """Whether the site's creation (a decorated def, or the call) sits in a function,
        a loop or a comprehension before it reaches its class or the module."""
        start = self.parent(site.decorator) if site.decorator is not None else site.call
        if start is None:
            return False
        for ancestor in self.ancestors(start):
            if isinstance(ancestor, _RECREATING):
                return True
            if isinstance(ancestor, (cst.ClassDef, cst.Module)):
                return False
        return False

    @cached_property
    def recreated_sites(self) -> set[int]:
        """ids of the sites AS106 reports with no safe fix: they stay re-created.

        ``reduce_retracing`` or a signature cannot help them (a new object traces anyway),
        so AS107 and the profile plan leave them alone.
        """
        return {
            id(site)
            for site, violation in self.recreated
            if not violation.edits or violation.fix_safety != "safe"
        }

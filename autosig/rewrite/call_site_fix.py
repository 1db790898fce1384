"""The plan fix ``call_site``: the recorded calls of a function no signature can be
written for pass its varying Python values as ``tf.constant`` (``autosig.rewrite.call_sites``
finds each call again and wraps the arguments)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from autosig.infer.plan import FunctionPlan
from autosig.rewrite.call_sites import apply_call_site_edits, call_site_edits, entries_for_file
from autosig.rewrite.edits import apply_edits
from autosig.rewrite.fix_kinds import GUARDED_TRACE
from autosig.rewrite.plan_fix import (
    UNSAFE_NOT_APPLIED,
    Account,
    AppliedFix,
    FileFix,
    FixOptions,
    Outcome,
    PlanFix,
    Section,
)
from autosig.rules.context import RuleContext
from autosig.text import plural


class CallSiteFix(PlanFix):
    code = "call_site"

    def file_entries(self, entries: Sequence[FunctionPlan], path: str) -> list[FunctionPlan]:
        return entries_for_file(entries, path)

    def fix_file(
        self,
        ctx: RuleContext,
        entries: Sequence[FunctionPlan],
        path: str,
        options: FixOptions,
    ) -> FileFix:
        out = FileFix()
        allowed = []
        for entry in entries:
            if options.allows(entry.safety):
                allowed.append(entry)
            else:
                out.left.append(
                    f"calls of {entry.qualname}: not rewritten: {UNSAFE_NOT_APPLIED}: "
                    + "; ".join(entry.warnings)
                )
        edits = call_site_edits(ctx, allowed, path)
        out.already = {
            (o.entry.path, o.entry.qualname)
            for o in edits.outcomes
            if o.problem is None and not o.wrapped
        }
        for outcome in edits.outcomes:
            if outcome.wrapped:
                out.applied.append(
                    AppliedFix(
                        self.code,
                        outcome.entry.qualname,
                        outcome.line,
                        outcome.entry.safety,
                        outcome.describe().split(": ", 1)[1],
                        target=outcome.entry.path,
                    )
                )
            elif outcome.problem is not None:
                out.left.append(outcome.describe())
        for seed in edits.seeds:
            if seed.problem is not None:
                out.left.append(seed.describe())
            elif seed.seed is not None:
                guarded = seed.entry.guarded
                assert guarded is not None
                out.applied.append(
                    AppliedFix(
                        GUARDED_TRACE,
                        seed.entry.qualname,
                        seed.line,
                        seed.entry.safety,
                        f"guarded relaxed trace of `{seed.target}` after line {seed.line}, "
                        f"where the instance is made, not an input_signature: {guarded.why}",
                        target=seed.entry.path,
                    )
                )
        if edits.changes:
            module = apply_call_site_edits(ctx.module, edits, ctx.tf_alias)
            imports = [(i.module, i.obj, i.asname) for i in edits.imports]
            out.new_text = apply_edits(module, {}, imports).code
        return out

    def account(self, outcome: Outcome) -> Account | None:
        entry = outcome.entry
        if entry.call_sites is None:
            return None
        # its callers change instead; the fix command says if none of them could
        why = "; ".join(r for r in entry.reasons if r.startswith("call sites pass"))
        return Account((f"{outcome.name}: no input_signature; {why}",))

    def label(self, names: Sequence[str]) -> str:
        called = Counter(names)
        return "tensors passed at " + ", ".join(
            f"{plural(n, 'call site')} of {fn}" for fn, n in called.items()
        )

    def total(self, count: int) -> str:
        return f"{plural(count, 'call site')} passing tensors"

    def notes(self, fix: AppliedFix) -> Iterable[tuple[Section, str]]:
        yield "where", f"line {fix.line}: {fix.description}" + (" (unsafe)" if fix.unsafe else "")

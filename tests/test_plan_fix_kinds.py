"""The plan-fix interface: a fix kind is one module (here: this one) plus one registry
line, and the engine, its accounting and the summary treat it as they treat the others."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
import pytest

from autosig.infer.plan import FunctionPlan, ParamPlan, Plan
from autosig.infer.specs import TensorSpecNode
from autosig.rewrite import fix_kinds
from autosig.rewrite.engine import FixResult, fix_text
from autosig.rewrite.plan_fix import Account, AppliedFix, FixOptions, Outcome, PlanFix, SiteFix
from autosig.rewrite.summary import file_summary, total_summary
from autosig.rules.as107_no_signature import append_arg
from autosig.rules.context import RuleContext
from autosig.rules.registry import select_rules
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite

WANTED = "compile it with XLA"


class JitCompileFix(PlanFix):
    """A test-only kind: ``jit_compile=True`` where the plan's reasons ask for it."""

    code = "jit_compile"

    def fix_site(
        self, ctx: RuleContext, site: FunctionSite, entry: FunctionPlan, options: FixOptions
    ) -> SiteFix | None:
        if WANTED not in entry.reasons:
            return None
        keyword = cst.Arg(
            keyword=cst.Name("jit_compile"),
            value=cst.Name("True"),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
        if _compiled(site):
            return None  # done (an earlier pass or run)
        if site.call is not None:
            node: cst.CSTNode = site.call
            new: cst.CSTNode = site.call.with_changes(args=append_arg(site.call, keyword))
        elif site.decorator is not None:
            node = site.decorator
            new = site.decorator.with_changes(
                decorator=cst.Call(func=site.decorator.decorator, args=[keyword])
            )
        else:
            return SiteFix(problem="no tf.function decorator or call to edit")
        violation = Violation(
            node=node, message=self.code, edits={node: new}, function=entry.qualname
        )
        fix = AppliedFix(self.code, site.site.qualname, site.site.line, "safe", "jit_compile=True")
        return SiteFix(violation, fix)

    def account(self, outcome: Outcome) -> Account | None:
        if WANTED not in outcome.entry.reasons:
            return None
        if (outcome.entry.qualname, self.code) in outcome.done or _compiled(outcome.site):
            return Account()
        return Account((f"{outcome.name}: not compiled: {outcome.problem or 'no site'}",), True)

    def label(self, names: Sequence[str]) -> str:
        return f"jit_compile=True for {', '.join(names)}"

    def total(self, count: int) -> str:
        return f"{count} compiled"


def _compiled(site: FunctionSite | None) -> bool:
    call = site.call if site is not None else None
    return call is not None and any(
        a.keyword is not None and a.keyword.value == "jit_compile" for a in call.args
    )


SOURCE = """\
import tensorflow as tf


@tf.function
def step(x):
    return x * 2


@tf.function
def other(x):
    return x
"""

COMPILE = FunctionPlan("m.py", "other", 9, "none", reasons=(WANTED,), calls=2, traces=2)
SIGNED_AND_COMPILED = FunctionPlan(
    "m.py",
    "step",
    4,
    "signature",
    (ParamPlan("x", TensorSpecNode((None,), "float32"), "2 calls"),),
    reasons=(WANTED,),
    calls=2,
    traces=2,
)


def register(monkeypatch: pytest.MonkeyPatch, applies: int) -> None:
    """The one registry line."""
    line = fix_kinds.KindEntry("jit_compile", __name__, "JitCompileFix", applies, 0)
    monkeypatch.setattr(fix_kinds, "PLAN_FIXES", (*fix_kinds.PLAN_FIXES, line))


def fix(text: str, *entries: FunctionPlan) -> FixResult:
    return fix_text(
        text, "m.py", plan=Plan(list(entries)), rules=select_rules(), unsafe_fixes=False
    )


def test_a_new_kind_is_applied_reported_and_idempotent(monkeypatch: pytest.MonkeyPatch) -> None:
    register(monkeypatch, applies=3)
    result = fix(SOURCE, COMPILE)
    assert "@tf.function(jit_compile=True)\ndef other" in result.new_text
    assert [f.code for f in result.applied if f.from_profile] == ["jit_compile"]
    assert "m.py: would fix: jit_compile=True for other" in file_summary(result, written=False)[0]
    assert "1 compiled" in total_summary([result], written=True)
    again = fix(result.new_text, COMPILE)
    assert not again.changed and again.applied == [] and again.left == []


def test_precedence_is_the_registry_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two kinds editing the same decorator: the one of lower precedence waits a pass."""
    register(monkeypatch, applies=3)  # after the signature
    after = fix(SOURCE, SIGNED_AND_COMPILED).new_text
    assert (
        "input_signature=[tf.TensorSpec(shape=[None], dtype=tf.float32)], jit_compile=True" in after
    )
    register(monkeypatch, applies=0)  # before it
    before = fix(SOURCE, SIGNED_AND_COMPILED).new_text
    assert "(jit_compile=True, input_signature=[" in before


def test_a_new_kind_speaks_for_what_it_left(monkeypatch: pytest.MonkeyPatch) -> None:
    register(monkeypatch, applies=3)
    moved = FunctionPlan("m.py", "gone", 30, "none", reasons=(WANTED,), calls=2, traces=2)
    result = fix(SOURCE, moved)
    assert "gone (line 30): not compiled: no site" in result.left


def test_without_its_line_the_kind_does_nothing() -> None:
    result = fix(SOURCE, COMPILE)
    assert "jit_compile" not in result.new_text

"""A method's guarded relaxed trace, seeded in its caller's file.

Where the plan pairs a method's guarded trace with call-site tensors
(``GuardedTrace.at_instances``: ``infer/paired_trace.py``), the seeding statement goes
right after the statement making the instance of each recorded call
(``analysis/instance_bindings.py``):

    dream = model.DeepDream(feature_model(1))
    try:  # autosig: guarded relaxed trace: other calls trace as before
        dream.__call__.get_concrete_function(...)
    except Exception:  # specs the code cannot trace: nothing seeded
        pass

one per binding, however many recorded calls go through it. A seed already there (an
earlier run) is kept as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from autosig.analysis.instance_bindings import InstanceBinding, Refused, instance_binding
from autosig.infer.plan import FunctionPlan
from autosig.infer.specs import render_spec
from autosig.rewrite.guarded_trace_fix import seeding_text
from autosig.rules.context import RuleContext


@dataclass(frozen=True)
class InstanceSeed:
    """One seed for one planned method in this file, or why it cannot be written."""

    entry: FunctionPlan
    line: int
    """The binding's last line (the seed goes after it), or the call's line."""
    target: str = ""
    """What ``get_concrete_function`` is called on: ``dream.__call__``."""
    statement: cst.SimpleStatementLine | None = None
    """The binding statement the seed follows (None: already seeded, or a problem)."""
    seed: cst.BaseStatement | None = None
    problem: str | None = None
    changes: bool = False
    """The problem is the caller changing what the trace reads (``Refused.changes``)."""

    def describe(self) -> str:
        if self.problem is not None:
            return (
                f"line {self.line}: no guarded relaxed trace for {self.entry.qualname}: "
                f"{self.problem}"
            )
        return f"line {self.line}: seeds `{self.target}` with a guarded relaxed trace"


def method_parts(qualname: str) -> tuple[str, str]:
    """``("DeepDream", "__call__")`` for ``DeepDream.__call__``."""
    parts = qualname.split(".")
    return (parts[-2] if len(parts) > 1 else ""), parts[-1]


def instance_seeds(
    ctx: RuleContext, entry: FunctionPlan, calls: Sequence[tuple[int, cst.Call]]
) -> list[InstanceSeed]:
    """The seeds for ``entry``'s recorded ``calls`` (line, call) of this file."""
    class_name, method = method_parts(entry.qualname)
    out: list[InstanceSeed] = []
    done: set[int] = set()
    for line, call in calls:
        found = instance_binding(ctx, call, method, class_name)
        if isinstance(found, Refused):
            out.append(InstanceSeed(entry, line, problem=found.why, changes=found.changes))
            continue
        if id(found.statement) in done:
            continue
        done.add(id(found.statement))
        target = f"{found.name}.{method}"
        if found.seeded:
            out.append(InstanceSeed(entry, found.line, target))
            continue
        if ctx.enclosing_function(found.statement) is None and not ctx.tf_bound_before(
            found.statement
        ):
            problem = "TensorFlow is imported only after the module-level line making it"
            out.append(InstanceSeed(entry, found.line, target, problem=problem))
            continue
        out.append(
            InstanceSeed(
                entry, found.line, target, found.statement, _seed(ctx, entry, found, target)
            )
        )
    return out


def _seed(
    ctx: RuleContext, entry: FunctionPlan, binding: InstanceBinding, target: str
) -> cst.BaseStatement:
    specs = [render_spec(spec, ctx.tf_alias) for spec in entry.signature_specs]
    config = ctx.module.config_for_parsing
    depth = 1 + sum(isinstance(a, cst.IndentedBlock) for a in ctx.ancestors(binding.statement))
    return cst.parse_statement(
        seeding_text(target, specs, config.default_indent, depth=depth), config=config
    )

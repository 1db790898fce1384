"""The plan fix ``guarded_trace``: one ``f.get_concrete_function(<specs>)`` after setup.

The plan (``autosig.infer.guarded_trace``) chose it where an ``input_signature`` would
narrow what the original accepts beyond what the profile shows. The seeding call goes
where ``autosig.infer.guarded_trace_placement`` says (found again on each pass's parse:
the nodes change between passes), in ``try``/``except Exception`` so a relaxed trace
the code cannot build leaves the function as before. Once inserted, the next pass finds
it and adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from autosig.infer.guarded_trace_placement import MARK, Placement, Seeded, place_seeding
from autosig.infer.plan import FunctionPlan
from autosig.infer.specs import render_spec
from autosig.rewrite.decorator_fix import RECREATED
from autosig.rewrite.plan_fix import (
    UNSAFE_NOT_APPLIED,
    Account,
    AppliedFix,
    FixOptions,
    Outcome,
    PlanFix,
    Section,
    SiteFix,
    answered,
)
from autosig.rules.context import RuleContext
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite
from autosig.text import plural

LINE_LIMIT = 88


def seeding_text(
    target: str,
    specs: Sequence[str],
    indent: str = "    ",
    depth: int = 1,
    own_class: bool = False,
) -> str:
    """The statement, unindented: ``try: <target>.get_concrete_function(...) except ...``
    (``depth``: the blocks around the call, for the line limit).

    A method's call in its own ``__init__`` (``own_class``) is guarded by ``type(self) is
    __class__`` inside the ``try``: ``__class__`` is the cell the compiler makes for a
    method that names it, bound to the class the ``def`` is in even when the class's
    name is not visible from its methods (a nested class) or is rebound later; the guard
    inside the ``try`` cannot escape."""
    one_line = f"{target}.get_concrete_function({', '.join(specs)})"
    if len(one_line) + len(indent) * (depth + 1) > LINE_LIMIT:
        inner = "".join(f"{indent}{spec},\n" for spec in specs)
        call = f"{target}.get_concrete_function(\n{inner})"
    else:
        call = one_line
    body = [f"{indent}{line}" if line else line for line in call.splitlines()]
    if own_class:
        own = target.split(".", 1)[0]
        body = [
            f"{indent}if type({own}) is __class__:  # subclasses trace as before",
            *(f"{indent}{line}" if line else line for line in body),
        ]
    lines = [
        f"try:  # {MARK}: other calls trace as before",
        *body,
        "except Exception:  # specs the code cannot trace: nothing seeded",
        f"{indent}pass",
    ]
    return "\n".join(lines) + "\n"


class GuardedTraceFix(PlanFix):
    code = "guarded_trace"

    def file_entries(self, entries: Sequence[FunctionPlan], path: str) -> list[FunctionPlan]:
        """Its entries in the file: the placement reads the whole module (every top-level
        binding, ``__init__`` and the defs the function reaches), so the engine parses
        the whole file, not the skeleton ``check`` cuts (``fix_file`` does nothing)."""
        return [e for e in entries if e.action == self.code and e.path == path]

    def fix_site(
        self, ctx: RuleContext, site: FunctionSite, entry: FunctionPlan, options: FixOptions
    ) -> SiteFix | None:
        if entry.action != self.code or site.function is None:
            return None
        if entry.seeded_at_instances:
            return None  # the callers' files get it (``instance_seeds``)
        if site.site.qualname in options.untouched:
            return None
        if not options.allows(entry.safety):
            return SiteFix(
                problem=f"guarded relaxed trace: {UNSAFE_NOT_APPLIED}: " + "; ".join(entry.warnings)
            )
        if id(site) in ctx.recreated_sites:
            return SiteFix(problem=RECREATED)
        placement = place_seeding(ctx, site.function)
        if isinstance(placement, Seeded):
            return None  # an earlier pass or run wrote it
        if not isinstance(placement, Placement):
            return SiteFix(problem=f"no place for the seeding call: {placement.reason}")
        tf = ctx.tf_alias
        specs = [render_spec(spec, tf) for spec in entry.signature_specs]
        config = ctx.module.config_for_parsing
        statement = cst.parse_statement(
            seeding_text(
                placement.target,
                specs,
                config.default_indent,
                # a method's call is nested class + def + try + if (a function's: as before)
                depth=3 if placement.init is not None else 1,
                own_class=placement.init is not None,
            ),
            config=config,
        )
        if placement.init is not None:
            body = placement.init.body
            assert isinstance(body, cst.IndentedBlock)
            anchor: cst.CSTNode = body.body[-1]
        else:
            assert placement.anchor is not None
            anchor = placement.anchor
            blank = cst.EmptyLine(indent=False)
            statement = statement.with_changes(leading_lines=[blank, blank])
        violation = Violation(
            node=anchor,
            message=self.code,
            edits={anchor: cst.FlattenSentinel([anchor, statement])},  # type: ignore[dict-item]
            imports=list(ctx.tf_imports()),
            function=site.site.qualname,
        )
        description = (
            f"guarded relaxed trace {placement.describe()}, not an input_signature "
            f"({plural(len(specs), 'spec')}"
            + (f" from {entry.calls} profiled calls, {entry.traces} traces" if entry.calls else "")
            + f"): {entry.guarded.why if entry.guarded else ''}"
        )
        fix = AppliedFix(
            self.code, site.site.qualname, site.site.line, entry.safety, description, site.site.col
        )
        return SiteFix(violation, fix)

    def account(self, outcome: Outcome) -> Account | None:
        if outcome.entry.action != self.code:
            return None
        if outcome.entry.seeded_at_instances:
            assert outcome.entry.guarded is not None
            return Account(
                (
                    f"{outcome.name}: its guarded relaxed trace is seeded "
                    f"{outcome.entry.guarded.where}; "
                    "the call sites pass its Python numbers as tensors",
                )
            )
        said = answered(outcome)
        if said.lines or said.unfixable:
            return said
        if (outcome.entry.qualname, self.code) not in outcome.done:
            return Account((f"{outcome.name}: has its guarded relaxed trace already",))
        return Account()

    def label(self, names: Sequence[str]) -> str:
        return f"guarded relaxed trace for {', '.join(names)}"

    def total(self, count: int) -> str:
        return f"{plural(count, 'function')} seeded with a guarded relaxed trace"

    def notes(self, fix: AppliedFix) -> Iterable[tuple[Section, str]]:
        yield "why", f"{fix.qualname} (line {fix.line}): {fix.description}"

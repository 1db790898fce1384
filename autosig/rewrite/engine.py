"""The fix engine: one file's text in, its fixed text and an account of every change out.

Pure (no I/O, no TensorFlow): ``autosig fix`` and the verifier call the same function.
Two sources of fixes meet here, looped over alike: the static rules' own edits (safe
ones, unsafe ones only on request) and the plan fix kinds' (``autosig.rewrite.fix_kinds``:
an ``input_signature``, ``reduce_retracing=True``, call-site tensors,
``optimizer.build(...)``), in the registry's precedence. Plan entries are matched to the file's sites
once, on the original text, so later passes find the same functions even when earlier
edits moved lines. Fixes that overlap are applied in later passes until a pass changes
nothing; like black, the engine then refuses output that does not parse or that a
further pass would change again, rather than write it.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from autosig.errors import AutosigError
from autosig.infer.plan import FunctionPlan, Plan
from autosig.rewrite import fix_kinds
from autosig.rewrite.edits import Replacement, apply_edits, nested_edit_keys
from autosig.rewrite.plan_fix import AppliedFix, FixOptions, Outcome, PlanFix
from autosig.rules.base import Rule
from autosig.rules.context import RuleContext
from autosig.rules.registry import select_rules, skeleton_keeps
from autosig.rules.run import (
    check_context,
    fix_safety_of,
    is_fixable,
    violation_to_finding,
)
from autosig.rules.violation import Violation
from autosig.source.discover import FunctionSite
from autosig.source.sites import Finding
from autosig.source.skeleton import marked_skeleton

MAX_PASSES = 3
"""Passes that may change the text; one more must then change nothing."""

SiteKey = tuple[str, int]
"""(qualname, ordinal among the file's sites of that qualname): stable across passes."""

__all__ = ["AppliedFix", "FixResult", "combine_edits", "fix_rules", "fix_text"]


@dataclass
class FixResult:
    """The outcome for one file."""

    path: str
    new_text: str
    changed: bool
    applied: list[AppliedFix] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    """What was not fixed and why, one readable line each."""
    findings: list[Finding] = field(default_factory=list)
    """Findings that remain in the new text (static) or in functions left unfixed (profile)."""
    stale: list[str] = field(default_factory=list)
    """Functions refused because they changed since profiling (and have no fix yet)."""
    withheld: list[str] = field(default_factory=list)
    """Why the rewrite of this file is not written (``fix --verify`` failed on it)."""
    call_sites_already: set[tuple[str, str]] = field(default_factory=set)
    """(function path, qualname) of call-site plans with a call in this file that already
    passes tensors as planned (rewritten ones are in ``applied``)."""

    @property
    def unfixed(self) -> int:
        """Problems still open after the fix: drives ``autosig fix``'s exit code."""
        return len(self.findings) + len(self.stale) + len(self.withheld)

    def count(self, code: str) -> int:
        return sum(1 for fix in self.applied if fix.code == code)


def fix_text(
    text: str,
    path: str,
    *,
    plan: Plan | None,
    rules: Sequence[Rule],
    unsafe_fixes: bool,
    profile_path_of: str | None = None,
    untouched: frozenset[str] = frozenset(),
) -> FixResult:
    """Fix one file's ``text``; ``path`` names it in findings and errors.

    ``rules`` are the selected static rules (their fixes are applied when safe, or when
    unsafe and ``unsafe_fixes``). ``plan`` entries apply when their path equals
    ``profile_path_of`` (the file's path relative to the profile's project root;
    default ``path``). Static fixes inside the functions (qualnames) in ``untouched``
    are not applied (``fix --verify`` drops a change that did not verify). Raises AutosigError naming ``path`` if the text does not parse,
    or if the fixed text would not parse or would change again on another pass.

    Parses only the file's marked skeleton (the defs that cannot hold a site cut out,
    as ``check`` does) and puts the cut lines back; the whole file is parsed only if
    that cannot be done exactly: libcst's metadata, paid per line and pass, is most
    of static ``fix``'s time.
    """
    plan_path = profile_path_of if profile_path_of is not None else path
    entries = [f for f in plan.functions if f.path == plan_path] if plan is not None else []
    calls = _file_entries(plan, plan_path)
    options = FixOptions(unsafe_fixes, untouched)
    # recorded calls may be anywhere in the file: only the whole file holds them all
    keeps = skeleton_keeps() | fix_kinds.skeleton_keeps()
    cut = marked_skeleton(text, keeps) if not calls else None
    if cut is not None:
        try:
            result = _fix_whole(cut.text, path, entries, rules, options)
        except AutosigError:
            result = None  # a quirk of the cut text: the whole file decides
        restored = cut.restore(result.new_text) if result is not None else None
        if restored is not None and (restored == text or _python_parses(restored)):
            result.new_text = restored
            result.changed = restored != text
            return result
    return _fix_whole(text, path, entries, rules, options, calls=calls, plan_path=plan_path)


def fix_rules(
    text: str,
    path: str,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] | None = None,
    unsafe: bool = False,
) -> tuple[str, list[Finding]]:
    """Static fixes only: the selected rules' fixes (unsafe ones with ``unsafe``) made by
    the same loop as ``autosig fix`` without a profile; returns (new text, the fixes made).

    The rules' documented examples are checked through this, so what a rule's docs show
    is what ``fix`` writes.
    """
    rules = select_rules(select, ignore)
    result = fix_text(text, path, plan=None, rules=rules, unsafe_fixes=unsafe)
    return result.new_text, [fix.finding(path) for fix in result.applied]


def _fix_whole(
    text: str,
    path: str,
    entries: list[FunctionPlan],
    rules: Sequence[Rule],
    options: FixOptions,
    *,
    calls: Sequence[tuple[PlanFix, list[FunctionPlan]]] = (),
    plan_path: str = "",
) -> FixResult:
    ctx = RuleContext.from_text(text, path)
    if ctx.module.code != text:
        # libcst 1.9 drops blank lines before a final indented comment: never let a
        # parser quirk change lines no fix meant to touch
        raise AutosigError(
            "libcst cannot reproduce this file byte for byte (blank lines before an "
            "indented comment at its end?); skipped so that nothing changes unintentionally",
            path,
        )
    # the recorded calls first, at the lines the profile recorded; then everything else
    applied: list[AppliedFix] = []
    calls_left: list[str] = []
    already: set[tuple[str, str]] = set()
    for kind, kind_entries in calls:
        done = kind.fix_file(ctx, kind_entries, plan_path, options)
        applied.extend(done.applied)
        calls_left.extend(done.left)
        already |= done.already
        if done.new_text is not None:
            ctx = _reparse(done.new_text, text, path)
    matched, unmatched = _match_plan(ctx.sites, entries)
    # a tf.function re-created in a loop traced once per object: the profile cannot say
    # how the one object AS106's hoist leaves will trace, so AS107 still judges it
    keyed = _keyed_sites(ctx.sites)
    static_keys = {key for key in matched if key in keyed and keyed[key].site.in_loop}
    current = ctx.text
    for passes in range(MAX_PASSES + 1):
        step = _one_pass(ctx, matched, rules, options, static_keys)
        if step.new_text == current:
            break
        if passes == MAX_PASSES:
            raise AutosigError(
                f"fixes did not settle after {MAX_PASSES} passes (still changing "
                f"{', '.join(sorted({fix.code for fix in step.applied}))}); nothing written. "
                "Please report this as an autosig bug",
                path,
            )
        applied.extend(step.applied)
        current = step.new_text
        ctx = _reparse(current, text, path)
    result = FixResult(path=path, new_text=current, changed=current != text, applied=applied)
    result.left.extend(calls_left)
    result.left.extend(step.said)
    result.call_sites_already = already
    _account_static(result, ctx, step.remaining)
    # the last pass's problems: an earlier one may have been solved since (a hoist
    # lets the plan apply to a site that was re-created in the pass before)
    _account_plan(result, _keyed_sites(ctx.sites), matched, unmatched, step.problems)
    return result


def _file_entries(plan: Plan | None, path: str) -> list[tuple[PlanFix, list[FunctionPlan]]]:
    """The kinds that rewrite recorded calls in the file ``path``, with their entries."""
    if plan is None:
        return []
    found = [(kind, kind.file_entries(plan.functions, path)) for kind in fix_kinds.kinds()]
    return [(kind, entries) for kind, entries in found if entries]


# -- one pass ----------------------------------------------------------------------------


@dataclass
class _Pass:
    new_text: str
    applied: list[AppliedFix]
    problems: dict[tuple[SiteKey, str], str]
    """(site, kind's code) -> why the plan's fix was not made there."""
    remaining: list[tuple[Rule, Violation]]
    """Rule violations found in this pass's input (all of them, fixed or not)."""
    said: list[str] = field(default_factory=list)
    """Lines the kinds said about what they left, in order."""


PLAN_DECIDES = frozenset({"AS107"})
"""Rules that only guess without a profile: where the plan speaks for a site, its plan
decides and their findings and edits there are dropped."""


def _one_pass(
    ctx: RuleContext,
    matched: dict[SiteKey, FunctionPlan],
    rules: Sequence[Rule],
    options: FixOptions,
    static_keys: frozenset[SiteKey] | set[SiteKey] = frozenset(),
) -> _Pass:
    candidates: list[Violation] = []
    labels: list[AppliedFix] = []
    problems: dict[tuple[SiteKey, str], str] = {}
    said: list[str] = []
    planned_nodes: set[int] = set()
    decided: set[str] = set()
    """Functions whose profile plan speaks for them (AS107 only guesses without one)."""
    sites = [
        (key, site, entry)
        for key, site in _keyed_sites(ctx.sites).items()
        if (entry := matched.get(key)) is not None and not entry.stale
    ]
    for key, site, entry in sites:
        if key in static_keys and entry.action == "none":
            continue
        planned_nodes.update(id(n) for n in (site.decorator, site.call) if n is not None)
        decided.add(site.site.qualname)
    for group in fix_kinds.by_precedence():
        for key, site, entry in sites:
            for kind in group:
                done = kind.fix_site(ctx, site, entry, options)
                if done is None:
                    continue
                if done.problem is not None:
                    problems[(key, kind.code)] = done.problem
                if done.said is not None:
                    said.append(done.said)
                if done.violation is not None and done.fix is not None:
                    candidates.append(done.violation)
                    labels.append(done.fix)
    pairs = [
        (rule, violation)
        for rule, violation in check_context(ctx, rules)
        if not (rule.code in PLAN_DECIDES and violation.function in decided)
    ]
    for rule, violation in pairs:
        safety = fix_safety_of(rule, violation)
        if not is_fixable(violation) or not options.allows(safety):
            continue
        if violation.function in options.untouched:
            continue
        if any(id(node) in planned_nodes for node in violation.edits):
            continue  # AS107's reduce_retracing on a site the plan decides
        line, col = ctx.position(violation.node)
        candidates.append(violation)
        labels.append(
            AppliedFix(rule.code, violation.function, line, safety, violation.message, col)
        )
    edits, imports, taken = combine_edits(candidates)
    if not taken:
        return _Pass(ctx.text, [], problems, pairs, said)
    new_text = apply_edits(ctx.module, edits, imports).code
    return _Pass(new_text, [labels[i] for i in taken], problems, pairs, said)


def combine_edits(
    violations: Iterable[Violation],
) -> tuple[dict[cst.CSTNode, Replacement], list[tuple[str, str | None, str | None]], list[int]]:
    """Merge the edits of ``violations`` that can be applied together.

    Returns (edits, imports, indexes of the violations taken). A violation whose
    edits lie inside (or around) edits already taken, or that replaces the same node
    differently, is left for the next pass, when it is found again in the new source.
    """
    module = cst.Module(body=[])
    edits: dict[cst.CSTNode, Replacement] = {}
    imports: list[tuple[str, str | None, str | None]] = []
    taken: list[int] = []
    for index, violation in enumerate(violations):
        if not violation.edits or not is_fixable(violation):
            continue
        clash = False
        for node, replacement in violation.edits.items():
            if node in edits and not _same(module, edits[node], replacement):
                clash = True
        trial = {**edits, **violation.edits}
        if clash or nested_edit_keys(trial):
            continue
        edits = trial
        imports.extend((i.module, i.obj, i.asname) for i in violation.imports)
        taken.append(index)
    return edits, imports, taken


def _same(module: cst.Module, a: Replacement, b: Replacement) -> bool:
    if isinstance(a, cst.CSTNode) and isinstance(b, cst.CSTNode):
        return module.code_for_node(a) == module.code_for_node(b)
    return a is b


def _reparse(new_text: str, original: str, path: str) -> RuleContext:
    """Parse fixed text; failing to is autosig's bug, reported without writing anything."""
    try:
        ctx = RuleContext.from_text(new_text, path)
        if _python_parses(original):
            ast.parse(new_text)
    except (AutosigError, SyntaxError) as exc:
        detail = exc.message if isinstance(exc, AutosigError) else str(exc)
        raise AutosigError(
            f"the fixed source would not parse ({detail}); nothing written. "
            "Please report this as an autosig bug",
            path,
        ) from None
    return ctx


def _python_parses(text: str) -> bool:
    """Whether this Python can compile ``text`` (libcst accepts some syntax it cannot)."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


# -- plan entries <-> sites ----------------------------------------------------------------


def _keyed_sites(sites: Sequence[FunctionSite]) -> dict[SiteKey, FunctionSite]:
    seen: dict[str, int] = {}
    keyed: dict[SiteKey, FunctionSite] = {}
    for site in sites:
        ordinal = seen.get(site.site.qualname, 0)
        seen[site.site.qualname] = ordinal + 1
        keyed[(site.site.qualname, ordinal)] = site
    return keyed


def _match_plan(
    sites: Sequence[FunctionSite], entries: Sequence[FunctionPlan]
) -> tuple[dict[SiteKey, FunctionPlan], list[FunctionPlan]]:
    """Each plan entry to at most one site: same qualname and line, else the only one."""
    keyed = _keyed_sites(sites)
    matched: dict[SiteKey, FunctionPlan] = {}
    unmatched: list[FunctionPlan] = []
    for entry in entries:
        same_name = [key for key in keyed if key[0] == entry.qualname and key not in matched]
        exact = [key for key in same_name if keyed[key].site.line == entry.line]
        everywhere = [key for key in keyed if key[0] == entry.qualname]
        if exact:
            matched[exact[0]] = entry
        elif len(everywhere) == 1 and same_name:
            matched[same_name[0]] = entry
        else:
            unmatched.append(entry)
    return matched, unmatched


# -- what is left -------------------------------------------------------------------------


def _account_static(
    result: FixResult, ctx: RuleContext, remaining: list[tuple[Rule, Violation]]
) -> None:
    for rule, violation in remaining:
        finding = violation_to_finding(ctx, rule, violation)
        result.findings.append(finding)
        if finding.fixable and finding.fix_safety == "unsafe":
            why = "unsafe fix, not applied without --unsafe-fixes"
        elif finding.fixable:
            why = "its fix changes nothing here"
        else:
            why = "no automatic fix"
        result.left.append(f"line {finding.line}: {finding.code} {finding.message} ({why})")


def _account_plan(
    result: FixResult,
    sites: dict[SiteKey, FunctionSite],
    matched: dict[SiteKey, FunctionPlan],
    unmatched: list[FunctionPlan],
    problems: dict[tuple[SiteKey, str], str],
) -> None:
    """What is left of each plan entry: stale ones refused, then the first kind that
    answers for the entry (``fix_kinds``' order) speaks for it; else its findings stay."""
    done = frozenset((fix.qualname, fix.code) for fix in result.applied if fix.from_profile)
    entries = [(key, entry) for key, entry in matched.items()] + [(None, e) for e in unmatched]
    answering = fix_kinds.answering()
    for key, entry in sorted(entries, key=lambda item: item[1].line):
        name = f"{entry.qualname} (line {entry.line})"
        site = sites.get(key) if key is not None else None
        if entry.stale:
            reason = entry.reasons[0] if entry.reasons else "changed since it was profiled"
            if site is not None and (
                site.site.has_input_signature or site.site.has_reduce_retracing
            ):
                # already fixed (by an earlier run): the profile is old, nothing is open
                result.left.append(f"{name}: profile not used: {reason}")
            else:
                result.left.append(f"{name}: not fixed: {reason}")
                result.stale.append(entry.qualname)
            continue
        for kind in answering:
            problem = problems.get((key, kind.code)) if key is not None else None
            account = kind.account(Outcome(entry, key is not None, site, problem, done))
            if account is not None:
                result.left.extend(account.lines)
                if account.unfixable:
                    result.findings.extend(_unfixable(entry, result.path))
                break
        else:
            if entry.findings:
                why = "; ".join(entry.reasons) or "nothing autosig can change"
                result.left.append(f"{name}: not fixed: {why}")
                result.findings.extend(_unfixable(entry, result.path))


def _unfixable(entry: FunctionPlan, path: str) -> list[Finding]:
    return [
        dataclasses.replace(f, path=path, fixable=False, fix_safety="none") for f in entry.findings
    ]

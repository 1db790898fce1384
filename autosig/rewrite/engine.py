"""The fix engine: one file's text in, its fixed text and an account of every change out.

Pure (no I/O, no TensorFlow): ``autosig fix`` and the verifier call the same function.
Two sources of fixes meet here: the static rules' own edits (safe ones, unsafe ones
only on request) and the profile plan's (an ``input_signature`` or
``reduce_retracing=True`` per function). Plan entries are matched to the file's sites
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
from autosig.rewrite.call_sites import (
    apply_call_site_edits,
    call_site_edits,
    entries_for_file,
)
from autosig.rewrite.dynamic_shape import shape_rewrite_edits
from autosig.rewrite.edits import Replacement, apply_edits, nested_edit_keys
from autosig.rewrite.optimizer_build_fix import OPTIMIZER_BUILD_KEEPS, optimizer_build_fix
from autosig.rewrite.signature import SiteEdit, reduce_retracing_edit, signature_edit
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
from autosig.source.sites import Finding, FixSafety
from autosig.source.skeleton import marked_skeleton

MAX_PASSES = 3
"""Passes that may change the text; one more must then change nothing."""

SIGNATURE = "signature"
REDUCE_RETRACING = "reduce_retracing"
CALL_SITE = "call_site"
OPTIMIZER_BUILD = "optimizer_build"

RECREATED = (
    "a new tf.function object is created each time (AS106), so it traces anyway; "
    "create it once and profile again"
)

SiteKey = tuple[str, int]
"""(qualname, ordinal among the file's sites of that qualname): stable across passes."""


@dataclass(frozen=True)
class AppliedFix:
    """One change the engine made, for the summary, the diff header and the verifier."""

    code: str
    """Rule code (``AS101``), or ``signature`` / ``reduce_retracing`` / ``call_site`` /
    ``optimizer_build`` from the profile plan."""
    qualname: str | None
    line: int
    safety: FixSafety
    description: str
    col: int = 1
    details: tuple[str, ...] = ()
    """More lines for the summary (the shape reads rewritten with a signature)."""
    target: str | None = None
    """For ``call_site``: the profile path of the function called (``qualname``)."""

    @property
    def unsafe(self) -> bool:
        return self.safety == "unsafe"

    @property
    def from_profile(self) -> bool:
        return self.code in (SIGNATURE, REDUCE_RETRACING, CALL_SITE, OPTIMIZER_BUILD)

    def finding(self, path: str) -> Finding:
        """This fix as the finding it fixed (a fixable one, of its safety)."""
        return Finding(
            path=path,
            line=self.line,
            col=self.col,
            code=self.code,
            message=self.description,
            function=self.qualname,
            fixable=True,
            fix_safety=self.safety,
        )


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
    callers = entries_for_file(plan.functions, plan_path) if plan is not None else []
    # recorded call sites may be anywhere in the file: only the whole file holds them all
    cut = marked_skeleton(text, skeleton_keeps() | OPTIMIZER_BUILD_KEEPS) if not callers else None
    if cut is not None:
        try:
            result = _fix_whole(cut.text, path, entries, rules, unsafe_fixes, untouched)
        except AutosigError:
            result = None  # a quirk of the cut text: the whole file decides
        restored = cut.restore(result.new_text) if result is not None else None
        if restored is not None and (restored == text or _python_parses(restored)):
            result.new_text = restored
            result.changed = restored != text
            return result
    return _fix_whole(
        text, path, entries, rules, unsafe_fixes, untouched, callers=callers, plan_path=plan_path
    )


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
    unsafe_fixes: bool,
    untouched: frozenset[str] = frozenset(),
    *,
    callers: Sequence[FunctionPlan] = (),
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
    # call sites first, at the lines the profile recorded; then everything else
    ctx, site_fixes, site_left, site_done = _call_site_pass(
        ctx, callers, plan_path, unsafe_fixes, text
    )
    matched, unmatched = _match_plan(ctx.sites, entries)
    # a tf.function re-created in a loop traced once per object: the profile cannot say
    # how the one object AS106's hoist leaves will trace, so AS107 still judges it
    keyed = _keyed_sites(ctx.sites)
    static_keys = {key for key in matched if key in keyed and keyed[key].site.in_loop}
    applied: list[AppliedFix] = list(site_fixes)
    current = ctx.text
    for passes in range(MAX_PASSES + 1):
        step = _one_pass(ctx, matched, rules, unsafe_fixes, static_keys, untouched)
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
    result.left.extend(site_left)
    result.left.extend(step.builds_left)
    result.call_sites_already = site_done
    _account_static(result, ctx, step.remaining)
    # the last pass's problems: an earlier one may have been solved since (a hoist
    # lets the plan apply to a site that was re-created in the pass before)
    _account_plan(result, _keyed_sites(ctx.sites), matched, unmatched, step.problems)
    return result


# -- call sites --------------------------------------------------------------------------


def _call_site_pass(
    ctx: RuleContext,
    callers: Sequence[FunctionPlan],
    plan_path: str,
    unsafe_fixes: bool,
    original: str,
) -> tuple[RuleContext, list[AppliedFix], list[str], set[tuple[str, str]]]:
    """Wrap the planned arguments of the recorded calls in this file (``call_sites``).

    Returns the context of the new text, one AppliedFix per rewritten call, a line per
    call site left as it is (and why), and the functions some call here passes tensors.
    """
    if not callers:
        return ctx, [], [], set()
    left: list[str] = []
    allowed = []
    for entry in callers:
        if _allowed(entry.safety, unsafe_fixes):
            allowed.append(entry)
        else:
            left.append(
                f"calls of {entry.qualname}: not rewritten: unsafe fix, not applied without "
                "--unsafe-fixes: " + "; ".join(entry.warnings)
            )
    edits = call_site_edits(ctx, allowed, plan_path)
    fixes = []
    done = {
        (o.entry.path, o.entry.qualname)
        for o in edits.outcomes
        if o.problem is None and not o.wrapped
    }
    for outcome in edits.outcomes:
        if outcome.wrapped:
            fixes.append(
                AppliedFix(
                    CALL_SITE,
                    outcome.entry.qualname,
                    outcome.line,
                    outcome.entry.safety,
                    outcome.describe().split(": ", 1)[1],
                    target=outcome.entry.path,
                )
            )
        elif outcome.problem is not None:
            left.append(outcome.describe())
    if not edits.targets:
        return ctx, fixes, left, done
    module = apply_call_site_edits(ctx.module, edits, ctx.tf_alias)
    imports = [(i.module, i.obj, i.asname) for i in edits.imports]
    new_text = apply_edits(module, {}, imports).code
    return _reparse(new_text, original, ctx.path), fixes, left, done


# -- one pass ----------------------------------------------------------------------------


@dataclass
class _Pass:
    new_text: str
    applied: list[AppliedFix]
    problems: dict[SiteKey, str]
    remaining: list[tuple[Rule, Violation]]
    """Rule violations found in this pass's input (all of them, fixed or not)."""
    builds_left: list[str] = field(default_factory=list)
    """optimizer.build insertions not made (unsafe without --unsafe-fixes), one line each."""


def _one_pass(
    ctx: RuleContext,
    matched: dict[SiteKey, FunctionPlan],
    rules: Sequence[Rule],
    unsafe_fixes: bool,
    static_keys: frozenset[SiteKey] | set[SiteKey] = frozenset(),
    untouched: frozenset[str] = frozenset(),
) -> _Pass:
    candidates: list[Violation] = []
    labels: list[AppliedFix] = []
    problems: dict[SiteKey, str] = {}
    builds_left: list[str] = []
    planned_nodes: set[int] = set()
    decided: set[str] = set()
    """Functions whose profile plan speaks for them (AS107 only guesses without one)."""
    recreated = ctx.recreated_sites if matched else set()  # AS106's work, if needed
    for key, site in _keyed_sites(ctx.sites).items():
        entry = matched.get(key)
        if entry is None or entry.stale or (key in static_keys and entry.action == "none"):
            continue
        # the profile decides this site: AS107's static guess must not add reduce_retracing
        planned_nodes.update(id(n) for n in (site.decorator, site.call) if n is not None)
        decided.add(site.site.qualname)
        if entry.action not in (SIGNATURE, REDUCE_RETRACING):
            continue
        if not _allowed(entry.safety, unsafe_fixes):
            problems[key] = "unsafe fix, not applied without --unsafe-fixes: " + "; ".join(
                entry.warnings
            )
            continue
        if id(site) in recreated:
            problems[key] = RECREATED
            continue
        edit = _plan_edit(ctx, site, entry)
        if edit.problem is not None:
            problems[key] = edit.problem
            continue
        if not edit.changes:
            continue
        candidates.append(
            Violation(
                node=site.function or site.call or site.tf_reference,
                message=entry.action,
                edits=dict(edit.edits),
                imports=list(edit.imports),
                function=site.site.qualname,
            )
        )
        labels.append(_plan_fix(site, entry, ctx.tf_alias))
    for key, site in _keyed_sites(ctx.sites).items():
        entry = matched.get(key)
        if entry is not None and not entry.stale and site.site.qualname not in untouched:
            build = optimizer_build_fix(ctx, site, entry)  # variables made on the 1st call
            if build is not None and build.why_unsafe and not unsafe_fixes:
                builds_left.append(
                    f"{entry.qualname} (line {entry.line}): optimizer.build not inserted: "
                    f"unsafe fix, not applied without --unsafe-fixes: {build.why_unsafe}"
                )
            elif build is not None:
                candidates.append(build.violation)
                name = site.site.qualname
                build_safety: FixSafety = "unsafe" if build.why_unsafe else "safe"
                description = build.description + (
                    f" (unsafe: {build.why_unsafe})" if build.why_unsafe else ""
                )
                labels.append(
                    AppliedFix(OPTIMIZER_BUILD, name, build.line, build_safety, description)
                )
    pairs = [
        (rule, violation)
        for rule, violation in check_context(ctx, rules)
        if not (rule.code == "AS107" and violation.function in decided)
    ]  # AS107 guesses without a profile; where the profile has spoken, its plan decides
    for rule, violation in pairs:
        safety = fix_safety_of(rule, violation)
        if not is_fixable(violation) or not _allowed(safety, unsafe_fixes):
            continue
        if violation.function in untouched:
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
        return _Pass(ctx.text, [], problems, pairs, builds_left)
    new_text = apply_edits(ctx.module, edits, imports).code
    return _Pass(new_text, [labels[i] for i in taken], problems, pairs, builds_left)


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


def _allowed(safety: FixSafety, unsafe_fixes: bool) -> bool:
    return safety == "safe" or (unsafe_fixes and safety == "unsafe")


def _plan_edit(ctx: RuleContext, site: FunctionSite, entry: FunctionPlan) -> SiteEdit:
    if entry.action == SIGNATURE:
        edit = signature_edit(ctx, site, entry.signature_specs)
    else:
        edit = reduce_retracing_edit(ctx, site)
    if edit.problem is not None or not entry.shape_rewrites:
        return edit
    # the reads go with the relaxed trace that needs them, or not at all
    reads = shape_rewrite_edits(ctx, site, entry.shape_rewrites)
    if edit.changes and reads.missing:
        missing = ", ".join(f"`{r.code}` (line {r.line})" for r in reads.missing)
        return SiteEdit(problem=f"the static shape reads to rewrite were not found: {missing}")
    edit.edits.update(reads.edits)
    edit.imports.extend(i for i in reads.imports if i not in edit.imports)
    return edit


def _plan_fix(site: FunctionSite, entry: FunctionPlan, tf: str = "tf") -> AppliedFix:
    if entry.action == SIGNATURE:
        specs = len(entry.signature_specs)
        description = f"input_signature with {specs} spec{'s' if specs != 1 else ''}"
        if entry.calls:
            description += f" from {entry.calls} profiled calls ({entry.traces} traces)"
    else:
        why = entry.reasons[0] if entry.reasons else "no signature can be written"
        description = f"reduce_retracing=True: {why}"
    if entry.safety == "unsafe":
        description += " (unsafe: " + "; ".join(entry.warnings) + ")"
    details = tuple(r.describe(tf) for r in entry.shape_rewrites)
    return AppliedFix(
        entry.action,
        site.site.qualname,
        site.site.line,
        entry.safety,
        description,
        site.site.col,
        details,
    )


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
    problems: dict[SiteKey, str],
) -> None:
    done = {(fix.qualname, fix.code) for fix in result.applied if fix.from_profile}
    built = {fix.qualname for fix in result.applied if fix.code == OPTIMIZER_BUILD}
    entries = [(key, entry) for key, entry in matched.items()] + [(None, e) for e in unmatched]
    for key, entry in sorted(entries, key=lambda item: item[1].line):
        name = f"{entry.qualname} (line {entry.line})"
        problem = problems.get(key) if key is not None else None
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
        if entry.qualname in built and entry.build_first and entry.build_first.only_cause:
            continue  # its only retrace came from the optimizer's variables, built now
        if entry.action in (SIGNATURE, REDUCE_RETRACING):
            if key is None:
                result.left.append(
                    f"{name}: not fixed: no tf.function of that name at that line in this file "
                    "(moved or renamed since profiling?)"
                )
                result.findings.extend(_unfixable(entry, result.path))
            elif problem is not None:
                result.left.append(f"{name}: not fixed: {problem}")
                result.findings.extend(_unfixable(entry, result.path))
            elif entry.action == REDUCE_RETRACING:
                why = "; ".join(entry.reasons) or "no signature can be written"
                verb = "gets" if (entry.qualname, entry.action) in done else "has"
                result.left.append(f"{name}: {verb} reduce_retracing=True, not a signature: {why}")
            continue
        if site is not None and site.site.has_reduce_retracing and entry.findings:
            # fixed by an earlier run: the same outcome as applying reduce_retracing now
            why = "; ".join(r for r in entry.reasons if "reduce_retracing" not in r)
            result.left.append(f"{name}: has reduce_retracing=True, not a signature: {why}")
            continue
        if entry.call_sites is not None:
            # its callers change instead; the fix command says if none of them could
            why = "; ".join(r for r in entry.reasons if r.startswith("call sites pass"))
            result.left.append(f"{name}: no input_signature; {why}")
            continue
        if entry.findings:
            why = "; ".join(entry.reasons) or "nothing autosig can change"
            result.left.append(f"{name}: not fixed: {why}")
            result.findings.extend(_unfixable(entry, result.path))


def _unfixable(entry: FunctionPlan, path: str) -> list[Finding]:
    return [
        dataclasses.replace(f, path=path, fixable=False, fix_safety="none") for f in entry.findings
    ]

"""What ``autosig fix`` says on stderr: per file, what changed and what was left, and why.

Unsafe fixes are always named as such, so a reviewer reading a ``--diff`` knows which
changes alter behaviour on purpose (a new random stream, state moved to a tf.Variable).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from autosig.rewrite import fix_kinds
from autosig.text import plural

if TYPE_CHECKING:  # the engine imports libcst: 'fix' with nothing to parse never needs it
    from autosig.rewrite.engine import FixResult
    from autosig.rewrite.plan_fix import AppliedFix, PlanFix
    from autosig.source.sites import Finding


def kept_on_purpose(finding: Finding) -> bool:
    """A finding ``fix`` leaves on purpose: a print that logs tracing (AS101)."""
    if finding.code != "AS101":
        return False
    from autosig.rules.as101_print import TRACE_LOG_MESSAGE  # libcst: only with AS101 findings

    return finding.message.endswith(TRACE_LOG_MESSAGE.split("{name}")[-1])


def problems_left(result: FixResult) -> int:
    """Problems ``fix`` leaves open in one file: the one count behind every summary line
    and the exit code. Findings left, except a print kept on purpose to log tracing, and
    rewrites ``--verify`` withheld. A function changed since it was profiled is not
    counted here: it is an error (its own line, counted with the errors, exit 2)."""
    return sum(1 for f in result.findings if not kept_on_purpose(f)) + len(result.withheld)


def _codes(counter: Counter[str]) -> str:
    return ", ".join(f"{code} x{n}" if n > 1 else code for code, n in sorted(counter.items()))


STATIC_LEFT = re.compile(r"^line \d+: AS\d{3} ")
"""How the engine words a static finding it left (``line 6: AS105 ...``)."""


def file_summary(
    result: FixResult, *, written: bool, verb: str | None = None, static: bool = True
) -> list[str]:
    """Lines for one file (none when nothing changed and nothing is left).

    ``static=False`` leaves out the static findings left, for when they are printed
    as findings anyway.
    """
    left = [item for item in result.left if static or not STATIC_LEFT.match(item)]
    if not result.changed and not left:
        return []

    def name(fix: AppliedFix) -> str:
        return (fix.qualname or "?") + (" (unsafe)" if fix.unsafe else "")

    by_kind = _by_kind(result.applied)
    safe = Counter(f.code for f in result.applied if not f.from_profile and not f.unsafe)
    unsafe = Counter(f.code for f in result.applied if not f.from_profile and f.unsafe)
    parts = [kind.label([name(f) for f in fixes]) for kind, fixes in by_kind]
    if safe:
        parts.append(f"{plural(sum(safe.values()), 'fix', 'fixes')} ({_codes(safe)})")
    if unsafe:
        parts.append(
            f"{plural(sum(unsafe.values()), 'unsafe fix', 'unsafe fixes')} ({_codes(unsafe)})"
        )
    if result.changed:
        verb = verb or ("fixed" if written else "would fix")
        head = f"{result.path}: {verb}: {'; '.join(parts) or 'changes'}"
    else:
        head = f"{result.path}: nothing changed"
    notes = [
        (section, note) for kind, fixes in by_kind for f in fixes for section, note in kind.notes(f)
    ]
    why = [note for section, note in notes if section == "why"]
    rewritten = [
        f"{fix.qualname} (line {fix.line}): {detail}"
        for fix in result.applied
        for detail in fix.details  # static shape reads now tf.shape(), with the signature
    ]
    where = [note for section, note in notes if section == "where"]
    return [head] + [f"  - {item}" for item in why + rewritten + where + left]


def _by_kind(applied: Sequence[AppliedFix]) -> list[tuple[PlanFix, list[AppliedFix]]]:
    """The plan fixes among ``applied`` by kind, in the registry's order (kinds without
    one left out; none loaded when no plan fix was made)."""
    planned = [fix for fix in applied if fix.from_profile]
    if not planned:
        return []
    grouped = [(kind, [f for f in planned if f.code == kind.code]) for kind in fix_kinds.kinds()]
    return [(kind, fixes) for kind, fixes in grouped if fixes]


def total_summary(
    results: Sequence[FixResult],
    *,
    written: bool,
    errors: int = 0,
    files_seen: int = 0,
    skipped: str = "",
    verification: tuple[int, int, int] | None = None,
) -> str:
    """One closing line, like ruff's ``Found 5 errors (4 fixed, 1 remaining).``

    ``verification`` (``fix --verify``): functions verified, withheld (or whole files) and
    not run by the workload, each counted apart.
    """
    changed = [r for r in results if r.changed]
    applied = [f for r in results for f in r.applied]
    rules = [f for f in applied if not f.from_profile]
    unsafe = sum(1 for f in rules if f.unsafe)
    left = sum(problems_left(r) for r in results)
    on_purpose = sum(1 for r in results for f in r.findings if kept_on_purpose(f))
    if changed:
        bits = [kind.total(len(fixes)) for kind, fixes in _by_kind(applied)]
        if rules:
            fixes = plural(len(rules), "fix", "fixes")
            bits.append(f"{fixes} ({unsafe} unsafe)" if unsafe else fixes)
        verb = "Fixed" if written else "Would fix"
        line = f"{verb} {plural(len(changed), 'file')}: {', '.join(bits)}"
    else:
        line = f"Nothing to fix in {plural(files_seen, 'file')}"
    if verification is not None:
        verified, withheld, not_run = verification
        line += f"; verified {plural(verified, 'function')}"
        if withheld:
            line += f", withheld {withheld} (verification failed)"
        if not_run:
            line += f", {not_run} not run by the workload (not verified, not written)"
    if left:
        line += f"; {plural(left, 'problem')} left (see above)"
    if on_purpose:
        line += f"; {plural(on_purpose, 'tracing print')} kept on purpose"
    if errors:
        line += f"; {plural(errors, 'error')}"
    if skipped:
        line += f"; {skipped}"  # e.g. "1 file skipped (over the size limit)"
    return line + "."


def patch_header(results: Sequence[FixResult]) -> str:
    """Comment lines put before the diffs of a patch file, for its reviewer.

    Each changed file's summary, and every unsafe fix on a line of its own. Lines start
    with ``#`` and none is blank, so ``autosig apply``, ``git apply`` and ``patch``
    all skip them as the text before a diff.
    """
    lines = ["# autosig fix: review the changes below, then `autosig apply` this file"]
    for result in results:
        if not result.changed:
            continue
        head = file_summary(result, written=False, verb="changes")[0]
        lines.append(f"# {head}")
        for fix in result.applied:
            if fix.unsafe:
                where = f" in {fix.qualname}" if fix.qualname else ""
                lines.append(f"#   UNSAFE {fix.code} line {fix.line}{where}: {fix.description}")
    return "".join(line.replace("\n", " ") + "\n" for line in lines)

"""``fix --verify``: keep in fix's results only what verification kept.

``autosig.verify.gate.gate_fixes`` replays the profiled command on the original and the
rewritten code; this module turns its verdicts into fix's results: a verified rewrite
is kept (with the report of the plan it ended with), the rest is withheld and reported
at lines of the file on disk. The fix session (``rewrite.session``) calls it between
fixing and writing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from autosig.errors import AutosigError
from autosig.infer.plan import Plan
from autosig.rewrite.batch import plan_for
from autosig.rewrite.report_lines import place
from autosig.rules.registry import select_rules

if TYPE_CHECKING:
    from autosig.rewrite.engine import FixResult
    from autosig.rewrite.session import FixFile, FixSession


def gate(
    session: FixSession, by_file: list[tuple[FixFile, FixResult]], errors: list[AutosigError]
) -> tuple[int, int, int]:
    """Replace each result by what verified (``autosig.verify.gate``); withhold the rest.

    Returns (functions verified, functions or files withheld, functions not run). A
    withheld file's report lines are mapped back to the file on disk (they were lines
    of the rewrite that is not written). Verdicts go to the session's ``warn``.
    """
    try:
        from autosig.verify.gate import gate_fixes
    except ImportError:
        raise AutosigError(
            "verification is not available in this installation (autosig.verify.gate is "
            "missing); run without --verify"
        ) from None

    files = {file.profile_rel: (file, result) for file, result in by_file}
    rules = {rel: select_rules(file.select, file.ignore) for rel, (file, _) in files.items()}
    unsafe = session.unsafe
    gated = gate_fixes(
        session.profile,
        session.root,
        unsafe_fixes=unsafe,
        infer_options=session.options,  # try_uncertain: --verify and --unsafe-fixes
        rules_for=lambda rel: rules.get(rel, []),
        plan=session.plan if session.plan is not None else Plan(),  # no profile codes: none
        sources={rel: file.source.text for rel, (file, _) in files.items()},
    )
    report = gated.report
    for verdict in report.functions if report is not None else []:
        session.warn(f"verify: {verdict.path}:{verdict.line}: {verdict.qualname}: {verdict.status}")
    for line in gated.messages():
        session.warn(f"verify: {line}")
    errors.extend(report.errors if report is not None else [])
    withheld_sites = gated.withheld_sites()
    for rel, (file, result) in files.items():
        # until reset below, result.new_text is the unverified rewrite: the findings'
        # lines are its lines (``place`` maps them back to the file on disk)
        not_run = [
            f"not written: {qualname or 'changes outside any tf.function'} "
            f"[{', '.join(changes)}]: the workload never called it, so nothing verified "
            "the change"
            for (path, qualname), changes in sorted(gated.not_run.items())
            if path == rel
        ]
        if rel in gated.withheld:
            result.withheld.append(f"verification failed: {gated.withheld[rel]}")
            result.left.append(f"not written: verification failed: {gated.withheld[rel]}")
            if result.changed:
                place(result, file.source.text, on_disk=True)
            result.new_text, result.changed, result.applied = file.source.text, False, []
        elif rel in gated.texts:
            result.new_text = gated.texts[rel]
            result.changed = result.new_text != file.source.text
            if gated.candidate is not None and rel in gated.candidate.applied:
                result.applied = list(gated.candidate.applied[rel])
        elif result.changed:
            if not not_run:
                result.left.append("not written: the verified rewrite leaves this file unchanged")
            place(result, file.source.text, on_disk=True)
            result.new_text, result.changed, result.applied = file.source.text, False, []
        result.left.extend(not_run)
        if gated.candidate is not None and rel not in gated.withheld:
            untouched = frozenset(q or None for p, q in withheld_sites if p == rel)
            _report_kept(file, result, gated.candidate.plan, rules[rel], unsafe, untouched)  # type: ignore[arg-type]
    return gated.counts()


def _report_kept(
    file: FixFile,
    result: FixResult,
    plan: Plan,
    rules: Sequence[Any],
    unsafe: bool,
    untouched: frozenset[str],
) -> None:
    """Findings and notes for the rewrite verification kept, from the plan it ended with.

    The first pass reported on the plan before verification (which may have tried
    tensors or signatures that fell back); the summary and exit code must speak of
    what is written. Only when the kept plan gives exactly the kept text.
    """
    # libcst: only --verify needs it here
    from autosig.rewrite.engine import fix_text

    try:
        kept = fix_text(
            file.source.text,
            file.display,
            plan=plan_for(plan, file.profile_rel),
            rules=rules,
            unsafe_fixes=unsafe,
            profile_path_of=file.profile_rel,
            untouched=untouched,
        )
    except AutosigError:
        return
    if kept.new_text != result.new_text:
        return
    notes = [item for item in result.left if item.startswith("not written")]
    result.findings, result.left = kept.findings, kept.left + notes
    result.applied, result.stale = kept.applied, kept.stale

"""Render a VerifyReport: text for people, json for tools, sarif/github for CI.

Text shows per function the verdict per mode and the measurements before -> after.
SARIF and GitHub annotations carry only what needs attention, as findings: AS301
not equivalent, AS302 could not run (codes from the rule registry; details in the
message). A ``VerifySelection`` (``--select``/``--ignore``, config, ``# autosig:
ignore``) drops findings; their verdicts stay in text and json, marked as ignored,
and no longer count for the exit code.
"""

from __future__ import annotations

import json
from typing import Any

from autosig.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from autosig.report.findings import render_findings
from autosig.source.codes import VERIFY_VERDICT_CODES
from autosig.source.sites import Finding
from autosig.verify.runner import FunctionVerdict, ModeOutcome, VerifyReport
from autosig.verify.selection import VerifySelection

FINDING_CODES: dict[str, str] = {
    **VERIFY_VERDICT_CODES,
    "not compared": VERIFY_VERDICT_CODES["could not run"],
}
"""Failing verdict (``ModeOutcome.status``) -> finding code: AS301, AS302 (could not
run or be compared: nothing unverified passes)."""


def _seconds(value: float | None) -> str:
    if value is None:
        return "?"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.0f} us"


def _pair(pair: tuple[Any, Any], fmt: Any = str, missing: str = "not measured") -> str:
    before, after = pair
    left = missing if before is None else fmt(before)
    right = missing if after is None else fmt(after)
    return f"{left} -> {right}"


def _compiles(pair: tuple[Any, Any]) -> str:
    """XLA compiles before -> after; an unmeasured side says why instead of '?'."""
    before, after = pair
    left = "not measured (original not run under XLA; --xla-baseline)" if before is None else before
    right = "not measured" if after is None else after
    return f"{left} -> {right}"


def mode_line(outcome: ModeOutcome) -> str:
    parts = [f"{outcome.status}" + (f" ({outcome.detail})" if outcome.detail else "")]
    parts.append(f"traces {_pair(outcome.traces)}")
    if outcome.mode == "xla":
        parts.append(f"XLA compiles {_compiles(outcome.xla_compiles)}")
    parts.append(f"trace time {_pair(outcome.trace_time_s, _seconds)}")
    parts.append(
        f"median step {_pair(outcome.median_step_s, _seconds, 'not measured (under 2 calls completed)')}"
    )
    line = "; ".join(parts)
    if outcome.advice:
        line += f"\n         advice: {outcome.advice}"
    return line


def render_text(report: VerifyReport, selection: VerifySelection | None = None) -> str:
    lines: list[str] = []
    for verdict in report.functions:
        changes = f" [{', '.join(verdict.changes)}]" if verdict.changes else ""
        ignored = "".join(
            f" ({code} {why})" for code, why in ignored_codes(verdict, selection).items()
        )
        lines.append(
            f"{verdict.path}:{verdict.line}: {verdict.qualname}{changes}: {verdict.status}{ignored}"
        )
        for outcome in verdict.modes:
            lines.append(f"  {outcome.mode + ':':6} {mode_line(outcome)}")
    lines.extend(f"note: {note}" for note in report.notes)
    lines.extend(f"error: {error}" for error in report.errors)
    return "".join(line + "\n" for line in lines)


def summary_line(report: VerifyReport, selection: VerifySelection | None = None) -> str:
    counts: dict[str, int] = {}
    for verdict in report.functions:
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    found = ", ".join(f"{n} {status}" for status, n in counts.items()) or "nothing compared"
    ignored = sum(1 for verdict in report.functions if ignored_codes(verdict, selection))
    if ignored:
        found += f" ({ignored} ignored by select/ignore or comments)"
    device = report.device.describe() if report.device else "none"
    modes = ", ".join(report.modes) or "none"
    cost = ""
    if report.workload_s:
        cost = (
            f"; verify took {report.total_s:.1f} s, {report.total_s / report.workload_s:.1f}x "
            f"the workload's {report.workload_s:.1f} s"
        )
    n = len(report.functions)
    checked = sum(
        len(outcome.unseen.checked)
        for verdict in report.functions
        for outcome in verdict.modes
        if outcome.unseen is not None
    )
    unseen = f"; {checked} unseen input shape{'s' if checked != 1 else ''} checked" if n else ""
    return (
        f"Verified {n} function{'s' if n != 1 else ''} in {len(report.changed_files)} changed "
        f"file{'s' if len(report.changed_files) != 1 else ''}: {found} "
        f"(device {device}; modes {modes}{unseen}{cost})."
    )


def _failing_codes(verdict: FunctionVerdict) -> dict[str, list[ModeOutcome]]:
    """Code -> the modes that failed that way (AS301 and AS302 may both apply)."""
    out: dict[str, list[ModeOutcome]] = {}
    for outcome in verdict.modes:
        code = FINDING_CODES.get(outcome.status)
        if code is not None:
            out.setdefault(code, []).append(outcome)
    return dict(sorted(out.items()))


def ignored_codes(
    verdict: FunctionVerdict, selection: VerifySelection | None = None
) -> dict[str, str]:
    """The verdict's failing codes that ``selection`` ignores -> why."""
    if selection is None:
        return {}
    out: dict[str, str] = {}
    for code in _failing_codes(verdict):
        why = selection.why_ignored(verdict.path, verdict.qualname, verdict.line, code)
        if why is not None:
            out[code] = why
    return out


def findings(report: VerifyReport, selection: VerifySelection | None = None) -> list[Finding]:
    """One finding per failing function and code (AS301, AS302) that ``selection`` keeps."""
    out: list[Finding] = []
    for verdict in report.functions:
        ignored = ignored_codes(verdict, selection)
        for code, outcomes in _failing_codes(verdict).items():
            if code in ignored:
                continue
            status = outcomes[0].status
            what = f"is {status}" if status == "not equivalent" else status
            details = "; ".join(f"{m.mode}: {m.detail}" if m.detail else m.mode for m in outcomes)
            out.append(
                Finding(
                    path=verdict.path,
                    line=verdict.line,
                    col=1,
                    code=code,
                    message=f"rewrite of {verdict.qualname} {what}: {details}",
                    function=verdict.qualname,
                )
            )
    return out


def exit_code(report: VerifyReport, selection: VerifySelection | None = None) -> int:
    """2 on errors, 1 when a finding is left after ``selection``, else 0."""
    if report.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if findings(report, selection) else EXIT_OK


def report_json(report: VerifyReport, selection: VerifySelection | None = None) -> dict[str, Any]:
    """``report.to_json()`` with each function's codes, what is ignored, and the exit code."""
    data = report.to_json()
    data["exit_code"] = exit_code(report, selection)
    for verdict, entry in zip(report.functions, data["functions"], strict=True):
        entry["codes"] = list(_failing_codes(verdict))
        entry["ignored"] = ignored_codes(verdict, selection)
    return data


def render(report: VerifyReport, fmt: str, selection: VerifySelection | None = None) -> str:
    """The report in ``fmt`` (text, json, sarif, github)."""
    if fmt == "text":
        return render_text(report, selection)
    if fmt == "json":
        return json.dumps(report_json(report, selection), indent=2) + "\n"

    return render_findings(findings(report, selection), report.errors, fmt)

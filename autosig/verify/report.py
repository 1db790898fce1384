"""Render a VerifyReport: text for people, json for tools, sarif/github for CI.

Text shows per function the verdict per mode and the measurements before -> after.
SARIF and GitHub annotations carry only what needs attention, as findings:
AS301 not equivalent, AS302 could not run (with the verify details in the message).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from autosig.model import Finding
from autosig.verify.runner import FunctionVerdict, ModeOutcome, VerifyReport

FINDING_CODES = {"not equivalent": "AS301", "could not run": "AS302"}


def _seconds(value: float | None) -> str:
    if value is None:
        return "?"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f} ms"
    return f"{value * 1e6:.0f} us"


def _pair(pair: tuple[Any, Any], fmt: Any = str) -> str:
    before, after = pair
    return f"{'?' if before is None else fmt(before)} -> {'?' if after is None else fmt(after)}"


def mode_line(outcome: ModeOutcome) -> str:
    parts = [f"{outcome.status}" + (f" ({outcome.detail})" if outcome.detail else "")]
    parts.append(f"traces {_pair(outcome.traces)}")
    if outcome.mode == "xla":
        parts.append(f"XLA compiles {_pair(outcome.xla_compiles)}")
    parts.append(f"trace time {_pair(outcome.trace_time_s, _seconds)}")
    parts.append(f"median step {_pair(outcome.median_step_s, _seconds)}")
    return "; ".join(parts)


def render_text(report: VerifyReport) -> str:
    lines: list[str] = []
    for verdict in report.functions:
        changes = f" [{', '.join(verdict.changes)}]" if verdict.changes else ""
        lines.append(
            f"{verdict.path}:{verdict.line}: {verdict.qualname}{changes}: {verdict.status}"
        )
        for outcome in verdict.modes:
            lines.append(f"  {outcome.mode + ':':6} {mode_line(outcome)}")
    lines.extend(f"note: {note}" for note in report.notes)
    lines.extend(f"error: {error}" for error in report.errors)
    return "".join(line + "\n" for line in lines)


def summary_line(report: VerifyReport) -> str:
    counts: dict[str, int] = {}
    for verdict in report.functions:
        counts[verdict.status] = counts.get(verdict.status, 0) + 1
    found = ", ".join(f"{n} {status}" for status, n in counts.items()) or "nothing compared"
    device = report.device.describe() if report.device else "none"
    modes = ", ".join(report.modes) or "none"
    cost = ""
    if report.workload_s:
        cost = (
            f"; verify took {report.total_s:.1f} s, {report.total_s / report.workload_s:.1f}x "
            f"the workload's {report.workload_s:.1f} s"
        )
    n = len(report.functions)
    return (
        f"Verified {n} function{'s' if n != 1 else ''} in {len(report.changed_files)} changed "
        f"file{'s' if len(report.changed_files) != 1 else ''}: {found} "
        f"(device {device}; modes {modes}{cost})."
    )


def findings(report: VerifyReport) -> list[Finding]:
    out: list[Finding] = []
    for verdict in report.functions:
        code = FINDING_CODES.get(verdict.status)
        if code is None:
            continue
        details = "; ".join(
            f"{m.mode}: {m.status} ({m.detail})" for m in verdict.modes if m.status in FINDING_CODES
        )
        out.append(
            Finding(
                path=verdict.path,
                line=verdict.line,
                col=1,
                code=code,
                message=f"rewrite of {verdict.qualname} is {verdict.status}: {details}",
                function=verdict.qualname,
            )
        )
    return out


def render(report: VerifyReport, fmt: str) -> str:
    """The report in ``fmt`` (text, json, sarif, github)."""
    if fmt == "text":
        return render_text(report)
    if fmt == "json":
        return json.dumps(report.to_json(), indent=2) + "\n"
    from autosig.report import render_findings

    return render_findings(findings(report), report.errors, fmt)


def verdict_names(verdicts: Iterable[FunctionVerdict]) -> str:
    return ", ".join(f"{v.qualname} ({v.path}:{v.line})" for v in verdicts)

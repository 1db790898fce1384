"""What autosig reports about an editable profiled function: its AS2xx findings.

They say why it retraced (AS201, with the cause that varied most), which Python
numbers varied and what the plan does with them (AS202), and what the observations
found (AS203, AS204), asked once of the plan as it stands after its stages
(``with_findings``). The last stage of every function's plan, ``honour_comments``,
honours the ``# autosig: ignore`` comments: the findings they silence, and whether one
covers the plan's own rewrite (``suppressed_on``). Library code's advice: ``library``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from autosig.infer.observed import Observed, retrace_message
from autosig.infer.plan import Action, FunctionPlan
from autosig.profile.format import FunctionRecord
from autosig.source.discover import FunctionSite, Source
from autosig.source.sites import Finding
from autosig.source.suppress import Suppressions
from autosig.text import plural


def function_findings(
    record: FunctionRecord,
    site: FunctionSite,
    observed: Observed,
    action: Action,
    reasons: list[str],
    tensorized: Mapping[str, str] | None = None,
) -> list[Finding]:
    """The findings of an editable function whose plan is ``action`` for ``reasons``.

    ``tensorized``: parameters its call sites will pass as tensors (a call-site plan), and
    how each call site then reads (``tf.constant(k)``).
    The ``# autosig: ignore`` comments are honoured after (``honour_comments``).
    """
    path = record.path or ""
    line, col = site.site.line, site.site.col
    results = observed.results
    tensorized = tensorized or {}
    fixable = action in ("signature", "guarded_trace", "reduce_retracing") or bool(tensorized)
    out: list[Finding] = []

    def add(code: str, message: str, can_fix: bool = fixable) -> None:
        out.append(
            Finding(
                path=path,
                line=line,
                col=col,
                code=code,
                message=message,
                function=record.qualname,
                fixable=can_fix,
                fix_safety="safe" if can_fix else "none",
            )
        )

    if record.traces > 1:
        add("AS201", retrace_message(record, observed.main_cause or reasons[0]))
    for r in results:
        python = r.leaf.python
        if python is not None and python.varied:
            message = (
                f"Python {python.type_name} argument `{r.info.name}` takes "
                f"{python.values_text()}: every new value is a new trace"
            )
            if r.spec is not None and action == "signature":
                message += f"; planned as tf.TensorSpec([], tf.{python.dtype})"
            elif r.info.name in tensorized:
                message += f"; planned as {tensorized[r.info.name]} at its call sites"
            elif r.python_uses:
                message += f"; kept as a Python value: {r.python_uses[0].describe()}"
            add("AS202", message)
        for code, text in r.leaf.findings:
            if code == "AS204" and r.leaf.object_type is not None:
                count = record.object_instances.get(r.info.name)
                if count:
                    text += f", {plural(count, 'distinct instance')}: each new one is a new trace"
            add(code, text)
    return out


def with_findings(
    entry: FunctionPlan, record: FunctionRecord, site: FunctionSite, observed: Observed
) -> FunctionPlan:
    """``entry`` (its stages done, the paired trace included) with the findings of its
    final action: asked once, of the plan as it stands."""
    calls = entry.call_sites
    tensorized = {p.name: p.constant() for p in calls.params} if calls is not None else {}
    found = function_findings(record, site, observed, entry.action, list(entry.reasons), tensorized)
    return replace(entry, findings=tuple(found))


PLAN_CODE = "AS201"
"""The code a profile-planned rewrite (signature, reduce_retracing) answers to."""


def honour_comments(
    entry: FunctionPlan, source: Source, lines: list[int], *, findings: bool = True
) -> FunctionPlan:
    """``entry`` with the ``# autosig: ignore`` comments of ``source`` honoured (read
    once per version of the file: ``Suppressions.of_file``).

    The findings they silence on ``lines`` (where a comment for the function counts:
    ``Source.site_lines``, none when it was not found) are dropped (unless not
    ``findings``: library advice is kept whole). A comment that covers the plan's own
    rewrite (AS201, as ``suppressing_line`` says) turns the plan into "leave it as it
    is", its line in ``suppressed_on``, so a suppression means the same in
    ``fix --profile`` and ``explain`` as in ``check``.
    """
    module = source.wrapper.module if source.wrapper is not None else None
    suppressions = Suppressions.of_file(source.text, module)
    kept = entry.findings
    if findings:
        kept = tuple(f for f in kept if not suppressions.is_suppressed(f.code, lines))
    where = None
    for candidate in sorted({entry.line, *lines}):
        if suppressions.is_suppressed(PLAN_CODE, [candidate]):
            where = candidate
            break
    if where is not None:
        return replace(
            entry,
            action="none",
            params=(),
            findings=(),
            stale=False,
            build_first=None,
            reasons=(f"suppressed by '# autosig: ignore' on line {where}",),
            blockers=(),
            call_sites=None,  # its callers are left as they are too
            suppressed_on=where,
        )
    if kept == entry.findings:
        return entry
    return replace(entry, findings=kept)


def suppressing_line(text: str, path: str, qualname: str, line: int) -> int | None:
    """The def/decorator line whose ignore comment covers ``qualname``'s profile fix.

    A bare ``# autosig: ignore`` or one naming AS201 (or a prefix such as AS2) on the
    ``def`` line, a decorator line or the ``tf.function(...)`` call silences the
    rewrite that ``fix --profile`` would make, exactly as ``check`` and static ``fix``
    honour it. None when nothing covers it (or the file does not parse).
    """
    if "autosig" not in text:
        return None
    suppressions = Suppressions.of_file(text, None)
    if not suppressions:
        return None
    source = Source.parse(text, path)
    site = source.locate(qualname, line)
    lines = {line, *(source.site_lines(site) if site is not None else ())}
    for candidate in sorted(lines):
        if suppressions.is_suppressed(PLAN_CODE, [candidate]):
            return candidate
    return None

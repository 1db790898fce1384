"""The AS2xx findings of one function: why it retraced, in words a user acts on.

AS201 names the main cause (the argument that took the most distinct forms), AS202 each
Python number that varied and what became of it, AS203/AS204 come from the arguments'
leaves. Suppression comments on the function's def or decorator lines silence them.
"""

from __future__ import annotations

from autosig.discover import FunctionSite
from autosig.infer.params import ParamResult
from autosig.infer.source import Source
from autosig.infer.wording import plural
from autosig.model import Finding
from autosig.plan import Action
from autosig.profile.format import FunctionRecord
from autosig.suppress import Suppressions


def function_findings(
    record: FunctionRecord,
    site: FunctionSite,
    source: Source,
    results: list[ParamResult],
    action: Action,
    reasons: list[str],
) -> list[Finding]:
    """The findings of an editable function whose plan is ``action`` for ``reasons``."""
    path = record.path or ""
    line, col = site.site.line, site.site.col
    fixable = action in ("signature", "reduce_retracing")
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
        add("AS201", retrace_message(record, main_cause(results) or reasons[0]))
    for r in results:
        python = r.leaf.python
        if python is not None and python.varied:
            message = (
                f"Python {python.type_name} argument `{r.info.name}` takes "
                f"{python.values_text()}: every new value is a new trace"
            )
            if r.spec is not None and action == "signature":
                message += f"; planned as tf.TensorSpec([], tf.{python.dtype})"
            elif r.python_uses:
                message += f"; kept as a Python value: {r.python_uses[0].describe()}"
            add("AS202", message)
        for code, text in r.leaf.findings:
            if code == "AS204" and r.leaf.object_type is not None:
                count = record.object_instances.get(r.info.name)
                if count:
                    text += f", {plural(count, 'distinct instance')}: each new one is a new trace"
            add(code, text)
    return _unsuppressed(out, source, site)


def retrace_message(record: FunctionRecord, cause: str) -> str:
    """AS201's message: ``5 traces for 12 calls; main cause: ...``."""
    return f"{record.traces} traces for {plural(record.calls, 'call')}; main cause: {cause}"


def main_cause(results: list[ParamResult]) -> str | None:
    """The cause of the parameter that took the most distinct forms (None: no cause known)."""
    causes = [(r.leaf.variety, r.leaf.cause) for r in results if r.leaf.cause]
    if not causes:
        return None
    causes.sort(key=lambda c: -c[0])
    text = str(causes[0][1])
    if len(causes) > 1:
        text += f" (and {len(causes) - 1} more)"
    return text


def _unsuppressed(findings: list[Finding], source: Source, site: FunctionSite) -> list[Finding]:
    assert source.wrapper is not None
    suppressions = Suppressions.from_module(source.wrapper.module, source.text)
    lines = source.site_lines(site)
    return [f for f in findings if not suppressions.is_suppressed(f.code, lines)]

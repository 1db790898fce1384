"""Library code (Keras ``train_step`` and the like, not editable): advice instead of a fix.

The same per-parameter observations run as for an editable function (``observe``),
but their result is advice on what the caller can change, shown with AS201.
"""

from __future__ import annotations

from autosig.infer.observed import ONCE_REASON, Observed, retrace_message
from autosig.infer.plan import FunctionPlan, ParamPlan
from autosig.profile.format import FunctionRecord
from autosig.source.sites import Finding


def library_plan(record: FunctionRecord, observed: Observed) -> FunctionPlan:
    """Library code cannot be edited: say what the caller can change instead
    (``observed``: the observation stage's facts about ``record``)."""
    results = observed.results
    advice: list[str] = []
    for r in results:
        if 0 in r.leaf.dims:
            advice.append(
                "feed one batch size: dataset.batch(n, drop_remainder=True) with a single n, "
                "or drop_remainder=False so the batch dimension is None"
            )
        if r.leaf.rank_varies or r.leaf.dims - {0}:
            advice.append("pad inputs to fixed shapes (padded_batch or bucketing)")
        for code, _ in r.leaf.findings:
            if code == "AS203":
                advice.append("cast inputs to one dtype (float32) before passing them")
        if r.leaf.python is not None and r.leaf.python.varied:
            advice.append(f"pass `{r.info.name}` as a tensor instead of a Python number")
        if r.info.name in observed.numpy_float64:
            advice.append("cast inputs to float32 (NumPy float64 arrays become float64 graphs)")
    if record.traces <= max(1, record.instances):
        advice = [ONCE_REASON]
    advice = list(dict.fromkeys(advice)) or ["nothing autosig can change in library code"]
    where = f"{record.path}:{record.line}" if record.path else record.qualname
    reason = f"library function ({where}), not editable: " + "; ".join(advice)
    findings: list[Finding] = []
    if record.traces > 1:
        cause = observed.main_cause or "see autosig explain"
        findings.append(
            Finding(
                path=record.path or "<library>",
                line=record.line,
                col=1,
                code="AS201",
                message=f"{retrace_message(record, cause)}; {'; '.join(advice)}",
                function=record.qualname,
            )
        )
    return FunctionPlan(
        path=record.path or "",
        qualname=record.qualname,
        line=record.line,
        action="none",
        params=tuple(ParamPlan(r.info.name, None, r.evidence) for r in results),
        reasons=(reason,),
        findings=tuple(findings),
        calls=record.calls,
        traces=record.traces,
    )

"""Library tf.functions (Keras ``train_step``...): not editable, so advise the caller instead.

The same per-parameter analysis runs, but its result is advice on what the user's code
can change (batch sizes, padding, dtypes, passing tensors), shown with AS201.
"""

from __future__ import annotations

from autosig.infer.decision import ONCE_REASON
from autosig.infer.findings import main_cause, retrace_message
from autosig.infer.options import InferOptions
from autosig.infer.params import analyze_param
from autosig.model import Finding
from autosig.plan import FunctionPlan, ParamPlan
from autosig.profile.format import FunctionRecord, Value


def library_plan(record: FunctionRecord, options: InferOptions) -> FunctionPlan:
    """Library code cannot be edited: say what the caller can change instead."""
    results = [analyze_param(record, info, options) for info in record.params]
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
        if _has_numpy_float64(record, r.info.name):
            advice.append("cast inputs to float32 (NumPy float64 arrays become float64 graphs)")
    if record.traces <= max(1, record.instances):
        advice = [ONCE_REASON]
    advice = list(dict.fromkeys(advice)) or ["nothing autosig can change in library code"]
    where = f"{record.path}:{record.line}" if record.path else record.qualname
    reason = f"library function ({where}), not editable: " + "; ".join(advice)
    findings: list[Finding] = []
    if record.traces > 1:
        cause = main_cause(results) or "see autosig explain"
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


def _has_numpy_float64(record: FunctionRecord, name: str) -> bool:
    def walk(value: Value) -> bool:
        if value.get("kind") == "numpy" and value.get("dtype") == "float64":
            return True
        items = value.get("items")
        if isinstance(items, dict):
            return any(walk(v) for v in items.values())
        if isinstance(items, list):
            return any(walk(v) for v in items)
        return False

    return any(walk(sig.args[name]) for sig in record.signatures if name in sig.args)

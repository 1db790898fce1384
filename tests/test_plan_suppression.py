"""The plan-level suppression is decided with the findings' (``findings.honour_comments``)
and says the same as ``findings.suppressing_line``, the text-level answer ``explain``'s
budget asks, in every state a function's source can be in (issue 23)."""

from __future__ import annotations

import pytest

from autosig.infer.findings import suppressing_line
from autosig.infer.observations import InferOptions
from autosig.infer.planner import infer_plan
from autosig.infer.planning import plan_fixes
from autosig.profile.format import (
    CallSignature,
    FunctionRecord,
    ParamInfo,
    Profile,
    TraceEvent,
)

DEF = "import tensorflow as tf\n@tf.function\ndef f(x):{comment}\n    return x * 2\n"
DECORATOR = "import tensorflow as tf\n@tf.function{comment}\ndef f(x):\n    return x * 2\n"
CALL = "import tensorflow as tf\ndef g(x):\n    return x\nf = tf.function(g){comment}\n"
MISSING = "import tensorflow as tf\nx = 1{comment}\ndef h(x):\n    return x\n"
BROKEN = "import tensorflow as tf\n@tf.function\ndef f(x:{comment}\n    return x\n"
FUNCTION_LINES = {DEF: 3, DECORATOR: 3, CALL: 4, MISSING: 2, BROKEN: 3}
COMMENTS = ["", "  # autosig: ignore", "  # autosig: ignore[AS2]", "  # autosig: ignore[AS203]"]


def _record(line: int, *, editable: bool = True, sha: str | None = None) -> FunctionRecord:
    calls = [
        CallSignature({"x": {"kind": "python", "type": "int", "value": v}}, {}, calls=1)
        for v in range(4)
    ]
    return FunctionRecord(
        path="m.py",
        qualname="f",
        line=line,
        source_sha256=sha,
        editable=editable,
        params=[ParamInfo("x", "POSITIONAL_OR_KEYWORD")],
        calls=4,
        traces=4,
        signatures=calls,
        trace_events=[TraceEvent(call=i, signature=i) for i in range(4)],
    )


@pytest.mark.parametrize("comment", COMMENTS)
@pytest.mark.parametrize("template", list(FUNCTION_LINES))
@pytest.mark.parametrize("kind", ["planned", "stale", "library"])
def test_the_plan_suppression_is_the_text_level_one(template: str, comment: str, kind: str) -> None:
    text = template.format(comment=comment)
    stale = "0" * 64 if kind == "stale" else None
    record = _record(FUNCTION_LINES[template], editable=kind != "library", sha=stale)
    entry = infer_plan(Profile(functions=[record]), {"m.py": text}, InferOptions()).functions[0]
    assert entry.suppressed_on == suppressing_line(text, "m.py", "f", entry.line)
    fixed = plan_fixes(Profile(functions=[record]), {"m.py": text}, InferOptions()).functions[0]
    if entry.suppressed_on is None:
        assert fixed == entry
    else:
        assert fixed.reasons == (
            f"suppressed by '# autosig: ignore' on line {entry.suppressed_on}",
        )
        assert fixed.action == "none" and not fixed.findings


def test_the_findings_a_comment_silences_are_dropped_and_library_advice_kept() -> None:
    text = DEF.format(comment="  # autosig: ignore[AS202]")
    planned = infer_plan(Profile(functions=[_record(3)]), {"m.py": text}, InferOptions())
    assert {f.code for f in planned.functions[0].findings} == {"AS201"}
    library = _record(3, editable=False)
    advice = infer_plan(Profile(functions=[library]), {"m.py": text}, InferOptions())
    assert {f.code for f in advice.functions[0].findings} == {"AS201"}
    assert advice.functions[0].suppressed_on is None

"""``plan_fixes`` parses each file once per version (issue 23).

Inference, the ``optimizer.build`` planning and the suppression comments all read the
same parse of a file: counted here by wrapping ``libcst.parse_module``; the comments
are read once per version for all the file's functions.
"""

from __future__ import annotations

from collections import Counter

import libcst
import pytest

from autosig.infer.observations import InferOptions
from autosig.infer.planning import plan_fixes
from autosig.profile.format import CallSignature, FunctionRecord, Profile, TraceEvent

TEXT = (
    "import tensorflow as tf\n"
    "inputs = tf.keras.Input(shape=(4,))\n"
    "model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))\n"
    "optimizer = tf.keras.optimizers.Adam()\n"
    "@tf.function\ndef train_step(x, y):\n    with tf.GradientTape() as tape:\n"
    "        loss = tf.reduce_mean((model(x) - y) ** 2)\n"
    "    grads = tape.gradient(loss, model.trainable_variables)\n"
    "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss\n"
    "@tf.function\ndef other(x):  # autosig: ignore\n    return x\n"
    "@tf.function\ndef third(x):\n    return x\n"
)


def _record(qualname: str, line: int) -> FunctionRecord:
    events = [(0, 0, 0), (0, 0, 0)]
    return FunctionRecord(
        path="m.py",
        qualname=qualname,
        line=line,
        source_sha256=None,
        editable=True,
        calls=10,
        traces=len(events),
        signatures=[CallSignature({}, {})],
        trace_events=[TraceEvent(call=c, signature=s, instance=i) for c, s, i in events],
    )


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each text was parsed by libcst."""
    counts: Counter[str] = Counter()
    real = libcst.parse_module

    def counting(source, *args, **kwargs):
        counts[source] += 1
        return real(source, *args, **kwargs)

    monkeypatch.setattr(libcst, "parse_module", counting)
    return counts


def test_plan_fixes_parses_each_file_once(parses: Counter[str]) -> None:
    profile = Profile(
        functions=[_record("train_step", 6), _record("other", 13), _record("third", 16)],
        tensorflow_version="2.21.0",
    )
    plan = plan_fixes(profile, {"m.py": TEXT}, InferOptions())
    assert [e.qualname for e in plan.functions] == ["train_step", "other", "third"]
    assert plan.functions[0].build_first is not None  # the build planning read the file
    assert plan.functions[1].reasons[0].startswith("suppressed by")
    assert plan.functions[1].build_first is None  # left as it is: no build either
    assert parses[TEXT] == 1


def test_the_comments_are_read_once_per_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every function of a file asks its ``# autosig: ignore`` comments; they are read
    (tokenized) once for the text, again for a new version."""
    from autosig.source import suppress

    reads: Counter[str] = Counter()
    real = suppress._tokenize_comments

    def counting(text: str):
        reads[text] += 1
        return real(text)

    monkeypatch.setattr(suppress, "_tokenize_comments", counting)
    text = TEXT + "# autosig: ignore[AS203]  (test_the_comments_are_read_once_per_version)\n"
    profile = Profile(
        functions=[_record("train_step", 6), _record("other", 13), _record("third", 16)],
        tensorflow_version="2.21.0",
    )
    plan_fixes(profile, {"m.py": text}, InferOptions())
    changed = text + "x = 1\n"
    plan_fixes(profile, {"m.py": changed}, InferOptions())
    assert reads[text] == 1 and reads[changed] == 1


def test_a_new_version_is_parsed_again(parses: Counter[str]) -> None:
    profile = Profile(functions=[_record("third", 16)], tensorflow_version="2.21.0")
    plan_fixes(profile, {"m.py": TEXT}, InferOptions())
    changed = TEXT + "x = 1\n"
    plan_fixes(profile, {"m.py": changed}, InferOptions())
    assert parses[TEXT] == 1 and parses[changed] == 1


def test_a_project_module_parsed_whole_answers_every_later_function(
    tmp_path, parses: Counter[str]
) -> None:
    """A module another file imports, once parsed whole, is not parsed again cut down to
    each function an analysis follows into it (golden 19's helper module: 3 -> 1)."""
    from autosig.source.project_modules import ProjectModules

    text = (
        "def first(x):\n    return x\n\n\ndef second(x):\n    return x + 1\n\n\n"
        "# test_a_project_module_parsed_whole_answers_every_later_function\n"
    )
    (tmp_path / "helpers.py").write_text(text)
    modules = ProjectModules([tmp_path])
    whole = modules("helpers")
    assert whole is not None and modules("helpers", "first") is whole
    assert modules("helpers", "second") is whole
    assert sum(parses.values()) == 1

"""``x.shape[i]`` -> ``tf.shape(x)[i]``: which reads ``fix --profile`` rewrites (no TensorFlow).

Rule-style examples: REWRITTEN pairs a traced function with the source ``fix`` writes
for it (signature and rewritten reads together); KEPT are reads that must stay static
(used as Python values, or their tensors' static shapes are read later), so the
dimension stays fixed and the function keeps blocking as before. Every example is
profiled the same way: ``x`` (float32, rank 2) arrives with both dimensions varying.
``tests/test_dynamic_shape_tf.py`` runs the rewrites with TensorFlow.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

import pytest

from autosig.infer.observations import InferOptions
from autosig.infer.plan import FunctionPlan, Plan, ShapeRewrite
from autosig.infer.planner import infer_function
from autosig.infer.size_arguments import RANGE_LOOP_WHY, SIZE_ARGUMENTS
from autosig.profile.format import CallSignature, FunctionRecord, ParamInfo
from autosig.rewrite.engine import fix_text
from autosig.rewrite.summary import file_summary

HEAD = "import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n"
SIGNED = (
    "import tensorflow as tf\n\n\n"
    "@tf.function(input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32)])\n"
    "def f(x):\n"
)


def _tensor(*shape: int) -> dict[str, Any]:
    return {"kind": "tensor", "shape": list(shape), "dtype": "float32"}


def _record(src: str, shapes: list[tuple[int, ...]]) -> FunctionRecord:
    signatures: dict[str, CallSignature] = {}
    for index, shape in enumerate(shapes):
        sig = CallSignature(
            args={"x": _tensor(*shape)}, passed={"x": "positional"}, first_call=index
        )
        signatures.setdefault(sig.key(), sig).calls += 1
    line = next(n for n, text in enumerate(src.splitlines(), 1) if text.startswith("def f("))
    return FunctionRecord(
        path="m.py",
        qualname="f",
        line=line,
        source_sha256=None,
        editable=True,
        params=[ParamInfo("x", "POSITIONAL_OR_KEYWORD", None)],
        calls=len(shapes),
        traces=len(signatures),
        signatures=list(signatures.values()),
    )


PROFILE = [(n, n + 1) for n in range(2, 12)]
"""Ten calls, both dimensions of ``x`` varying."""


def fixed(src: str) -> tuple[FunctionPlan, str]:
    """The plan for ``f`` in ``src`` and the text ``fix --profile`` writes."""
    plan = infer_function(_record(src, PROFILE), src, InferOptions(guarded_trace=False))
    result = fix_text(src, "m.py", plan=Plan([plan]), rules=[], unsafe_fixes=False)
    again = fix_text(result.new_text, "m.py", plan=Plan([plan]), rules=[], unsafe_fixes=False)
    assert again.new_text == result.new_text, "a second fix must change nothing"
    return plan, result.new_text


@dataclass(frozen=True)
class Rewritten:
    body: str
    expected: str
    head: str = HEAD
    signed: str = SIGNED


def body(text: str) -> str:
    return textwrap.indent(textwrap.dedent(text).strip("\n"), "    ") + "\n"


REWRITTEN = {
    "tensor_array_size": Rewritten(
        body("ta = tf.TensorArray(tf.float32, size=x.shape[0])\nreturn ta.unstack(x).stack()"),
        body("ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0])\nreturn ta.unstack(x).stack()"),
    ),
    "zeros_with_arithmetic": Rewritten(
        body("return tf.zeros([x.shape[0] * 2, x.shape[1] - 1])"),
        body("return tf.zeros([tf.shape(x)[0] * 2, tf.shape(x)[1] - 1])"),
    ),
    "unpacked_for_reshape": Rewritten(
        body("b, t = x.shape\nreturn tf.reshape(x, [b * t])"),
        body("b, t = tf.shape(x)[0], tf.shape(x)[1]\nreturn tf.reshape(x, [b * t])"),
    ),
    "tile_multiples_negative_index": Rewritten(
        body("return tf.tile(x[:1], [x.shape[0], 1]) / tf.cast(x.shape[-1], tf.float32)"),
        body("return tf.tile(x[:1], [tf.shape(x)[0], 1]) / tf.cast(tf.shape(x)[-1], tf.float32)"),
    ),
    "tf_range_loop": Rewritten(
        body("for i in tf.range(x.shape[1]):\n    tf.print(x[:, i])\nreturn x"),
        body("for i in tf.range(tf.shape(x)[1]):\n    tf.print(x[:, i])\nreturn x"),
    ),
    "python_range_loop": Rewritten(
        body(
            "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n"
            "    h = h * 0.5 + x[:, i]\nreturn h"
        ),
        body(
            "h = tf.zeros([tf.shape(x)[0]])\nfor i in range(tf.shape(x)[1]):\n"
            "    h = h * 0.5 + x[:, i]\nreturn h"
        ),
    ),
    "range_loop_writing_a_tensor_array": Rewritten(
        body(
            "ta = tf.TensorArray(tf.float32, size=x.shape[1])\nfor t in range(x.shape[1]):\n"
            "    ta = ta.write(t, x[:, t] * 2.0)\nreturn ta.stack()"
        ),
        body(
            "ta = tf.TensorArray(tf.float32, size=tf.shape(x)[1])\n"
            "for t in range(tf.shape(x)[1]):\n"
            "    ta = ta.write(t, x[:, t] * 2.0)\nreturn ta.stack()"
        ),
    ),
    "slice_bound_through_a_name": Rewritten(
        body("n = x.shape[1]\nreturn x[:, : n - 1]"),
        body("n = tf.shape(x)[1]\nreturn x[:, : n - 1]"),
    ),
    "cast_to_a_tensor": Rewritten(
        body("return x / tf.cast(x.shape[1], tf.float32)"),
        body("return x / tf.cast(tf.shape(x)[1], tf.float32)"),
    ),
    "derived_read_rewritten_too": Rewritten(
        body("z = tf.zeros([x.shape[0], 2])\nreturn tf.reshape(z, [z.shape[0] * 2])"),
        body("z = tf.zeros([tf.shape(x)[0], 2])\nreturn tf.reshape(z, [tf.shape(z)[0] * 2])"),
    ),
    "comments_and_parentheses_kept": Rewritten(
        body(
            "ta = tf.TensorArray(\n    tf.float32,\n    size=(x.shape[0]),  # one per row\n)\n"
            "return ta.unstack(x).stack()"
        ),
        body(
            "ta = tf.TensorArray(\n    tf.float32,\n    size=(tf.shape(x)[0]),  # one per row\n)\n"
            "return ta.unstack(x).stack()"
        ),
    ),
    "the_files_own_alias": Rewritten(
        body("return tf2.zeros([x.shape[0]])"),
        body("return tf2.zeros([tf2.shape(x)[0]])"),
        head=HEAD.replace("tf", "tf2"),
        signed=SIGNED.replace("tf.", "tf2.").replace("tensorflow as tf", "tensorflow as tf2"),
    ),
    "helper_that_reads_no_shape": Rewritten(
        body(
            "h = tf.zeros([x.shape[0]])\nfor i in tf.range(x.shape[1]):\n    h = step(h, x[:, i])\nreturn h"
        ),
        body(
            "h = tf.zeros([tf.shape(x)[0]])\nfor i in tf.range(tf.shape(x)[1]):\n"
            "    h = step(h, x[:, i])\nreturn h"
        ),
        head="import tensorflow as tf\n\n\ndef step(h, row):\n    return h * 0.5 + row\n\n\n"
        "@tf.function\ndef f(x):\n",
        signed="import tensorflow as tf\n\n\ndef step(h, row):\n    return h * 0.5 + row\n\n\n"
        + SIGNED.split("\n\n\n", 1)[1],
    ),
}


@pytest.mark.parametrize("name", sorted(REWRITTEN))
def test_reads_rewritten_with_the_signature(name: str) -> None:
    case = REWRITTEN[name]
    plan, text = fixed(case.head + case.body)
    assert plan.action == "signature" and plan.safety == "safe", plan.reasons
    assert text == case.signed + case.expected
    assert plan.shape_rewrites


KEPT = {
    "steers_an_if": "if x.shape[1] > 3:\n    return x * 2.0\nreturn x",
    "f_string": 'tf.print(f"length {x.shape[1]}")\nreturn x',
    "dict_key": "return x * SCALES[x.shape[1]]",
    "python_list_index": "return x * WEIGHTS[x.shape[1] - 1]",
    "keras_layer_constructor": "return keras.layers.Dense(x.shape[-1])(x)",
    "code_outside_the_project": "return x * numpy.log(x.shape[1])",
    "true_division": "return x * tf.cast(x.shape[1] / 2, tf.float32)",
    "python_arithmetic_with_a_float": "return tf.zeros([x.shape[1] * 0.5])",
    "rebound_name": "n = x.shape[1]\nn = n + 1\nreturn tf.zeros([n])",
    "index_not_a_literal": "k = 1\nreturn tf.zeros([x.shape[k]])",
    "inside_a_comprehension": "return tf.stack([x[:, i] for i in range(x.shape[1])])",
    "inside_a_lambda": "return tf.map_fn(lambda r: r * tf.cast(x.shape[1], tf.float32), x)",
    "derived_unstacked": "z = tf.zeros([x.shape[0], 2])\nreturn tf.stack(tf.unstack(z))",
    "derived_to_a_keras_layer": "z = tf.zeros([3, x.shape[0]])\nreturn LAYER(z)",
    "derived_static_read_as_python": "z = tf.zeros([x.shape[1]])\nreturn x * float(z.shape[0])",
    "loop_appends_to_a_list": (
        "out = []\nfor i in range(x.shape[1]):\n    out.append(x[:, i])\nreturn tf.stack(out)"
    ),
    "loop_with_an_if": (
        "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n    if i in SKIP:\n"
        "        continue\n    h = h + x[:, i]\nreturn h"
    ),
    "loop_with_break": (
        "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n    h = h + x[:, i]\n"
        "    break\nreturn h"
    ),
    "loop_calls_python": (
        "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n    log(i)\n"
        "    h = h + x[:, i]\nreturn h"
    ),
    "loop_draws_random_numbers": (
        "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n"
        "    h = h + x[:, i] * tf.random.uniform([])\nreturn h"
    ),
    "loop_variable_used_after": (
        "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n    h = h + x[:, i]\n"
        "return h * tf.cast(i, tf.float32)"
    ),
    "loop_state_changes_rank": (
        "h = tf.zeros([])\nfor i in range(x.shape[1]):\n    h = h + x[:, i]\nreturn h"
    ),
    "loop_state_grows": (
        "h = tf.zeros([x.shape[0], 1])\nfor i in range(x.shape[1]):\n"
        "    h = tf.concat([h, x[:, i : i + 1]], 1)\nreturn h"
    ),
    "loop_state_starts_as_python": (
        "h = 0.0\nfor i in range(x.shape[1]):\n    h = h + x[:, i]\nreturn h"
    ),
    "loop_variable_meets_a_float": (
        "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n    h = h + x[:, i] * (i * 0.5)\n"
        "return h"
    ),
    "loop_variable_meets_a_tensor": (
        "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n    h = h + x[:, i] * i\nreturn h"
    ),
    "loop_indexes_a_python_list": (
        "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n    h = h + x[:, i] * WEIGHTS[i]\n"
        "return h"
    ),
}
KEPT_HEAD = (
    "import keras\nimport numpy\nimport tensorflow as tf\n\nSCALES = {}\nWEIGHTS = []\n"
    "SKIP = {1}\nLAYER = keras.layers.Dense(2)\n\n\ndef log(i):\n    print(i)\n\n\n"
    "@tf.function\ndef f(x):\n"
)


@pytest.mark.parametrize("name", sorted(KEPT))
def test_reads_kept(name: str) -> None:
    src = KEPT_HEAD + body(KEPT[name])
    plan, text = fixed(src)
    assert plan.shape_rewrites == ()
    assert "tf.shape(" not in text
    assert plan.action == "none" or plan.safety == "unsafe", plan.reasons


def test_autograph_off_keeps_a_range_loop_static() -> None:
    src = HEAD.replace("@tf.function", "@tf.function(autograph=False)") + body(
        "h = tf.zeros([x.shape[0]])\nfor i in range(x.shape[1]):\n    h = h + x[:, i]\nreturn h"
    )
    plan, text = fixed(src)
    assert plan.action == "none" and text == src


def test_a_function_wrapped_by_a_call_is_not_rewritten() -> None:
    """``fast = tf.function(slow)``: ``slow`` is still a Python function others may call."""
    src = (
        "import tensorflow as tf\n\n\ndef f(x):\n    return tf.zeros([x.shape[0]])\n\n\n"
        "fast = tf.function(f)\n"
    )
    plan, text = fixed(src)
    assert plan.shape_rewrites == () and "tf.shape(" not in text


def test_a_read_in_a_helper_is_not_rewritten() -> None:
    src = (
        "import tensorflow as tf\n\n\ndef rows(t):\n    return tf.zeros([t.shape[0]])\n\n\n"
        "@tf.function\ndef f(x):\n    return rows(x)\n"
    )
    plan, text = fixed(src)
    assert plan.action == "none" and text == src
    assert "rows() (called at line 10)" in " ".join(plan.reasons)


def test_only_reads_in_the_way_are_rewritten() -> None:
    """A dimension that stays fixed (seen constant, not at risk) keeps its static read; the
    signature is unsafe for it (no profile length shows it constant, review21)."""
    src = HEAD + body("b, t, d = x3.shape\nreturn tf.reshape(x3, [b * t, d]) * d")
    src = src.replace("(x)", "(x3)")
    shapes = [(2, n, 4) for n in range(2, 12)]
    rec = _record(src, shapes)
    rec.params[0] = ParamInfo("x3", "POSITIONAL_OR_KEYWORD", None)
    for sig in rec.signatures:
        sig.args = {"x3": sig.args.pop("x")}
        sig.passed = {"x3": "positional"}
    plan = infer_function(rec, src, InferOptions(guarded_trace=False))
    assert [r.replacement() for r in plan.shape_rewrites] == [
        "tf.shape(x3)[0], tf.shape(x3)[1], x3.shape[2]"
    ]
    text = fix_text(src, "m.py", plan=Plan([plan]), rules=[], unsafe_fixes=True).new_text
    assert "b, t, d = tf.shape(x3)[0], tf.shape(x3)[1], x3.shape[2]\n" in text
    assert "shape=[None, None, 4]" in text


def test_fix_summary_says_what_was_rewritten_and_why() -> None:
    case = REWRITTEN["range_loop_writing_a_tensor_array"]
    src = case.head + case.body
    plan = infer_function(_record(src, PROFILE), src, InferOptions(guarded_trace=False))
    result = fix_text(src, "m.py", plan=Plan([plan]), rules=[], unsafe_fixes=False)
    lines = file_summary(result, written=False)
    assert (
        "  - f (line 5): `x.shape[1]` -> `tf.shape(x)[1]` (line 6): it only sizes a TensorArray"
        in lines
    )
    assert any(RANGE_LOOP_WHY in line and "(line 7)" in line for line in lines)


def test_import_added_only_when_missing() -> None:
    src = "from tensorflow import function, zeros\n\n\n@function\ndef f(x):\n" + body(
        "return zeros([x.shape[0]])"
    )
    plan, text = fixed(src)
    assert "return zeros([tf.shape(x)[0]])" in text
    assert text.count("import tensorflow as tf\n") == 1


def test_rewrite_positions_survive_a_longer_decorator() -> None:
    """Reads are found relative to the def line, so a multi-line signature above them
    does not hide them (the engine applies both in one pass, then finds nothing more)."""
    rewrite = ShapeRewrite(line=7, offset=1, column=16, code="x.shape[0]", why="it only ...")
    assert rewrite.replacement("tf2") == "tf2.shape(x)[0]"
    unpack = ShapeRewrite(7, 1, 11, "x.shape", "w", dims=(1,), rank=3)
    assert unpack.replacement() == "x.shape[0], tf.shape(x)[1], x.shape[2]"


def test_every_size_argument_names_its_op() -> None:
    for api, slots in SIZE_ARGUMENTS.items():
        assert api.startswith("tensorflow.")
        for slot in slots:
            assert "{n}" in slot.example and slot.why

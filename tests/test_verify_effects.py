"""Per-call effects comparison (``autosig.verify.effects``), without TensorFlow."""

from __future__ import annotations

import numpy as np

from autosig.rewrite.engine import fix_text
from autosig.rules.registry import select_rules
from autosig.verify.arrays import Tolerance
from autosig.verify.effects import _array_digest, digest, print_records
from autosig.verify.effects_compare import compare_effects
from autosig.verify.reach import SITE_MARK, Design


def _call(output=None, variables=(), printed="", exc=None):
    entry = {"v": [list(v) for v in variables]}
    if exc is not None:
        entry["e"] = exc
    else:
        entry["o"] = digest(output)
    if printed:
        entry["p"] = printed
    return entry


def _var(name, values):
    return (name, _array_digest(np.asarray(values)))


def test_equal_calls_are_equal_and_count_every_call() -> None:
    calls = [_call(1.5, [_var("v:0", [1.0, 2.0])], "x 1\n") for _ in range(3)]
    result = compare_effects(calls, [dict(c) for c in calls], Tolerance())
    assert result.equal and result.calls_compared == 3


def test_a_variable_that_differs_is_found_even_when_nothing_is_returned() -> None:
    old = [_call(None, [_var("seen:0", [float(i << 32)])]) for i in range(1, 4)]
    new = [_call(None, [_var("seen:0", [float(i << 32) if i < 2 else 0.0])]) for i in range(1, 4)]
    result = compare_effects(old, new, Tolerance())
    assert not result.equal and result.first_call == 1 and result.kind == "variables"
    assert "variable seen:0" in result.what


def test_a_caught_exception_differs_with_type_and_place() -> None:
    exc = {"type": "TypeError", "message": "bad n", "where": "/p/model.py:6"}
    result = compare_effects([_call(1)], [_call(exc=exc)], Tolerance())
    assert result.kind == "exception"
    assert "rewritten raised TypeError at /p/model.py:6: bad n" in result.what


def test_fewer_calls_is_a_difference() -> None:
    result = compare_effects([_call(1), _call(1)], [_call(1)], Tolerance())
    assert not result.equal and result.kind == "calls"


def test_python_types_dtypes_and_exact_integers() -> None:
    assert compare_effects([_call(1)], [_call(1.0)], Tolerance()).kind == "outputs"
    big = np.arange(100, dtype=np.int64)
    other = big.copy()
    other[50] += 1
    result = compare_effects([_call(big)], [_call(other)], Tolerance())
    assert "exact digest" in result.what
    assert compare_effects([_call(big)], [_call(big.astype(np.int32))], Tolerance()).what


def test_large_floats_compare_by_tolerance_aware_summary() -> None:
    x = np.linspace(-1, 1, 1000).astype(np.float32)
    close = x + np.float32(1e-8)
    assert compare_effects([_call(x)], [_call(close)], Tolerance()).equal
    far = x.copy()
    far[3] += 0.5
    result = compare_effects([_call(x)], [_call(far)], Tolerance())
    assert not result.equal and "values" in result.what


def _printed(*parts: tuple[str, str]) -> list:
    """What effects.print_records makes of output printed at these sites."""
    return print_records("".join(text + SITE_MARK.format(site=site) for site, text in parts))


def test_print_records_name_their_site_and_join_consecutive_parts() -> None:
    records = _printed(("/p/m.py:5", "a 1\n"), ("/p/m.py:5", "a 2\n"), ("/p/m.py:6", "b\n"))
    assert records == [["/p/m.py:5", "a 1\na 2\n"], ["/p/m.py:6", "b\n"]]


def test_print_stream_compared_and_only_added_sites_by_design() -> None:
    old = [_call(1, printed=_printed(("/p/m.py:7", "loss 1\n")))]
    new = [_call(1, printed=_printed(("/p/m.py:8", "loss 2\n")))]
    assert compare_effects(old, new, Tolerance()).kind == "print"
    added = Design(added_prints=frozenset({"/p/m.py:8"}), added_prints_why="AS101")
    # the changed print is not the one AS101 added: still a difference
    assert compare_effects(old, new, Tolerance(), design=added).kind == "print"
    both = [_call(1, printed=_printed(("/p/m.py:7", "step\n"), ("/p/m.py:8", "loss 1\n")))]
    labelled = compare_effects(old, both, Tolerance(), design=added)
    assert not labelled.equal  # "loss 1" -> "step": AS101's line is not the one kept
    fine = [_call(1, printed=_printed(("/p/m.py:8", "step\n"), ("/p/m.py:9", "loss 1\n")))]
    labelled = compare_effects(old, fine, Tolerance(), design=added)
    assert labelled.equal and labelled.by_design == "AS101"


def test_printed_integers_compare_exactly_and_decimals_with_float32_tolerance() -> None:
    def calls(text: str) -> list:
        return [_call(1, printed=_printed(("/p/m.py:3", text)))]

    assert compare_effects(calls("x 0.5000001\n"), calls("x 0.5\n"), Tolerance()).equal
    assert not compare_effects(calls("x 0.25\n"), calls("x 0\n"), Tolerance()).equal
    step = compare_effects(calls("step 1000000001\n"), calls("step 1000000002\n"), Tolerance())
    assert step.kind == "print"


def test_random_values_by_design_only_where_the_draws_reach() -> None:
    a, b = np.zeros([20], np.float32), np.ones([20], np.float32)
    design = Design(values="random", outputs=frozenset({"output[0]"}))
    ok = compare_effects([_call((a, a))], [_call((b, a))], Tolerance(), design=design)
    assert ok.equal and ok.by_design == "random"
    beside = compare_effects([_call((a, a))], [_call((a, b))], Tolerance(), design=design)
    assert not beside.equal and "output[1]" in beside.what
    bad = compare_effects([_call((a, a))], [_call((b[:3], a))], Tolerance(), design=design)
    assert not bad.equal and "shape [20] -> [3]" in bad.what


def test_variables_a_draw_reaches_are_by_design_the_others_exact() -> None:
    old = [_call(None, [_var("w:0", [1.0, 2.0]), _var("it:0", [1])])]
    drawn = [_call(None, [_var("w:0", [1.5, 2.5]), _var("it:0", [1])])]
    design = Design(values="random", variables=frozenset({"w:0"}))
    assert compare_effects(old, drawn, Tolerance(), design=design).equal
    counted = [_call(None, [_var("w:0", [1.0, 2.0]), _var("it:0", [2])])]
    result = compare_effects(old, counted, Tolerance(), design=design)
    assert result.kind == "variables" and "it:0" in result.what


def test_rel_error_is_undefined_not_inf_for_zero_reference() -> None:
    result = compare_effects([_call(np.float32(0.0))], [_call(np.float32(1e-9))], Tolerance())
    assert result.equal and not result.rel_defined


SOURCE = """\
import tensorflow as tf


@tf.function
def keep(x):
    return x + 1


@tf.function
def other(x):
    return x + 2
"""


def test_untouched_functions_get_no_static_fix() -> None:
    rules = select_rules(["AS107"], None)
    both = fix_text(SOURCE, "m.py", plan=None, rules=rules, unsafe_fixes=False)
    assert both.new_text.count("reduce_retracing=True") == 2
    one = fix_text(
        SOURCE, "m.py", plan=None, rules=rules, unsafe_fixes=False, untouched=frozenset({"keep"})
    )
    assert one.new_text.count("reduce_retracing=True") == 1
    assert "@tf.function\ndef keep" in one.new_text


def test_a_variable_added_by_design_is_reported_with_its_values_never_equal() -> None:
    """AS103 turns a Python counter into tf.Variable(0), created before the float32 total
    of the same default name: the total is still compared with the total, and the new
    counter is reported with its value after each call."""
    total = ["Variable:0", {"dtype": "float32", "shape": [3], "values": [1.0, 2.0, 3.0]}]

    def steps(n: int) -> list:
        return ["Variable:0", {"dtype": "int32", "shape": [], "values": [n]}]

    old = [{"o": digest(None), "v": [total]} for _ in range(3)]
    new = [{"o": digest(None), "v": [steps(n), total]} for n in (1, 2, 3)]
    design = Design(new_state="AS103: self.steps")
    result = compare_effects(old, new, Tolerance(), design=design)
    assert result.equal and result.new_state == {"Variable:0 int32[]": ["1", "2", "3"]}
    unexpected = compare_effects(old, new, Tolerance())  # not by design: a failure
    assert not unexpected.equal and "only in the rewritten" in unexpected.what
    moved = [
        {"o": digest(None), "v": [steps(n), [total[0], {**total[1], "values": [0.0] * 3}]]}
        for n in (1, 2, 3)
    ]
    assert compare_effects(old, moved, Tolerance(), design=design).kind == "variables"

"""Per-call effects comparison (``autosig.verify.effects``), without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from autosig.rewrite.engine import fix_text
from autosig.rules.registry import select_rules
from autosig.verify.compare import Tolerance
from autosig.verify.effects import _array_digest, compare_effects, digest


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


def test_print_stream_compared_and_by_design_label() -> None:
    old, new = [_call(1, printed="loss 1\n")], [_call(1, printed="loss 2\n")]
    assert compare_effects(old, new, Tolerance()).kind == "print"
    labelled = compare_effects(old, new, Tolerance(), print_by_design="AS101")
    assert labelled.equal and labelled.by_design == "AS101"


def test_random_values_by_design_still_check_shapes() -> None:
    a, b = np.zeros([20], np.float32), np.ones([20], np.float32)
    ok = compare_effects([_call(a)], [_call(b)], Tolerance(), values_by_design="random")
    assert ok.equal and ok.by_design == "random"
    bad = compare_effects([_call(a)], [_call(b[:3])], Tolerance(), values_by_design="random")
    assert not bad.equal and "shape [20] -> [3]" in bad.what


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


def test_a_variable_added_by_design_does_not_shift_the_others() -> None:
    """AS103 turns a Python counter into tf.Variable(0), created before the float32 total
    of the same default name: the total is still compared with the total."""
    from autosig.verify.compare import Tolerance
    from autosig.verify.effects import EffectsComparison, _compare_variables, _Tol

    total = ["Variable:0", {"dtype": "float32", "shape": [3], "values": [1.0, 2.0, 3.0]}]
    steps = ["Variable:0", {"dtype": "int32", "shape": [], "values": [4]}]
    notes: list[str] = []
    tol = _Tol(Tolerance(), EffectsComparison(calls_compared=0))
    _compare_variables([total], [steps, total], tol, "", True, notes)
    with pytest.raises(Exception, match="only in the rewritten"):  # not by design: a failure
        _compare_variables([total], [steps, total], tol, "", False, notes)

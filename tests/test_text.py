"""Numbers and words as autosig prints them: one spelling everywhere."""

from __future__ import annotations

import pytest

from autosig.infer.specs import EVIDENCE, EXPLAIN, show_value
from autosig.text import digits_for, number, plural


@pytest.mark.parametrize(
    "value, shown",
    [
        (0.015 * 3, "0.045"),  # 0.045000000000000005 in full
        (0.1 + 0.2, "0.3"),
        (0.81 * 0.9, "0.729"),
        (3.0, "3.0"),  # a float still reads as a float
        (1e-07, "1e-07"),
        (2.5e-05, "2.5e-05"),
        (1e16, "1e+16"),
        (123456789.123, "123456789.123"),
        (1 / 3, "0.333333333333"),
        (float("nan"), "nan"),
        (float("-inf"), "-inf"),
        (5, "5"),
        (True, "True"),
        ("a", "a"),
    ],
)
def test_number_is_the_shortest_text_that_reads_back_at_its_precision(
    value: object, shown: str
) -> None:
    assert number(value) == shown
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        assert float(shown) == float(f"{value:.12g}")  # reads back to the shown precision


def test_number_with_fewer_digits_and_numpy_scalars() -> None:
    np = pytest.importorskip("numpy")
    assert number(0.7412, 3) == "0.741"
    assert number(np.float32(0.1)) == "0.1"  # not 0.100000001490116
    assert number(np.int64(3)) == "3"
    assert number(float(np.float32(0.1)), digits_for("float32")) == "0.1"
    assert digits_for("float64") == 12 and digits_for(None) == 12


def test_recorded_python_values_print_as_typed() -> None:
    assert show_value(0.015 * 3, EXPLAIN) == "0.045"
    assert show_value(6.0, EVIDENCE) == "6.0"
    assert show_value(1 / 3, EVIDENCE) == "0.333333"
    assert show_value("x", EXPLAIN) == "'x'"


def test_plural() -> None:
    assert plural(1, "call") == "1 call"
    assert plural(2, "fix", "fixes") == "2 fixes"

"""The vocabulary of parameter constraints (``mcal._validation``) and the base class's check of the table."""

import numbers
import re
from typing import ClassVar

import numpy as np
import pytest

from mcal._base import BaseCalibrator
from mcal._constraints import Interval, StrOptions, check_param


@pytest.mark.parametrize(
    ("interval", "rule"),
    [
        (Interval(numbers.Integral, 1, None), "a positive integer"),
        (Interval(numbers.Integral, 2, None), "an integer >= 2"),
        (Interval(numbers.Integral, 0, None), "an integer >= 0"),
        (Interval(numbers.Integral, 1, 10), "an integer >= 1 and <= 10"),
        (Interval(numbers.Real, 0, 1, closed="right"), "a number in (0, 1]"),
        (Interval(numbers.Real, 0, 1, closed="neither"), "a number in (0, 1)"),
        (Interval(numbers.Real, 1, 2, closed="left"), "a number in [1, 2)"),
        (Interval(numbers.Real, 0, None, closed="neither"), "a finite number > 0"),
        (Interval(numbers.Real, 0, None), "a finite number >= 0"),
    ],
)
def test_an_interval_states_its_rule_from_its_bounds(interval, rule):
    assert interval.rule == rule


@pytest.mark.parametrize(
    ("interval", "inside", "outside"),
    [
        (Interval(numbers.Integral, 1, 10), [1, 10, np.int64(5)], [0, 11]),
        (Interval(numbers.Real, 0, 1, closed="right"), [1.0, 1e-9], [0.0, 1.5]),
        (Interval(numbers.Real, 0, 1, closed="left"), [0.0, 0.5], [1.0, -0.1]),
        (Interval(numbers.Real, 0, None, closed="neither"), [1e-300, 1e300], [0.0, -1.0, float("inf")]),
    ],
)
def test_an_interval_takes_its_inside_and_refuses_its_outside_with_value_error(interval, inside, outside):
    for value in inside:
        interval.check("x", value)
    for value in outside:
        with pytest.raises(ValueError, match=f"^x must be {re.escape(interval.rule)}; got"):
            interval.check("x", value)


@pytest.mark.parametrize("value", [True, 2.0, "3", None])
def test_an_integer_interval_refuses_bools_floats_and_text_with_type_error(value):
    with pytest.raises(TypeError, match=f"^n must be a positive integer; got {value!r} of type"):
        Interval(numbers.Integral, 1, None).check("n", value)


def test_a_list_lets_none_pass_and_checks_other_values_by_their_constraint():
    rule = [None, Interval(numbers.Integral, 2, None, rule="None or an integer >= 2")]
    check_param("k", None, rule)
    check_param("k", 3, rule)
    with pytest.raises(ValueError, match=r"^k must be None or an integer >= 2; got 1$"):
        check_param("k", 1, rule)
    with pytest.raises(TypeError, match="^k must be None or an integer >= 2; got 'a' of type str$"):
        check_param("k", "a", rule)


def test_a_list_of_constraints_passes_when_one_holds_and_raises_the_value_error_first():
    rule = [StrOptions("auto"), Interval(numbers.Integral, 1, None)]
    check_param("n", "auto", rule)
    check_param("n", 4, rule)
    with pytest.raises(ValueError, match="^n must be 'auto'; got 'x'$"):
        check_param("n", "x", rule)
    with pytest.raises(ValueError, match="^n must be a positive integer; got 0$"):
        check_param("n", 0, rule)


def test_named_constraints_and_check_functions():
    check_param("flag", np.bool_(True), "boolean")
    with pytest.raises(TypeError, match="^flag must be True or False; got 1 of type int$"):
        check_param("flag", 1, "boolean")
    with pytest.raises(ValueError, match="^random_state must be None or a non-negative integer; got -1$"):
        check_param("random_state", -1, "random_state")
    check_param("client", object(), "no_validation")  # judged where it is used
    with pytest.raises(TypeError, match="^x must be None; got 1 of type int$"):
        check_param("x", 1, None)

    def even(name, value):
        if value % 2:
            raise ValueError(f"{name} must be even; got {value!r}")

    check_param("m", 2, even)
    with pytest.raises(ValueError, match="^m must be even; got 3$"):
        check_param("m", 3, even)


class _Toy(BaseCalibrator):
    _state_attrs: ClassVar[tuple[str, ...]] = ("value_",)
    _parameter_constraints: ClassVar[dict] = {"n": Interval(numbers.Integral, 1, None), "low": "boolean"}

    def __init__(self, *, n=1, low=False):
        self.n = n
        self.low = low

    def _check_param_relations(self):
        if self.low and self.n > 3:
            raise ValueError(f"n must be at most 3 with low=True; got n={self.n}")

    def _fit(self, y_prob, y, sample_weight, X):
        self.value_ = float(np.average(y, weights=sample_weight))

    def _predict(self, y_prob, X):
        return np.full(y_prob.shape, self.value_)


def test_fit_checks_the_table_and_then_the_relations_between_parameters():
    p, y = np.array([0.2, 0.8]), np.array([0, 1])
    _Toy(n=5).fit(p, y)
    with pytest.raises(ValueError, match="^n must be a positive integer; got 0$"):
        _Toy(n=0).fit(p, y)
    with pytest.raises(TypeError, match="^low must be True or False"):
        _Toy(low="yes").fit(p, y)
    with pytest.raises(ValueError, match="^n must be at most 3 with low=True; got n=5$"):
        _Toy(n=5, low=True).fit(p, y)

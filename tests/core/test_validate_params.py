"""The decorator ``validate_params`` (``mcal._constraints``) and its use over the public functions."""

import doctest
import importlib
import inspect
import numbers
import re
from pathlib import Path

import numpy as np
import pytest

from mcal._constraints import Instance, Interval, StrOptions, check_param, validate_params
from mcal.monitor import MonitorResult
from mcal.segments import Segments, from_masks

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _counting(calls):
    def check(name, value):
        calls.append((name, value))

    return check


def test_each_kind_of_constraint_is_checked_with_the_standard_message():
    @validate_params({
        "n": Interval(numbers.Integral, 1, None),
        "level": Interval(numbers.Real, 0, 1, closed="neither"),
        "how": StrOptions("a", "b"),
        "seg": [None, Instance(Segments)],
        "flag": "boolean",
        "seed": "random_state",
        "even": lambda name, value: None if value % 2 == 0 else (_ for _ in ()).throw(ValueError(f"{name} odd")),
    })  # fmt: skip
    def f(n=1, level=0.5, how="a", seg=None, flag=False, seed=None, even=0):
        return "ran"

    assert f() == "ran"
    cases = [
        ({"n": 0}, ValueError, "n must be a positive integer; got 0"),
        ({"n": 1.0}, TypeError, "n must be a positive integer; got 1.0 of type float"),
        ({"n": True}, TypeError, "n must be a positive integer; got True of type bool"),
        ({"level": 1}, ValueError, "level must be a number in (0, 1); got 1"),
        ({"level": float("nan")}, ValueError, "level must be a number in (0, 1); got nan"),
        ({"how": "c"}, ValueError, "how must be 'a' or 'b'; got 'c'"),
        ({"how": 1}, TypeError, "how must be 'a' or 'b'; got 1 of type int"),
        ({"seg": "x"}, TypeError, "seg must be a mcal.segments.Segments; got str"),
        ({"flag": 1}, TypeError, "flag must be True or False; got 1 of type int"),
        ({"seed": -1}, ValueError, "random_state must be None or a non-negative integer; got -1"),
        ({"even": 3}, ValueError, "even odd"),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            f(**kwargs)
    assert (
        f(seg=from_masks(np.ones((2, 1), dtype=bool)), n=np.int64(3), level=0.1, how="b", flag=np.bool_(True)) == "ran"
    )


def test_positional_and_keyword_arguments_are_checked_before_the_function_runs():
    ran = []

    @validate_params({"k": Interval(numbers.Integral, 2, None)})
    def f(x, k, *, other=None):
        ran.append(k)

    for call in (lambda: f([1], 1), lambda: f([1], k=1), lambda: f(x=[1], k=1)):
        with pytest.raises(ValueError, match=r"^k must be an integer >= 2; got 1$"):
            call()
    assert ran == []
    f([1], 2)
    f([1], k=3, other="anything")
    assert ran == [2, 3]


def test_parameters_are_checked_in_the_order_of_the_table_whatever_the_call():
    @validate_params({"a": StrOptions("x"), "b": StrOptions("y")})
    def f(*, b="y", a="x"):
        return None

    with pytest.raises(ValueError, match="^a must be 'x'"):
        f(b="bad", a="bad")


def test_defaults_are_checked_once_when_decorated_and_not_at_each_call():
    calls = []

    @validate_params({"a": _counting(calls), "b": _counting(calls)})
    def f(a=1, *, b=2):
        return a + b

    assert calls == [("a", 1), ("b", 2)]  # at decoration
    calls.clear()
    assert f() == 3
    assert calls == []
    f(5)
    f(b=7)
    assert calls == [("a", 5), ("b", 7)]


def test_a_bad_default_or_an_unknown_name_fails_when_decorating():
    with pytest.raises(ValueError, match="^n must be a positive integer; got 0$"):

        @validate_params({"n": Interval(numbers.Integral, 1, None)})
        def f(n=0):
            return n

    with pytest.raises(TypeError, match=r"names parameters that .*g does not take: \['m'\]"):

        @validate_params({"m": "boolean"})
        def g(n=0):
            return n


def test_the_wrapper_keeps_the_name_docstring_and_signature_and_exposes_its_table():
    table = {"n": Interval(numbers.Integral, 1, None)}

    @validate_params(table)
    def f(y, *, n=1):
        """Doc."""
        return y * n

    assert (f.__name__, f.__doc__, str(inspect.signature(f))) == ("f", "Doc.", "(y, *, n=1)")
    assert f._parameter_constraints == table
    assert f(2, n=3) == 6


# Every decorated public function: positional arguments that are valid enough to reach the decorator. Adding the
# decorator to a public function without an entry here, or removing it from one, fails the tests below.
_Y, _P = [0, 1, 0, 1], [0.2, 0.7, 0.4, 0.6]
_SEGS = from_masks(np.ones((4, 1), dtype=bool))
DECORATED = {
    "mcal.metrics.bootstrap": (np.mean, _Y, _P),
    "mcal.metrics.calibration_summary": (_Y, {"m": _P}),
    "mcal.metrics.classwise_ece": (_Y, [[0.5, 0.5]] * 4),
    "mcal.metrics.cumulative_curve": (_Y, _P),
    "mcal.metrics.ecce": (_Y, _P),
    "mcal.metrics.ecce_pvalue": (_Y, _P),
    "mcal.metrics.ecce_sigma": (_Y, _P),
    "mcal.metrics.ecce_std": (_Y, _P),
    "mcal.metrics.ece": (_Y, _P),
    "mcal.metrics.f_rce": (_Y, _P),
    "mcal.metrics.mce": (_Y, _P),
    "mcal.metrics.multiclass_summary": (_Y, {"m": [[0.5, 0.5]] * 4}),
    "mcal.metrics.per_value_table": (_Y, _P),
    "mcal.metrics.reliability_curve": (_Y, _P),
    "mcal.metrics.reliability_intervals": (_Y, _P),
    "mcal.metrics.segment_intervals": (_Y, _P, _SEGS, [0]),
    "mcal.metrics.summary_intervals": (_Y, {"m": _P}),
    "mcal.metrics.top_label_ece": (_Y, [[0.5, 0.5]] * 4),
    "mcal.metrics.wilson_interval": (0.5, 10),
    "mcal.metrics.worst_segments": ({}, _SEGS),
    "mcal.segments.generate_segments": ([[1.0], [2.0]],),
    "mcal.monitor.monitor": (_Y, _P, [0, 0, 1, 1]),
    "mcal.monitor.monitor_report": (object.__new__(MonitorResult), "unwritten.html"),
    "mcal.dask.monitor": (_Y, _P, [0, 0, 1, 1]),
    "mcal.report.make_report": (_Y, {"m": _P}),
    "mcal.report.make_multiclass_report": (_Y, {"m": [[0.5, 0.5]] * 4}),
    **{
        f"mcal.dask.metrics.{name}": (_Y, _P)
        for name in ["ecce", "ecce_pvalue", "ecce_sigma", "ecce_std", "ece", "mce"]
    },
    "mcal.dask.metrics.f_rce": (_Y, _P),
    "mcal.dask.metrics.calibration_summary": (_Y, {"m": _P}),
    "mcal.dask.metrics.per_value_table": (_Y, _P),
}
MODULES = ["mcal.metrics", "mcal.monitor", "mcal.report", "mcal.segments", "mcal.dask", "mcal.dask.metrics"]


def _module(name):
    try:
        return importlib.import_module(name)
    except ImportError:  # mcal.dask.metrics without dask
        return None


def _function(path):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


#: The decorated functions that this installation can import.
AVAILABLE = [path for path in DECORATED if _module(path.rsplit(".", 1)[0]) is not None]


def test_the_table_lists_every_decorated_public_function():
    found = {
        f"{name}.{public}"
        for name in MODULES
        if (module := _module(name)) is not None
        for public in module.__all__
        if inspect.isfunction(getattr(module, public)) and hasattr(getattr(module, public), "_parameter_constraints")
    }
    assert found == set(AVAILABLE)


@pytest.mark.parametrize(
    ("path", "param"),
    [(path, param) for path in AVAILABLE for param in getattr(_function(path), "_parameter_constraints", [None])],
)
def test_a_bad_parameter_of_a_public_function_gets_the_standard_message(path, param):
    func = _function(path)
    assert hasattr(func, "_parameter_constraints"), f"{path} is not decorated with validate_params"
    bad = object()
    with pytest.raises(TypeError) as info:
        check_param(param, bad, func._parameter_constraints[param])
    with pytest.raises(TypeError, match=f"^{re.escape(param)} must .+; got ") as raised:
        func(*DECORATED[path], **{param: bad})
    assert str(raised.value) == str(info.value)


@pytest.mark.parametrize(
    ("path", "kwargs", "message"),
    [
        ("mcal.metrics.ece", {"n_bins": 0}, "n_bins must be a positive integer; got 0"),
        ("mcal.metrics.ece", {"strategy": "equal"}, "strategy must be 'uniform' or 'quantile'; got 'equal'"),
        ("mcal.metrics.ecce", {"outcome": "counts"}, "outcome must be 'classification' or 'regression'; got 'counts'"),
        ("mcal.metrics.f_rce", {"epsilon": -1.0}, "epsilon must be a non-negative finite number; got -1.0"),
        ("mcal.metrics.bootstrap", {"n_resamples": 1}, "n_resamples must be an integer >= 2; got 1"),
        ("mcal.metrics.bootstrap", {"confidence_level": 1.0}, "confidence_level must be a number in (0, 1); got 1.0"),
        ("mcal.metrics.bootstrap", {"method": "bc"}, "method must be 'percentile', 'basic' or 'bca'; got 'bc'"),
        ("mcal.metrics.cumulative_curve", {"max_points": 3}, "max_points must be an integer >= 4; got 3"),
        ("mcal.metrics.wilson_interval", {"confidence": 0.0}, "confidence must be a number in (0, 1); got 0.0"),
        ("mcal.metrics.worst_segments", {"max_overlap": 0}, "max_overlap must be in (0, 1] or None; got 0"),
        ("mcal.segments.generate_segments", {"max_depth": -1}, "max_depth must be an integer >= 0 or None; got -1"),
        (
            "mcal.monitor.monitor",
            {"n_resamples": 1},
            "n_resamples must be 0 (no bootstrap intervals) or an integer >= 2; got 1",
        ),
        ("mcal.dask.monitor", {"alpha": 0}, "alpha must be a number in (0, 1); got 0"),
    ],
)
def test_a_value_outside_its_rule_gets_value_error_naming_the_rule(path, kwargs, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        _function(path)(*DECORATED[path], **kwargs)


def test_the_bad_parameter_is_named_even_when_passed_positionally():
    from mcal.metrics import segment_intervals

    with pytest.raises(TypeError, match="^segments must be a mcal.segments.Segments; got list$"):
        segment_intervals(_Y, _P, [[True]] * 4, [0])


def test_the_errors_page_examples_run():
    failures, tried = doctest.testfile(str(DOCS / "user_guide" / "errors.rst"), module_relative=False)
    assert tried >= 3 and failures == 0


#: Phrases of the errors common to every function, which the errors page states once.
COMMON_ERRORS = (
    "not array-like", "on invalid input", "invalid labels", "invalid parameters", "mismatched lengths",
    "not a dask collection",
)  # fmt: skip


@pytest.mark.parametrize("module_name", [name for name in MODULES if name != "mcal.dask"])  # its estimators aside
def test_raises_sections_leave_the_common_errors_to_the_errors_page(module_name):
    from numpydoc.docscrape import FunctionDoc

    module = importlib.import_module(module_name)
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj):
            text = " ".join(" ".join(entry.desc) for entry in FunctionDoc(obj)["Raises"]).lower()
            assert not [p for p in COMMON_ERRORS if p in text], f"{module_name}.{name}"

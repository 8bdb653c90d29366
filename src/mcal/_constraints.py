"""The vocabulary of parameter constraints: each estimator declares the rule of each parameter once, in its
class-level table ``_parameter_constraints`` (as scikit-learn's ``sklearn.utils._param_validation``), and the base
class checks the table at fit time (:meth:`mcal.BaseCalibrator._validate_params`); each public function declares
its table in the decorator :func:`validate_params`, which checks it at every call.

A rule is a constraint below (:class:`Interval`, :class:`StrOptions`, :class:`Instance`), None (the value may be None), "boolean", "random_state", "no_validation" (checked
where the value is used), a function ``check(name, value)`` that raises, or a list of these: the value must meet
one of them. Messages read ``"<arg> must <rule>; got <observed>"``, from the ``check_*`` helpers of
:mod:`mcal._validation`.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import numbers
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from mcal._validation import OUTCOMES, check_bool, check_choice, check_int, check_random_state_param, check_real

_F = TypeVar("_F", bound=Callable[..., Any])


class Interval:
    """Numbers of one kind within bounds: ``Interval(numbers.Integral, 1, None, closed="left")`` for a positive
    integer.

    Parameters
    ----------
    kind : numbers.Integral or numbers.Real
        Integers (numpy integers included, bools not) or real numbers (finite; bools not).
    left, right : float or None
        The bounds; None for none on that side.
    closed : {"both", "left", "right", "neither"}, default="both"
        Which bounds belong to the interval.
    rule : str or None, default=None
        What the messages say the value must be; None says it from the bounds ("a positive integer",
        "an integer >= 2", "a number in (0, 1]", "a finite number >= 0").
    """

    def __init__(
        self, kind: type, left: float | None, right: float | None, *, closed: str = "both", rule: str | None = None
    ) -> None:
        self.kind, self.left, self.right, self.closed = kind, left, right, closed
        self.rule = rule or self._describe()

    def _describe(self) -> str:
        left_op = ">=" if self.closed in ("both", "left") else ">"
        right_op = "<=" if self.closed in ("both", "right") else "<"
        if self.kind is numbers.Integral:
            if self.right is None and left_op == ">=" and self.left == 1:
                return "a positive integer"
            bounds = [f"{op} {v}" for op, v in ((left_op, self.left), (right_op, self.right)) if v is not None]
            return "an integer " + " and ".join(bounds) if bounds else "an integer"
        if self.left is None or self.right is None:
            op, v = (left_op, self.left) if self.right is None else (right_op, self.right)
            return "a finite number" if v is None else f"a finite number {op} {v}"
        brackets = "[" if left_op == ">=" else "(", "]" if right_op == "<=" else ")"
        return f"a number in {brackets[0]}{self.left}, {self.right}{brackets[1]}"

    def __contains__(self, value: float) -> bool:
        low_ok = self.left is None or (value >= self.left if self.closed in ("both", "left") else value > self.left)
        high_ok = self.right is None or (
            value <= self.right if self.closed in ("both", "right") else value < self.right
        )
        return low_ok and high_ok

    def check(self, name: str, value: object) -> None:
        """Raise ``TypeError`` unless ``value`` is of the kind, ``ValueError`` unless it lies within the bounds."""
        check = check_int if self.kind is numbers.Integral else check_real
        check(name, value, self.rule, self.__contains__)


class StrOptions:
    """One of a few words (and None where it is one of them): :func:`check_choice`."""

    def __init__(self, *options: str | None) -> None:
        self.options = options

    def check(self, name: str, value: object) -> None:
        check_choice(name, value, self.options)


class Instance:
    """An instance of one of a few types: ``Instance(Segments)``, whose messages say "a mcal.segments.Segments".

    Parameters
    ----------
    types : type or tuple of type
        The types the value may be an instance of (as :func:`isinstance`).
    rule : str or None, default=None
        What the messages say the value must be; None names the types by their public path.
    """

    def __init__(self, types: type | tuple[type, ...], *, rule: str | None = None) -> None:
        self.types = types
        self.rule = rule or " or ".join(
            f"a {_public_path(t)}" for t in (types if isinstance(types, tuple) else (types,))
        )

    def check(self, name: str, value: object) -> None:
        """Raise ``TypeError`` unless ``value`` is an instance of the types."""
        if not isinstance(value, self.types):
            raise TypeError(f"{name} must be {self.rule}; got {type(value).__name__}")


def _public_path(cls: type) -> str:
    """``mcal.segments.Segments`` for a class defined in ``mcal.segments._segments``; ``str`` for a builtin."""
    if cls.__module__ == "builtins":
        return cls.__qualname__
    public = itertools.takewhile(lambda part: not part.startswith("_"), cls.__module__.split("."))
    return ".".join([*public, cls.__qualname__])


#: Rules that many public functions share, declared once.
POSITIVE_INT = Interval(numbers.Integral, 1, None)
N_BINS = POSITIVE_INT
STRATEGY = StrOptions("uniform", "quantile")
OUTCOME = StrOptions(*OUTCOMES)
OPEN_UNIT = Interval(numbers.Real, 0, 1, closed="neither")
NON_NEGATIVE = Interval(numbers.Real, 0, None, rule="a non-negative finite number")
#: Bootstrap resamples (:func:`mcal.metrics.bootstrap`).
N_RESAMPLES = Interval(numbers.Integral, 2, None)
#: The bins of a binned metric.
BINS = {"n_bins": N_BINS, "strategy": STRATEGY}
#: The overlap above which two segments count as one finding (:func:`mcal.metrics.worst_segments`).
MAX_OVERLAP = [None, Interval(numbers.Real, 0, 1, closed="right", rule="in (0, 1] or None")]
#: Characters per line of a result's text summary.
TEXT_WIDTH = POSITIVE_INT
#: A count that may be 0 (rounds, epochs, ...).
NON_NEGATIVE_INT = Interval(numbers.Integral, 0, None)
#: Segments listed in a result's text summary (0: none).
N_WORST = NON_NEGATIVE_INT
#: A title or other text that may be left out.
OPTIONAL_STR = [None, Instance(str, rule="a string or None")]

_NAMED_CONSTRAINTS: dict[str, Callable[[str, object], None]] = {
    "no_validation": lambda name, value: None,  # checked where it is used (e.g. a dask client)
    "boolean": check_bool,
    "random_state": lambda name, value: check_random_state_param(value),
}


def _checker(constraint: object) -> Callable[[str, object], None] | None:
    """The function that checks one constraint of a rule (None for None, which only lets None pass)."""
    if constraint is None:
        return None
    if isinstance(constraint, str):
        return _NAMED_CONSTRAINTS[constraint]
    if hasattr(constraint, "check"):
        return constraint.check
    if callable(constraint):
        return constraint
    raise TypeError(f"a parameter constraint must be None, a name, a constraint or a function; got {constraint!r}")


def check_param(name: str, value: object, rule: object) -> None:
    """Check the parameter ``name`` against its ``rule`` (one constraint, or a list of which one must hold).

    Raises
    ------
    TypeError, ValueError
        As the constraint that the value fails: of the first constraint that fails with a ``ValueError`` (the
        value has the right type but not the right value), else of the first one.
    """
    if not isinstance(rule, list) and rule is not None:  # one constraint: its own error
        _checker(rule)(name, value)  # type: ignore[misc]
        return
    constraints = rule if isinstance(rule, list) else [rule]
    if value is None and None in constraints:
        return
    errors: list[Exception] = []
    for check in filter(None, map(_checker, constraints)):
        try:
            check(name, value)
            return
        except (TypeError, ValueError) as exc:
            errors.append(exc)
    if not errors:
        raise TypeError(f"{name} must be None; got {value!r} of type {type(value).__name__}")
    raise next((e for e in errors if isinstance(e, ValueError)), errors[0])


def check_params(constraints: Mapping[str, object], owner: object) -> None:
    """Check each parameter of ``owner`` (an estimator) that the table ``constraints`` names, in its order."""
    for name, rule in constraints.items():
        check_param(name, getattr(owner, name), rule)


def validate_params(constraints: Mapping[str, object]) -> Callable[[_F], _F]:
    """Decorator that checks the parameters of a public function against their rules, the function's
    ``_parameter_constraints`` (as an estimator's, in the same vocabulary and with the same messages).

    Each call checks the arguments that the caller passed, positionally or by keyword, in the table's order and
    before the function runs; a default is checked once, when the function is decorated, and not at each call.
    Arrays are checked by the function itself (:mod:`mcal._validation`), not here.

    Parameters
    ----------
    constraints : mapping of str to rule
        The rule of each parameter that has one (see the module's docstring); others are not checked here.

    Returns
    -------
    decorator : callable
        Takes the function and returns it wrapped (:func:`functools.wraps`), with ``_parameter_constraints`` set.

    Raises
    ------
    TypeError
        When decorating, if the table names a parameter that the function does not take.
    """

    def decorate(func: _F) -> _F:
        params = inspect.signature(func).parameters
        unknown = [name for name in constraints if name not in params]
        if unknown:
            raise TypeError(f"validate_params names parameters that {func.__qualname__} does not take: {unknown}")
        for name, rule in constraints.items():
            if params[name].default is not inspect.Parameter.empty:
                check_param(name, params[name].default, rule)
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        positional = [name for name, p in params.items() if p.kind in kinds]
        rules = list(constraints.items())

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            passed = dict(zip(positional, args, strict=False)) if args else {}
            passed.update(kwargs)
            for name, rule in rules:
                if name in passed:
                    check_param(name, passed[name], rule)
            return func(*args, **kwargs)

        wrapper._parameter_constraints = dict(constraints)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def check_bins(n_bins: int, strategy: str) -> None:
    """Raise ``TypeError`` unless ``n_bins`` is an integer and ``strategy`` a str, ``ValueError`` unless ``n_bins``
    is positive and ``strategy`` one of 'uniform' and 'quantile'."""
    check_param("n_bins", n_bins, N_BINS)
    check_param("strategy", strategy, STRATEGY)


def check_open_unit(value: float, name: str) -> None:
    """Raise ``TypeError`` unless ``value`` is a real number (numpy's included), ``ValueError`` unless it is strictly
    between 0 and 1 (a level or a probability)."""
    OPEN_UNIT.check(name, value)

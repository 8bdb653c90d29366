"""The vocabulary of parameter constraints: each estimator declares the rule of each parameter once, in its
class-level table ``_parameter_constraints`` (as scikit-learn's ``sklearn.utils._param_validation``), and the base
class checks the table at fit time (:meth:`mcal.BaseCalibrator._validate_params`).

A rule is a constraint below, None (the value may be None), "boolean", "random_state", "no_validation" (checked
where the value is used), a function ``check(name, value)`` that raises, or a list of these: the value must meet
one of them. Messages read ``"<arg> must <rule>; got <observed>"``, from the ``check_*`` helpers of
:mod:`mcal._validation`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping

from mcal._validation import check_bool, check_choice, check_int, check_random_state_param, check_real


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

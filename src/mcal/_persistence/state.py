"""The vocabulary of fitted-state constraints: each calibrator declares the rule of each fitted attribute once, in its
class-level table ``_state_constraints`` (as ``_parameter_constraints`` for parameters), and the codec checks the
table when it reads a model file, before the calibrator's hooks see the state (:func:`check_state`).

A rule is :class:`Number`, :class:`Array`, :class:`NumberOr` an array (:data:`NUMBER_OR_ARRAY`), :class:`NoneOr`
or :class:`Each` of a rule, anything with a ``check(name, value)`` method that raises (an
:class:`~mcal._constraints.Interval`, say), or such a function itself. Rules that relate fields to each other or to a parameter (equal lengths, one more value than another
field, a bound that depends on the loss) stay in the calibrator's ``_validate_state``. Messages read
``"model data field state.<name> must <rule>; got <observed>"``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np


class Number:
    """A finite real number (not a bool, not an array), at least (above, with ``strict``) ``low`` when given.

    Parameters
    ----------
    low : float or None, default=None
        The bound; None for none.
    strict : bool, default=False
        Whether ``low`` itself is refused.
    why : str, default=""
        What the bound is for, added to the message (e.g. ``" (a non-decreasing map)"``).
    """

    def __init__(self, low: float | None = None, *, strict: bool = False, why: str = "") -> None:
        self.low, self.strict, self.why = low, strict, why

    def check(self, name: str, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            got = "an array" if isinstance(value, np.ndarray) else repr(value)
            raise ValueError(f"{name} must be a finite number; got {got}")
        self.check_bound(name, np.asarray(value))

    def check_bound(self, name: str, values: np.ndarray) -> None:
        """Raise ``ValueError`` unless every one of the (finite) ``values`` meets the bound."""
        if self.low is None:
            return
        below = values <= self.low if self.strict else values < self.low
        if np.any(below):
            rule = f"{'>' if self.strict else '>='} {self.low}{self.why}"
            got = values[below].flat[0].item()
            raise ValueError(f"{name} must {'be' if values.ndim == 0 else 'hold values'} {rule}; got {got!r}")


class Array:
    """An array of one of the dtype ``kinds`` (None: any) and ``ndim`` dimensions (None: any), its values in order
    and within [0, 1] where asked.

    Parameters
    ----------
    kinds : str or None, default="fiu"
        The dtype kinds allowed (numpy's ``dtype.kind``: ``"f"`` floats, ``"i"``/``"u"`` integers, ``"b"`` bools);
        None for any.
    what : str, default="numbers"
        What the kinds are, for the message.
    ndim : int or None, default=1
        The dimensions; None for any.
    order : {"strict", "weak"} or None, default=None
        Whether the (1-D) values must be strictly increasing, or non-decreasing.
    probabilities : bool, default=False
        Whether the values must lie in [0, 1].
    values : Number or None, default=None
        The bound every value must meet (``Number(0)``: non-negative); None for none.
    """

    def __init__(
        self,
        kinds: str | None = "fiu",
        what: str = "numbers",
        *,
        ndim: int | None = 1,
        order: str | None = None,
        probabilities: bool = False,
        values: Number | None = None,
    ) -> None:
        self.kinds, self.what, self.ndim, self.order, self.probabilities = kinds, what, ndim, order, probabilities
        self.values = values

    def check(self, name: str, value: Any) -> None:
        kind_ok = isinstance(value, np.ndarray) and (self.kinds is None or value.dtype.kind in self.kinds)
        if not kind_ok or (self.ndim is not None and value.ndim != self.ndim):
            shape = f"shape {getattr(value, 'shape', ())}, "
            rule, got = ("an array", "") if self.ndim is None else (f"a {self.ndim}-D array", shape)
            got = f"{got}dtype {value.dtype}" if isinstance(value, np.ndarray) else type(value).__name__
            raise ValueError(f"{name} must be {rule} of {self.what}; got {got}")
        if self.order is not None:
            steps = np.diff(value)
            if np.any(steps <= 0) if self.order == "strict" else np.any(steps < 0):
                rule = "strictly increasing" if self.order == "strict" else "non-decreasing"
                raise ValueError(f"{name} must be a {rule} 1-D array")
        if self.probabilities and np.any((value < 0) | (value > 1)):
            raise ValueError(f"{name} must hold probabilities in [0, 1]")
        if self.values is not None:
            self.values.check_bound(name, value)


class NumberOr:
    """A finite number, or an array meeting ``rule`` (an :class:`Array`)."""

    def __init__(self, rule: Array) -> None:
        self.rule = rule

    def check(self, name: str, value: Any) -> None:
        if isinstance(value, np.ndarray):
            self.rule.check(name, value)
        else:
            Number().check(name, value)


#: A finite number or an array of any kind.
NUMBER_OR_ARRAY = NumberOr(Array(None, "values", ndim=None))


def check_rule(rule: Any, name: str, value: Any) -> None:
    """Check ``value`` against ``rule``: an object with a ``check(name, value)`` method, or such a function."""
    (rule.check if hasattr(rule, "check") else rule)(name, value)


class NoneOr:
    """None (``null`` in the file), or a value meeting ``rule``; whether None fits the parameters (a field given,
    say) is a rule relating them, for ``_validate_state``."""

    def __init__(self, rule: Any) -> None:
        self.rule = rule

    def check(self, name: str, value: Any) -> None:
        if value is not None:
            check_rule(self.rule, name, value)


class Each:
    """A list (``of=dict``: a dict) each of whose items meets ``rule``, named ``<name>[<index or key>]``; how many
    there must be relates fields, for ``_validate_state``."""

    def __init__(self, rule: Any, *, of: type = list) -> None:
        self.rule, self.of = rule, of

    def check(self, name: str, value: Any) -> None:
        of_kind = isinstance(value, self.of)  # not narrowing value: mypy would take it for an object
        if not of_kind:
            raise ValueError(f"{name} must be a {self.of.__name__}; got {type(value).__name__}")
        for key, item in value.items() if isinstance(value, dict) else enumerate(value):
            check_rule(self.rule, f"{name}[{key!r}]", item)


def check_state(owner: Any) -> None:
    """Check each fitted attribute of ``owner`` that its ``_state_constraints`` names against its rule, in the order
    of ``_state_attrs``.

    Raises
    ------
    ValueError
        As the first rule that fails (a ``TypeError`` of a rule, e.g. of an ``Interval``, as a ``ValueError``: a
        model file holds data, not arguments).
    """
    table = owner._state_constraints
    for name in (k for k in owner._state_attrs if k in table):
        try:
            check_rule(table[name], f"model data field state.{name}", getattr(owner, name))
        except TypeError as exc:
            raise ValueError(str(exc)) from exc

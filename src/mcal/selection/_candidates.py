"""The candidates of :func:`mcal.select_calibrator`: their names, complexity order, and how each is built."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from sklearn.base import clone

from mcal._base import BaseCalibrator
from mcal._registry import COMPLEXITY_ORDER, get_method

#: The candidates compared by default: on the scores alone, then ...
DEFAULT_CANDIDATES: tuple[str, ...] = ("identity", "temperature", "platt", "beta", "histogram", "isotonic")
#: ... with a field column of ``X`` (``field=``) ...
DEFAULT_FIELD_CANDIDATES: tuple[str, ...] = ("per-field-isotonic",)
#: ... and with features ``X``.
DEFAULT_FEATURE_CANDIDATES: tuple[str, ...] = ("mcgrad",)


def default_candidates(has_features: bool, has_field: bool) -> list[str]:
    """The default candidate names for inputs with or without features and a field, simplest first."""
    names = list(DEFAULT_CANDIDATES)
    names += list(DEFAULT_FIELD_CANDIDATES) if has_field else []
    names += list(DEFAULT_FEATURE_CANDIDATES) if has_features else []
    return names


def resolve_candidates(candidates: Any, *, X: Any, field: Any, random_state: int | None) -> dict[str, BaseCalibrator]:
    """Unfitted calibrators by name, simplest first: the named methods built with ``field`` and the seed, or the
    given mapping's calibrators cloned, in its order.

    Raises
    ------
    ValueError
        On an unknown or repeated name, fewer than two candidates, a method that needs features without ``X``
        or a field without ``field``, or a field-aware method whose field is not ``field``.
    TypeError
        If ``candidates`` is not None, a list of names or a mapping of names to mcal calibrators.
    """
    if candidates is None:
        candidates = default_candidates(X is not None, field is not None)
    if isinstance(candidates, Mapping):
        built = _given(candidates)
    elif isinstance(candidates, (str, bytes)) or not hasattr(candidates, "__iter__"):
        raise TypeError(
            "candidates must be a list of method names, a mapping of names to mcal calibrators, or None; got "
            f"{type(candidates).__name__}"
        )
    else:
        built = _named(list(candidates), field=field, random_state=random_state)
    if len(built) < 2:
        raise ValueError(f"candidates must hold at least two methods to compare; got {list(built)}")
    for name, model in built.items():
        if model.requires_features and X is None:
            raise ValueError(f"candidate {name!r} needs features: pass X; got X=None")
    return built


def _named(names: list[Any], *, field: Any, random_state: int | None) -> dict[str, BaseCalibrator]:
    bad = [name for name in names if not isinstance(name, str) or name not in COMPLEXITY_ORDER]
    if bad:
        raise ValueError(f"candidates must be names among {list(COMPLEXITY_ORDER)}; got {bad}")
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(f"candidates must name each method once; got {twice} more than once")
    built = {}
    for name in sorted(names, key=COMPLEXITY_ORDER.index):
        cls = get_method(name)
        accepted = inspect.signature(cls.__init__).parameters
        kwargs: dict[str, Any] = {}
        if "field" in accepted and field is not None:
            kwargs["field"] = field
        elif "field" in accepted and cls.requires_features:
            raise ValueError(f"candidate {name!r} needs a field: pass field (a column of X); got field=None")
        if "random_state" in accepted:
            kwargs["random_state"] = random_state
        built[name] = cls(**kwargs)
    return built


def _given(candidates: Mapping[Any, Any]) -> dict[str, BaseCalibrator]:
    built = {}
    for name, model in candidates.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"candidates must be keyed by non-empty method names (str); got {name!r}")
        if not isinstance(model, BaseCalibrator) or model.outcome != "classification" or _multiclass(model):
            raise TypeError(
                f"candidates[{name!r}] must be an unfitted mcal calibrator of binary labels; got {type(model).__name__}"
            )
        built[name] = clone(model)
    return built


def _multiclass(model: BaseCalibrator) -> bool:
    return type(model).__module__.startswith("mcal.multiclass")


def cross_fits_itself(model: BaseCalibrator) -> bool:
    """Whether ``model`` is cross-fitted by its own ``cross_fit(y_prob, y, folds, X=, sample_weight=)`` (MCGrad with
    early stopping): it chooses its rounds across the folds, and its result's ``refit()`` fits it on all rows."""
    return callable(getattr(model, "cross_fit", None)) and getattr(model, "early_stopping", None) is not None

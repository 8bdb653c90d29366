"""The reading of ``categorical_features`` (which columns of ``X`` are categorical), shared by the feature encoding
of MCGrad, DFMC and HKRR and by generated segments, so that one argument means one thing and fails one way."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

_SPEC_RULE = (
    "categorical_features must be 'from_dtype', None, or a 1-D array of column indices, a boolean mask or column names"
)


def declared_categorical(spec: Any, d: int, names: Sequence[str | None] | None) -> NDArray[np.bool_] | None:
    """Mask of the columns that ``categorical_features`` declares categorical, or None for ``"from_dtype"``.

    The one reading of the argument, shared by :class:`mcal._features.encoder.FeatureEncoder` (MCGrad, DFMC, HKRR) and
    generated segments. Integers (not bools) are positions in ``0..d-1``; bools are a mask of length ``d``; strings
    are names, each equal to one entry of ``names`` (the string labels of the columns; None for a column, or for all
    of ``X``, without one), never matched by their text to a label of another type, so the position 0 and the name
    ``"0"`` are never mixed up. A set is read in sorted order; a column may be declared once.

    Parameters
    ----------
    spec : "from_dtype", None, or 1-D array-like of int, bool or str
        The ``categorical_features`` argument.
    d : int
        Number of columns of ``X``.
    names : sequence of (str or None) of length d, or None
        The name of each column, None where a column has none, or None where ``X`` has no names.

    Returns
    -------
    mask : ndarray of bool of shape (d,), or None
        None for ``"from_dtype"``.

    Raises
    ------
    TypeError
        If ``spec`` is a single value (a number, a 0-d array, a dict) or holds values that are not indices, bools
        or names.
    ValueError
        If ``spec`` is another string than ``'from_dtype'``, not 1-D, mixes indices, bools and names, names a
        column of ``X`` that does not exist, holds an index out of range or a column twice, or is a mask of
        another length than ``d``.
    """
    if isinstance(spec, str) and spec == "from_dtype":
        return None
    values, kinds = _spec_values(spec)
    mask = np.zeros(d, dtype=bool)
    if not values:
        return mask
    if kinds[0] == "bools":
        if len(values) != d:
            raise ValueError(f"categorical_features as a mask must have length {d} (n_features); got {len(values)}")
        return np.array(values, dtype=bool)
    if kinds[0] == "indices":
        idx = [int(v) for v in values]
        bad = [j for j in idx if not 0 <= j < d]
        if bad:
            raise ValueError(f"categorical_features indices must lie in [0, {d - 1}]; got {bad[:5]}")
    else:
        if names is None or all(name is None for name in names):
            raise ValueError("categorical_features names need X to be a DataFrame with string column names; "
                             f"got names {values[:5]} for X without names")  # fmt: skip
        position = {name: j for j, name in enumerate(names) if name is not None}
        missing = [v for v in values if v not in position]
        if missing:
            raise ValueError(f"categorical_features names must be columns of X; got unknown "
                             f"{missing[:5]} (string column names: {list(position)[:10]})")  # fmt: skip
        idx = [position[v] for v in values]
    if len(set(idx)) != len(idx):
        raise ValueError(f"categorical_features must not repeat a column; got {values!r:.200}")
    mask[idx] = True
    return mask


def check_categorical_features(name: str, spec: Any) -> None:
    """The rule of the ``categorical_features`` parameter that holds before ``X`` is seen (the parameter
    constraint of MCGrad, DFMC and HKRR): its form, as :func:`declared_categorical` checks it."""
    if not (isinstance(spec, str) and spec == "from_dtype"):
        _spec_values(spec)


def _spec_values(spec: Any) -> tuple[list[Any], list[str]]:
    """The values of a ``categorical_features`` other than ``"from_dtype"`` (none for None), and their kind."""
    if spec is None:
        return [], []
    if isinstance(spec, (set, frozenset)):  # names or indices in no order
        spec = sorted(spec, key=str)
    if not isinstance(spec, str) and (not hasattr(spec, "__len__") or isinstance(spec, (bytes, dict))
                                      or _ndim(spec) == 0):  # fmt: skip
        raise TypeError(f"{_SPEC_RULE}; got {spec!r:.200} of type {type(spec).__name__}")
    if isinstance(spec, str) or _ndim(spec) != 1:
        raise ValueError(f"{_SPEC_RULE}; got {spec!r:.200}")
    values = list(spec)
    kinds = [_spec_kind(v) for v in values]
    if len(set(kinds)) > 1:  # numpy would make every index a string, or True the index 1
        mixed = " and ".join(k for k in ("indices", "bools", "names") if k in kinds)
        raise ValueError(f"{_SPEC_RULE}, not a mix of {mixed}; got {values!r:.200}")
    return values, kinds


def _ndim(spec: Any) -> int:
    """``np.ndim`` of a spec; -1 for a ragged nesting, which NumPy refuses."""
    try:
        return np.ndim(spec)
    except ValueError:
        return -1


def _spec_kind(value: Any) -> str:
    """``"bools"``, ``"indices"`` or ``"names"``: what one value of ``categorical_features`` declares."""
    if isinstance(value, (bool, np.bool_)):
        return "bools"
    if isinstance(value, numbers.Integral):
        return "indices"
    if isinstance(value, str):
        return "names"
    raise TypeError("categorical_features must hold column indices, a boolean mask or column names; "
                    f"got {value!r:.100} of type {type(value).__name__}")  # fmt: skip

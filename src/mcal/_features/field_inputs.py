"""Columns of ``X`` that MCNet reads: the field (context), the balance field, and the auxiliary features."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._features.fields import extract_field
from mcal._features.table import as_frame


def field_column(X: Any, field: str | int, n_samples: int) -> NDArray:
    """The field column of ``X``, with empty strings rejected; missing values (NaN, None, NA) are kept, as the
    missing level of the field (:class:`~mcal._features.fields.FieldVocabulary`).

    Raises
    ------
    ValueError
        If ``X`` lacks the column, its length differs, or a value is an empty string.
    """
    col = extract_field(X, field, n_samples)
    empty = ~np.asarray(pd.isna(col), dtype=bool) & (np.char.strip(col.astype(str)) == "")
    if np.any(empty):
        raise ValueError(f"X[{field!r}] must not contain empty values; got {int(np.sum(empty))} empty string(s)")
    return col


def feature_matrix(X: Any, columns: list[str | int], n_samples: int) -> NDArray[np.float64]:
    """The auxiliary feature columns of ``X`` as a float64 matrix of shape (n_samples, len(columns)).

    Raises
    ------
    ValueError
        If ``X`` is None, a column is missing, a column is not numeric, or a value is NaN or infinite.
    """
    if X is None:
        raise ValueError(f"X must hold the auxiliary feature columns {columns!r}; got None")
    X = as_frame(X)
    if isinstance(X, pd.DataFrame):
        absent = [c for c in columns if c not in X.columns]
        if absent:
            shown = list(X.columns)[:10]
            raise ValueError(f"X must have the auxiliary feature columns {absent!r}; got columns {shown}")
        frame = X[list(columns)]
        types = pd.api.types
        bad = [c for c in columns if not (types.is_numeric_dtype(frame[c]) or types.is_bool_dtype(frame[c]))]
        if bad:
            raise ValueError(
                f"auxiliary feature columns must be numeric (encode categories first); got non-numeric {bad!r}"
            )
        values = frame.to_numpy(dtype=np.float64)
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-D to select auxiliary feature columns; got shape {arr.shape}")
        bad = [c for c in columns if not isinstance(c, (int, np.integer)) or not 0 <= c < arr.shape[1]]
        if bad:
            raise ValueError(
                f"auxiliary_features must be column indices of the {arr.shape[1]}-column array X; got {bad!r}"
            )
        try:
            values = arr[:, np.asarray(columns)].astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"auxiliary feature columns must be numeric (encode categories first): {exc}") from exc
    if values.shape[0] != n_samples:
        raise ValueError(f"X must have {n_samples} rows; got {values.shape[0]}")
    if not np.all(np.isfinite(values)):
        n_bad = int(np.sum(~np.isfinite(values)))
        raise ValueError(f"auxiliary features must be finite; got {n_bad} NaN or infinite value(s)")
    return values


def named_columns(field: str | int | None, auxiliary: Any) -> list[str | int] | None:
    """The columns that a field-aware calibrator reads at predict: its auxiliary features, then its field; None
    where one of them is a position (an array's column), which has no name to check.

    Parameters
    ----------
    field : str, int or None
    auxiliary : sequence of (str or int), or None

    Returns
    -------
    columns : list of str, or None
    """
    names = [*(auxiliary or []), *([] if field is None else [field])]
    return names if all(isinstance(name, str) for name in names) else None

"""Encoding of a field (one categorical context column, e.g. country or ad source) to integer codes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._features.table import as_frame
from mcal._validation import as_1d, warn

#: Code given to a value that was not seen at fit time.
UNSEEN = -1


def extract_field(X: Any, field: str | int, n_samples: int) -> NDArray:
    """Return the field column of ``X`` (a DataFrame column by name, or an array column by index).

    Raises
    ------
    ValueError
        If ``X`` is None, the column is missing, or the length differs from ``n_samples``.
    """
    if X is None:
        raise ValueError(f"X must hold the field column {field!r}; got None")
    X = as_frame(X)
    if isinstance(X, pd.DataFrame):
        if field not in X.columns:
            raise ValueError(f"X must have the field column {field!r}; got columns {list(X.columns)[:10]}")
        col = X[field].to_numpy()
    else:
        arr = np.asarray(X, dtype=object)
        if arr.ndim == 1:
            arr = arr[:, None]
        if not isinstance(field, (int, np.integer)) or not 0 <= field < arr.shape[1]:
            raise ValueError(f"field must be a column index of the {arr.shape[1]}-column array X; got {field!r}")
        col = arr[:, field]
    col = as_1d(col, f"X[{field!r}]")
    if col.shape[0] != n_samples:
        raise ValueError(f"X must have {n_samples} rows; got {col.shape[0]}")
    return col


class FieldVocabulary:
    """Sorted vocabulary of a field's values, mapping values to codes ``0..n_values-1``.

    Values are compared as strings, so a vocabulary survives a JSON round trip unchanged (``1`` and ``"1"``
    are the same field value). Missing values are an error at fit and at predict.
    """

    def __init__(self, values: list[str]) -> None:
        self.values = list(values)
        self._index = pd.Index(self.values)

    @classmethod
    def fit(cls, column: NDArray, name: str = "field") -> FieldVocabulary:
        """Build the vocabulary of ``column``.

        Raises
        ------
        ValueError
            If the column has missing values.
        """
        return cls(sorted(pd.unique(cls._as_str(column, name))))

    @staticmethod
    def _as_str(column: NDArray, name: str) -> NDArray:
        missing = pd.isna(column)
        if np.any(missing):
            raise ValueError(f"{name} must not contain missing values; got {int(np.sum(missing))} missing")
        return np.asarray(column).astype(str)

    def transform(self, column: NDArray, name: str = "field") -> NDArray[np.intp]:
        """Codes of ``column``; values not in the vocabulary get :data:`UNSEEN` and one warning that counts them.

        Raises
        ------
        ValueError
            If the column has missing values.
        """
        codes = self._index.get_indexer(self._as_str(column, name)).astype(np.intp)
        n_unseen = int(np.sum(codes == UNSEEN))
        if n_unseen:
            unseen = pd.unique(np.asarray(column)[codes == UNSEEN].astype(str))
            warn(
                f"{name} has {n_unseen} row(s) with {unseen.size} value(s) unseen at fit time "
                f"(e.g. {unseen[:3].tolist()}); they use the field-agnostic fallback"
            )
        return codes

    def to_list(self) -> list[str]:
        """JSON-safe form: the sorted list of values."""
        return list(self.values)

    def __len__(self) -> int:
        return len(self.values)

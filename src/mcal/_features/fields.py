"""Encoding of a field (one categorical context column, e.g. country or ad source) to integer codes.

A missing value (NaN, None, NA) is a field value of its own, the missing level, as it is a level of its own in
generated segments: it is listed last in a vocabulary as ``None`` (``null`` in a model file) and reported as
``<field> is missing`` (:func:`field_value_label`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from mcal._features.table import as_frame
from mcal._validation import as_1d, check_consistent, warn

#: Code given to a value that was not seen at fit time.
UNSEEN = -1


def missing_description(name: Any) -> str:
    """The readable name of the missing level of a column, ``<name> is missing``: how segments and field tables
    name it."""
    return f"{name} is missing"


def field_value_label(value: Any, name: Any = "field") -> str:
    """Readable label of a field value: its text, or ``<name> is missing`` for the missing level (``None``)."""
    return missing_description(name) if value is None else str(value)


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


def check_field_values(name: str, values: Any) -> None:
    """The fitted-state rule of a restored vocabulary ``name`` (``model data field state.field_values_``): sorted
    distinct strings, then at most one ``None`` (the missing level).

    Raises
    ------
    ValueError
        Naming ``name``.
    """
    rule = "a sorted list of distinct strings, then null for the missing level if it was seen"
    if not isinstance(values, list):
        raise ValueError(f"{name} must be {rule}")
    present = values[:-1] if values and values[-1] is None else values
    if not all(isinstance(v, str) for v in present) or present != sorted(set(present)):
        raise ValueError(f"{name} must be {rule}")


def _as_text(values: Any) -> NDArray[np.object_]:
    """Each value as text, a whole number written without a decimal part (``1.0`` and ``"1.0"`` as ``"1"``)."""
    text = pd.Series(np.asarray(values).astype(str), dtype=object)
    return text.str.replace(r"^(-?\d+)\.0+$", r"\1", regex=True).to_numpy(dtype=object)


class FieldVocabulary:
    """The values of a field seen at fit time, mapping them to codes ``0..n_values-1``.

    ``values`` holds the present values as strings, sorted, then ``None`` when the field had missing values (the
    missing level, the last code). Values are compared as text, so a vocabulary survives a JSON round trip
    unchanged (``1``, ``1.0``, ``"1"`` and ``"1.0"`` are the same field value: an integer-coded field read with
    missing values is a float column, and the same codes read without one are integers). A missing value at predict time gets the missing
    level's code when missing values were seen at fit time, and is an unseen value otherwise.
    """

    def __init__(self, values: list[str | None]) -> None:
        self.values = list(values)
        self.has_missing = bool(self.values) and self.values[-1] is None
        self._index = pd.Index(_as_text(self.values[:-1] if self.has_missing else self.values), dtype=object)

    @classmethod
    def fit(cls, column: NDArray) -> FieldVocabulary:
        """Build the vocabulary of ``column``; missing values (NaN, None, NA) become the missing level."""
        missing = cls._missing(column)
        present = sorted(pd.unique(_as_text(np.asarray(column)[~missing])).tolist())
        return cls(present + ([None] if missing.any() else []))

    @staticmethod
    def _missing(column: NDArray) -> NDArray[np.bool_]:
        return np.asarray(pd.isna(column), dtype=bool)

    def transform(self, column: NDArray, name: str = "field") -> NDArray[np.intp]:
        """Codes of ``column``; values not in the vocabulary (a missing value too, when none was missing at fit
        time) get :data:`UNSEEN` and one warning that counts them, naming ``name``."""
        missing = self._missing(column)
        text = _as_text(column)
        codes = self._index.get_indexer(text).astype(np.intp)
        codes[missing] = len(self._index) if self.has_missing else UNSEEN
        unseen = codes == UNSEEN
        if unseen.any():
            labels = [repr(v) for v in pd.unique(text[unseen & ~missing])] + (
                ["missing"] if missing[unseen].any() else []
            )
            warn(
                f"{name} has {int(unseen.sum())} row(s) with {len(labels)} value(s) unseen at fit time "
                f"(e.g. {', '.join(labels[:3])}); they use the field-agnostic fallback"
            )
        return codes

    def to_list(self) -> list[str | None]:
        """JSON-safe form: the sorted list of values, then ``None`` for the missing level."""
        return list(self.values)

    def __len__(self) -> int:
        return len(self.values)


def encode_field(field: ArrayLike, n_samples: int, name: str = "field") -> tuple[NDArray[np.intp], NDArray]:
    """Integer codes and the sorted distinct values of a field (categorical context) column.

    Missing values (NaN, None, NA) are a field value of their own, the missing level: the last code, whose value
    is ``None``, as in the field vocabulary of the field-aware calibrators.

    Raises
    ------
    ValueError
        If the length differs from ``n_samples``.
    """
    values = as_1d(field, name)
    check_consistent(**{name: values, "y_prob": np.empty(n_samples)})
    codes, uniques = pd.factorize(values, sort=True)  # missing values get code -1
    uniques = np.asarray(uniques)
    if np.any(codes < 0):
        codes = np.where(codes < 0, uniques.size, codes)
        uniques = np.concatenate([uniques.astype(object), np.array([None], dtype=object)])
    return codes.astype(np.intp), uniques

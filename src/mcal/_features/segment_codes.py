"""Encoding of feature columns to small integer level codes, the building block of generated segments.

Each feature has ``k`` value levels (kept categories, distinct numbers, or quantile bins) with codes ``0..k-1``,
then code ``k`` for "other" (categories collapsed or unseen) and code ``k + 1`` for a missing value. Rules follow
the reference implementation of the multicalibration error (Guy et al. 2025, arXiv 2506.11251; ``mcgrad`` 0.1.5,
``_segmentation.py``) except where the docstring of :func:`mcal.segments.generate_segments` says otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._features.categorical import declared_categorical
from mcal._features.fields import missing_description
from mcal._features.table import CATEGORICAL, UNSUPPORTED, as_frame, column_kind, temporal_error, temporal_kind

DISCRETE, BINNED = "discrete", "binned"
_KINDS = (CATEGORICAL, DISCRETE, BINNED)


def _fmt(value: float) -> str:
    return f"{value:.6g}"


@dataclass(frozen=True)
class Feature:
    """The levels of one feature.

    ``values`` holds the kept categories (strings, most frequent first) for ``"categorical"``, the sorted distinct
    numbers for ``"discrete"``, and the bin edges ``e_0 < ... < e_B`` for ``"binned"`` (bin ``j`` is
    ``(e_j, e_{j+1}]``; the first bin takes every value ``<= e_1`` and the last every value ``> e_{B-1}``).
    """

    name: str
    kind: str
    values: tuple[Any, ...]

    @property
    def n_values(self) -> int:
        """Number of value levels ``k`` (codes ``0..k-1``)."""
        return max(len(self.values) - 1, 0) if self.kind == BINNED else len(self.values)

    @property
    def n_levels(self) -> int:
        """Number of codes: the value levels, "other" and "missing"."""
        return self.n_values + 2

    def describe(self, code: int) -> str:
        """Readable condition of one level, e.g. ``job=admin`` or ``age in (30, 45]``."""
        k = self.n_values
        if code == k + 1:
            return missing_description(self.name)
        if code == k:
            shown = ", ".join(str(v) for v in self.values)
            return f"{self.name} not in {{{shown}}}"
        if self.kind == CATEGORICAL:
            return f"{self.name}={self.values[code]}"
        if self.kind == DISCRETE:
            return f"{self.name}={_fmt(self.values[code])}"
        edges = self.values
        if k == 1:
            return f"{self.name} not missing"
        if code == 0:
            return f"{self.name} <= {_fmt(edges[1])}"
        if code == k - 1:
            return f"{self.name} > {_fmt(edges[k - 1])}"
        return f"{self.name} in ({_fmt(edges[code])}, {_fmt(edges[code + 1])}]"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"name": self.name, "kind": self.kind, "values": [_json_scalar(v) for v in self.values]}

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> Feature:
        """Inverse of :meth:`to_dict`.

        Raises
        ------
        ValueError
            If the state is malformed.
        """
        if not isinstance(state, dict) or set(state) != {"name", "kind", "values"}:
            raise ValueError(f"feature state must have keys name, kind, values; got {state!r:.200}")
        if state["kind"] not in _KINDS or not isinstance(state["values"], list):
            raise ValueError(f"feature state must have kind in {_KINDS} and a list of values; got {state!r:.200}")
        values = tuple(state["values"]) if state["kind"] == CATEGORICAL else tuple(map(float, state["values"]))
        return cls(str(state["name"]), state["kind"], values)


def _json_scalar(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def code_dtype(n_levels: int) -> type[np.unsignedinteger]:
    """Smallest unsigned integer type holding codes ``0..n_levels-1``."""
    return np.uint8 if n_levels <= 256 else np.uint16 if n_levels <= 65536 else np.uint32


def _as_str(values: NDArray) -> NDArray:
    return np.asarray(values, dtype=object).astype(str)


def fit_feature(name: str, column: Any, categorical: bool, max_values: int) -> tuple[Feature, NDArray]:
    """Choose the levels of one feature from its column (array or Series) and return them with its codes.

    Raises
    ------
    ValueError
        If a numerical feature holds non-numeric or infinite values.
    TypeError
        If a numerical feature holds complex numbers, datetimes or timedeltas.
    """
    if categorical:
        return _fit_categorical(name, column, max_values)
    x = _as_float(name, column)
    missing = np.isnan(x)
    finite = x[~missing]
    prefix = pd.unique(finite[:1000])
    distinct = prefix if prefix.size > max_values else np.unique(finite)
    if distinct.size <= max_values:
        feature = Feature(name, DISCRETE, tuple(float(v) for v in np.sort(distinct)))
    else:
        # Linear-interpolation quantiles, duplicate edges dropped, right-closed bins: pandas' quantile + cut.
        edges = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, max_values + 1)))
        feature = Feature(name, BINNED, tuple(float(e) for e in edges))
    return feature, _encode_numeric(feature, x, missing)


def _as_float(name: str, column: Any) -> NDArray[np.float64]:
    if column_kind(column) == UNSUPPORTED:  # numpy would drop the imaginary parts with only a ComplexWarning
        raise TypeError(f"X column {name!r} must hold real numbers; got dtype {column.dtype}")
    if temporal_kind(column) is not None:  # as text, every timestamp would be a category of its own
        raise temporal_error(repr(name), column)
    try:
        if isinstance(column, pd.Series):
            x = column.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            x = np.asarray(pd.Series(column).to_numpy(dtype=np.float64, na_value=np.nan))
    except (TypeError, ValueError):
        raise ValueError(
            f"X column {name!r} must be numeric to be a numerical feature; got dtype {column.dtype}; "
            "declare it in categorical_features"
        ) from None
    if np.isinf(x).any():
        raise ValueError(f"X column {name!r} must not contain infinite values; got {int(np.isinf(x).sum())}")
    return x


def _fit_categorical(name: str, column: Any, max_values: int) -> tuple[Feature, NDArray]:
    codes, uniques = pd.factorize(column)  # missing values get code -1
    # Values with the same text (1 and "1") are one level: descriptions and apply() know a level by its text.
    labels, merged = np.unique(_as_str(np.asarray(uniques, dtype=object)), return_inverse=True)
    codes = np.append(merged, -1)[codes]  # code -1 (missing) stays -1
    counts = np.bincount(codes[codes >= 0], minlength=labels.size)
    # Most frequent first; ties by the value's text, so the choice never depends on row order.
    rank = np.lexsort((labels, -counts))
    n_kept = labels.size if labels.size <= max_values else max_values - 1
    kept = rank[:n_kept]
    feature = Feature(name, CATEGORICAL, tuple(labels[kept].tolist()))
    lut = np.full(labels.size + 1, feature.n_values, dtype=np.int64)
    lut[kept] = np.arange(n_kept)
    lut[-1] = feature.n_values + 1  # code -1 of factorize (missing) indexes the last slot
    return feature, lut[codes].astype(code_dtype(feature.n_levels))


def _encode_numeric(feature: Feature, x: NDArray[np.float64], missing: NDArray[np.bool_]) -> NDArray:
    k = feature.n_values
    dtype = code_dtype(feature.n_levels)
    if feature.kind == BINNED:
        codes = np.zeros(x.shape[0], dtype=dtype)
        for edge in feature.values[1:-1]:
            codes += x > edge
    else:
        values = np.asarray(feature.values, dtype=np.float64)
        idx = np.clip(np.searchsorted(values, x), 0, max(k - 1, 0))
        found = values[idx] == x if k else np.zeros(x.shape[0], dtype=bool)
        codes = np.where(found, idx, k).astype(dtype)
    codes[missing] = k + 1
    return codes


def encode_feature(feature: Feature, column: Any) -> NDArray:
    """Codes of a column under levels chosen earlier; unseen categories and numbers get "other".

    Raises
    ------
    ValueError
        If a numerical feature holds non-numeric or infinite values.
    """
    if feature.kind != CATEGORICAL:
        x = _as_float(feature.name, column)
        return _encode_numeric(feature, x, np.isnan(x))
    missing = np.asarray(pd.isna(column), dtype=bool)
    idx = pd.Index(list(feature.values), dtype=object).get_indexer(_as_str(np.asarray(column, dtype=object)))
    codes = np.where(idx >= 0, idx, feature.n_values)
    codes[missing] = feature.n_values + 1
    return codes.astype(code_dtype(feature.n_levels))


def feature_table(X: Any) -> tuple[list[str], list[Any], list[str]]:
    """Column names, columns (Series for a table), and the kind of each column of ``X`` under ``"from_dtype"``
    (:func:`mcal._features.table.column_kind`).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has no rows or no columns, or two column names with the same text.
    """
    X = as_frame(X)
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        repeated = pd.Index(names)[pd.Index(names).duplicated()].unique().tolist()
        if repeated:  # segments name their features, and apply() finds the columns, by this text
            raise ValueError(f"X column names must be distinct as text; got repeated {repeated[:5]}")
        columns = [X.iloc[:, j] for j in range(X.shape[1])]
        kinds = [column_kind(column) for column in columns]
    else:
        if X is None or isinstance(X, (str, bytes)):
            raise TypeError(f"X must be a 2-D array-like or DataFrame; got {type(X).__name__}")
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise ValueError(f"X must be 2-D of shape (n_samples, n_features); got shape {arr.shape}")
        names = [f"x{j}" for j in range(arr.shape[1])]
        columns = [arr[:, j] for j in range(arr.shape[1])]
        kinds = [column_kind(column) for column in columns]
    if not columns or columns[0].shape[0] == 0:
        raise ValueError(f"X must have at least one row and one column; got shape ({_n_rows(columns)}, {len(columns)})")
    return names, columns, kinds


def _n_rows(columns: Sequence[NDArray]) -> int:
    return columns[0].shape[0] if columns else 0


def resolve_categorical(categorical_features: Any, X: Any, kinds: list[str]) -> list[bool]:
    """Which features of ``X`` are categorical (``kinds`` from :func:`feature_table`), read from
    ``categorical_features`` by :func:`mcal._features.categorical.declared_categorical`, as MCGrad reads it.

    Names are the string labels of a DataFrame's columns: a column whose label is not a string (``0``), and an
    array's columns (which segments call ``x0, x1, ...``), are declared by position.

    Raises
    ------
    TypeError
        If ``categorical_features`` is a single value or holds values that are not indices, bools or names.
    ValueError
        If ``categorical_features`` is not 1-D, mixes indices, bools and names, or its indices, names or mask do not
        match the columns of ``X``.
    """
    X = as_frame(X)
    names = [c if isinstance(c, str) else None for c in X.columns] if isinstance(X, pd.DataFrame) else None
    mask = declared_categorical(categorical_features, len(kinds), names)
    return [k == CATEGORICAL for k in kinds] if mask is None else mask.tolist()

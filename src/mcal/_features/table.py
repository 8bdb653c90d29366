"""Reading ``X``: any table narwhals reads (pandas, polars, pyarrow, ...) or a 2-D array, its column names, and the
one rule that gives each column a kind under ``categorical_features="from_dtype"``.

Every estimator, metric and the report read ``X`` through :func:`as_frame`, so that a polars or pyarrow table
keeps its column names and its categorical columns, as a pandas DataFrame would.
"""

from __future__ import annotations

import sys
from typing import Any

import narwhals as nw
import numpy as np
import pandas as pd
import scipy.sparse
from numpy.typing import NDArray

# pandas.api.types.infer_dtype names of object columns that hold numbers only (or nothing)
_NUMERIC_INFERRED = frozenset({"integer", "floating", "mixed-integer-float", "decimal", "empty"})
# Object columns of dates (datetime.date, datetime.datetime, pd.Timestamp) or durations, by infer_dtype name.
_TEMPORAL_INFERRED = {"datetime64": "datetime", "datetime": "datetime", "date": "datetime",
                      "timedelta64": "timedelta", "timedelta": "timedelta"}  # fmt: skip

CATEGORICAL, NUMERICAL, TEMPORAL, UNSUPPORTED = "categorical", "numerical", "temporal", "unsupported"


def as_frame(X: Any) -> Any:
    """``X`` as a pandas DataFrame when it is a table, else ``X`` itself (an array, a list, None).

    A pandas DataFrame is returned as is and a Series as a one-column frame; any other eager dataframe or series
    that narwhals reads (polars, pyarrow, ...) is converted by narwhals, keeping its column names and dtypes
    (a polars ``Categorical`` or an Arrow dictionary column becomes a pandas ``category``). A lazy frame is
    collected first (see :func:`collect`).

    Parameters
    ----------
    X : object
        The ``X`` argument of a public function or method.

    Returns
    -------
    X : DataFrame or object
    """
    if X is None or isinstance(X, (pd.DataFrame, np.ndarray, list, tuple)):  # the common cases, at once
        return X
    X = collect(X)
    if isinstance(X, pd.Series):
        return X.to_frame()
    table = nw.from_native(X, eager_only=True, allow_series=True, pass_through=True)
    if table is X:  # not a table narwhals knows
        return X
    if isinstance(table, nw.Series):
        table = table.to_frame()
    return table.to_pandas()


def collect(X: Any) -> Any:
    """``X`` with its rows in memory: a lazy table collected, anything else as it is.

    A calibrator reads every row of ``X``, so a lazy frame that narwhals reads (a polars ``LazyFrame``, a DuckDB
    relation, ...) is collected to its eager frame (a polars ``LazyFrame`` to a polars ``DataFrame``), a dask
    DataFrame or Series computed to its pandas one, and a pyarrow ``RecordBatch`` (which narwhals does not read)
    made a pyarrow ``Table``, keeping its column names. Data larger than memory belongs to :mod:`mcal.dask`.

    Parameters
    ----------
    X : object
        The ``X`` argument of a public function or method.

    Returns
    -------
    X : object
        An eager table, or ``X`` itself.
    """
    dd = nw.dependencies.get_dask_dataframe()  # None unless dask.dataframe was imported
    if dd is not None and isinstance(X, (dd.DataFrame, dd.Series)):
        return X.compute()  # not through narwhals, whose dask support warns that it moves to another package
    if nw.dependencies.is_into_lazyframe(X):
        return nw.from_native(X).collect().to_native()
    pa = sys.modules.get("pyarrow")  # a RecordBatch exists only where pyarrow was imported
    if pa is not None and isinstance(X, pa.RecordBatch):
        return pa.Table.from_batches([X])
    return X


def is_table(X: Any) -> bool:
    """Whether ``X`` is a dataframe or series (pandas, polars, pyarrow, ...) rather than an array.

    Parameters
    ----------
    X : object

    Returns
    -------
    is_table : bool
    """
    return (
        isinstance(X, (pd.DataFrame, pd.Series))
        or nw.dependencies.is_into_dataframe(X)
        or nw.dependencies.is_into_series(X)
    )


def temporal_kind(column: Any) -> str | None:
    """``"datetime"`` or ``"timedelta"`` for a column of dates or durations, else None.

    A column of dates is one of dtype datetime64 (time-zone aware too) or of objects that pandas infers as
    ``datetime.date``, ``datetime.datetime`` or ``pd.Timestamp`` values; likewise timedelta64 or
    ``datetime.timedelta``/``pd.Timedelta`` objects for durations. Every place that reads feature columns
    refuses such a column unless it is declared in ``categorical_features`` (see :func:`temporal_error`): as text,
    every timestamp is a category of its own.
    """
    dtype = column.dtype
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetime"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "timedelta"
    if pd.api.types.is_object_dtype(dtype):
        return _TEMPORAL_INFERRED.get(pd.api.types.infer_dtype(column, skipna=True))
    return None


def temporal_error(label: str, column: Any) -> TypeError:
    """The error for a column of dates or durations (see :func:`temporal_kind`) that is not declared categorical,
    with a conversion to numbers as a hint; ``label`` is the column as messages show it (``'t'``, or ``0``)."""
    col = f"X[{label}]"
    kind = temporal_kind(column)
    if pd.api.types.is_object_dtype(column.dtype):  # the .dt accessor needs a datetime or timedelta dtype first
        col = f"pd.to_{kind}({col})"
        held = f" holding {pd.api.types.infer_dtype(column, skipna=True)} values"
    else:
        held = ""
    hint = f"{col}.dt.total_seconds()" if kind == "timedelta" else f"({col} - {col}.min()).dt.days"
    return TypeError(f"X column {label} must be converted to numbers (e.g. {hint}) or declared in "
                     f"categorical_features; got dtype {column.dtype}{held}")  # fmt: skip


def column_kind(column: Any) -> str:
    """The kind of a column of ``X`` under ``categorical_features="from_dtype"``: the one rule of mcal.

    ``"categorical"`` for pandas ``category``, bool, string and Arrow dictionary columns, and object columns that
    hold anything but numbers; ``"numerical"`` for real numeric columns, object columns of numbers only (such as
    Parquet decimals) and columns with every value missing; ``"temporal"`` for dates and durations
    (:func:`temporal_kind`), categorical only where declared so; ``"unsupported"`` for anything else (complex
    numbers).

    Parameters
    ----------
    column : ndarray, pandas array or Series of shape (n_samples,)

    Returns
    -------
    kind : {"categorical", "numerical", "temporal", "unsupported"}
    """
    dtype = column.dtype
    if isinstance(dtype, pd.ArrowDtype):  # as pandas reads Parquet with dtype_backend="pyarrow"
        import pyarrow as pa

        if pa.types.is_dictionary(dtype.pyarrow_dtype):  # Arrow's categorical
            return CATEGORICAL
        if pa.types.is_null(dtype.pyarrow_dtype):  # every value missing, as an all-None object column
            return NUMERICAL
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
        return CATEGORICAL
    if temporal_kind(column) is not None:
        return TEMPORAL
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return NUMERICAL
    if pd.api.types.is_object_dtype(dtype):
        inferred = pd.api.types.infer_dtype(column, skipna=True)
        if inferred == "complex":  # as a complex dtype: not levels of printed values
            return UNSUPPORTED
        return NUMERICAL if inferred in _NUMERIC_INFERRED else CATEGORICAL
    if pd.api.types.is_string_dtype(dtype):
        return CATEGORICAL
    return UNSUPPORTED


def take_rows(X: Any, rows: NDArray[np.intp] | NDArray[np.bool_]) -> Any:
    """The rows ``rows`` of ``X``, of the type of ``X``: a pandas, polars or pyarrow table stays one (a model inside
    may select its columns by name), a sparse matrix stays sparse, anything else becomes an array.

    Parameters
    ----------
    X : table, sparse matrix or array-like of shape (n_samples, ...)
    rows : ndarray of int of shape (n_rows,)

    Returns
    -------
    X_rows : object of shape (n_rows, ...)
    """
    if hasattr(X, "iloc"):
        return X.iloc[rows]
    if scipy.sparse.issparse(X):
        return X.tocsr()[rows]
    table = nw.from_native(X, eager_only=True, allow_series=True, pass_through=True)
    return np.asarray(X)[rows] if table is X else table[rows].to_native()

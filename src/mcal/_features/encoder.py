"""Encoding of a tabular feature matrix (numerical and categorical columns) for tree learners.

:class:`FeatureEncoder` turns a DataFrame or a 2-D array into a float64 matrix that LightGBM reads directly:
numerical columns as floats (missing values stay NaN, which LightGBM handles natively), categorical columns
as codes ``0..k-1`` of a vocabulary learned at fit time (missing and unseen values become NaN, LightGBM's
"missing"). Categoricals are declared as in scikit-learn's ``HistGradientBoostingClassifier``. The encoder
checks that the features at predict time are the ones seen at fit, and round-trips through JSON.
"""

from __future__ import annotations

import decimal
import numbers
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._features.categorical import declared_categorical
from mcal._features.table import CATEGORICAL, TEMPORAL, UNSUPPORTED, as_frame, column_kind, temporal_error
from mcal._validation import check_X_type, warn

# Categorical columns (other than pandas category) with at most this many rows are encoded in plain Python.
_SMALL = 32
# Integer categorical columns whose values span fewer than this many integers are encoded by a lookup table.
_INT_RANGE = 1 << 16


def _category_key(value: Any) -> str:
    """String form of one category value; integral floats equal their integer (``3.0`` and ``3`` are one level)."""
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, (numbers.Real, decimal.Decimal)):  # pandas hashes Decimal("3.0") as Decimal("3")
        value = float(value)
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def _factorize(column: Any) -> tuple[NDArray[np.intp], list[str]]:
    """Codes (-1 for missing) and the string keys of the distinct values of ``column``."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.codes.astype(np.intp), [_category_key(c) for c in column.dtype.categories]
    if column.dtype == object and pd.api.types.infer_dtype(column, skipna=True) in ("mixed", "mixed-integer"):
        # pandas hashes True, 1 and 1.0 as one value; keyed first, they stay apart as in _category_key (a pass in
        # Python over the rows, paid only by columns that mix kinds of values)
        column = pd.Series(column, copy=False).map(_category_key, na_action="ignore").to_numpy()
    codes, uniques = pd.factorize(column, sort=False, use_na_sentinel=True)
    return codes.astype(np.intp, copy=False), [_category_key(u) for u in uniques]


def _same_levels(a: pd.CategoricalDtype, b: pd.CategoricalDtype) -> bool:
    """Whether two category dtypes list the same levels, of the same type, in the same order (pandas calls
    unordered dtypes with the levels in another order equal, and ordered [True, False] equal to [1, 0])."""
    return a == b and a.categories.dtype == b.categories.dtype and a.categories.equals(b.categories)


def _span(column: NDArray[np.integer]) -> int:
    """``max - min`` of a non-empty integer column, in Python ints (no overflow)."""
    return int(column.max()) - int(column.min())


def _columns(X: Any) -> tuple[list[Any], list[str] | None, int]:
    """The 1-D columns of ``X`` (NumPy or pandas extension arrays), its column names and its row count.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has duplicate column names, or non-string column labels other than 0, 1, ... in order.
    TypeError
        If ``X`` is not array-like or its column names mix strings and non-strings.
    """
    X = as_frame(X)
    if isinstance(X, pd.DataFrame):
        cols = X.columns.tolist()
        is_str = [isinstance(c, str) for c in cols]
        if any(is_str) and not all(is_str):
            raise TypeError(f"X column names must be all strings or none; got {cols[:5]}")
        names = cols if cols and all(is_str) else None
        if names is None and cols != list(range(len(cols))):
            # labels that are not strings are not checked between fit and predict, so they must be positions
            raise ValueError(
                "X column names must be strings, or the positions 0, 1, ... in order (which are not "
                f"checked between fit and predict); got {cols[:5]}"
            )
        if names is not None and len(set(names)) != len(names):
            dup = sorted({c for c in names if names.count(c) > 1})
            raise ValueError(f"X column names must be unique; got duplicates {dup[:5]}")
        arrays = getattr(X, "_iter_column_arrays", None)  # pandas-internal, about 15x faster than items()
        if arrays is not None:
            columns = list(arrays())
        else:  # a pandas without the helper (tested); dates as pandas arrays, as that helper gives them
            columns = [s.array if isinstance(s.dtype, pd.api.extensions.ExtensionDtype) or s.dtype.kind in "mM"
                       else s.to_numpy() for _, s in X.items()]  # fmt: skip
        return columns, names, X.shape[0]
    check_X_type(X)
    if X is None or np.isscalar(X):
        raise TypeError(f"X must be a DataFrame or a 2-D array-like; got {type(X).__name__}")
    arr = np.asarray(X)
    if arr.dtype.kind in "US" and not isinstance(X, np.ndarray):
        arr = np.asarray(X, dtype=object)  # rows mixing text and numbers: numpy made every number a string
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D of shape (n_samples, n_features); got shape {arr.shape}")
    # dates as pandas arrays (of Timestamps, as a DataFrame's), not numpy's, whose tolist() gives integers
    columns = [pd.array(arr[:, j]) if arr.dtype.kind in "mM" else arr[:, j] for j in range(arr.shape[1])]
    return columns, None, arr.shape[0]


class FeatureEncoder:
    """Float64 encoding of numerical and categorical features, fitted once and applied at predict time.

    Parameters
    ----------
    categorical_features : "from_dtype", None, or array-like of int, bool or str, default="from_dtype"
        Which columns are categorical, as in scikit-learn's ``HistGradientBoostingClassifier``:

        - ``"from_dtype"``: the kind :func:`mcal._features.table.column_kind` gives: ``category`` and ``bool``
          columns, Arrow dictionary columns, and string/object columns (object columns holding only numbers
          count as numerical) are categorical; numeric columns are numerical. For a numeric
          (not bool) ndarray every column is numerical. Columns of dates or durations (datetime64, timedelta64,
          or ``datetime``/``pd.Timestamp`` objects) are refused unless declared categorical (then each distinct
          value is a level): convert them to numbers to use them as numerical features.
        - ``None``: no categorical columns.
        - integer indices, a boolean mask of length ``n_features``, or column names (DataFrame only).
          Declaring a numeric column categorical treats its values (e.g. integer codes) as levels.

    Attributes
    ----------
    n_features_in_ : int
        Number of columns seen at fit.
    feature_names_in_ : list of str or None
        Column names seen at fit (None for an array or a DataFrame without string column names).
    categorical_ : list of bool of length n_features_in_
        Which columns are encoded as categories.
    categories_ : list of (list of str or None)
        Per column, the sorted levels (string forms) seen at fit; None for numerical columns.

    Notes
    -----
    Category levels are compared by their string form, with integral floats equal to integers (``3.0`` and
    ``3`` are one level, so an integer column that gains a missing value and turns float still matches).
    Missing values (NaN, None, ``pd.NA``) are kept as NaN. At transform time, levels not seen at fit are
    encoded as missing with one :class:`~mcal.CalibrationWarning` that counts them.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"city": ["b", "a", "b"], "age": [30.0, 41.0, None]})
    >>> enc = FeatureEncoder().fit(X)
    >>> enc.categories_
    [['a', 'b'], None]
    >>> enc.transform(X)
    array([[ 1., 30.],
           [ 0., 41.],
           [ 1., nan]])
    """

    def __init__(self, categorical_features: Any = "from_dtype") -> None:
        self.categorical_features = categorical_features
        self._reset_caches()

    # -- fit ---------------------------------------------------------------------------------------------
    def fit(self, X: Any) -> FeatureEncoder:
        """Learn the columns, their kinds and the category vocabularies.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Features (``n_features`` may be 0).

        Returns
        -------
        self : FeatureEncoder

        Raises
        ------
        ValueError
            If ``X`` is not 2-D, has duplicate column names, a ``categorical_features`` of a bad value (another
            string than 'from_dtype', not 1-D, a mix of indices, bools and names, unknown or repeated columns, a
            mask of the wrong length), or a numerical column with non-numeric or infinite values.
        TypeError
            If ``categorical_features`` is a single number or holds values that are not indices, bools or names, a
            column has an unsupported dtype (e.g. complex) or holds dates or durations (datetime64, timedelta64, or
            such Python objects) without being declared in ``categorical_features``, or column names mix strings
            and non-strings.
        """
        columns, names, _ = _columns(X)
        self._reset_caches()
        self.n_features_in_ = len(columns)
        self.feature_names_in_ = names
        declared = self._declared_mask(len(columns), names)
        self.categorical_ = []
        self.categories_: list[list[str] | None] = []
        for j, column in enumerate(columns):
            kind = column_kind(column)
            if kind == UNSUPPORTED:
                held = (
                    f" holding {pd.api.types.infer_dtype(column, skipna=True)} values"
                    if pd.api.types.is_object_dtype(column.dtype)
                    else ""
                )
                raise TypeError(
                    f"X column {self._label(j)} must be numeric, bool, string or category; got dtype {column.dtype}{held}"
                )
            is_cat = (kind == CATEGORICAL) if declared is None else bool(declared[j])
            if kind == TEMPORAL and not is_cat:
                raise temporal_error(self._label(j), column)
            self.categorical_.append(is_cat)
            if is_cat:
                codes, keys = _factorize(column)
                used = np.bincount(codes[codes >= 0], minlength=len(keys)) > 0
                self.categories_.append(sorted({k for k, u in zip(keys, used, strict=False) if u}))
            else:
                self._numeric(column, j)  # validates
                self.categories_.append(None)
        return self

    def _reset_caches(self) -> None:
        # Per categorical column: the vocabulary as a dict, and the level map of the last pandas
        # CategoricalDtype seen (so that repeated calls with one dtype, e.g. one-row predicts, skip the lookup).
        self._vocab: dict[int, dict[str, int]] = {}
        self._dtype_levels: dict[int, tuple] = {}

    def _declared_mask(self, d: int, names: list[str] | None) -> NDArray[np.bool_] | None:
        """Boolean mask of declared categorical columns, or None for ``"from_dtype"``."""
        return declared_categorical(self.categorical_features, d, names)

    # -- transform ---------------------------------------------------------------------------------------
    def transform(self, X: Any, *, n_extra_columns: int = 0) -> NDArray[np.float64]:
        """Encode ``X`` as float64 codes and values.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features_in_)
            Features with the same columns, in the same order, as at fit.
        n_extra_columns : int, default=0
            Extra trailing columns to allocate (left uninitialised) for the caller to fill, which saves a copy.

        Returns
        -------
        X_encoded : ndarray of shape (n_samples, n_features_in_ + n_extra_columns), float64
            Column-major (Fortran order): each column is written and read contiguously, and LightGBM takes
            the feature columns ``X_encoded[:, :n_features_in_]`` without a copy.

        Raises
        ------
        ValueError
            If the columns differ from those seen at fit (names, order or count), or a numerical column holds
            non-numeric or infinite values.
        """
        columns, names, n = _columns(X)
        self._check_columns(len(columns), names, X)
        out = np.empty((n, self.n_features_in_ + n_extra_columns), dtype=np.float64, order="F")
        unseen: list[tuple[str, int, int, list[str]]] = []  # (column, rows, distinct values, examples)
        for j, column in enumerate(columns):
            if self.categorical_[j]:
                out[:, j] = self._codes(column, j, unseen)
            else:
                out[:, j] = self._numeric(column, j)
        if unseen:
            detail = "; ".join(f"column {label}: {values:,} value(s) in {rows:,} row(s), e.g. {', '.join(levels)}"
                               for label, rows, values, levels in unseen)  # fmt: skip
            warn(
                f"X has {sum(values for _, _, values, _ in unseen):,} categorical value(s) unseen at fit "
                f"({detail}); they are treated as missing"
            )
        return out

    def _codes(self, column: Any, j: int, unseen: list[tuple[str, int, int, list[str]]]) -> NDArray[np.float64]:
        if isinstance(column.dtype, pd.CategoricalDtype):
            codes = column.codes
            cached = self._dtype_levels.get(j)
            if cached is None or cached[0] is not column.dtype:
                if cached is None or not _same_levels(cached[0], column.dtype):
                    cached = (None, *self._levels(j, [_category_key(c) for c in column.dtype.categories]))
                # keyed by the dtype now in use, so that the next call with it (one-row predicts) skips the
                # comparison: a cache unpickled, or fitted on another frame, holds an equal dtype but not this one
                cached = self._dtype_levels[j] = (column.dtype, *cached[1:])
            _, level, new, keys, any_new = cached
        elif len(column) <= _SMALL:
            return self._codes_small(column, j, unseen)
        elif isinstance(column, np.ndarray) and column.dtype.kind in "iu" and _span(column) < _INT_RANGE:
            # integer codes: a lookup over the range of values, several times faster than hashing the rows
            low = int(column.min())
            # in int64 (or the column's own 64-bit type): int8 and int16 differences wrap past their range
            codes = (column.astype(np.int64) if column.dtype.itemsize < 8 else column) - column.dtype.type(low)
            level, new, keys, any_new = self._levels(j, [str(v) for v in range(low, int(column.max()) + 1)])
        else:
            codes, keys = _factorize(column)
            level, new, keys, any_new = self._levels(j, keys)
        values = level[codes]  # code -1 (missing) picks the trailing NaN
        if any_new:
            hit = new[codes]
            rows = int(hit.sum())
            if rows:
                distinct = np.unique(codes[hit])
                unseen.append((self._label(j), rows, distinct.size, [repr(keys[c]) for c in distinct[:3]]))
        return values

    def _codes_small(self, column: Any, j: int, unseen: list[tuple[str, int, int, list[str]]]) -> NDArray[np.float64]:
        """:meth:`_codes` for a few rows (online predict), in plain Python, which beats pandas' set-up costs."""
        vocab = self._vocabulary(j)
        values: list[float] = []
        new: list[str] = []
        # list() of a pandas extension array is about 3x faster than its tolist() on a few rows
        for value in column.tolist() if isinstance(column, np.ndarray) else list(column):
            code = None if pd.isna(value) else vocab.get(_category_key(value), -1)
            if code == -1:
                new.append(_category_key(value))
            values.append(np.nan if code is None or code == -1 else code)
        if new:
            distinct = list(dict.fromkeys(new))
            unseen.append((self._label(j), len(new), len(distinct), [repr(v) for v in distinct[:3]]))
        return np.array(values, dtype=np.float64)

    def _vocabulary(self, j: int) -> dict[str, int]:
        vocab = self._vocab.get(j)
        if vocab is None:
            categories = self.categories_[j]
            assert categories is not None  # asked of categorical columns only
            vocab = self._vocab[j] = {key: code for code, key in enumerate(categories)}
        return vocab

    def _levels(self, j: int, keys: list[str]) -> tuple[NDArray[np.float64], NDArray[np.bool_], list[str], bool]:
        """Codes of ``keys`` in column ``j``'s vocabulary, then NaN (for missing); which keys are unseen."""
        vocab = self._vocabulary(j)
        level = np.array([vocab.get(key, -1) for key in keys] + [-1], dtype=np.float64)
        new = level < 0
        new[-1] = False
        level[level < 0] = np.nan
        return level, new, keys, bool(new.any())

    def _numeric(self, column: Any, j: int) -> NDArray[np.float64]:
        try:
            if isinstance(column, np.ndarray):
                if column.dtype.kind in "biuf":
                    values = column.astype(np.float64)
                else:
                    values = pd.Series(column, copy=False).to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                values = column.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"X column {self._label(j)} must be numeric (or declared in categorical_features); "
                f"got dtype {column.dtype}: {exc}"
            ) from exc
        if np.isinf(values).any():
            raise ValueError(
                f"X column {self._label(j)} must not hold infinite values; got {int(np.isinf(values).sum())}"
            )
        return values

    # -- input handling ----------------------------------------------------------------------------------
    def check_columns(self, X: Any) -> None:
        """Refuse ``X`` as :meth:`transform` would for its columns, without encoding it (``X`` may have no rows).

        Raises
        ------
        ValueError
            If the columns differ from those seen at fit (names, order or count).
        """
        columns, names, _ = _columns(X)
        self._check_columns(len(columns), names, X)

    def _check_columns(self, d: int, names: list[str] | None, X: Any) -> None:
        if self.feature_names_in_ is not None and names != self.feature_names_in_:
            if names is None:
                raise ValueError(
                    f"X must be a DataFrame with the columns seen at fit {self.feature_names_in_[:10]}; "
                    f"got {type(X).__name__} without column names"
                )
            missing = [c for c in self.feature_names_in_ if c not in names]
            extra = [c for c in names if c not in self.feature_names_in_]
            detail = f"missing {missing[:5]}, unexpected {extra[:5]}" if missing or extra else "in another order"
            raise ValueError(f"X must have the columns seen at fit, in the same order; got columns {detail}")
        if self.feature_names_in_ is None and names is not None:
            raise ValueError(
                f"X must not have column names: the model was fit without them; got {names[:5]} "
                "(pass an array, or fit on a DataFrame)"
            )
        if d != self.n_features_in_:
            raise ValueError(f"X must have {self.n_features_in_} column(s), as at fit; got {d}")

    def named_columns(self) -> list[str] | None:
        """The columns of fit by name (what a model built on this encoder reads): ``[]`` for none, None for the
        columns of an array, which have no names."""
        if self.n_features_in_ == 0:
            return []
        return None if self.feature_names_in_ is None else list(self.feature_names_in_)

    def _label(self, j: int) -> str:
        names = getattr(self, "feature_names_in_", None)
        return repr(names[j]) if names is not None else f"{j}"

    # -- persistence -------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict of the fitted encoder (names, kinds and vocabularies)."""
        return {
            "n_features": self.n_features_in_,
            "feature_names": None if self.feature_names_in_ is None else list(self.feature_names_in_),
            "categorical": list(self.categorical_),
            "categories": [None if c is None else list(c) for c in self.categories_],
        }

    @classmethod
    def from_dict(cls, data: Any) -> FeatureEncoder:
        """Rebuild a fitted encoder from :meth:`to_dict` output.

        Raises
        ------
        ValueError
            If any field is missing, of the wrong type, or inconsistent with the others.
        """
        if not isinstance(data, dict) or set(data) != {"n_features", "feature_names", "categorical", "categories"}:
            got = sorted(data) if isinstance(data, dict) else type(data).__name__
            raise ValueError(
                "model data field 'encoder' must be a dict with keys n_features, feature_names, categorical, "
                f"categories; got {got}"
            )
        d = data["n_features"]
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise ValueError(f"model data field 'encoder.n_features' must be a non-negative int; got {d!r}")
        names, cat, cats = data["feature_names"], data["categorical"], data["categories"]
        if names is not None and (not _is_str_list(names, d) or len(set(names)) != len(names)):
            raise ValueError(f"model data field 'encoder.feature_names' must be null or {d} unique strings")
        if not (isinstance(cat, list) and len(cat) == d and all(isinstance(c, bool) for c in cat)):
            raise ValueError(f"model data field 'encoder.categorical' must be a list of {d} booleans")
        if not (isinstance(cats, list) and len(cats) == d):
            raise ValueError(f"model data field 'encoder.categories' must be a list of {d} entries")
        for j, (is_cat, levels) in enumerate(zip(cat, cats, strict=False)):
            ok = _is_str_list(levels, None) and levels == sorted(set(levels)) if is_cat else levels is None
            if not ok:
                raise ValueError(
                    f"model data field 'encoder.categories[{j}]' must be "
                    + ("a sorted list of unique strings" if is_cat else "null for a numerical column")
                )
        enc = cls()
        enc.n_features_in_, enc.feature_names_in_, enc.categorical_, enc.categories_ = d, names, cat, cats
        return enc


def _is_str_list(value: Any, length: int | None) -> bool:
    return (
        isinstance(value, list) and (length is None or len(value) == length) and all(isinstance(v, str) for v in value)
    )

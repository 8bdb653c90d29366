"""The calibration of every value of each feature: one depth-1 segment per value with enough rows."""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from mcal._constraints import OUTCOME, Interval, validate_params
from mcal._features.segment_codes import feature_table, resolve_categorical
from mcal._shared.mce import holm
from mcal._validation import CalibrationWarning
from mcal.metrics._multicalibration import mce
from mcal.segments import generate_segments

#: Columns of :attr:`PerValueTable.table`.
_COLUMNS = ["feature", "description", "size", "weight", "mean_prediction", "mean_outcome", "direction", "ecce",
            "sigma", "ecce_sigma", "pvalue", "pvalue_adjusted"]  # fmt: skip


@dataclass(frozen=True, eq=False)
class PerValueTable:
    """The calibration of every value of each feature with enough rows; see :func:`per_value_table`.

    Attributes
    ----------
    table : DataFrame of shape (n_listed, 12)
        One row per listed value, features in column order and each feature's values worst first (by
        ``ecce_sigma``): ``feature``, ``description`` (as segments name a level: ``country=DE``,
        ``country is missing``, ``age in (30, 45]``), then the columns of the ``table`` of
        :class:`mcal.metrics.MCEResult` (``size`` to ``pvalue``), and ``pvalue_adjusted``, Holm-adjusted over
        every listed value.
    n_left_out : pandas.Series of int
        Per feature, the number of its values with fewer than ``min_samples_per_value`` rows, not listed.
    min_samples_per_value : int
        The rule: a value is listed when it has at least this many rows.
    """

    table: pd.DataFrame
    n_left_out: pd.Series
    min_samples_per_value: int


@validate_params({"min_samples_per_value": Interval(numbers.Integral, 1, None), "outcome": OUTCOME})
def per_value_table(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    X: Any,
    sample_weight: ArrayLike | None = None,
    categorical_features: Any = "from_dtype",
    max_values_per_feature: int | Mapping[str, int] = 3,
    min_samples_per_value: int = 10,
    outcome: str = "classification",
) -> PerValueTable:
    """Calibration of every value of each feature of ``X``: ECCE in sigmas and its Holm-adjusted p-value.

    The depth-1 part of a segment audit without the cap on the values of a categorical feature: where
    :func:`mcal.segments.generate_segments` keeps a categorical feature's most frequent values and groups the
    others, this lists every value with at least ``min_samples_per_value`` rows, so that an error confined to
    rare values is named value by value.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels (real outcomes with ``outcome="regression"``).
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1] (real predictions with ``outcome="regression"``).
    X : DataFrame or array-like of shape (n_samples, n_features)
        The features, read as :func:`mcal.segments.generate_segments` reads them.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    categorical_features : "from_dtype", None, or 1-D array-like of int, bool or str, default="from_dtype"
        Which features are categorical, as in :func:`mcal.segments.generate_segments`.
    max_values_per_feature : int or mapping of str to int, default=3
        Quantile bins of a numerical feature with more distinct values, as in
        :func:`mcal.segments.generate_segments`; categorical features keep every value whatever this says.
    min_samples_per_value : int >= 1, default=10
        A value with fewer rows is not listed (and counted in ``n_left_out``); 10 is the segments' default
        ``min_samples_per_segment``.
    outcome : {"classification", "regression"}, default="classification"
        As in :func:`mcal.metrics.mce`.

    Returns
    -------
    result : PerValueTable

    Raises
    ------
    ValueError, TypeError
        As :func:`mcal.metrics.mce` for ``X`` and ``categorical_features``, and as
        :func:`mcal.segments.generate_segments` for ``max_values_per_feature``.

    Notes
    -----
    Each value is one segment of :func:`mcal.metrics.mce`, with its ECCE, sigma and p-value; the adjustment
    (Holm 1979) is over every listed value of every feature, so ``pvalue_adjusted < 0.05`` names miscalibrated
    values with a family-wise error rate of at most 5%.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"country": rng.choice(list("ABCDEFGH"), 4000)})
    >>> p = rng.uniform(0.1, 0.9, 4000)
    >>> y = rng.random(4000) < np.where(X["country"] == "H", p / 2, p)
    >>> t = per_value_table(y, p, X=X).table
    >>> t.loc[t["pvalue_adjusted"] < 0.05, "description"].tolist()
    ['country=H']
    """
    names, columns, kinds = feature_table(X)
    is_cat = resolve_categorical(categorical_features, X, kinds)
    with warnings.catch_warnings():  # the rules of max_values_per_feature, checked where they are declared
        warnings.simplefilter("ignore", CalibrationWarning)  # a single-level feature: warned about below
        generate_segments(X, max_depth=0, max_values_per_feature=max_values_per_feature)
    by_name = max_values_per_feature if isinstance(max_values_per_feature, Mapping) else None
    tables, left_out = [], {}
    for name, column, cat in zip(names, columns, is_cat, strict=False):
        one = pd.DataFrame({name: column})
        levels: Any = max_values_per_feature
        if cat:  # every value: as many levels as distinct values (as text, as segments know them)
            levels = max(pd.unique(np.asarray(column)[~pd.isna(column)].astype(str)).size, 2)
        elif by_name is not None:
            levels = {key: value for key, value in by_name.items() if key == name}
        segments = generate_segments(one, max_depth=1, max_values_per_feature=levels, min_samples_per_segment=1,
                                     max_n_segments=None, categorical_features=[name] if cat else None)  # fmt: skip
        table = mce(y_true, y_prob, segments=segments, sample_weight=sample_weight, outcome=outcome).table
        table = table[table["segment"] > 0]  # segment 0 is the whole table
        listed = table["size"] >= min_samples_per_value
        left_out[name] = int((~listed).sum())
        tables.append(table[listed].assign(feature=name))
    table = pd.concat(tables, ignore_index=True)
    table["pvalue_adjusted"] = holm(table["pvalue"].to_numpy())
    return PerValueTable(table[_COLUMNS], pd.Series(left_out, dtype=np.int64, name="n_left_out"), min_samples_per_value)

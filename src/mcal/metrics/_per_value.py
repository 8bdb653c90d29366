"""The calibration of every value of each feature: one depth-1 segment per value with enough rows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
from numpy.typing import ArrayLike

from mcal._constraints import OUTCOME, POSITIVE_INT, validate_params
from mcal._shared.per_value import value_rows, value_segments
from mcal.metrics._multicalibration import mce


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
        Per feature, the number of its values with fewer than ``min_samples_per_value`` rows, or of total weight
        0, not listed.
    min_samples_per_value : int
        The rule: a value is listed when it has at least this many rows.
    """

    table: pd.DataFrame
    n_left_out: pd.Series
    min_samples_per_value: int


@validate_params({"min_samples_per_value": POSITIVE_INT, "outcome": OUTCOME})
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
        A value with fewer rows (or of total weight 0) is not listed (and counted in ``n_left_out``); 10 is the segments' default
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
    segments, spans = value_segments(X, categorical_features, max_values_per_feature)
    table = mce(y_true, y_prob, segments=segments, sample_weight=sample_weight, outcome=outcome).table
    return PerValueTable(*value_rows(table, spans, min_samples_per_value), min_samples_per_value)

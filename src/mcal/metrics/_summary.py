"""One table of every core metric for several score columns, shared by the CLI, the demo and the report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from numpy.typing import ArrayLike

import numpy as np

from mcal._validation import check_both_classes, check_sample_weight, check_y_real, check_y_true
from mcal.metrics._binned import ece
from mcal.metrics._cumulative import ecce, ecce_pvalue, ecce_sigma, sigma_scale
from mcal.metrics._field import f_rce, pcoc
from mcal.metrics._multicalibration import mce
from mcal.metrics._regression import mae, mse
from mcal.metrics._standard import brier_score, log_loss, pr_auc, roc_auc


def calibration_summary(
    y_true: ArrayLike,
    y_probs: Mapping[str, ArrayLike],
    *,
    sample_weight: ArrayLike | None = None,
    field: ArrayLike | None = None,
    segments: Any = None,
    n_bins: int = 10,
) -> pd.DataFrame:
    """Every core metric for each named score column.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels with both classes present.
    y_probs : mapping of str to array-like of shape (n_samples,)
        Score columns (probabilities in [0, 1]) by name.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    field : array-like of shape (n_samples,), default=None
        Field of each row; adds the ``f_rce`` column when given.
    segments : Segments or array-like of bool of shape (n_samples, n_segments), default=None
        Segments (e.g. from :func:`mcal.segments.generate_segments`); adds the multicalibration error columns
        ``mce_sigma``, ``mce_absolute`` and ``mce_pvalue`` (see :func:`mcal.metrics.mce`) when given.
    n_bins : int, default=10
        Equal-width bins of the ECE.

    Returns
    -------
    table : DataFrame of shape (len(y_probs), n_metrics)
        One row per score column (index = names); columns ``log_loss``, ``brier_score``, ``roc_auc``,
        ``pr_auc``, ``ece``, ``ecce``, ``ecce_sigma_scale`` (ECCE/sigma; 0 or ``inf`` when sigma is 0,
        i.e. every score is 0 or 1), ``ecce_pvalue``, ``pcoc``, ``f_rce`` when a field is given, and the MCE
        columns when segments are.

    Raises
    ------
    ValueError
        On invalid input, an empty mapping, or labels with only one class (with positive weight).
    TypeError
        If ``y_probs`` is not a mapping, ``n_bins`` is not an integer, or ``y_true``, a score column, ``field``
        or ``sample_weight`` is not array-like (None, a string, or a scalar weight), or holds complex numbers.
    """
    _check_mapping("y_probs", y_probs)
    y = check_y_true(y_true)
    w = check_sample_weight(sample_weight, y.shape[0])
    check_both_classes(y, w, "y_true")
    rows = {}
    for name, p in y_probs.items():
        row = {
            "log_loss": log_loss(y, p, sample_weight=w),
            "brier_score": brier_score(y, p, sample_weight=w),
            "roc_auc": roc_auc(y, p, sample_weight=w),
            "pr_auc": pr_auc(y, p, sample_weight=w),
            "ece": ece(y, p, sample_weight=w, n_bins=n_bins),
            "ecce": ecce(y, p, sample_weight=w),
        }
        row["ecce_sigma_scale"] = sigma_scale(row["ecce"], ecce_sigma(y, p, sample_weight=w))
        row["ecce_pvalue"] = ecce_pvalue(y, p, sample_weight=w)
        row["pcoc"] = pcoc(y, p, sample_weight=w)
        if field is not None:
            row["f_rce"] = f_rce(y, p, field=field, sample_weight=w)
        if segments is not None:
            result = mce(y, p, segments=segments, sample_weight=w)
            row |= {"mce_sigma": result.mce_sigma, "mce_absolute": result.mce_absolute, "mce_pvalue": result.pvalue}
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _check_mapping(name: str, scores: Any) -> None:
    if not isinstance(scores, Mapping):
        raise TypeError(f"{name} must be a mapping of names to score arrays, e.g. {{'model': p}}; got "
                        f"{type(scores).__name__}")
    if not scores:
        raise ValueError(f"{name} must name at least one score column; got none")


def regression_summary(
    y_true: ArrayLike,
    y_preds: Mapping[str, ArrayLike],
    *,
    sample_weight: ArrayLike | None = None,
    segments: Any = None,
) -> pd.DataFrame:
    """Every core metric of real-valued predictions, for each named prediction column.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real outcomes, finite.
    y_preds : mapping of str to array-like of shape (n_samples,)
        Prediction columns (finite real numbers) by name.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    segments : Segments or array-like of bool of shape (n_samples, n_segments), default=None
        Segments; adds ``mce_sigma``, ``mce_absolute`` and ``mce_pvalue`` (:func:`mcal.metrics.mce` with
        ``outcome="regression"``) when given.

    Returns
    -------
    table : DataFrame of shape (len(y_preds), n_metrics)
        One row per prediction column (index = names); columns ``mse``, ``mae``, ``mean_prediction``,
        ``mean_outcome`` (weighted means), ``ecce`` (in the outcome's units), ``ecce_sigma_scale`` (ECCE over its
        successive-differences sigma), ``ecce_pvalue``, and the MCE columns when segments are given.

    Raises
    ------
    ValueError
        On NaN or infinite values, mismatched lengths, negative or all-zero weights, or an empty mapping.
    TypeError
        If ``y_preds`` is not a mapping, or an input is not array-like or holds complex numbers.

    Examples
    --------
    >>> table = regression_summary([1.0, 2.0, 4.0], {"model": [1.0, 3.0, 2.0]})
    >>> table.loc["model", ["mse", "mae"]].round(4).tolist()
    [1.6667, 1.0]
    """
    _check_mapping("y_preds", y_preds)
    y = check_y_real(y_true, "y_true")
    w = check_sample_weight(sample_weight, y.shape[0])
    regression = {"sample_weight": w, "outcome": "regression"}
    rows = {}
    for name, p in y_preds.items():
        row = {"mse": mse(y, p, sample_weight=w), "mae": mae(y, p, sample_weight=w),
               "mean_prediction": float(np.dot(w, check_y_real(p, f"y_preds[{name!r}]")) / w.sum()),
               "mean_outcome": float(np.dot(w, y) / w.sum()), "ecce": ecce(y, p, **regression)}
        row["ecce_sigma_scale"] = sigma_scale(row["ecce"], ecce_sigma(y, p, **regression))
        row["ecce_pvalue"] = ecce_pvalue(y, p, **regression)
        if segments is not None:
            result = mce(y, p, segments=segments, **regression)
            row |= {"mce_sigma": result.mce_sigma, "mce_absolute": result.mce_absolute, "mce_pvalue": result.pvalue}
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")

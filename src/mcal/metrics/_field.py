"""Calibration-in-the-large metrics of online advertising: PCOC and field-level relative calibration error."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from mcal._constraints import NON_NEGATIVE, validate_params
from mcal._features.fields import encode_field
from mcal._validation import check_metric_inputs, warn


def pcoc(y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Predicted click over click (PCOC): the weighted mean score over the weighted mean label.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels; at least one positive (with positive weight).
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    pcoc : float
        :math:`\\sum_i w_i p_i / \\sum_i w_i y_i`; 1 means calibrated in the large, above 1 over-predicts.

    Raises
    ------
    ValueError
        If no row has a positive label (PCOC is undefined).

    References
    ----------
    .. [1] MCNet paper (Dai et al., WWW 2025, arXiv 2503.00334), eq. 3; Graepel et al., ICML 2010.

    Examples
    --------
    >>> pcoc([0, 1, 0, 1], [0.2, 0.6, 0.4, 0.8])
    1.0
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    positives = float(np.dot(w, y))
    if positives <= 0:
        raise ValueError("y_true must contain a positive label with positive weight; PCOC is undefined without one")
    return float(np.dot(w, p) / positives)


@validate_params({"epsilon": NON_NEGATIVE})
def f_rce(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    field: ArrayLike,
    sample_weight: ArrayLike | None = None,
    epsilon: float = 0.01,
) -> float:
    """Field-level relative calibration error (F-RCE).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    field : array-like of shape (n_samples,)
        The field (context) of each row, e.g. country or ad source; any hashable values; missing ones (NaN,
        None, NA) form a field value of their own.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights (a row of weight k counts as k rows in :math:`N_c` and in the sums).
    epsilon : float, default=0.01
        Added to every label in the denominator, so that fields without positives stay defined.

    Returns
    -------
    f_rce : float
        A fraction (multiply by 100 for the paper's percentages); 0 when every field is calibrated in the large.

    Raises
    ------
    ValueError
        If ``epsilon=0`` and a field (of positive weight) has no positive label.

    Notes
    -----
    .. math:: \\text{F-RCE} = \\frac{1}{|D|} \\sum_c N_c
              \\frac{|\\sum_{i \\in c} (y_i - p_i)|}{\\sum_{i \\in c} (y_i + \\epsilon)}

    MCNet paper (Dai et al. 2025) eq. 4, after Pan et al. (2020). Every field is kept, as eq. 4 does.

    References
    ----------
    .. [1] Dai et al., "MCNet: Monotonic Calibration Networks for Expressive Uncertainty Calibration in Online
       Advertising", WWW 2025, arXiv 2503.00334, eq. 4.
    .. [2] Pan, Ao, Tang, Lu, Liu, Xiao and He, "Field-aware Calibration: A Simple and Empirically Strong Method
       for Reliable Probabilistic Predictions", WWW 2020, arXiv:1905.10713.

    Examples
    --------
    >>> round(f_rce([0, 1, 0, 1], [0.2, 0.6, 0.1, 0.5], field=["a", "a", "b", "b"], epsilon=0.0), 6)
    0.3
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    codes, uniques = encode_field(field, y.shape[0])
    k = len(uniques)
    n_c = np.bincount(codes, weights=w, minlength=k)
    gap = np.abs(np.bincount(codes, weights=w * (y - p), minlength=k))
    denom = np.bincount(codes, weights=w * (y + epsilon), minlength=k)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_field = np.where(n_c > 0, gap / denom, 0.0)
    if np.any((n_c > 0) & (denom <= 0)):
        raise ValueError("f_rce is undefined for a field without positives when epsilon is 0; use epsilon > 0")
    return float(np.dot(n_c, per_field) / w.sum())


@dataclass(frozen=True, eq=False)
class FieldPcoc:
    """PCOC overall and per field, and the spread of the per-field values (MCNet paper, Dai et al. 2025, eq. 3
    and Table 3).

    Attributes
    ----------
    pcoc : float
        PCOC of all rows.
    per_field : pandas.Series
        PCOC of each field, indexed by the field value (sorted, then a missing entry for the missing values);
        NaN for a field without a positive label.
    std : float
        Sample standard deviation (ddof=1) of the defined per-field values; NaN with fewer than two.
    """

    pcoc: float
    per_field: pd.Series
    std: float


def field_pcoc(
    y_true: ArrayLike, y_prob: ArrayLike, *, field: ArrayLike, sample_weight: ArrayLike | None = None
) -> FieldPcoc:
    """Field-level PCOC: predicted over observed positives within each field, and their standard deviation.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels; at least one positive (with positive weight).
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    field : array-like of shape (n_samples,)
        The field (context) of each row, e.g. country; any hashable values; missing ones (NaN, None, NA)
        form a field value of their own, listed last in ``per_field`` (under a missing index entry).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    result : FieldPcoc
        Overall PCOC, per-field PCOC and their sample standard deviation (the paper's "STD", in the paper
        shown as a percentage).

    Raises
    ------
    ValueError
        If no row has a positive label.

    Notes
    -----
    .. math:: \\mathrm{PCOC}_c = \\frac{\\sum_{i \\in c} w_i p_i}{\\sum_{i \\in c} w_i y_i}, \\qquad
              \\mathrm{STD} = \\sqrt{\\tfrac{1}{C - 1} \\sum_c (\\mathrm{PCOC}_c - \\overline{\\mathrm{PCOC}})^2}

    MCNet paper (Dai et al. 2025) eq. 3 per field, and Table 3, whose STD column is the sample (ddof=1)
    standard deviation of the field values (e.g. 0.997, 0.915, 0.942, 0.930 give 3.56%). A field without a
    positive label has an undefined PCOC: NaN, left out of the STD, with a :class:`~mcal.CalibrationWarning`.

    Examples
    --------
    >>> r = field_pcoc([0, 1, 0, 1], [0.2, 0.6, 0.1, 0.5], field=["a", "a", "b", "b"])
    >>> r.per_field.round(2).tolist(), round(r.std, 4)
    ([0.8, 0.6], 0.1414)
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    overall = pcoc(y, p, sample_weight=w)
    codes, uniques = encode_field(field, y.shape[0])
    predicted = np.bincount(codes, weights=w * p, minlength=len(uniques))
    observed = np.bincount(codes, weights=w * y, minlength=len(uniques))
    with np.errstate(divide="ignore", invalid="ignore"):
        per_field = np.where(observed > 0, predicted / observed, np.nan)
    undefined = np.isnan(per_field)
    if undefined.any():
        warn(f"field has {int(undefined.sum())} value(s) without a positive label (PCOC undefined, NaN): "
             f"{uniques[undefined][:3].tolist()}")  # fmt: skip
    defined = per_field[~undefined]
    std = float(np.std(defined, ddof=1)) if defined.size > 1 else float("nan")
    return FieldPcoc(overall, pd.Series(per_field, index=pd.Index(uniques, name="field"), name="pcoc"), std)

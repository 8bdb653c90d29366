"""Metrics of real-valued predictions: the ECCE scale for regression outcomes, MSE and MAE.

The scale of ECCE for a real outcome cannot come from the prediction (as ``p (1 - p)`` does for a binary label): it is
estimated from the data by successive differences of the residuals in score order, Guy et al., "Measuring
multi-calibration", arXiv 2506.11251, 2025, Appendix C, eq. 6, as the reference implementation computes it
(mcgrad 0.1.5, ``mcgrad.metrics._ecce_regression_standard_deviation_per_segment``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._shared.walks import successive_difference_sigmas
from mcal._validation import check_metric_inputs


def regression_sigma(y: NDArray[np.float64], p: NDArray[np.float64], w: NDArray[np.float64]) -> float:
    """Scale of the ECCE of real outcomes on the whole table (clean float64 inputs; rows of tied scores in row order)."""
    order = np.argsort(p, kind="stable")
    return float(successive_difference_sigmas(y[order] - p[order], w[order], None, np.zeros(1, dtype=np.intp))[0])


def mse(y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Mean squared error (MSE) of real-valued predictions.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed outcomes, finite.
    y_pred : array-like of shape (n_samples,)
        Predictions, finite.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    mse : float
        :math:`\\sum_i w_i (y_i - p_i)^2 / \\sum_i w_i`, in squared units of the outcome.

    Examples
    --------
    >>> mse([1.0, 2.0, 4.0], [1.0, 3.0, 2.0])
    1.6666666666666667
    """
    y, p, w = check_metric_inputs(y_true, y_pred, sample_weight, "regression")
    return float(np.dot(w, (y - p) ** 2) / w.sum())


def mae(y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Mean absolute error (MAE) of real-valued predictions.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Observed outcomes, finite.
    y_pred : array-like of shape (n_samples,)
        Predictions, finite.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    mae : float
        :math:`\\sum_i w_i |y_i - p_i| / \\sum_i w_i`, in units of the outcome.

    Examples
    --------
    >>> mae([1.0, 2.0, 4.0], [1.0, 3.0, 2.0])
    1.0
    """
    y, p, w = check_metric_inputs(y_true, y_pred, sample_weight, "regression")
    return float(np.dot(w, np.abs(y - p)) / w.sum())

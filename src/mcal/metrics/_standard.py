"""Standard probabilistic and ranking metrics, thin over scikit-learn with mcal's validation."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from sklearn import metrics as _skm

from mcal._validation import check_both_classes, check_metric_inputs


def log_loss(y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Log loss (binary cross-entropy), the weighted mean of ``-[y log p + (1 - y) log(1 - p)]``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels, 0/1 or bool.
    y_prob : array-like of shape (n_samples,)
        Probabilities of the positive class, in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    loss : float
        In nats; scores of exactly 0 or 1 are clipped by scikit-learn to machine epsilon.

    References
    ----------
    .. [1] I. J. Good, "Rational decisions", Journal of the Royal Statistical Society B 14(1), 1952.

    Examples
    --------
    >>> round(log_loss([0, 1], [0.5, 0.5]), 6)
    0.693147
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    return float(_skm.log_loss(y, p, sample_weight=w, labels=[0.0, 1.0]))


def brier_score(y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Brier score, the weighted mean of ``(p - y)^2``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    score : float
        In [0, 1]; lower is better.

    References
    ----------
    .. [1] G. W. Brier, "Verification of forecasts expressed in terms of probability", Monthly Weather Review
       78(1), 1950.

    Examples
    --------
    >>> round(brier_score([0, 1], [0.2, 0.6]), 6)
    0.1
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    return float(np.average((p - y) ** 2, weights=w))


def roc_auc(y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Area under the ROC curve (``sklearn.metrics.roc_auc_score``); ties count one half.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels; both classes must be present.
    y_prob : array-like of shape (n_samples,)
        Scores in [0, 1] (only their order matters).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    auc : float

    Raises
    ------
    ValueError
        If ``y_true`` holds one class only (with positive weight).

    Examples
    --------
    >>> roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    check_both_classes(y, w, "y_true")
    return float(_skm.roc_auc_score(y, p, sample_weight=w))


def pr_auc(y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Area under the precision-recall curve as average precision (``sklearn.metrics.average_precision_score``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels; both classes must be present.
    y_prob : array-like of shape (n_samples,)
        Scores in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    ap : float

    Raises
    ------
    ValueError
        If ``y_true`` holds one class only (with positive weight).

    Examples
    --------
    >>> round(pr_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 6)
    0.833333
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    check_both_classes(y, w, "y_true")
    return float(_skm.average_precision_score(y, p, sample_weight=w))

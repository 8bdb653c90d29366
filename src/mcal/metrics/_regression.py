"""Metrics of real-valued predictions: the ECCE scale for regression outcomes, MSE and MAE.

The scale of ECCE for a real outcome cannot come from the prediction (as ``p (1 - p)`` does for a binary label): it is
estimated from the data by successive differences of the residuals in score order, Guy et al., "Measuring
multi-calibration", arXiv 2506.11251, 2025, Appendix C, eq. 6, as the reference implementation computes it
(mcgrad 0.1.5, ``mcgrad.metrics._ecce_regression_standard_deviation_per_segment``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._validation import check_metric_inputs


def successive_difference_sigmas(
    residuals: NDArray[np.float64],
    weights: NDArray[np.float64],
    positions: NDArray[np.intp] | None,
    starts: NDArray[np.intp],
) -> NDArray[np.float64]:
    r"""Scale of the ECCE of every group of rows from successive differences of its residuals in score order.

    For a group of rows :math:`1..n` sorted by score, with residuals :math:`r_j = y_j - p_j` and weights
    :math:`w_j`, :math:`W = \sum_j w_j`:

    .. math:: \sigma^2 = \frac{\sum_{j=1}^{n-1} (r_{j+1} - r_j)^2 (w_j + w_{j+1})^2}
                              {4 W (w_1 + w_n + 2 \sum_{j=2}^{n-1} w_j)}

    (Guy et al. 2025, eq. 6; 0 for a group of one row or of zero weight). Squared differences of neighbours estimate
    twice the conditional variance of the outcome without knowing the calibrated mean.

    Parameters
    ----------
    residuals, weights : ndarray of shape (n_samples,)
        ``y - p`` and ``w`` with the rows sorted by score.
    positions : ndarray of shape (n_positions,) or None
        Rows grouped so that each group is contiguous and in score order; None for all rows in order.
    starts : ndarray of shape (n_groups,)
        Start of each nonempty group in ``positions``.

    Returns
    -------
    sigma : ndarray of shape (n_groups,)
    """
    parts = successive_difference_parts(residuals, weights, positions, starts)
    w = weights if positions is None else weights[positions]
    return _sigmas(parts[0], np.add.reduceat(w, starts), parts[2], parts[4])


def successive_difference_parts(
    residuals: NDArray[np.float64],
    weights: NDArray[np.float64],
    positions: NDArray[np.intp] | None,
    starts: NDArray[np.intp],
) -> NDArray[np.float64]:
    """The pieces of ``successive_difference_sigmas`` of every group that rows elsewhere can extend.

    Returns an array of shape (5, n_groups): the sum of the squared weighted differences of neighbours within the
    group, and the residual and weight of its first and of its last row. Groups of rows spread over several
    sorted blocks (the partitions of a cluster) are joined by :func:`join_successive_differences`.
    """
    r = residuals if positions is None else residuals[positions]
    w = weights if positions is None else weights[positions]
    pairs = np.empty(r.size)
    pairs[0] = 0.0
    np.square(np.diff(r) * (w[1:] + w[:-1]), out=pairs[1:])
    pairs[starts] = 0.0  # the pair that would join a group to the one before it
    ends = np.append(starts[1:], r.size) - 1
    return np.stack([np.add.reduceat(pairs, starts), r[starts], w[starts], r[ends], w[ends]])


def join_successive_differences(
    parts: NDArray[np.float64], totals: NDArray[np.float64], present: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """``successive_difference_sigmas`` of groups whose rows lie in consecutive sorted blocks.

    Parameters
    ----------
    parts : ndarray of shape (n_blocks, 5, n_groups)
        :func:`successive_difference_parts` of each block, in score order (any values where a group is absent).
    totals : ndarray of shape (n_blocks, n_groups)
        Weight of each group in each block.
    present : ndarray of shape (n_blocks, n_groups)
        Whether the block holds rows of the group.

    Returns
    -------
    sigma : ndarray of shape (n_groups,)
        The scale of each group, as if its rows had been in one block (0 for a group without rows).
    """
    n_groups = parts.shape[2]
    pairs, first_w, last_r, last_w = (np.zeros(n_groups) for _ in range(4))
    seen = np.zeros(n_groups, dtype=bool)
    for part, here in zip(parts, present, strict=True):
        joined = seen & here  # the pair of the group's last row so far and its first row in this block
        step = np.where(joined, np.square((part[1] - last_r) * (part[2] + last_w)), 0.0)
        pairs += np.where(here, part[0], 0.0) + step
        first_w = np.where(here & ~seen, part[2], first_w)
        last_r, last_w = np.where(here, part[3], last_r), np.where(here, part[4], last_w)
        seen |= here
    return _sigmas(pairs, totals.sum(axis=0), first_w, last_w)


def _sigmas(
    pairs: NDArray[np.float64], total: NDArray[np.float64], first_w: NDArray[np.float64], last_w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """eq. 6 of Guy et al. from its sums: ``sqrt(pairs / (4 W (2 W - w_first - w_last)))``, 0 where undefined."""
    denominator = 4.0 * total * (2.0 * total - first_w - last_w)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.where(denominator > 0, pairs / denominator, 0.0)
    return np.sqrt(variance)


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

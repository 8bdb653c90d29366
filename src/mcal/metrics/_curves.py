"""What calibration figures draw, computed from binned or decimated summaries, never from raw points.

- :func:`reliability_intervals`: the reliability curve with a Wilson score interval per bin;
- :func:`cumulative_curve`: the cumulative differences behind ECCE (Arrieta-Ibarra et al. 2022), thinned to a
  bounded number of points that keeps every local minimum and maximum, so its range is ECCE exactly.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtri

from mcal._constraints import BINS, OPEN_UNIT, OUTCOME, Interval, validate_params
from mcal._validation import check_metric_inputs
from mcal.metrics._binned import ReliabilityCurve, bin_ids, reliability_curve
from mcal.metrics._cumulative import cumulative_differences, outcome_sigma


@dataclass(frozen=True)
class ReliabilityIntervals:
    """A reliability curve with a confidence interval for the observed frequency of each bin.

    Attributes
    ----------
    curve : ReliabilityCurve
        The per-bin summary, as :func:`mcal.metrics.reliability_curve` returns it.
    lower, upper : ndarray of shape (n_bins,)
        Wilson score interval of the observed frequency, in [0, 1]; NaN for an empty bin.
    effective_count : ndarray of shape (n_bins,)
        Kish effective sample size per bin, :math:`(\\sum w)^2 / \\sum w^2`; the row count for unit weights.
    confidence : float
        Confidence level of the intervals.
    """

    curve: ReliabilityCurve
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    effective_count: NDArray[np.float64]
    confidence: float

    def covers(self, value: ArrayLike) -> NDArray[np.bool_]:
        """Whether each bin's interval contains ``value``; False for empty bins.

        Parameters
        ----------
        value : float or array-like of shape (n_bins,)
            Probabilities to test, one for every bin or one for all (e.g. the bins' mean scores ``mean_prob``).

        Returns
        -------
        covered : ndarray of bool of shape (n_bins,)
        """
        v = np.asarray(value, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            return (self.lower <= v) & (v <= self.upper)


@validate_params({"confidence": OPEN_UNIT})
def wilson_interval(
    fraction: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wilson score interval for a binomial proportion (vectorized; ``n`` may be an effective, non-integer size).

    Parameters
    ----------
    fraction : float or array-like of any shape
        Observed proportions (probabilities) in [0, 1]; NaN gives NaN bounds.
    n : float or array-like of a shape that broadcasts with ``fraction``
        Sample sizes (non-negative); NaN bounds where ``n`` is 0.
    confidence : float, default=0.95
        Two-sided confidence level, in (0, 1).

    Returns
    -------
    lower, upper : ndarray of the broadcast shape of ``fraction`` and ``n``
        Interval bounds on the proportion (probability scale), in [0, 1]; numpy floats for scalar inputs.

    Raises
    ------
    ValueError
        If a ``fraction`` lies outside [0, 1] or an ``n`` is negative.

    Notes
    -----
    With :math:`z = \\Phi^{-1}(1 - (1 - c)/2)`, the interval is
    :math:`\\frac{\\hat p + z^2/2n}{1 + z^2/n} \\pm \\frac{z}{1 + z^2/n}\\sqrt{\\hat p(1-\\hat p)/n + z^2/4n^2}`
    (Wilson 1927, without continuity correction: the same as ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``).
    Unlike the Wald interval it stays inside [0, 1] and is not degenerate when the proportion is 0 or 1.

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
       JASA 22(158), 1927, doi:10.1080/01621459.1927.10502953.

    Examples
    --------
    >>> lo, hi = wilson_interval(0.8, 10)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.4902, 0.9433)
    """
    p = np.asarray(fraction, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if np.any((p < 0.0) | (p > 1.0)):
        raise ValueError(
            f"fraction must hold proportions in [0, 1]; got values from {float(np.nanmin(p))!r} "
            f"to {float(np.nanmax(p))!r}"
        )
    if np.any(n < 0.0):
        raise ValueError(f"n must hold non-negative sample sizes; got {float(np.nanmin(n))!r}")
    z = ndtri(0.5 + float(confidence) / 2.0)  # in float64 whatever the type of confidence
    with np.errstate(divide="ignore", invalid="ignore"):
        z2n = np.where(n > 0, z * z / n, np.nan)
        centre = (p + z2n / 2.0) / (1.0 + z2n)
        half = z / (1.0 + z2n) * np.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


@validate_params({**BINS, "confidence": OPEN_UNIT})
def reliability_intervals(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
    confidence: float = 0.95,
) -> ReliabilityIntervals:
    """Reliability curve with a Wilson score interval for the observed frequency of every bin.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights, read as sampling (importance) weights: the interval uses the Kish effective size
        :math:`(\\sum_b w)^2 / \\sum_b w^2` of each bin, so it does not change when all weights are scaled.
    n_bins : int, default=10
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Binning, as in :func:`reliability_curve`.
    confidence : float, default=0.95
        Two-sided confidence level of each bin's interval (pointwise, not simultaneous over bins).

    Returns
    -------
    intervals : ReliabilityIntervals
        The curve and, per bin, the interval bounds and the effective size; NaN for empty bins.

    Notes
    -----
    On calibrated data the mean score of a bin lies inside its interval with probability close to ``confidence``
    (the Wilson interval's coverage). See :func:`wilson_interval`.

    References
    ----------
    .. [1] E. B. Wilson, "Probable inference, the law of succession, and statistical inference", JASA 22(158),
       1927, doi:10.1080/01621459.1927.10502953.
    .. [2] L. Kish, "Survey Sampling", Wiley, 1965 (the effective sample size).

    Examples
    --------
    >>> iv = reliability_intervals([0, 1, 1, 1, 0, 1], [0.2, 0.3, 0.7, 0.8, 0.6, 0.9], n_bins=2)
    >>> iv.curve.fraction_positive.tolist(), iv.effective_count.tolist()
    ([0.5, 0.75], [2.0, 4.0])
    >>> bool(iv.lower[1] < 0.75 < iv.upper[1])
    True
    """
    curve = reliability_curve(y_true, y_prob, sample_weight=sample_weight, n_bins=n_bins, strategy=strategy)
    if sample_weight is None:
        n_eff = curve.count.astype(np.float64)
    else:
        _y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
        idx = bin_ids(p, w, n_bins, strategy).astype(np.intp)
        sum_w2 = np.bincount(idx, weights=w * w, minlength=n_bins)
        with np.errstate(divide="ignore", invalid="ignore"):
            n_eff = np.where(sum_w2 > 0, curve.weight**2 / sum_w2, 0.0)
    lower, upper = wilson_interval(curve.fraction_positive, n_eff, confidence)
    return ReliabilityIntervals(curve, lower, upper, n_eff, float(confidence))


@dataclass(frozen=True)
class CumulativeCurve:
    """The cumulative differences between labels and scores, in score order, as a plot draws them.

    Attributes
    ----------
    fraction : ndarray of shape (n_points,)
        Cumulative share of the total weight up to each point, from 0 to 1 (the horizontal axis).
    difference : ndarray of shape (n_points,)
        :math:`C_k = \\frac{1}{W}\\sum_{j \\le k} w_j (y_j - p_j)`, starting at 0; ``max - min`` is ECCE.
    score : ndarray of shape (n_points,)
        Score at each point (the largest score included so far; the smallest score at the first point).
    sigma : float
        Standard deviation scale of the walk under perfect calibration (:func:`ecce_std`).
    n_distinct : int
        Number of distinct scores, i.e. points of the full walk before thinning, less the start.
    """

    fraction: NDArray[np.float64]
    difference: NDArray[np.float64]
    score: NDArray[np.float64]
    sigma: float
    n_distinct: int


def _thin_keeping_extremes(walk: NDArray[np.float64], max_points: int) -> NDArray[np.intp]:
    """Indices of at most ``max_points`` points: the ends plus the minimum and maximum of equal chunks."""
    m = walk.shape[0]
    if m <= max_points:
        return np.arange(m)
    n_chunks = (max_points - 2) // 2
    size = -(-m // n_chunks)
    padded = np.concatenate((walk, np.full(n_chunks * size - m, walk[-1])))
    blocks = padded.reshape(n_chunks, size)
    offsets = np.arange(n_chunks) * size
    picks = np.concatenate(([0, m - 1], offsets + blocks.argmin(axis=1), offsets + blocks.argmax(axis=1)))
    return np.unique(np.minimum(picks, m - 1))


@validate_params({"max_points": Interval(numbers.Integral, 4, None), "outcome": OUTCOME})
def cumulative_curve(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    max_points: int = 2000,
    outcome: str = "classification",
) -> CumulativeCurve:
    """Cumulative differences between labels and scores, the curve whose range is ECCE, ready to plot.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels (real outcomes for ``outcome="regression"``).
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1] (real-valued predictions for ``outcome="regression"``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    max_points : int, default=2000
        Most points returned. Longer walks are cut into equal chunks and only each chunk's minimum and maximum
        are kept (with both ends), so the drawn range equals ECCE exactly and the figure stays small on any n.
    outcome : {"classification", "regression"}, default="classification"
        As in :func:`ecce`: for real outcomes the walk is in the outcome's units and ``sigma`` is the
        successive-differences estimate of :func:`ecce_std`.

    Returns
    -------
    curve : CumulativeCurve

    Notes
    -----
    Tied scores form one block and the walk is read at block ends, as :func:`ecce` does. A calibrated model gives
    a walk that looks like Brownian motion with scale :math:`\\sigma`; a slope over a range of scores means the
    observed frequency there exceeds (upward) or falls short of (downward) the scores, by the slope
    (Arrieta-Ibarra et al. 2022, section 2; MCGrad paper, Tax et al. 2025, eq. 1).

    References
    ----------
    .. [1] Arrieta-Ibarra, Gujral, Tannen, Tygert, Xu, "Metrics of calibration for probabilistic predictions",
       JMLR 23(351), 2022.

    Examples
    --------
    >>> c = cumulative_curve([0, 1, 0, 1], [0.1, 0.3, 0.6, 0.9])
    >>> c.fraction.tolist(), np.round(c.difference, 3).tolist()
    ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, -0.025, 0.15, 0.0, 0.025])
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight, outcome)
    walk = cumulative_differences(y, p, w)
    distinct, inverse = np.unique(p, return_inverse=True)
    cum_weight = np.concatenate(([0.0], np.cumsum(np.bincount(inverse, weights=w))))
    fraction = cum_weight / cum_weight[-1]
    score = np.concatenate((distinct[:1], distinct))
    keep = _thin_keeping_extremes(walk, int(max_points))
    return CumulativeCurve(fraction[keep], walk[keep], score[keep], outcome_sigma(y, p, w, outcome), int(distinct.size))

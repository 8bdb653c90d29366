"""Binned calibration metrics: the reliability curve and the expected calibration error (ECE)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._binning import quantile_bin_ids, uniform_bin_ids, uniform_edges, weighted_quantiles
from mcal._constraints import BINS, OUTCOME, validate_params
from mcal._validation import check_metric_inputs


@dataclass(frozen=True)
class ReliabilityCurve:
    """Per-bin summary of a reliability diagram.

    Attributes
    ----------
    bin_edges : ndarray of shape (n_bins + 1,)
        Bin edges in probability units. Uniform bins: bin k is ``[edge_k, edge_{k+1})``, the last bin closed.
        Quantile bins: bin k is ``(edge_k, edge_{k+1}]``, the first bin closed, so that each edge, the score at
        which the cumulative weight reaches its level, closes the bin below it. Quantile edges can repeat when
        scores tie; the bins between repeated edges are empty.
    mean_predicted : ndarray of shape (n_bins,)
        Weighted mean score per bin; NaN for an empty bin.
    fraction_positive : ndarray of shape (n_bins,)
        Weighted fraction of positives per bin (the weighted mean outcome, for regression; also
        :attr:`mean_outcome`); NaN for an empty bin.
    weight : ndarray of shape (n_bins,)
        Total sample weight per bin.
    count : ndarray of shape (n_bins,)
        Number of rows per bin (rows of zero weight included).
    """

    bin_edges: NDArray[np.float64]
    mean_predicted: NDArray[np.float64]
    fraction_positive: NDArray[np.float64]
    weight: NDArray[np.float64]
    count: NDArray[np.int64]

    @property
    def mean_outcome(self) -> NDArray[np.float64]:
        """Weighted mean outcome per bin, shape (n_bins,): ``fraction_positive`` under its name for real outcomes."""
        return self.fraction_positive

    @property
    def empty(self) -> NDArray[np.bool_]:
        """Boolean mask of bins with zero total weight, shape (n_bins,)."""
        return self.weight <= 0


def bin_edges(p: NDArray[np.float64], w: NDArray[np.float64], n_bins: int, strategy: str) -> NDArray[np.float64]:
    """The ``n_bins + 1`` bin edges: equal-width on [0, 1], or the weighted quantiles at ``k / n_bins``."""
    return uniform_edges(n_bins) if strategy == "uniform" else weighted_quantiles(p, w, n_bins)


def bin_ids(p: NDArray[np.float64], w: NDArray[np.float64], n_bins: int, strategy: str) -> NDArray[np.float64]:
    """Bin index of each score (float64 exact integers) between the :func:`bin_edges`: uniform bins are closed on
    the left, quantile bins on the right (an inverted-CDF quantile is the last score of the weight below its
    level). O(n) time and memory whatever ``n_bins``."""
    return uniform_bin_ids(p, n_bins) if strategy == "uniform" else quantile_bin_ids(p, w, n_bins)


def occupied_bins(ids: NDArray[np.float64], n_bins: int) -> tuple[NDArray[np.intp], int]:
    """Codes ``0..m-1`` for ``bincount`` over at most ``min(n_bins, n)`` bins: the bin ids themselves when
    ``n_bins <= n``, else the ranks of the occupied bins, so that sums per bin take O(n) memory."""
    if n_bins <= ids.size:
        return ids.astype(np.intp), int(n_bins)
    occupied, codes = np.unique(ids, return_inverse=True)
    return codes.astype(np.intp), occupied.size


@validate_params({**BINS, "outcome": OUTCOME})
def reliability_curve(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
    outcome: str = "classification",
) -> ReliabilityCurve:
    """Reliability curve: weighted mean score and observed frequency per score bin, empty bins kept.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    n_bins : int, default=10
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins on [0, 1] (for regression, on the range of the predictions), or equal-weight bins with
        edges at weighted score quantiles.
    outcome : {"classification", "regression"}, default="classification"
        Binary labels with probabilities, or real outcomes with real-valued predictions: the binned reliability
        table of mean prediction against mean outcome (``curve.mean_outcome``).

    Returns
    -------
    curve : ReliabilityCurve
        Arrays of length ``n_bins``; empty bins have NaN means and ``curve.empty`` marks them.

    References
    ----------
    .. [1] M. H. DeGroot and S. E. Fienberg, "The comparison and evaluation of forecasters", The Statistician
       32(1/2), 1983.

    Examples
    --------
    >>> c = reliability_curve([0, 1, 1], [0.1, 0.8, 0.9], n_bins=2)
    >>> c.fraction_positive.tolist(), c.count.tolist()
    ([0.0, 1.0], [1, 2])
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight, outcome)
    low, width = (p.min(), p.max() - p.min()) if outcome == "regression" and strategy == "uniform" else (0.0, 1.0)
    unit = (p - low) / width if width > 0 else np.zeros_like(p)  # scores on [0, 1] for the uniform bins
    edges = low + width * bin_edges(unit, w, n_bins, strategy) if width > 0 else np.full(n_bins + 1, low)
    idx = bin_ids(unit, w, n_bins, strategy).astype(np.intp)
    weight = np.bincount(idx, weights=w, minlength=n_bins).astype(np.float64, copy=False)
    sum_p = np.bincount(idx, weights=w * p, minlength=n_bins)
    sum_y = np.bincount(idx, weights=w * y, minlength=n_bins)
    count = np.bincount(idx, minlength=n_bins).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.where(weight > 0, sum_p / weight, np.nan)
        frac = np.where(weight > 0, sum_y / weight, np.nan)
    return ReliabilityCurve(edges, mean_p, frac, weight, count)


@validate_params(BINS)
def ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
) -> float:
    """Expected calibration error (ECE), the weight-averaged gap between score and frequency per bin.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    n_bins : int, default=10
        Number of bins (10 equal-width bins, as in the MCGrad paper's tables).
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins, or equal-weight bins (adaptive ECE).

    Returns
    -------
    ece : float
        In probability units, in [0, 1].

    Notes
    -----
    .. math:: \\mathrm{ECE} = \\sum_b \\frac{W_b}{W} |\\bar y_b - \\bar p_b|
              = \\frac{1}{W} \\sum_b \\Big| \\sum_{i \\in b} w_i (y_i - p_i) \\Big|

    Naeini et al. (2015); MCGrad paper (Tax et al. 2025), Table 6 "ECE". Empty bins contribute zero. Only the
    occupied bins are summed, so time and memory are O(n) whatever ``n_bins`` (:func:`reliability_curve`
    returns every bin, O(``n_bins``)).

    References
    ----------
    .. [1] Naeini, Cooper, Hauskrecht, "Obtaining well calibrated probabilities using Bayesian binning",
       AAAI 2015.

    Examples
    --------
    >>> round(ece([0, 1, 1, 0], [0.2, 0.6, 0.8, 0.4], n_bins=2), 6)
    0.3
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    codes, n_codes = occupied_bins(bin_ids(p, w, n_bins, strategy), n_bins)
    gaps = np.bincount(codes, weights=w * (y - p), minlength=n_codes)
    return float(np.abs(gaps).sum() / w.sum())

"""Non-parametric calibrators: isotonic regression, histogram binning and smoothed isotonic regression."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.isotonic import IsotonicRegression, isotonic_regression

from mcal._base import BaseCalibrator
from mcal._binning import assign_bins, equal_frequency_edges, right_closed_bin_ids
from mcal._constraints import BINS, N_BINS, StrOptions
from mcal._persistence.state import Array

#: Choices of how a block or bin whose rows all hold one class is estimated.
EXTREMES = ("jeffreys", "empirical")


def jeffreys_extremes(values: NDArray[np.float64], weight: NDArray[np.float64]) -> NDArray[np.float64]:
    """``values`` with each exact 0 and 1 replaced by the Jeffreys-prior estimate of its rate, ``1/2 / (n + 1)`` and
    ``(n + 1/2) / (n + 1)``, ``n`` the total sample weight behind it (the row count for unit weights, so that a
    weight of k is k copies); other values unchanged."""
    out = np.array(values, dtype=np.float64)
    low, high = out == 0.0, out == 1.0
    out[low] = 0.5 / (weight[low] + 1.0)
    out[high] = (weight[high] + 0.5) / (weight[high] + 1.0)
    return out


class IsotonicCalibration(BaseCalibrator):
    """Isotonic regression of the label on the score: the best non-decreasing step map in weighted squared error.

    Parameters
    ----------
    extremes : {"jeffreys", "empirical"}, default="jeffreys"
        Estimate of the block of lowest scores when all its rows are negatives, and of the block of highest
        scores when all are positives, which isotonic regression maps to exactly 0 and 1 (and a single wrong
        row then costs log loss an infinite term). ``"jeffreys"``: :math:`(k + 1/2) / (n + 1)` with :math:`k`
        the positives (0 or :math:`n`) and :math:`n` the total sample weight of the block (its rows), the
        Jeffreys-prior estimate of its rate, capped by the next block's value so that the map stays
        non-decreasing; ``"empirical"``: the observed 0 or 1, as :class:`sklearn.isotonic.IsotonicRegression`.

    Attributes
    ----------
    X_thresholds_ : ndarray of shape (n_thresholds,)
        Score knots, strictly increasing, in probability units.
    y_thresholds_ : ndarray of shape (n_thresholds,)
        Calibrated probability at each knot, non-decreasing.

    Raises
    ------
    ValueError
        From :meth:`fit`: ``extremes`` not one of its choices, or invalid scores, labels or weights.

    Notes
    -----
    Fitted with :class:`sklearn.isotonic.IsotonicRegression` (pool adjacent violators, ties pooled), then
    evaluated by linear interpolation between knots; scores outside the fitted range take the end values
    (``out_of_bounds="clip"``, as in the MCGrad paper's baseline). The map is non-decreasing but not strictly
    increasing: it can tie scores, so ROC-AUC can change. ``extremes="empirical"`` can predict exactly 0 or 1
    (how often: ``benchmarks/results/calibrated_classifier.md``).

    References
    ----------
    .. [1] Zadrozny and Elkan, "Transforming classifier scores into accurate multiclass probability estimates",
       KDD 2002.

    Examples
    --------
    >>> import numpy as np
    >>> cal = IsotonicCalibration(extremes="empirical").fit(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 1, 0, 1]))
    >>> cal.predict(np.array([0.1, 0.25, 0.4])).tolist()
    [0.0, 0.5, 1.0]
    >>> IsotonicCalibration().fit(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 1, 0, 1])).predict([0.1, 0.4]).tolist()
    [0.25, 0.75]
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("X_thresholds_", "y_thresholds_")
    _state_constraints: ClassVar[dict[str, Any]] = {
        "X_thresholds_": Array(order="strict"),
        "y_thresholds_": Array(order="weak", probabilities=True),
    }
    #: Fitted values lie in [0, 1] (None: unbounded, for real-valued outcomes).
    _probabilities: ClassVar[bool] = True

    _parameter_constraints: ClassVar[dict] = {"extremes": StrOptions(*EXTREMES)}

    def __init__(self, *, extremes: str = "jeffreys") -> None:
        self.extremes = extremes

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        keep = sample_weight > 0
        low, high = (0.0, 1.0) if self._probabilities else (None, None)
        iso = IsotonicRegression(y_min=low, y_max=high, increasing=True, out_of_bounds="clip")
        iso.fit(y_prob[keep], y[keep], sample_weight=sample_weight[keep])
        self.X_thresholds_ = np.asarray(iso.X_thresholds_, dtype=np.float64)
        self.y_thresholds_ = np.asarray(iso.y_thresholds_, dtype=np.float64)
        if self._probabilities and self.extremes == "jeffreys":
            self.y_thresholds_ = self._jeffreys_ends(y_prob[keep], sample_weight[keep])

    def _jeffreys_ends(self, p: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
        """``y_thresholds_`` with the end blocks at exactly 0 or 1 estimated by :func:`jeffreys_extremes`, capped by
        the neighbouring block's value."""
        x, v = self.X_thresholds_, self.y_thresholds_.copy()
        for pure, rows in ((v == 0.0, p <= x[np.flatnonzero(v == 0.0)[-1]] if (v == 0.0).any() else None),
                           (v == 1.0, p >= x[np.flatnonzero(v == 1.0)[0]] if (v == 1.0).any() else None)):  # fmt: skip
            if rows is None:
                continue
            value = jeffreys_extremes(v[pure][:1], np.array([w[rows].sum()]))[0]
            others = v[~pure]
            if others.size:  # stay within the neighbouring block, so that the map stays non-decreasing
                value = min(value, others.min()) if value < 0.5 else max(value, others.max())
            v[pure] = value
        return v

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        if self.X_thresholds_.size == 1:
            return np.full_like(y_prob, self.y_thresholds_[0])
        return np.interp(y_prob, self.X_thresholds_, self.y_thresholds_)

    def _validate_state(self) -> None:
        if self.X_thresholds_.shape != self.y_thresholds_.shape or self.X_thresholds_.size == 0:
            raise ValueError(
                "model data fields state.X_thresholds_ and state.y_thresholds_ must have equal, "
                f"non-zero lengths; got {self.X_thresholds_.size} and {self.y_thresholds_.size}"
            )


class HistogramBinning(BaseCalibrator):
    """Histogram binning: equal-frequency score bins, each mapped to its observed positive rate.

    Parameters
    ----------
    n_bins : int, default=20
        A positive integer: the number of equal-frequency (equal-weight) bins, 20 as in the MCNet paper's experiments. Fewer bins
        result where tied scores make quantile edges coincide.
    extremes : {"jeffreys", "empirical"}, default="jeffreys"
        Estimate of a bin whose rows all hold one class: ``"jeffreys"`` gives :math:`(k + 1/2) / (n + 1)`
        (:math:`k` its positives, 0 or :math:`n`, and :math:`n` its total sample weight, its rows), so that no
        bin predicts exactly 0 or 1; ``"empirical"`` its observed rate, 0 or 1.

    Attributes
    ----------
    bin_edges_ : ndarray of shape (n_fitted_bins - 1,)
        Interior bin edges, strictly increasing, in probability units; bin k is ``(edge_{k-1}, edge_k]``.
        ``n_fitted_bins <= n_bins`` (tied scores merge bins).
    bin_values_ : ndarray of shape (n_fitted_bins,)
        Weighted positive rate of each bin on the calibration data.

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters), or invalid scores, labels or weights, or
        any ``X`` (as :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`).
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters), or an input is not array-like.

    Notes
    -----
    Zadrozny and Elkan (2001). A step function: non-decreasing only where the bin rates happen to be, and
    constant within a bin. Scores outside the calibration range go to the first or last bin.

    References
    ----------
    .. [1] Zadrozny and Elkan, "Obtaining calibrated probability estimates from decision trees and naive
       Bayesian classifiers", ICML 2001.

    Examples
    --------
    >>> import numpy as np
    >>> cal = HistogramBinning(n_bins=2).fit(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 0, 0, 1]))
    >>> cal.predict(np.array([0.15, 0.35])).tolist()
    [0.16666666666666666, 0.5]
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("bin_edges_", "bin_values_")
    _state_constraints: ClassVar[dict[str, Any]] = {
        "bin_edges_": Array(order="strict"),
        "bin_values_": Array(probabilities=True),
    }

    _parameter_constraints: ClassVar[dict] = {"n_bins": N_BINS, "extremes": StrOptions(*EXTREMES)}

    def __init__(self, *, n_bins: int = 20, extremes: str = "jeffreys") -> None:
        self.n_bins = n_bins
        self.extremes = extremes

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        edges = equal_frequency_edges(y_prob, sample_weight, int(self.n_bins))
        idx = assign_bins(y_prob, edges)
        weight = np.bincount(idx, weights=sample_weight, minlength=edges.size + 1).astype(np.float64, copy=False)
        positives = np.bincount(idx, weights=sample_weight * y, minlength=edges.size + 1)
        self.bin_edges_ = edges
        self.bin_values_ = positives / weight
        if self.extremes == "jeffreys":
            self.bin_values_ = jeffreys_extremes(self.bin_values_, weight)

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        return self.bin_values_[assign_bins(y_prob, self.bin_edges_)]

    def _validate_state(self) -> None:
        if self.bin_values_.size != self.bin_edges_.size + 1:
            raise ValueError("model data field state.bin_values_ must have one more entry than state.bin_edges_")


def smoothed_isotonic_knots(
    y_prob: NDArray[np.float64],
    y: NDArray[np.float64],
    sample_weight: NDArray[np.float64],
    n_bins: int,
    strategy: str = "quantile",
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Knots of the smoothed isotonic regression (SIR) map, strictly increasing in both coordinates.

    Parameters
    ----------
    y_prob, y, sample_weight : ndarray of shape (n_samples,)
        Clean scores in [0, 1], labels and non-negative weights (positive total).
    n_bins : int
        Number of score bins.
    strategy : {"quantile", "uniform"}, default="quantile"
        Equal-weight bins (weighted quantiles of the scores) or equal-width bins on [0, 1].

    Returns
    -------
    knots_x, knots_y : ndarray of shape (n_knots,)
        The map is ``np.interp(p, knots_x, knots_y)``; both arrays are strictly increasing, ``knots_x`` runs
        from 0 to 1, ``knots_y`` does too unless the first (last) pooled block holds only scores of exactly 0
        (1), and ``n_knots >= 2``.
    """
    keep = sample_weight > 0
    p, yy, w = y_prob[keep], y[keep], sample_weight[keep]
    idx: NDArray[np.intp] | NDArray[np.float64]
    if strategy == "quantile":  # bin k is (edge_{k-1}, edge_k], every bin holds weight
        idx = assign_bins(p, equal_frequency_edges(p, w, n_bins))
    else:
        # bin k is (k / n_bins, (k + 1) / n_bins], edges rounded to float (a score of 0 is in the first); only
        # the occupied bins are counted, so time and memory do not grow with n_bins (no scores part beyond 2**53)
        idx = right_closed_bin_ids(p, n_bins)
    _, idx = np.unique(idx, return_inverse=True)
    weight = np.bincount(idx, weights=w)
    positives = np.bincount(idx, weights=w * yy)
    low, high = np.full(weight.size, np.inf), np.full(weight.size, -np.inf)
    np.minimum.at(low, idx, p)
    np.maximum.at(high, idx, p)
    rate, mid = positives / weight, (low + high) / 2.0
    # pool adjacent violators (ties pooled too, so the knot values are strictly increasing): PAV gives the
    # pooled rates; blocks of equal fitted rate become one knot at the weight-averaged bin midpoint
    fitted = isotonic_regression(rate, sample_weight=weight, y_min=0.0, y_max=1.0, increasing=True)
    block = np.concatenate(([0], np.cumsum(fitted[1:] != fitted[:-1])))
    block_weight = np.bincount(block, weights=weight)
    xs = np.bincount(block, weights=weight * mid) / block_weight
    vs = fitted[np.r_[np.flatnonzero(np.diff(block)), block.size - 1]]
    # a knot at value 0 or 1 repeats its anchor: drop it so the map stays strictly increasing
    inner = (vs > 0.0) & (vs < 1.0)
    xs, vs = xs[inner], vs[inner]
    head = xs.size == 0 or xs[0] > 0.0
    tail = xs.size == 0 or xs[-1] < 1.0
    knots_x = np.concatenate(([0.0] if head else [], xs, [1.0] if tail else []))
    knots_y = np.concatenate(([0.0] if head else [], vs, [1.0] if tail else []))
    return knots_x, knots_y


class SmoothedIsotonic(BaseCalibrator):
    """Smoothed isotonic regression (SIR): isotonic bin rates joined by straight lines.

    Parameters
    ----------
    n_bins : int, default=20
        A positive integer: the number of score bins (20, as for every binning method in the MCNet paper's experiments). Empty bins are
        skipped; tied scores can leave fewer quantile bins.
    strategy : {"quantile", "uniform"}, default="quantile"
        Equal-weight bins (weighted quantiles of the calibration scores, the MCNet paper's binning phase) or
        equal-width bins on [0, 1] (the reference code of REFERENCES.md, UMC). See Notes for why quantile is
        the default.

    Attributes
    ----------
    knots_x_ : ndarray of shape (n_knots,)
        Scores of the knots, strictly increasing from 0 to 1, in probability units.
    knots_y_ : ndarray of shape (n_knots,)
        Calibrated probability at each knot, strictly increasing, from 0 to 1 unless scores of exactly 0 or 1
        form an end block of their own (see Notes).

    Raises
    ------
    ValueError, TypeError
        From :meth:`fit`, as for :class:`HistogramBinning`.

    Notes
    -----
    Deng et al. (2020): each non-empty bin gives a point (midpoint of its smallest and largest score,
    weighted positive rate); adjacent bins whose rates are not increasing are pooled (pool adjacent
    violators, weighted by the bins' weights; the pooled point sits at the weight-averaged midpoint); the
    anchors (0, 0) and (1, 1) are added, and the map is the piecewise-linear interpolation of these points
    (the MCNet paper's eq. 6, whose knot values :math:`a_k` SIR computes directly from the calibration data's
    statistics: MCNet section 4.1; "isotonic regression and linear interpolation", its Appendix B.2).
    Unlike isotonic regression and histogram binning the map is continuous and strictly increasing, so the
    order of scores within a bin is kept and ROC-AUC is unchanged. Ties between adjacent rates are pooled,
    and a pooled rate of exactly 0 (or 1) is dropped in favour of the anchor it would repeat, so that
    strictness holds on any data.
    Beyond the outermost knots the map runs linearly to the anchors. Equal-weight bins put the outermost
    knots inside the first and last ``1 / n_bins`` of the rows (more where pooling merges the outer bins);
    why equal-weight bins: ``docs/defaults/nonparametric.rst``. So a score of exactly 1 (or 0) is
    mapped to 1 (or 0) unless the outermost pooled block holds only such scores. When a base model puts
    many rows at exactly 1 with a low positive rate (a saturated logistic regression), pooling joins them
    with the bins below and they are predicted 1, with infinite log loss on their negatives; clip such
    scores away from 0 and 1 before calibrating.

    References
    ----------
    .. [1] Deng, Wang, Tan, Xu and Gai, "Calibrating User Response Predictions in Online Advertising",
       ECML PKDD 2020 (Lecture Notes in Computer Science 12460), doi:10.1007/978-3-030-67667-4_13.
    .. [2] Dai et al., "MCNet: Monotonic Calibration Networks for Expressive Uncertainty Calibration in
       Online Advertising", WWW 2025, arXiv:2503.00334, section 4.1 (eq. 6) and Appendix B.2.

    Examples
    --------
    >>> import numpy as np
    >>> cal = SmoothedIsotonic(n_bins=2).fit(np.array([0.125, 0.375, 0.625, 0.875]), np.array([0, 1, 1, 1]))
    >>> cal.knots_x_.tolist(), cal.knots_y_.tolist()  # bin rates 0.5 and 1; the knot at 1 is the anchor
    ([0.0, 0.25, 1.0], [0.0, 0.5, 1.0])
    >>> cal.predict(np.array([0.125, 0.625])).tolist()
    [0.25, 0.75]
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("knots_x_", "knots_y_")
    _state_constraints: ClassVar[dict[str, Any]] = dict.fromkeys(
        _state_attrs, Array(order="strict", probabilities=True)
    )

    _parameter_constraints: ClassVar[dict] = BINS

    def __init__(self, *, n_bins: int = 20, strategy: str = "quantile") -> None:
        self.n_bins = n_bins
        self.strategy = strategy

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        self.knots_x_, self.knots_y_ = smoothed_isotonic_knots(
            y_prob, y, sample_weight, int(self.n_bins), self.strategy
        )

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        return np.interp(y_prob, self.knots_x_, self.knots_y_)

    def _validate_state(self) -> None:
        if self.knots_x_.shape != self.knots_y_.shape or self.knots_x_.size < 2:
            raise ValueError("model data fields state.knots_x_ and state.knots_y_ must be equal-length, >= 2 knots")
        if self.knots_x_[0] != 0.0 or self.knots_x_[-1] != 1.0:
            raise ValueError(
                "model data field state.knots_x_ must run from 0 to 1 (the anchors); got "
                f"{float(self.knots_x_[0])!r} to {float(self.knots_x_[-1])!r}"
            )

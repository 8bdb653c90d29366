"""Non-parametric calibrators: isotonic regression and histogram binning."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.isotonic import IsotonicRegression

from mcal._base import BaseCalibrator
from mcal._binning import assign_bins, equal_frequency_edges


def _check_increasing(name: str, arr: NDArray[np.float64], *, strict: bool) -> None:
    d = np.diff(arr)
    if arr.ndim != 1 or (np.any(d <= 0) if strict else np.any(d < 0)):
        rule = "strictly increasing" if strict else "non-decreasing"
        raise ValueError(f"model data field state.{name} must be a {rule} 1-D array")


def _check_probabilities(name: str, arr: NDArray[np.float64]) -> None:
    if np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"model data field state.{name} must hold probabilities in [0, 1]")


class IsotonicCalibration(BaseCalibrator):
    """Isotonic regression of the label on the score: the best non-decreasing step map in weighted squared error.

    Attributes
    ----------
    X_thresholds_ : ndarray of shape (n_thresholds,)
        Score knots, strictly increasing, in probability units.
    y_thresholds_ : ndarray of shape (n_thresholds,)
        Calibrated probability at each knot, non-decreasing.

    Notes
    -----
    Fitted with :class:`sklearn.isotonic.IsotonicRegression` (pool adjacent violators, ties pooled), then
    evaluated by linear interpolation between knots; scores outside the fitted range take the end values
    (``out_of_bounds="clip"``, as in the MCGrad paper's baseline). The map is non-decreasing but not strictly
    increasing: it can tie scores, so ROC-AUC can change.

    References
    ----------
    .. [1] Zadrozny and Elkan, "Transforming classifier scores into accurate multiclass probability estimates",
       KDD 2002.

    Examples
    --------
    >>> import numpy as np
    >>> cal = IsotonicCalibration().fit(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 1, 0, 1]))
    >>> cal.predict(np.array([0.1, 0.25, 0.4])).tolist()
    [0.0, 0.5, 1.0]
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("X_thresholds_", "y_thresholds_")

    def __init__(self) -> None:
        pass

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        keep = sample_weight > 0
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(y_prob[keep], y[keep], sample_weight=sample_weight[keep])
        self.X_thresholds_ = np.asarray(iso.X_thresholds_, dtype=np.float64)
        self.y_thresholds_ = np.asarray(iso.y_thresholds_, dtype=np.float64)

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        if self.X_thresholds_.size == 1:
            return np.full_like(y_prob, self.y_thresholds_[0])
        return np.interp(y_prob, self.X_thresholds_, self.y_thresholds_)

    def _validate_state(self) -> None:
        if self.X_thresholds_.shape != self.y_thresholds_.shape or self.X_thresholds_.size == 0:
            raise ValueError("model data fields state.X_thresholds_ and state.y_thresholds_ must be equal, non-empty")
        _check_increasing("X_thresholds_", self.X_thresholds_, strict=True)
        _check_increasing("y_thresholds_", self.y_thresholds_, strict=False)
        _check_probabilities("y_thresholds_", self.y_thresholds_)


class HistogramBinning(BaseCalibrator):
    """Histogram binning: equal-frequency score bins, each mapped to its observed positive rate.

    Parameters
    ----------
    n_bins : int, default=20
        Number of equal-frequency (equal-weight) bins, 20 as in the MCNet paper's experiments. Fewer bins
        result where tied scores make quantile edges coincide.

    Attributes
    ----------
    bin_edges_ : ndarray of shape (n_bins_ - 1,)
        Interior bin edges, strictly increasing, in probability units; bin k is ``(edge_{k-1}, edge_k]``.
    bin_values_ : ndarray of shape (n_bins_,)
        Weighted positive rate of each bin on the calibration data.

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
    [0.0, 0.5]
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("bin_edges_", "bin_values_")

    def __init__(self, *, n_bins: int = 20) -> None:
        self.n_bins = n_bins

    def _validate_params_values(self) -> None:
        if isinstance(self.n_bins, bool) or not isinstance(self.n_bins, (int, np.integer)) or self.n_bins < 1:
            raise ValueError(f"n_bins must be a positive integer; got {self.n_bins!r}")

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        edges = equal_frequency_edges(y_prob, sample_weight, int(self.n_bins))
        idx = assign_bins(y_prob, edges)
        weight = np.bincount(idx, weights=sample_weight, minlength=edges.size + 1)
        positives = np.bincount(idx, weights=sample_weight * y, minlength=edges.size + 1)
        self.bin_edges_ = edges
        self.bin_values_ = positives / weight

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        return self.bin_values_[assign_bins(y_prob, self.bin_edges_)]

    def _validate_state(self) -> None:
        if self.bin_values_.ndim != 1 or self.bin_values_.size != self.bin_edges_.size + 1:
            raise ValueError("model data field state.bin_values_ must have one more entry than state.bin_edges_")
        _check_increasing("bin_edges_", self.bin_edges_, strict=True)
        _check_probabilities("bin_values_", self.bin_values_)

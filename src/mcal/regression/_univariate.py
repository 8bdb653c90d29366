"""Univariate recalibration of a real-valued prediction: isotonic and linear (Mincer-Zarnowitz) recalibration."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from mcal._base import BaseCalibrator
from mcal._persistence.state import NUMBER_OR_ARRAY, Array
from mcal.nonparametric import IsotonicCalibration
from mcal.regression._base import RegressionCalibrator


class IsotonicRecalibration(RegressionCalibrator, IsotonicCalibration):
    """Isotonic recalibration: the non-decreasing map of the prediction that minimises the weighted squared error.

    The estimate of ``E[y | y_pred]`` under the sole assumption that it is non-decreasing in ``y_pred``, which makes
    the prediction calibrated in the mean on the fitting data (each block of pooled predictions gets its mean
    outcome) [1]_.

    Attributes
    ----------
    X_thresholds_ : ndarray of shape (n_thresholds,)
        Prediction knots, strictly increasing, in the outcome's units.
    y_thresholds_ : ndarray of shape (n_thresholds,)
        Recalibrated prediction at each knot, non-decreasing.

    Raises
    ------
    ValueError
        From :meth:`fit`: NaN or infinite ``y_pred`` or ``y`` (named), ``y`` with a single value of positive weight,
        mismatched lengths, negative or all-zero weights, or any ``X``.
    TypeError
        From :meth:`fit` and :meth:`predict`: an input that is not array-like.

    Notes
    -----
    Fitted with :class:`sklearn.isotonic.IsotonicRegression` (pool adjacent violators), evaluated by linear
    interpolation between knots; predictions outside the fitted range take the end values.

    References
    ----------
    .. [1] R. E. Barlow, D. J. Bartholomew, J. M. Bremner and H. D. Brunk, "Statistical Inference under Order
       Restrictions", Wiley, 1972.

    Examples
    --------
    >>> cal = IsotonicRecalibration().fit([1.0, 2.0, 3.0, 4.0], [10.0, 30.0, 20.0, 40.0])
    >>> cal.predict([1.0, 2.5, 4.0]).tolist()
    [10.0, 25.0, 40.0]
    """

    _probabilities: ClassVar[bool] = False
    _state_constraints: ClassVar[dict[str, Any]] = {
        **IsotonicCalibration._state_constraints,
        "y_thresholds_": Array(order="weak"),  # real outcomes, not probabilities
    }

    _parameter_constraints: ClassVar[dict] = {}  # real outcomes have no extremes of 0 and 1 to keep away from

    def __init__(self) -> None:
        pass


class LinearRecalibration(RegressionCalibrator, BaseCalibrator):
    r"""Linear recalibration: the weighted least-squares line of the outcome on the prediction.

    Fits ``y ~ a + b y_pred`` (the Mincer-Zarnowitz regression [1]_: a prediction is calibrated in the mean when
    ``a = 0`` and ``b = 1``) and returns ``a + b y_pred``: the best affine correction in squared error, which
    makes the weighted mean residual zero on the fitting data.

    Attributes
    ----------
    intercept_ : float
        ``a``, in the outcome's units.
    slope_ : float
        ``b``; 0 when every positively weighted prediction is the same (the fit is then the weighted mean outcome).

    Raises
    ------
    ValueError
        From :meth:`fit`: as :class:`IsotonicRecalibration`.
    TypeError
        From :meth:`fit` and :meth:`predict`: an input that is not array-like.

    Notes
    -----
    .. math:: b = \frac{\sum_i w_i (p_i - \bar p)(y_i - \bar y)}{\sum_i w_i (p_i - \bar p)^2}, \qquad a = \bar y - b \bar p,

    with weighted means :math:`\bar p, \bar y`.

    References
    ----------
    .. [1] J. Mincer and V. Zarnowitz, "The Evaluation of Economic Forecasts", in Economic Forecasts and
       Expectations, NBER, 1969.

    Examples
    --------
    >>> cal = LinearRecalibration().fit([1.0, 2.0, 3.0], [3.0, 5.0, 7.0])
    >>> round(cal.intercept_, 6), round(cal.slope_, 6)
    (1.0, 2.0)
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("intercept_", "slope_")
    _state_constraints: ClassVar[dict[str, Any]] = dict.fromkeys(_state_attrs, NUMBER_OR_ARRAY)

    def __init__(self) -> None:
        pass

    def _fit(self, y_pred, y, sample_weight, X) -> None:
        self.intercept_, self.slope_ = linear_recalibration(y_pred, y, sample_weight)

    def _predict(self, y_pred, X) -> NDArray[np.float64]:
        return self.intercept_ + self.slope_ * y_pred


def linear_recalibration(
    y_pred: NDArray[np.float64], y: NDArray[np.float64], sample_weight: NDArray[np.float64]
) -> tuple[float, float]:
    """Intercept and slope of the weighted least-squares line of ``y`` on ``y_pred`` (clean float64 inputs)."""
    total = sample_weight.sum()
    p_mean = float(np.dot(sample_weight, y_pred) / total)
    y_mean = float(np.dot(sample_weight, y) / total)
    dp = y_pred - p_mean
    spread = float(np.dot(sample_weight, dp * dp))
    slope = float(np.dot(sample_weight, dp * (y - y_mean)) / spread) if spread > 0 else 0.0
    return y_mean - slope * p_mean, slope

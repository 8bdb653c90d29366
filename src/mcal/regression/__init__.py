"""Calibration of real-valued predictions: RegressionMCGrad and univariate recalibration.

The estimators take ``fit(y_pred, y, *, X=None, sample_weight=None)`` and ``predict(y_pred, *, X=None)``, with
``y_pred`` a prediction of the mean of a real outcome ``y``; the metrics are those of :mod:`mcal.metrics` with
``outcome="regression"``.
"""

from mcal.regression._mcgrad import RegressionMCGrad
from mcal.regression._univariate import IsotonicRecalibration, LinearRecalibration

__all__ = ["IsotonicRecalibration", "LinearRecalibration", "RegressionMCGrad"]

"""The input rules of calibrators for real-valued outcomes: ``fit(y_pred, y, ...)`` and ``predict(y_pred, ...)``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._base import FitInputs
from mcal._validation import check_consistent, check_sample_weight, check_y_real

if sys.version_info >= (3, 11):
    from typing import Self
else:  # pragma: no cover
    from typing_extensions import Self


if TYPE_CHECKING:  # the mixin always precedes a BaseCalibrator, whose methods it calls
    from mcal._base import BaseCalibrator as _Base
else:
    _Base = object


class RegressionCalibrator(_Base):
    """Mixin (before :class:`~mcal.BaseCalibrator` or one of its subclasses) for calibrators of real-valued
    predictions: it replaces the probability and label checks of ``fit`` and ``predict`` with those of
    real numbers, and keeps everything else (parameters, ``X``, weights, model files) of the base.

    ``_bounds()`` gives the least prediction and outcome allowed, and whether the prediction must exceed it
    (a log link needs positive predictions). Subclasses may override it.
    """

    outcome: ClassVar[str] = "regression"

    def _bounds(self) -> tuple[float | None, float | None, bool]:
        """(least prediction or None, least outcome or None, whether predictions must exceed their least value)."""
        return None, None, False

    def fit(self, y_pred: ArrayLike, y: ArrayLike, *, X: Any = None, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the recalibration map of a real-valued prediction.

        Parameters
        ----------
        y_pred : array-like of shape (n_samples,)
            Predictions of the outcome, finite (positive for a log link).
        y : array-like of shape (n_samples,)
            Observed outcomes, finite (non-negative for a log link), at least two distinct values with positive weight.
        X : array-like or DataFrame of shape (n_samples, n_features), default=None
            Features; only for calibrators with ``uses_features = True``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero.

        Returns
        -------
        self : object
            The fitted calibrator.

        Raises
        ------
        ValueError
            On NaN, infinite or out-of-range predictions or outcomes (named), outcomes with a single value of
            positive weight, mismatched lengths, empty input, negative or all-zero weights, or ``X`` given to a
            univariate calibrator.
        TypeError
            If a hyperparameter has the wrong type (named), or an input is not array-like or holds complex numbers.
        """
        return self._fit_checked(y_pred, y, X, sample_weight)

    def predict(self, y_pred: ArrayLike, *, X: Any = None) -> NDArray[np.floating]:
        """Return recalibrated predictions.

        Parameters
        ----------
        y_pred : array-like of shape (n_samples,)
            Predictions of the outcome, finite (positive for a log link).
        X : array-like or DataFrame of shape (n_samples, n_features), default=None
            Features, as at fit.

        Returns
        -------
        y_calibrated : ndarray of shape (n_samples,)
            Recalibrated predictions, float32 if ``y_pred`` is float32, else float64.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        ValueError
            On invalid predictions or features.
        TypeError
            If ``y_pred`` is not array-like or holds complex numbers, or ``X`` is not a table.
        """
        return self._checked_predict(y_pred, X, self._predict)

    def _check_fit_inputs(self, y_pred: ArrayLike, y: ArrayLike, sample_weight: Any) -> FitInputs:
        """Real predictions and outcomes within :meth:`_bounds`, weights, and two outcomes of positive weight."""
        low_pred, low_y, strict = self._bounds()
        p = check_y_real(y_pred, "y_pred", lower=low_pred, strict=strict)
        yy = check_y_real(y, "y", lower=low_y)
        check_consistent(y_pred=p, y=yy)
        w = check_sample_weight(sample_weight, p.shape[0])
        kept = yy[w > 0]
        if kept.min() == kept.max():
            raise ValueError(
                f"y must hold at least two distinct values with positive weight; got only {float(kept[0])!r}"
            )
        return FitInputs(p, yy, w)

    def _check_predict_scores(self, y_pred: ArrayLike) -> NDArray[np.float64]:
        """Real predictions within :meth:`_bounds`."""
        low_pred, _, strict = self._bounds()
        return check_y_real(y_pred, "y_pred", lower=low_pred, strict=strict)

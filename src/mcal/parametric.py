"""Parametric calibrators on the logit: Platt scaling, temperature scaling and beta calibration.

Each is a logistic model on fixed transforms of the score, fitted by weighted maximum likelihood with
non-negativity bounds on the slopes that keep the map increasing. The pure function
:func:`fit_logistic_map` holds the math; the estimators add validation and state.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from mcal._base import BaseCalibrator
from mcal._validation import EPS, logit


def fit_logistic_map(
    Z: NDArray[np.float64],
    y: NDArray[np.float64],
    sample_weight: NDArray[np.float64],
    *,
    lower: NDArray[np.float64],
    x0: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Minimise the weighted log loss of ``expit(Z @ theta)`` subject to ``theta >= lower``.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_params)
        Design matrix (transforms of the score; a column of ones for an intercept).
    y : ndarray of shape (n_samples,)
        Labels in [0, 1].
    sample_weight : ndarray of shape (n_samples,)
        Non-negative weights.
    lower : ndarray of shape (n_params,)
        Lower bounds (``-inf`` for free parameters).
    x0 : ndarray of shape (n_params,)
        Starting point.

    Returns
    -------
    theta : ndarray of shape (n_params,)

    Raises
    ------
    RuntimeError
        If L-BFGS-B fails, carrying scipy's message.
    """
    w = sample_weight / sample_weight.sum()

    def loss_grad(theta: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        z = Z @ theta
        # -[y log s(z) + (1-y) log s(-z)], stable for large |z|
        loss = -np.dot(w, y * log_expit(z) + (1.0 - y) * log_expit(-z))
        grad = Z.T @ (w * (expit(z) - y))
        return float(loss), grad

    bounds = [(lo if np.isfinite(lo) else None, None) for lo in lower]
    res = minimize(loss_grad, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 1000, "gtol": 1e-10})
    if not res.success and not np.all(np.isfinite(res.x)):
        raise RuntimeError(f"the logistic calibration fit failed: {res.message}")
    return res.x


class PlattScaling(BaseCalibrator):
    """Platt scaling: ``expit(a * logit(p) + b)`` with ``a >= 0``.

    Parameters
    ----------
    (none)

    Attributes
    ----------
    slope_ : float
        a, the coefficient on the logit (non-negative, so the map is non-decreasing; strictly increasing when > 0).
    intercept_ : float
        b, in logit units.

    Notes
    -----
    Fitted by weighted maximum likelihood on the clipped logit ``logit(clip(p, EPS, 1 - EPS))`` without
    Platt's target smoothing (the MCGrad and MCNet papers' baseline uses plain logistic regression on the logit).

    References
    ----------
    .. [1] Platt, "Probabilistic outputs for support vector machines", 1999.

    Examples
    --------
    >>> import numpy as np
    >>> cal = PlattScaling().fit(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 0, 1, 1]))
    >>> bool(cal.slope_ > 0)
    True
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("slope_", "intercept_")

    def __init__(self) -> None:
        pass

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        z = logit(y_prob)
        Z = np.column_stack([z, np.ones_like(z)])
        theta = fit_logistic_map(Z, y, sample_weight, lower=np.array([0.0, -np.inf]), x0=np.array([1.0, 0.0]))
        self.slope_, self.intercept_ = float(theta[0]), float(theta[1])

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        return expit(self.slope_ * logit(y_prob) + self.intercept_)


class TemperatureScaling(BaseCalibrator):
    """Temperature scaling for a binary score: ``expit(logit(p) / T)`` with ``T > 0``.

    Attributes
    ----------
    temperature_ : float
        T; above 1 softens over-confident scores, below 1 sharpens them.

    Notes
    -----
    One parameter, no intercept (Guo et al. 2017); fitted by weighted maximum likelihood over ``1/T >= 0``.
    A fitted inverse temperature of 0 (scores carry no information) is stored as ``T = inf`` would not be
    JSON-safe, so T is capped at 1e6.

    References
    ----------
    .. [1] Guo, Pleiss, Sun, Weinberger, "On calibration of modern neural networks", ICML 2017.

    Examples
    --------
    >>> import numpy as np
    >>> cal = TemperatureScaling().fit(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 1, 0, 1]))
    >>> bool(cal.temperature_ > 1)
    True
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("temperature_",)

    def __init__(self) -> None:
        pass

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        z = logit(y_prob)[:, None]
        (inv_t,) = fit_logistic_map(z, y, sample_weight, lower=np.array([0.0]), x0=np.array([1.0]))
        self.temperature_ = float(min(1.0 / max(inv_t, 1e-6), 1e6))

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        return expit(logit(y_prob) / self.temperature_)


class BetaCalibration(BaseCalibrator):
    """Beta calibration: ``expit(a * log(p) - b * log(1 - p) + c)`` with ``a, b >= 0``.

    Attributes
    ----------
    a_ : float
        Coefficient on ``log(p)``, non-negative.
    b_ : float
        Coefficient on ``-log(1 - p)``, non-negative.
    c_ : float
        Intercept in logit units.

    Notes
    -----
    The three-parameter family of Kull, Silva Filho and Flach (2017), eq. 4 (``m`` reparametrised into c).
    The paper fits an unconstrained logistic regression and refits without a feature whose coefficient is
    negative; bounding ``a, b >= 0`` in one L-BFGS-B fit reaches the same constrained maximum likelihood.
    Scores are clipped to ``[EPS, 1 - EPS]`` first. The map is non-decreasing, and strictly increasing when
    ``a + b > 0``.

    References
    ----------
    .. [1] Kull, Silva Filho, Flach, "Beta calibration: a well-founded and easily implemented improvement on
       logistic calibration for binary classifiers", AISTATS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> cal = BetaCalibration().fit(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 0, 1, 1]))
    >>> bool(cal.a_ >= 0 and cal.b_ >= 0)
    True
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("a_", "b_", "c_")

    def __init__(self) -> None:
        pass

    @staticmethod
    def _design(y_prob: NDArray[np.float64]) -> NDArray[np.float64]:
        p = np.clip(y_prob, EPS, 1.0 - EPS)
        return np.column_stack([np.log(p), -np.log1p(-p), np.ones_like(p)])

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        theta = fit_logistic_map(
            self._design(y_prob), y, sample_weight, lower=np.array([0.0, 0.0, -np.inf]), x0=np.array([1.0, 1.0, 0.0])
        )
        self.a_, self.b_, self.c_ = (float(t) for t in theta)

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        return expit(self._design(y_prob) @ np.array([self.a_, self.b_, self.c_]))

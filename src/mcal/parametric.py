"""Parametric calibrators on the logit: Platt, temperature, beta, Gaussian and Gamma scaling, and the identity.

Each is a logistic model on fixed transforms of the score, fitted by weighted maximum likelihood with
bounds or linear inequality constraints that keep the map increasing. The pure function
:func:`fit_logistic_map` holds the math; the estimators add validation and state.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import OptimizeResult, minimize
from scipy.special import expit

from mcal._base import BaseCalibrator
from mcal._persistence.state import Number
from mcal._validation import EPS, check_real, logit, warn


def fit_logistic_map(
    Z: NDArray[np.float64],
    y: NDArray[np.float64],
    sample_weight: NDArray[np.float64],
    *,
    lower: NDArray[np.float64],
    x0: NDArray[np.float64],
    constraints: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Minimise the weighted log loss of ``expit(Z @ theta)`` subject to ``theta >= lower`` and ``A @ theta >= 0``.

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
        Starting point; it must satisfy the constraints.
    constraints : ndarray of shape (n_constraints, n_params), default=None
        Matrix ``A`` of linear inequality constraints ``A @ theta >= 0`` (monotonicity conditions).

    Returns
    -------
    theta : ndarray of shape (n_params,)

    Raises
    ------
    ValueError
        If the loss is not finite where the optimiser stops (non-finite or overflowing ``Z @ theta``), which
        would otherwise return the starting point as if it were the fit.
    RuntimeError
        If the optimiser fails with non-finite parameters, carrying scipy's message.

    Warns
    -----
    CalibrationWarning
        If the optimiser reports that it did not converge (an iteration limit, a failed line search) with finite
        parameters, which are returned: scipy's message, as scikit-learn's ``ConvergenceWarning`` gives it for
        ``LogisticRegression``.

    Notes
    -----
    With ``constraints``, the bound-constrained optimum (L-BFGS-B) is returned when it satisfies them;
    otherwise the constrained optimum lies on their boundary and is found by SLSQP from ``x0``. The log
    loss is convex in ``theta``, so both reach the global constrained optimum.
    """
    w = sample_weight / sample_weight.sum()

    def loss_grad(theta: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        z = Z @ theta
        # -[y log s(z) + (1-y) log s(-z)] = log(1 + e^z) - y z, stable for large |z|; one transcendental pass
        loss = np.dot(w, np.logaddexp(0.0, z) - y * z)
        grad = Z.T @ (w * (expit(z) - y))
        return float(loss), grad

    bounds = [(lo if np.isfinite(lo) else None, None) for lo in lower]
    with np.errstate(invalid="ignore", over="ignore"):  # a non-finite loss is reported below
        res = minimize(
            loss_grad, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 1000, "gtol": 1e-10}
        )
    if not np.isfinite(res.fun):
        raise ValueError(
            f"the logistic calibration loss must be finite; got {res.fun} at theta = {res.x.tolist()} (the score "
            "transforms Z @ theta are not finite there)"
        )
    if not np.all(np.isfinite(res.x)) or constraints is None or np.all(constraints @ res.x >= 0.0):
        return _solution(res, "L-BFGS-B", "logistic calibration")  # its warning only where its result is returned
    res = minimize(
        loss_grad,
        x0,
        jac=True,
        method="SLSQP",
        bounds=bounds,
        constraints=[{"type": "ineq", "fun": lambda t: constraints @ t, "jac": lambda t: constraints}],
        options={"maxiter": 1000, "ftol": 1e-14},
    )
    return _into_constraints(_solution(res, "SLSQP", "constrained logistic calibration"), constraints)


def _solution(res: OptimizeResult, method: str, what: str) -> NDArray[np.float64]:
    """The parameters where a scipy optimiser stopped: an error where they are not finite, and a
    :class:`~mcal.CalibrationWarning` with scipy's message where it reports failure (it was silent)."""
    if not np.all(np.isfinite(res.x)):
        raise RuntimeError(f"the {what} fit failed: {res.message}")
    if not res.success:
        warn(f"the {what} fit did not converge: {method} stopped after {res.nit} iteration(s) with "
             f"{str(res.message).strip()!r}; its parameters there are returned")  # fmt: skip
    return res.x


def _into_constraints(theta: NDArray[np.float64], A: NDArray[np.float64], margin: float = 1e-10) -> NDArray[np.float64]:
    """Move ``theta`` the least distance so that ``A @ theta >= margin`` row by row.

    SLSQP meets its constraints only to its tolerance (about -1e-12 was seen with single-threaded BLAS), which
    lets a map that must be non-decreasing dip by rounding at the end of the range; a small positive margin
    makes the promise exact.
    """
    theta = theta.copy()
    for _ in range(3):
        for row in A:
            gap = margin - row @ theta
            if gap > 0:
                theta += gap / (row @ row) * row
    return theta


#: The rule of a fitted number that must be >= 0 (> 0 for the temperature) for the map to be non-decreasing.
_NON_DECREASING = Number(0, why=" (a non-decreasing map)")


class IdentityCalibration(BaseCalibrator):
    """The identity map: returns the scores unchanged, the baseline every calibrator must beat.

    It has no parameters; fitting records only the number of rows. :func:`mcal.select_calibrator` keeps it when
    no other method calibrates the held-out rows better by more than the noise, and a model file can hold it.

    Attributes
    ----------
    n_samples_fit_ : int
        Rows seen by :meth:`fit`.

    Examples
    --------
    >>> import numpy as np
    >>> cal = IdentityCalibration().fit(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 0, 1, 1]))
    >>> cal.predict(np.array([0.25, 0.75])).tolist()
    [0.25, 0.75]
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("n_samples_fit_",)
    _state_constraints: ClassVar[dict[str, Any]] = {"n_samples_fit_": Number()}

    def __init__(self) -> None:
        pass

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        self.n_samples_fit_ = int(y_prob.shape[0])

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        return y_prob.copy()


class PlattScaling(BaseCalibrator):
    """Platt scaling: ``expit(a * logit(p) + b)`` with ``a >= 0``.

    No hyperparameters: ``a`` and ``b`` are fitted.

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
    _state_constraints: ClassVar[dict[str, Any]] = {"slope_": _NON_DECREASING, "intercept_": Number()}

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
    _state_constraints: ClassVar[dict[str, Any]] = {
        "temperature_": Number(0, strict=True, why=" (a non-decreasing map)")
    }

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
    _state_constraints: ClassVar[dict[str, Any]] = {"a_": _NON_DECREASING, "b_": _NON_DECREASING, "c_": Number()}

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


class _LogitQuadraticFamily(BaseCalibrator):
    """Shared machinery of Gaussian and Gamma scaling: ``expit(a f1(s) + b f2(s) + c)`` on the logit ``s``.

    Subclasses define the two score transforms and their derivatives. Inside the calibration data's
    logit range the fitted map is used as is; outside it the calibrated logit continues along its tangent
    at the nearer end, so the map stays continuous and, when ``monotone``, non-decreasing everywhere.
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("a_", "b_", "c_", "score_min_", "score_max_")
    _state_constraints: ClassVar[dict[str, Any]] = dict.fromkeys(_state_attrs, Number())
    _parameter_constraints: ClassVar[dict] = {"monotone": "boolean"}

    def _transforms(self, s: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        raise NotImplementedError

    def _derivatives(self, s: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        raise NotImplementedError

    def _start(self) -> NDArray[np.float64]:
        raise NotImplementedError

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        s = logit(y_prob)
        seen = s[sample_weight > 0]
        self.score_min_, self.score_max_ = float(seen.min()), float(seen.max())
        f1, f2 = self._transforms(s)
        constraints = None
        if self.monotone:
            ends = np.array([self.score_min_, self.score_max_])
            d1, d2 = self._derivatives(ends)
            # d/ds (a f1 + b f2 + c) = a f1' + b f2' is monotone in s for both families, so >= 0 at both
            # ends of the calibration range makes it >= 0 on the whole range (Kweon et al. 2022).
            constraints = np.column_stack([d1, d2, np.zeros(2)])
        Z = np.column_stack([f1, f2, np.ones_like(s)])
        theta = fit_logistic_map(
            Z, y, sample_weight, lower=np.full(3, -np.inf), x0=self._start(), constraints=constraints
        )
        self.a_, self.b_, self.c_ = (float(t) for t in theta)

    def _logit_map(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        f1, f2 = self._transforms(s)
        return self.a_ * f1 + self.b_ * f2 + self.c_

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        s = logit(y_prob)
        lo, hi = self.score_min_, self.score_max_
        inside = np.clip(s, lo, hi)
        z = self._logit_map(inside)
        d1, d2 = self._derivatives(inside)
        # tangent continuation outside [lo, hi]; (s - inside) is zero inside the range
        z = z + (self.a_ * d1 + self.b_ * d2) * (s - inside)
        return expit(z)

    def _validate_state(self) -> None:
        if self.score_min_ > self.score_max_:
            raise ValueError("model data fields state.score_min_ and state.score_max_ must satisfy min <= max")
        if self.monotone:
            d1, d2 = self._derivatives(np.array([self.score_min_, self.score_max_]))
            slopes = self.a_ * d1 + self.b_ * d2
            # the fit meets the constraints with a margin of 1e-10; allow only rounding below zero
            if np.any(slopes < -1e-9):
                raise ValueError(
                    "model data fields state.a_, state.b_ must give a non-decreasing map (monotone=True): the "
                    f"calibrated logit's slope at the ends of the score range must be >= 0; got {slopes.tolist()}"
                )


class GaussianScaling(_LogitQuadraticFamily):
    """Gaussian scaling: ``expit(a s^2 + b s + c)`` on the logit ``s = logit(p)``.

    The exact posterior when the class-conditional distributions of ``s`` are Gaussian with unequal variances.

    Parameters
    ----------
    monotone : bool, default=True
        True or False. Constrain the map to be non-decreasing on the calibration data's logit range: ``2 a s + b >= 0`` at
        its two ends (linear constraints, enough because the derivative is linear in ``s``).

    Attributes
    ----------
    a_, b_, c_ : float
        Coefficients on ``s^2``, ``s`` and 1, in logit units.
    score_min_, score_max_ : float
        Logit range of the calibration scores; outside it the calibrated logit follows its tangent.

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters), invalid scores, labels or weights, or
        any ``X`` (as :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`), or a fit whose loss is not finite.
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters), or an input is not array-like.
    RuntimeError
        From :meth:`fit`: the optimiser fails with non-finite coefficients (carrying scipy's message).

    Warns
    -----
    CalibrationWarning
        From :meth:`fit`: the optimiser reports that it did not converge (carrying scipy's message).

    Notes
    -----
    If :math:`s \\mid y{=}k \\sim \\mathcal N(\\mu_k, \\sigma_k^2)` and :math:`P(y{=}1) = \\pi`, then
    :math:`\\log\\frac{P(y=1 \\mid s)}{P(y=0 \\mid s)} = a s^2 + b s + c` with
    :math:`a = \\frac{1}{2\\sigma_0^2} - \\frac{1}{2\\sigma_1^2}`, :math:`b = \\frac{\\mu_1}{\\sigma_1^2} -
    \\frac{\\mu_0}{\\sigma_0^2}` and :math:`c = \\log\\frac{\\pi \\sigma_0}{(1-\\pi)\\sigma_1} -
    \\frac{\\mu_1^2}{2\\sigma_1^2} + \\frac{\\mu_0^2}{2\\sigma_0^2}` (Kweon et al. 2022, section 4.1, Gaussian
    calibration). Fitted by weighted maximum likelihood (logistic regression on ``[s^2, s, 1]``) without the
    L2 penalty of scikit-learn's default that the authors' code uses for its unconstrained fit; the
    monotonicity constraints are the official code's (postech-di-lab/METIS, ``Utils/cal_method.py``, class
    ``Gaussian``: rows ``[2 s_min, 1]`` and ``[2 s_max, 1]`` times ``(a, b)`` must be ``>= 0``, solved there
    with ``clogistic`` and ECOS). That code applies the map to the ranking model's raw score; mcal takes
    ``s = logit(p)``, the same thing for a model whose probability is the sigmoid of its score, and uses the
    calibration data's logit range as ``[s_min, s_max]``. For the paper's unbiased risk on
    missing-not-at-random feedback, that code weights each positive by ``1 / max(sqrt(pop_i / max pop), clip)``
    (item popularity ``pop_i``) and each negative by 1; pass such weights as ``sample_weight``. Scores are
    clipped to ``[EPS, 1 - EPS]`` before the logit.

    References
    ----------
    .. [1] Kweon, Kang and Yu, "Obtaining Calibrated Probabilities with Personalized Ranking Models",
       AAAI 2022, arXiv:2112.07428.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 2000)
    >>> s = rng.normal(2.0 * y - 1.0, 1.0)          # equal variances: the map is linear in s
    >>> cal = GaussianScaling().fit(1 / (1 + np.exp(-s)), y)
    >>> abs(cal.a_) < 0.1 and abs(cal.b_ - 2.0) < 0.3
    True
    """

    def __init__(self, *, monotone: bool = True) -> None:
        self.monotone = monotone

    def _transforms(self, s):
        return s * s, s

    def _derivatives(self, s):
        return 2.0 * s, np.ones_like(s)

    def _start(self):
        return np.array([0.0, 1.0, 0.0])


#: Largest ``GammaScaling.shift``, in logit units (about three times the span of clipped logits, 2 logit(1 - EPS)).
_MAX_SHIFT = 100.0


def _check_shift(name: str, value: object) -> None:
    """The rule of GammaScaling's ``shift``: a positive number of logit units, at most :data:`_MAX_SHIFT`."""
    if check_real(name, value, "a positive finite number", lambda v: v > 0) > _MAX_SHIFT:
        raise ValueError(
            f"{name} must be at most {_MAX_SHIFT:g} logit units (beyond, log(u) is nearly linear in u over the "
            f"scores and the fit degenerates); got {value!r}"
        )


class GammaScaling(_LogitQuadraticFamily):
    """Gamma scaling: ``expit(a log(u) + b u + c)`` with ``u = s - s0`` and ``s0 = min(s) - shift``.

    The exact posterior when the class-conditional distributions of the shifted logit ``u`` are Gamma.

    Parameters
    ----------
    shift : float, default=1.0
        In (0, 100]. Distance in logit units between the smallest calibration logit and the origin ``s0`` of ``u``; it
        keeps ``log(u)`` finite. At most 100: the calibration logits span at most about 32 (scores are clipped
        to ``[EPS, 1 - EPS]``), so a larger shift makes ``log(u)`` nearly linear in ``u`` on them and the fit
        degenerate (from ``shift`` = 300 it was seen to stall near its identity starting point).
    monotone : bool, default=True
        True or False. Constrain the map to be non-decreasing on the calibration range: ``a / u + b >= 0`` at
        ``u = shift`` and ``u = max(s) - s0`` (enough because ``a / u + b`` is monotone in ``u``).

    Attributes
    ----------
    a_, b_, c_ : float
        Coefficients on ``log(u)``, ``u`` and 1, in logit units.
    score_min_, score_max_ : float
        Logit range of the calibration scores (``s0 = score_min_ - shift``); outside it the calibrated
        logit follows its tangent, so scores below ``s0`` are handled.

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters), invalid scores, labels or weights, or
        any ``X`` (as :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`), or a fit whose loss is not finite.
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters), or an input is not array-like.
    RuntimeError
        From :meth:`fit`: the optimiser fails with non-finite coefficients (carrying scipy's message).

    Warns
    -----
    CalibrationWarning
        From :meth:`fit`: the optimiser reports that it did not converge (carrying scipy's message).

    Notes
    -----
    If :math:`u \\mid y{=}k \\sim \\mathrm{Gamma}(\\kappa_k, \\theta_k)` then the log-odds are
    :math:`(\\kappa_1 - \\kappa_0)\\log u - (1/\\theta_1 - 1/\\theta_0) u + c` (Kweon et al. 2022, section 4.1,
    Gamma calibration). The monotonicity condition is the derivative of the calibrated logit in ``u``,
    ``a/u + b``, at both ends of the range, as in the authors' official code (postech-di-lab/METIS,
    ``Utils/cal_method.py``, class ``Gamma``: rows ``[1 / shift, 1]`` and ``[1 / (s_max - s0), 1]`` times
    ``(a, b)`` must be ``>= 0``, with ``s0 = s_min - shift``); the re-implementation in UMC reuses the
    Gaussian rows ``2 a u + b``, which is not this condition. Deviation: that code evaluates ``log(s - s0)``
    for every score, which is undefined below ``s0``; the tangent continuation outside the calibration range
    is mcal's. Sample weights as for :class:`GaussianScaling`.

    References
    ----------
    .. [1] Kweon, Kang and Yu, "Obtaining Calibrated Probabilities with Personalized Ranking Models",
       AAAI 2022, arXiv:2112.07428.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 2000)
    >>> s = rng.gamma(2.0 + y, 1.0) - 3.0
    >>> cal = GammaScaling().fit(1 / (1 + np.exp(-s)), y)
    >>> bool(np.all(np.diff(cal.predict(np.linspace(0.01, 0.99, 50))) >= 0))
    True
    """

    _parameter_constraints: ClassVar[dict] = {**_LogitQuadraticFamily._parameter_constraints, "shift": _check_shift}

    def __init__(self, *, shift: float = 1.0, monotone: bool = True) -> None:
        self.shift = shift
        self.monotone = monotone

    def _origin(self) -> float:
        return self.score_min_ - float(self.shift)

    def _shifted(self, s: NDArray[np.float64]) -> NDArray[np.float64]:
        # u = s - s0, computed so that u >= shift > 0 on the range even when shift is below the rounding of s0
        return (s - self.score_min_) + float(self.shift)

    def _transforms(self, s):
        u = self._shifted(s)
        return np.log(u), u

    def _derivatives(self, s):
        u = self._shifted(s)
        return 1.0 / u, np.ones_like(u)

    def _start(self):
        return np.array([0.0, 1.0, self._origin()])

"""The losses of MCGrad's rounds: the link between a prediction and the boosted score ``F``, LightGBM's objective,
and the per-block sums of the loss and its derivatives in the rescaling factor (:func:`mcal.mcgrad.engine.rescale_factor`).

``LogLoss`` serves MCGrad (the log loss on logits); ``SquaredError`` and ``TweedieLoss`` serve RegressionMCGrad.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, logit, xlogy

from mcal._validation import logit as _clipped_logit

#: ``|z|`` bound inside the rescaling objective, so that a few extreme logits cannot drive theta (as in the
#: reference implementation, mcgrad 0.1.5 ``MCGrad.UNSHRINK_LOGIT_EPSILON``).
LOGIT_CLIP = 10.0
#: Up to this logit, ``logit(expit(z))`` recovers ``z`` to about 1e-9; training rows above are predicted again.
_EXACT_LOGIT = 16.0
#: Bounds of the rescaling factor theta (as in the reference implementation).
THETA_BOUNDS = (1e-8, 50.0)


def wsum(w: NDArray[np.float64], x: NDArray[np.float64]) -> float:
    """``sum w * x``. einsum rather than np.dot: a multi-threaded BLAS dot on a busy machine costs up to 1000x more.

    Unit weights held as one broadcast number are expanded for the sum (a transient of the block's size): einsum
    adds in another order over a stride-0 operand, which would move the result in its last bit.
    """
    return float(np.einsum("i,i->", np.ascontiguousarray(w), x))


class RoundLoss(Protocol):
    """What the round loop needs of a loss (:class:`LogLoss`, :class:`SquaredError`, :class:`TweedieLoss`, and the
    softmax loss of :mod:`mcal.multiclass`): the engines' ``objective``, checked by mypy where one is passed."""

    #: Bounds of the rescaling factor theta.
    theta_bounds: tuple[float, float]
    #: Whether one Newton step from theta = 1 is the exact rescaling factor (a loss quadratic in theta).
    closed_form: bool
    #: Scores from which :meth:`raw_from_output` no longer recovers ``F + h`` to about 1e-9.
    exact_below: float

    def loss(self, y: Any, F: Any) -> Any:
        """Loss of each row."""
        ...

    def raw_from_output(self, output: NDArray[np.float64]) -> NDArray[np.float64]:
        """``F + h`` from LightGBM's transformed training output."""
        ...

    def block_sums(self, theta: float, y: Any, z: Any, w: Any) -> Any:
        """Weighted sums of the loss of ``theta * z`` and of its first two derivatives in ``theta``."""
        ...


class LogLoss:
    """The binary log loss on the logit scale: MCGrad's loss (LightGBM's cross-entropy objective).

    Every loss of the rounds has the attributes and methods below; the numeric ones take clean float64 blocks.
    """

    #: LightGBM's objective parameters, and the ``objective=`` line of its model text.
    lightgbm_params: dict[str, Any] = {"objective": "cross_entropy"}  # noqa: RUF012 (TweedieLoss sets its own)
    model_objective = "cross_entropy"
    #: ``|z|`` bound inside the rescaling objective, and the bounds of theta.
    clip: float = LOGIT_CLIP
    theta_bounds: tuple[float, float] = THETA_BOUNDS
    #: One Newton step from theta = 1 is the exact rescaling factor (a loss quadratic in theta).
    closed_form = False
    #: Scores from which :meth:`raw_from_output` no longer recovers ``F + h`` to about 1e-9.
    exact_below = _EXACT_LOGIT

    def link(self, y_pred: NDArray[np.float64]) -> NDArray[np.float64]:
        """The score ``F_0`` of a prediction (the clipped logit)."""
        return _clipped_logit(y_pred)

    def inverse_link(self, F: NDArray[np.float64]) -> NDArray[np.float64]:
        """The prediction of a score."""
        return expit(F)

    def raw_from_output(self, output: NDArray[np.float64]) -> NDArray[np.float64]:
        """``F + h`` from LightGBM's transformed training output (in place)."""
        with np.errstate(divide="ignore"):
            return logit(output, out=output)

    def loss(self, y: NDArray[np.float64], F: NDArray[np.float64]) -> NDArray[np.float64]:
        """Loss of each row (non-negative on 0/1 labels)."""
        return np.logaddexp(0.0, F) - y * F

    def block_sums(self, theta: float, y: NDArray, z: NDArray, w: NDArray) -> tuple[float, float, float]:
        """Weighted sums of the loss of ``theta * clip(z, ±clip)`` and of its first two derivatives in ``theta``."""
        z = np.clip(z, -self.clip, self.clip)
        a = theta * z
        p = expit(a)
        return (
            wsum(w, np.logaddexp(0.0, a)) - theta * wsum(w, y * z),
            wsum(w, (p - y) * z),
            wsum(w, p * (1.0 - p) * z * z),
        )


class SquaredError(LogLoss):
    """The squared error on the prediction itself (identity link): LightGBM's ``regression`` objective.

    The rescaling factor minimises ``sum w (y - theta z)^2``: ``theta = sum w z y / sum w z^2``, unbounded, as
    the reference implementation's least-squares fit without intercept (mcgrad 0.1.5 ``RegressionMCGrad``).
    """

    lightgbm_params: dict[str, Any] = {"objective": "regression"}  # noqa: RUF012 (TweedieLoss sets its own)
    model_objective = "regression"
    theta_bounds = (-np.inf, np.inf)
    closed_form = True
    exact_below = np.inf

    def link(self, y_pred: NDArray[np.float64]) -> NDArray[np.float64]:
        return y_pred

    def inverse_link(self, F: NDArray[np.float64]) -> NDArray[np.float64]:
        return F

    def raw_from_output(self, output: NDArray[np.float64]) -> NDArray[np.float64]:
        return output

    def loss(self, y: NDArray[np.float64], F: NDArray[np.float64]) -> NDArray[np.float64]:
        return (y - F) ** 2

    def block_sums(self, theta: float, y: NDArray, z: NDArray, w: NDArray) -> tuple[float, float, float]:
        r = theta * z - y
        return wsum(w, r * r), 2.0 * wsum(w, r * z), 2.0 * wsum(w, z * z)


class TweedieLoss(LogLoss):
    """The Tweedie deviance of power ``p`` in [1, 2) on the log of the prediction; ``p = 1`` is Poisson.

    LightGBM's ``poisson`` (``p = 1``) or ``tweedie`` objective; the score is ``F = log(mean)``. The rescaling
    minimises the negative log-likelihood ``exp((2-p) a)/(2-p) - y exp((1-p) a)/(1-p)`` (``exp(a) - y a`` for
    ``p = 1``) of ``a = theta z``, convex in theta for ``y >= 0``, within :data:`THETA_BOUNDS`; the validation
    loss is the unit deviance, which differs from it by a term of ``y`` alone.
    """

    exact_below = np.inf

    def __init__(self, power: float) -> None:
        self.power = float(power)
        self.lightgbm_params = (
            {"objective": "poisson"}
            if self.power == 1.0
            else {"objective": "tweedie", "tweedie_variance_power": self.power}
        )
        self.model_objective = "poisson" if self.power == 1.0 else "tweedie"

    def link(self, y_pred: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.log(y_pred)

    def inverse_link(self, F: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.exp(F)

    def raw_from_output(self, output: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore"):
            return np.log(output, out=output)

    def loss(self, y: NDArray[np.float64], F: NDArray[np.float64]) -> NDArray[np.float64]:
        p, mu = self.power, np.exp(F)
        if p == 1.0:
            return 2.0 * (xlogy(y, y) - y * F - y + mu)
        return 2.0 * (y ** (2 - p) / ((1 - p) * (2 - p)) - y * np.exp((1 - p) * F) / (1 - p) + mu ** (2 - p) / (2 - p))

    def block_sums(self, theta: float, y: NDArray, z: NDArray, w: NDArray) -> tuple[float, float, float]:
        p, a = self.power, theta * z
        with np.errstate(over="ignore"):  # a theta far out gives inf, which the Newton step's halving rejects
            if p == 1.0:
                mu = np.exp(a)
                return wsum(w, mu - y * a), wsum(w, (mu - y) * z), wsum(w, mu * z * z)
            hi, lo = np.exp((2 - p) * a), y * np.exp((1 - p) * a)
            return (
                wsum(w, hi / (2 - p) - lo / (1 - p)),
                wsum(w, (hi - lo) * z),
                wsum(w, ((2 - p) * hi - (1 - p) * lo) * z * z),
            )


#: MCGrad's loss.
LOG_LOSS = LogLoss()


def gain_sums(
    objective: RoundLoss,
    y: NDArray[np.float64],
    F_best: NDArray[np.float64],
    F: NDArray[np.float64],
    w: NDArray[np.float64],
) -> NDArray[np.float64]:
    """The sums behind a round's validation gain and its standard error (:func:`gain_exceeds`).

    With ``g_i = loss(F_best_i) - loss(F_i)`` per row: ``[sum w, sum w g, sum w^2, sum w^2 g, sum w^2 g^2]``.
    """
    with np.errstate(invalid="ignore", over="ignore"):  # a diverged F gives NaN or inf, which boost_rounds reports
        g = objective.loss(y, F_best) - objective.loss(y, F)
    w2 = w * w
    return np.array([w.sum(), wsum(w, g), w2.sum(), wsum(w2, g), wsum(w2, g * g)])


def gain_exceeds(sums: list[NDArray[np.float64]], min_gain_se: float) -> bool:
    """Whether the weighted mean per-row gain, from the :func:`gain_sums` of each part, exceeds ``min_gain_se``
    standard errors of it.

    The gain is ``sum w g / sum w``; its standard error treats the rows as independent draws with sampling
    weights, ``sqrt(sum w^2 (g - gain)^2) / sum w`` (rows weighted as in ECCE's sigma, ``mcal.metrics.ecce_std``).
    """
    total_w, wg, w2, w2g, w2g2 = (float(s) for s in np.sum(sums, axis=0))
    gain = wg / total_w
    se = np.sqrt(max(w2g2 - 2.0 * gain * w2g + gain * gain * w2, 0.0)) / total_w
    return bool(gain > min_gain_se * se)

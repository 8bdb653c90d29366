"""Linear maps of the logits for k classes: temperature, vector and matrix scaling, and Dirichlet calibration.

Every map is ``softmax(z @ W.T + b)`` for a constrained ``(W, b)``, fitted by weighted maximum likelihood with
L-BFGS-B from the identity (``W = I``, ``b = 0``), so that the fit starts from the uncalibrated model.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

from mcal._constraints import NON_NEGATIVE
from mcal._persistence.state import Array
from mcal.multiclass._base import MulticlassCalibrator

#: Bounds of the inverse temperature 1/T (T between 1e-4 and 1e4).
_INV_T_BOUNDS = (1e-4, 1e4)


def _nll_grad(u: NDArray[np.float64], y: NDArray[np.intp], w: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """Weighted mean negative log-likelihood of ``softmax(u)`` and its gradient in ``u`` (shape (n, k))."""
    logq = log_softmax(u, axis=1)
    rows = np.arange(y.size)
    total = w.sum()
    loss = -float(w @ logq[rows, y]) / total
    g = np.exp(logq)
    g[rows, y] -= 1.0
    return loss, g * (w / total)[:, None]


class _LinearScaling(MulticlassCalibrator):
    """``softmax(z @ W.T + b)``; subclasses say which entries of ``(W, b)`` are free (``_pack``/``_unpack``)."""

    _state_attrs: ClassVar[tuple[str, ...]] = ("coef_", "intercept_", "classes_", "n_classes_")
    _state_constraints: ClassVar[dict[str, Any]] = {
        **MulticlassCalibrator._state_constraints,
        "coef_": Array(ndim=2),
        "intercept_": Array(),
    }

    def _x0(self, k: int) -> NDArray[np.float64]:
        raise NotImplementedError

    def _unpack(self, theta: NDArray[np.float64], k: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        raise NotImplementedError

    def _grad(self, G: NDArray[np.float64], z: NDArray[np.float64], theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """Gradient in ``theta`` of the loss, given ``G`` = its gradient in the output logits."""
        raise NotImplementedError

    def _penalty(self, theta: NDArray[np.float64], k: int) -> tuple[float, NDArray[np.float64]]:
        return 0.0, np.zeros_like(theta)

    def _bounds(self, k: int) -> list[tuple[float | None, float | None]] | None:
        return None

    def _fit(self, z, y, sample_weight, X) -> None:
        k = z.shape[1]

        def objective(theta: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
            W, b = self._unpack(theta, k)
            loss, G = _nll_grad(z @ W.T + b, y, sample_weight)
            pen, dpen = self._penalty(theta, k)
            return loss + pen, self._grad(G, z, theta) + dpen

        res = minimize(objective, self._x0(k), jac=True, method="L-BFGS-B", bounds=self._bounds(k),
                       options={"maxiter": 1000, "ftol": 1e-12, "gtol": 1e-9})  # fmt: skip
        W, b = self._unpack(res.x, k)
        self.coef_, self.intercept_ = W, b

    def _predict(self, z, X) -> NDArray[np.float64]:
        return softmax(z @ self.coef_.T + self.intercept_, axis=1)

    def _validate_state(self) -> None:
        k = self.n_classes_
        if self.coef_.shape != (k, k) or self.intercept_.shape != (k,) or self.classes_.shape != (k,):
            raise ValueError(f"model data fields state.coef_/intercept_/classes_ must have shapes ({k}, {k}), ({k},)")


class MulticlassTemperatureScaling(_LinearScaling):
    """Temperature scaling for k classes: ``softmax(z / T)`` with one ``T > 0`` (Guo et al. 2017, section 4.2).

    Parameters
    ----------
    input : {"probability", "logit"}, default="probability"
        What ``y_prob`` holds: probabilities (their log is the logit up to a per-row constant, which the softmax
        ignores) or logits.

    Attributes
    ----------
    temperature_ : float
        T, in [1e-4, 1e4]; above 1 softens over-confident scores. ``T = 1`` is the identity.
    coef_ : ndarray of shape (n_classes, n_classes)
        ``I / T``.
    intercept_ : ndarray of shape (n_classes,)
        Zeros.
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int

    References
    ----------
    .. [1] Guo, Pleiss, Sun, Weinberger, "On calibration of modern neural networks", ICML 2017.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.7, 0.2, 0.1]])
    >>> cal = MulticlassTemperatureScaling().fit(p, [0, 1, 0, 1])
    >>> bool(cal.temperature_ > 1)
    True
    """

    def __init__(self, *, input: str = "probability") -> None:
        self.input = input

    @property
    def temperature_(self) -> float:
        """The fitted temperature T > 0 (the logits are divided by it)."""
        self._check_fitted()
        return float(1.0 / self.coef_[0, 0])

    def _x0(self, k: int) -> NDArray[np.float64]:
        return np.ones(1)

    def _bounds(self, k: int) -> list[tuple[float | None, float | None]]:
        return [_INV_T_BOUNDS]

    def _unpack(self, theta, k):
        return theta[0] * np.eye(k), np.zeros(k)

    def _grad(self, G, z, theta):
        return np.array([float(np.einsum("ij,ij->", G, z))])


class VectorScaling(_LinearScaling):
    """Vector scaling: ``softmax(a * z + b)`` with a scale and an intercept per class (Guo et al. 2017, sec. 4.2).

    Parameters
    ----------
    input : {"probability", "logit"}, default="probability"
        What ``y_prob`` holds; logits are scaled as given.
    reg_intercept : float >= 0, default=0.0
        Weight of the intercept penalty ``reg_intercept / k * sum(b ** 2)`` added to the mean log loss.

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_classes)
        ``diag(a)``.
    intercept_ : ndarray of shape (n_classes,)
        ``b``.
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    """

    def __init__(self, *, input: str = "probability", reg_intercept: float = 0.0) -> None:
        self.input = input
        self.reg_intercept = reg_intercept

    _raw_logits: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **MulticlassCalibrator._parameter_constraints,
        "reg_intercept": NON_NEGATIVE,
    }

    def _x0(self, k):
        return np.concatenate([np.ones(k), np.zeros(k)])

    def _unpack(self, theta, k):
        return np.diag(theta[:k]), theta[k:]

    def _grad(self, G, z, theta):
        return np.concatenate([(G * z).sum(axis=0), G.sum(axis=0)])

    def _penalty(self, theta, k):
        b = theta[k:]
        lam = self.reg_intercept / k
        return lam * float(b @ b), np.concatenate([np.zeros(k), 2.0 * lam * b])


class MatrixScaling(_LinearScaling):
    """Matrix scaling with off-diagonal and intercept regularization (ODIR; Kull et al. 2019, section 4).

    ``softmax(z @ W.T + b)`` with a full ``W``; the mean log loss is penalized by
    ``reg_off_diagonal / (k (k - 1)) * sum_{i != j} W_ij ** 2 + reg_intercept / k * sum(b ** 2)``, which keeps
    the map near vector scaling unless the data ask for more.

    Parameters
    ----------
    input : {"probability", "logit"}, default="probability"
        What ``y_prob`` holds; logits are mapped as given, probabilities through their log.
    reg_off_diagonal : float >= 0, default=1e-3
        Weight of the off-diagonal penalty (λ of Kull et al.).
    reg_intercept : float >= 0, default=1e-3
        Weight of the intercept penalty (μ of Kull et al.).

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_classes)
        ``W``.
    intercept_ : ndarray of shape (n_classes,)
        ``b``.
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int

    References
    ----------
    .. [1] Kull, Perello-Nieto, Kängsepp, Silva Filho, Song, Flach, "Beyond temperature scaling: obtaining
       well-calibrated multiclass probabilities with Dirichlet calibration", NeurIPS 2019.
    """

    _raw_logits: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **MulticlassCalibrator._parameter_constraints,
        "reg_off_diagonal": NON_NEGATIVE,
        "reg_intercept": NON_NEGATIVE,
    }

    def __init__(
        self, *, input: str = "probability", reg_off_diagonal: float = 1e-3, reg_intercept: float = 1e-3
    ) -> None:
        self.input = input
        self.reg_off_diagonal = reg_off_diagonal
        self.reg_intercept = reg_intercept

    def _x0(self, k):
        return np.concatenate([np.eye(k).ravel(), np.zeros(k)])

    def _unpack(self, theta, k):
        return theta[: k * k].reshape(k, k), theta[k * k :]

    def _grad(self, G, z, theta):
        return np.concatenate([(G.T @ z).ravel(), G.sum(axis=0)])

    def _penalty(self, theta, k):
        W, b = self._unpack(theta, k)
        off = W * (1.0 - np.eye(k))
        lam, mu = self.reg_off_diagonal / (k * (k - 1)), self.reg_intercept / k
        pen = lam * float((off**2).sum()) + mu * float(b @ b)
        return pen, np.concatenate([(2.0 * lam * off).ravel(), 2.0 * mu * b])


class DirichletCalibration(MatrixScaling):
    """Dirichlet calibration (Kull et al. 2019): matrix scaling of the log-probabilities, with ODIR.

    ``softmax(log(p) @ W.T + b)``: the model's probabilities are read as a sample of a Dirichlet distribution per
    class, whose log-likelihood ratio is linear in ``log p``. With ``input="logit"`` the log-probabilities are
    ``log_softmax`` of the logits; with probabilities this is :class:`MatrixScaling` of their log.

    Parameters
    ----------
    input : {"probability", "logit"}, default="probability"
        What ``y_prob`` holds.
    reg_off_diagonal : float >= 0, default=1e-3
        Weight of the off-diagonal penalty (λ of Kull et al., eq. 8).
    reg_intercept : float >= 0, default=1e-3
        Weight of the intercept penalty (μ of Kull et al., eq. 8).

    Attributes
    ----------
    coef_ : ndarray of shape (n_classes, n_classes)
    intercept_ : ndarray of shape (n_classes,)
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int

    References
    ----------
    .. [1] Kull, Perello-Nieto, Kängsepp, Silva Filho, Song, Flach, "Beyond temperature scaling: obtaining
       well-calibrated multiclass probabilities with Dirichlet calibration", NeurIPS 2019.
    """

    _raw_logits: ClassVar[bool] = False

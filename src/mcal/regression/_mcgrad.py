"""RegressionMCGrad: MCGrad's recursive boosting for a real-valued prediction (squared error, Poisson, Tweedie)."""

from __future__ import annotations

import inspect
import numbers
from typing import Any, ClassVar

from mcal._constraints import Interval, StrOptions
from mcal._lightgbm import LightGBMParams
from mcal.mcgrad import MCGrad
from mcal.mcgrad.engine import LogLoss, SquaredError, TweedieLoss
from mcal.regression._base import RegressionCalibrator

#: The losses of ``loss=``.
_LOSSES = ("squared_error", "poisson", "tweedie")
#: The defaults that differ from MCGrad's: LightGBM's own, as the reference's RegressionMCGrad (mcgrad 0.1.5) sets
#: them; measured in benchmarks/results/regression_vs_reference.md against MCGrad's paper defaults.
_DEFAULTS = {
    "learning_rate": 0.1,
    "max_depth": -1,
    "min_child_samples": 20,
    "n_estimators": 100,
    "max_leaves": 31,
    "l2_regularization": 0.0,
    "min_gain_to_split": 0.0,
    "rescale_input": False,
}


class RegressionMCGrad(RegressionCalibrator, MCGrad):  # type: ignore[misc]  # fit(y_pred, ...) names its input
    """MCGrad for a real-valued prediction: multicalibration of means by recursive gradient boosting.

    The rounds of :class:`mcal.MCGrad` (Algorithm 1 of [1]_) with the log loss replaced by a loss for real
    outcomes. Starting from ``F_0 = g(y_pred)`` (``g`` the loss's link), each round fits a LightGBM booster
    ``h_t`` on the features plus ``F_{t-1}`` as one more feature with ``F_{t-1}`` as init score, then rescales
    ``F_t = theta_t (F_{t-1} + h_t)`` with the ``theta_t`` that minimises the weighted loss; ``T`` is chosen by
    early stopping on held-out data and refitted on all rows, and ``predict`` returns ``g^{-1}(F_T)``. This is
    the reference implementation's ``RegressionMCGrad`` (mcgrad 0.1.5), whose rescaling is a least-squares fit
    without intercept, with MCGrad's engine, parameters and defaults.

    Parameters
    ----------
    loss : {"squared_error", "poisson", "tweedie"}, default="squared_error"
        ``"squared_error"``: identity link, any finite outcome and prediction; the rescaling factor is the closed
        form ``sum w z y / sum w z^2`` (unbounded, as the reference's). ``"poisson"``: log link, for counts or
        rates: outcomes must be non-negative and predictions positive, and the model corrects the log of the
        mean (multiplicative corrections); ``"tweedie"``: the same with the Tweedie deviance of power
        ``tweedie_power``, for non-negative amounts with a mass at 0 (compound Poisson-gamma). For the log
        links the rounds fit LightGBM's ``poisson`` or ``tweedie`` objective, the factor is found by Newton
        steps within [1e-8, 50] (MCGrad's bounds), and the validation loss is the mean deviance. The labels
        are assumed to have the variance function ``mu^p`` (``p = 1`` Poisson), which changes only how rows are
        weighted in the fit: the mean is estimated consistently whatever the true variance.
    tweedie_power : float in [1, 2), default=1.5
        Variance power of ``loss="tweedie"`` (1 is Poisson); ignored by the other losses.
    max_rounds, early_stopping, validation_fraction, n_folds, patience, min_gain_se, early_stopping_metric, max_time, rescale, \
rescale_input, learning_rate, max_depth, min_child_samples, n_estimators, max_leaves, l2_regularization, \
min_gain_to_split, min_sum_hessian_in_leaf, lightgbm_params, categorical_features, n_jobs, progress, random_state
        As in :class:`mcal.MCGrad` (``early_stopping_metric="log_loss"`` stands for the loss of the rounds;
        ``rescale_input`` defaults to False, as the reference has no such step), with the defaults of the reference's ``RegressionMCGrad`` for the boosters
        (LightGBM's own): learning_rate 0.1, max_depth -1 (no limit), min_child_samples 20, n_estimators 100,
        max_leaves 31, l2_regularization 0 and min_gain_to_split 0, and MCGrad's for the rest (holdout early
        stopping); against MCGrad's paper defaults: ``benchmarks/results/regression_vs_reference_paper_defaults.md``.
        Splits are not
        stratified unless the outcomes are all 0 or 1. ``min_sum_hessian_in_leaf`` is in units of weight for the squared error (its Hessian
        is the weight). ``lightgbm_params`` must not set ``tweedie_variance_power`` (use ``tweedie_power``).

    Attributes
    ----------
    n_rounds_ : int
        Number of rounds ``T`` (0: the model is the identity).
    rescale_factors_ : ndarray of shape (n_rounds,)
        ``theta_t`` of each round of the refit.
    validation_losses_ : ndarray of shape (n_evaluated,)
        Weighted mean validation loss (squared error, or deviance) after each evaluated round, index 0 the
        input; empty without early stopping.
    feature_importances_ : ndarray of shape (n_features + 1,)
        Total split gain of each feature over all rounds; the last entry is the score ``F_{t-1}``.
    boosters_ : list of lightgbm.Booster
        The booster of each round.
    n_features_in_ : int
        Number of features seen at fit.
    feature_names_in_ : list of str or None
        Feature names seen at fit (DataFrame input).

    Raises
    ------
    ValueError
        From :meth:`fit`: as :class:`mcal.MCGrad`, with the rules of the outcomes instead of labels: NaN or
        infinite ``y_pred`` or ``y`` (named), ``y`` with fewer than two distinct values of positive weight, and
        for the log links ``y_pred <= 0`` or ``y < 0``.
    TypeError
        As :class:`mcal.MCGrad`.
    ImportError
        If LightGBM is not installed (``pip install "mcal[mcgrad]"``).

    See Also
    --------
    mcal.dask.DaskRegressionMCGrad : the same rounds on a Dask cluster; its fitted model is a RegressionMCGrad.

    Notes
    -----
    Round ``t``, with ``L`` the loss on the link scale (``L(F, y) = (y - F)^2`` for the squared error):

    .. math::

        h_t = \\mathrm{GBDT}\\big(\\{((x_i, F_{t-1}(x_i)), y_i)\\}\\big), \\quad
        \\theta_t = \\arg\\min_\\theta \\sum_i w_i L\\big(\\theta (F_{t-1} + h_t)(x_i), y_i\\big), \\quad
        F_t = \\theta_t (F_{t-1} + h_t).

    Weight k equals k copies in the rescaling and the validation loss; LightGBM counts rows (as for
    :class:`mcal.MCGrad`). ``X=None`` fits on the prediction alone.

    References
    ----------
    .. [1] N. Tax et al., "MCGrad: Multicalibration at Web Scale", KDD 2026. arXiv:2509.19884.
    .. [2] mcgrad 0.1.5, ``mcgrad.methods.RegressionMCGrad`` (https://github.com/facebookincubator/MCGrad).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"group": rng.choice(["a", "b"], 4000)})
    >>> y = np.where(X["group"] == "a", 1.0, 3.0) + rng.normal(size=4000)
    >>> y_pred = np.full(4000, 2.0)
    >>> model = RegressionMCGrad(min_child_samples=20, n_jobs=1, random_state=0).fit(y_pred, y, X=X)
    >>> fitted = model.predict(y_pred, X=X)
    >>> bool(abs(fitted[X["group"] == "a"].mean() - 1.0) < 0.1)
    True
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "loss": StrOptions(*_LOSSES),
        "tweedie_power": Interval(numbers.Real, 1, 2, closed="left"),
        **MCGrad._parameter_constraints,
        # the LightGBM parameter that loss and tweedie_power set
        "lightgbm_params": LightGBMParams(
            reserved={"tweedie_variance_power": "tweedie_power"}, reserved_by="RegressionMCGrad"
        ),
    }

    def __init__(self, *, loss: str = "squared_error", tweedie_power: float = 1.5, **mcgrad_params: Any) -> None:
        # MCGrad's parameters are forwarded (it rejects unknown names); the signature that scikit-learn's get_params
        # reads is spelled out below the class, from MCGrad's, so the two cannot drift apart.
        super().__init__(**{**_DEFAULTS, **mcgrad_params})
        self.loss = loss
        self.tweedie_power = tweedie_power

    def _loss(self) -> LogLoss:
        if self.loss == "squared_error":
            return SquaredError()
        return TweedieLoss(1.0 if self.loss == "poisson" else float(self.tweedie_power))

    def _bounds(self) -> tuple[float | None, float | None, bool]:
        return (None, None, False) if self.loss == "squared_error" else (0.0, 0.0, True)


def _signature() -> inspect.Signature:
    """MCGrad's ``__init__`` signature with ``loss`` and ``tweedie_power`` in front of its keyword parameters, and
    the defaults of :data:`_DEFAULTS`."""
    base = inspect.signature(MCGrad.__init__)
    self_param, *params = base.parameters.values()
    params = [p.replace(default=_DEFAULTS[p.name]) if p.name in _DEFAULTS else p for p in params]
    extra = [
        inspect.Parameter("loss", inspect.Parameter.KEYWORD_ONLY, default="squared_error", annotation="str"),
        inspect.Parameter("tweedie_power", inspect.Parameter.KEYWORD_ONLY, default=1.5, annotation="float"),
    ]
    return base.replace(parameters=[self_param, *extra, *params])


RegressionMCGrad.__init__.__signature__ = _signature()  # type: ignore[attr-defined]  # read by inspect, get_params

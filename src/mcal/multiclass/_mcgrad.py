"""MCGrad for k classes: Algorithm 1 of Tax et al. (2025) with a softmax objective, on MCGrad's round loop."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy.special import log_softmax, softmax

from mcal._constraints import NON_NEGATIVE_INT, OPEN_UNIT, StrOptions
from mcal._features.categorical import check_categorical_features
from mcal._features.encoder import FeatureEncoder
from mcal._lightgbm import (
    LightGBMParams,
    booster_from_text,
    lightgbm_errors_name_lightgbm_params,
    lightgbm_threads,
    round_params,
    tree_constraints,
)
from mcal._persistence import refuse_legacy_state
from mcal._persistence.state import Array, Number, NumberOr
from mcal._validation import warn
from mcal.mcgrad.engine import Engine, LocalEngine, Part, Rescaling, Stopping, boost_rounds, rescale_factor, split_parts
from mcal.mcgrad.losses import THETA_BOUNDS
from mcal.multiclass._base import MulticlassCalibrator


class SoftmaxLoss:
    """The multiclass log loss of logits ``F`` of shape (n, k) against label codes, for the round loop."""

    theta_bounds = THETA_BOUNDS
    closed_form = False
    #: Every finite ``raw_from_output`` is exact to about 1e-15 (rows with a probability below the smallest
    #: normal float are NaN, and predicted again).
    exact_below = np.inf

    def loss(self, y: NDArray[np.intp], F: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per-row ``-log softmax(F)[y]``."""
        return -log_softmax(F, axis=1)[np.arange(y.size), y]

    def raw_from_output(self, output: NDArray[np.float64]) -> NDArray[np.float64]:
        """The centred ``F + h`` (``log p`` less its row mean) from LightGBM's softmax output ``p`` (n, k)."""
        with np.errstate(divide="ignore"):
            z = np.log(np.where(output >= np.finfo(np.float64).tiny, output, np.nan))
        return center(z)

    def block_sums(self, theta: float, y: NDArray[np.intp], z: NDArray[np.float64], w: NDArray[np.float64]):
        """Weighted loss of ``softmax(theta z)`` and its first two derivatives in theta: ``E_q[z] - z_y`` and
        ``Var_q[z]`` per row, with ``q = softmax(theta z)``."""
        q = softmax(theta * z, axis=1)
        zy = z[np.arange(y.size), y]
        mean = (q * z).sum(axis=1)
        var = (q * z * z).sum(axis=1) - mean**2
        loss = -log_softmax(theta * z, axis=1)[np.arange(y.size), y]
        return np.array([w @ loss, w @ (mean - zy), w @ np.maximum(var, 0.0)])


def center(F: NDArray[np.float64]) -> NDArray[np.float64]:
    """``F`` less its row mean: the logits of ``softmax(F)`` whose mean over the classes is 0."""
    return F - F.mean(axis=1, keepdims=True)


def class_rescale_factors(
    engine: Engine, y: NDArray[np.intp], z: NDArray[np.float64], w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """One rescaling factor per class: ``argmin_theta sum_i w_i L(softmax(theta * z_i), y_i)`` over theta of shape
    (k,) within the binary algorithm's bounds (the rescaling of section 3.2 of Tax et al. (2025) with a factor per
    class, i.e. vector scaling without intercepts), by L-BFGS-B from theta = 1 on the convex objective.

    ``engine`` is unused (the signature of :func:`mcal.mcgrad.engine.rescale_factor`).
    """
    from scipy.optimize import minimize

    onehot = np.zeros_like(z)
    onehot[np.arange(y.size), y] = 1.0

    def loss_grad(theta: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        logq = log_softmax(theta * z, axis=1)
        return float(-w @ (onehot * logq).sum(axis=1)), ((np.exp(logq) - onehot) * z).T @ w

    k = z.shape[1]
    res = minimize(loss_grad, np.ones(k), jac=True, method="L-BFGS-B", bounds=[THETA_BOUNDS] * k)
    return res.x


class SoftmaxEngine(LocalEngine):
    """The engine of :func:`mcal.mcgrad.engine.boost_rounds` for k classes: one LightGBM multiclass model per
    round on the encoded features plus the k current logits, from those logits as init scores.

    A part's ``X`` holds the encoded features followed by k spare columns for its logits ``F`` (shape (n, k)).
    :class:`~mcal.mcgrad.engine.LocalEngine` runs the rounds (features binned once, training scores read from
    LightGBM's softmax output); a round maps ``F`` to ``center(F + h_t)``, so that the logits after a round are
    those of its probabilities, with mean 0 over the classes, whether read back from the softmax or predicted.
    """

    def __init__(self, params: dict[str, Any], n_estimators: int, categorical: list[int]) -> None:
        super().__init__(params, n_estimators, categorical, SoftmaxLoss())

    def predict_raw(self, booster: Any, part: Part) -> NDArray[np.float64]:
        """``center(F + h) - F``: the round's step on the part's logits ``F`` (n, k)."""
        h = super().predict_raw(booster, part)
        return h - (h + part.F).mean(axis=1, keepdims=True)


class MulticlassMCGrad(MulticlassCalibrator):
    """MCGrad for k classes: multicalibration by recursive softmax boosting (Tax et al. 2025, Algorithm 1).

    The binary algorithm carried to k classes. Start from the logits ``F_0 = log p`` (centred per row). Round t
    fits a LightGBM multiclass model ``h_t`` (k trees per boosting iteration, softmax objective) on the features
    plus the k current logits, with ``F_{t-1}`` as init score, so that the trees can split on any segment of the
    features crossed with any region of the scores, as the binary algorithm's trees split on ``F_{t-1}``. Then
    ``F_t = theta_t center(F_{t-1} + h_t)`` (``center``: less the row mean, so that the logits of the next round
    are those of the probabilities) with one rescaling factor per round,
    ``theta_t = argmin_theta sum_i w_i L(softmax(theta (F_{t-1} + h_t)_i), y_i)`` (section 3.2 of the paper,
    for the softmax loss): one factor rather than one per class keeps the rescaling a temperature of the whole
    round, which preserves the order of the classes within a row (``rescale="per_class"`` fits one per class). Early stopping chooses the number of rounds on
    a held-out part (the multiclass log loss, as the binary algorithm uses the log loss), and the rounds are refit
    on all rows. A segment in which class j is over-predicted is a region of features where the softmax
    gradient of class j has a constant sign, which the trees of round t can isolate: the rounds minimize the
    classwise multicalibration error of every class at once. ``benchmarks/results/multiclass.md`` holds the
    measurements; the design note and the measured choice of rescaling are in the documentation
    (``docs/defaults/benchmark_notes.rst``, the notes on ``multiclass.md``).

    Parameters
    ----------
    max_rounds : int >= 0, default=100
        Most rounds.
    early_stopping : {"holdout", None}, default="holdout"
        Choose the rounds on a random ``validation_fraction`` of the rows, or run ``max_rounds`` rounds.
    validation_fraction : float in (0, 1), default=0.2
        Held-out share for early stopping, in (0, 1).
    patience : int >= 0, default=0
        Rounds without improvement of the held-out loss before stopping.
    rescale : bool or "per_class", default=True
        Fit one factor ``theta_t`` per round, one per round and class (``theta_t`` of shape (k,), fitted
        for the log loss), or keep it at 1.
    rescale_input : bool, default=True
        Before round 1, rescale the input logits ``F_0`` as the rounds are rescaled (a temperature, or a factor per
        class with ``rescale="per_class"``), as :class:`mcal.MCGrad`'s ``rescale_input``; ignored without
        ``rescale``. The default and one factor per round were chosen by measurement (``multiclass.md`` and its
        notes in ``docs/defaults/benchmark_notes.rst``).
    learning_rate, max_depth, min_child_samples, n_estimators, max_leaves, l2_regularization, min_gain_to_split, \
min_sum_hessian_in_leaf
        LightGBM's parameters of each round, with the defaults and rules of :class:`mcal.MCGrad` (the MCGrad
        paper's), but ``max_depth >= 1``.
    lightgbm_params : dict or None, default=None
        Further LightGBM parameters, as for :class:`mcal.MCGrad`: names that MulticlassMCGrad sets (the objective
        and its number of classes included) are refused, and LightGBM judges the values.
    categorical_features : "from_dtype", None, or 1-D array-like of int, bool or str, default="from_dtype"
        Which columns of ``X`` are categorical, as in :class:`mcal.MCGrad`.
    n_jobs : int other than 0, or None, default=None
        LightGBM threads (scikit-learn's convention).
    random_state : int >= 0 or None, default=None
        Seed of the early-stopping split and of LightGBM; the fit repeats for a given thread count (``n_jobs``),
        as :class:`~mcal.MCGrad`'s does.
    input : {"probability", "logit"}, default="probability"
        What ``y_prob`` holds.

    Attributes
    ----------
    n_rounds_ : int
        Rounds kept (0: the input probabilities are returned, up to the floor of ``log``).
    rescale_factors_ : ndarray of shape (n_rounds,), or (n_rounds, n_classes) with ``rescale="per_class"``
    input_factor_ : float, or ndarray of shape (n_classes,) with ``rescale="per_class"``
        ``theta_0``, the factor of the input logits (1.0 without rounds or ``rescale_input``).
    validation_losses_ : ndarray
        Held-out multiclass log loss before round 1 and after each round tried (empty without early stopping).
    boosters_ : list of lightgbm.Booster
    n_features_in_ : int
    feature_names_in_ : ndarray of str, or None
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int

    References
    ----------
    .. [1] Tax, Perini, Linder, Haimovich, Wang, Sinha, Linder, Zhang, Xu, Vojnovic, "MCGrad: Multicalibration at
       Web Scale", KDD 2026 (arXiv 2509.19884).
    """

    uses_features: ClassVar[bool] = True
    _state_attrs: ClassVar[tuple[str, ...]] = (
        "n_rounds_",
        "rescale_factors_",
        "input_factor_",
        "validation_losses_",
        "classes_",
        "n_classes_",
    )
    _extra_state_keys: ClassVar[tuple[str, ...]] = ("boosters", "encoder")
    _state_constraints: ClassVar[dict[str, Any]] = {
        **MulticlassCalibrator._state_constraints,
        "n_rounds_": NON_NEGATIVE_INT,
        "rescale_factors_": Array("f", "floats", ndim=None),
        "input_factor_": NumberOr(Array("f", "floats")),
        "validation_losses_": Array("f", "floats", values=Number(0)),
    }
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **MulticlassCalibrator._parameter_constraints,
        "max_rounds": NON_NEGATIVE_INT,
        "early_stopping": StrOptions("holdout", None),
        "validation_fraction": OPEN_UNIT,
        "patience": NON_NEGATIVE_INT,
        "rescale": ["boolean", StrOptions("per_class")],
        "rescale_input": "boolean",
        **tree_constraints(min_child_samples=0, limited_depth=True),
        "random_state": "random_state",
        "lightgbm_params": LightGBMParams("MulticlassMCGrad"),
        "categorical_features": check_categorical_features,
    }

    def __init__(
        self,
        *,
        max_rounds: int = 100,
        early_stopping: str | None = "holdout",
        validation_fraction: float = 0.2,
        patience: int = 0,
        rescale: bool | str = True,
        rescale_input: bool = True,
        learning_rate: float = 0.02873,
        max_depth: int = 5,
        min_child_samples: int = 160,
        n_estimators: int = 94,
        max_leaves: int = 5,
        l2_regularization: float = 0.00913,
        min_gain_to_split: float = 0.15,
        min_sum_hessian_in_leaf: float = 1e-3,
        lightgbm_params: dict[str, Any] | None = None,
        categorical_features: Any = "from_dtype",
        n_jobs: int | None = None,
        random_state: int | None = None,
        input: str = "probability",
    ) -> None:
        self.max_rounds = max_rounds
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.rescale = rescale
        self.rescale_input = rescale_input
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.n_estimators = n_estimators
        self.max_leaves = max_leaves
        self.l2_regularization = l2_regularization
        self.min_gain_to_split = min_gain_to_split
        self.min_sum_hessian_in_leaf = min_sum_hessian_in_leaf
        self.lightgbm_params = lightgbm_params
        self.categorical_features = categorical_features
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.input = input

    def _lightgbm_params(self, k: int, seed: int, n_rows: int) -> dict[str, Any]:
        threads = lightgbm_threads(self.n_jobs, n_rows)
        return {"objective": "multiclass", "num_class": k, **round_params(self, seed, threads, "force_row_wise")}

    def _rescaling(self) -> Rescaling:
        """The rescaling of :func:`~mcal.mcgrad.engine.boost_rounds`: one factor per round, or per class."""
        per_class = self.rescale == "per_class"
        return Rescaling(
            rescale=bool(self.rescale),
            rescale_input=bool(self.rescale and self.rescale_input),
            rescaler=class_rescale_factors if per_class else rescale_factor,
        )

    @lightgbm_errors_name_lightgbm_params
    def _fit(self, z, y, sample_weight, X) -> None:
        n, k = z.shape
        rng = np.random.default_rng(self.random_state)
        split_seed, lgb_seed = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))
        X = np.empty((n, 0)) if X is None else X
        encoder = FeatureEncoder(self.categorical_features).fit(X)
        Xe = encoder.transform(X, n_extra_columns=k)
        engine = SoftmaxEngine(
            self._lightgbm_params(k, lgb_seed, n), int(self.n_estimators), np.flatnonzero(encoder.categorical_).tolist()
        )
        whole = Part(Xe, y, sample_weight, center(z))
        engine.binned(whole)  # binned once, shared by the early-stopping part and reused by the refit
        n_rounds, losses = int(self.max_rounds), []
        if self.early_stopping is not None and n_rounds > 0:
            order = np.random.default_rng(split_seed).permutation(n)
            n_valid = min(max(round(self.validation_fraction * n), 1), n - 1)
            va, tr = np.sort(order[:n_valid]), np.sort(order[n_valid:])
            for name, rows in (("training", tr), ("validation", va)):
                if not sample_weight[rows].sum() > 0:
                    raise ValueError(
                        f"sample_weight must leave positive weight in the early-stopping {name} part drawn with "
                        f"random_state={self.random_state!r}; got none (use another random_state, or "
                        "early_stopping=None)"
                    )
            train, valid = split_parts(whole, [(tr, va)])
            path = boost_rounds(engine, train, valid, Stopping(n_rounds, int(self.patience)), self._rescaling())
            losses, n_rounds = path.losses, path.best_round
            if n_rounds == self.max_rounds:
                warn(f"early stopping chose max_rounds={self.max_rounds} rounds; a larger max_rounds may fit better")
        final = boost_rounds(engine, [whole], None, Stopping(n_rounds), self._rescaling())
        self.encoder_ = encoder
        self.boosters_ = final.boosters
        self.n_rounds_ = len(final.boosters)
        self.rescale_factors_ = np.asarray(final.factors, dtype=np.float64)
        self.input_factor_ = final.input_factor if n_rounds else 1.0
        if self.rescale != "per_class":
            self.input_factor_ = float(self.input_factor_)
        self.validation_losses_ = np.asarray(losses, dtype=np.float64)
        self._set_feature_attrs()

    def _predict(self, z, X) -> NDArray[np.float64]:
        if X is None:
            if self.n_features_in_:
                raise ValueError(f"X must hold the {self.n_features_in_} feature(s) seen at fit; got None")
            X = np.empty((z.shape[0], 0))
        k = self.n_classes_
        Xe = self.encoder_.transform(X, n_extra_columns=k)
        F = self.input_factor_ * center(z)
        threads = lightgbm_threads(self.n_jobs, z.shape[0])
        for booster, theta in zip(self.boosters_, self.rescale_factors_, strict=True):
            Xe[:, -k:] = F
            F = theta * center(F + booster.predict(Xe, raw_score=True, num_threads=threads))
        return softmax(F, axis=1)

    def _check_X_columns(self, X: Any) -> None:
        self.encoder_.check_columns(X)

    def _feature_columns(self) -> list[Any] | None:
        return self.encoder_.named_columns()

    def _set_feature_attrs(self) -> None:
        self.n_features_in_ = self.encoder_.n_features_in_
        self.feature_names_in_ = self.encoder_.feature_names_in_

    @classmethod
    def _from_dict(cls, data: dict[str, Any], tensors: dict[str, NDArray] | None) -> MulticlassMCGrad:
        # Files of the same schema version 2 written before 60ff64c added input_factor_: their rounds were fitted on
        # logits that were not re-centred after each round, as this version's are, so reading them with
        # input_factor_ 1.0 would predict otherwise (tests/data/model_files/0e5dd60: by up to 1e-3).
        refuse_legacy_state(data, has="n_rounds_", lacks="input_factor_", message=(
            "model data field state.input_factor_ is missing: this MulticlassMCGrad model file (schema version "
            "2) was written by an mcal from before the rounds re-centred the logits, and this mcal cannot "
            "predict what that model did; fit the model again with this mcal and save it"
        ))  # fmt: skip
        return super()._from_dict(data, tensors)

    def _extra_state(self) -> dict[str, Any]:
        return {"boosters": [b.model_to_string() for b in self.boosters_], "encoder": self.encoder_.to_dict()}

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        super()._restore_extra_state(state, tensors)
        texts = state.get("boosters")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError("model data field state.boosters must be a list of LightGBM model strings")
        self.encoder_ = FeatureEncoder.from_dict(state.get("encoder"))
        k = self.n_classes_
        kinds = [*self.encoder_.categorical_, *([False] * k)]
        self.boosters_ = [
            booster_from_text(text, f"state.boosters[{i}]", f"multiclass num_class:{k}", kinds, n_classes=k)
            for i, text in enumerate(texts)
        ]
        self._set_feature_attrs()

    def _validate_state(self) -> None:
        T, k = self.n_rounds_, self.n_classes_
        shape = (T, k) if self.rescale == "per_class" else (T,)
        if len(self.boosters_) != T or np.shape(self.rescale_factors_) != shape:
            raise ValueError(
                f"model data fields state.boosters and state.rescale_factors_ must hold {T} rounds (factors of "
                f"shape {shape})"
            )
        if np.shape(self.input_factor_) not in ((), (k,)):
            raise ValueError(f"model data field state.input_factor_ must be a number or hold {k} numbers")
        if self.classes_.shape != (k,):
            raise ValueError(f"model data field state.classes_ must have shape ({k},)")
        d = self.encoder_.n_features_in_
        for i, booster in enumerate(self.boosters_):
            if booster.num_feature() != d + k:
                raise ValueError(
                    f"model data field state.boosters[{i}] must use {d + k} features (the encoder's {d} and the "
                    f"{k} logits); got {booster.num_feature()}"
                )

"""The round loop of MCGrad (Tax et al., 2026, Algorithm 1) behind a small engine seam.

:func:`boost_rounds` is the only place where rounds are run, for early stopping and for the final refit
alike; when they stop is one :class:`Stopping` (the cap, the early-stopping rule, the clock), how the scores are
rescaled one :class:`Rescaling`. It touches data only through an engine's methods (the :class:`Engine` protocol):

- ``fit_round(part, valid, out_of_time=None)``: one LightGBM booster of ``n_estimators`` trees on the part's
  features plus its current logit ``F`` as one more feature, with ``F`` as init score, and ``F + h_t`` on the
  part's rows and on those of the validation part ``valid`` (None for the refit; the booster without its training
  data); it raises ``RoundTimedOut`` where it abandons the round because ``out_of_time()`` became true;
- ``predict_raw(booster, part)``: the booster's raw output on the part (without the init score);
- ``loss_grad_hess(theta, y, z, w)`` and ``log_loss_sum(y, F, w)``: the sums behind the rescaling
  Newton step and the validation loss (of the engine's ``objective``; the log loss for MCGrad).

:class:`LocalEngine` does this with NumPy arrays; a distributed engine (``lightgbm.dask`` with dask
reductions) implements the same methods and reuses the loop unchanged.

The loss is an object (``mcal.mcgrad.losses``: ``LogLoss``, ``SquaredError``, ``TweedieLoss``) that gives the link
between predictions and the boosted score ``F``, LightGBM's objective, and the per-block sums of the loss
and its derivatives in the rescaling factor: the same rounds serve MCGrad (log loss on logits) and
RegressionMCGrad (squared error on the prediction, or a Poisson/Tweedie deviance on its logarithm).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from mcal._lightgbm import has_linear_trees, sorted_subset
from mcal._optional import import_optional
from mcal._progress import progress
from mcal.mcgrad.losses import (
    LOG_LOSS,
    LOGIT_CLIP,
    THETA_BOUNDS,
    LogLoss,
    RoundLoss,
    SquaredError,
    TweedieLoss,
    gain_sums,
)
from mcal.mcgrad.losses import gain_exceeds as _gain_exceeds
from mcal.mcgrad.losses import wsum as _wsum

if TYPE_CHECKING:
    from mcal._lightgbm.single_row import SingleRowPredictor
    from mcal.mcgrad._fast_predict import CompiledForests

__all__ = [
    "LOGIT_CLIP",
    "LOG_LOSS",
    "THETA_BOUNDS",
    "Engine",
    "LocalEngine",
    "LogLoss",
    "Rescaling",
    "SquaredError",
    "Stopping",
    "TweedieLoss",
    "boost_rounds",
    "predict_logit",
    "rescale_factor",
    "staged_logits",
]

#: Rows per block of the rescaling sums.
_BLOCK = 1 << 16

#: The arrays of the rounds: NumPy arrays (:class:`LocalEngine`) or dask Arrays (the ``DaskEngine``); dask ships no
#: types that mypy reads here, so the engine contract names them with this alias of ``Any``.
Array = Any
#: A fitted round: a ``lightgbm.Booster`` (LightGBM ships no types).
Booster = Any


class RoundTimedOut(Exception):
    """An engine abandoned a round: ``out_of_time()`` became true between two of its trees."""


def _clock_check(out_of_time: Callable[[], bool]) -> Callable[[Any], None]:
    """A LightGBM callback that raises ``RoundTimedOut`` after a tree when ``out_of_time()`` is true and more
    trees remain (the last tree ends the round, which :func:`boost_rounds` then checks itself)."""

    def check(env: Any) -> None:
        if env.iteration + 1 < env.end_iteration and out_of_time():
            raise RoundTimedOut

    return check


class Engine(Protocol):
    """What :func:`~mcal.mcgrad.engine.boost_rounds`, :func:`~mcal.mcgrad.engine.rescale_factor` and MCGrad's fit
    need of an engine: :class:`~mcal.mcgrad.engine.LocalEngine` (one machine, NumPy arrays) and the ``DaskEngine``
    of :mod:`mcal.dask` (a ``distributed`` cluster, dask arrays) provide it, and mypy checks both against it where
    they are passed."""

    #: The loss of the rounds (``LOG_LOSS``, ``SquaredError``, ``TweedieLoss``, or the softmax loss of k classes).
    objective: RoundLoss

    def fit_round(
        self, part: Part, valid: Part | None = None, out_of_time: Callable[[], bool] | None = None
    ) -> tuple[Booster, Array, Array]:
        """One round on ``part``: the booster, ``F + h`` on its rows, and on the rows of ``valid`` (or None); raises
        ``RoundTimedOut`` where it abandons the round because ``out_of_time()`` became true."""
        ...

    def loss_grad_hess(self, theta: float, y: Array, z: Array, w: Array) -> tuple[float, float, float]:
        """The weighted loss of ``theta * z`` and its first two derivatives in ``theta``."""
        ...

    def log_loss_sum(self, y: Array, F: Array, w: Array) -> tuple[float, float]:
        """``(sum of w * loss of F, sum of w)``."""
        ...

    def gain_sums(self, y: Array, F_best: Array, F: Array, w: Array) -> NDArray[np.float64]:
        """The per-block sums of the loss gain of ``F`` over ``F_best``."""
        ...


class LocalEngine:
    """Single-machine engine: LightGBM boosters on in-memory float64 arrays, NumPy reductions.

    Each part's feature columns are binned by LightGBM once; every round then bins only the score column
    and joins the two (``Dataset.subset`` of the part's rows + ``add_features_from``), which gives the same trees
    as binning all columns again (the bin boundaries of a column do not depend on the other columns). A part's
    ``F`` of shape (n, k) (a multiclass objective) has k score columns, the last k of ``X``.

    Parameters
    ----------
    params : dict
        LightGBM training parameters (objective, regularization, threads, seed).
    n_estimators : int
        Trees per round (LightGBM's ``num_boost_round``).
    categorical : list of int
        Indices of the categorical columns of the encoded features.
    objective : LogLoss, SquaredError or TweedieLoss, default=LOG_LOSS
        The loss of the rounds; ``params`` must hold its LightGBM objective (``objective.lightgbm_params``).
    """

    def __init__(
        self, params: dict[str, Any], n_estimators: int, categorical: list[int], objective: RoundLoss | None = None
    ) -> None:
        self.params = params
        self.n_estimators = n_estimators
        self.categorical = categorical
        self.objective: RoundLoss = LOG_LOSS if objective is None else objective

    def fit_round(
        self, part: Part, valid: Part | None = None, out_of_time: Callable[[], bool] | None = None
    ) -> tuple[Booster, NDArray[np.float64], NDArray[np.float64] | None]:
        """Fit one booster on the part's features plus its score ``F``, starting from ``F`` as init score; asks
        ``out_of_time()`` after each tree, and raises ``RoundTimedOut`` when it is true before the last.

        Returns the booster, ``F + h_t`` on the part's rows, read from ``Booster.eval_train`` (no second predict),
        and ``F + h_t`` on the rows of ``valid`` (None without): read from LightGBM's scores of a validation Dataset
        binned with the round's bins when ``valid`` shares the part's binned features (the early-stopping parts) or
        neither has features, else predicted from its features (:meth:`predict_raw`). The booster is reloaded from
        its model text, which frees the round's Datasets and LightGBM's per-row training state before the rescaling
        allocates its own. Rounds of linear trees (``linear_tree``) are predicted from the features: LightGBM's
        scores of their rows differ from its predictions (by up to 1e-2 in a logit).
        """
        lgb = import_optional("lightgbm")
        no_features = part.X.shape[1] == _score_columns(part.F).shape[1]
        shares_bins = valid is not None and (no_features or (valid.rows is not None and valid.binned is part.binned))
        data, score_column = self._round_data(lgb, part)
        valid_sets = [self._round_data(lgb, valid, score_column)[0]] if shares_bins and valid is not None else []
        del score_column  # the bins of the validation part's score column are taken; joined, it is not needed
        params = {**self.params, "metric": "None"} if valid_sets else self.params  # no metric each iteration
        booster = lgb.train(
            params, data, num_boost_round=self.n_estimators, valid_sets=valid_sets, keep_training_booster=True,
            callbacks=None if out_of_time is None else [_clock_check(out_of_time)],
        )  # fmt: skip
        scores: list[NDArray[np.float64]] = []
        booster.eval_train(feval=lambda preds, _: _record(scores, preds))
        if valid_sets:
            booster.eval_valid(feval=lambda preds, _: _record(scores, preds))
        text = booster.model_to_string()
        booster = lgb.Booster(model_str=text)
        del data, valid_sets
        linear = has_linear_trees(text)  # linear leaves: LightGBM's scores of the rows differ from its predictions
        if linear:
            rows = np.arange(part.y.shape[0]) if part.rows is None else part.rows
            z = part.F + self.predict_raw(booster, Part(part.X, None, None, part.F, rows=rows))
        else:
            z = self._raw_from_output(booster, part, scores[0])
        if valid is None:
            return booster, z, None
        if shares_bins and not linear:
            return booster, z, self._raw_from_output(booster, valid, scores[1])
        return booster, z, valid.F + self.predict_raw(booster, valid)

    def _round_data(self, lgb: Any, part: Part, reference: Any = None) -> tuple[Any, Any]:
        """The round's Dataset of a part and the Dataset of its score column: the part's binned features joined with
        its score column ``F`` (binned with the bins of ``reference``, the training part's score column, for a
        validation part), with ``F`` as init score."""
        # LightGBM copies, with a warning, an init score that is not C-contiguous (F may be a view of the caller's
        # scores, e.g. RegressionMCGrad's identity link of a column slice); the score column is read from the same copy
        init_score = np.ascontiguousarray(part.F)
        scores_2d = _score_columns(init_score)
        weight = _lightgbm_weight(part.w)
        if part.X.shape[1] == scores_2d.shape[1]:  # no features: the score alone
            data = lgb.Dataset(scores_2d, label=part.y, weight=weight, init_score=init_score, reference=reference)
            return data, data
        with warnings.catch_warnings():
            # notes on the (freed) raw data and re-read categorical flags, kept in the joined bin mappers
            warnings.filterwarnings("ignore", message="Cannot add features from", category=UserWarning)
            warnings.filterwarnings("ignore", message="Resetting categorical features", category=UserWarning)
            rows = np.arange(part.y.shape[0], dtype=np.int32) if part.rows is None else part.rows
            data = sorted_subset(self.binned(part), rows)
            score_column = lgb.Dataset(scores_2d, reference=reference, params=self.params).construct()
            data.add_features_from(score_column)
        data.set_init_score(init_score)
        return data, score_column

    def _raw_from_output(self, booster: Booster, part: Part, output: NDArray[np.float64]) -> NDArray[np.float64]:
        """``F + h`` on the part's rows from the objective's output; rows where the link cannot recover it to ~1e-9
        are predicted again."""
        z = self.objective.raw_from_output(output)
        far_cells = ~(np.isfinite(z) & (z < self.objective.exact_below))
        far = np.asarray(far_cells.reshape(far_cells.shape[0], -1).any(axis=1))  # rows, also for k score columns
        if far.any():
            X_far = part.X[far if part.rows is None else part.rows[far]]
            z[far] = part.F[far] + self.predict_raw(booster, Part(X_far, None, None, part.F[far]))
        return z

    def binned(self, part: Part) -> Any:
        """The part's feature columns binned by LightGBM (a constructed ``Dataset`` with labels and weights), cached."""
        if part.binned is None:  # column-major X (FeatureEncoder's output) is read without a copy
            part.binned = self.bin_features(part.X[:, : -_score_columns(part.F).shape[1]], part.y, part.w)
        return part.binned

    def bin_features(self, features: Any, y: NDArray[np.float64], w: NDArray[np.float64]) -> Any:
        """``features`` binned by LightGBM: a constructed ``Dataset`` with labels ``y`` and weights ``w``.

        ``features`` is a float64 array of shape (n_samples, n_features) or a list of ``lightgbm.Sequence`` of row
        blocks, which LightGBM samples for the bin boundaries (the same rows as from an array) and then reads one
        block at a time, so that the features of all rows never exist as one float64 matrix.
        """
        lgb = import_optional("lightgbm")
        data = lgb.Dataset(
            features, label=y, weight=_lightgbm_weight(w), categorical_feature=self.categorical, params=self.params
        )
        return data.construct()

    def predict_raw(self, booster: Booster, part: Part) -> NDArray[np.float64]:
        """Raw booster output on the part's features and logit (the init score is not included); a part with
        ``rows`` takes them from its ``X``."""
        scores_2d = _score_columns(part.F)
        X = part.X if part.rows is None else part.X[part.rows]
        X[:, -scores_2d.shape[1] :] = scores_2d
        return booster.predict(X, raw_score=True, num_threads=self.params["num_threads"])

    def loss_grad_hess(
        self, theta: float, y: NDArray[np.float64], z: NDArray[np.float64], w: NDArray[np.float64]
    ) -> tuple[float, float, float]:
        """Weighted loss of ``theta * z`` (the objective's) and its first two derivatives in ``theta``.

        Summed over blocks of rows, so that the temporaries stay a few MB on any data size (unit weights held as one
        number are expanded block by block).
        """
        sums = np.zeros(3)
        for start in range(0, z.shape[0], _BLOCK):
            rows = slice(start, start + _BLOCK)
            sums += self.objective.block_sums(theta, y[rows], z[rows], np.ascontiguousarray(w[rows]))
        return float(sums[0]), float(sums[1]), float(sums[2])

    def log_loss_sum(
        self, y: NDArray[np.float64], F: NDArray[np.float64], w: NDArray[np.float64]
    ) -> tuple[float, float]:
        """``(sum of w * loss of F, sum of w)``: the log loss of ``expit(F)`` for MCGrad, else the objective's."""
        with np.errstate(invalid="ignore", over="ignore"):  # a diverged F gives NaN or inf, which boost_rounds reports
            return _wsum(w, self.objective.loss(y, F)), float(w.sum())

    def gain_sums(
        self, y: NDArray[Any], F_best: NDArray[np.float64], F: NDArray[np.float64], w: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        """``gain_sums`` of the objective (``mcal.mcgrad.losses``): the per-row loss gain of ``F`` over ``F_best``."""
        return gain_sums(self.objective, y, F_best, F, w)


def _score_columns(F: NDArray[np.float64]) -> NDArray[np.float64]:
    """The score columns of ``F``: shape (n, 1) for a score of shape (n,), (n, k) for k scores."""
    return F.reshape(F.shape[0], -1)


def _lightgbm_weight(w: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """The weights LightGBM is given: None when all are 1 (the same trees, without a float32 copy per dataset)."""
    return None if w.min() == 1.0 == w.max() else w


def rescale_factor(engine: Engine, y: Array, z: Array, w: Array, *, tol: float = 1e-10, max_iter: int = 50) -> float:
    """Rescaling factor of one round: ``argmin_theta sum_i w_i L(theta * clip(z_i, ±10), y_i)``.

    Section 3.2 of Tax et al. (2026): ``theta_t = argmin_theta E_D[L(theta (F_{t-1} + h_t), y)]``. The
    objective is convex in theta, so Newton's method with the iterate projected onto the objective's
    ``theta_bounds`` (:data:`THETA_BOUNDS` for the log loss) and the step halved whenever the loss rises
    converges to the exact minimum in a handful of passes (each pass is one ``loss_grad_hess`` reduction; the last
    step, below ``tol``, is taken without one).
    For the squared error (``objective.closed_form``) the loss is quadratic in theta and one Newton step is
    the closed form ``sum w z y / sum w z^2`` (one pass). The log loss clips ``z`` to ±10 inside its sums
    (block by block, without a clipped copy of ``z``); the other losses do not clip.

    Parameters
    ----------
    engine : Engine
        Provides ``loss_grad_hess(theta, y, z, w)`` and ``objective`` (the log loss when it has none).
    y, z, w : arrays of shape (n_samples,)
        Labels, scores ``F_{t-1} + h_t``, non-negative weights.
    tol : float, default=1e-10
        Relative step size at which the iteration stops.
    max_iter : int, default=50
        Most Newton steps.

    Returns
    -------
    theta : float
        In the objective's ``theta_bounds``; 1.0 when the objective is flat (every weighted ``z`` is 0).
    """
    objective = getattr(engine, "objective", LOG_LOSS)
    lo, hi = objective.theta_bounds
    theta = 1.0
    loss, grad, hess = engine.loss_grad_hess(theta, y, z, w)
    if objective.closed_form:
        return min(max(theta - grad / hess, lo), hi) if hess > 0.0 else theta
    for _ in range(max_iter):
        if not hess > 0.0:
            break
        step = grad / hess
        cand = min(max(theta - step, lo), hi)
        if abs(cand - theta) <= tol * max(1.0, abs(theta)):
            return cand  # the last Newton step, too small to raise the loss: taken without a pass over the rows
        for _ in range(60):
            cand = min(max(theta - step, lo), hi)
            c_loss, c_grad, c_hess = engine.loss_grad_hess(cand, y, z, w)
            if c_loss <= loss + 1e-12 * abs(loss):
                break
            step *= 0.5
        else:
            break
        done = abs(cand - theta) <= tol * max(1.0, abs(theta))
        theta, loss, grad, hess = cand, c_loss, c_grad, c_hess
        if done:
            break
    return theta


@dataclass
class Part:
    """One block of rows: encoded features (with a spare last column for the score), labels, weights, logit.

    ``binned`` is the engine's cache of the binned feature columns, of the rows of ``X``. ``rows``, when given,
    says which rows of ``X`` (and of ``binned``) are the part's: an early-stopping part that shares the whole data's
    features and bins instead of copying them; ``y``, ``w`` and ``F`` always hold the part's rows only.
    """

    X: Any  # an array, or rows encoded on demand (EncodedRows)
    y: Array
    w: Array
    F: Array
    binned: Any = None  # a constructed lightgbm.Dataset
    rows: NDArray[np.integer] | None = None


def split_parts(whole: Part, rows: list[tuple[Any, Any]]) -> tuple[list[Part], list[Part]]:
    """The (train, validation) parts of ``rows``, pairs of increasing row indices: both share ``whole``'s features
    (encoded on demand) and bins, each round taking the part's rows of them. Weights of one repeated value (unit
    weights, stride 0) stay one value."""
    y, w, F = whole.y, whole.w, whole.F
    train = [Part(whole.X, y[tr], _take(w, tr), F[tr], whole.binned, tr) for tr, _ in rows]
    return train, [Part(whole.X, y[va], _take(w, va), F[va], whole.binned, va) for _, va in rows]


def _take(values: NDArray[np.float64], rows: NDArray[np.integer]) -> NDArray[np.float64]:
    """``values[rows]``, without a copy of an array that holds one value (stride 0)."""
    if values.ndim == 1 and values.strides[0] == 0:
        return np.broadcast_to(values[:1], rows.shape)
    return values[rows]


@dataclass
class RoundPath:
    """What :func:`boost_rounds` found: kept boosters and factors, validation losses and scores (the
    stopping criterion's values), the best round, the validation parts' scores ``F`` after it (``best_valid``, one
    array per validation part; empty without validation), and whether the time budget ended the rounds."""

    boosters: list[Booster] = field(default_factory=list)
    factors: list[float | NDArray[np.float64]] = field(default_factory=list)  # an array: a factor per score column
    losses: list[float] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    input_factor: float | NDArray[np.float64] = 1.0
    best_round: int = 0
    best_valid: list[Array] = field(default_factory=list)
    timed_out: bool = False


#: ``rescaler(engine, y, z, w) -> theta`` of the rescaling steps: a number, or one factor per score column.
Rescaler = Callable[[Engine, Array, Array, Array], "float | NDArray[np.float64]"]


@dataclass(frozen=True)
class Stopping:
    """When :func:`boost_rounds` stops: the rounds' cap, the early-stopping rule and the clock, in one object.

    The counterpart of LightGBM's ``early_stopping`` callback for MCGrad's rounds (Algorithm 1 of Tax et al.,
    2026: stop once the validation loss has not improved).

    Parameters
    ----------
    max_rounds : int
        Most rounds; without validation parts, exactly this many rounds run (fewer only when ``out_of_time``).
    patience : int, default=0
        Rounds without improvement tolerated before stopping.
    score : callable or None, default=None
        ``score(valid) -> float``, the stopping criterion to minimize; None uses the pooled validation loss.
    min_gain_se : float, default=0.0
        With ``score`` None, a round becomes the best only if its mean per-row validation loss gain over the best
        round exceeds ``min_gain_se`` standard errors of that gain (engine method ``gain_sums``, pooled over parts).
    out_of_time : callable or None, default=None
        ``out_of_time() -> bool``, asked after each round and by the engine after each tree of a round; True ends
        the rounds (``timed_out``), keeping the rounds fitted whole (a round it interrupts is dropped; without
        validation, ``best_round`` is then the number of rounds kept).
    """

    max_rounds: int
    patience: int = 0
    score: Callable[[list[Part]], float] | None = None
    min_gain_se: float = 0.0
    out_of_time: Callable[[], bool] | None = None


@dataclass(frozen=True)
class Rescaling:
    """How :func:`boost_rounds` rescales the scores (section 3.2 of Tax et al., 2026).

    Parameters
    ----------
    rescale : bool, default=True
        Fit theta_t after each round, or keep it at 1.
    rescale_input : bool, default=False
        Start round 1 by rescaling each training part's input ``F_0`` by its own factor ``theta_0`` (the rescaling
        step applied to the input; the validation part takes the same factor): a global temperature that the
        boosters then correct locally. ``RoundPath.input_factor`` is the last part's ``theta_0``.
    rescaler : callable, default=rescale_factor
        ``rescaler(engine, y, z, w) -> theta`` of the rescaling steps (:func:`rescale_factor`). A theta of another
        shape than a number multiplies ``z`` by broadcasting (one factor per score column).
    """

    rescale: bool = True
    rescale_input: bool = False
    rescaler: Rescaler = field(default=rescale_factor)


#: The keyword arguments that :func:`boost_rounds` took before :class:`Stopping` and :class:`Rescaling` (until 0.3).
_OLD_KEYWORDS = {
    "max_rounds": Stopping, "patience": Stopping, "score": Stopping, "min_gain_se": Stopping,
    "out_of_time": Stopping, "rescale": Rescaling, "rescale_input": Rescaling, "rescaler": Rescaling,
}  # fmt: skip


def _from_old_keywords(
    stopping: Stopping | None, rescaling: Rescaling, old: dict[str, Any]
) -> tuple[Stopping, Rescaling]:
    """``stopping`` and ``rescaling`` from the keyword arguments of the deprecated signature, with a warning."""
    unknown = sorted(set(old) - set(_OLD_KEYWORDS))
    if unknown:
        raise TypeError(f"boost_rounds() got unexpected keyword argument(s) {unknown}")
    if not old:
        if stopping is None:
            raise TypeError("boost_rounds() must be given stopping=Stopping(max_rounds=...); got none")
        return stopping, rescaling
    if stopping is not None:
        raise TypeError(f"boost_rounds() takes stopping=Stopping(...) or the deprecated {sorted(old)}, not both")
    warnings.warn(
        f"boost_rounds({', '.join(f'{k}=' for k in old)}...) is deprecated and will be removed in mcal 0.3; pass "
        "stopping=mcal.mcgrad.engine.Stopping(...) and rescaling=mcal.mcgrad.engine.Rescaling(...)",
        DeprecationWarning,
        stacklevel=3,
    )
    rescaler = old.pop("rescaler", None)
    stop = {k: v for k, v in old.items() if _OLD_KEYWORDS[k] is Stopping}
    scale = {k: v for k, v in old.items() if _OLD_KEYWORDS[k] is Rescaling}
    if "max_rounds" not in stop:
        raise TypeError("boost_rounds() must be given max_rounds (or stopping=Stopping(max_rounds=...))")
    rescaling = Rescaling(**{"rescale": False, **scale}, rescaler=rescaler or rescale_factor)
    return Stopping(**stop), rescaling


def boost_rounds(
    engine: Engine,
    train: list[Part],
    valid: list[Part] | None,
    stopping: Stopping | None = None,
    rescaling: Rescaling = Rescaling(),
    *,
    keep: bool | None = None,
    show_progress: bool | None = False,
    desc: str = "MCGrad rounds",
    **deprecated: Any,
) -> RoundPath:
    """Run the rounds of Algorithm 1 of Tax et al. (2026) on one or more (train, validation) pairs.

    Each round fits ``h_t`` on the features plus ``F_{t-1}`` with ``F_{t-1}`` as init score, rescales
    ``F_t = theta_t (F_{t-1} + h_t)`` (``theta_t = 1`` without rescaling), and applies the same round to the
    paired validation part. The validation loss is pooled over all validation parts (k-fold: the
    out-of-fold loss), and the loop stops once it has not improved for ``patience + 1`` rounds.

    Parameters
    ----------
    engine : Engine
        A :class:`LocalEngine` or an engine with the same methods.
    train : list of Part
        Training parts (one for holdout and refit, k for k-fold); their ``F`` is updated in place.
    valid : list of Part or None
        Validation parts paired with ``train``; None for the refit, which runs exactly ``stopping.max_rounds``
        rounds and keeps its boosters.
    stopping : Stopping
        The cap on the rounds, the early-stopping rule and the clock.
    rescaling : Rescaling, default=Rescaling()
        Whether and how the scores are rescaled after each round and before the first.
    keep : bool or None, default=None
        Keep each round's booster and factor; None keeps them without validation parts only (the refit).
        True with validation parts serves an external validation set: the rounds of the single training
        part are the model, cut at the best round by the caller.
    show_progress : bool or None, default=False
        Progress bar over rounds (tqdm): None on a terminal only.
    desc : str, default="MCGrad rounds"
        Label of the progress bar.
    **deprecated
        ``max_rounds``, ``patience``, ``score``, ``min_gain_se``, ``out_of_time``, ``rescale``, ``rescale_input``
        and ``rescaler``, the keyword arguments of mcal 0.1 (instead of ``stopping`` and ``rescaling``; then
        ``rescale`` defaults to False, as it was required): accepted with a ``DeprecationWarning`` until mcal 0.3.

    Returns
    -------
    path : RoundPath
        With validation: the losses and scores (index 0 is the input), the best round (lowest score) and the
        validation parts' ``F`` after it.
        Without: the boosters and factors of every round, and ``best_round = max_rounds``.

    Raises
    ------
    ValueError
        If a round leaves a non-finite validation loss (or, in the refit, training loss): the boosting diverged.
    TypeError
        If neither ``stopping`` nor the deprecated ``max_rounds`` is given, both are, or an unknown keyword is.
    """
    stopping, rescaling = _from_old_keywords(stopping, rescaling, deprecated)
    max_rounds, patience, score = stopping.max_rounds, stopping.patience, stopping.score
    out_of_time, rescaler, rescale = stopping.out_of_time, rescaling.rescaler, rescaling.rescale
    keep = not valid if keep is None else keep
    path = RoundPath(best_round=0 if valid else max_rounds)
    if valid:
        path.losses.append(_pooled_loss(engine, valid))
        path.scores.append(path.losses[-1] if score is None else score(valid))
    wait = 0
    by_gain = bool(valid) and score is None and stopping.min_gain_se > 0
    path.best_valid = [part.F for part in valid or []]  # each round replaces a part's F: these stay the best's
    clock = {} if out_of_time is None else {"out_of_time": out_of_time}
    with progress(max_rounds, desc, enabled=show_progress, unit="round") as bar:
        for t in range(1, max_rounds + 1):
            for k, part in enumerate(train):
                if t == 1 and rescaling.rescale_input:
                    path.input_factor = rescaler(engine, part.y, part.F, part.w)
                    part.F = path.input_factor * part.F
                    if valid:
                        valid[k].F = path.input_factor * valid[k].F
                try:
                    booster, z, z_valid = engine.fit_round(part, valid[k] if valid else None, **clock)
                except RoundTimedOut:
                    path.timed_out = True
                    break
                part.F = None  # replaced by the rescaled z: freed before that is allocated
                theta = rescaler(engine, part.y, z, part.w) if rescale else 1.0
                part.F = theta * z
                if valid:
                    valid[k].F = theta * z_valid
                del z, z_valid
                if keep:
                    path.boosters.append(booster)
                    path.factors.append(theta)
                del booster
            if path.timed_out:  # round t is dropped: the kept rounds are those before it
                path.best_round = path.best_round if valid else t - 1
                path.input_factor = path.input_factor if t > 1 else 1.0
                break
            bar.update()
            loss = _pooled_loss(engine, valid or train)  # the refit: its training loss, to catch a divergence
            _check_finite(t, "validation" if valid else "training", loss)
            if valid:
                path.losses.append(loss)
                path.scores.append(loss if score is None else score(valid))
                improved = path.scores[-1] < path.scores[path.best_round]
                if improved and by_gain:  # the gain of each row over the best round, against its standard error
                    sums = [engine.gain_sums(p.y, F, p.F, p.w) for p, F in zip(valid, path.best_valid, strict=True)]
                    improved = _gain_exceeds(sums, stopping.min_gain_se)
                if improved:
                    path.best_round, wait, path.best_valid = t, 0, [p.F for p in valid]
                else:
                    wait += 1
                    if wait > patience:
                        break
            if out_of_time is not None and t < max_rounds and out_of_time():
                path.timed_out = True
                path.best_round = path.best_round if valid else t
                break
    return path


def _check_finite(t: int, which: str, loss: float) -> None:
    if not np.isfinite(loss):
        raise ValueError(
            f"MCGrad's rounds must keep the scores finite; got a {which} loss of {loss} after round {t}: the "
            "boosting diverged (a learning_rate or lightgbm_params value far too large?)"
        )


def _pooled_loss(engine: Engine, parts: list[Part]) -> float:
    sums = [engine.log_loss_sum(p.y, p.F, p.w) for p in parts]
    total_w = sum(s[1] for s in sums)
    if not total_w > 0:
        raise ValueError("sample_weight must give the validation rows a positive total weight; got 0")
    return sum(s[0] for s in sums) / total_w


def predict_logit(
    boosters: list[Booster],
    factors: NDArray[np.float64],
    X: NDArray[np.float64],
    F: NDArray[np.float64],
    num_threads: int,
    single_row: SingleRowPredictor | None = None,
    compiled: CompiledForests | None = None,
) -> NDArray[np.float64]:
    """Apply fitted rounds: ``F <- theta_t (F + h_t(X, F))`` for each round; ``X`` has a spare last column.

    The recursion of Algorithm 1 of Tax et al. (2026) at predict time. A one-row ``X`` goes through
    ``single_row`` when given (same values, less per-call overhead); other inputs through ``compiled`` when
    given (the same boosters compiled by lleaves; equal up to the order in which trees are summed), else
    through ``Booster.predict``.
    """
    if single_row is not None and X.shape[0] == 1:
        return np.array([single_row.predict_logit(factors, X[0], float(F[0]))])
    if compiled is not None:  # lleaves reads row-major data and would copy a column-major X on every round
        X = np.ascontiguousarray(X)
    last = F
    for last in staged_logits(boosters, factors, X, F, num_threads, compiled):  # noqa: B007 - the last one is kept
        pass
    return last


def staged_logits(
    boosters: list[Booster],
    factors: NDArray[np.float64],
    X: NDArray[np.float64],
    F: NDArray[np.float64],
    num_threads: int,
    compiled: CompiledForests | None = None,
) -> Iterator[NDArray[np.float64]]:
    """Yield ``F_t = theta_t (F_{t-1} + h_t(X, F_{t-1}))`` after each round ``t = 1..T`` (a new array each time).

    ``X`` has a spare last column, which is overwritten with each round's input score.
    """
    for t, theta in enumerate(factors):
        X[:, -1] = F
        if compiled is not None:
            h = compiled.predict_raw(t, X)
        else:
            h = boosters[t].predict(X, raw_score=True, num_threads=num_threads)
        F = theta * (F + h)
        yield F


def _record(scores: list[NDArray[np.float64]], preds: NDArray[np.float64]) -> tuple[str, float, bool]:
    """An ``feval`` of LightGBM that keeps the training scores it is given."""
    scores.append(preds)
    return "scores", 0.0, False

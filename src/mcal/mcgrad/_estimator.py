"""MCGrad: multicalibration by recursive gradient boosting (Tax et al., 2026), on LightGBM.

The estimator :class:`MCGrad` adds validation, data splitting, state and model files around the round loop
of :mod:`mcal.mcgrad.engine`. LightGBM is imported only when a model is fitted, predicted or loaded.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import check_is_fitted

from mcal._base import BaseCalibrator, Self
from mcal._constraints import NON_NEGATIVE_INT, OPEN_UNIT, Interval, StrOptions
from mcal._features.categorical import check_categorical_features
from mcal._features.encoder import FeatureEncoder
from mcal._features.table import take_rows
from mcal._lightgbm import (
    LightGBMParams,
    check_float32_weights,
    check_monotone_constraints,
    lightgbm_errors_name_lightgbm_params,
    lightgbm_threads,
    round_params,
    tree_constraints,
)
from mcal._lightgbm.single_row import SingleRowPredictor
from mcal._progress import check_progress_param
from mcal._validation import output_dtype
from mcal.mcgrad import _controls as controls
from mcal.mcgrad._controls import MAX_TIME, check_eval_set, check_metric_param, choose_rounds, validation_score
from mcal.mcgrad._cross_fit import CrossFit, cross_fit
from mcal.mcgrad._fast_predict import CompiledForests
from mcal.mcgrad._model_file import STATE_CONSTRAINTS, check_model_state, model_state, restore_model_state
from mcal.mcgrad._splits import EncodedRows, FeatureBlocks, split_rows
from mcal.mcgrad.engine import LOG_LOSS, Engine, LocalEngine, Part, predict_logit, split_parts, staged_logits
from mcal.mcgrad.losses import LogLoss

#: From this many training rows on, LightGBM builds column-wise histograms, below it row-wise ones (the same trees
#: either way); measured in docs/defaults/mcgrad.rst.
_COL_WISE_FROM_ROWS = 500_000
#: From this many rows on, the features are binned from row blocks, which LightGBM samples one row at a time (about
#: 1 s for its 200,000 sampled rows) instead of from the float64 matrix (88 MB per million rows of 11 columns);
#: the same bins either way. Measured in benchmarks/results/mcgrad_memory.md.
_BIN_BLOCKS_FROM_ROWS = 1_000_000


class MCGrad(BaseCalibrator):
    r"""MCGrad: multicalibration by recursive gradient boosting on the features and the score.

    Starting from ``F_0 = theta_0 logit(y_prob)``, each round ``t`` fits a LightGBM booster ``h_t`` on the
    features plus ``F_{t-1}`` as one more feature, with ``F_{t-1}`` as init score, then rescales
    ``F_t = theta_t (F_{t-1} + h_t)`` with the ``theta_t`` that minimises the weighted log loss. The number
    of rounds ``T`` is chosen by early stopping on held-out data (``T = 0`` returns the input unchanged),
    then ``T`` rounds are refitted on all the data (Algorithm 1 of [1]_). The measurements behind the
    defaults are in ``docs/defaults/mcgrad.rst``.

    Parameters
    ----------
    max_rounds : int >= 0, default=100
        Cap on the number of rounds; with ``early_stopping=None`` exactly this many rounds are fitted
        (``max_rounds=1, early_stopping=None`` is the paper's "one round only" ablation).
    early_stopping : {"holdout", "kfold"} or None, default="holdout"
        How ``T`` is chosen: the validation metric after each round on a held-out ``validation_fraction``
        of the rows, or pooled out-of-fold over ``n_folds`` folds (``n_folds`` models per round). Splits are
        stratified by label when labels are 0/1. An ``eval_set`` given to :meth:`fit` replaces the split.
    validation_fraction : float in (0, 1), default=0.2
        Share of rows held out (``early_stopping="holdout"``).
    n_folds : int >= 2, default=5
        Folds (``early_stopping="kfold"``).
    patience : int >= 0, default=0
        Rounds without a lower validation metric tolerated before stopping; 0 stops at the first round that
        does not improve, as Algorithm 1 does. ``T`` is always the round with the lowest metric.
    min_gain_se : float >= 0, default=0.0
        With ``early_stopping_metric="log_loss"``, a round counts as an improvement only if its mean per-row
        validation log loss gain over the best round so far exceeds ``min_gain_se`` standard errors of that gain
        (rows as independent draws, weighted as sampling weights); 0 accepts any lower loss, as Algorithm 1
        does. Other metrics compare values only. Measured in ``benchmarks/results/mcgrad_stopping_rule.md``.
    early_stopping_metric : {"log_loss", "mce"} or callable, default="log_loss"
        What early stopping minimizes on the validation rows: the weighted log loss, the multicalibration
        error ``mce_sigma`` of :func:`mcal.metrics.mce` on segments generated once from the validation
        features, or ``metric(y_true, y_prob, X, sample_weight) -> float`` (validation labels, predicted
        probabilities, features as given, weights). The log loss is recorded in either case.
    max_time : float > 0 or None, default=None
        Seconds, counted from the start of :meth:`fit`, after which no new round or tree starts: the clock is
        read after each LightGBM tree, a round it interrupts is dropped, and the best whole rounds so far are
        kept, with a warning (the overrun is at most one tree). It bounds the whole fit: with early stopping on
        a split, the early-stopping pass gets a share of the seconds left when it starts (its rows fitted per
        round over those of the pass and the refit together: 4/9 for the default holdout, 4/5 for 5 folds), and
        the refit of the chosen rounds on all rows gets the rest, up to ``max_time`` (a refit round the clock
        interrupts is dropped too, so fewer rounds than chosen may be kept); with an ``eval_set`` or
        ``early_stopping=None``, it bounds the only pass of rounds.
    rescale : bool, default=True
        Fit the rescaling factor ``theta_t`` of section 3.2; False keeps ``theta_t = 1``.
    rescale_input : bool, default=True
        Start round 1 by rescaling the input logit by the factor ``theta_0`` that minimises the log loss (a
        global temperature, the step of section 3.2 applied to the input), so that one round can reach what
        temperature scaling reaches; False (or ``rescale=False``) starts from the input as Algorithm 1 does.
        Why: ``benchmarks/results/mcgrad_overconfident.md``.
    learning_rate, max_depth, min_child_samples, n_estimators, max_leaves, l2_regularization, min_gain_to_split
        LightGBM regularization of each round, defaults from section 4.1 of [1]_: learning_rate 0.02873,
        max_depth 5, min_child_samples 160, n_estimators 94 (trees per round), max_leaves 5 (LightGBM's
        ``num_leaves``), l2_regularization 0.00913 (``lambda_l2``), min_gain_to_split 0.15. The integers lie
        within LightGBM's int32 (max_depth <= 0: no limit; max_leaves in [2, 131072]); learning_rate is
        positive and the penalties non-negative.
    min_sum_hessian_in_leaf : float >= 0, default=1e-3
        Least total Hessian ``sum w f (1 - f)`` in a leaf (section 3.3 of [1]_), in units of sample weight;
        pass 20 for the paper's "msh_20" variant.
    lightgbm_params : dict or None, default=None
        Further LightGBM parameters (a bool, a finite number, a string without whitespace or ``=``, or a list
        of them), e.g. ``{"max_bin": 63}``; ``monotone_constraints`` takes one sign per column of ``X`` and a
        last one for the score. Parameters set above (and aliases), ``is_unbalance``, ``scale_pos_weight``,
        unknown names and two names of one parameter are refused; LightGBM judges the values (a value it
        rejects raises a ``ValueError`` at fit that names the parameter).
    categorical_features : "from_dtype", None, or array-like, default="from_dtype"
        Categorical columns of ``X``, as in scikit-learn's ``HistGradientBoostingClassifier``: from the
        dtypes (category, bool, string, object, Arrow dictionary), or indices or names of shape
        (n_categorical,), or a boolean mask of shape (n_features,). Missing values stay missing; categories
        unseen at fit count as missing at predict, with one warning.
    n_jobs : int other than 0, or None, default=None
        LightGBM threads, at most the cores; negative values count back from the cores (-1: all). None uses
        one thread per 10,000 rows, at most the cores that other processes leave free, at least one
        (``benchmarks/results/mcgrad_threads.md``: every core on a busy machine fitted 12 to over 75 times
        slower than one thread). The fitted model can depend on the thread count: LightGBM splits its sums
        over rows among its threads, and on 60,000 rows two threads and one gave probabilities up to 0.43
        apart after 71 rounds (``benchmarks/results/mcgrad_thread_determinism.md``). Pass an int for fits
        that repeat on any machine load.
    progress : bool or None, default=False
        Progress bar over rounds: None on a terminal only, True always (needs tqdm), False never.
    random_state : int >= 0 or None, default=None
        Seeds the splits and LightGBM; an int makes fit and predict reproducible for a given thread count
        (``n_jobs``; None follows the machine's load).

    Attributes
    ----------
    n_rounds_ : int
        Number of rounds ``T`` of the fitted model (0: the model is the identity).
    rescale_factors_ : ndarray of shape (n_rounds,)
        ``theta_t`` of each round.
    input_factor_ : float
        ``theta_0``, the factor of the input logit before round 1 (1.0 without rounds or ``rescale_input``).
    validation_losses_ : ndarray of shape (n_evaluated,)
        Weighted mean validation log loss after each evaluated round, index 0 being the input. Empty
        without validation (``early_stopping=None`` and no ``eval_set``, or ``max_rounds=0``).
    validation_scores_ : ndarray of shape (n_evaluated,)
        The early-stopping metric after each evaluated round (equal to ``validation_losses_`` for
        ``"log_loss"``); ``validation_scores_[n_rounds_]`` is its minimum when early stopping chose ``T``.
    feature_importances_ : ndarray of shape (n_features + 1,)
        Total split gain of each feature summed over all rounds; the last entry is the score ``F_{t-1}``.
        :meth:`feature_importance` gives them by name.
    boosters_ : list of lightgbm.Booster
        The booster of each round.
    n_features_in_ : int
        Number of features seen at fit.
    feature_names_in_ : list of str or None
        Feature names seen at fit (DataFrame input).

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters), invalid scores, labels, weights, features or
        ``eval_set`` (as :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`), weights outside LightGBM's
        float32 range, ``lightgbm_params`` that LightGBM rejects, or a metric that returns a non-finite value;
        from :meth:`predict`: features whose columns differ from those seen at fit.
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters), an input is not array-like, ``X`` is
        not a table, or ``eval_set`` is not a tuple.
    ImportError
        If LightGBM is not installed (``pip install "mcal[mcgrad]"``).

    See Also
    --------
    mcal.tune_mcgrad : search of the parameters that matter, on held-out data.
    mcal.plotting.plot_learning_curve : the validation log loss and metric of each round.

    Notes
    -----
    Round ``t`` (Algorithm 1 and section 3.2 of [1]_; ``L`` is the log loss, ``mu`` the sigmoid):

    .. math::

        h_t = \mathrm{GBDT}\big(\{((x_i, F_{t-1}(x_i)), y_i)\}\big), \quad
        \theta_t = \arg\min_\theta \sum_i w_i L\big(\mu(\theta (F_{t-1} + h_t)(x_i)), y_i\big), \quad
        F_t = \theta_t (F_{t-1} + h_t).

    ``theta`` is found by exact Newton steps on the convex 1-D objective, with the logits clipped to ±10
    and ``theta`` kept in [1e-8, 50] (the reference implementation's guards). Scores are clipped to
    ``[EPS, 1 - EPS]`` before the logit. Labels may be soft (in [0, 1]): LightGBM fits the cross-entropy
    objective. Sample weights enter the boosting, the rescaling and the validation loss; LightGBM stores
    them as float32 (positive weights in [1.2e-38, 3.4e38]) and counts rows, not weights, for
    ``min_child_samples`` and bins. ``X=None`` fits on the score alone.

    References
    ----------
    .. [1] N. Tax, L. Perini, F. Linder, D. Haimovich, D. Karamshuk, N. Okati, M. Vojnovic and
       P. A. Apostolopoulos, "MCGrad: Multicalibration at Web Scale", KDD 2026. arXiv:2509.19884.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"group": rng.choice(["a", "b"], 4000), "x": rng.normal(size=4000)})
    >>> y_prob = np.full(4000, 0.5)
    >>> y = rng.random(4000) < np.where(X["group"] == "a", 0.2, 0.8)
    >>> model = MCGrad(min_child_samples=20, n_jobs=1, random_state=0).fit(y_prob, y, X=X)
    >>> model.n_rounds_ >= 1
    True
    >>> p = model.predict(y_prob, X=X)
    >>> bool(abs(p[X["group"] == "a"].mean() - 0.2) < 0.03)
    True
    """

    uses_features: ClassVar[bool] = True
    accepts_soft_labels: ClassVar[bool] = True
    _single_row: SingleRowPredictor | None
    _compiled: CompiledForests | None
    _state_attrs: ClassVar[tuple[str, ...]] = (
        "n_rounds_",
        "rescale_factors_",
        "validation_losses_",
        "feature_importances_",
    )
    _extra_state_keys: ClassVar[tuple[str, ...]] = ("boosters", "encoder", "validation_scores", "input_factor")
    _state_constraints: ClassVar[dict[str, Any]] = STATE_CONSTRAINTS
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "max_rounds": NON_NEGATIVE_INT,
        "patience": NON_NEGATIVE_INT,
        "min_gain_se": Interval(numbers.Real, 0, None),
        "n_folds": Interval(numbers.Integral, 2, None),
        **tree_constraints(min_child_samples=0, limited_depth=False),
        "progress": check_progress_param,
        "early_stopping": StrOptions("holdout", "kfold", None),
        "validation_fraction": OPEN_UNIT,
        "early_stopping_metric": check_metric_param,
        "max_time": MAX_TIME,
        "rescale": "boolean",
        "rescale_input": "boolean",
        "random_state": "random_state",
        "lightgbm_params": LightGBMParams(),
        "categorical_features": check_categorical_features,
    }

    def __init__(
        self,
        *,
        max_rounds: int = 100,
        early_stopping: str | None = "holdout",
        validation_fraction: float = 0.2,
        n_folds: int = 5,
        patience: int = 0,
        min_gain_se: float = 0.0,
        early_stopping_metric: str | Callable[..., float] = "log_loss",
        max_time: float | None = None,
        rescale: bool = True,
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
        progress: bool | None = False,
        random_state: int | None = None,
    ) -> None:
        self.max_rounds = max_rounds
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_folds = n_folds
        self.patience = patience
        self.min_gain_se = min_gain_se
        self.early_stopping_metric = early_stopping_metric
        self.max_time = max_time
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
        self.progress = progress
        self.random_state = random_state

    # -- parameters ----------------------------------------------------------------------------------------
    def _lightgbm_params(self, seed: int, n_rows: int | None = None) -> dict[str, Any]:
        """LightGBM's parameters; ``n_rows`` (training rows, None if unknown) picks the histogram layout."""
        layout = "force_col_wise" if n_rows is not None and n_rows >= _COL_WISE_FROM_ROWS else "force_row_wise"
        threads = lightgbm_threads(self.n_jobs, n_rows)
        # cross entropy: the binary log loss, also for soft labels
        return {**self._loss().lightgbm_params, **round_params(self, seed, threads, layout)}

    def _loss(self) -> LogLoss:
        """The loss of the rounds (:class:`~mcal.mcgrad.engine.LogLoss`): link, LightGBM objective, rescaling sums."""
        return LOG_LOSS

    # -- fit and predict -------------------------------------------------------------------------------------
    def fit(
        self, y_prob: ArrayLike, y: ArrayLike, *, X: Any = None, sample_weight: ArrayLike | None = None,
        eval_set: tuple | None = None,
    ) -> Self:  # fmt: skip
        """Fit the rounds; see :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>` for the arguments.

        Parameters
        ----------
        y_prob, y, X, sample_weight
            As :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`.
        eval_set : tuple or None, default=None
            ``(y_prob_val, y_val, X_val)`` or ``(y_prob_val, y_val, X_val, sample_weight_val)``, arrays of
            shape (n_val,) and features with the columns of ``X`` (None when ``X`` is None): the rows early
            stopping evaluates, instead of a split of the training rows. The rounds are then fitted once,
            on all training rows, and cut at the best round (no refit).

        Returns
        -------
        self : MCGrad

        Raises
        ------
        ValueError, TypeError
            As the class's Raises; ``eval_set`` entries are named ``y_prob_val``, ``y_val``, ``X_val``,
            ``sample_weight_val``.
        """
        return self._fit_checked(y_prob, y, X, sample_weight, eval_set=eval_set)

    def cross_fit(
        self, y_prob: ArrayLike, y: ArrayLike, folds: ArrayLike, *, X: Any = None, sample_weight: ArrayLike | None = None,
    ) -> CrossFit:  # fmt: skip
        """Cross-fit on the given folds, the number of rounds chosen by early stopping across all of them.

        Every fold's rounds are fitted on the other folds' rows, side by side, and stop as ``early_stopping="kfold"``
        stops on its own folds: once the metric of the held-out rows pooled over the folds has not improved for
        ``patience + 1`` rounds. The features are binned once (on all rows) for every fold and the refit. This model
        stays unfitted. :func:`mcal.select_calibrator` scores MCGrad so.

        Parameters
        ----------
        y_prob, y, X, sample_weight
            As :meth:`fit`.
        folds : array-like of int of shape (n_samples,)
            The held-out fold of each row, ``0 .. k - 1``, each present, ``k >= 2``.

        Returns
        -------
        result : CrossFit
            ``held_out``, ``n_rounds``, ``validation_losses`` and ``refit()`` (see :class:`mcal.mcgrad.CrossFit`).

        Raises
        ------
        ValueError, TypeError
            As :meth:`fit`; ``ValueError`` also for ``early_stopping=None`` or ``folds`` that break their rule.
        """
        return cross_fit(self, y_prob, y, folds, X, sample_weight)

    @lightgbm_errors_name_lightgbm_params
    def _fit(self, y_prob, y, sample_weight, X, *, eval_set: tuple | None = None) -> None:
        start = controls.clock()
        engine, encoder, whole = self._prepare(y_prob, y, sample_weight, X)
        if eval_set is not None:
            p_val, y_val, X_val, w_val = check_eval_set(self, eval_set, X, encoder)
            X_enc = np.empty((p_val.shape[0], 0)) if X_val is None else X_val
            val = Part(encoder.transform(X_enc, n_extra_columns=1), y_val, w_val, self._loss().link(p_val))
            self._fit_rounds(engine, encoder, whole, None, eval_part=val, start=start,
                             score=self._score_of(y_val, w_val, X_val))  # fmt: skip
            return
        rows, score = [], None
        if self.early_stopping is not None and self.max_rounds > 0:
            split_seed = self._seeds()[0]
            rows = split_rows(y, self.early_stopping, self.validation_fraction, self.n_folds, split_seed)
            score = self._split_score(rows, y, sample_weight, X)
        self._fit_rounds(engine, encoder, whole, partial(split_parts, whole, rows), score=score, start=start)

    def _prepare(self, y_prob, y, sample_weight, X) -> tuple[LocalEngine, FeatureEncoder, Part]:
        """The engine, the fitted feature encoder and the part of all rows, its features binned once for every
        early-stopping part and the refit, from the checked inputs of :meth:`fit`."""
        check_float32_weights(sample_weight)
        X = np.empty((y_prob.shape[0], 0)) if X is None else X
        encoder = FeatureEncoder(self.categorical_features).fit(X)
        check_monotone_constraints(self.lightgbm_params, encoder)
        loss, n_rows = self._loss(), y_prob.shape[0]
        engine = LocalEngine(self._lightgbm_params(self._seeds()[1], n_rows), int(self.n_estimators),
                             np.flatnonzero(encoder.categorical_).tolist(), loss)  # fmt: skip
        # The rounds need feature values only for the validation rows and the rare rows predicted again: they are
        # encoded from X when asked. The features are binned once, shared by the early-stopping parts and reused by
        # the refit: from row blocks on large data (the float64 matrix never whole), from the matrix on smaller
        # data, where LightGBM's sampling of single rows from blocks costs more than the matrix's memory.
        whole = Part(EncodedRows(encoder, X, (n_rows, encoder.n_features_in_ + 1)), y, sample_weight, loss.link(y_prob))
        if encoder.n_features_in_:
            blocked = n_rows >= _BIN_BLOCKS_FROM_ROWS
            features = [FeatureBlocks(encoder, X, n_rows)] if blocked else encoder.transform(X)
            whole.binned = engine.bin_features(features, y, sample_weight)
        return engine, encoder, whole

    def _score_of(self, y: Any, w: Any, X: Any) -> Any:
        """The early-stopping criterion on validation rows ``y``, ``w``, ``X`` (None: the log loss)."""
        return validation_score(self.early_stopping_metric, self._loss(), y, w, X,
                                categorical_features=self.categorical_features, outcome=self.outcome)  # fmt: skip

    def _split_score(self, rows: list[tuple[Any, Any]], y: Any, w: Any, X: Any) -> Any:
        """The early-stopping criterion on the validation rows of ``rows`` (pairs of train, validation indices)."""
        if not rows or controls.is_log_loss(self.early_stopping_metric):
            return None
        va = np.concatenate([va for _, va in rows])  # the validation rows in the order of the parts
        return self._score_of(y[va], w[va], None if X is None else take_rows(X, va))

    def _seeds(self) -> tuple[int, int]:
        """The seeds of the early-stopping split and of LightGBM, both drawn from ``random_state``."""
        rng = np.random.default_rng(self.random_state)
        split_seed, lgb_seed = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))
        return split_seed, lgb_seed

    @lightgbm_errors_name_lightgbm_params
    def _fit_rounds(
        self, engine: Engine, encoder: FeatureEncoder, whole: Part, splits: Any, *, score: Any = None,
        eval_part: Part | None = None, start: float | None = None,
    ) -> None:  # fmt: skip
        """Choose the number of rounds (early stopping), fit them on ``whole``, set the state; the rounds are run by
        :func:`~mcal.mcgrad._controls.choose_rounds`.

        ``engine`` runs the rounds (:class:`~mcal.mcgrad.engine.LocalEngine` or one with the same methods);
        ``splits`` returns the (train, validation) parts and is called only when early stopping runs on a split;
        ``score`` is the stopping criterion on the validation parts (None: the log loss); ``eval_part`` is an
        external validation set; ``start`` the clock of ``max_time`` (now when None).
        """
        path, final = choose_rounds(self, engine, whole, splits, score=score, eval_part=eval_part, start=start)
        self.encoder_ = encoder
        self._single_row = self._compiled = None  # both belong to the previous boosters
        self.boosters_ = final.boosters
        self.n_rounds_ = len(final.boosters)
        self.rescale_factors_ = np.asarray(final.factors, dtype=np.float64)
        self.input_factor_ = float(final.input_factor)
        self.validation_losses_ = np.asarray(path.losses if path else [], dtype=np.float64)
        self.validation_scores_ = np.asarray(path.scores if path else [], dtype=np.float64)
        self.feature_importances_ = self._importances()
        self._set_feature_attrs()

    def _check_X_columns(self, X: Any) -> None:
        self.encoder_.check_columns(X)

    def _encoded(self, n_samples: int, X: Any) -> NDArray[np.float64]:
        """The features encoded for the boosters, with the spare score column."""
        if X is None:
            if self.n_features_in_:
                raise ValueError(f"X must hold the {self.n_features_in_} feature(s) seen at fit; got None")
            X = np.empty((n_samples, 0))
        return self.encoder_.transform(X, n_extra_columns=1)

    def staged_predict(self, y_prob: ArrayLike, *, X: Any = None) -> Iterator[NDArray[np.floating]]:
        """Yield the prediction after each round ``t = 1..n_rounds_``, as scikit-learn's ``staged_predict``.

        The ``t``-th array equals :meth:`predict` of a model fitted with ``max_rounds=t`` and
        ``early_stopping=None`` (same data and ``random_state``); the last equals :meth:`predict`.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples,)
            Uncalibrated probabilities in [0, 1] (predictions, for :class:`mcal.RegressionMCGrad`).
        X : array-like or DataFrame of shape (n_samples, n_features), default=None
            Features, as at fit.

        Yields
        ------
        y_calibrated : ndarray of shape (n_samples,)
            Calibrated P(y=1) after each round, float32 if ``y_prob`` is float32, else float64.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        ValueError, TypeError
            As :meth:`predict`, raised when called (not at the first iteration).
        """
        self._check_fitted()
        p = self._check_predict_scores(y_prob)
        X = self._check_X(X, p.shape[0], fitting=False)
        Xe, loss, dtype = self._encoded(p.shape[0], X), self._loss(), output_dtype(y_prob)
        logits = staged_logits(self.boosters_, self.rescale_factors_, Xe, self.input_factor_ * loss.link(p),
                               lightgbm_threads(self.n_jobs, Xe.shape[0]))  # fmt: skip
        return (loss.inverse_link(F).astype(dtype, copy=False) for F in logits)

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        Xe = self._encoded(y_prob.shape[0], X)
        if self.n_rounds_ == 0:
            return y_prob
        if Xe.shape[0] == 1 and getattr(self, "_single_row", None) is None:
            self._single_row = SingleRowPredictor.create(self.boosters_, Xe.shape[1])
        loss = self._loss()
        return loss.inverse_link(
            predict_logit(
                self.boosters_,
                self.rescale_factors_,
                Xe,
                self.input_factor_ * loss.link(y_prob),
                lightgbm_threads(self.n_jobs, Xe.shape[0]),
                getattr(self, "_single_row", None),
                getattr(self, "_compiled", None),
            )
        )

    def compile(self, n_jobs: int | None = None) -> MCGrad:
        """Compile the fitted rounds to native code with lleaves, for faster batch :meth:`predict`.

        Each round's LightGBM booster is compiled by lleaves [1]_ (through llvmlite). Afterwards :meth:`predict`
        evaluates the recursion ``F_t = theta_t (F_{t-1} + h_t(x, F_{t-1}))`` of Algorithm 1 of [2]_ with the
        compiled trees for inputs of two rows or more: the same probabilities up to about 1e-15 (lleaves sums a
        round's trees in another order); one-row calls keep LightGBM's single-row C path. Speed and compile time:
        ``benchmarks/results/mcgrad_vs_reference.md`` (rows "mcal compiled").

        The compiled code belongs to this process: model files keep the LightGBM text, and loading, pickling,
        copying or fitting again drop it. Needs the ``compiled`` extra: lleaves 1.3 with ``llvmlite<0.45``.

        Parameters
        ----------
        n_jobs : int or None, default=None
            Most threads of a compiled batch predict, one per 10,000 rows at most and at most the cores;
            None uses this estimator's ``n_jobs`` (all cores when that is None too); negative values count
            back from the cores (-1: all).

        Returns
        -------
        self : MCGrad
            The model, compiled.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        TypeError
            If ``n_jobs`` is not None or an integer.
        ValueError
            If ``n_jobs`` is 0, the rounds have linear trees
            (``lightgbm_params={"linear_tree": True}``), which lleaves does not evaluate, or a round's
            model text (from a hand-edited model file that LightGBM accepts) is rejected by lleaves.
        ImportError
            If lleaves is not installed (``pip install 'mcal[compiled]'``), or the installed llvmlite is
            0.45 or newer, with which lleaves 1.3 cannot compile (https://github.com/siboehm/lleaves/issues/95).

        References
        ----------
        .. [1] S. Boehm, "lleaves: a LLVM-based compiler for LightGBM decision trees",
           https://github.com/siboehm/lleaves, version 1.3.
        .. [2] N. Tax et al., "MCGrad: Multicalibration at Web Scale", KDD 2026. arXiv:2509.19884.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> x = rng.normal(size=(2000, 1))
        >>> y = rng.random(2000) < 1 / (1 + np.exp(-2 * x[:, 0]))
        >>> model = MCGrad(min_child_samples=20, n_jobs=1, random_state=0).fit(np.full(2000, 0.5), y, X=x)
        >>> before = model.predict(np.full(2000, 0.5), X=x)
        >>> after = model.compile().predict(np.full(2000, 0.5), X=x)
        >>> bool(np.max(np.abs(after - before)) < 1e-12)
        True
        """
        self._check_fitted()
        threads = lightgbm_threads(n_jobs if n_jobs is not None else self.n_jobs)
        self._compiled = CompiledForests.compile(self.boosters_, threads or lightgbm_threads(-1))  # all cores
        return self

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_single_row", None)  # C handles; rebuilt on the next one-row predict
        state.pop("_compiled", None)  # machine code of this process; compile() again where wanted
        return state

    def feature_importance(self) -> pd.Series:
        """``feature_importances_`` by name, largest first.

        Returns
        -------
        importance : Series of shape (n_features + 1,)
            Total split gain over all rounds, indexed by ``feature_names_in_`` (``x0``, ``x1``, ... for an array)
            and ``"score"`` for the score column; sorted in decreasing order, ties in column order.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        """
        check_is_fitted(self, "feature_importances_")
        names = self.feature_names_in_ if self.feature_names_in_ is not None else [
            f"x{j}" for j in range(self.n_features_in_)]  # fmt: skip
        table = pd.Series(self.feature_importances_, index=[*map(str, names), "score"], name="gain")
        return table.sort_values(ascending=False, kind="stable")

    def _importances(self) -> NDArray[np.float64]:
        total = np.zeros(self.encoder_.n_features_in_ + 1, dtype=np.float64)
        for booster in self.boosters_:
            total += booster.feature_importance(importance_type="gain")
        return total

    def _feature_columns(self) -> list[Any] | None:
        return self.encoder_.named_columns()

    def _set_feature_attrs(self) -> None:
        self.n_features_in_ = self.encoder_.n_features_in_
        self.feature_names_in_ = self.encoder_.feature_names_in_

    # -- model files: src/mcal/mcgrad/_model_file.py ----------------------------------------------------------
    def _extra_state(self) -> dict[str, Any]:
        return model_state(self)

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        super()._restore_extra_state(state, tensors)
        restore_model_state(self, state)

    def _validate_state(self) -> None:
        check_model_state(self)

"""MCGrad: multicalibration by recursive gradient boosting (Tax et al., 2026), on LightGBM.

The estimator :class:`MCGrad` adds validation, data splitting, state and model files around the round loop
of :mod:`mcal.mcgrad.engine`. LightGBM is imported only when a model is fitted, predicted or loaded.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted

from mcal._base import BaseCalibrator
from mcal._constraints import Interval, StrOptions
from mcal._features.categorical import check_categorical_features
from mcal._features.encoder import FeatureEncoder
from mcal._lightgbm import (
    LightGBMParams,
    booster_from_text,
    check_float32_weights,
    check_monotone_constraints,
    forwarded,
    lightgbm_errors_name_lightgbm_params,
    lightgbm_threads,
    tree_constraints,
)
from mcal._progress import check_progress_param
from mcal._validation import warn
from mcal.mcgrad.engine import (
    LOG_LOSS,
    CompiledForests,
    LocalEngine,
    Part,
    SingleRowPredictor,
    boost_rounds,
    predict_logit,
)

#: From this many training rows on, LightGBM builds column-wise histograms, below it row-wise ones (the same
#: trees either way). Row-wise fitted 8-20 % faster from 18k to 100k rows; at 1M rows it added 470 MB to the fit
#: and column-wise 450 MB, against 930 MB for the reference package, at a fit 10 % slower (90 s against 100 s)
#: (benchmarks/results/mcgrad_vs_reference*.md and the commit history of the 1M file).
_COL_WISE_FROM_ROWS = 500_000


class MCGrad(BaseCalibrator):
    r"""MCGrad: multicalibration by recursive gradient boosting on the features and the score.

    Starting from ``F_0 = logit(y_prob)``, each round ``t`` fits a LightGBM booster ``h_t`` on the
    features plus ``F_{t-1}`` as one more feature, with ``F_{t-1}`` as init score, then rescales
    ``F_t = theta_t (F_{t-1} + h_t)`` with the ``theta_t`` that minimises the weighted log loss. The number
    of rounds ``T`` is chosen by early stopping on held-out data (``T = 0`` returns the input unchanged),
    then ``T`` rounds are refitted on all the data (Algorithm 1 of [1]_).

    Parameters
    ----------
    max_rounds : int >= 0, default=100
        Cap on the number of rounds; with ``early_stopping=None`` exactly this many rounds are fitted
        (``max_rounds=1, early_stopping=None`` is the paper's "one round only" ablation).
    early_stopping : {"holdout", "kfold"} or None, default="holdout"
        How ``T`` is chosen: the validation loss of each round on a held-out ``validation_fraction`` of
        the rows, or pooled out-of-fold over ``n_folds`` folds (k-fold fits ``n_folds`` models per round and
        holds ``n_folds`` copies of the features). Splits are stratified by label when labels are 0/1.
        The holdout default is chosen by measurement. With the same number of rounds, mcal and the
        reference package (5-fold) fit the same model on the synthetic data and nearly the same on Bank
        Marketing (log loss 0.2135 against 0.2137 at 7 rounds; ``benchmarks/results/mcgrad_vs_reference.md``),
        so quality differs mostly through the rounds chosen, which move with the random split. Over 20 seeds
        (mcal's MCE) the holdout's mean multicalibration error was 0.014 above 5-fold's on the 100k synthetic
        data, about one standard error (``benchmarks/results/mcgrad_early_stopping.md``), and 0.13 and 0.02
        below it on Bank Marketing and Credit Default with the paper's base model
        (``benchmarks/results/mcgrad_early_stopping_paper_base.md``), at a log loss within 2e-4 and a third of
        5-fold's fit cost (12.7 against 36 full-data rounds on the synthetic data). ``"kfold"`` buys a steadier
        choice of rounds for about three times the fit time and 1.5-2.2 times the memory added by the fit.
    validation_fraction : float in (0, 1), default=0.2
        Share of rows held out (``early_stopping="holdout"``). A smaller share trains the early-stopping
        rounds on more rows, which chooses more rounds (a dearer refit) but from a noisier loss. Measured
        (same 20-seed files): 0.1 lowered the mean error on Bank Marketing by 0.16 and raised it on the
        synthetic data by 0.03, at 10-20 % more fit cost; 0.3 raised it on Bank Marketing by 0.11. Hence 0.2.
    n_folds : int >= 2, default=5
        Folds (``early_stopping="kfold"``).
    patience : int >= 0, default=0
        Rounds without a lower validation loss tolerated before stopping; 0 stops at the first round that
        does not improve, as Algorithm 1 does. The chosen ``T`` is always the round with the lowest loss.
        Measured (same 20-seed files): patience 1 lowered the mean error by 0.02 on Bank Marketing and 0.01
        on Credit Default and raised it by 0.004 on the synthetic data, for 8 % more fit cost on Bank
        Marketing and 31 % on Credit Default (one more booster after short runs). It is not the default because the fit
        time is the reference comparison's binding target on Bank Marketing; use 1 where the error counts
        more than the time.
    rescale : bool, default=True
        Fit the rescaling factor ``theta_t`` of section 3.2; False keeps ``theta_t = 1`` (the paper's
        "no rescaling" ablation).
    learning_rate, max_depth, min_child_samples, n_estimators, max_leaves, l2_regularization, min_gain_to_split
        LightGBM regularization of each round, defaults from section 4.1 of [1]_: learning_rate 0.02873,
        max_depth 5, min_child_samples 160, n_estimators 94 (trees per round), max_leaves 5 (LightGBM's
        ``num_leaves``), l2_regularization 0.00913 (``lambda_l2``), min_gain_to_split 0.15. The integers lie
        within LightGBM's int32 (max_depth <= 0: no limit; max_leaves in [2, 131072]); learning_rate is
        positive and the penalties non-negative.
    min_sum_hessian_in_leaf : float >= 0, default=1e-3
        Least total Hessian ``sum w f (1 - f)`` in a leaf (section 3.3 of [1]_), in units of sample
        weight. The paper calls 20 its default but also reports it as a separate "msh_20" variant, and
        the reference package keeps LightGBM's 1e-3. Measured (``benchmarks/results/mcgrad_vs_reference.md``,
        seed 0): 20 gave a higher multicalibration error on Bank Marketing (5.77 against 3.99), Credit
        Default (3.47 against 3.42) and the 100k synthetic data (3.83 against 3.74), and a held-out log loss
        up to 0.0011 higher; the paper's own Bank Marketing rows agree (4.15 for 1e-3, 5.91 for msh_20).
        Being an absolute Hessian, 20 also blocks every split on small or lightly weighted data. Hence
        1e-3; pass 20 for the msh_20 variant.
    lightgbm_params : dict or None, default=None
        Further LightGBM parameters (str keys; a bool, a finite number, a string without whitespace or ``=``, or
        a list of them; tuples and 1-D arrays are lists), e.g. ``{"max_bin": 63}`` or
        ``{"monotone_constraints": [0, ..., 0, 1]}``, which takes one sign in {-1, 0, 1} per column of ``X`` and
        a last one for the score ``F_{t-1}``, 0 for categorical columns. Parameters that MCGrad sets or exposes
        above (and their LightGBM aliases) are rejected with the argument to use instead, and so are the
        options of LightGBM's binary objective that its cross-entropy objective ignores (``is_unbalance``,
        ``scale_pos_weight``: use ``sample_weight``), names that LightGBM does not know (it would ignore them;
        the closest known names are suggested) and two names of one parameter. LightGBM judges the values: one
        it rejects raises a ``ValueError`` at fit that names the parameter and quotes LightGBM.
    categorical_features : "from_dtype", None, or array-like, default="from_dtype"
        Categorical columns of ``X``, as in scikit-learn's ``HistGradientBoostingClassifier``: from the
        dtypes (pandas category, bool, string and object, and Arrow dictionary), or given as indices or names
        (shape (n_categorical,)) or a boolean mask (shape (n_features,)). Integer-coded categoricals must be
        declared. Missing values are passed to LightGBM as missing; categories unseen at fit are treated as
        missing at predict, with one warning that counts them.
    n_jobs : int other than 0, or None, default=None
        LightGBM threads for fitting and predicting, at most the cores (joblib's count); a negative value
        counts back from the cores as in scikit-learn (-1: all, -2: all but one). None uses one thread per
        10,000 rows, at least one: LightGBM waits at OpenMP barriers in every tree, which on a few thousand
        rows cost more than the threads save. On a machine that another process keeps busy, pass 1.
        Measured (``benchmarks/results/mcgrad_threads.md``, 2 cores): with one core busy, two threads fitted
        3,000 rows 4.8 times slower than one and 30,000 to 1M rows 1.6-2.7 times slower, where on the idle
        machine they took 0.63-0.83 of its time; predicting, they took 0.50-0.68 of its time idle and
        0.77-1.08 busy.
    progress : bool or None, default=False
        Progress bar over rounds, for early stopping and for the refit: None on a terminal only, True always
        (tqdm required), False never.
    random_state : int >= 0 or None, default=None
        Seeds the splits and LightGBM; an int makes fit and predict reproducible run to run.

    Attributes
    ----------
    n_rounds_ : int
        Number of rounds ``T`` of the fitted model (0: the model is the identity).
    rescale_factors_ : ndarray of shape (n_rounds_,)
        ``theta_t`` of each round of the refit.
    validation_losses_ : ndarray of shape (n_evaluated,)
        Weighted mean validation log loss after each evaluated round of early stopping, index 0 being the
        input; ``validation_losses_[n_rounds_]`` is the minimum. Empty with ``early_stopping=None`` or
        ``max_rounds=0`` (nothing to choose).
    feature_importances_ : ndarray of shape (n_features_in_ + 1,)
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
        From :meth:`fit`: a parameter breaks its rule (see Parameters), invalid scores, labels, weights or
        features (as :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`), weights outside LightGBM's float32
        range, or ``lightgbm_params`` that LightGBM rejects; from :meth:`predict`: features whose columns differ
        from those seen at fit. Unseen categories are not an error: they count as missing, with a warning.
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters), an input is not array-like, or ``X``
        is not a table.
    ImportError
        If LightGBM is not installed (``pip install "mcal[mcgrad]"``).

    Notes
    -----
    Round ``t`` (Algorithm 1 and section 3.2 of [1]_; ``L`` is the log loss, ``mu`` the sigmoid):

    .. math::

        h_t = \mathrm{GBDT}\big(\{((x_i, F_{t-1}(x_i)), y_i)\}\big), \quad
        \theta_t = \arg\min_\theta \sum_i w_i L\big(\mu(\theta (F_{t-1} + h_t)(x_i)), y_i\big), \quad
        F_t = \theta_t (F_{t-1} + h_t).

    The factor is found by exact Newton steps on the convex 1-D objective, with the logits clipped to
    ±10 inside it and ``theta`` kept in [1e-8, 50] (the reference implementation's guards). Scores are
    clipped to ``[EPS, 1 - EPS]`` before the logit. Labels may be soft (in [0, 1]); LightGBM fits the
    cross-entropy objective, which equals the binary log loss on 0/1 labels. Sample weights enter the
    boosting, the rescaling and the validation loss; LightGBM stores them as float32, so positive weights
    must lie in [1.2e-38, 3.4e38]. Weight k equals k copies of a row in the rescaling
    and the validation loss; LightGBM itself counts rows (``min_child_samples``, bins) and, in version 4.7,
    grows different trees for weights and copies beyond a tree's first split, so the equality is exact
    only for stumps without a row floor and no early stopping (whose split draws rows). ``X=None`` fits
    on the score alone.

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
    _state_attrs: ClassVar[tuple[str, ...]] = (
        "n_rounds_",
        "rescale_factors_",
        "validation_losses_",
        "feature_importances_",
    )
    _extra_state_keys: ClassVar[tuple[str, ...]] = ("boosters", "encoder")
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "max_rounds": Interval(numbers.Integral, 0, None),
        "patience": Interval(numbers.Integral, 0, None),
        "n_folds": Interval(numbers.Integral, 2, None),
        **tree_constraints(min_child_samples=0, limited_depth=False),
        "progress": check_progress_param,
        "early_stopping": StrOptions("holdout", "kfold", None),
        "validation_fraction": Interval(numbers.Real, 0, 1, closed="neither"),
        "rescale": "boolean",
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
        rescale: bool = True,
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
        self.rescale = rescale
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
        return {
            **self._loss().lightgbm_params,  # cross entropy: the binary log loss, also for soft labels
            "learning_rate": float(self.learning_rate),
            "max_depth": int(self.max_depth),
            "min_data_in_leaf": int(self.min_child_samples),
            "num_leaves": int(self.max_leaves),
            "lambda_l2": float(self.l2_regularization),
            "min_gain_to_split": float(self.min_gain_to_split),
            "min_sum_hessian_in_leaf": float(self.min_sum_hessian_in_leaf),
            "num_threads": lightgbm_threads(self.n_jobs, n_rows),
            "seed": seed,
            "deterministic": True,
            layout: True,
            "verbosity": -1,
            **forwarded(self.lightgbm_params),
        }

    def _loss(self) -> Any:
        """The loss of the rounds (:class:`~mcal.mcgrad.engine.LogLoss`): link, LightGBM objective, rescaling sums."""
        return LOG_LOSS

    # -- fit and predict -------------------------------------------------------------------------------------
    @lightgbm_errors_name_lightgbm_params
    def _fit(self, y_prob, y, sample_weight, X) -> None:
        check_float32_weights(sample_weight)
        split_seed, lgb_seed = self._seeds()
        X = np.empty((y_prob.shape[0], 0)) if X is None else X
        encoder = FeatureEncoder(self.categorical_features).fit(X)
        check_monotone_constraints(self.lightgbm_params, encoder)
        Xe = encoder.transform(X, n_extra_columns=1)
        F0 = self._loss().link(y_prob)
        engine = LocalEngine(
            self._lightgbm_params(lgb_seed, y_prob.shape[0]),
            int(self.n_estimators),
            np.flatnonzero(encoder.categorical_).tolist(),
            self._loss(),
        )

        whole = Part(Xe, y, sample_weight, F0)
        engine.binned(whole)  # binned once, shared by the early-stopping parts and reused by the refit
        # The rounds need feature values only for the validation rows and the rare rows predicted again:
        # they are encoded from X when asked, and the encoded matrix is freed before the rounds.
        whole.X = _EncodedRows(encoder, X, Xe.shape)
        del Xe

        def splits() -> tuple[list[Part], list[Part]]:
            rows = [
                (np.sort(tr), va)
                for tr, va in _split_rows(y, self.early_stopping, self.validation_fraction, self.n_folds, split_seed)
            ]
            return (
                [Part(whole.X, y[tr], sample_weight[tr], F0[tr], engine.binned_rows(whole, tr), tr) for tr, _ in rows],
                [Part(whole.X[va], y[va], sample_weight[va], F0[va]) for _, va in rows],
            )

        self._fit_rounds(engine, encoder, whole, splits)

    def _seeds(self) -> tuple[int, int]:
        """The seeds of the early-stopping split and of LightGBM, both drawn from ``random_state``."""
        rng = np.random.default_rng(self.random_state)
        split_seed, lgb_seed = (int(s) for s in rng.integers(0, 2**31 - 1, size=2))
        return split_seed, lgb_seed

    @lightgbm_errors_name_lightgbm_params
    def _fit_rounds(self, engine: Any, encoder: FeatureEncoder, whole: Part, splits: Any) -> None:
        """Choose the number of rounds on ``splits()`` (early stopping), refit them on ``whole``, set the state.

        ``engine`` runs the rounds (:class:`~mcal.mcgrad.engine.LocalEngine` or one with the same methods);
        ``splits`` returns the (train, validation) parts and is called only when early stopping is on.
        """
        losses: list[float] = []
        n_rounds = int(self.max_rounds)
        if self.early_stopping is not None and n_rounds > 0:
            train, valid = splits()
            _check_split_weights(engine, train, valid, self.random_state)
            path = boost_rounds(
                engine,
                train,
                valid,
                max_rounds=n_rounds,
                patience=int(self.patience),
                rescale=bool(self.rescale),
                show_progress=self.progress,
                desc="MCGrad early stopping",
            )
            del train, valid
            losses, n_rounds = path.losses, path.best_round
            if n_rounds == self.max_rounds:
                warn(f"early stopping chose max_rounds={self.max_rounds} rounds; a larger max_rounds may fit better")
        final = boost_rounds(
            engine,
            [whole],
            None,
            max_rounds=n_rounds,
            patience=0,
            rescale=bool(self.rescale),
            show_progress=self.progress,
            desc="MCGrad refit",
        )
        self.encoder_ = encoder
        self._single_row = self._compiled = None  # both belong to the previous boosters
        self.boosters_ = final.boosters
        self.n_rounds_ = len(final.boosters)
        self.rescale_factors_ = np.asarray(final.factors, dtype=np.float64)
        self.validation_losses_ = np.asarray(losses, dtype=np.float64)
        self.feature_importances_ = self._importances()
        self._set_feature_attrs()

    def _check_X_columns(self, X: Any) -> None:
        self.encoder_.check_columns(X)

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        if X is None:
            if self.n_features_in_:
                raise ValueError(f"X must hold the {self.n_features_in_} feature(s) seen at fit; got None")
            X = np.empty((y_prob.shape[0], 0))
        Xe = self.encoder_.transform(X, n_extra_columns=1)
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
                loss.link(y_prob),
                lightgbm_threads(self.n_jobs, Xe.shape[0]),
                getattr(self, "_single_row", None),
                getattr(self, "_compiled", None),
            )
        )

    def compile(self, n_jobs: int | None = None) -> MCGrad:
        """Compile the fitted rounds to native code with lleaves, for faster batch :meth:`predict`.

        Each round's LightGBM booster is compiled by lleaves [1]_ (through llvmlite; no C compiler needed).
        Afterwards :meth:`predict` evaluates the recursion ``F_t = theta_t (F_{t-1} + h_t(x, F_{t-1}))`` of
        Algorithm 1 of [2]_ with the compiled trees for inputs of two rows or more: the same trees, so the
        same probabilities up to about 1e-15 (lleaves sums a round's trees in another order), in a fraction
        of the time (``benchmarks/mcgrad_vs_reference.py`` measures it, row "mcal compiled", with the
        compile time as ``compile_s``: a fraction of a second per round). One-row calls keep LightGBM's
        single-row C path, which was measured faster for them than lleaves' per-call overhead allows.

        The compiled code belongs to this process: model files (:func:`mcal.save`) keep the LightGBM text, so
        a loaded model must be compiled again, and pickles and copies drop it (Dask workers that receive the
        model pickled predict through LightGBM, to the same values). Fitting again discards it. Needs the ``compiled`` extra:
        lleaves 1.3 with ``llvmlite<0.45`` (see Raises).

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
        importance : Series of shape (n_features_in_ + 1,)
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

    # -- model files -----------------------------------------------------------------------------------------
    def _extra_state(self) -> dict[str, Any]:
        return {"boosters": [b.model_to_string() for b in self.boosters_], "encoder": self.encoder_.to_dict()}

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        super()._restore_extra_state(state, tensors)
        texts = state.get("boosters")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError("model data field state.boosters must be a list of LightGBM model strings")
        self.encoder_ = FeatureEncoder.from_dict(state.get("encoder"))
        self._single_row = self._compiled = None
        kinds = [*self.encoder_.categorical_, False]  # the score column is numerical
        self.boosters_ = [
            booster_from_text(text, f"state.boosters[{i}]", self._loss().model_objective, kinds)
            for i, text in enumerate(texts)
        ]
        self._set_feature_attrs()

    def _validate_state(self) -> None:
        T = self.n_rounds_
        if isinstance(T, bool) or not isinstance(T, int) or T < 0:
            raise ValueError(f"model data field state.n_rounds_ must be a non-negative int; got {T!r}")
        d = self.encoder_.n_features_in_
        if len(self.boosters_) != T:
            raise ValueError(
                f"model data field state.boosters must hold n_rounds_={T} models; got {len(self.boosters_)}"
            )
        for i, booster in enumerate(self.boosters_):
            if booster.num_feature() != d + 1:
                raise ValueError(
                    f"model data field state.boosters[{i}] must use {d + 1} features (the encoder's {d} and the "
                    f"score); got {booster.num_feature()}"
                )
        lo, hi = self._loss().theta_bounds
        checks = (
            ("rescale_factors_", (T,), lambda a: np.all((a >= lo) & (a <= hi)), f"in [{lo}, {hi}]"),
            (
                "validation_losses_",
                None,
                lambda a: (a.size == 0 or a.size > T) and np.all(a >= 0),
                f"non-negative, and none or more than n_rounds_={T} of them",
            ),
            ("feature_importances_", (d + 1,), lambda a: np.all(a >= 0), "non-negative"),
        )
        for name, shape, rule, text in checks:
            arr = getattr(self, name)
            if not isinstance(arr, np.ndarray) or arr.dtype != np.float64 or arr.ndim != 1:
                raise ValueError(f"model data field state.{name} must be a 1-D float64 array")
            if shape is not None and arr.shape != shape:
                raise ValueError(f"model data field state.{name} must have shape {shape}; got {arr.shape}")
            if not rule(arr):
                raise ValueError(f"model data field state.{name} must hold values {text}")


class _EncodedRows:
    """Rows of ``X`` encoded on demand (``rows[idx]``, with the spare score column), shaped like the full encoding."""

    def __init__(self, encoder: FeatureEncoder, X: Any, shape: tuple[int, int]) -> None:
        self.encoder, self.X, self.shape = encoder, X, shape

    def __getitem__(self, rows: NDArray[np.intp] | NDArray[np.bool_]) -> NDArray[np.float64]:
        subset = self.X.iloc[rows] if isinstance(self.X, pd.DataFrame) else np.asarray(self.X)[rows]
        return self.encoder.transform(subset, n_extra_columns=1)


def _check_split_weights(engine: Any, train: list[Part], valid: list[Part], random_state: Any) -> None:
    """Raise ValueError if an early-stopping part has no positive weight (LightGBM raised "sum of weights is
    zero" on a training part; a validation part's loss was 0/0)."""
    for kind, parts in (("training", train), ("validation", valid)):
        for part in parts:
            if not engine.log_loss_sum(part.y, part.F, part.w)[1] > 0:
                raise ValueError(
                    f"sample_weight must leave positive weight in every early-stopping part; the {kind} part of the "
                    f"split drawn with random_state={random_state!r} has none (give more rows positive weight, "
                    "or use another random_state, or early_stopping=None)"
                )


def _split_rows(
    y: NDArray[np.float64], method: str, validation_fraction: float, n_folds: int, seed: int
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """(train, validation) row indices for early stopping; stratified by label when labels are 0/1.

    Raises
    ------
    ValueError
        If there are too few rows (of each class, for 0/1 labels) to split.
    """
    from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold, StratifiedShuffleSplit

    binary = bool(np.all((y == 0) | (y == 1)))
    need = n_folds if method == "kfold" else 2
    counts = np.bincount(y.astype(np.intp), minlength=2) if binary else np.array([y.size])
    if counts.min() < need:
        what = "of each class" if binary else "in all"
        raise ValueError(
            f"y must have at least {need} rows {what} for early_stopping={method!r}; got {counts.tolist()} "
            "(use early_stopping=None with a fixed max_rounds on data this small)"
        )
    rows = np.zeros(y.size)
    if method == "kfold":
        splitter = (StratifiedKFold if binary else KFold)(n_splits=n_folds, shuffle=True, random_state=seed)
    else:
        splitter = (StratifiedShuffleSplit if binary else ShuffleSplit)(
            n_splits=1, test_size=validation_fraction, random_state=seed
        )
    try:
        return list(splitter.split(rows, y if binary else None))
    except ValueError as exc:
        what = (
            f"validation_fraction={validation_fraction} of {y.size} rows"
            if method == "holdout"
            else f"n_folds={n_folds}"
        )
        raise ValueError(f"y cannot be split for early_stopping={method!r} with {what}: {exc}") from exc

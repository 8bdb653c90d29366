"""Group-based multicalibration baselines of the MCGrad paper: HKRR and DFMC.

Both need groups, which reach ``fit`` and ``predict`` through ``X`` in one of two ways (``groups=``):

- ``"columns"`` (default): the columns of ``X`` are used as they are. For :class:`HKRR` every column is one
  group's boolean membership indicator; :class:`DFMC` reads ``X`` as a numeric feature matrix in which group
  indicators are ordinary 0/1 columns (the MCGrad paper gives DFMC the group indicators as its features).
- ``"generated"``: ``X`` holds features, and the groups are the segments :func:`mcal.segments.generate_segments`
  builds from them at fit (settings in ``segment_params``); their definitions are saved with the model and
  evaluated on the ``X`` given to ``predict``.

Both set the class attribute ``uses_groups``, which tells the demo and benchmarks to pass prespecified group
indicators (e.g. :func:`mcal.datasets.bank_marketing_groups`) rather than raw features.
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.special import expit

from mcal._base import BaseCalibrator
from mcal._constraints import NON_NEGATIVE_INT, POSITIVE_INT, Interval
from mcal._features.categorical import check_categorical_features
from mcal._features.encoder import FeatureEncoder
from mcal._lightgbm import booster_from_text, lightgbm_threads, tree_constraints
from mcal._optional import import_optional
from mcal._persistence.state import Array
from mcal._validation import check_real, logit, warn
from mcal.groups._hkrr import hkrr_multicalibrate, hkrr_replay, prediction_levels
from mcal.groups._inputs import GROUP_CONSTRAINTS, SEGMENTS_STATE, GroupInput, group_masks

#: The objective= line of DFMC's LightGBM model text (LightGBM's "binary" objective with its default sigmoid).
_MODEL_OBJECTIVE = "binary sigmoid:1"

#: The HKRR core (in :mod:`mcal.groups._hkrr`) stays importable from here.


def _check_lam(name: str, lam: Any) -> None:
    """The rule of HKRR's ``lam``: a number in (0, 1] that divides 1 into an integer number of levels."""
    check_real(name, lam, "a number in (0, 1]", lambda v: 0 < v <= 1)
    if abs(round(1.0 / lam) * lam - 1.0) > 1e-9:
        raise ValueError(f"{name} must divide 1 into an integer number of levels (e.g. 0.1, 0.05); got {lam!r}")


class HKRR(GroupInput, BaseCalibrator):
    """HKRR multicalibration: iterative patching of (group, prediction level) cells.

    Parameters
    ----------
    lam : float in (0, 1], default=0.1
        Width of the prediction levels, lambda; ``1 / lam`` must be an integer (10 levels by default).
    alpha : float in (0, 1], default=0.05
        Cells with at least ``alpha * lam`` of their group's weight are checked; with the oracle, one is
        patched when its mean residual reaches ``alpha / 2``. The MCGrad paper (after Hansen et al. 2024)
        picks the best of 0.1, 0.05, 0.025 and 0.0125 on validation data.
    oracle : bool, default=True
        Use the guess-and-check oracle with ``omega = alpha / 4`` (noisy patches, as benchmarked by Hansen
        et al. and the MCGrad paper); otherwise patch a cell by its mean residual when that is at least
        ``lam / 10``.
    max_iter : int >= 1, default=1000
        Largest number of passes over all cells; a :class:`~mcal.CalibrationWarning` says when it is reached.
    snap : bool, default=True
        Snap every prediction to its level's calibration mean after the patches, as Hansen et al.'s
        implementation benchmarked by the MCGrad paper does (at most ``1 / lam`` distinct outputs). The
        alpha-multicalibration that the fit reaches holds for the patched predictions before the snap; the snap
        moves a cell's mean prediction within its level, so by less than ``lam``, and on the calibration data
        it can leave cells with errors above ``alpha``. ``snap=False`` returns the patched predictions.
    groups : {"columns", "generated"}, default="columns"
        ``"columns"``: every column of ``X`` is a boolean group indicator. ``"generated"``: the groups are the
        segments generated from the features in ``X`` (:func:`mcal.segments.generate_segments`).
    segment_params : dict or None, default=None
        Settings of :func:`mcal.segments.generate_segments` for ``groups="generated"`` only (its defaults otherwise:
        conjunctions of up to 3 feature conditions, at most 1000 segments, the whole table included).
    random_state : int >= 0 or None, default=None
        Seeds the order of groups and levels and the oracle's noise. An integer, not a Generator, so that the
        model file records it.

    Attributes
    ----------
    n_groups_ : int
        Number of groups seen at fit.
    group_names_ : list of str or None
        Column names of a DataFrame ``X`` at fit (``groups="columns"``); ``predict`` then requires a DataFrame
        with these columns in this order, so that no patch lands on another group. None for arrays.
    segments_ : dict or None
        Definitions of the generated segments (``Segments.to_dict()``), None for ``groups="columns"``.
    segment_columns_ : list of str or None
        For ``groups="generated"`` fitted on a DataFrame, the columns the segments read, which ``predict`` takes
        from ``X`` by name; None otherwise (an array's columns are read by position).
    update_groups_, update_levels_ : ndarray of shape (n_updates,), int64
        The patched (group, level) cells, in order.
    update_deltas_ : ndarray of shape (n_updates,)
        Shift of each patch, probability units.
    level_values_ : ndarray of shape (n_levels,)
        Calibration-set mean prediction of each level after patching; predictions are snapped to it (``snap``).
    level_seen_ : ndarray of shape (n_levels,), bool
        Levels that held calibration rows (predictions in an empty level are not snapped).
    n_passes_ : int
        Passes made at fit.

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters), ``X=None``, an ``X`` whose columns are
        not boolean (or 0/1) indicators with ``groups='columns'``, or invalid scores, labels or weights (as
        :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`).
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters), or an input is not array-like.

    Notes
    -----
    Hebert-Johnson, Kim, Reingold and Rothblum (2018), Algorithm 1, in the form of Hansen et al.'s (2024)
    implementation used by the MCGrad paper (section 4.1; the benchmark's copy is
    ``mcb_algorithms/HKRR/hkrr.py`` in github.com/facebookresearch/mcgrad_multicalibration_at_web_scale,
    labelled "HKRR, Algorithm 1"): levels ``(k lambda, (k+1) lambda]`` (the first one closed at 0); groups
    and levels visited in one random order, drawn once at fit; a pass patches every checked cell it finds
    miscalibrated, in sequence; the fit stops after a pass without patches. (The PyPI package
    ``multicalibration``, github.com/sid-devic/multicalibration, reshuffles the order at every pass
    instead.) Prediction replays the patches in order on the new rows, then (``snap=True``) snaps each
    prediction to its level's calibration mean. Cost grows linearly with the number of groups at fit and
    with the number of patches at predict (the MCGrad paper's Figure 3).
    Groups come as ``X``: one boolean indicator column per group (include a column of all ``True`` to also
    calibrate the whole population), or segments generated from its features. Weighted: cell sizes and means use ``sample_weight``, so weight k is k
    copies of a row. Not monotone in the score.

    References
    ----------
    .. [1] Hebert-Johnson, Kim, Reingold and Rothblum, "Multicalibration: Calibration for the
       (Computationally-Identifiable) Masses", ICML 2018, PMLR 80, pp. 1939-1948.
    .. [2] Hansen, Devic, Nakkiran and Sharan, "When is Multicalibration Post-Processing Necessary?",
       NeurIPS 2024 (Advances in Neural Information Processing Systems 37, pp. 38383-38455),
       arXiv:2406.06487.
    .. [3] Tax et al., "MCGrad: Multicalibration at Web Scale", arXiv:2509.19884, section 4.1.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> groups = rng.random((2000, 2)) < 0.5
    >>> p = rng.uniform(0.1, 0.9, 2000)
    >>> y = rng.random(2000) < np.clip(p + 0.2 * groups[:, 0], 0, 1)
    >>> cal = HKRR(random_state=0).fit(p, y, X=groups)
    >>> q = cal.predict(p, X=groups)
    >>> bool(abs(np.mean(y[groups[:, 0]]) - np.mean(q[groups[:, 0]])) < 0.02)
    True
    """

    uses_features: ClassVar[bool] = True
    requires_features: ClassVar[bool] = True
    #: ``X`` holds prespecified group indicators (the demo passes the dataset's groups, not its features).
    uses_groups: ClassVar[bool] = True
    _state_attrs: ClassVar[tuple[str, ...]] = (
        "n_groups_",
        "update_groups_",
        "update_levels_",
        "update_deltas_",
        "level_values_",
        "level_seen_",
        "n_passes_",
        "segments_",
    )
    _extra_state_keys: ClassVar[tuple[str, ...]] = ("group_names", "segment_columns")
    _state_constraints: ClassVar[dict[str, Any]] = {
        **SEGMENTS_STATE,
        "n_groups_": POSITIVE_INT,
        "update_groups_": Array("i", "integers"),
        "update_levels_": Array("i", "integers"),
        "update_deltas_": Array(),
        "level_values_": Array(probabilities=True),
        "level_seen_": Array("b", "booleans"),
        "n_passes_": POSITIVE_INT,
    }
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "lam": _check_lam,
        "alpha": Interval(numbers.Real, 0, 1, closed="right"),
        "oracle": "boolean",
        "snap": "boolean",
        "max_iter": POSITIVE_INT,
        "random_state": "random_state",
        **GROUP_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        lam: float = 0.1,
        alpha: float = 0.05,
        oracle: bool = True,
        max_iter: int = 1000,
        snap: bool = True,
        groups: str = "columns",
        segment_params: dict | None = None,
        random_state: Any = None,
    ) -> None:
        self.lam = lam
        self.alpha = alpha
        self.oracle = oracle
        self.max_iter = max_iter
        self.snap = snap
        self.groups = groups
        self.segment_params = segment_params
        self.random_state = random_state

    def _n_levels(self) -> int:
        return round(1.0 / self.lam)

    def _members(self, X: Any, n_samples: int, *, fitting: bool) -> list[NDArray[np.intp]]:
        """Sorted row indices of every group."""
        if self.groups == "generated":
            segments = self._segments(X, fitting=fitting)
            if fitting:
                self.group_names_ = None
            return [segments.indices(k) for k in range(segments.n_segments)]
        if fitting:
            self.segments_ = self.segment_columns_ = None
            self.group_names_ = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
        else:
            self._check_X_columns(X)
        masks = group_masks(X, n_samples)
        return [np.flatnonzero(masks[:, g]) for g in range(masks.shape[1])]

    def _column_names(self) -> list[str] | None:
        return self.group_names_

    def _check_X_columns(self, X: Any) -> None:
        names = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
        if self.groups == "columns" and self.group_names_ is not None and names != self.group_names_:
            got = "an array without column names" if names is None else f"columns {names[:10]}"
            raise ValueError(
                f"X must be a DataFrame with the group columns seen at fit, in the same order {self.group_names_[:10]}; "
                f"got {got}"
            )

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        members = self._members(X, y_prob.shape[0], fitting=True)
        result = hkrr_multicalibrate(
            y_prob,
            y,
            sample_weight,
            members,
            n_levels=self._n_levels(),
            alpha=float(self.alpha),
            oracle=bool(self.oracle),
            rng=np.random.default_rng(self.random_state),
            max_iter=int(self.max_iter),
        )
        if not result.converged:
            warn(f"HKRR stopped after max_iter={self.max_iter} passes with miscalibrated cells left; raise max_iter")
        self.n_groups_ = len(members)
        self.update_groups_, self.update_levels_ = result.update_groups, result.update_levels
        self.update_deltas_ = result.update_deltas
        self.level_values_, self.level_seen_ = result.level_means, result.level_seen
        self.n_passes_ = result.n_passes

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        members = self._members(X, y_prob.shape[0], fitting=False)
        if len(members) != self.n_groups_:
            raise ValueError(f"X must have {self.n_groups_} group columns, as at fit; got {len(members)}")
        n_levels = self._n_levels()
        p = hkrr_replay(y_prob, members, self.update_groups_, self.update_levels_, self.update_deltas_, n_levels)
        if not self.snap:
            return p
        level = prediction_levels(p, n_levels)
        return np.where(self.level_seen_[level], self.level_values_[level], p)

    def _check_X(self, X, n_samples, *, fitting):
        if X is None:
            raise ValueError("X must hold one boolean group-indicator column per group for HKRR; got None")
        return super()._check_X(X, n_samples, fitting=fitting)

    def _extra_state(self) -> dict[str, Any]:
        return {"group_names": self.group_names_, **self._group_input_state()}

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        super()._restore_extra_state(state, tensors)
        self.group_names_ = state.get("group_names")  # absent from files written before it was recorded
        self._restore_group_input_state(state)

    def _validate_state(self) -> None:
        n_levels = self._n_levels()
        g, v, d = self.update_groups_, self.update_levels_, self.update_deltas_
        self._check_segments_state(self.n_groups_)
        names = self.group_names_
        if names is not None and (
            self.groups != "columns"
            or not isinstance(names, list)
            or len(names) != self.n_groups_
            or not all(isinstance(c, str) for c in names)
        ):
            raise ValueError(f"model data field state.group_names_ must be null or {self.n_groups_} column names")
        if g.shape != v.shape or g.shape != d.shape:
            raise ValueError("model data fields state.update_* must be 1-D arrays of equal length")
        if np.any((g < 0) | (g >= self.n_groups_)) or np.any((v < 0) | (v >= n_levels)) or np.any(np.abs(d) > 1):
            raise ValueError("model data fields state.update_* must name existing groups and levels, |delta| <= 1")
        vals, seen = self.level_values_, self.level_seen_
        if vals.shape != (n_levels,) or seen.shape != (n_levels,):
            raise ValueError(f"model data fields state.level_* must hold {n_levels} probabilities and flags")


class DFMC(GroupInput, BaseCalibrator):
    """Discretization-free multicalibration (DFMC): one LightGBM model of depth-2 trees on the logit offset.

    Parameters
    ----------
    n_estimators : int >= 1, default=100
        Boosting rounds (trees). The integers below lie within LightGBM's int32.
    learning_rate : float > 0, default=0.1
        Shrinkage of every tree.
    max_depth : int >= 1, default=2
        Depth of every tree; 2 is DFMC's defining choice.
    max_leaves : int in [2, 131072], default=31
        Leaf cap (at depth 2 a tree has at most 4 leaves).
    min_child_samples : int >= 1, default=20
        Fewest rows in a leaf.
    l2_regularization : float >= 0, default=0.0
        L2 penalty on leaf values.
    min_gain_to_split : float >= 0, default=0.0
        Smallest loss reduction for a split.
    min_sum_hessian_in_leaf : float >= 0, default=1e-3
        Smallest hessian sum in a leaf.
    groups : {"columns", "generated"}, default="columns"
        ``"columns"``: the columns of ``X`` are the features (group indicators as 0/1 or bool columns, other
        numerical or categorical features beside them). ``"generated"``: the features are the memberships of
        the segments generated from the features in ``X`` (:func:`mcal.segments.generate_segments`).
    segment_params : dict or None, default=None
        Settings of :func:`mcal.segments.generate_segments`, for ``groups="generated"`` only.
    categorical_features : "from_dtype", None, or array-like, default="from_dtype"
        Which columns of ``X`` are categorical (``groups="columns"``), as for :class:`~mcal.MCGrad`: pandas
        category, bool and string columns by default, or indices or names (shape (n_categorical,)) or a boolean
        mask (shape (n_features,)); they become LightGBM categorical features.
    n_jobs : int other than 0, or None, default=None
        LightGBM threads, at most the cores; negative values count back from the cores (-1: all). None uses
        one thread per 10,000 rows, as :class:`~mcal.MCGrad` does; the fitted model can depend on the thread
        count, as MCGrad's can: pass an int for fits that repeat on any machine load.
    random_state : int >= 0 or None, default=None
        Seeds LightGBM. An integer, not a Generator, so that the model file records it.

    Attributes
    ----------
    n_features_in_ : int
        Features the trees see besides the logit: columns of ``X``, or generated segments.
    segments_ : dict or None
        Definitions of the generated segments (``Segments.to_dict()``), None for ``groups="columns"``.
    segment_columns_ : list of str or None
        For ``groups="generated"`` fitted on a DataFrame, the columns the segments read, which ``predict`` takes
        from ``X`` by name; None otherwise (an array's columns are read by position).
    encoder_ : FeatureEncoder or None
        Encoding of the columns of ``X`` (``groups="columns"``), as MCGrad's; None for generated segments.
    booster_ : lightgbm.Booster
        The fitted trees, stored in model files as LightGBM's model text.

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters), ``X=None``, features that
        :class:`~mcal.MCGrad` would refuse too, or invalid scores, labels or weights (as
        :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`).
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters), or an input that is not array-like.
    ImportError
        From :meth:`fit`: LightGBM is not installed (``pip install "mcal[mcgrad]"``).

    Notes
    -----
    Jin et al. (2025), as the MCGrad paper runs it (section 4.1, "Baselines" and "Hyperparameters", and its
    benchmark code; section 7 there summarises DFMC as an ensemble of depth-two trees fitted to the residuals
    of the uncalibrated predictor on the features and its predictions): one gradient-boosted
    tree ensemble minimising the weighted log loss, started from the uncalibrated logit as an offset
    (``init_score``), on the features in ``X`` plus the uncalibrated logit as a split feature; the
    calibrated probability is ``expit(logit(p) + F(x, logit(p)))``. The defaults are the benchmark's: LightGBM's
    defaults with ``max_depth=2``. This follows the MCGrad benchmark's re-implementation through MCGrad's
    machinery (log loss on the logit), whose numbers the MCGrad paper reports, not the original authors'
    code (github.com/hjenryin/Discretization-free-MC), which fits the squared error on the probability scale
    (how the two differ: ``docs/defaults/groups.rst``). Groups are given as 0/1 (or bool) columns of ``X``, alone or beside other features (encoded as MCGrad encodes
    them). Sample weights enter LightGBM's loss; its histogram binning and ``min_child_samples`` count rows,
    so weight k approximates, but does not equal, k copies of a row. Not monotone in the score.

    References
    ----------
    .. [1] Jin, Ding, Ngo and Wu, "Discretization-free Multicalibration through Loss Minimization over Tree
       Ensembles", NeurIPS 2025, arXiv:2505.17435.
    .. [2] Tax et al., "MCGrad: Multicalibration at Web Scale", arXiv:2509.19884, sections 4.1 and 7.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> groups = rng.random((4000, 2)) < 0.5
    >>> p = rng.uniform(0.1, 0.9, 4000)
    >>> y = rng.random(4000) < np.clip(p + 0.2 * groups[:, 0], 0, 1)
    >>> cal = DFMC(n_jobs=1, random_state=0).fit(p, y, X=groups)
    >>> q = cal.predict(p, X=groups)
    >>> bool(abs(np.mean(y[groups[:, 0]]) - np.mean(q[groups[:, 0]])) < 0.02)
    True
    """

    uses_features: ClassVar[bool] = True
    requires_features: ClassVar[bool] = True
    #: ``X`` holds prespecified group indicators (the demo passes the dataset's groups, not its features).
    uses_groups: ClassVar[bool] = True
    _state_attrs: ClassVar[tuple[str, ...]] = ("n_features_in_", "segments_")
    _extra_state_keys: ClassVar[tuple[str, ...]] = ("booster", "encoder", "segment_columns")
    _state_constraints: ClassVar[dict[str, Any]] = {
        **SEGMENTS_STATE,
        "n_features_in_": NON_NEGATIVE_INT,
    }
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **tree_constraints(min_child_samples=1, limited_depth=True),
        "random_state": "random_state",
        **GROUP_CONSTRAINTS,
        "categorical_features": check_categorical_features,
    }

    def __init__(
        self,
        *,
        n_estimators: int = 100,
        learning_rate: float = 0.1,
        max_depth: int = 2,
        max_leaves: int = 31,
        min_child_samples: int = 20,
        l2_regularization: float = 0.0,
        min_gain_to_split: float = 0.0,
        min_sum_hessian_in_leaf: float = 1e-3,
        groups: str = "columns",
        segment_params: dict | None = None,
        categorical_features: Any = "from_dtype",
        n_jobs: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.min_child_samples = min_child_samples
        self.l2_regularization = l2_regularization
        self.min_gain_to_split = min_gain_to_split
        self.min_sum_hessian_in_leaf = min_sum_hessian_in_leaf
        self.groups = groups
        self.segment_params = segment_params
        self.categorical_features = categorical_features
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _params(self, n_rows: int | None = None) -> dict[str, Any]:
        seed = int(np.random.default_rng(self.random_state).integers(2**31 - 1))
        return {
            "objective": "binary",
            "learning_rate": float(self.learning_rate),
            "max_depth": int(self.max_depth),
            "num_leaves": int(self.max_leaves),
            "min_data_in_leaf": int(self.min_child_samples),
            "lambda_l2": float(self.l2_regularization),
            "min_gain_to_split": float(self.min_gain_to_split),
            "min_sum_hessian_in_leaf": float(self.min_sum_hessian_in_leaf),
            "seed": seed,
            "deterministic": True,
            "num_threads": lightgbm_threads(self.n_jobs, n_rows),
            "verbosity": -1,
        }

    def _design(self, y_prob: NDArray[np.float64], X: Any, *, fitting: bool) -> NDArray[np.float64]:
        """The features (encoded columns of ``X``, or segment memberships) with the logit as the last column."""
        if self.groups == "generated":
            masks = self._segments(X, fitting=fitting).to_masks()
            features = np.empty((masks.shape[0], masks.shape[1] + 1))
            features[:, :-1] = masks
            if fitting:
                self.encoder_ = None
        else:
            if fitting:
                self.segments_ = self.segment_columns_ = None
                self.encoder_ = FeatureEncoder(self.categorical_features).fit(X)
            assert self.encoder_ is not None  # fitted with groups="columns"
            features = self.encoder_.transform(X, n_extra_columns=1)
        features[:, -1] = logit(y_prob)
        return features

    def _column_names(self) -> list[str] | None:
        return None if self.encoder_ is None else self.encoder_.named_columns()

    def _check_X_columns(self, X: Any) -> None:
        if self.encoder_ is not None:  # the features of groups='columns', by position; generated segments by name
            self.encoder_.check_columns(X)

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        lgb = import_optional("lightgbm")
        features = self._design(y_prob, X, fitting=True)
        categorical = [] if self.encoder_ is None else np.flatnonzero(self.encoder_.categorical_).tolist()
        data = lgb.Dataset(
            features,
            label=y,
            weight=sample_weight,
            init_score=features[:, -1].copy(),
            categorical_feature=categorical,
            free_raw_data=True,
        )
        self.booster_ = lgb.train(self._params(features.shape[0]), data, num_boost_round=int(self.n_estimators))
        self.n_features_in_ = features.shape[1] - 1

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        features = self._design(y_prob, X, fitting=False)
        threads = lightgbm_threads(self.n_jobs, features.shape[0])
        return expit(features[:, -1] + self.booster_.predict(features, raw_score=True, num_threads=threads))

    def _check_X(self, X, n_samples, *, fitting):
        if X is None:
            raise ValueError("X must hold the features and group indicators for DFMC; got None")
        return super()._check_X(X, n_samples, fitting=fitting)

    def _extra_state(self) -> dict[str, Any]:
        encoder = None if self.encoder_ is None else self.encoder_.to_dict()
        return {"booster": self.booster_.model_to_string(), "encoder": encoder, **self._group_input_state()}

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        super()._restore_extra_state(state, tensors)
        self._restore_group_input_state(state)
        encoder = state.get("encoder")
        self.encoder_ = None if encoder is None else FeatureEncoder.from_dict(encoder)
        text = state.get("booster")
        if not isinstance(text, str):
            raise ValueError(f"model data field state.booster must be LightGBM model text; got {type(text).__name__}")
        self.booster_ = booster_from_text(text, "state.booster", _MODEL_OBJECTIVE)  # checked before LightGBM parses it

    def _validate_state(self) -> None:
        n = self.n_features_in_
        if self.booster_.num_feature() != n + 1:
            raise ValueError("model data field state.booster must use n_features_in_ + 1 features")
        if (self.encoder_ is None) != (self.groups == "generated") or (
            self.encoder_ is not None and self.encoder_.n_features_in_ != n
        ):
            raise ValueError(f"model data field state.encoder must encode the {n} columns of X for groups='columns'")
        self._check_segments_state(n)

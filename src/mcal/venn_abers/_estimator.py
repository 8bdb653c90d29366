"""The Venn-Abers calibrator: inductive (IVAP) and cross (CVAP) Venn-Abers predictors of binary scores."""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.model_selection import StratifiedKFold

from mcal._base import BaseCalibrator
from mcal._constraints import Interval
from mcal._persistence.state import Array, Each
from mcal._validation import check_y_prob, output_dtype
from mcal.venn_abers._core import csd_points, merge_bounds, venn_abers_bounds, venn_abers_fits

#: Rounding allowed in a model file's fits: slopes of the same diagram computed from different corners.
_TOL = 1e-12


class VennAbers(BaseCalibrator):
    """Venn-Abers predictor: a pair of isotonic fits that bound the calibrated probability, merged into one.

    For a test score, ``p0`` is the isotonic regression's value there after adding the test point with label 0
    to the calibration data, and ``p1`` the value with label 1; ``p0 <= p1``. :meth:`predict_interval` returns
    the pair, :meth:`predict` the merged probability ``p1 / (1 - p0 + p1)``.

    Parameters
    ----------
    n_splits : int >= 2 or None, default=None
        None: the inductive predictor (IVAP) on all calibration rows. An integer: the cross predictor (CVAP) of
        the paper's section 4, one IVAP per fold of a stratified ``n_splits``-fold split of the calibration
        rows, merged with geometric means (Notes). With scores from a model trained elsewhere the folds only
        split the calibration data, so each IVAP sees ``1 / n_splits`` of it; the IVAP is the default.
    random_state : int >= 0 or None, default=None
        Seeds the shuffled stratified split of the CVAP (``sklearn.model_selection.StratifiedKFold``); unused by
        the IVAP.

    Attributes
    ----------
    calibration_scores_ : list of ndarray of shape (k_fold,)
        Per fold (one for the IVAP), the distinct calibration scores, strictly increasing, in probability units.
    f0_ : list of ndarray of shape (k_fold + 1,)
        Per fold, the isotonic fit with a test point of label 0: ``f0_[f][0] = 0`` below every score, then
        the value with the test point tied with each score (:func:`~mcal.venn_abers.venn_abers_fits`).
    f1_ : list of ndarray of shape (k_fold + 1,)
        Per fold, the fit with a test point of label 1 tied with each score, then 1 above every score.

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters); ``n_splits`` more than the rows (of
        positive weight) of either class; invalid scores, labels or weights, a single class, or any ``X`` (as
        :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`).
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters), or an input is not array-like.

    Notes
    -----
    Vovk, Petej and Fedorova (2015). Let :math:`f_y(s)` be the isotonic regression of the calibration labels on
    the scores with the test point :math:`(s, y)` added; then :math:`p_0 = f_0(s)` and :math:`p_1 = f_1(s)`.
    The fit computes both for every position of a test point at once from the cumulative sum diagram (the
    paper's Algorithms 1 to 4, one stack each; O(n log n) for the sort, then a loop over the distinct scores),
    and :meth:`predict` looks them up with a binary search. When the data are exchangeable, one of the two is
    perfectly calibrated (the validity of Venn predictors); the interval is wide where calibration data are
    scarce. The merged probability :math:`p = p_1 / (1 - p_0 + p_1)` minimises the worst-case log loss.

    The CVAP of ``K`` folds merges the folds' pairs :math:`(p_{0,k}, p_{1,k})` with geometric means,
    :math:`p = \\mathrm{GM}_k(p_{1,k}) / (\\mathrm{GM}_k(1 - p_{0,k}) + \\mathrm{GM}_k(p_{1,k}))` (the paper's
    log-loss merge, section 4), whose odds are the geometric mean of the folds' merged odds; its interval is the
    envelope :math:`(\\min_k p_{0,k}, \\max_k p_{1,k})`, which holds every fold's pair and so :math:`p`.

    Sample weights are frequency weights: a row of weight k counts as k copies of the row, and the test point
    counts as one row; rows of zero weight are dropped. Weights are therefore not scale-free: multiplying them
    all by c makes the test point count 1/c as much. The validity guarantee holds for integer weights.

    Scores outside the calibration range give ``p0 = 0`` below the smallest calibration score and ``p1 = 1``
    above the largest: the interval says that nothing is known there.

    References
    ----------
    .. [1] V. Vovk, I. Petej and V. Fedorova, "Large-scale probabilistic predictors with and without guarantees
       of validity", NeurIPS 2015, arXiv:1511.00213.
    .. [2] V. Vovk and I. Petej, "Venn-Abers predictors", UAI 2014, arXiv:1211.0025.

    Examples
    --------
    >>> import numpy as np
    >>> cal = VennAbers().fit(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 1, 0, 1]))
    >>> p0, p1 = cal.predict_interval(np.array([0.25]))
    >>> round(float(p0[0]), 6), round(float(p1[0]), 6)  # isotonic fits of 0, 1, [0], 0, 1 and 0, 1, [1], 0, 1
    (0.333333, 0.666667)
    >>> cal.predict(np.array([0.25])).tolist()
    [0.5]
    """

    _state_attrs: ClassVar[tuple[str, ...]] = ("calibration_scores_", "f0_", "f1_")
    #: One array per fold; how many folds (``n_splits``) and the bounds' order relate fields, for ``_validate_state``.
    _state_constraints: ClassVar[dict[str, Any]] = {
        "calibration_scores_": Each(Array(order="strict")),
        "f0_": Each(Array()),
        "f1_": Each(Array()),
    }
    _parameter_constraints: ClassVar[dict] = {
        "n_splits": [None, Interval(numbers.Integral, 2, None, rule="None or an integer >= 2")],
        "random_state": "random_state",
    }

    def __init__(self, *, n_splits: int | None = None, random_state: int | None = None) -> None:
        self.n_splits = n_splits
        self.random_state = random_state

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        keep = sample_weight > 0
        p, yy, w = y_prob[keep], y[keep], sample_weight[keep]
        folds = [np.arange(p.size)] if self.n_splits is None else self._folds(yy, int(self.n_splits))
        self.calibration_scores_, self.f0_, self.f1_ = [], [], []
        for rows in folds:
            scores, weight, positives = csd_points(p[rows], yy[rows], w[rows])
            f0, f1 = venn_abers_fits(weight, positives)
            self.calibration_scores_.append(scores)
            self.f0_.append(f0)
            self.f1_.append(f1)

    def _folds(self, y: NDArray[np.float64], n_splits: int) -> list[NDArray[np.intp]]:
        smallest = int(min(np.sum(y == 1), np.sum(y == 0)))
        if n_splits > smallest:
            raise ValueError(
                f"n_splits must be at most the number of rows (of positive weight) of either class, "
                f"{smallest}; got {n_splits}"
            )
        split = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=self.random_state)
        return [test for _, test in split.split(np.zeros(y.size), y)]

    def _fold_bounds(self, y_prob: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(p0, p1)`` of every fold, each of shape (n_folds, n_samples)."""
        pairs = [
            venn_abers_bounds(*fold, y_prob) for fold in zip(self.calibration_scores_, self.f0_, self.f1_, strict=False)
        ]
        return np.stack([pair[0] for pair in pairs]), np.stack([pair[1] for pair in pairs])

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        p0, p1 = self._fold_bounds(y_prob)
        if p0.shape[0] == 1:
            return merge_bounds(p0[0], p1[0])
        # geometric means over folds (p1 > 0 and p0 < 1: the test point's own label keeps them off 0 and 1)
        return merge_bounds(1.0 - np.exp(np.mean(np.log1p(-p0), axis=0)), np.exp(np.mean(np.log(p1), axis=0)))

    def predict_interval(self, y_prob: ArrayLike) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
        """Return the Venn-Abers pair ``(p0, p1)`` of each score.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples,)
            Uncalibrated probabilities in [0, 1].

        Returns
        -------
        p0, p1 : ndarray of shape (n_samples,)
            Lower and upper calibrated probability, ``p0 <= p1``, between which :meth:`predict` lies; for the
            CVAP the smallest ``p0`` and the largest ``p1`` of the folds. float32 if ``y_prob`` is float32, else
            float64.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        ValueError
            On NaN, infinite or out-of-range scores, or a 2-D ``y_prob``.
        TypeError
            If ``y_prob`` is not array-like or holds complex numbers.
        """
        self._check_fitted()
        p = check_y_prob(y_prob)
        dtype = output_dtype(y_prob)
        p0, p1 = self._fold_bounds(p)
        return p0.min(axis=0).astype(dtype, copy=False), p1.max(axis=0).astype(dtype, copy=False)

    def _validate_state(self) -> None:
        lists = {"calibration_scores_": self.calibration_scores_, "f0_": self.f0_, "f1_": self.f1_}
        n_folds = 1 if self.n_splits is None else int(self.n_splits)
        for name, value in lists.items():
            if len(value) != n_folds:
                raise ValueError(
                    f"model data field state.{name} must hold {n_folds} arrays (one per fold); got {len(value)}"
                )
        for f, (scores, f0, f1) in enumerate(zip(*lists.values(), strict=False)):
            if scores.size == 0 or f0.shape != (scores.size + 1,) or f1.shape != f0.shape:
                raise ValueError(
                    f"model data fields state.f0_[{f}] and state.f1_[{f}] must hold one more value than "
                    f"state.calibration_scores_[{f}] (at least one); got {f0.size}, {f1.size} and "
                    f"{scores.size}"
                )
            # p0 <= p1 at each score (f0_[j + 1] and f1_[j]); a tolerance for the rounding of the fits' slopes
            ordered = np.all(f0[1:] <= f1[:-1] + _TOL) and np.all(np.diff(f0) >= -_TOL) and np.all(np.diff(f1) >= -_TOL)
            if not ordered or np.any(f0 < 0) or np.any(f1 > 1):
                raise ValueError(
                    f"model data fields state.f0_[{f}] and state.f1_[{f}] must be non-decreasing "
                    "probabilities with p0 <= p1"
                )

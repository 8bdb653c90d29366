"""select_calibrator: cross-fit every candidate on the same folds, score the held-out rows, keep the simplest
method within the noise of the best."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

from mcal._base import BaseCalibrator
from mcal._features.table import as_frame, take_rows
from mcal._validation import (
    CalibrationWarning,
    check_both_classes,
    check_consistent,
    check_positive_int,
    check_random_state_param,
    check_real,
    check_sample_weight,
    check_X_type,
    check_y_prob,
    check_y_true,
)
from mcal.metrics import mce
from mcal.segments import generate_segments
from mcal.selection._candidates import cross_fits_itself, resolve_candidates
from mcal.selection._result import CalibratorSelection, comparison_table

#: Probabilities are clipped to [_CLIP, 1 - _CLIP] in the per-row log loss, as scikit-learn's ``log_loss`` (and so
#: :func:`mcal.metrics.log_loss`) clips them: the table's means equal that metric on the held-out predictions.
_CLIP = float(np.finfo(np.float64).eps)


def select_calibrator(
    y_prob: ArrayLike,
    y: ArrayLike,
    *,
    X: Any = None,
    field: Any = None,
    candidates: Any = None,
    cv: int = 5,
    se_tolerance: float = 1.0,
    sample_weight: ArrayLike | None = None,
    random_state: int | None = None,
) -> CalibratorSelection:
    """Choose a calibration method by cross-fitting the candidates on the same folds; refit the choice on all rows.

    Every candidate is fitted on ``cv - 1`` folds and predicts the held-out fold, on the same seeded, stratified
    folds, so that each row has one held-out prediction per candidate. The candidates are scored by the held-out
    log loss and, for information, by the multicalibration error; the chosen method is the simplest (in
    :data:`mcal.selection.COMPLEXITY_ORDER`) whose mean held-out log loss exceeds the best's by at most
    ``se_tolerance`` paired standard errors and whose held-out multicalibration error ``mce_sigma`` exceeds the
    best's by at most ``se_tolerance`` sigmas (with ``X``, whose segments the MCE is over), so that a complex
    method is never chosen for a gain within the noise, nor a simpler one that leaves a segment's miscalibration
    the best method removes.

    Parameters
    ----------
    y_prob : array-like of shape (n_samples,)
        Uncalibrated probabilities of the positive class, in [0, 1].
    y : array-like of shape (n_samples,)
        Binary labels, 0/1 or bool, with at least ``cv`` rows of each class.
    X : DataFrame or array-like of shape (n_samples, n_features), default=None
        Features: read by the candidates that use features (MCGrad), and the segments of the MCE are generated
        from them (:func:`mcal.segments.generate_segments` at its defaults). Univariate candidates ignore them.
    field : str or int, default=None
        The field (context) column of ``X``, for the field-aware candidates (per-field isotonic by default).
    candidates : list of str, mapping of str to BaseCalibrator, or None, default=None
        Method names among :data:`mcal.selection.COMPLEXITY_ORDER` (compared in that order, with ``field`` and a seed drawn from
        ``random_state`` set where the method takes them), or unfitted calibrators by name, compared in the
        mapping's order, which is then the complexity order. None: identity, temperature, Platt, beta, histogram
        and isotonic; per-field isotonic with ``field``; MCGrad with ``X``.
    cv : int >= 2, default=5
        Number of folds.
    se_tolerance : float >= 0, default=1.0
        Paired standard errors of held-out log loss, and sigmas of held-out ``mce_sigma``, by which the chosen
        method may trail the best; 0 chooses the best.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights: passed to every fit, and weighting the scores.
    random_state : int >= 0 or None, default=None
        Seeds the folds and the candidates' own randomness; an int makes the selection reproducible.

    Returns
    -------
    selection : CalibratorSelection
        The comparison table, the best and the chosen method's names, why, the folds, and the chosen method
        refitted on all rows (``selection.calibrator``).

    Raises
    ------
    ValueError
        On invalid scores, labels or weights, fewer than ``cv`` rows of a class, ``X`` of another length,
        ``field`` without ``X`` or not a column of it, an unknown or repeated candidate name (the message lists
        the valid ones), fewer than two candidates, a candidate that needs features without ``X``, ``cv`` below
        2, a negative ``se_tolerance``, or when every candidate fails.
    TypeError
        If ``candidates`` is neither a list of names nor a mapping to mcal calibrators of binary labels, ``X`` is
        not a table, or ``cv``, ``se_tolerance`` or ``random_state`` has the wrong type.

    Warns
    -----
    CalibrationWarning
        When a candidate's fit fails (e.g. too few rows for MCGrad's early stopping): its row of the table holds
        the error and NaN scores, and it cannot be chosen.

    See Also
    --------
    mcal.CalibratedClassifier : cross-fitting of a base model and one calibrator.

    Notes
    -----
    With :math:`\\ell_{mi}` the log loss of method :math:`m` on row :math:`i` (held out), weights :math:`w_i` and
    :math:`W = \\sum_i w_i`, the table gives :math:`\\bar\\ell_m = \\sum_i w_i \\ell_{mi} / W`, and for the
    difference :math:`d_i = \\ell_{mi} - \\ell_{bi}` to the best method :math:`b` its mean :math:`\\bar d` and
    paired standard error :math:`\\sqrt{\\sum_i w_i^2 (d_i - \\bar d)^2} / W` (rows as independent draws; the
    pairing removes the noise that both methods share, as the one-standard-error rule of Hastie, Tibshirani
    and Friedman, section 7.10, prefers the simplest model within one SE of the best). The MCE's ``mce_sigma``
    is on a scale of standard errors already (each segment's ECCE over its standard deviation), so the same
    tolerance applies to it directly; without ``X`` the MCE is the global ECCE, which the log loss weighs
    already, and the condition is dropped. The MCE condition is there because the log loss, dominated by the global
    calibration, gives a segment-wise gain small weight: on Credit Default the rule on log loss alone kept
    a univariate map in 2 of 5 seeds where MCGrad was best on the test rows (``selection_rule.md``).

    The work is shared: the rows are sorted by score once (the folds' training rows are then in score order, which
    isotonic regression and histogram binning sort again at little cost), the folds are drawn once, and the
    segments of the MCE are generated once. A candidate that chooses its rounds on held-out rows (MCGrad with
    early stopping) cross-fits itself (:meth:`mcal.MCGrad.cross_fit`): the rounds of every fold are fitted side by
    side on the other folds' rows, on the features binned once, and stop where the held-out log loss pooled over
    all folds stops improving; each row is scored by its fold's rounds at that count, and when the method is
    chosen, that many rounds are refitted on all rows (``early_stopping=None``, ``max_rounds`` the rounds chosen),
    as MCGrad's own fit refits the rounds its holdout chose. Each fold's model is so trained on all of the fold's
    training rows, as the refit is on all rows; the held-out rows chose the number of rounds, one number for all
    folds. Other methods are refitted on all rows in their given order, so ``selection.calibrator`` equals the
    method fitted directly with the same parameters (MCGrad: the bins of its features too).

    References
    ----------
    .. [1] T. Hastie, R. Tibshirani, J. Friedman, "The Elements of Statistical Learning", 2nd ed., Springer
       2009, section 7.10.1 (the one-standard-error rule).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.02, 0.98, 4000)
    >>> y = (rng.uniform(size=4000) < p ** 2).astype(int)  # the scores are too high: a monotone distortion
    >>> selection = select_calibrator(p, y, random_state=0)
    >>> selection.chosen != "identity", selection.calibrator.predict([0.5]).round(1).tolist()
    (True, [0.2])
    """
    p = check_y_prob(y_prob)
    yy = check_y_true(y, "y")
    check_consistent(y_prob=p, y=yy)
    w = check_sample_weight(sample_weight, p.shape[0])
    check_both_classes(yy, w)
    check_positive_int("cv", cv, minimum=2)
    tolerance = check_real("se_tolerance", se_tolerance, "a real number >= 0", lambda v: v >= 0)
    check_random_state_param(random_state)
    X = _check_features(X, field, p.shape[0])
    fold_seed, model_seed = (int(s) for s in np.random.default_rng(random_state).integers(2**31 - 1, size=2))
    models = resolve_candidates(candidates, X=X, field=field, random_state=model_seed)
    folds = _folds(yy, int(cv), fold_seed)
    order = np.argsort(p, kind="stable")  # the one sort: every fold's training rows are then in score order
    data = _Sorted(p[order], yy[order], w[order], None if X is None else take_rows(X, order), folds[order])
    losses: dict[str, NDArray[np.float64] | None] = {}
    mces: dict[str, tuple[float, float]] = {}
    seconds: dict[str, float] = {}
    failures: dict[str, str] = {}
    refits: dict[str, Callable[[], BaseCalibrator]] = {}  # of the candidates that cross-fit themselves (MCGrad)
    segments = None if X is None else generate_segments(data.X)  # shared by every candidate's MCE
    for name, model in models.items():
        start = time.perf_counter()
        try:
            if cross_fits_itself(model):  # in the given order of the rows: its refit is then its direct fit
                result = model.cross_fit(p, yy, folds, X=X, sample_weight=w)
                held_out, refits[name] = result.held_out[order], result.refit
            else:
                held_out = data.cross_fit(model)
        except (ValueError, ImportError) as exc:
            warnings.warn(f"candidate {name!r} failed and cannot be chosen: {exc}", CalibrationWarning, stacklevel=2)
            losses[name], failures[name] = None, f"failed: {exc}"
        else:
            losses[name] = _row_log_loss(data.y, held_out)
            scored = mce(data.y, held_out, segments=segments, sample_weight=data.w)
            mces[name] = (scored.mce_sigma, scored.pvalue_adjusted)
        seconds[name] = time.perf_counter() - start
    if len(failures) == len(models):
        raise ValueError(f"candidates must include one that fits these data; every one failed: {failures}")
    table, best, chosen = comparison_table(losses, data.w, mces, seconds, failures, tolerance, segments is not None)
    if chosen in refits:
        calibrator = refits[chosen]()
    else:
        calibrator = clone(models[chosen])
        calibrator.fit(p, yy, sample_weight=w, **({"X": X} if calibrator.uses_features and X is not None else {}))
    return CalibratorSelection(chosen=chosen, best=best, calibrator=calibrator, table=table, se_tolerance=tolerance,
                               folds=folds, n_segments=1 if segments is None else segments.n_segments)  # fmt: skip


def _check_features(X: Any, field: Any, n_samples: int) -> Any:
    if X is None:
        if field is not None:
            raise ValueError(f"field must name a column of X; got field={field!r} and X=None")
        return None
    X = as_frame(X)
    check_X_type(X)
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if n != n_samples:
        raise ValueError(f"X must have {n_samples} rows (the length of y_prob); got {n}")
    if field is not None and hasattr(X, "columns") and field not in X.columns:
        raise ValueError(f"field must name a column of X; got {field!r}, not among {list(X.columns)[:20]}")
    return X


def _folds(y: NDArray[np.float64], cv: int, seed: int) -> NDArray[np.intp]:
    """The held-out fold of each row: ``cv`` stratified folds, shuffled with ``seed``."""
    counts = np.bincount(y.astype(np.intp), minlength=2)
    if counts.min() < cv:
        raise ValueError(f"y must have at least cv={cv} rows of each class to cut {cv} stratified folds; got "
                         f"{counts.tolist()} rows of classes 0 and 1")  # fmt: skip
    folds = np.empty(y.shape[0], dtype=np.intp)
    splitter = StratifiedKFold(n_splits=cv, shuffle=True, random_state=seed)
    for k, (_, held_out) in enumerate(splitter.split(np.zeros((y.shape[0], 1)), y)):
        folds[held_out] = k
    return folds


def _row_log_loss(y: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    q = np.clip(p, _CLIP, 1.0 - _CLIP)
    return -(y * np.log(q) + (1.0 - y) * np.log1p(-q))


class _Sorted:
    """The rows in score order, with their folds: the data every candidate but MCGrad is cross-fitted on."""

    def __init__(self, p, y, w, X, folds) -> None:
        self.p, self.y, self.w, self.X, self.folds = p, y, w, X, folds

    def cross_fit(self, model: BaseCalibrator) -> NDArray[np.float64]:
        """Held-out predictions of ``model``: each fold's rows predicted by a clone fitted on the other folds."""
        held_out = np.empty(self.p.shape[0])
        for k in range(int(self.folds.max()) + 1):
            train, test = np.flatnonzero(self.folds != k), np.flatnonzero(self.folds == k)
            fitted = clone(model).fit(self.p[train], self.y[train], sample_weight=self.w[train],
                                      **self._features(model, train))  # fmt: skip
            held_out[test] = fitted.predict(self.p[test], **self._features(fitted, test))
        return held_out

    def _features(self, model: BaseCalibrator, rows: NDArray[np.intp]) -> dict[str, Any]:
        return {"X": take_rows(self.X, rows)} if model.uses_features and self.X is not None else {}

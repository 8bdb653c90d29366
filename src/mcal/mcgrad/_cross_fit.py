"""MCGrad cross-fitted on given folds: early stopping judged across the folds, the held-out predictions of the
chosen round, and the refit on all rows, with the features binned once for all of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone

from mcal._lightgbm import lightgbm_errors_name_lightgbm_params
from mcal._validation import output_dtype
from mcal.mcgrad import _controls as controls
from mcal.mcgrad.engine import split_parts

#: An MCGrad (its module imports this one).
MCGrad = Any


@dataclass(frozen=True, eq=False)
class CrossFit:
    """What :meth:`MCGrad.cross_fit <mcal.MCGrad.cross_fit>` returns.

    Attributes
    ----------
    held_out : ndarray of shape (n_samples,)
        Each row's prediction by the rounds fitted on the other folds, after ``n_rounds`` rounds.
    n_rounds : int
        The rounds that early stopping chose on the held-out loss pooled over the folds.
    validation_losses : ndarray of shape (n_evaluated,)
        The pooled held-out log loss after each round, index 0 being the input.
    refit : callable
        ``refit() -> MCGrad``: the model with ``early_stopping=None`` and ``max_rounds=n_rounds``, fitted on all
        rows, as its ``fit`` would fit it (the features' bins are those of the folds).
    """

    held_out: NDArray[np.floating]
    n_rounds: int
    validation_losses: NDArray[np.float64]
    refit: Callable[[], MCGrad]


def check_folds(folds: ArrayLike, n_samples: int) -> tuple[list[tuple[NDArray[np.intp], NDArray[np.intp]]], int]:
    """The (train, held-out) row indices of each fold of ``folds``, increasing (int32 below 2**31 rows).

    Raises
    ------
    ValueError
        If ``folds`` is not of shape (n_samples,), holds other values than the integers ``0 .. k - 1`` (each at
        least once), or fewer than two folds.
    """
    f = np.asarray(folds)
    if f.shape != (n_samples,) or f.dtype.kind not in "iu":
        raise ValueError(f"folds must be integers of shape ({n_samples},); got {f.dtype} of shape {f.shape}")
    k = int(f.max()) + 1 if f.size else 0
    counts = np.bincount(f, minlength=k) if f.size and f.min() >= 0 else np.zeros(1, dtype=np.intp)
    if k < 2 or counts.min() == 0:
        raise ValueError(f"folds must number the folds 0 .. k - 1, each present, with k >= 2; got values "
                         f"{np.unique(f)[:10].tolist()}")  # fmt: skip
    index = np.int32 if n_samples < 2**31 else np.intp
    return [(np.flatnonzero(f != j).astype(index), np.flatnonzero(f == j).astype(index)) for j in range(k)], k


def cross_fit(model: MCGrad, y_prob: ArrayLike, y: ArrayLike, folds: ArrayLike, X: Any, sample_weight: Any) -> CrossFit:
    """The body of :meth:`MCGrad.cross_fit <mcal.MCGrad.cross_fit>` (its docstring says what it does)."""
    model._validate_params()
    if model.early_stopping is None:
        raise ValueError("early_stopping must be 'holdout' or 'kfold' to cross-fit (the rounds are chosen across the "
                         "folds); got None")  # fmt: skip
    inputs = model._check_fit_inputs(y_prob, y, sample_weight)
    p, yy, w = inputs.scores, inputs.y, inputs.sample_weight
    X = model._check_X(X, p.shape[0], fitting=True)
    rows, _ = check_folds(folds, p.shape[0])
    return _cross_fit(model, p, yy, w, X, rows, inputs.learned, output_dtype(y_prob))


@lightgbm_errors_name_lightgbm_params
def _cross_fit(model: MCGrad, p, y, w, X, rows, learned: dict[str, Any], dtype: Any) -> CrossFit:
    start = controls.clock()
    engine, encoder, whole = model._prepare(p, y, w, X)
    path, final = controls.choose_rounds(model, engine, whole, partial(split_parts, whole, rows),
                                         score=model._split_score(rows, y, w, X), eval_part=None, start=start,
                                         refit=False)  # fmt: skip
    n_rounds = final.best_round
    held_out = p.astype(dtype, copy=True)  # no rounds: MCGrad predicts the input unchanged
    if n_rounds and path is not None:
        for (_, va), F in zip(rows, path.best_valid, strict=True):
            held_out[va] = model._loss().inverse_link(F)

    def refit() -> MCGrad:
        fitted = clone(model).set_params(early_stopping=None, max_rounds=n_rounds)
        fitted._fit_rounds(engine, encoder, whole, None)
        for name, value in learned.items():
            setattr(fitted, name, value)
        return fitted

    losses = np.asarray(path.losses if path is not None else [], dtype=np.float64)
    return CrossFit(held_out=held_out, n_rounds=n_rounds, validation_losses=losses, refit=refit)

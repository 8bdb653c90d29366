"""Metrics for k classes: log loss, Brier score, and top-label and classwise ECE, ECCE and MCE.

Each reduces to the binary metrics of this package: the top-label problem is "was the most probable class the
true one?" scored by the top probability (Guo et al. 2017, section 2); the classwise problem of class j is
"is the label j?" scored by the probability of j (Kull et al. 2019, section 3).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import BINS, N_WORST, TEXT_WIDTH, validate_params
from mcal._shared.mce import MCEResult
from mcal._shared.text import pvalue_text
from mcal._validation import (
    METRIC_SWAP,
    check_class_labels,
    check_class_scores,
    check_consistent,
    check_sample_weight,
    swap_hint,
)
from mcal.metrics._binned import ece
from mcal.metrics._cumulative import ecce
from mcal.metrics._multicalibration import mce

#: Probabilities are clipped to this before the log, as scikit-learn clips binary scores to machine epsilon.
_EPS = float(np.finfo(np.float64).eps)


def _inputs(
    y_true: ArrayLike, y_prob: ArrayLike, sample_weight: ArrayLike | None
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
    codes, _, p = _labels_and_scores(y_true, y_prob)
    return codes, p, check_sample_weight(sample_weight, p.shape[0])


def _labels_and_scores(y_true: ArrayLike, y_prob: ArrayLike) -> tuple[NDArray[np.intp], NDArray, NDArray[np.float64]]:
    """The column codes of ``y_true``, its classes, and the probabilities ``y_prob``, validated."""
    with swap_hint(y_true, y_prob, METRIC_SWAP):
        p = check_class_scores(y_prob)
    codes, classes = check_class_labels(y_true, p.shape[1], "y_true")
    check_consistent(y_true=codes, y_prob=p)
    return codes, classes, p


def multiclass_log_loss(y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Multiclass log loss (cross-entropy), the weighted mean of ``-log p[i, y_i]``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels: integers ``0 .. k - 1`` naming the column, or exactly ``k`` class names (sorted order = columns).
    y_prob : array-like of shape (n_samples, k)
        Probabilities, each row summing to 1.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    loss : float
        In nats; probabilities below machine epsilon are clipped to it.

    Examples
    --------
    >>> round(multiclass_log_loss([0, 2], [[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]]), 6)
    0.693147
    """
    y, p, w = _inputs(y_true, y_prob, sample_weight)
    nll = -np.log(np.maximum(p[np.arange(y.size), y], _EPS))
    return float(np.average(nll, weights=w))


def multiclass_brier_score(y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Multiclass Brier score: the weighted mean over rows of ``sum_j (p[i, j] - 1[y_i = j])^2`` (Brier 1950).

    Parameters
    ----------
    y_true, y_prob, sample_weight
        As in :func:`multiclass_log_loss`.

    Returns
    -------
    score : float
        In [0, 2]; for two classes twice the binary Brier score.

    Examples
    --------
    >>> multiclass_brier_score([1], [[0.5, 0.5, 0.0]])
    0.5
    """
    y, p, w = _inputs(y_true, y_prob, sample_weight)
    onehot = np.zeros_like(p)
    onehot[np.arange(y.size), y] = 1.0
    return float(np.average(((p - onehot) ** 2).sum(axis=1), weights=w))


def top_label(y_true: ArrayLike, y_prob: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The top-label binary problem: ``(correct, confidence)``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels, as in :func:`multiclass_log_loss`.
    y_prob : array-like of shape (n_samples, k)
        Probabilities.

    Returns
    -------
    correct : ndarray of shape (n_samples,)
        1.0 where the most probable class (the first on ties) is the label, else 0.0.
    confidence : ndarray of shape (n_samples,)
        The top probability of each row.
    """
    y, _, p = _labels_and_scores(y_true, y_prob)
    top = p.argmax(axis=1)
    return (top == y).astype(np.float64), p[np.arange(y.size), top]


@validate_params(BINS)
def top_label_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 15,
    strategy: str = "uniform",
) -> float:
    """Top-label ECE (the "confidence ECE" of Guo et al. 2017): :func:`mcal.metrics.ece` of :func:`top_label`.

    Parameters
    ----------
    y_true, y_prob, sample_weight
        As in :func:`multiclass_log_loss`.
    n_bins : int, default=15
        Bins over [0, 1] (15 as in Guo et al. 2017 and torchmetrics).
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width or equal-weight bins, as in :func:`mcal.metrics.ece`.

    Returns
    -------
    ece : float
        In probability units.
    """
    correct, confidence = top_label(y_true, y_prob)
    return ece(correct, confidence, sample_weight=sample_weight, n_bins=n_bins, strategy=strategy)


@validate_params(BINS)
def classwise_ece(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 15,
    strategy: str = "uniform",
) -> float:
    """Classwise ECE (Kull et al. 2019, eq. 4): the mean over classes of the binary ECE of ``1[y = j]`` by ``p_j``.

    Parameters
    ----------
    y_true, y_prob, sample_weight, n_bins, strategy
        As in :func:`top_label_ece`.

    Returns
    -------
    ece : float
        In probability units.
    """
    y, p, w = _inputs(y_true, y_prob, sample_weight)
    return float(
        np.mean([ece(y == j, p[:, j], sample_weight=w, n_bins=n_bins, strategy=strategy) for j in range(p.shape[1])])
    )


def top_label_ecce(y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Top-label ECCE: :func:`mcal.metrics.ecce` of :func:`top_label`.

    Parameters
    ----------
    y_true, y_prob, sample_weight
        As in :func:`multiclass_log_loss`.

    Returns
    -------
    ecce : float
        In probability units.
    """
    correct, confidence = top_label(y_true, y_prob)
    return ecce(correct, confidence, sample_weight=sample_weight)


def classwise_ecce(y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None) -> float:
    """Classwise ECCE: the mean over classes of :func:`mcal.metrics.ecce` of ``1[y = j]`` by ``p_j``.

    Parameters
    ----------
    y_true, y_prob, sample_weight
        As in :func:`multiclass_log_loss`.

    Returns
    -------
    ecce : float
        In probability units.
    """
    y, p, w = _inputs(y_true, y_prob, sample_weight)
    return float(np.mean([ecce(y == j, p[:, j], sample_weight=w) for j in range(p.shape[1])]))


@dataclass(frozen=True)
class ClasswiseMCE:
    """Multicalibration error of each class's one-vs-rest problem; see :func:`classwise_mce`.

    Attributes
    ----------
    mce_sigma : float
        The largest ``mce_sigma`` over classes (in sigma units).
    worst_class : object
        The class with that MCE.
    per_class : dict
        Class -> :class:`mcal.metrics.MCEResult` of ``1[y = class]`` by its probability.
    """

    mce_sigma: float
    worst_class: Any
    per_class: dict[Any, MCEResult]

    @validate_params({"n_worst": N_WORST, "width": TEXT_WIDTH})
    def summary(self, n_worst: int = 10, width: int = 100) -> str:
        """Each class's MCE, worst first, then the worst segments of the worst class, as text.

        Parameters
        ----------
        n_worst : int >= 0, default=10
            Segments of the worst class listed, worst first.
        width : int >= 1, default=100
            Characters per line, as in :meth:`mcal.metrics.MCEResult.summary`.

        Returns
        -------
        text : str
            A line with the largest MCE and its class, a table of the classes (MCE in sigmas, Holm-adjusted
            p-value, MCE in probability units, worst segment), then the worst class's
            :meth:`~mcal.metrics.MCEResult.summary`.
        """
        order = sorted(self.per_class, key=lambda c: -self.per_class[c].mce_sigma)
        numbers = pd.DataFrame({
            "class": [str(c) for c in order],
            "MCE/σ": [f"{self.per_class[c].mce_sigma:.3g}" for c in order],
            "p (Holm)": [pvalue_text(self.per_class[c].pvalue_adjusted) for c in order],
            "MCE": [f"{self.per_class[c].mce_absolute:.3g}" for c in order],
        }).to_string(index=False).splitlines()  # fmt: skip
        room = max(len("worst segment"), width - len(numbers[0]) - 2)
        worst_segments = ["worst segment"] + [textwrap.shorten(self.per_class[c].worst_segment, room) for c in order]
        head = f"Class-wise MCE {self.mce_sigma:.3g} sigma, worst in class {self.worst_class!s} of {len(order)}"
        classes = "\n".join(f"{line}  {segment}" for line, segment in zip(numbers, worst_segments, strict=True))
        worst = self.per_class[self.worst_class].summary(n_worst, width)
        return f"{head}\n{classes}\n\nClass {self.worst_class!s}, one vs rest:\n{worst}"

    def __str__(self) -> str:
        return self.summary()


def classwise_mce(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    X: Any = None,
    segments: Any = None,
    sample_weight: ArrayLike | None = None,
    categorical_features: Any = "from_dtype",
) -> ClasswiseMCE:
    """MCE of every class's one-vs-rest problem (Guy et al. 2025, applied per class), and the worst class.

    Parameters
    ----------
    y_true, y_prob, sample_weight
        As in :func:`multiclass_log_loss`.
    X, segments, categorical_features
        As in :func:`mcal.metrics.mce`; the same segments serve every class.

    Returns
    -------
    result : ClasswiseMCE

    Raises
    ------
    ValueError, TypeError
        As :func:`mcal.metrics.mce` for ``X``, ``segments`` and ``categorical_features``.
    """
    y, classes, p = _labels_and_scores(y_true, y_prob)
    w = check_sample_weight(sample_weight, p.shape[0])
    if X is not None and segments is None:
        from mcal.segments import generate_segments

        segments = generate_segments(X, categorical_features=categorical_features)
    per_class = {classes[j].item(): mce(y == j, p[:, j], segments=segments, sample_weight=w) for j in range(p.shape[1])}
    worst = max(per_class, key=lambda c: per_class[c].mce_sigma)
    return ClasswiseMCE(float(per_class[worst].mce_sigma), worst, per_class)


def top_label_mce(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    X: Any = None,
    segments: Any = None,
    sample_weight: ArrayLike | None = None,
    categorical_features: Any = "from_dtype",
) -> MCEResult:
    """MCE of the top-label problem (:func:`top_label`), which asks whether the confidence is calibrated in every segment.

    Parameters
    ----------
    y_true, y_prob, sample_weight
        As in :func:`multiclass_log_loss`.
    X, segments, categorical_features
        As in :func:`mcal.metrics.mce`.

    Returns
    -------
    result : MCEResult

    Raises
    ------
    ValueError, TypeError
        As :func:`mcal.metrics.mce` for ``X``, ``segments`` and ``categorical_features``.
    """
    correct, confidence = top_label(y_true, y_prob)
    return mce(
        correct,
        confidence,
        X=X,
        segments=segments,
        sample_weight=sample_weight,
        categorical_features=categorical_features,
    )


@validate_params(BINS)
def multiclass_summary(
    y_true: ArrayLike,
    y_probs: Mapping[str, ArrayLike],
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 15,
    strategy: str = "uniform",
) -> pd.DataFrame:
    """The metrics of k classes for each named probability matrix: one row per matrix.

    Parameters
    ----------
    y_true, sample_weight
        As in :func:`multiclass_log_loss`.
    y_probs : mapping of str to array-like of shape (n_samples, k)
        Probability matrices by name, in row order; every one with the same k.
    n_bins, strategy
        Bins of the ECEs, as in :func:`top_label_ece`.

    Returns
    -------
    table : DataFrame of shape (len(y_probs), 5)
        Index = names; columns ``log_loss`` (:func:`multiclass_log_loss`), ``brier_score``
        (:func:`multiclass_brier_score`), ``accuracy`` (weighted share of rows whose most probable class is the
        label), ``top_label_ece`` and ``classwise_ece``.

    Raises
    ------
    ValueError
        If the matrices have different numbers of columns (classes).

    Examples
    --------
    >>> p = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]]
    >>> multiclass_summary([0, 1, 1], {"model": p}).loc["model", "accuracy"].round(4)
    np.float64(0.6667)
    """
    rows: dict[str, dict[str, float]] = {}
    k: int | None = None
    for name, p in y_probs.items():
        y, q, w = _inputs(y_true, p, sample_weight)
        k = q.shape[1] if k is None else k
        if q.shape[1] != k:
            raise ValueError(f"y_probs must all have {k} columns (one per class); got {q.shape[1]} in {name!r}")
        correct, confidence = top_label(y, q)
        rows[name] = {
            "log_loss": multiclass_log_loss(y, q, sample_weight=w),
            "brier_score": multiclass_brier_score(y, q, sample_weight=w),
            "accuracy": float(np.average(correct, weights=w)),
            "top_label_ece": ece(correct, confidence, sample_weight=w, n_bins=n_bins, strategy=strategy),
            "classwise_ece": classwise_ece(y, q, sample_weight=w, n_bins=n_bins, strategy=strategy),
        }
    return pd.DataFrame.from_dict(rows, orient="index")

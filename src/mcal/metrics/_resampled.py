"""Metrics of many bootstrap resamples at once, each resample given by the count of each row in it.

A resample of the rows with replacement is a vector of counts ``c`` (row ``i`` drawn ``c_i`` times). A metric of
the resampled rows, each keeping its weight ``w_i``, is the metric of all rows with weights ``c_i w_i``, except for
the sigma of ECCE, whose variance terms ``w_i^2 p_i (1 - p_i)`` add up over copies to ``c_i w_i^2 p_i (1 - p_i)``.
The rows are sorted by score once and a block of resamples is a matrix of counts, so each metric is a few matrix
products and cumulative sums instead of one sort and one validation per resample. :func:`resampled_metric` says
which metrics have such a form; :func:`mcal.metrics.bootstrap` uses it and calls any other metric per resample.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property, partial
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.special import xlogy

from mcal._binning import uniform_bin_ids
from mcal._features.fields import encode_field
from mcal._shared.mce import largest_sigma_scale, sigma_scales
from mcal._shared.walks import tie_block_ends, walk_extremes
from mcal.metrics._binned import ece
from mcal.metrics._cumulative import ecce, ecce_in_sigmas, ecce_sigma
from mcal.metrics._field import f_rce, pcoc
from mcal.metrics._multicalibration import mce_sigma, score_blocks, segment_ecce
from mcal.metrics._standard import brier_score, log_loss, pr_auc, roc_auc
from mcal.segments import from_masks

_EPS64 = float(np.finfo(np.float64).eps)
#: Segment memberships (rows summed over segments) up to which the MCE's sorted blocks are kept across resamples:
#: about 160 MB of positions.
_MAX_KEPT_MEMBERSHIPS = 20_000_000

Counts = NDArray[np.float64]
"""Counts of shape (n_resamples, n_samples), the columns in score order."""


class SortedRows:
    """Clean float64 rows sorted by score, with their per-row arguments, and counts of resamples of them.

    Parameters
    ----------
    y, p, w : ndarray of shape (n_samples,)
        Labels, scores and positive weights, in the caller's row order.
    row_args : mapping of str to ndarray of shape (n_samples, ...)
        Per-row arguments of the metric (``field``, ``segments``), in the same order.
    """

    def __init__(self, y: NDArray, p: NDArray, w: NDArray, row_args: Mapping[str, NDArray]) -> None:
        self.order = np.argsort(p, kind="stable")
        self.rank = np.empty_like(self.order)
        self.rank[self.order] = np.arange(self.order.size)
        self.y, self.p, self.w = y[self.order], p[self.order], w[self.order]
        self.row_args = {k: v[self.order] for k, v in row_args.items()}
        self.n = self.order.size
        self._memo_counts: Counts | None = None
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, c: Counts, compute: Callable[[], Any]) -> Any:
        """``compute()``, computed once per block of counts ``c`` (metrics of one block share their parts)."""
        if self._memo_counts is not c:
            self._memo_counts, self._memo = c, {}
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def block_sums(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Sums of ``values`` of shape (n_resamples, n_samples) over each block of equal scores."""
        return values if self.block_starts.size == self.n else np.add.reduceat(values, self.block_starts, axis=1)

    def at_block_ends(self, walk: NDArray[np.float64]) -> NDArray[np.float64]:
        """The columns of ``walk`` at the last row of each block of equal scores."""
        return walk if self.block_starts.size == self.n else walk[:, self.block_ends]

    def counts(self, rows: NDArray[np.intp]) -> Counts:
        """The counts, in score order, of resamples given as row numbers of shape (n_resamples, n_drawn)."""
        rows = np.atleast_2d(rows)
        flat = (self.rank[rows] + self.n * np.arange(rows.shape[0])[:, None]).ravel()
        return np.bincount(flat, minlength=rows.shape[0] * self.n).reshape(rows.shape[0], self.n).astype(np.float64)

    @cached_property
    def block_starts(self) -> NDArray[np.intp]:
        """First row of each block of equal scores."""
        return np.flatnonzero(np.r_[True, self.p[1:] != self.p[:-1]])

    @cached_property
    def block_ends(self) -> NDArray[np.intp]:
        """Last row of each block of equal scores."""
        return np.r_[self.block_starts[1:] - 1, self.n - 1]

    @cached_property
    def residuals(self) -> NDArray[np.float64]:
        return self.w * (self.y - self.p)

    @cached_property
    def variance_terms(self) -> NDArray[np.float64]:
        return self.w * self.w * self.p * (1.0 - self.p)

    @cached_property
    def segments(self) -> Any:
        """The segments of the ``segments`` row argument (boolean masks), in score order."""
        return from_masks(self.row_args["segments"])

    @cached_property
    def segment_walks(self) -> list[tuple[Any, NDArray[np.bool_] | None]] | None:
        """The segments' blocks in score order, each with the positions its walk is read at where the scores have
        ties (:func:`tie_block_ends`), kept for all resamples when the memberships fit in memory (else None)."""
        if int(self.segments.sizes.sum()) > _MAX_KEPT_MEMBERSHIPS:
            return None
        ties = bool(np.any(self.p[1:] == self.p[:-1]))
        blocks = score_blocks(self.segments, self.p)
        return [(b, tie_block_ends(self.p, b.positions, b.starts) if ties else None) for b in blocks]


def _totals(rows: SortedRows, c: Counts) -> NDArray[np.float64]:
    return rows.memo("totals", c, lambda: c @ rows.w)


def _mean_of(values: Callable[[SortedRows], NDArray[np.float64]]) -> Callable[[SortedRows, Counts], NDArray]:
    """The weighted mean of a per-row value, as a resampled metric."""
    return lambda rows, c: (c @ (rows.w * values(rows))) / _totals(rows, c)


def _row_log_loss(rows: SortedRows) -> NDArray[np.float64]:
    """Per-row log loss with the scores clipped to machine epsilon, as ``sklearn.metrics.log_loss``."""
    q1, q0 = np.clip(rows.p, _EPS64, 1 - _EPS64), np.clip(1.0 - rows.p, _EPS64, 1 - _EPS64)
    return -(xlogy(rows.y, q1) + xlogy(1.0 - rows.y, q0))


def _pcoc(rows: SortedRows, c: Counts) -> NDArray[np.float64]:
    positives = c @ (rows.w * rows.y)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(positives > 0, (c @ (rows.w * rows.p)) / positives, np.nan)


def _ece(rows: SortedRows, c: Counts, n_bins: int) -> NDArray[np.float64]:
    ids = uniform_bin_ids(rows.p, n_bins)  # nondecreasing in score order: each bin is a run of columns
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    return np.abs(np.add.reduceat(c * rows.residuals, starts, axis=1)).sum(axis=1) / _totals(rows, c)


def _ecce(rows: SortedRows, c: Counts) -> NDArray[np.float64]:
    def compute() -> NDArray[np.float64]:
        walk = rows.at_block_ends(np.cumsum(c * rows.residuals, axis=1))
        return (np.maximum(walk.max(axis=1), 0.0) - np.minimum(walk.min(axis=1), 0.0)) / _totals(rows, c)

    return rows.memo("ecce", c, compute)


def _ecce_in_sigmas(rows: SortedRows, c: Counts) -> NDArray[np.float64]:
    sigma = np.sqrt(c @ rows.variance_terms) / _totals(rows, c)
    return sigma_scales(_ecce(rows, c), sigma)


def _class_blocks(rows: SortedRows, c: Counts) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Weight of positives and of negatives in each block of equal scores, per resample."""

    def compute() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        positives = rows.block_sums(c * (rows.w * rows.y))
        return positives, rows.block_sums(c * (rows.w * (1.0 - rows.y)))

    return rows.memo("class_blocks", c, compute)


def _roc_auc(rows: SortedRows, c: Counts) -> NDArray[np.float64]:
    """Mann-Whitney form of the area under the ROC curve, ties counting one half (equal to the trapezoids)."""
    pos, neg = _class_blocks(rows, c)
    below = np.cumsum(neg, axis=1)
    below -= 0.5 * neg
    total = pos.sum(axis=1) * neg.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, np.einsum("ij,ij->i", pos, below) / total, np.nan)


def _pr_auc(rows: SortedRows, c: Counts) -> NDArray[np.float64]:
    """Average precision: the precision at each threshold (score block, highest first) weighted by the recall it
    adds, as ``sklearn.metrics.average_precision_score``."""
    pos, neg = _class_blocks(rows, c)
    # true and all positives at or above each block: totals less the cumulative sums below it
    tp = np.cumsum(pos, axis=1)
    positives = tp[:, -1].copy()
    tp -= pos
    np.subtract(positives[:, None], tp, out=tp)
    predicted = np.cumsum(neg, axis=1)
    negatives = predicted[:, -1].copy()
    predicted -= neg
    np.subtract(negatives[:, None], predicted, out=predicted)
    predicted += tp
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(tp, predicted, out=tp, where=predicted > 0)
        ap = np.einsum("ij,ij->i", pos, tp) / positives
    return np.where((positives > 0) & (negatives > 0), ap, np.nan)


def _f_rce(rows: SortedRows, c: Counts, epsilon: float = 0.01) -> NDArray[np.float64]:
    codes, uniques = encode_field(rows.row_args["field"], rows.n)
    onehot = sparse.csr_array((np.ones(rows.n), (codes, np.arange(rows.n))), shape=(len(uniques), rows.n))
    weighted = c * rows.w
    n_c = (onehot @ weighted.T).T
    gap = np.abs((onehot @ (weighted * (rows.y - rows.p)).T).T)
    denom = (onehot @ (weighted * (rows.y + epsilon)).T).T
    with np.errstate(divide="ignore", invalid="ignore"):
        per_field = np.where(n_c > 0, gap / denom, 0.0)
    undefined = np.any((n_c > 0) & (denom <= 0), axis=1)
    return np.where(undefined, np.nan, (n_c * per_field).sum(axis=1) / _totals(rows, c))


def _mce_sigma(rows: SortedRows, c: Counts) -> NDArray[np.float64]:
    """The MCE in sigmas of each resample, one resample at a time: the segments' walks over the score-sorted rows,
    their positions and tie ends computed once for all resamples (:attr:`SortedRows.segment_walks`)."""
    walks = rows.segment_walks
    if walks is None:  # too many memberships to keep: the blocks are rebuilt for each resample
        return np.array([largest_sigma_scale(*segment_ecce(rows.y, rows.p, counts * rows.w, rows.segments,
                                                           variance_weight=counts * rows.w * rows.w)[:2])
                         for counts in c])  # fmt: skip
    n_segments = rows.segments.n_segments
    out = np.empty(c.shape[0])
    workspace = np.empty(rows.n)
    for b, counts in enumerate(c):
        weight, residuals, variance = counts * rows.w, counts * rows.residuals, counts * rows.variance_terms
        ranges, total, spread = np.zeros((3, n_segments))
        for block, read in walks:
            top, bottom = walk_extremes(residuals, read, block.positions, block.starts, workspace)
            ranges[block.ids] = (np.maximum(top, 0.0) - np.minimum(bottom, 0.0))[block.group]
            total[block.ids] = block.sums(weight)[block.group]
            spread[block.ids] = block.sums(variance)[block.group]
        with np.errstate(divide="ignore", invalid="ignore"):
            positive = total > 0
            ecce = np.where(positive, ranges / total, np.nan)
            sigma = np.where(positive, np.sqrt(spread) / total, np.nan)
        out[b] = largest_sigma_scale(ecce, sigma)
    return out


def _ece_partial(metric: partial) -> Callable[[SortedRows, Counts], NDArray] | None:
    keywords = dict(metric.keywords)
    if metric.args or keywords.pop("strategy", "uniform") != "uniform" or set(keywords) - {"n_bins"}:
        return None
    return partial(_ece, n_bins=keywords.get("n_bins", 10))


#: Each metric with a form on counts, and the row arguments it takes.
_RESAMPLED: dict[Any, tuple[Callable[[SortedRows, Counts], NDArray], set[str]]] = {
    log_loss: (_mean_of(_row_log_loss), set()),
    brier_score: (_mean_of(lambda rows: (rows.p - rows.y) ** 2), set()),
    roc_auc: (_roc_auc, set()),
    pr_auc: (_pr_auc, set()),
    ece: (partial(_ece, n_bins=10), set()),
    ecce: (_ecce, set()),
    ecce_in_sigmas: (_ecce_in_sigmas, set()),
    ecce_sigma: (_ecce_in_sigmas, set()),
    pcoc: (_pcoc, set()),
    f_rce: (_f_rce, {"field"}),
    mce_sigma: (_mce_sigma, {"segments"}),
}


def resampled_metric(metric: Any, row_args: Mapping[str, Any]) -> Callable[[SortedRows, Counts], NDArray] | None:
    """The form of ``metric`` on counts of resamples, or None when it has none (it is then called per resample).

    Known: :func:`log_loss`, :func:`brier_score`, :func:`roc_auc`, :func:`pr_auc`, :func:`ece` (uniform bins, also
    as ``functools.partial(ece, n_bins=k)``), :func:`ecce`, :func:`ecce_sigma`, :func:`pcoc`, :func:`f_rce` (with a
    ``field`` row argument) and :func:`mce_sigma` (with a ``segments`` row argument of boolean masks).
    """
    if isinstance(metric, partial) and metric.func is ece:
        return None if row_args else _ece_partial(metric)
    try:
        form, takes = _RESAMPLED.get(metric, (None, set()))
    except TypeError:  # an unhashable callable
        return None
    return form if form is not None and set(row_args) == takes else None

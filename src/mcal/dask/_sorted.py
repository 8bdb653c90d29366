"""Exact order statistics of scores spread over a cluster: a distributed sort, then prefix offsets.

The cumulative metrics (ECCE, MCE), the ranking metrics (ROC-AUC, average precision) and weighted score
quantiles need the rows in global score order. :func:`sort_by_score` sorts a dask DataFrame by the score with
dask's own distributed sort, which splits the score range between partitions by value (so rows with equal
scores always land in the same partition: checked here). Each partition then computes cumulative sums of its
own rows; the client adds up the partition totals in order (the *prefix offsets*) and joins the partial
results exactly as if one machine had summed all rows in order. Only a few numbers per partition travel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._binning import level_steps, levels_reached
from mcal._optional import import_optional
from mcal._shared.walks import join_successive_differences, successive_difference_parts, walk_extremes

#: Prefix of the feature columns that travel with the scores through the sort (for the segments of the MCE).
FEATURE_PREFIX = "x:"
#: Column of the rows' input order, present for real outcomes: the successive-differences scale of their ECCE
#: reads tied scores in input order, so each sorted partition orders its ties by it.
ROW = "row"


@dataclass(frozen=True)
class PartStats:
    """Pass-1 summary of one sorted partition.

    ``top``/``bottom`` are the extremes of the partition's own walk ``sum_{j<=k} w_j (y_j - p_j)`` read at the
    ends of tie blocks (``-inf``/``inf`` when empty); ``total`` is its last value; ``pos``/``neg`` the weights
    of the two classes; ``auc`` the partition's own Mann-Whitney count (ties count one half); ``variance``
    the sum of ``w^2 p (1 - p)``; ``differences`` (real outcomes only, with the column :data:`ROW`) the
    :func:`~mcal._shared.walks.successive_difference_parts` of the whole partition, shape (5,); ``score_sum`` the
    sum of ``w p``.
    """

    n: int
    first: float
    last: float
    top: float
    bottom: float
    total: float
    pos: float
    neg: float
    auc: float
    variance: float
    differences: Any = None
    score_sum: float = 0.0


@dataclass
class Ordered:
    """A dask DataFrame sorted by ``p``: its partitions (``Delayed``, persisted) and their pass-1 summaries."""

    blocks: list[Any]
    stats: list[PartStats]

    def offsets(self, name: str) -> NDArray[np.float64]:
        """Sum of field ``name`` over the partitions before each one (the prefix offsets)."""
        values = np.array([getattr(s, name) for s in self.stats], dtype=np.float64)
        return np.concatenate(([0.0], np.cumsum(values)[:-1]))


def tie_block_ends(p: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Whether each row of sorted scores is the last of its block of equal scores."""
    return np.append(p[1:] != p[:-1], True)


def _part_stats(part: pd.DataFrame) -> PartStats:
    if len(part) == 0:
        return PartStats(0, np.nan, np.nan, -np.inf, np.inf, 0.0, 0.0, 0.0, 0.0, 0.0)
    p, y, w = (part[c].to_numpy(dtype=np.float64) for c in ("p", "y", "w"))
    walk = np.cumsum(w * (y - p))
    ends = tie_block_ends(p)
    pos_b, neg_b = _block_sums(w * y, ends), _block_sums(w * (1.0 - y), ends)
    neg_before = np.cumsum(neg_b) - neg_b
    auc = float(np.dot(pos_b, neg_before + 0.5 * neg_b))
    differences = (
        successive_difference_parts(y - p, w, None, np.zeros(1, dtype=np.intp))[:, 0] if ROW in part.columns else None
    )
    return PartStats(p.size, p[0], p[-1], walk[ends].max(), walk[ends].min(), walk[-1], pos_b.sum(), neg_b.sum(), auc,
                     float(np.dot(w * w, p * (1.0 - p))), differences, float(np.dot(w, p)))  # fmt: skip


def _block_sums(values: NDArray[np.float64], ends: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Sum of ``values`` over each tie block (``ends`` marks the last row of each)."""
    c = np.cumsum(values)[ends]
    return np.diff(c, prepend=0.0)


def partition_walks(part: pd.DataFrame, segments: Any, features: list[str]) -> NDArray[np.float64]:
    """Per segment, in one sorted partition: walk extremes, walk total, weight, variance sum, row count and the sum
    of ``w p``, and for real outcomes (the column :data:`ROW`) the five
    :func:`~mcal._shared.walks.successive_difference_parts`.

    ``segments`` are generated definitions applied to the partition's feature columns ``features`` (stored with
    the prefix :data:`FEATURE_PREFIX`). Returns an array of shape (7, n_segments), or (12, n_segments) for real
    outcomes; a segment without rows here has extremes ``-inf``/``inf`` and zero sums.
    """
    regression = ROW in part.columns
    out = np.zeros((12 if regression else 7, segments.n_segments))
    out[0], out[1] = -np.inf, np.inf
    if len(part) == 0:
        return out
    p, y, w = (part[c].to_numpy(dtype=np.float64) for c in ("p", "y", "w"))
    local = segments.apply(pd.DataFrame({name: part[FEATURE_PREFIX + name].to_numpy() for name in features}))
    residuals, variance = w * (y - p), w * w * p * (1.0 - p)
    ties = p if np.any(p[1:] == p[:-1]) else None
    for block in local._blocks(np.arange(p.size)):
        top, bottom = walk_extremes(residuals, ties, block.positions, block.starts)
        out[0, block.ids], out[1, block.ids] = top[block.group], bottom[block.group]
        for row, values in ((2, residuals), (3, w), (4, variance), (6, w * p)):
            out[row, block.ids] = block.sums(values)[block.group]
        if regression:
            out[7:, block.ids] = successive_difference_parts(y - p, w, block.positions, block.starts)[:, block.group]
    out[5] = local.sizes
    return out


def segment_ranges(walks: NDArray[np.float64]) -> NDArray[np.float64]:
    """Range of each segment's global walk from the per-partition walks (shape (n_partitions, 7, n_segments)),
    joined in score order with prefix offsets."""
    offsets = np.cumsum(walks[:, 2], axis=0) - walks[:, 2]
    top = np.max(offsets + walks[:, 0], axis=0)
    bottom = np.min(offsets + walks[:, 1], axis=0)
    return np.maximum(top, 0.0) - np.minimum(bottom, 0.0)


def sort_by_score(frame: Any) -> Ordered:
    """Sort a dask DataFrame with float columns ``p``, ``y``, ``w`` (and any others) by ``p``, and summarise it.

    Raises
    ------
    RuntimeError
        If the sort left rows of equal score in two partitions (dask's sort never does; the metrics would
        not be exact otherwise).
    """
    dask = import_optional("dask")
    ordered = frame.sort_values("p")
    if ROW in frame.columns:
        ordered = ordered.map_partitions(_ties_in_row_order, meta=frame._meta)
    (ordered,) = dask.persist(ordered)
    blocks = list(ordered.to_delayed())
    stats = list(dask.compute(*[dask.delayed(_part_stats, pure=True)(b) for b in blocks]))
    last = -np.inf
    for s in stats:
        if s.n == 0:
            continue
        if not s.first > last:
            raise RuntimeError(
                "the distributed sort put rows of equal score into two partitions; the exact cumulative metrics "
                "need each score in one partition"
            )
        last = s.last
    return Ordered(blocks, stats)


def _ties_in_row_order(part: pd.DataFrame) -> pd.DataFrame:
    return part.sort_values(["p", ROW], kind="stable")


def regression_sigma(ordered: Ordered) -> float:
    """The successive-differences scale of the ECCE of real outcomes (Guy et al. 2025, eq. 6) on all the rows,
    from the partitions' :attr:`PartStats.differences` joined in score order."""
    kept = [s for s in ordered.stats if s.n]
    parts = np.stack([s.differences for s in kept])[:, :, None]
    weights = np.array([[s.pos + s.neg] for s in kept])
    return float(join_successive_differences(parts, weights, np.ones_like(weights, dtype=bool))[0])


def walk_range(ordered: Ordered) -> float:
    """``max(0, max_k C_k) - min(0, min_k C_k)`` of the global walk ``C_k = sum_{j<=k} w_j (y_j - p_j)``.

    Divided by the total weight this is the ECCE (the walk read at tie-block ends, from ``C_0 = 0``).
    """
    off = ordered.offsets("total")
    top = max([0.0] + [o + s.top for o, s in zip(off, ordered.stats, strict=False) if s.n])
    bottom = min([0.0] + [o + s.bottom for o, s in zip(off, ordered.stats, strict=False) if s.n])
    return top - bottom


def roc_auc(ordered: Ordered) -> float:
    """Weighted ROC-AUC: the Mann-Whitney count of each partition plus its positives times earlier negatives."""
    stats = ordered.stats
    pos = sum(s.pos for s in stats)
    neg = sum(s.neg for s in stats)
    count = sum(s.auc + s.pos * off for s, off in zip(stats, ordered.offsets("neg"), strict=False))
    return count / (pos * neg)


def _ap_part(part: pd.DataFrame, pos_off: float, neg_off: float, pos: float, neg: float) -> float:
    part = part[part["w"].to_numpy() > 0]  # as scikit-learn, which drops rows of zero weight
    if len(part) == 0:
        return 0.0
    p, y, w = (part[c].to_numpy(dtype=np.float64) for c in ("p", "y", "w"))
    ends = tie_block_ends(p)
    pos_b, neg_b = _block_sums(w * y, ends), _block_sums(w * (1.0 - y), ends)
    tp = pos - (pos_off + np.cumsum(pos_b) - pos_b)  # positives scored at or above the block
    fp = neg - (neg_off + np.cumsum(neg_b) - neg_b)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(pos_b > 0, tp / (tp + fp), 0.0)
    return float(np.dot(pos_b, precision))


def average_precision(ordered: Ordered) -> float:
    """Weighted average precision ``sum_t (R_t - R_{t-1}) P_t`` over score thresholds (a second pass)."""
    dask = import_optional("dask")
    pos = sum(s.pos for s in ordered.stats)
    neg = sum(s.neg for s in ordered.stats)
    task = dask.delayed(_ap_part, pure=True)
    parts = [
        task(b, po, no, pos, neg)
        for b, po, no in zip(ordered.blocks, ordered.offsets("pos"), ordered.offsets("neg"), strict=False)
    ]
    return float(sum(dask.compute(*parts))) / pos


def _steps_part(part: pd.DataFrame, w_off: float, total: float, n_bins: int) -> tuple[NDArray, NDArray]:
    part = part[part["w"].to_numpy() > 0]
    p, w = part["p"].to_numpy(dtype=np.float64), part["w"].to_numpy(dtype=np.float64)
    if p.size == 0:
        return p, p
    # the first row is kept whatever its count, so that the client sees the growth across partitions
    return level_steps(p, levels_reached(w_off + np.cumsum(w), n_bins, total), before=-1.0)


def quantile_steps(ordered: Ordered, n_bins: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """As :func:`mcal._binning.level_steps` of all the rows (zero weights ignored), from the sorted partitions:
    the scores at which the count of quantile levels ``k / n_bins`` reached grows, at most one per row, so that
    :func:`mcal._binning.bin_ids_from_steps` gives each row its quantile bin in O(n) memory whatever ``n_bins``.
    """
    dask = import_optional("dask")
    weight = np.array([s.pos + s.neg for s in ordered.stats])
    offsets = np.concatenate(([0.0], np.cumsum(weight)[:-1]))
    task = dask.delayed(_steps_part, pure=True)
    parts = dask.compute(
        *[task(b, off, float(weight.sum()), n_bins) for b, off in zip(ordered.blocks, offsets, strict=False)]
    )
    values = np.concatenate([v for v, _ in parts])
    reached = np.maximum.accumulate(np.concatenate([r for _, r in parts]))  # rounding of the offsets never lowers it
    return level_steps(values, reached)

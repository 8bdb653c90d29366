"""Walks of partial sums over groups of score-sorted rows, vectorised over the groups: the extremes of the walk of
the residuals (ECCE of every segment) and the successive differences of the residuals (the scale of ECCE for real
outcomes, Guy et al., "Measuring multi-calibration", arXiv 2506.11251, 2025, Appendix C, eq. 6). The pieces of both
join across consecutive sorted blocks, which is how :mod:`mcal.dask` walks partitions."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def walk_ranges(
    residuals: NDArray[np.float64],
    scores: NDArray[np.float64] | None,
    positions: NDArray[np.intp] | None,
    starts: NDArray[np.intp],
    workspace: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Range of the unnormalised cumulative walk of every group, vectorised over groups.

    Takes the arguments of :func:`walk_extremes` and returns, for each group, ``max(0, top) - min(0, bottom)``
    of its extremes: :math:`\\max(0, \\max_k S_k) - \\min(0, \\min_k S_k)` with :math:`S_k` the partial sums of
    the residuals of the group; divided by the group's weight this is its ECCE.
    """
    top, bottom = walk_extremes(residuals, scores, positions, starts, workspace)
    return np.maximum(top, 0.0) - np.minimum(bottom, 0.0)


def walk_extremes(
    residuals: NDArray[np.float64],
    scores: NDArray[Any] | None,
    positions: NDArray[np.intp] | None,
    starts: NDArray[np.intp],
    workspace: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Largest and smallest partial sum of the residuals of every group, vectorised over groups.

    The partial sums of consecutive blocks of rows can be joined: the extremes of the concatenation are those
    of each block shifted by the sum of the blocks before it (``mcal.dask`` joins score-sorted partitions so).

    Parameters
    ----------
    residuals : ndarray of shape (n_samples,)
        ``w_i (y_i - p_i)`` with the rows sorted by score.
    scores : ndarray of shape (n_samples,) or None
        The sorted scores, when they have ties (the walk is then read at the end of each tie block within a
        group, as :func:`mcal.metrics.ecce` reads it); None when all are distinct; or the boolean positions to
        read, ``tie_block_ends`` of the scores, computed once for repeated walks.
    positions : ndarray of shape (n_positions,) or None
        Rows (indices into the sorted arrays) grouped so that each group is contiguous and in score order;
        None for all rows in order.
    starts : ndarray of shape (n_groups,)
        Start of each group in ``positions``; groups are nonempty and run to the next start.
    workspace : ndarray of shape (>= n_positions,), default=None
        Scratch memory reused across calls (saves allocating and faulting in a large array per call).

    Returns
    -------
    top, bottom : ndarray of shape (n_groups,)
        :math:`\\max_k S_k` and :math:`\\min_k S_k` over the tie-block ends of the group, with :math:`S_k` the
        partial sums of its residuals from its first row.
    """
    size = residuals.size if positions is None else positions.size
    walk = workspace[:size] if workspace is not None and workspace.size >= size else np.empty(size)
    if positions is None:
        np.cumsum(residuals, out=walk)
    else:
        np.take(residuals, positions, out=walk)
        np.cumsum(walk, out=walk)
    base = np.where(starts > 0, walk[np.maximum(starts - 1, 0)], 0.0)
    read = scores if scores is None or scores.dtype == bool else tie_block_ends(scores, positions, starts)
    if read is not None:  # the walk at the read positions only; every group has one (its last)
        at = np.flatnonzero(read)
        walk, starts = walk[at], np.searchsorted(at, starts)
    return np.maximum.reduceat(walk, starts) - base, np.minimum.reduceat(walk, starts) - base


def tie_block_ends(
    scores: NDArray[np.float64], positions: NDArray[np.intp] | None, starts: NDArray[np.intp]
) -> NDArray[np.bool_]:
    """Where :func:`walk_extremes` reads the walk of sorted ``scores`` with ties: the last position of each block of
    equal scores within a group (the arguments are those of :func:`walk_extremes`). It depends on the scores and
    groups only, so a caller walking the same rows with other weights (bootstrap resamples) passes it instead of
    ``scores``."""
    s = scores if positions is None else scores[positions]
    block_end = np.empty(s.size, dtype=bool)
    np.not_equal(s[1:], s[:-1], out=block_end[:-1])
    block_end[-1] = True
    block_end[starts[1:] - 1] = True
    return block_end


def successive_difference_sigmas(
    residuals: NDArray[np.float64],
    weights: NDArray[np.float64],
    positions: NDArray[np.intp] | None,
    starts: NDArray[np.intp],
) -> NDArray[np.float64]:
    r"""Scale of the ECCE of every group of rows from successive differences of its residuals in score order.

    For a group of rows :math:`1..n` sorted by score, with residuals :math:`r_j = y_j - p_j` and weights
    :math:`w_j`, :math:`W = \sum_j w_j`:

    .. math:: \sigma^2 = \frac{\sum_{j=1}^{n-1} (r_{j+1} - r_j)^2 (w_j + w_{j+1})^2}
                              {4 W (w_1 + w_n + 2 \sum_{j=2}^{n-1} w_j)}

    (Guy et al. 2025, eq. 6; 0 for a group of one row or of zero weight). Squared differences of neighbours estimate
    twice the conditional variance of the outcome without knowing the calibrated mean.

    Parameters
    ----------
    residuals, weights : ndarray of shape (n_samples,)
        ``y - p`` and ``w`` with the rows sorted by score.
    positions : ndarray of shape (n_positions,) or None
        Rows grouped so that each group is contiguous and in score order; None for all rows in order.
    starts : ndarray of shape (n_groups,)
        Start of each nonempty group in ``positions``.

    Returns
    -------
    sigma : ndarray of shape (n_groups,)
    """
    parts = successive_difference_parts(residuals, weights, positions, starts)
    w = weights if positions is None else weights[positions]
    return _sigmas(parts[0], np.add.reduceat(w, starts), parts[2], parts[4])


def successive_difference_parts(
    residuals: NDArray[np.float64],
    weights: NDArray[np.float64],
    positions: NDArray[np.intp] | None,
    starts: NDArray[np.intp],
) -> NDArray[np.float64]:
    """The pieces of ``successive_difference_sigmas`` of every group that rows elsewhere can extend.

    Returns an array of shape (5, n_groups): the sum of the squared weighted differences of neighbours within the
    group, and the residual and weight of its first and of its last row. Groups of rows spread over several
    sorted blocks (the partitions of a cluster) are joined by :func:`join_successive_differences`.
    """
    r = residuals if positions is None else residuals[positions]
    w = weights if positions is None else weights[positions]
    pairs = np.empty(r.size)
    pairs[0] = 0.0
    np.square(np.diff(r) * (w[1:] + w[:-1]), out=pairs[1:])
    pairs[starts] = 0.0  # the pair that would join a group to the one before it
    ends = np.append(starts[1:], r.size) - 1
    return np.stack([np.add.reduceat(pairs, starts), r[starts], w[starts], r[ends], w[ends]])


def join_successive_differences(
    parts: NDArray[np.float64], totals: NDArray[np.float64], present: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """``successive_difference_sigmas`` of groups whose rows lie in consecutive sorted blocks.

    Parameters
    ----------
    parts : ndarray of shape (n_blocks, 5, n_groups)
        :func:`successive_difference_parts` of each block, in score order (any values where a group is absent).
    totals : ndarray of shape (n_blocks, n_groups)
        Weight of each group in each block.
    present : ndarray of shape (n_blocks, n_groups)
        Whether the block holds rows of the group.

    Returns
    -------
    sigma : ndarray of shape (n_groups,)
        The scale of each group, as if its rows had been in one block (0 for a group without rows).
    """
    n_groups = parts.shape[2]
    pairs, first_w, last_r, last_w = (np.zeros(n_groups) for _ in range(4))
    seen = np.zeros(n_groups, dtype=bool)
    for part, here in zip(parts, present, strict=True):
        joined = seen & here  # the pair of the group's last row so far and its first row in this block
        step = np.where(joined, np.square((part[1] - last_r) * (part[2] + last_w)), 0.0)
        pairs += np.where(here, part[0], 0.0) + step
        first_w = np.where(here & ~seen, part[2], first_w)
        last_r, last_w = np.where(here, part[3], last_r), np.where(here, part[4], last_w)
        seen |= here
    return _sigmas(pairs, totals.sum(axis=0), first_w, last_w)


def _sigmas(
    pairs: NDArray[np.float64], total: NDArray[np.float64], first_w: NDArray[np.float64], last_w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """eq. 6 of Guy et al. from its sums: ``sqrt(pairs / (4 W (2 W - w_first - w_last)))``, 0 where undefined."""
    denominator = 4.0 * total * (2.0 * total - first_w - last_w)
    with np.errstate(divide="ignore", invalid="ignore"):
        variance = np.where(denominator > 0, pairs / denominator, 0.0)
    return np.sqrt(variance)

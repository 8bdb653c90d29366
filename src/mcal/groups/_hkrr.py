"""The HKRR algorithm as pure functions on clean arrays: the fit (patching (group, level) cells) and its replay.

:class:`mcal.HKRR` (in :mod:`mcal.groups._estimators`) adds validation, groups and state; these functions assume clean
float64 predictions, labels and weights and sorted row indices of each group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mcal._binning import right_closed_bin_ids


def prediction_levels(p: NDArray[np.float64], n_levels: int) -> NDArray[np.intp]:
    """Level ``k`` of each prediction: the interval ``(k/n, (k+1)/n]``, with 0 in level 0."""
    return right_closed_bin_ids(p, n_levels).astype(np.intp)


def _level_sums(
    lev: NDArray[np.intp], w: NDArray[np.float64], p: NDArray[np.float64], y: NDArray[np.float64], n_levels: int
) -> NDArray[np.float64]:
    """Per-level weight, weighted prediction sum and weighted label sum, shape (3, n_levels)."""
    return np.stack([np.bincount(lev, weights=x, minlength=n_levels) for x in (w, w * p, w * y)])


@dataclass(frozen=True)
class HKRRResult:
    """What :func:`hkrr_multicalibrate` did.

    Attributes
    ----------
    predictions : ndarray of shape (n_samples,)
        Patched calibration-set predictions before the final snap to level means.
    update_groups, update_levels : ndarray of shape (n_updates,), int64
        The (group, level) cell of each patch, in order.
    update_deltas : ndarray of shape (n_updates,)
        The shift added to the cell's predictions (then clipped to [0, 1]), probability units.
    level_means : ndarray of shape (n_levels,)
        Weighted mean of ``predictions`` in each level over all rows (0 where a level is empty).
    level_seen : ndarray of shape (n_levels,), bool
        Whether a level holds rows of positive weight.
    n_passes : int
        Passes over all (group, level) cells.
    converged : bool
        Whether the last pass patched nothing (the calibration data is then alpha-multicalibrated).
    """

    predictions: NDArray[np.float64]
    update_groups: NDArray[np.int64]
    update_levels: NDArray[np.int64]
    update_deltas: NDArray[np.float64]
    level_means: NDArray[np.float64]
    level_seen: NDArray[np.bool_]
    n_passes: int
    converged: bool


def hkrr_multicalibrate(
    y_prob: NDArray[np.float64],
    y: NDArray[np.float64],
    sample_weight: NDArray[np.float64],
    members: list[NDArray[np.intp]],
    *,
    n_levels: int,
    alpha: float,
    oracle: bool,
    rng: np.random.Generator,
    max_iter: int,
) -> HKRRResult:
    """Patch (group, level) cells until no large cell is miscalibrated (Hebert-Johnson et al. 2018, Algorithm 1).

    Parameters
    ----------
    y_prob, y, sample_weight : ndarray of shape (n_samples,)
        Clean predictions, labels and non-negative weights.
    members : list of ndarray of int
        Sorted row indices of each group.
    n_levels : int
        Number of prediction levels, ``1 / lambda``.
    alpha : float
        A cell is checked when its weight is at least ``alpha * lambda`` times its group's weight.
    oracle : bool
        Guess-and-check oracle with ``omega = alpha / 4``: a cell whose mean residual is at least
        ``2 omega`` gets its predictions' mean moved to a uniform draw within ``omega`` of its label mean.
        Otherwise a cell is patched by its mean residual when that is at least ``lambda / 10``.
    rng : numpy Generator
        Shuffles the order of groups and levels once, and draws the oracle's noise.
    max_iter : int
        Largest number of passes.

    Returns
    -------
    result : HKRRResult
        Its ``predictions`` are those of :func:`hkrr_replay` of its patches on the same rows, rows of zero
        weight included: a prediction depends on the score and the groups alone.
    """
    p = y_prob.copy()
    level = prediction_levels(p, n_levels)
    lam = 1.0 / n_levels
    omega = alpha / 4.0
    # rows of zero weight stay in their groups: they add nothing to the sums that decide a patch, but a patch
    # moves them as it moves every row of its cell, as hkrr_replay (and so predict) does
    group_order = rng.permutation(len(members))
    level_order = rng.permutation(n_levels)
    updates: list[tuple[int, int, float]] = []
    converged, n_passes = False, 0
    while not converged and n_passes < max_iter:
        n_passes += 1
        converged = True
        for g in group_order:
            rows = members[g]
            if rows.size == 0:
                continue
            w_g, y_g, lev = sample_weight[rows], y[rows], level[rows]
            tau = alpha * lam * w_g.sum()
            # per-level weight, weighted prediction sum and label sum of this group, kept current below
            stats = _level_sums(lev, w_g, p[rows], y_g, n_levels)
            for v in level_order:
                weight = stats[0, v]
                if weight <= 0 or weight < tau:
                    continue
                mean_p, mean_y = stats[1, v] / weight, stats[2, v] / weight
                gap = mean_y - mean_p
                if oracle:
                    if abs(gap) < 2.0 * omega:
                        continue
                    delta = rng.uniform(mean_y - omega, mean_y + omega) - mean_p
                elif abs(gap) < lam / 10.0:
                    continue
                else:
                    delta = gap
                cell = np.flatnonzero(lev == v)
                idx = rows[cell]
                stats -= _level_sums(lev[cell], w_g[cell], p[idx], y_g[cell], n_levels)
                p[idx] = np.clip(p[idx] + delta, 0.0, 1.0)
                lev[cell] = level[idx] = prediction_levels(p[idx], n_levels)
                stats += _level_sums(lev[cell], w_g[cell], p[idx], y_g[cell], n_levels)
                updates.append((int(g), int(v), float(delta)))
                converged = False
    weight = np.bincount(level, weights=sample_weight, minlength=n_levels)
    sums = np.bincount(level, weights=sample_weight * p, minlength=n_levels)
    seen = weight > 0
    means = np.where(seen, sums / np.where(seen, weight, 1.0), 0.0)
    g_arr, v_arr, d_arr = (np.array(col) for col in zip(*updates, strict=False)) if updates else ([], [], [])
    return HKRRResult(
        p,
        np.asarray(g_arr, np.int64),
        np.asarray(v_arr, np.int64),
        np.asarray(d_arr, np.float64),
        means,
        seen,
        n_passes,
        converged,
    )


def hkrr_replay(
    y_prob: NDArray[np.float64],
    members: list[NDArray[np.intp]],
    groups: NDArray[np.int64],
    levels: NDArray[np.int64],
    deltas: NDArray[np.float64],
    n_levels: int,
) -> NDArray[np.float64]:
    """Apply recorded HKRR patches, in order, to new predictions (before the snap to level means).

    Parameters
    ----------
    y_prob : ndarray of shape (n_samples,)
        Predictions in [0, 1] of the new rows.
    members : list of ndarray of int
        The sorted row indices of each group in the new rows.
    groups, levels : ndarray of int of shape (n_updates,)
        Group and prediction level of each recorded patch (:class:`HKRRResult` ``update_groups``, ``update_levels``).
    deltas : ndarray of shape (n_updates,)
        The shift of each patch, in probability units.
    n_levels : int
        Number of prediction levels, as at fit.

    Returns
    -------
    patched : ndarray of shape (n_samples,)
        The predictions after every patch, clipped to [0, 1].
    """
    p = y_prob.copy()
    for g, v, delta in zip(groups, levels, deltas, strict=False):
        rows = members[g]
        idx = rows[prediction_levels(p[rows], n_levels) == v]
        p[idx] = np.clip(p[idx] + delta, 0.0, 1.0)
    return p

"""Score binning shared by metrics and binning calibrators (pure functions on clean float64 arrays)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def _float_bins(n_bins: int) -> float:
    """``n_bins`` as a float64 for the O(n) bin arithmetic, at most 2**53 (where float64 still counts exactly)."""
    return float(min(n_bins, 2**53))


def uniform_edges(n_bins: int) -> NDArray[np.float64]:
    """Edges of ``n_bins`` equal-width bins on [0, 1], shape (n_bins + 1,)."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def uniform_bin_ids(values: NDArray[np.float64], n_bins: int) -> NDArray[np.float64]:
    """Index of each score's bin among ``n_bins`` equal-width bins, closed on the left (the last on both sides).

    The same bins as ``np.searchsorted(uniform_edges(n_bins)[1:-1], values, side="right")``, without building the
    ``n_bins + 1`` edges: O(n) time and memory whatever ``n_bins``. The ids are float64 (exact integers); beyond
    2**53 bins, 2**53 bins are used (every float score in (0.5, 1] has its own bin well before that).
    """
    bins = _float_bins(n_bins)
    step = 1.0 / bins  # the edges are k * step, as np.linspace(0, 1, n_bins + 1) rounds them
    k = np.clip(np.floor(values * bins), 0.0, bins - 1.0)
    k -= (k >= 1.0) & (k * step > values)  # values * bins rounded up onto an edge the score lies below
    k += (k + 1.0 < bins) & ((k + 1.0) * step <= values)  # or down below an edge the score reaches
    return k


def right_closed_bin_ids(values: NDArray[np.float64], n_bins: int) -> NDArray[np.float64]:
    """Index of each value's bin among ``n_bins`` equal-width bins ``(k / n_bins, (k + 1) / n_bins]``, a value of 0
    in the first, as float64 exact integers; beyond 2**53 bins, 2**53 bins are used.

    ``ceil(values * n_bins) - 1`` alone puts a value on an edge one bin too high where the product rounds up
    (``0.14 * 100 = 14.000000000000002``); the edges are compared as the floats ``k / n_bins``.
    """
    bins = _float_bins(n_bins)
    k = np.clip(np.ceil(values * bins) - 1.0, 0.0, bins - 1.0)
    k -= (k >= 1.0) & (k / bins >= values)  # values * n_bins rounded up past an edge
    k += (k + 1.0 < bins) & ((k + 1.0) / bins < values)  # or down
    return k


def levels_reached(
    cumulative_weight: NDArray[np.float64], n_bins: int, total: float | None = None
) -> NDArray[np.float64]:
    """How many of the levels ``k / n_bins`` (k = 1, 2, ...) each cumulative weight reaches: ``floor(c n_bins / W)``.

    ``W`` is ``total``, by default the last cumulative weight, which reaches all ``n_bins`` levels. Comparing
    ``c n_bins`` with ``k W`` is exact with integer weights below 2**53, where ``(k / n_bins) * W`` is not
    (``0.3 * 500`` rounds to 150.00000000000003, above a cumulative weight of 150). Beyond 2**53 bins, 2**53
    levels are used.
    """
    bins = _float_bins(n_bins)
    reached = np.minimum(np.floor(cumulative_weight * bins / (cumulative_weight[-1] if total is None else total)), bins)
    if total is None:
        reached[-1] = bins
    return reached


def level_steps(
    values: NDArray[np.float64], reached: NDArray[np.float64], before: float = 0.0
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The sorted values at which the count of levels reached grows (from ``before``), and the count there.

    The value of a step is the inverted-CDF quantile of the levels between the previous count and its own.
    """
    grows = np.diff(reached, prepend=before) > 0
    return values[grows], reached[grows]


def bin_ids_from_steps(
    values: NDArray[np.float64], step_values: NDArray[np.float64], step_reached: NDArray[np.float64], n_bins: int
) -> NDArray[np.float64]:
    """Quantile bin of each value given the :func:`level_steps` of all the data: the count of levels whose
    quantile lies strictly below the value (bin k is ``(edge_k, edge_{k+1}]``), capped at ``n_bins - 1``."""
    below = np.searchsorted(step_values, values, side="left")
    return np.minimum(np.concatenate(([0.0], step_reached))[below], _float_bins(n_bins) - 1.0)


def weighted_quantiles(
    values: NDArray[np.float64], sample_weight: NDArray[np.float64], n_bins: int
) -> NDArray[np.float64]:
    """Inverted-CDF weighted quantiles at the levels ``k / n_bins``, k = 0 .. n_bins, shape (n_bins + 1,).

    For each level q, the smallest value v with W(x <= v) >= q W, the levels compared exactly
    (:func:`levels_reached`). Zero-weight rows are ignored. Deterministic under ties and row order.
    """
    v, cw = _sorted_cumulative(values, sample_weight)
    idx = np.searchsorted(levels_reached(cw, n_bins), np.arange(n_bins + 1), side="left")
    return v[np.minimum(idx, v.size - 1)]


def quantile_bin_ids(
    values: NDArray[np.float64], sample_weight: NDArray[np.float64], n_bins: int
) -> NDArray[np.float64]:
    """Index of each value's bin among the ``n_bins`` bins between the :func:`weighted_quantiles` edges.

    Bin k is ``(edge_k, edge_{k+1}]``, the first closed: the same bins as
    ``np.searchsorted(weighted_quantiles(values, sample_weight, n_bins)[1:-1], values, side="left")``, without
    building the edges, so O(n) time and memory whatever ``n_bins``. Float64 ids (exact integers).
    """
    v, cw = _sorted_cumulative(values, sample_weight)
    return bin_ids_from_steps(values, *level_steps(v, levels_reached(cw, n_bins)), n_bins)


def _sorted_cumulative(
    values: NDArray[np.float64], sample_weight: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The values of positive weight in increasing order, and their cumulative weights."""
    keep = sample_weight > 0
    v, w = values[keep], sample_weight[keep]
    order = np.argsort(v, kind="stable")
    return v[order], np.cumsum(w[order])


def equal_frequency_edges(
    y_prob: NDArray[np.float64], sample_weight: NDArray[np.float64], n_bins: int
) -> NDArray[np.float64]:
    """Interior edges of at most ``n_bins`` equal-weight bins, shape (n_edges,), strictly increasing.

    The edges are the weighted quantiles at levels k / n_bins, k = 1 .. n_bins - 1 (as
    :func:`weighted_quantiles`). Each edge is an observed score; ties that would make a bin empty merge it with
    its neighbour, so every bin of :func:`assign_bins` holds positive weight on the data the edges came from.
    Time and memory are O(n) whatever ``n_bins``, and with integer weights the levels are met exactly.
    """
    v, cw = _sorted_cumulative(y_prob, sample_weight)
    # the sorted row i is the quantile of the levels k W / n_bins in (cw[i-1], cw[i]]: it is an edge where the
    # count of levels up to cw[i], floor(cw[i] n_bins / W) capped at n_bins - 1, grows (comparing k / n_bins * W
    # with cw instead was off by one row where that product rounded up). Beyond 2**53 bins every row is an edge.
    edges, _ = level_steps(v, np.minimum(levels_reached(cw, n_bins), _float_bins(n_bins) - 1.0))
    return np.unique(edges[edges < v[-1]])


def assign_bins(y_prob: NDArray[np.float64], interior_edges: NDArray[np.float64]) -> NDArray[np.intp]:
    """Bin index in ``0..len(interior_edges)`` of each score; bin k is ``(edge_{k-1}, edge_k]``.

    Scores beyond the outer edges fall into the first or last bin.
    """
    return np.searchsorted(interior_edges, y_prob, side="left")

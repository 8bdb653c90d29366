"""Score binning shared by metrics and binning calibrators (pure functions on clean float64 arrays)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def uniform_edges(n_bins: int) -> NDArray[np.float64]:
    """Edges of ``n_bins`` equal-width bins on [0, 1], shape (n_bins + 1,)."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def weighted_quantiles(
    values: NDArray[np.float64], sample_weight: NDArray[np.float64], levels: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Inverted-CDF weighted quantiles: for each level q, the smallest value v with W(x <= v) >= q W.

    Zero-weight rows are ignored. Deterministic under ties and row order.
    """
    v, cw = _sorted_cumulative(values, sample_weight)
    idx = np.searchsorted(cw, np.asarray(levels) * cw[-1], side="left")
    return v[np.clip(idx, 0, v.size - 1)]


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
    bins = float(min(n_bins, 2**53))
    reached = np.minimum(np.floor(cw * bins / cw[-1]), bins - 1.0)
    edges = v[np.diff(reached, prepend=0.0) > 0]
    return np.unique(edges[edges < v[-1]])


def assign_bins(y_prob: NDArray[np.float64], interior_edges: NDArray[np.float64]) -> NDArray[np.intp]:
    """Bin index in ``0..len(interior_edges)`` of each score; bin k is ``(edge_{k-1}, edge_k]``.

    Scores beyond the outer edges fall into the first or last bin.
    """
    return np.searchsorted(interior_edges, y_prob, side="left")

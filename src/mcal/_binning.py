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
    keep = sample_weight > 0
    v, w = values[keep], sample_weight[keep]
    order = np.argsort(v, kind="stable")
    v, cw = v[order], np.cumsum(w[order])
    idx = np.searchsorted(cw, np.asarray(levels) * cw[-1], side="left")
    return v[np.clip(idx, 0, v.size - 1)]


def equal_frequency_edges(
    y_prob: NDArray[np.float64], sample_weight: NDArray[np.float64], n_bins: int
) -> NDArray[np.float64]:
    """Interior edges of at most ``n_bins`` equal-weight bins, shape (n_edges,), strictly increasing.

    Each edge is an observed score; ties that would make a bin empty merge it with its neighbour, so
    every bin of :func:`assign_bins` holds positive weight on the data the edges came from.
    """
    edges = weighted_quantiles(y_prob, sample_weight, np.arange(1, n_bins) / n_bins)
    highest = y_prob[sample_weight > 0].max()
    return np.unique(edges[edges < highest])


def assign_bins(y_prob: NDArray[np.float64], interior_edges: NDArray[np.float64]) -> NDArray[np.intp]:
    """Bin index in ``0..len(interior_edges)`` of each score; bin k is ``(edge_{k-1}, edge_k]``.

    Scores beyond the outer edges fall into the first or last bin.
    """
    return np.searchsorted(interior_edges, y_prob, side="left")

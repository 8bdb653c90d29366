"""Compiled MCNet inference: per context and bin, the calibrated logit tabulated on a grid (numpy evaluation).

For the context-only variants the calibration map is, for a fixed context c and bin k, a strictly
increasing function of one number (the score logit). :func:`build_tables` tabulates it on a uniform grid
over the whole bin with its exact derivative f1, and :func:`evaluate_tables` evaluates it by piecewise
cubic Hermite interpolation, with slopes limited per cell (Fritsch and Carlson 1980) so that the
interpolant stays monotone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal.mcnet._network import integrand, ordered_tables
from mcal.mcnet._quadrature import clenshaw_curtis

#: Grid points per (context, bin).
GRID_SIZE = 129
#: Clenshaw-Curtis nodes used to integrate f1 over one grid cell (exact for quintics; cells are narrow).
CELL_NODES = 5
#: Integrand evaluations per network call (bounds the memory of the activations).
_EVALS_PER_CALL = 65536
#: Contexts whose tables :func:`check_tables` compares with the network (all when there are fewer).
_CHECKED_CONTEXTS = 64
#: Relative difference allowed between a table and the network at a grid point: above the exact mode's own
#: quadrature error, far below the difference to another model's tables (docs/defaults/mcnet.rst).
_TABLE_TOLERANCE = 1e-3


def build_tables(
    torch: Any,
    P: Any,
    *,
    n_hidden: int,
    edges: NDArray[np.float64],
    geometry: dict[str, NDArray[np.float64]],
    n_nodes: int,
    bin_joins: str,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Tabulate the calibrated logit (without the auxiliary network) of every context and bin.

    Parameters
    ----------
    P : torch.nn.ParameterDict
        Network weights (float64 for tables that match the exact mode).
    n_hidden : int
        Number of hidden layers of f1 and f2.
    edges : ndarray of shape (K + 1,)
        Bin edges in logit units, outer ones included; bin k is tabulated over ``[edges[k], edges[k+1]]``.
    geometry : dict of str to ndarray
        ``edges`` (K + 1,) and ``anchor``, ``center``, ``half_width`` (K,) of each bin, in logit units.
    n_nodes : int
        Clenshaw-Curtis nodes of the exact mode, used for the integral from the grid start to the anchor.
    bin_joins : {"continuous", "raised"}
        How the bins' bias terms are joined (:func:`mcal.mcnet._network.ordered_tables`).

    Returns
    -------
    values : ndarray of shape (C + 1, K, GRID_SIZE)
        Calibrated logit at the grid points, strictly increasing along the last axis.
    slopes : ndarray of shape (C + 1, K, GRID_SIZE - 1, 2)
        Derivative at the left and right end of each cell, limited so that every cell is monotone.
    """
    K = edges.size - 1
    grid = np.linspace(edges[:-1], edges[1:], GRID_SIZE, axis=1)  # (K, G)
    cell_nodes, cell_weights = clenshaw_curtis(CELL_NODES)
    start_nodes, start_weights = clenshaw_curtis(n_nodes)
    step = (edges[1:] - edges[:-1]) / (GRID_SIZE - 1)
    # points: the grid, every cell's quadrature nodes, and the nodes of the integral from the grid start to the anchor
    cells = grid[:, :-1, None] + (step[:, None, None] / 2.0) * (cell_nodes + 1.0)
    to_anchor = edges[:-1, None] + ((geometry["anchor"] - edges[:-1]) / 2.0)[:, None] * (start_nodes + 1.0)
    points = np.concatenate([grid, cells.reshape(K, -1), to_anchor], axis=1)
    u = (points - geometry["center"][:, None]) / geometry["half_width"][:, None]
    with torch.no_grad():
        dtype = P["f1_out_b"].dtype
        geometry_t = {k: torch.as_tensor(v, dtype=dtype, device=P["f1_out_b"].device) for k, v in geometry.items()}
        # (K, C + 1, H0), (K, C + 1): the bias terms joined so that the map never drops at a bin edge
        offset, bias, _, _ = ordered_tables(torch, P, geometry_t, n_hidden=n_hidden, n_nodes=n_nodes,
                                            bin_joins=bin_joins)  # fmt: skip
        n_ctx = offset.shape[1]
        bins = torch.arange(K, device=offset.device)
        u_t = torch.as_tensor(u, dtype=offset.dtype, device=offset.device)
        chunk = max(1, _EVALS_PER_CALL // (K * n_ctx))
        f1 = torch.cat(
            [
                integrand(torch, P, n_hidden, u_t[:, None, s : s + chunk].expand(K, n_ctx, -1), offset, bins)
                for s in range(0, u.shape[1], chunk)
            ],
            dim=-1,
        )
        f1 = f1.cpu().numpy().transpose(1, 0, 2)  # (C + 1, K, points)
        bias = bias.cpu().numpy().T
    G = GRID_SIZE
    slope_at_grid = f1[..., :G]
    cell_integrals = (f1[..., G : G + (G - 1) * CELL_NODES].reshape(n_ctx, K, G - 1, CELL_NODES) @ cell_weights) * (
        step[None, :, None] / 2.0
    )
    start_to_anchor = (f1[..., G + (G - 1) * CELL_NODES :] @ start_weights) * ((geometry["anchor"] - edges[:-1]) / 2.0)
    values = np.concatenate([np.zeros((n_ctx, K, 1)), np.cumsum(cell_integrals, axis=-1)], axis=-1)
    values += (bias - start_to_anchor)[..., None]
    for k in range(1, K):  # the tables' own integrals may end a bin above the T-node quadrature's: close that gap
        values[:, k] += np.maximum(values[:, k - 1, -1] - values[:, k, 0], 0.0)[:, None]
    return values, _limit_slopes(values, slope_at_grid, step)


def _limit_slopes(
    values: NDArray[np.float64], slope_at_grid: NDArray[np.float64], step: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Per-cell end slopes scaled into the Fritsch-Carlson circle of radius 3, which makes each cell monotone."""
    secant = np.diff(values, axis=-1) / step[None, :, None]
    slopes = np.stack([slope_at_grid[..., :-1], slope_at_grid[..., 1:]], axis=-1)
    ratio = np.sqrt(np.sum((slopes / secant[..., None]) ** 2, axis=-1))
    scale = np.where(ratio > 3.0, 3.0 / ratio, 1.0)
    return slopes * scale[..., None]


def evaluate_tables(
    values: NDArray[np.float64],
    slopes: NDArray[np.float64],
    edges: NDArray[np.float64],
    x: NDArray[np.float64],
    bins: NDArray[np.intp],
    contexts: NDArray[np.intp],
) -> NDArray[np.float64]:
    """Calibrated logits from the tables by monotone cubic Hermite interpolation.

    Parameters
    ----------
    values, slopes : ndarray
        As returned by :func:`build_tables`.
    edges : ndarray of shape (K + 1,)
        Bin edges in logit units, outer ones included.
    x : ndarray of shape (n,)
        Score logits inside ``[edges[0], edges[-1]]``.
    bins, contexts : ndarray of shape (n,)
        Bin and context code of each row.

    Returns
    -------
    logits : ndarray of shape (n,)
    """
    _n_ctx, K, G = values.shape
    lower = edges[:-1][bins]
    step = ((edges[1:] - edges[:-1]) / (G - 1))[bins]
    s = (x - lower) / step
    j = np.clip(np.floor(s).astype(np.intp), 0, G - 2)
    s = np.clip(s - j, 0.0, 1.0)
    cell = (contexts * K + bins) * (G - 1) + j
    v0 = values.reshape(-1)[cell + contexts * K + bins]
    v1 = values.reshape(-1)[cell + contexts * K + bins + 1]
    m = slopes.reshape(-1, 2)[cell] * step[:, None]
    s2 = s * s
    s3 = s2 * s
    return (2 * s3 - 3 * s2 + 1) * v0 + (s3 - 2 * s2 + s) * m[:, 0] + (3 * s2 - 2 * s3) * v1 + (s3 - s2) * m[:, 1]


def check_tables(
    values: NDArray[np.float64],
    edges: NDArray[np.float64],
    exact_logits: Callable[[NDArray[np.float64], NDArray[np.intp], NDArray[np.intp]], NDArray[np.float64]],
) -> None:
    """Spot-check tables read from a model file against the network they claim to tabulate.

    The middle grid point of every bin, for up to :data:`_CHECKED_CONTEXTS` contexts (evenly spaced, the
    field-agnostic one first), must equal ``exact_logits(x, bins, contexts)`` (the network's calibrated logit by
    quadrature, which agrees with the tables up to its own quadrature error). Tables from another model of the
    same shape would otherwise load and predict something else in compiled mode.

    Raises
    ------
    ValueError
        If a checked grid point differs from the network by more than :data:`_TABLE_TOLERANCE` (relative).
    """
    n_ctx, K, G = values.shape
    chosen = np.unique(np.linspace(0, n_ctx - 1, min(n_ctx, _CHECKED_CONTEXTS)).round().astype(np.intp))
    mid = G // 2
    x = edges[:-1] + (edges[1:] - edges[:-1]) * (mid / (G - 1))
    bins, contexts = np.tile(np.arange(K, dtype=np.intp), chosen.size), np.repeat(chosen, K)
    exact = exact_logits(x[bins], bins, contexts)
    tabled = values[contexts, bins, mid]
    bad = np.abs(tabled - exact) > _TABLE_TOLERANCE * np.maximum(1.0, np.abs(exact))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            "model weights 'compiled.values' must be the tables of this model's network; got "
            f"{int(bad.sum())} of {bad.size} checked grid points that differ from the network "
            f"(context {int(contexts[i])}, bin {int(bins[i])}: table {tabled[i]:.6g}, network {exact[i]:.6g})"
        )

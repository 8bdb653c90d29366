"""Eq. 7's integral on a fixed score grid: MCNet's default map (``integral="grid"``), in training and prediction.

For a fixed bin k and context c the integrand :math:`f_1^k(t, h^k(c))` depends on the score alone, so it is
evaluated once per step on :data:`GRID_POINTS` equally spaced scores spanning the bin's data range, for every
(bin, context) at once, and integrated as the trapezoid of its piecewise-linear interpolant. That interpolant is
positive (its knots are values of f1 > 0), so the integral is strictly increasing in the score by construction.
A row then costs a gather and a quadratic: in grid cell j, with :math:`t = s - g_j` and spacing :math:`\\Delta`,

.. math:: f(s) = F_j + v_j t + \\frac{v_{j+1} - v_j}{2\\Delta} t^2,

where :math:`v_j` is f1 at grid point :math:`g_j` and :math:`F_j` the value there. Outside the grid (scores below
the smallest or above the largest calibration score) the map continues linearly with the end value of f1. The
bins are joined as in :func:`mcal.mcnet._network.ordered_tables`: each bin's rise is the map's value at its upper
edge. torch is passed in by the caller; this module never imports it itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal.mcnet._network import context_tables, integrand

#: Grid points per (bin, context): 64 cells per bin; the map differs from the T-node quadrature of the same
#: weights by the interpolation error of f1 over one cell (``tests/mcnet/test_grid.py`` bounds it).
GRID_POINTS = 65


def roughness(torch: Any, slopes: Any) -> Any:
    """MCNet's smoothness penalty: the squared differences of log f1 between neighbouring grid points, summed
    along each (bin, context) grid and averaged over the grids.

    Parameters
    ----------
    slopes : tensor of shape (K, C + 1, G)
        f1 at the grid points (positive), as :func:`grid_tables` returns them.

    Returns
    -------
    penalty : tensor of shape ()
        Zero exactly when f1 is constant along every grid (each bin's map linear in the score logit, as the
        warm start is); differentiable in ``slopes``.
    """
    log_f1 = torch.log(slopes)
    return ((log_f1[..., 1:] - log_f1[..., :-1]) ** 2).sum(-1).mean()


def grid_spacing(geometry: dict[str, Any]) -> tuple[Any, Any]:
    """First grid point (the bin's anchor) and spacing of each bin's grid, both of shape (K,), in logit units.

    The grid spans twice the half-width from the anchor: the bin's data range, or :data:`MIN_HALF_WIDTH
    <mcal.mcnet._inputs.MIN_HALF_WIDTH>` on each side of a bin of tied scores.
    """
    return geometry["anchor"], 2.0 * geometry["half_width"] / (GRID_POINTS - 1)


def evaluate_grid(torch: Any, values: Any, slopes: Any, lower: Any, step: Any, x: Any, bins: Any, contexts: Any) -> Any:
    """The grid map at score logits ``x``: a gather and a quadratic per row (linear outside the grid).

    Parameters
    ----------
    values, slopes : tensor of shape (K, C + 1, G)
        The map and f1 at the grid points.
    lower, step : tensor of shape (K,)
        First grid point and spacing of each bin (:func:`grid_spacing`).
    x : tensor of shape (n,)
        Score logits.
    bins, contexts : long tensor of shape (n,)
        Bin and context code of each row.

    Returns
    -------
    logits : tensor of shape (n,)
    """
    _, n_ctx, G = values.shape
    h = step[bins]
    pos = (x - lower[bins]) / h
    j = torch.clamp(torch.floor(pos), 0, G - 2).long()
    cell = (bins * n_ctx + contexts) * G + j
    # index_select: its backward is an index_add, much faster on the CPU than advanced indexing's
    v0, v1 = torch.index_select(slopes.reshape(-1), 0, cell), torch.index_select(slopes.reshape(-1), 0, cell + 1)
    t = (pos - j) * h
    inside = torch.minimum(torch.clamp(t, min=0.0), h)
    beyond = torch.where(t < 0, v0, v1) * (t - inside)
    start = torch.index_select(values.reshape(-1), 0, cell)
    return start + inside * (v0 + (v1 - v0) * inside / (2.0 * h)) + beyond


def grid_tables(torch: Any, P: Any, geometry: dict[str, Any], *, n_hidden: int, bin_joins: str) -> dict[str, Any]:
    """The grid map of every (bin, context) from the network's weights, the bins joined so the map never drops.

    Parameters
    ----------
    geometry : dict of str to tensor
        ``edges`` (K + 1,) and ``anchor``, ``center``, ``half_width`` (K,), in logit units.
    bin_joins : {"continuous", "raised"}
        How the bins' bias terms are joined (MCNet's ``bin_joins``).

    Returns
    -------
    tables : dict of str to tensor
        ``values`` and ``slopes`` (K, C + 1, G): the map and f1 at the grid points; ``lower``, ``step`` (K,);
        ``raw_bias`` (K, C + 1), the network's own bias terms f2, and ``gaps`` (K - 1, C + 1), each bin's rise
        from its anchor to its upper edge (eq. 10's penalty reads both).
    """
    offset, raw = context_tables(torch, P, n_hidden)
    K, n_ctx = raw.shape
    lower, step = grid_spacing(geometry)
    positions = torch.arange(GRID_POINTS, dtype=raw.dtype, device=raw.device)
    u = (lower[:, None] + step[:, None] * positions - geometry["center"][:, None]) / geometry["half_width"][:, None]
    bins = torch.arange(K, device=raw.device)
    slopes = integrand(torch, P, n_hidden, u[:, None, :].expand(K, n_ctx, GRID_POINTS), offset, bins)
    cells = (slopes[..., 1:] + slopes[..., :-1]) * (step[:, None, None] / 2.0)
    rise_in_bin = torch.cat([raw.new_zeros(K, n_ctx, 1), torch.cumsum(cells, dim=-1)], dim=-1)
    if K < 2:
        gaps, bias = raw.new_zeros(0, n_ctx), raw
    else:
        inner_bins = bins[:-1].repeat_interleave(n_ctx)
        ctx = torch.arange(n_ctx, device=raw.device).repeat(K - 1)
        upper = geometry["edges"][1:-1][inner_bins]
        gaps = evaluate_grid(torch, rise_in_bin, slopes, lower, step, upper, inner_bins, ctx).reshape(K - 1, n_ctx)
        rise = torch.cat([raw.new_zeros(1, n_ctx), torch.cumsum(gaps, dim=0)])
        bias = rise + (raw[:1] if bin_joins == "continuous" else torch.cummax(raw - rise, dim=0).values)
    return {
        "values": bias[..., None] + rise_in_bin,
        "slopes": slopes,
        "lower": lower,
        "step": step,
        "raw_bias": raw,
        "gaps": gaps,
    }


def stored_tables(tables: dict[str, Any]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The grid tables as a model file stores them: values (C + 1, K, G) and each cell's end slopes
    (C + 1, K, G - 1, 2), the layout of the quadrature-trained model's compiled tables."""
    values = tables["values"].detach().cpu().double().numpy().transpose(1, 0, 2)
    slopes = tables["slopes"].detach().cpu().double().numpy().transpose(1, 0, 2)
    # C order: safetensors writes an array's buffer as it lies in memory
    return np.ascontiguousarray(values), np.ascontiguousarray(np.stack([slopes[..., :-1], slopes[..., 1:]], axis=-1))


def stored_grid_logits(
    torch: Any,
    values: NDArray[np.float64],
    slopes: NDArray[np.float64],
    geometry: dict[str, NDArray[np.float64]],
    x: NDArray[np.float64],
    bins: NDArray[np.intp],
    contexts: NDArray[np.intp],
) -> NDArray[np.float64]:
    """The grid map of stored tables (:func:`stored_tables`' layout) at score logits ``x``, in float64."""
    as_t = torch.as_tensor
    v = np.concatenate([slopes[..., 0], slopes[..., -1:, 1]], axis=-1).transpose(1, 0, 2)
    lower, step = grid_spacing(geometry)
    with torch.no_grad():
        return evaluate_grid(
            torch, as_t(np.ascontiguousarray(values.transpose(1, 0, 2))), as_t(np.ascontiguousarray(v)),
            as_t(lower), as_t(step), as_t(x), as_t(bins), as_t(contexts),
        ).numpy()  # fmt: skip


#: Largest difference allowed between loaded grid tables and the tables rebuilt from the weights, relative to
#: max(1, |value|): both are float64 sums of the same float32 weights, so only the order of sums may differ.
GRID_TABLE_TOLERANCE = 1e-9


def check_grid_tables(
    values: NDArray[np.float64], slopes: NDArray[np.float64], rebuilt: tuple[NDArray[np.float64], NDArray[np.float64]]
) -> None:
    """Check tables read from a model file against the tables of its weights, ``rebuilt``.

    Raises
    ------
    ValueError
        If their shapes differ or a value or slope differs by more than :data:`GRID_TABLE_TOLERANCE`.
    """
    for name, stored, own in (("values", values, rebuilt[0]), ("slopes", slopes, rebuilt[1])):
        if stored.shape != own.shape:
            raise ValueError(
                f"model weights 'compiled.{name}' must have the shape of this model's grid tables {own.shape}; "
                f"got {stored.shape}"
            )
        bad = np.abs(stored - own) > GRID_TABLE_TOLERANCE * np.maximum(1.0, np.abs(own))
        if bad.any():
            raise ValueError(
                f"model weights 'compiled.{name}' must be the tables of this model's network; got "
                f"{int(bad.sum())} of {bad.size} entries that differ from the grid tables its weights give"
            )

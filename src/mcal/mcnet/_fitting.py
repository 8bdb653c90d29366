"""MCNet's fit: the network trained at one bin count, and the held-out choice of the bin count (``n_bins="auto"``).

The choice trains each candidate count of :data:`BIN_COUNT_CANDIDATES` on the same part of the calibration rows,
for a short budget annealed to its end, reads each one's log loss on the rows held out, and keeps the fewest bins
whose held-out loss is within one paired standard error of the lowest (:func:`choose_bin_count`); the fit then
trains that count on every row, as a fit with that ``n_bins`` would. Only calibration rows are read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._binning import assign_bins, equal_frequency_edges
from mcal.mcnet._distributed import train_in_processes
from mcal.mcnet._inputs import LOGIT_BOUND, bin_geometry, warm_start
from mcal.mcnet._network import Architecture, initial_weights, to_parameters, warm_start_bias
from mcal.mcnet._training import Data, Schedule, Spec, calibrated_logits, model_tables, split_rows, train

#: The bin counts that ``n_bins="auto"`` chooses among (``docs/defaults/mcnet.rst``).
BIN_COUNT_CANDIDATES = (1, 2, 4)
#: Part of the calibration rows held out to choose the bin count.
CHOICE_HOLDOUT = 0.25
#: Each candidate's choice fit runs this part of the step budget (at least one step), annealed to its end.
CHOICE_BUDGET = 0.4


@dataclass(frozen=True)
class Rows:
    """The calibration rows as the fit reads them: score logits, labels, weights (largest 1), context codes,
    balance groups, standardised auxiliary features, and the smallest and largest score of positive weight."""

    x: NDArray[np.float64]
    y: NDArray[np.float64]
    w: NDArray[np.float64]
    contexts: NDArray[np.intp]
    groups: NDArray[np.intp] | None
    n_groups: int
    aux: NDArray[np.float64] | None
    n_contexts: int
    score_range: NDArray[np.float64]


@dataclass(frozen=True)
class Layout:
    """What a bin count fixes: the bin edges (outer ones at :math:`\\mp` LOGIT_BOUND), each row's bin, the geometry."""

    edges: NDArray[np.float64]
    bins: NDArray[np.intp]
    geometry: dict[str, NDArray[np.float64]]

    @classmethod
    def of(cls, rows: Rows, n_bins: int) -> Layout:
        """Equal-frequency bins of the calibration scores (fewer than ``n_bins`` where tied scores merge them)."""
        interior = equal_frequency_edges(rows.x, rows.w, n_bins)
        edges = np.concatenate([[-LOGIT_BOUND], interior, [LOGIT_BOUND]])
        return cls(edges, assign_bins(rows.x, interior), bin_geometry(edges, rows.score_range))


@dataclass(frozen=True)
class Trainer:
    """How the estimator trains: its network sizes, loss, schedule settings and processes (from its parameters)."""

    architecture: Callable[[int], Architecture]  # the network of a bin count
    spec: Callable[[Architecture], Spec]
    batch_size: Callable[[int], int]  # rows per step of a training part of n rows
    schedule: dict[str, Any]  # Schedule.build's keyword arguments beside batch_size
    n_processes: int
    n_threads: int | None
    progress: bool | None
    score_scale: float  # of f1's initial score weights (:func:`mcal.mcnet._network.initial_weights`)


def fit_weights(
    torch: Any,
    device: Any,
    trainer: Trainer,
    rows: Rows,
    layout: Layout,
    *,
    train_rows: NDArray[np.intp],
    validation_rows: NDArray[np.intp],
    rng: np.random.Generator,
    max_steps: int,
) -> tuple[Any, dict[str, Any], Data, dict[str, Any]]:
    """Train the network of ``layout`` from its warm start on ``train_rows``, for at most ``max_steps`` steps.

    Returns
    -------
    P : torch.nn.ParameterDict
        The trained weights (float32, on ``device``).
    history : dict
        As :func:`mcal.mcnet._training.train` returns it.
    data : Data
        The rows on ``device``.
    geometry : dict of str to tensor
        The layout's geometry on ``device``.
    """
    arch = trainer.architecture(layout.edges.size - 1)
    t = train_rows
    slope, intercepts = warm_start(rows.x[t], rows.y[t], rows.w[t], rows.contexts[t], rows.n_contexts)
    weights = initial_weights(arch, rng, slope=slope, score_scale=trainer.score_scale)
    P = to_parameters(torch, weights, device=device, dtype=torch.float32)
    anchors = slope * layout.geometry["anchor"][:, None] + intercepts[None, :]
    warm_start_bias(torch, P, len(arch.hidden_sizes), anchors)
    data = Data.on_device(torch, device, rows.x, rows.y, rows.w, layout.bins, rows.contexts, rows.groups,
                          rows.n_groups, rows.aux)  # fmt: skip
    schedule = Schedule.build(train_rows.size, validation_rows.size, batch_size=trainer.batch_size(train_rows.size),
                              **{**trainer.schedule, "max_steps": max_steps})  # fmt: skip
    geometry = {k: torch.as_tensor(v, dtype=torch.float32, device=device) for k, v in layout.geometry.items()}
    run: dict[str, Any] = dict(train_rows=train_rows, validation_rows=validation_rows, schedule=schedule, rng=rng,
                               show_progress=trainer.progress)  # fmt: skip
    spec = trainer.spec(arch)
    if trainer.n_processes == 1:
        history = train(torch, P, spec, geometry, data, **run)
    else:
        history = train_in_processes(trainer.n_processes, torch, P, spec, geometry, data, n_threads=trainer.n_threads,
                                     **run)  # fmt: skip
    return P, history, data, geometry


def held_out_losses(
    torch: Any, P: Any, spec: Spec, geometry: dict[str, Any], data: Data, rows: NDArray[np.intp]
) -> Any:
    """Each row's log loss under the map of weights ``P`` (its own context, no penalty), as a float64 array."""
    r = torch.as_tensor(rows, device=data.x.device)
    aux = None if data.aux is None else data.aux[r]
    with torch.no_grad():
        tables, _ = model_tables(torch, P, spec, geometry)
        logits = calibrated_logits(torch, P, spec, geometry, tables, data.x[r], data.bins[rows], data.contexts[rows],
                                   aux)  # fmt: skip
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, data.y[r], reduction="none")
    return loss.cpu().double().numpy()


def choose_bin_count(counts: NDArray[np.intp], losses: NDArray[np.float64], w: NDArray[np.float64]) -> int:
    """The fewest bins whose weighted mean held-out loss is within one paired standard error of the lowest.

    Parameters
    ----------
    counts : ndarray of shape (n_candidates,)
        The candidate bin counts, increasing.
    losses : ndarray of shape (n_candidates, n_held_out)
        Each candidate's log loss on each held-out row.
    w : ndarray of shape (n_held_out,)
        The held-out rows' weights (positive sum).

    Returns
    -------
    n_bins : int
        The chosen count. The standard error is that of the weighted mean of the paired differences (each
        candidate's loss minus the lowest one's, row by row): a simpler map is kept unless a finer one is better
        by more than the noise of the held-out rows.
    """
    means = losses @ w / w.sum()
    diff = losses - losses[np.argmin(means)]
    gap = means - means.min()
    se = np.sqrt(((diff - gap[:, None]) ** 2) @ (w / w.sum()) ** 2)
    return int(counts[np.flatnonzero(gap <= se)[0]])


def choice_fits(
    torch: Any, device: Any, trainer: Trainer, rows: Rows, rng: np.random.Generator, budget: int
) -> tuple[int, NDArray[np.float64]]:
    """Choose the bin count among :data:`BIN_COUNT_CANDIDATES` on held-out calibration rows (module docstring).

    Returns
    -------
    n_bins : int
        The chosen count.
    losses : ndarray of shape (len(BIN_COUNT_CANDIDATES),)
        Each candidate's weighted mean held-out log loss (a count that tied scores merge into a smaller one's
        layout gets that layout's loss).

    Raises
    ------
    ValueError
        If the held-out part is empty or of zero weight, or the rest lacks a class.
    """
    train_rows, held = split_rows(rows.y, rows.w, CHOICE_HOLDOUT, rng, setting=f"n_bins='auto' (it holds out {CHOICE_HOLDOUT:.0%} of the rows)",
                                  hint="(use an integer n_bins or more data)")  # fmt: skip
    steps = max(1, round(CHOICE_BUDGET * budget))
    losses, seen = [], {}
    for count in BIN_COUNT_CANDIDATES:
        layout = Layout.of(rows, count)
        key = layout.edges.tobytes()
        if key not in seen:
            fit_rng = rng.spawn(1)[0]
            P, _, data, geometry = fit_weights(torch, device, trainer, rows, layout, train_rows=train_rows,
                                               validation_rows=held[:0], rng=fit_rng, max_steps=steps)  # fmt: skip
            spec = trainer.spec(trainer.architecture(layout.edges.size - 1))
            seen[key] = held_out_losses(torch, P, spec, geometry, data, held)
        losses.append(seen[key])
    table = np.stack(losses)
    counts = np.asarray(BIN_COUNT_CANDIDATES)
    return choose_bin_count(counts, table, rows.w[held]), table @ rows.w[held] / rows.w[held].sum()

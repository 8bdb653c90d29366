"""MCNet's forward pass, its loss (eq. 13), the held-out split and the mini-batch Adam loop with early stopping."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._progress import progress
from mcal._torch import balance_penalty
from mcal.mcnet._grid import evaluate_grid, grid_tables, roughness
from mcal.mcnet._network import auxiliary, integrate_rows, ordered_tables

#: Fraction of training rows whose context is replaced by the no-context code in each epoch, so that the
#: no-context function (the fallback for fields unseen at fit time) is trained on the same data.
FALLBACK_RATE = 0.1
#: An epoch counts as an improvement when the held-out loss falls by more than this.
TOL = 1e-5
#: Rows per forward pass when no gradient is needed (bounds the memory of the T-node activations).
EVAL_CHUNK = 1024
#: Fewest optimizer steps between two readings of the held-out loss.
VALIDATION_EVERY = 25
#: Most steps of the linear learning-rate warm-up (a tenth of the budget when that is fewer).
WARMUP_STEPS = 100
#: The cosine schedule's final learning rate, as a fraction of ``learning_rate``.
FINAL_LR_FACTOR = 0.05


@dataclass(frozen=True)
class Spec:
    """Hyperparameters the forward pass and the loss need."""

    n_hidden: int
    n_nodes: int
    beta: float
    alpha: float
    memory_efficient: bool
    bin_joins: str
    integral: str = "quadrature"
    smoothness: float = 0.0


@dataclass
class Data:
    """The calibration rows as tensors on the training device (bins and contexts stay numpy)."""

    x: Any  # (n,) score logits
    y: Any  # (n,) labels
    w: Any  # (n,) sample weights
    bins: NDArray[np.intp]
    contexts: NDArray[np.intp]  # 0 = no context, 1..C fields
    groups: Any  # (n,) long codes of the balance field, or None
    n_groups: int
    aux: Any  # (n, F) standardised auxiliary features, or None

    @classmethod
    def on_device(
        cls,
        torch: Any,
        device: Any,
        x: NDArray[np.float64],
        y: NDArray[np.float64],
        w: NDArray[np.float64],
        bins: NDArray[np.intp],
        contexts: NDArray[np.intp],
        groups: NDArray[np.intp] | None,
        n_groups: int,
        aux: NDArray[np.float64] | None,
    ) -> Data:
        """The rows from numpy arrays: float32 tensors on ``device`` (``groups`` int64; None stays None)."""

        def tensor(a: Any, dtype: Any = torch.float32) -> Any:
            if a is None:
                return None
            # a read-only array (mcal's checked inputs may be the caller's) is copied: torch will not share it; nor
            # will it take negative strides
            a = np.ascontiguousarray(a)
            return (torch.as_tensor if a.flags.writeable else torch.tensor)(a, dtype=dtype, device=device)

        return cls(tensor(x), tensor(y), tensor(w), bins, contexts, tensor(groups, torch.long), n_groups, tensor(aux))


def split_rows(
    y: NDArray[np.float64],
    sample_weight: NDArray[np.float64],
    fraction: float,
    rng: np.random.Generator,
    *,
    setting: str | None = None,
    hint: str = "(use validation_fraction=0 or more data)",
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Training and held-out rows (a ``fraction`` of them held out, drawn from ``rng``); the held-out part needs
    positive weight, the training part both classes. ``setting`` and ``hint`` word the errors (by default
    ``validation_fraction=<fraction>`` and how to avoid them).

    Raises
    ------
    ValueError
        If a part is empty, the held-out part has no weight or the training part lacks a class.
    """
    n = y.shape[0]
    order = rng.permutation(n)
    n_val = round(fraction * n)
    setting = f"validation_fraction={fraction!r}" if setting is None else setting
    if fraction > 0 and not 1 <= n_val < n:
        raise ValueError(
            f"{setting} must leave at least one row in each part; got {n_val} held-out row(s) of {n} {hint}"
        )
    train, held = np.sort(order[n_val:]), np.sort(order[:n_val])
    if held.size and not sample_weight[held].sum() > 0:
        raise ValueError(
            f"{setting} must leave held-out rows of positive weight; "
            f"got {held.size} held-out row(s) of total weight 0 {hint}"
        )
    w, labels = sample_weight[train], y[train]
    if not (np.dot(w, labels) > 0 and np.dot(w, 1.0 - labels) > 0):
        raise ValueError(
            f"{setting} must leave both classes (with positive weight) in the training "
            f"part; got only class {int(np.dot(w, labels) > 0)} in its {train.size} row(s) {hint}"
        )
    return train, held


def calibrated_logits(
    torch: Any,
    P: Any,
    spec: Spec,
    geometry: dict[str, Any],
    tables: Any,
    x: Any,
    bins: NDArray[np.intp],
    contexts: NDArray[np.intp],
    aux: Any,
) -> Any:
    """Eq. 7-8 in logit units, plus the auxiliary network (Appendix A.3) when present; shape (n,).

    ``tables`` are :func:`model_tables`' for ``spec``. With the quadrature and without gradient, ``EVAL_CHUNK`` rows
    at a time (bounds the memory of the T-node activations).
    """
    if spec.integral == "grid":
        b = torch.as_tensor(bins, device=x.device)
        c = torch.as_tensor(contexts, device=x.device)
        t = tables
        out = evaluate_grid(torch, t["values"], t["slopes"], t["lower"], t["step"], x, b, c)
        return out if aux is None else out + auxiliary(torch, P, aux)
    if not torch.is_grad_enabled() and bins.size > EVAL_CHUNK:
        return torch.cat(
            [
                calibrated_logits(
                    torch,
                    P,
                    spec,
                    geometry,
                    tables,
                    x[s : s + EVAL_CHUNK],
                    bins[s : s + EVAL_CHUNK],
                    contexts[s : s + EVAL_CHUNK],
                    None if aux is None else aux[s : s + EVAL_CHUNK],
                )
                for s in range(0, bins.size, EVAL_CHUNK)
            ]
        )
    offset, bias = tables
    b = torch.as_tensor(bins, device=x.device)
    c = torch.as_tensor(contexts, device=x.device)
    integral = integrate_rows(
        torch,
        P,
        geometry,
        x,
        bins,
        offset[b, c],
        n_hidden=spec.n_hidden,
        n_nodes=spec.n_nodes,
        memory_efficient=spec.memory_efficient,
    )
    out = bias[b, c] + integral
    return out if aux is None else out + auxiliary(torch, P, aux)


def order_penalty(torch: Any, raw_bias: Any, gaps: Any) -> Any:
    """Eq. 10: the sum over contexts and inner bin edges of max(f^k(b_k, c) - f^{k+1}(b_k, c), 0), on probabilities.

    Bin k+1 integrates from b_k, so f^{k+1}(b_k, c) is its bias term and f^k(b_k, c) = f2^k(c) + gaps[k, c]
    (:func:`mcal.mcnet._network.ordered_tables`); read on the network's own bias terms, before they are raised.
    The value is eq. 10's; its gradient reaches only the lower bias term f2^{k+1}: the map never drops (its bias
    terms are raised), so pulling f^k(b_k, c) down would bend the map to suit a bias term the map does not use.
    """
    if raw_bias.shape[0] < 2:
        return raw_bias.new_zeros(())
    return torch.relu(torch.sigmoid(raw_bias[:-1] + gaps).detach() - torch.sigmoid(raw_bias[1:])).sum()


def model_tables(torch: Any, P: Any, spec: Spec, geometry: dict[str, Any]) -> tuple[Any, Any]:
    """The tables of the monotone map and eq. 10's order penalty of the network (zero with continuous joins, where
    the bins' own bias terms are not used).

    The tables are :func:`mcal.mcnet._grid.grid_tables`' dict for ``spec.integral == "grid"``, and the (offset,
    bias) pair of :func:`mcal.mcnet._network.ordered_tables` for the quadrature.
    """
    if spec.integral == "grid":
        tables = grid_tables(torch, P, geometry, n_hidden=spec.n_hidden, bin_joins=spec.bin_joins)
        if spec.bin_joins == "continuous":
            return tables, tables["values"].new_zeros(())
        return tables, order_penalty(torch, tables["raw_bias"], tables["gaps"])
    offset, bias, raw, gaps = ordered_tables(torch, P, geometry, n_hidden=spec.n_hidden, n_nodes=spec.n_nodes,
                                             memory_efficient=spec.memory_efficient,
                                             bin_joins=spec.bin_joins)  # fmt: skip
    if spec.bin_joins == "continuous":
        return (offset, bias), bias.new_zeros(())
    return (offset, bias), order_penalty(torch, raw, gaps)


def objective(
    torch: Any,
    P: Any,
    spec: Spec,
    geometry: dict[str, Any],
    data: Data,
    rows: NDArray[np.intp],
    contexts: NDArray[np.intp],
    *,
    batch_weight: Any = None,
    penalty_share: float = 1.0,
) -> Any:
    """Eq. 13 on ``rows``: weighted log loss + beta * order penalty + alpha * field-balance penalty, plus
    ``smoothness`` times the roughness of f1 on the score grid (:func:`mcal.mcnet._grid.roughness`).

    A process of a data-parallel fit passes its share of a mini-batch as ``rows``, the whole batch's weight as
    ``batch_weight`` and ``1 / n_processes`` as ``penalty_share``, so that the processes' values add up to the
    batch's (the balance penalty, not additive, is left to single-process fits).
    """
    tables, order = model_tables(torch, P, spec, geometry)
    r = torch.as_tensor(rows, device=data.x.device)
    aux = None if data.aux is None else data.aux[r]
    logits = calibrated_logits(torch, P, spec, geometry, tables, data.x[r], data.bins[rows], contexts[rows], aux)
    y, w = data.y[r], data.w[r]
    loss = (w * torch.nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none")).sum() / (
        w.sum() if batch_weight is None else batch_weight
    )
    if spec.smoothness > 0:
        slopes = tables["slopes"] if spec.integral == "grid" else grid_tables(
            torch, P, geometry, n_hidden=spec.n_hidden, bin_joins=spec.bin_joins)["slopes"]  # fmt: skip
        loss = loss + penalty_share * spec.smoothness * roughness(torch, slopes)
    if spec.beta > 0:
        loss = loss + penalty_share * spec.beta * order
    if spec.alpha > 0 and data.groups is not None:
        loss = loss + spec.alpha * balance_penalty(torch, torch.sigmoid(logits), y, w, data.groups[r], data.n_groups)
    return loss


@dataclass(frozen=True)
class Schedule:
    """How long and how fast to train, in optimizer steps (one step = one mini-batch).

    ``budget`` is the most steps (``max_steps``, capped at ``max_epochs`` passes over the training part);
    early stopping may end a fit after ``min_steps`` once the held-out loss has not improved for ``patience``
    steps. The step size rises linearly over ``warmup`` steps, then follows a cosine from ``learning_rate`` to
    :data:`FINAL_LR_FACTOR` times it at ``budget``. The held-out loss is read every ``interval`` steps.
    """

    learning_rate: float
    batch_size: int
    budget: int
    min_steps: int
    patience: int
    interval: int
    warmup: int
    steps_per_epoch: int

    @classmethod
    def build(
        cls,
        n_train: int,
        n_validation: int,
        *,
        learning_rate: float,
        batch_size: int,
        max_epochs: int,
        max_steps: int,
        min_steps: int,
        patience: int,
    ) -> Schedule:
        """The schedule of a training part of ``n_train`` rows and a held-out part of ``n_validation`` rows."""
        per_epoch = -(-n_train // batch_size)
        budget = min(max_steps, max_epochs * per_epoch)
        # reading the held-out loss costs about a third of a step per held-out batch: at most ~1/3 of the time
        interval = min(budget, max(VALIDATION_EVERY, -(-n_validation // batch_size)))
        return cls(
            learning_rate,
            batch_size,
            budget,
            min(min_steps, budget),
            patience,
            interval,
            max(1, min(WARMUP_STEPS, budget // 10)),
            per_epoch,
        )

    def factor(self, step: int) -> float:
        """Learning-rate multiplier of optimizer step ``step`` (0-based)."""
        if step < self.warmup:
            return (step + 1) / self.warmup
        done = min(1.0, (step - self.warmup) / max(1, self.budget - self.warmup))
        return FINAL_LR_FACTOR + (1.0 - FINAL_LR_FACTOR) * 0.5 * (1.0 + np.cos(np.pi * done))

    def epoch_of(self, step: int) -> int:
        """The pass over the training part that step ``step`` (1-based; 0 = the warm start) belongs to."""
        return -(-step // self.steps_per_epoch)


def batches(
    rows: NDArray[np.intp], contexts: NDArray[np.intp], batch_size: int, has_fields: bool, rng: np.random.Generator
) -> Iterator[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """Endless mini-batches of ``rows``: a fresh permutation each pass, and each pass a fresh
    :data:`FALLBACK_RATE` of the rows given the no-context code; yields (rows, contexts of all rows)."""
    while True:
        ctx = np.where(rng.random(contexts.size) < FALLBACK_RATE, 0, contexts) if has_fields else contexts
        order = rng.permutation(rows)
        for start in range(0, order.size, batch_size):
            yield order[start : start + batch_size], ctx


def train(
    torch: Any,
    P: Any,
    spec: Spec,
    geometry: dict[str, Any],
    data: Data,
    *,
    train_rows: NDArray[np.intp],
    validation_rows: NDArray[np.intp],
    schedule: Schedule,
    rng: np.random.Generator,
    show_progress: bool | None = False,
    shard: Any = None,
) -> dict[str, Any]:
    """Mini-batch Adam on eq. 13 with early stopping on held-out data; the best checkpoint's weights are restored.

    The held-out criterion is eq. 13 of the map on the held-out rows: log loss + alpha * balance, plus beta
    times eq. 10 of the map, which is zero because the map's bias terms are raised to keep it in order
    (:func:`mcal.mcnet._network.ordered_tables`). The training loss's eq. 10 is read on the network's own bias
    terms, which the map does not use where they are out of order; counting them in the criterion would
    always favour the warm start, whose bias terms are in order.

    With ``shard`` (a :class:`mcal.mcnet._distributed.Shard`), this process computes its share of every
    mini-batch and of the held-out loss, and the gradients and losses are summed across the processes before
    each step: every process then takes the steps of the single-process fit.

    Returns
    -------
    history : dict
        ``n_steps``, ``best_step`` (0 = the warm start), ``n_epochs`` and ``best_epoch`` (the passes those steps
        fall in), ``loss_curve`` (mean training loss between held-out checks) and ``validation_loss_curve``
        (held-out criterion at the warm start and at each check).
    """
    optimizer = torch.optim.Adam(P.parameters(), lr=schedule.learning_rate)
    held_out_spec = dataclasses.replace(spec, beta=0.0, smoothness=0.0)
    lr_schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule.factor)

    def held_out() -> float:
        with torch.no_grad():
            if shard is None:
                return float(objective(torch, P, held_out_spec, geometry, data, validation_rows, data.contexts))
            share = objective(torch, P, held_out_spec, geometry, data, shard.rows(validation_rows), data.contexts,
                              batch_weight=data.w[torch.as_tensor(validation_rows)].sum(),
                              penalty_share=1 / shard.world)  # fmt: skip
            return float(shard.all_sum(torch, [share.reshape(1)])[0])

    validate = validation_rows.size > 0
    val_curve = [held_out()] if validate else []
    best, best_step, best_state = (val_curve[0] if validate else np.inf), 0, copy.deepcopy(P.state_dict())
    loss_curve: list[float] = []
    stream = batches(train_rows, data.contexts, schedule.batch_size, "embedding" in P, rng)
    step, total, n_rows = 0, 0.0, 0
    with progress(schedule.budget, "MCNet steps", enabled=show_progress, unit="step") as bar:
        while step < schedule.budget:
            batch, contexts = next(stream)
            if shard is None:
                loss = objective(torch, P, spec, geometry, data, batch, contexts)
            else:
                loss = objective(
                    torch,
                    P,
                    spec,
                    geometry,
                    data,
                    shard.rows(batch),
                    contexts,
                    batch_weight=data.w[torch.as_tensor(batch)].sum(),
                    penalty_share=1 / shard.world,
                )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if shard is not None:
                loss = shard.sum_gradients(torch, P, loss)
            optimizer.step()
            lr_schedule.step()
            step, total, n_rows = step + 1, total + float(loss.detach()) * batch.size, n_rows + batch.size
            bar.update(loss=float(loss.detach()))
            if step % schedule.interval and step < schedule.budget:
                continue
            loss_curve.append(total / n_rows)
            total, n_rows = 0.0, 0
            if not validate:
                best_step = step
                continue
            val_curve.append(held_out())
            if val_curve[-1] < best - TOL:
                best, best_step, best_state = val_curve[-1], step, copy.deepcopy(P.state_dict())
            elif step >= schedule.min_steps and step - best_step >= schedule.patience:
                break
    if validate:
        P.load_state_dict(best_state)
    return {
        "n_steps": step,
        "best_step": best_step,
        "n_epochs": schedule.epoch_of(step),
        "best_epoch": schedule.epoch_of(best_step),
        "loss_curve": loss_curve,
        "validation_loss_curve": val_curve,
    }

"""MCNet trained by several processes at once: data parallelism with ``torch.distributed`` (gloo, on the CPU).

Every process holds all the rows and a copy of the same random generator, so all draw the same epochs and
mini-batches. Each mini-batch is split between the processes (process ``r`` of ``P`` takes rows ``r, r + P,
...``); each computes its share of eq. 13 (its rows' weighted log loss over the whole batch's weight, plus
``1/P`` of the order penalty), the gradients and the loss are summed across the processes by one
``all_reduce``, and every process takes the same Adam step. The held-out loss is summed the same way. So the
processes keep identical parameters, and the fit is the single-process fit with each batch's sums taken in
another order: equal up to float32 rounding, which Adam's steps carry along (measured: calibrated probabilities
within 2e-8 of the single-process fit after 6 epochs of 13 steps; ``tests/mcnet/test_distributed.py`` checks
1e-5).

It pays off when a mini-batch holds enough rows that the network passes outweigh one ``all_reduce`` per step,
i.e. for one large calibration set trained with large batches; the field-balance penalty (``alpha > 0``), which
is not a sum over rows, is not supported.

Why not one task per bin on a Dask cluster: that would be exact only if the bins' networks were trained
independently, and in this fit they never are. The order penalty (eq. 10, ``beta > 0``) ties each bin to the
next; a mini-batch mixes the rows of every bin, and each row's loss is divided by the whole batch's weight, so
a bin's Adam steps depend on the other bins' rows; the auxiliary network (Appendix A.3) is shared; and early
stopping keeps one epoch for all bins. Training bins apart would give another model, not this one faster.
Processes are started on this machine (``torch.multiprocessing``, a file rendezvous); the fitted model is applied
to dask collections by :func:`mcal.dask.predict`.
"""

from __future__ import annotations

import datetime
import tempfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from mcal._optional import import_optional
from mcal.mcnet._model_file import weight_arrays
from mcal.mcnet._network import to_parameters
from mcal.mcnet._training import Data, train

#: Seconds the processes wait for each other to start (a busy machine may take a while to spawn them).
_STARTUP_TIMEOUT = 300


@dataclass(frozen=True)
class Shard:
    """This process's place among ``world`` processes."""

    rank: int
    world: int

    def rows(self, batch: Any) -> Any:
        """This process's share of a mini-batch of row indices."""
        return batch[self.rank :: self.world]

    def all_sum(self, torch: Any, tensors: list[Any]) -> list[Any]:
        """The sums of ``tensors`` over the processes, by one ``all_reduce`` of their concatenation."""
        flat = torch.cat([t.detach().reshape(-1) for t in tensors])
        torch.distributed.all_reduce(flat)
        out, start = [], 0
        for t in tensors:
            out.append(flat[start : start + t.numel()].reshape(t.shape))
            start += t.numel()
        return out

    def sum_gradients(self, torch: Any, P: Any, loss: Any) -> Any:
        """Replace every gradient by its sum over the processes; return the summed loss."""
        params = list(P.values())
        grads = [torch.zeros_like(p) if p.grad is None else p.grad for p in params]
        *summed, total = self.all_sum(torch, [*grads, loss.reshape(1)])
        for p, g in zip(params, summed, strict=False):
            p.grad = g
        return total[0]


def train_in_processes(
    n_processes: int, torch: Any, P: Any, spec: Any, geometry: dict[str, Any], data: Data, *, n_threads: int | None,
    **train_args: Any,
) -> dict[str, Any]:  # fmt: skip
    """Run :func:`mcal.mcnet._training.train` in ``n_processes`` spawned processes; load the result into ``P``.

    ``train_args`` are those of ``train`` (rows, learning rate, batch size, epochs, patience, the generator,
    ``show_progress``, which only the first process honours). Returns ``train``'s history, plus
    ``rank_difference``: the largest parameter difference between the processes (0 when they kept in step).

    Raises
    ------
    RuntimeError
        If a process fails (its error is included) or the processes' parameters differ at the end.
    """
    mp = torch.multiprocessing
    context = mp.get_context("spawn")
    queue = context.SimpleQueue()
    state = weight_arrays(P)
    arrays = {f.name: _numpy(getattr(data, f.name)) for f in fields(data)}
    geometry_np = {k: _numpy(v) for k, v in geometry.items()}
    with tempfile.TemporaryDirectory(prefix="mcal-mcnet-") as folder:  # the processes meet through a file
        store = Path(folder) / "rendezvous"
        args = (n_processes, store.as_uri(), state, spec, geometry_np, arrays, n_threads, train_args, queue)
        processes = mp.start_processes(_process, args=args, nprocs=n_processes, start_method="spawn", join=False)
        results: list[Any] = []
        while len(results) < n_processes:
            if not queue.empty():
                results.append(queue.get())
            elif processes.join(timeout=0.2) and queue.empty():
                raise RuntimeError(f"the {n_processes} training processes ended without a result")
        while not processes.join(timeout=0.2):
            pass
    results.sort(key=lambda r: r[0])
    _, state, history = results[0]
    history["rank_difference"] = max(
        (float(np.max(np.abs(other[k] - v), initial=0.0)) for _, other, _ in results[1:] for k, v in state.items()),
        default=0.0,
    )
    if history["rank_difference"] != 0.0:
        raise RuntimeError(
            f"the training processes' parameters diverged (by {history['rank_difference']:.3g}); "
            "the data-parallel fit is invalid"
        )
    with torch.no_grad():
        for k, v in P.items():
            v.copy_(torch.as_tensor(state[k]))
    return history


def _numpy(value: Any) -> Any:
    return value.detach().cpu().numpy() if hasattr(value, "detach") else value


def _process(
    rank: int, world: int, rendezvous: str, state: dict, spec: Any, geometry: dict, arrays: dict, n_threads: int | None,
    train_args: dict, queue: Any,
) -> None:  # fmt: skip
    """One training process: join the group, train on its share, send back the parameters and history."""
    torch = import_optional("torch")
    if n_threads is not None:
        torch.set_num_threads(int(n_threads))
    torch.distributed.init_process_group(
        "gloo", init_method=rendezvous, rank=rank, world_size=world,
        timeout=datetime.timedelta(seconds=_STARTUP_TIMEOUT),
    )  # fmt: skip
    try:
        P = to_parameters(torch, state, device="cpu", dtype=torch.float32)
        args = {**train_args, "show_progress": train_args.get("show_progress") if rank == 0 else False}
        geometry_t = {k: torch.as_tensor(v) for k, v in geometry.items()}
        data = Data.on_device(torch, "cpu", **arrays)
        history = train(torch, P, spec, geometry_t, data, shard=Shard(rank, world), **args)
        queue.put((rank, weight_arrays(P), history))
        # every rank done before any tears the group down: a rank whose peer left mid-teardown aborted in gloo
        # ("terminate called without an active exception", seen once in CI)
        torch.distributed.barrier()
    finally:
        torch.distributed.destroy_process_group()

"""The Dask engine of MCGrad's round loop: ``lightgbm.dask`` boosters and dask reductions.

:class:`DaskEngine` implements the engine seam of :mod:`mcal.mcgrad.engine` (``fit_round``, ``predict_raw``,
``loss_grad_hess``, ``log_loss_sum``, of any loss of the local engine) on persisted dask Arrays with identical row chunks, so that
:func:`~mcal.mcgrad.engine.boost_rounds` and :func:`~mcal.mcgrad.engine.rescale_factor` run unchanged:

- each round's booster is fitted by ``lightgbm.dask.DaskLGBMRegressor`` (the cross-entropy objective, as the
  local engine, so soft labels work; its label encoding would break them in the classifier) with ``F`` as
  init score and as the last feature column;
- its raw output is added to ``F`` block by block with the booster, and the result is persisted, so the task
  graph stays one round deep;
- the sums of the rescaling Newton step and of the validation loss are computed block by block on the
  workers with the local engine's formulas, and added up: one pass over the data each.

LightGBM's distributed training needs every worker that holds data until the end of a fit. A worker that
dies in the middle breaks its network; :func:`watch` turns that, and any step longer than ``timeout``, into
a clear error instead of a hang or a bare socket error.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._lightgbm import INT32_MAX
from mcal._optional import import_optional
from mcal.dask._inputs import block_sums, persist
from mcal.mcgrad.engine import LOG_LOSS, Array, Booster, LocalEngine, Part
from mcal.mcgrad.losses import RoundLoss, gain_sums

#: Seconds between two looks at the cluster while LightGBM trains.
_POLL = 0.2
#: Seconds a failed or stuck fit waits for the scheduler to notice that a worker left.
_GRACE = 2.0
#: LightGBM's largest socket time-out in minutes: it sets the sockets' time-out to ``time_out * 1000 * 60``
#: milliseconds in a C int, which overflows above this (a larger value failed the fit or aborted the process).
MAX_SOCKET_MINUTES = INT32_MAX // 60_000


class WorkerLostError(RuntimeError):
    """A Dask worker left the cluster while LightGBM's distributed training needed it."""


class DaskEngine:
    """MCGrad engine on a ``distributed`` cluster.

    Parameters
    ----------
    client : distributed.Client
        The cluster.
    params : dict
        LightGBM parameters of the local engine; ``num_threads`` is dropped (each worker uses its threads).
    n_estimators : int
        Trees per round.
    categorical : list of int
        Indices of the categorical columns of the encoded features.
    timeout : float or None
        Most seconds one step (a booster fit, a reduction) may take; None for no limit.
    objective : LogLoss or another loss of :mod:`mcal.mcgrad.engine`, default=LOG_LOSS
        The loss of the rounds, whose per-block sums run on the workers.
    """

    def __init__(
        self,
        client: Any,
        params: dict[str, Any],
        n_estimators: int,
        categorical: list[int],
        timeout: float | None,
        objective: RoundLoss | None = None,
    ) -> None:
        self.objective: RoundLoss = LOG_LOSS if objective is None else objective
        self.client = client
        self.params = {k: v for k, v in params.items() if k != "num_threads"}
        if timeout is not None:  # LightGBM's socket time-out, in whole minutes
            self.params["time_out"] = int(min(MAX_SOCKET_MINUTES, max(1, np.ceil(timeout / 60.0))))
        self.n_estimators = n_estimators
        self.categorical = categorical
        self.timeout = timeout
        self.n_fits = 0

    def fit_round(
        self, part: Part, valid: Part | None = None, out_of_time: Callable[[], bool] | None = None
    ) -> tuple[Booster, Array, Array]:
        """Fit one booster on the cluster; return it (a local ``lightgbm.Booster``) and ``F + h_t`` on the part's
        rows and on those of ``valid`` (None without; both persisted). ``out_of_time`` is not asked within the
        round (its trees grow on the workers): :func:`mcal.mcgrad.engine.boost_rounds` asks it between rounds."""
        lgb = import_optional("lightgbm")
        lgb_dask = import_optional("lightgbm.dask")
        part.F = persist(self.client, part.F, self.timeout, "the scores of a round")
        X = with_score(part.X, part.F)
        model = lgb_dask.DaskLGBMRegressor(client=self.client, n_estimators=self.n_estimators, **self.params)
        self.n_fits += 1

        def fit() -> None:
            with warnings.catch_warnings():  # lightgbm.dask notes that it picks the threads itself
                warnings.filterwarnings("ignore", message="Parameter .* will be ignored", category=UserWarning)
                model.fit(X, part.y, sample_weight=part.w, init_score=part.F, categorical_feature=self.categorical)

        watch(self.client, fit, self.timeout, f"LightGBM's distributed fit number {self.n_fits}")
        booster = lgb.Booster(model_str=model.booster_.model_to_string())
        z = persist(self.client, part.F + raw_scores(booster, X), self.timeout, "the scores of a round")
        if valid is None:
            return booster, z, None
        h = self.predict_raw(booster, valid)
        return booster, z, valid.F + h

    def predict_raw(self, booster: Booster, part: Part) -> Array:
        """The booster's raw output on the part's features and logit (persisted; without the init score)."""
        part.F = persist(self.client, part.F, self.timeout, "the validation scores")
        return persist(self.client, raw_scores(booster, with_score(part.X, part.F)), self.timeout, "a prediction")

    def loss_grad_hess(self, theta: float, y: Array, z: Array, w: Array) -> tuple[float, float, float]:
        """Weighted loss of ``theta * z`` and its first two derivatives in ``theta``, in one pass."""
        sums = block_sums(
            self.client, _loss_grad_hess, [y, z, w], (theta, self.objective), self.timeout, "a rescaling step"
        )
        return float(sums[0]), float(sums[1]), float(sums[2])

    def log_loss_sum(self, y: Array, F: Array, w: Array) -> tuple[float, float]:
        """``(sum of w * loss of F, sum of w)`` (the objective's loss), in one pass."""
        sums = block_sums(self.client, _log_loss_sum, [y, F, w], (self.objective,), self.timeout, "the validation loss")
        return float(sums[0]), float(sums[1])

    def gain_sums(self, y: Array, F_best: Array, F: Array, w: Array) -> NDArray[np.float64]:
        """:func:`mcal.mcgrad.losses.gain_sums` of the objective, in one pass."""
        return block_sums(self.client, _gain_sums, [y, F_best, F, w], (self.objective,), self.timeout, "a round's gain")


def _loss_grad_hess(y: NDArray, z: NDArray, w: NDArray, theta: float, objective: RoundLoss) -> NDArray[np.float64]:
    return np.array(LocalEngine({}, 1, [], objective).loss_grad_hess(theta, y, z, w))


def _log_loss_sum(y: NDArray, F: NDArray, w: NDArray, objective: RoundLoss) -> NDArray[np.float64]:
    return np.array(LocalEngine({}, 1, [], objective).log_loss_sum(y, F, w))


def _gain_sums(y: NDArray, F_best: NDArray, F: NDArray, w: NDArray, objective: RoundLoss) -> NDArray[np.float64]:
    return gain_sums(objective, y, F_best, F, w)


def _set_score(x: NDArray[np.float64], f: NDArray[np.float64]) -> NDArray[np.float64]:
    out = x.copy()
    out[:, -1] = f[:, 0]
    return out


def with_score(X: Any, F: Any) -> Any:
    """The encoded features with their spare last column set to the logit ``F``, block by block."""
    da = import_optional("dask.array")
    return da.map_blocks(_set_score, X, F[:, None], dtype=np.float64, meta=np.empty((0, 0)))


def _predict_block(x: NDArray[np.float64], booster: Any) -> NDArray[np.float64]:
    return booster.predict(x, raw_score=True, num_threads=1)


def raw_scores(booster: Any, X: Any) -> Any:
    """The booster's raw score on each row of a dask Array of features (lazy)."""
    da = import_optional("dask.array")
    return da.map_blocks(_predict_block, X, booster=booster, drop_axis=1, dtype=np.float64, meta=np.empty(0))


def _workers(client: Any) -> set[str]:
    return set(client.run_on_scheduler(_scheduler_workers))


def _scheduler_workers(dask_scheduler: Any) -> list[str]:
    return list(dask_scheduler.workers)


def watch(client: Any, fn: Any, timeout: float | None, what: str) -> None:
    """Run ``fn()`` (a blocking call into the cluster) while watching the workers and the clock.

    Raises
    ------
    WorkerLostError
        If a worker present at the start leaves before ``fn`` ends (then ``fn`` is abandoned: LightGBM cannot
        continue without it), or ``fn`` fails after a worker left.
    TimeoutError
        If ``fn`` runs longer than ``timeout`` seconds.
    """
    before = _workers(client)
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            fn()
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="mcal-dask-fit", daemon=True)
    start = time.monotonic()
    thread.start()
    lost_since = None
    while thread.is_alive():
        thread.join(_POLL)
        if not thread.is_alive():
            break
        lost = before - _workers(client)
        if lost:
            lost_since = lost_since if lost_since is not None else time.monotonic()
            if time.monotonic() - lost_since > _GRACE:
                raise WorkerLostError(_lost_message(what, lost))
        if timeout is not None and time.monotonic() - start > timeout:
            raise TimeoutError(
                f"{what} did not finish within timeout={timeout} s; the cluster may hold a stuck LightGBM task "
                "until it is restarted (client.restart())"
            )
    error = outcome.get("error")
    if error is None:
        return
    deadline = time.monotonic() + _GRACE
    lost = before - _workers(client)
    while not lost and time.monotonic() < deadline and _network_error(error):
        time.sleep(_POLL)  # a broken LightGBM network often reports before the scheduler sees the worker go
        lost = before - _workers(client)
    if lost:
        raise WorkerLostError(_lost_message(what, lost)) from error
    raise error


def _network_error(error: BaseException) -> bool:
    text = str(error).lower()
    return "socket" in text or "connect" in text or "network" in text


def _lost_message(what: str, lost: set[str]) -> str:
    return (
        f"Dask worker(s) {sorted(lost)} left the cluster during {what}; LightGBM's distributed training cannot "
        "continue without every worker that holds data. Check the worker logs (e.g. for a memory limit), then "
        "fit again"
    )

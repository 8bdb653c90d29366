"""Checks of what mcal hands LightGBM to train: tree settings and sample weights that LightGBM would silently change
(to int32, to float32) or refuse only after printing its error (more than 131072 leaves), and LightGBM's thread
count (its parameters: :mod:`mcal._lightgbm_params`; model text read from a file:
:mod:`mcal._persistence.lightgbm_text`)."""

from __future__ import annotations

import functools
from typing import Any

import joblib
import numpy as np

from mcal._validation import check_int, check_real

#: LightGBM reads its integer parameters as int32 (larger values wrap around) and caps num_leaves at 131072.
INT32_MAX = 2**31 - 1
MAX_LEAVES = 131072


def check_tree_params(est: Any, *, min_child_samples: int, limited_depth: bool) -> None:
    """Check the LightGBM settings that MCGrad and DFMC share, as attributes of ``est``: ``n_estimators``,
    ``max_leaves``, ``min_child_samples`` (at least ``min_child_samples``), ``max_depth`` (at least 1 when
    ``limited_depth``, else any integer, <= 0 meaning no limit), ``learning_rate``, ``l2_regularization``,
    ``min_gain_to_split``, ``min_sum_hessian_in_leaf`` and ``n_jobs``. Integers must fit LightGBM's int32 (larger
    values wrapped around) and ``max_leaves`` its cap of 131072 leaves.

    Raises
    ------
    TypeError
        If an integer setting is not an integer (a bool or ``2.0`` included), or a real one is not a real number.
    ValueError
        If a setting of the right type is out of its range.
    """
    int32 = " (LightGBM's int32)"
    depth = (1, int32) if limited_depth else (-INT32_MAX, " (LightGBM's int32; <= 0 for no limit)")
    for name, low, high, note in (
        ("n_estimators", 1, INT32_MAX, int32),
        ("max_leaves", 2, MAX_LEAVES, ""),
        ("min_child_samples", min_child_samples, INT32_MAX, int32),
        ("max_depth", depth[0], INT32_MAX, depth[1]),
    ):
        rule = f"an integer >= {low} and <= {high}{note}"
        check_int(name, getattr(est, name), rule, lambda v, low=low, high=high: low <= v <= high)
    check_real("learning_rate", est.learning_rate, "a finite number > 0", lambda v: v > 0)
    for name in ("l2_regularization", "min_gain_to_split", "min_sum_hessian_in_leaf"):
        check_real(name, getattr(est, name), "a finite number >= 0", lambda v: v >= 0)
    lightgbm_threads(est.n_jobs)


#: Rows per LightGBM thread when ``n_jobs`` is None, to fit and to predict (``benchmarks/results/mcgrad_threads.md``).
ROWS_PER_THREAD = 10_000


def lightgbm_threads(n_jobs: Any, n_rows: int | None = None) -> int:
    """LightGBM's ``num_threads`` for an ``n_jobs`` in scikit-learn's convention, at most the cores.

    The cores are those this process may use, as joblib counts them (CPU affinity and container limits
    included). A positive integer gives itself, capped at the cores: more threads only wait at LightGBM's
    barriers, and LightGBM crashed or hung on tens of thousands. A negative one gives ``cores + 1 + n_jobs``
    as joblib counts (-1: every core, -2: all but one), and at least one. None, for ``n_rows`` rows, gives one thread per
    :data:`ROWS_PER_THREAD` rows, at least one: each LightGBM tree (and each predict call) waits at OpenMP
    barriers, which on a few thousand rows cost more than the threads save, and many times more when another
    process holds a core. None without ``n_rows`` gives 0, LightGBM's default (all cores).

    Raises
    ------
    TypeError
        If ``n_jobs`` is not None or an integer (bools and floats included).
    ValueError
        If ``n_jobs`` is 0.
    """
    if n_jobs is None:
        return 0 if n_rows is None else max(1, min(_cores(), n_rows // ROWS_PER_THREAD))
    check_int(
        "n_jobs",
        n_jobs,
        "None, an integer >= 1, or a negative integer counting back from the cores (-1: all)",
        lambda v: v != 0,
    )
    # at least one thread, as joblib's effective_n_jobs: a model saved with -16 on a server runs on a laptop
    return min(int(n_jobs), _cores()) if n_jobs > 0 else max(1, _cores() + 1 + int(n_jobs))


@functools.cache
def _cores() -> int:
    """Cores this process may use (joblib's count: affinity and cgroup limits included), read once: it costs 0.1 ms."""
    return max(1, int(joblib.cpu_count()))


def check_float32_weights(sample_weight: np.ndarray) -> None:
    """Raise ValueError unless the positive weights fit float32, as LightGBM stores them (smaller ones became 0,
    and LightGBM raised "sum of weights is zero" if all did; larger ones became infinite)."""
    positive = sample_weight[sample_weight > 0]
    check_float32_weight_range(float(positive.min()), float(positive.max()))


def check_float32_weight_range(low: float, high: float) -> None:
    """Raise ValueError unless ``[low, high]``, the range of the positive weights, fits float32."""
    tiny, big = float(np.finfo(np.float32).tiny), float(np.finfo(np.float32).max)
    if low < tiny or high > big:
        raise ValueError(
            f"sample_weight must have its positive weights in [{tiny:.4g}, {big:.4g}], LightGBM's float32 range; "
            f"got weights from {low:.4g} to {high:.4g} (rescale them)"
        )

"""``mcal.dask.monitor``: :func:`mcal.monitor.monitor` on dask collections, one reduction per time window."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mcal._constraints import validate_params
from mcal._monitoring.windows import (
    MONITOR_CONSTRAINTS,
    MonitorResult,
    monitor_result,
    summarize_window,
    summary_columns,
    window_starts,
)
from mcal._optional import import_optional
from mcal.dask._inputs import aligned, clean_block, in_partition
from mcal.segments import Segments, generate_segments

_WINDOW = "__window__"
_FEATURE = "__x__"


@validate_params(MONITOR_CONSTRAINTS)
def monitor(
    y_true: Any,
    y_prob: Any,
    times: Any,
    *,
    window: Any = "1D",
    X: Any = None,
    segments: Segments | None = None,
    sample_weight: Any = None,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    n_resamples: int = 200,
) -> MonitorResult:
    """Calibration over time on dask collections; as :func:`mcal.monitor.monitor`, with the same values.

    Parameters
    ----------
    y_true, y_prob, times, sample_weight : dask Series of shape (n_samples,)
        Labels, scores, times and optional weights, partitioned alike (columns of one dask DataFrame).
    window : str, timedelta or number, default="1D"
        Window length, as in :func:`mcal.monitor.monitor`.
    X : dask DataFrame of shape (n_samples, n_features), default=None
        Segment features, partitioned as the others. Without ``segments``, the segments are generated from
        ``X.compute()`` on the client (pass segments generated from a sample to avoid it).
    segments : Segments, default=None
        Segment definitions generated from features; needs ``X``.
    alpha, confidence_level : float, default=0.05, 0.95
        As in :func:`mcal.monitor.monitor`.
    n_resamples : int, default=200
        As in :func:`mcal.monitor.monitor`: bootstrap resamples of each window's intervals, drawn on the worker.

    Returns
    -------
    result : MonitorResult
        Equal to :func:`mcal.monitor.monitor` on the concatenated data (up to the order of additions).

    Raises
    ------
    ValueError, TypeError
        As :func:`mcal.monitor.monitor`, with the partition number in the message of a bad value; also if the
        inputs have different numbers of partitions.

    Notes
    -----
    Each partition tags its rows with their window; the rows are shuffled so that each window lies in one
    partition, where it is summarised as :func:`mcal.monitor.monitor` summarises a window (the ECCE and MCE of a window need its
    rows in score order). The e-process needs only the per-window sums, gathered on the client. A window must
    fit in a worker's memory.
    """
    dd = import_optional("dask.dataframe")
    dask = import_optional("dask")
    if segments is not None and X is None:
        raise ValueError("X must hold the segment features when segments are given; got None")
    if X is not None and segments is None:
        segments = generate_segments(X.compute())
    numeric = pd.api.types.is_numeric_dtype(times.dtype)
    blocks = aligned({"y_true": y_true, "y_prob": y_prob, "times": times, "sample_weight": sample_weight, "X": X},
                     matrix=("X",))  # fmt: skip
    task = dask.delayed(_window_block, pure=True)
    empty_X = None if X is None else X._meta
    meta = _window_block(0, np.empty(0), np.empty(0), np.empty(0), None, empty_X, window, numeric)
    columns = zip(*(blocks[k] for k in ("y_true", "y_prob", "times", "sample_weight", "X")), strict=False)
    frame = dd.from_delayed([task(i, y, p, t, w, x, window, numeric) for i, (y, p, t, w, x) in enumerate(columns)],
                            meta=meta)  # fmt: skip
    out_meta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in summary_columns(segments is not None)},
                            index=pd.Index(meta[_WINDOW], name=_WINDOW))  # fmt: skip
    stats = frame.shuffle(_WINDOW).map_partitions(_summarize, segments, n_resamples, confidence_level,
                                                  meta=out_meta).compute().sort_index()  # fmt: skip
    if stats.empty:
        raise ValueError("y_prob must not be empty; got 0 samples in every partition")
    return monitor_result(stats.rename_axis(None), window=window, alpha=alpha, confidence_level=confidence_level)


def _window_block(index: int, y: Any, p: Any, t: Any, w: Any, X: Any, window: Any, numeric: bool) -> pd.DataFrame:
    """One partition's rows, validated, with the start of their window and the features (prefixed)."""
    p, y, w = clean_block(index, p, y, w, label="y_true", allow_soft=False, X=X)
    with in_partition(index):
        if len(t) != p.size:
            raise ValueError(f"inputs must have the same number of rows in each partition; got times with {len(t)}, "
                             f"y_prob with {p.size}")  # fmt: skip
        starts = window_starts(t, window) if p.size else np.empty(0, dtype=np.float64 if numeric else "datetime64[ns]")
    frame = pd.DataFrame({_WINDOW: starts, "p": p, "y": y, "w": w})
    if X is None:
        return frame
    return pd.concat([frame, X.reset_index(drop=True).add_prefix(_FEATURE)], axis=1)


def _summarize(part: pd.DataFrame, segments: Segments | None, n_resamples: int, level: float) -> pd.DataFrame:
    """The summary of every window of one shuffled partition (each window lies wholly in one partition)."""
    rows, keys = [], []
    for key, group in part.groupby(_WINDOW, sort=True):
        X = group.filter(like=_FEATURE)
        X.columns = [c[len(_FEATURE) :] for c in X.columns]
        window_segments = None if segments is None else segments.apply(X.reset_index(drop=True))
        rows.append(summarize_window(group["y"].to_numpy(), group["p"].to_numpy(), group["w"].to_numpy(),
                                     segments=window_segments, n_resamples=n_resamples,
                                     confidence_level=level))  # fmt: skip
        keys.append(key)
    index = pd.Index(keys, name=_WINDOW, dtype=part[_WINDOW].dtype)
    return pd.DataFrame(rows, index=index, columns=summary_columns(segments is not None), dtype=np.float64)

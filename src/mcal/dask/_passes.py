"""The passes over the partitions behind :mod:`mcal.dask.metrics`: additive sums, and the rows sorted by score.

- :func:`sums` adds up per-row sums partition by partition (log loss, Brier score, PCOC, ECE bins, the ECCE scale,
  F-RCE per field); :func:`errors` the same for real outcomes (MSE, MAE, means).
- :func:`ordered` sorts the rows (with feature columns, if given) by score across the cluster and summarises each
  partition (:mod:`mcal.dask._sorted`), for the cumulative and ranking metrics.

Both validate the inputs on the workers (the messages name the partition) and check the totals on the client.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.special import xlogy

from mcal._binning import bin_ids_from_steps, uniform_bin_ids
from mcal._features.fields import encode_field
from mcal._optional import import_optional
from mcal.dask import _sorted
from mcal.dask._inputs import aligned, clean_block, in_partition

_EPS64 = float(np.finfo(np.float64).eps)  # scikit-learn's clipping of log-loss probabilities
#: The bounds of real outcomes and predictions for :func:`~mcal.dask._inputs.clean_block`: any finite numbers.
_REAL = (None, None, False)


@dataclass
class Sums:
    """Additive per-row sums of one partition (or of all, once added)."""

    n: int = 0
    w: float = 0.0
    wy: float = 0.0
    wp: float = 0.0
    log_loss: float = 0.0
    brier: float = 0.0
    variance: float = 0.0
    bins: Any = None  # Series of sum of w (y - p), indexed by the occupied bins
    fields: Any = None  # DataFrame indexed by field value: weight, gap, denominator

    def __add__(self, other: Sums) -> Sums:
        out = {
            f.name: getattr(self, f.name) + getattr(other, f.name)
            for f in fields(self)
            if f.name not in ("fields", "bins")
        }
        out["bins"] = self.bins.add(other.bins, fill_value=0.0)
        frames = [x for x in (self.fields, other.fields) if x is not None]
        out["fields"] = pd.concat(frames).groupby(level=0, sort=False, dropna=False).sum() if frames else None
        return Sums(**out)


def _bin_ids(p: NDArray[np.float64], bins: tuple) -> NDArray[np.float64]:
    """Bin of each score: ``bins`` is ``("uniform", n_bins)`` or ``("quantile", n_bins, step_values, step_reached)``
    (:func:`mcal.dask._sorted.quantile_steps`), as the bins of :mod:`mcal.metrics`."""
    if bins[0] == "uniform":
        return uniform_bin_ids(p, bins[1])
    return bin_ids_from_steps(p, bins[2], bins[3], bins[1])


def _partition_sums(index: int, y: Any, p: Any, w: Any, field: Any, bins: tuple) -> Sums:
    p, y, w = clean_block(index, p, y, w, label="y_true", allow_soft=False)
    if p.size == 0:
        return Sums(bins=pd.Series(dtype=np.float64))
    r = w * (y - p)
    occupied, codes = np.unique(_bin_ids(p, bins), return_inverse=True)  # O(rows) whatever n_bins
    clip = (_EPS64, 1.0 - _EPS64)
    out = Sums(
        n=p.size, w=float(w.sum()), wy=float(np.dot(w, y)), wp=float(np.dot(w, p)),
        log_loss=float(-np.dot(w, xlogy(y, np.clip(p, *clip)) + xlogy(1.0 - y, np.clip(1.0 - p, *clip)))),
        brier=float(np.dot(w, (p - y) ** 2)), variance=float(np.dot(w * w, p * (1.0 - p))),
        bins=pd.Series(np.bincount(codes.reshape(-1), weights=r, minlength=occupied.size), index=occupied),
    )  # fmt: skip
    if field is not None:
        with in_partition(index):
            codes, uniques = encode_field(field, p.size)
        k = len(uniques)
        out.fields = pd.DataFrame({
            "weight": np.bincount(codes, weights=w, minlength=k), "gap": np.bincount(codes, weights=r, minlength=k),
            "labels": np.bincount(codes, weights=w * y, minlength=k),
        }, index=pd.Index(uniques))  # fmt: skip
    return out


def sums(y_true: Any, y_prob: Any, sample_weight: Any, *, field: Any = None, bins: tuple = ("uniform", 1)) -> Sums:
    """The additive sums of every partition, added up; validates the inputs on the workers.

    Raises
    ------
    ValueError
        On invalid values (naming the partition), no rows, or weights summing to zero.
    """
    dask = import_optional("dask")
    blocks = aligned({"y_true": y_true, "y_prob": y_prob, "sample_weight": sample_weight, "field": field})
    task = dask.delayed(_partition_sums, pure=True)
    columns = zip(blocks["y_true"], blocks["y_prob"], blocks["sample_weight"], blocks["field"], strict=False)
    parts = dask.compute(*[task(i, y, p, w, f, bins) for i, (y, p, w, f) in enumerate(columns)])
    total = sum(parts[1:], parts[0])
    check_total(total.n, total.w)
    return total


def check_total(n: int, weight: float) -> None:
    if n == 0:
        raise ValueError("y_prob must not be empty; got 0 samples in every partition")
    if not weight > 0:
        raise ValueError("sample_weight must have a positive sum; got all zeros")


def _frame_block(index: int, y: Any, p: Any, w: Any, X: Any = None, real: bool = False) -> pd.DataFrame:
    """One partition as a frame of ``p``, ``y``, ``w`` (the features of ``X`` prefixed), and for real outcomes
    the rows' input order (partition number, then row)."""
    p, y, w = clean_block(index, p, y, w, label="y_true", allow_soft=False, X=X, real=_REAL if real else None)
    frame = pd.DataFrame({"p": p, "y": y, "w": w})
    if real:
        frame[_sorted.ROW] = np.int64(index) * 2**32 + np.arange(p.size, dtype=np.int64)
    if X is None:
        return frame
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if not isinstance(X, pd.DataFrame):
        X = pd.DataFrame(np.asarray(X), columns=[f"x{j}" for j in range(np.shape(X)[1])])
    features = X.reset_index(drop=True).add_prefix(_sorted.FEATURE_PREFIX)
    return pd.concat([frame, features], axis=1)


def ordered(
    y_true: Any, y_prob: Any, sample_weight: Any, X: Any = None, outcome: str = "classification"
) -> _sorted.Ordered:
    """The rows (with the feature columns of ``X``, if given) sorted by score across the cluster, summarised;
    for ``outcome="regression"`` real values, with tied scores in input order."""
    dask = import_optional("dask")
    dd = import_optional("dask.dataframe")
    blocks = aligned({"y_true": y_true, "y_prob": y_prob, "sample_weight": sample_weight, "X": X}, matrix=("X",))
    task = dask.delayed(_frame_block, pure=True)
    if X is None:
        empty_X = None
    elif isinstance(X, (dd.DataFrame, dd.Series)):
        empty_X = X.to_frame()._meta if isinstance(X, dd.Series) else X._meta
    else:
        empty_X = np.empty((0, X.shape[1]), dtype=X.dtype)
    real = outcome == "regression"
    meta = _frame_block(0, np.empty(0), np.empty(0), None, empty_X, real)
    columns = zip(blocks["y_true"], blocks["y_prob"], blocks["sample_weight"], blocks["X"], strict=False)
    frame = dd.from_delayed([task(i, y, p, w, x, real) for i, (y, p, w, x) in enumerate(columns)], meta=meta)
    rows = _sorted.sort_by_score(frame)
    check_total(sum(s.n for s in rows.stats), sum(s.pos + s.neg for s in rows.stats))
    return rows


def _error_sums(index: int, y: Any, p: Any, w: Any) -> NDArray[np.float64]:
    p, y, w = clean_block(index, p, y, w, label="y_true", allow_soft=False, real=_REAL, score="y_pred")
    r = y - p
    return np.array([p.size, w.sum(), np.dot(w, r * r), np.dot(w, np.abs(r)), np.dot(w, p), np.dot(w, y)])


def errors(y_true: Any, y_pred: Any, sample_weight: Any) -> NDArray[np.float64]:
    """``(rows, sum w, sum w r^2, sum w |r|, sum w p, sum w y)``, ``r = y - p``, over all partitions."""
    dask = import_optional("dask")
    blocks = aligned({"y_true": y_true, "y_pred": y_pred, "sample_weight": sample_weight})
    task = dask.delayed(_error_sums, pure=True)
    columns = zip(blocks["y_true"], blocks["y_pred"], blocks["sample_weight"], strict=False)
    total = np.sum(dask.compute(*[task(i, y, p, w) for i, (y, p, w) in enumerate(columns)]), axis=0)
    if total[0] == 0:
        raise ValueError("y_pred must not be empty; got 0 samples in every partition")
    check_total(int(total[0]), float(total[1]))
    return total

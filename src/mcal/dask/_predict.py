"""Any fitted mcal calibrator applied to dask collections, lazily, one partition at a time."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mcal._base import BaseCalibrator
from mcal._optional import import_optional
from mcal._validation import output_dtype
from mcal.dask._inputs import aligned, in_partition


def predict(model: BaseCalibrator, y_prob: Any, *, X: Any = None) -> Any:
    """Calibrated probabilities of a fitted calibrator on dask collections, computed lazily block by block.

    Each partition is predicted by ``model.predict`` on a worker, so the values are those of the in-memory
    calibrator. The model is sent to the workers once.

    Parameters
    ----------
    model : BaseCalibrator
        A fitted mcal calibrator (e.g. :class:`mcal.MCGrad`, or one read by :func:`mcal.load`).
    y_prob : dask Array or Series of shape (n_samples,)
        Uncalibrated probabilities in [0, 1].
    X : dask DataFrame or Array of shape (n_samples, n_features), default=None
        Features for calibrators that use them, partitioned as ``y_prob``.

    Returns
    -------
    y_calibrated : dask Array or Series of shape (n_samples,)
        Calibrated probabilities P(y=1), lazy; a dask Series with the index and divisions of ``y_prob`` when
        that is a Series (or a one-column DataFrame), else a dask Array with its chunks. float32 for float32
        scores, else float64.

    Raises
    ------
    TypeError
        If ``model`` is not an mcal calibrator, or an input is not a dask collection.
    NotFittedError
        If ``model`` is not fitted.
    ValueError
        If ``X`` is given to a calibrator that uses only scores, ``X`` (a dask DataFrame or Series, by its
        metadata) lacks a column the model was fitted on or has columns ``model.predict`` refuses (MCGrad's:
        extra ones, or another order), or the inputs are not partitioned alike; invalid values
        raise as in ``model.predict`` when the result is computed, with the partition named.

    Examples
    --------
    >>> import numpy as np, dask.array as da, mcal
    >>> model = mcal.IsotonicCalibration().fit([0.1, 0.4, 0.6, 0.9], [0, 0, 1, 1])
    >>> out = predict(model, da.from_array(np.array([0.2, 0.8]), chunks=1))
    >>> out.compute(scheduler="synchronous").tolist()
    [0.16666666666666666, 0.8333333333333334]
    """
    if not isinstance(model, BaseCalibrator):
        raise TypeError(f"model must be an mcal calibrator; got {type(model).__name__}")
    model._check_fitted()
    if X is not None and not model.uses_features:
        raise ValueError(
            f"X must be None for {type(model).__name__}, which uses only the scores (uses_features=False); "
            f"got {type(X).__name__}"
        )
    dask = import_optional("dask")
    da = import_optional("dask.array")
    dd = import_optional("dask.dataframe")
    _check_columns(model, X, dd)
    blocks = aligned({"y_prob": y_prob, "X": X}, matrix=("X",))
    dtype = output_dtype(y_prob if not isinstance(y_prob, dd.DataFrame) else y_prob[y_prob.columns[0]])
    series = isinstance(y_prob, (dd.Series, dd.DataFrame))
    shared = dask.delayed(model, pure=False)
    block = dask.delayed(_predict_block, pure=True)
    parts = [
        block(i, shared, p, x, dtype, series)
        for i, (p, x) in enumerate(zip(blocks["y_prob"], blocks["X"], strict=False))
    ]
    if series:
        name = y_prob.name if isinstance(y_prob, dd.Series) else y_prob.columns[0]
        return dd.from_delayed(parts, meta=pd.Series(dtype=dtype, name=name), divisions=y_prob.divisions)
    sizes = y_prob.chunks[0]
    return da.concatenate(
        [da.from_delayed(part, shape=(n,), dtype=dtype) for part, n in zip(parts, sizes, strict=False)]
    )


def _check_columns(model: BaseCalibrator, X: Any, dd: Any) -> None:
    """Refuse, while the graph is built, the columns of ``X`` that ``model.predict`` would refuse when the result is
    computed: any column the model was fitted on by name that it lacks, then the model's own check of its metadata
    (e.g. MCGrad's: the columns, names and order, of fit). A dask Array, or a model fitted on an array, has no names."""
    frame = isinstance(X, (dd.DataFrame, dd.Series))
    names = model.feature_columns()
    if names and (X is None or frame):
        have = [] if X is None else list(X.columns) if isinstance(X, dd.DataFrame) else [X.name]
        missing = [name for name in names if name not in have]
        if missing:
            got = "None" if X is None else f"a dask {type(X).__name__} with the columns {have[:10]}"
            raise ValueError(f"X must hold the columns {type(model).__name__} was fitted on {names[:10]}; got {got}, "
                             f"missing {missing[:10]}")  # fmt: skip
    if frame:
        meta = X._meta
        model._check_X_columns(meta.to_frame() if isinstance(meta, pd.Series) else meta)


def _predict_block(index: int, model: BaseCalibrator, p: Any, X: Any, dtype: np.dtype, series: bool) -> Any:
    if isinstance(p, pd.DataFrame):
        p = p.iloc[:, 0]
    values = np.asarray(p).reshape(-1)
    with in_partition(index):
        out = np.empty(0, dtype=dtype) if values.size == 0 else model.predict(values, X=X).astype(dtype, copy=False)
    return pd.Series(out, index=p.index, name=p.name) if series else out

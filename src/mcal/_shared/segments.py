"""The segments that a metric of :mod:`mcal.metrics`, :mod:`mcal.report` or :mod:`mcal.dask` reads: ``X`` or
``segments`` resolved into one :class:`~mcal.segments.Segments`."""

from __future__ import annotations

from typing import Any

import numpy as np

from mcal.segments import Segments, from_masks, generate_segments


def check_categorical_use(categorical_features: Any, X: Any, segments: Any) -> None:
    """Refuse a ``categorical_features`` other than ``"from_dtype"`` where no segments are generated from ``X``
    (it would be ignored)."""
    if isinstance(categorical_features, str) and categorical_features == "from_dtype":
        return
    if segments is not None:
        raise ValueError(
            "categorical_features applies only to segments generated from X: pass either segments or "
            "categorical_features, not both; got segments and "
            f"categorical_features={categorical_features!r:.100}"
        )
    if X is None:
        raise ValueError("categorical_features applies only to segments generated from X; got X=None and "
                         f"categorical_features={categorical_features!r:.100}")  # fmt: skip


def resolve_segments(X: Any, segments: Any, n_samples: int, categorical_features: Any = "from_dtype") -> Segments:
    """The segments a metric reads: generated from ``X``, as given (a :class:`~mcal.segments.Segments` or boolean
    masks of shape (n_samples, n_segments)), or one segment of all rows when neither is given.

    Raises
    ------
    ValueError
        If both ``X`` and ``segments`` are given, ``categorical_features`` is given without ``X``, the masks are not
        2-D, or the segments cover another number of rows.
    TypeError
        If ``segments`` is neither a ``Segments`` nor an array.
    """
    if X is not None and segments is not None:
        raise ValueError("pass either X (to generate segments) or segments, not both; got both")
    check_categorical_use(categorical_features, X, segments)
    if X is not None:
        resolved = generate_segments(X, categorical_features=categorical_features)
    elif segments is None:
        resolved = from_masks(np.ones((n_samples, 1), dtype=bool), names=["all"])
    elif isinstance(segments, Segments):
        resolved = segments
    else:
        rule = "segments must be a Segments or a boolean array of shape (n_samples, n_segments)"
        if isinstance(segments, (str, bytes, dict)) or np.ndim(segments) == 0:
            raise TypeError(f"{rule}; got {type(segments).__name__}")
        arr = np.asarray(segments)
        if arr.ndim != 2:
            raise ValueError(f"{rule}; got shape {arr.shape}; use mcal.segments.from_labels for a label column")
        resolved = from_masks(arr)
    if resolved.n_samples != n_samples:
        raise ValueError(f"segments must cover {n_samples} rows (n_samples); got {resolved.n_samples}")
    return resolved

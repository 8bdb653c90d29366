"""Validation of the report's inputs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._validation import (
    check_both_classes,
    check_consistent,
    check_sample_weight,
    check_y_prob,
    check_y_real,
    check_y_true,
)

# ----------------------------------------------------------------------------------------------- validation


def _check_path(path: Any) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like; got {type(path).__name__}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"path must name a file; got the folder {path}")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"path must be in an existing folder; got {path} (no folder {path.parent})")
    return path


def _check_names(y_probs: Any, what: str, one: str) -> None:
    """Refuse a ``y_probs`` that is not a non-empty mapping of string names to ``what`` (each a ``one``)."""
    if not isinstance(y_probs, Mapping):
        raise TypeError(f"y_probs must be a mapping of names to {what}, e.g. {{'model': p}}; got "
                        f"{type(y_probs).__name__}")  # fmt: skip
    if not y_probs:
        raise ValueError(f"y_probs must name at least one {one}; got none")
    bad = [k for k in y_probs if not isinstance(k, str)]
    if bad:
        raise TypeError(f"y_probs keys must be strings ({one} names); got {bad[:3]!r}")


def _check_inputs(
    y_true: ArrayLike,
    y_probs: Mapping[str, ArrayLike],
    sample_weight: ArrayLike | None,
    outcome: str = "classification",
) -> tuple[NDArray[np.float64], dict[str, NDArray[np.float64]], NDArray[np.float64]]:
    _check_names(y_probs, "score arrays", "score column")
    regression = outcome == "regression"
    y = check_y_real(y_true, "y_true") if regression else check_y_true(y_true)
    if y.shape[0] < 2:
        raise ValueError(f"y_true must have at least 2 rows for a report; got {y.shape[0]}")
    check = check_y_real if regression else check_y_prob
    probs = {name: check(p, f"score column {name!r}") for name, p in y_probs.items()}
    check_consistent(y_true=y, **{f"score column {name!r}": p for name, p in probs.items()})
    w = check_sample_weight(sample_weight, y.shape[0])
    if not regression:
        check_both_classes(y, w, "y_true")
    return y, probs, w

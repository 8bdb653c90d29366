"""How ``X`` reaches the group-based calibrators (HKRR, DFMC): its columns, or segments generated from it."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._constraints import StrOptions
from mcal._features.table import as_frame
from mcal._persistence.state import NoneOr
from mcal.segments import Segments, generate_segments

#: Accepted settings of :func:`mcal.segments.generate_segments` for ``groups="generated"``.
_SEGMENT_PARAMS = frozenset(inspect.signature(generate_segments).parameters) - {"X"}


def _as_table(X: Any, n_samples: int) -> tuple[NDArray, list[str]]:
    """``X`` as a 2-D array of objects or numbers and its column labels, with its row count checked."""
    X = as_frame(X)
    if isinstance(X, pd.DataFrame):
        return X.to_numpy(), [str(c) for c in X.columns]
    arr = np.asarray(X)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n_samples:
        raise ValueError(f"X must be 2-D with {n_samples} rows; got shape {arr.shape}")
    return arr, [str(j) for j in range(arr.shape[1])]


def group_masks(X: Any, n_samples: int) -> NDArray[np.bool_]:
    """Boolean membership matrix of shape (n_samples, n_groups) from ``X``'s indicator columns.

    Raises
    ------
    ValueError
        If ``X`` is None, has no columns, or a column holds anything but booleans or 0/1 numbers.
    """
    if X is None:
        raise ValueError("X must hold one boolean group-indicator column per group; got None")
    arr, names = _as_table(X, n_samples)
    if arr.shape[1] == 0:
        raise ValueError("X must have at least one group-indicator column; got 0 columns")
    if arr.dtype == bool:
        return arr
    try:  # complex numbers would be cast to their real part
        values = None if arr.dtype.kind == "c" else arr.astype(np.float64)
    except (TypeError, ValueError):
        values = None
    col = 0
    if values is not None:
        bad = ~np.isin(values, (0.0, 1.0))
        if not bad.any():
            return values == 1.0
        col = int(np.flatnonzero(bad.any(axis=0))[0])
    shown = pd.unique(pd.Series(arr[:, col]))[:3].tolist()
    raise ValueError(
        f"X must hold boolean group indicators (bool or 0/1) in every column; column {names[col]!r} "
        f"holds values such as {shown}"
    )


def _check_segment_params(name: str, params: Any) -> None:
    """The rule of ``segment_params``: None or a dict of :func:`mcal.segments.generate_segments` settings."""
    rule = f"{name} must be None or a dict of generate_segments settings {sorted(_SEGMENT_PARAMS)}"
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"{rule}; got {params!r} of type {type(params).__name__}")
    if params is not None and not set(params) <= _SEGMENT_PARAMS:
        raise ValueError(f"{rule}; got {params!r}")


#: The parameter constraints of the group input of HKRR and DFMC.
GROUP_CONSTRAINTS = {"groups": StrOptions("columns", "generated"), "segment_params": _check_segment_params}


def check_generated_segments(name: str, state: Any) -> None:
    """The fitted-state rule of ``segments_`` (null with ``groups="columns"``, which relates it to the parameter):
    the definitions of generated segments (:meth:`mcal.segments.Segments.to_dict`)."""
    parts = state.get("parts") if isinstance(state, dict) else None
    if not isinstance(parts, list) or not all(isinstance(q, dict) and q.get("kind") == "generated" for q in parts):
        raise ValueError(f"{name} must hold generated segment definitions")


#: The fitted-state rule of the segments of :class:`GroupInput`, for the tables of HKRR and DFMC.
SEGMENTS_STATE = {"segments_": NoneOr(check_generated_segments)}


class GroupInput:
    """How ``X`` becomes groups for HKRR and DFMC: its columns, or segments generated from its features."""

    # set by the estimator's __init__ and by fit
    groups: str
    segment_params: dict[str, Any] | None
    segments_: dict[str, Any] | None
    segment_columns_: list[str] | None

    def _column_names(self) -> list[str] | None:
        """The group (HKRR) or feature (DFMC) columns of a DataFrame ``X`` by name, None for an array."""
        raise NotImplementedError

    def _feature_columns(self) -> list[Any] | None:
        """The columns the generated segments read, or the group (HKRR) or feature (DFMC) columns, by name."""
        names = self.segment_columns_ if self.groups == "generated" else self._column_names()
        return None if names is None else list(names)

    def _check_param_relations(self) -> None:
        if self.segment_params is not None and self.groups != "generated":
            raise ValueError("segment_params is only used with groups='generated'; got groups='columns'")

    def _segments(self, X: Any, *, fitting: bool) -> Segments:
        """Generate the segments from ``X`` at fit (saving their definitions, and the columns of a DataFrame they
        read); evaluate them on ``X`` at predict."""
        if fitting:
            segments = generate_segments(X, **(self.segment_params or {}))
            self.segments_ = segments.to_dict()
            self.segment_columns_ = _segment_features(self.segments_) if isinstance(X, pd.DataFrame) else None
            return segments
        assert self.segments_ is not None  # fitted with groups="generated"
        segments = Segments.from_dict(self.segments_, X)
        if segments.n_samples != len(X):
            raise ValueError(f"X must have {len(X)} rows; got {segments.n_samples}")
        return segments

    def _check_segments_state(self, n_groups: int) -> None:
        state = self.segments_
        if self.groups == "columns":
            if state is not None or self.segment_columns_ is not None:
                raise ValueError(
                    "model data fields state.segments_ and state.segment_columns must be null when groups='columns'"
                )
            return
        if state is None:
            raise ValueError("model data field state.segments_ must hold generated segment definitions")
        if sum(len(q.get("segments", [])) for q in state["parts"]) != n_groups:
            raise ValueError(f"model data field state.segments_ must define {n_groups} segments")
        columns = self.segment_columns_
        if columns is not None and columns != _segment_features(state):
            raise ValueError(
                "model data field state.segment_columns must be null or the names of the features "
                f"that state.segments_ reads, {_segment_features(state)[:10]}; got {columns!r:.200}"
            )

    def _group_input_state(self) -> dict[str, Any]:
        """Extra state of the group input: the columns the generated segments read by name (None otherwise)."""
        return {"segment_columns": self.segment_columns_}

    def _restore_group_input_state(self, state: dict[str, Any]) -> None:
        self.segment_columns_ = state.get("segment_columns")  # absent from files written before it was recorded


def _segment_features(state: dict[str, Any]) -> list[str]:
    """The names of the features that the generated segment definitions ``state`` read, in order of appearance."""
    names: list[Any] = [f.get("name") for q in state["parts"] for f in q.get("features", []) if isinstance(f, dict)]
    return list(dict.fromkeys(names))

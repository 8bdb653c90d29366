"""The rows MCGrad's early stopping trains and validates on: the split, its checks, features encoded on demand."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._features.encoder import FeatureEncoder
from mcal._features.table import take_rows
from mcal._optional import import_optional
from mcal.mcgrad.engine import Engine, Part

#: Rows of a block of :class:`FeatureBlocks` (8.4 MB of float64 codes for 16 features).
_BLOCK_ROWS = 1 << 16


class EncodedRows:
    """Rows of ``X`` encoded on demand (``rows[idx]``, with the spare score column), shaped like the full encoding."""

    def __init__(self, encoder: FeatureEncoder, X: Any, shape: tuple[int, int]) -> None:
        self.encoder, self.X, self.shape = encoder, X, shape

    def __getitem__(self, rows: NDArray[np.intp] | NDArray[np.bool_]) -> NDArray[np.float64]:
        return self.encoder.transform(take_rows(self.X, rows), n_extra_columns=1)


class FeatureBlocks:
    """The encoded feature columns of ``X`` (no score column) as a ``lightgbm.Sequence`` of row blocks.

    LightGBM reads single rows of it, in increasing order, for the bin boundaries, then ``batch_size`` rows at a
    time: each read encodes one block of ``X``, so the float64 matrix of all rows never exists. An ``X`` without a
    shape (a list of rows) is read as one block, since taking its rows converts all of it.
    """

    def __init__(self, encoder: FeatureEncoder, X: Any, n_rows: int) -> None:
        import_optional("lightgbm").Sequence.register(FeatureBlocks)
        self.encoder, self.X, self.n_rows = encoder, X, n_rows
        self.batch_size = _BLOCK_ROWS if hasattr(X, "shape") else max(n_rows, 1)
        self._start, self._block = 0, np.empty((0, 0))

    def __len__(self) -> int:
        return self.n_rows

    def __getitem__(self, idx: int | slice) -> NDArray[np.float64]:
        if isinstance(idx, slice):
            return self._encode(*idx.indices(self.n_rows)[:2])
        if not self._start <= idx < self._start + self._block.shape[0]:
            self._start, self._block = idx, self._encode(idx, idx + self.batch_size)
        return self._block[idx - self._start]

    def _encode(self, start: int, stop: int) -> NDArray[np.float64]:
        rows = take_rows(self.X, np.arange(start, min(stop, self.n_rows)))
        return np.ascontiguousarray(self.encoder.transform(rows))


def check_split_weights(engine: Engine, train: list[Part], valid: list[Part], random_state: Any) -> None:
    """Raise ValueError if an early-stopping part has no positive weight (LightGBM raised "sum of weights is
    zero" on a training part; a validation part's loss was 0/0)."""
    for kind, parts in (("training", train), ("validation", valid)):
        for part in parts:
            if not engine.log_loss_sum(part.y, part.F, part.w)[1] > 0:
                raise ValueError(
                    f"sample_weight must leave positive weight in every early-stopping part; the {kind} part of the "
                    f"split drawn with random_state={random_state!r} has none (give more rows positive weight, "
                    "or use another random_state, or early_stopping=None)"
                )


def split_rows(
    y: NDArray[np.float64], method: str, validation_fraction: float, n_folds: int, seed: int
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """(train, validation) row indices for early stopping, each increasing; stratified by label when labels are
    0/1. The indices are int32 below 2**31 rows (what LightGBM's ``Dataset.subset`` reads).

    Raises
    ------
    ValueError
        If there are too few rows (of each class, for 0/1 labels) to split.
    """
    from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold, StratifiedShuffleSplit

    binary = bool(np.all((y == 0) | (y == 1)))
    need = n_folds if method == "kfold" else 2
    counts = np.bincount(y.astype(np.intp), minlength=2) if binary else np.array([y.size])
    if counts.min() < need:
        what = "of each class" if binary else "in all"
        raise ValueError(
            f"y must have at least {need} rows {what} for early_stopping={method!r}; got {counts.tolist()} "
            "(use early_stopping=None with a fixed max_rounds on data this small)"
        )
    rows = np.broadcast_to(0.0, (y.size, 1))  # the splitters read only its length
    index = np.int32 if y.size < 2**31 else np.intp
    if method == "kfold":
        splitter = (StratifiedKFold if binary else KFold)(n_splits=n_folds, shuffle=True, random_state=seed)
    else:
        splitter = (StratifiedShuffleSplit if binary else ShuffleSplit)(
            n_splits=1, test_size=validation_fraction, random_state=seed
        )
    try:
        return [
            (np.sort(tr).astype(index), np.sort(va).astype(index))
            for tr, va in splitter.split(rows, y if binary else None)
        ]
    except ValueError as exc:
        what = (
            f"validation_fraction={validation_fraction} of {y.size} rows"
            if method == "holdout"
            else f"n_folds={n_folds}"
        )
        raise ValueError(f"y cannot be split for early_stopping={method!r} with {what}: {exc}") from exc

"""Storage of segments: coded conditions on features and CSR row indices, with their score-ordered passes.

Private to :mod:`mcal.segments._segments` and the metrics; see that module for the public API.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mcal._features.segment_codes import Feature, code_dtype, encode_feature, feature_table

#: Upper bound on the row memberships materialised at once when evaluating mask segments.
_CHUNK_MEMBERSHIPS = 1 << 24


@dataclass(frozen=True, eq=False)
class Block:
    """Segments ready for one pass over the rows in score order.

    ``positions`` (indices into the score-sorted rows, or None for all rows in order) are grouped so that each
    group is contiguous and in score order; ``starts`` is the start of every nonempty group; segment ``ids[j]``
    is group ``group[j]``. ``labels`` gives each score-sorted row's group for :meth:`sums` (coded segments),
    or is None (mask segments, summed over ``positions``).
    """

    ids: NDArray[np.intp]
    positions: NDArray[np.intp] | None
    starts: NDArray[np.intp]
    group: NDArray[np.intp]
    labels: NDArray | None = None
    nonempty: NDArray[np.intp] | None = None

    def sums(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Per-group sums of a per-row quantity given in score order."""
        if self.labels is not None and self.nonempty is not None:
            sums = np.bincount(self.labels, weights=values, minlength=int(self.nonempty[-1]) + 1)
            return sums.astype(np.float64, copy=False)[self.nonempty]
        return np.add.reduceat(values if self.positions is None else values[self.positions], self.starts)


@dataclass(frozen=True, eq=False)
class CodedPart:
    """Segments defined by conditions ``feature == level`` on coded features."""

    features: tuple[Feature, ...]
    codes: tuple[NDArray, ...]  # one code array of shape (n_samples,) per feature
    combos: tuple[tuple[int, ...], ...]  # the feature combinations in use
    seg_combo: NDArray[np.intp]  # (n_segments,) index into combos
    seg_group: NDArray[np.int64]  # (n_segments,) raveled level codes within the combination
    sizes: NDArray[np.int64]

    def dims(self, combo: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(self.features[f].n_levels for f in combo)

    def conditions(self, k: int) -> list[tuple[int, int]]:
        combo = self.combos[self.seg_combo[k]]
        levels = np.unravel_index(self.seg_group[k], self.dims(combo)) if combo else ()
        return [(f, int(c)) for f, c in zip(combo, levels, strict=False)]

    def description(self, k: int) -> str:
        conds = self.conditions(k)
        return " & ".join(self.features[f].describe(c) for f, c in conds) if conds else "all"

    def by_combo(self) -> Iterator[tuple[tuple[int, ...], NDArray[np.intp]]]:
        order = np.argsort(self.seg_combo, kind="stable")
        bounds = np.flatnonzero(np.diff(self.seg_combo[order])) + 1
        for ids in np.split(order, bounds) if order.size else []:
            yield self.combos[self.seg_combo[ids[0]]], ids

    def key(self, combo: tuple[int, ...], codes: Sequence[NDArray] | None = None) -> NDArray:
        return combo_key(self.codes if codes is None else codes, combo, self.dims(combo))

    def sums(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.empty(self.seg_combo.size)
        for combo, ids in self.by_combo():
            if combo:
                totals = np.bincount(self.key(combo), weights=values, minlength=math.prod(self.dims(combo)))
                out[ids] = totals[self.seg_group[ids]]
            else:
                out[ids] = values.sum()
        return out

    def masks(self, n_samples: int) -> NDArray[np.bool_]:
        """Membership matrix of shape (n_samples, n_segments); ``n_samples`` is given because a part without
        features (only the segment of all rows) holds no code array to read it from."""
        out = np.empty((n_samples, self.seg_combo.size), dtype=bool)
        for combo, ids in self.by_combo():
            out[:, ids] = (self.key(combo)[:, None] == self.seg_group[ids][None, :]) if combo else True
        return out

    def blocks(self, order: NDArray[np.intp]) -> Iterator[Block]:
        sorted_codes: dict[int, NDArray] = {}
        for combo, ids in self.by_combo():
            if not combo:
                yield Block(ids, None, np.zeros(1, dtype=np.intp), np.zeros(ids.size, dtype=np.intp))
                continue
            for f in combo:
                if f not in sorted_codes:
                    sorted_codes[f] = self.codes[f][order]
            key = combo_key(sorted_codes, combo, self.dims(combo))
            perm = np.argsort(key, kind="stable")  # a radix sort of small codes: keeps score order in a group
            counts = np.bincount(key, minlength=math.prod(self.dims(combo)))
            nonempty = np.flatnonzero(counts)
            starts = np.concatenate(([0], np.cumsum(counts[nonempty])[:-1]))
            group_of = np.full(counts.size, -1, dtype=np.intp)
            group_of[nonempty] = np.arange(nonempty.size)
            group = group_of[self.seg_group[ids]]
            yield Block(ids[group >= 0], perm, starts, group[group >= 0], key, nonempty)


@dataclass(frozen=True, eq=False)
class IndexPart:
    """Segments given by their sorted row indices (CSR layout)."""

    names: tuple[str, ...]
    indptr: NDArray[np.int64]
    indices: NDArray[np.intp]

    @property
    def sizes(self) -> NDArray[np.int64]:
        return np.diff(self.indptr)

    def sums(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        owner = np.repeat(np.arange(len(self.names)), self.sizes)
        return np.bincount(owner, weights=values[self.indices], minlength=len(self.names)).astype(
            np.float64, copy=False
        )

    def blocks(self, order: NDArray[np.intp]) -> Iterator[Block]:
        rank = np.empty(order.size, dtype=np.intp)
        rank[order] = np.arange(order.size)
        sizes = self.sizes
        ends = np.cumsum(sizes)
        first = 0
        while first < sizes.size:
            budget = (ends[first - 1] if first else 0) + _CHUNK_MEMBERSHIPS
            last = max(first + 1, int(np.searchsorted(ends, budget, side="right")))
            ids = np.arange(first, last)
            ids = ids[sizes[ids] > 0]
            first = last
            if not ids.size:
                continue
            lo, hi = self.indptr[ids[0]], self.indptr[ids[-1] + 1]
            owner = np.repeat(np.arange(ids.size, dtype=np.int64), sizes[ids]) * order.size
            # Sorting (owner, rank) pairs keeps each segment contiguous and puts its rows in score order.
            pos = (np.sort(owner + rank[self.indices[lo:hi]]) - owner).astype(np.intp)
            starts = np.concatenate(([0], np.cumsum(sizes[ids])[:-1]))
            yield Block(ids, pos, starts, np.arange(ids.size))


def combo_key(codes: Any, combo: tuple[int, ...], dims: tuple[int, ...]) -> NDArray:
    """Raveled level codes of a feature combination for every row (row-major over ``dims``)."""
    dtype = code_dtype(math.prod(dims))
    key = codes[combo[0]].astype(dtype)
    for f, dim in zip(combo[1:], dims[1:], strict=False):
        key *= dtype(dim)
        key += codes[f]
    return key


def column_of(names: list[str], columns: list[NDArray], name: str) -> NDArray:
    if name not in names:
        raise ValueError(f"X must have the feature column {name!r}; got columns {names[:10]}")
    return columns[names.index(name)]


def with_sizes(part: CodedPart) -> CodedPart:
    sizes = np.zeros(part.seg_combo.size, dtype=np.int64)
    n = part.codes[0].shape[0] if part.codes else 0
    for combo, ids in part.by_combo():
        if combo:
            sizes[ids] = np.bincount(part.key(combo), minlength=math.prod(part.dims(combo)))[part.seg_group[ids]]
        else:
            sizes[ids] = n
    return CodedPart(part.features, part.codes, part.combos, part.seg_combo, part.seg_group, sizes)


def coded_part_from_state(ps: dict[str, Any], X: Any) -> CodedPart:
    features = tuple(Feature.from_dict(f) for f in ps["features"])
    names, columns, _ = feature_table(X)
    codes = tuple(encode_feature(f, column_of(names, columns, f.name)) for f in features)
    combos: dict[tuple[int, ...], int] = {}
    seg_combo, seg_group = [], []
    for conds in ps["segments"]:
        try:
            combo, levels = tuple(int(c[0]) for c in conds), tuple(int(c[1]) for c in conds)
            dims = tuple(features[f].n_levels for f in combo)
            group = int(np.ravel_multi_index(levels, dims)) if combo else 0
        except (TypeError, ValueError, IndexError):
            raise ValueError(
                f"segment conditions must be [feature, level] pairs within range; got {conds!r:.200}"
            ) from None
        seg_combo.append(combos.setdefault(combo, len(combos)))
        seg_group.append(group)
    part = CodedPart(features, codes, tuple(combos), np.asarray(seg_combo, dtype=np.intp),
                      np.asarray(seg_group, dtype=np.int64), np.zeros(0, np.int64))  # fmt: skip
    return with_sizes(part)


def index_part_from_state(ps: dict[str, Any], n_samples: int) -> IndexPart:
    indptr = np.asarray(ps.get("indptr", []), dtype=np.int64)
    indices = np.asarray(ps.get("indices", []), dtype=np.intp)
    names = tuple(str(s) for s in ps.get("names", []))
    ok = (
        indptr.size == len(names) + 1 and indptr[0] == 0 and indptr[-1] == indices.size and np.all(np.diff(indptr) >= 0)
    )
    if not ok or (indices.size and (indices.min() < 0 or indices.max() >= n_samples)):
        raise ValueError("mask segments state must have consistent names, indptr and in-range indices")
    return IndexPart(names, indptr, indices)

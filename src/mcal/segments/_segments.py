"""Segments: groups of rows over which multicalibration is measured and enforced.

Segments are either generated from a feature table (every conjunction of up to ``max_depth`` feature conditions,
as in the multicalibration error of Guy et al. 2025 and the MCGrad paper, Tax et al. 2025, section 2 and
Appendix A), or prespecified as boolean masks or a column of group labels. They are stored compactly: generated
segments as one small integer code per row and feature plus, per segment, its feature combination and level
codes; masks as sorted row indices (CSR). No rows x segments matrix exists unless :meth:`Segments.to_masks`
is called.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from mcal._features.segment_codes import encode_feature, feature_table, fit_feature
from mcal._validation import as_1d, check_int
from mcal.segments._store import (
    Block,
    CodedPart,
    IndexPart,
    coded_part_from_state,
    column_of,
    index_part_from_state,
    with_sizes,
)


class Segments:
    """A set of segments (groups of rows, possibly overlapping) of a fixed table of ``n_samples`` rows.

    Build one with :func:`generate_segments`, :func:`from_masks`, :func:`from_labels` or :func:`concat`; the
    constructor (``parts``, ``n_samples``, ``capped``) takes mcal's internal segment parts and is not public.

    Attributes
    ----------
    n_samples : int
        Number of rows of the table the segments refer to.
    n_segments : int
        Number of segments.
    descriptions : list of str of length n_segments
        Readable definitions, e.g. ``"job=admin & age in (30, 45]"``; ``"all"`` is the whole table.
    sizes : ndarray of shape (n_segments,), int64
        Number of rows in each segment.
    depths : ndarray of shape (n_segments,), int64
        Number of feature conditions of a generated segment (0 for the whole table); 1 for masks and labels.
    capped : bool
        Whether ``max_n_segments`` cut the generated set short.
    """

    def __init__(self, parts: Sequence[CodedPart | IndexPart], n_samples: int, *, capped: bool = False) -> None:
        self._parts = tuple(parts)
        self.n_samples = int(n_samples)
        self.capped = bool(capped)
        self._offsets = np.cumsum([0] + [p.sizes.size for p in self._parts])
        self.n_segments = int(self._offsets[-1])
        self._descriptions: list[str] | None = None

    def __len__(self) -> int:
        return self.n_segments

    def __repr__(self) -> str:
        return f"Segments(n_segments={self.n_segments}, n_samples={self.n_samples}, capped={self.capped})"

    @property
    def sizes(self) -> NDArray[np.int64]:
        """Number of rows of each segment, an int64 array of shape (n_segments,)."""
        return np.concatenate([p.sizes for p in self._parts]).astype(np.int64) if self._parts else np.zeros(0, np.int64)

    @property
    def depths(self) -> NDArray[np.int64]:
        """Number of conditions defining each segment (1 for masks and labels), shape (n_segments,)."""
        out = [
            np.array([len(p.combos[c]) for c in p.seg_combo], dtype=np.int64)
            if isinstance(p, CodedPart)
            else np.ones(p.sizes.size, dtype=np.int64)
            for p in self._parts
        ]
        return np.concatenate(out) if out else np.zeros(0, np.int64)

    @property
    def descriptions(self) -> list[str]:
        """Readable definition of each segment (``"age<30 & job=retired"``), a list of n_segments strings."""
        if self._descriptions is None:
            self._descriptions = [
                p.description(k) if isinstance(p, CodedPart) else p.names[k]
                for p in self._parts
                for k in range(p.sizes.size)
            ]
        return list(self._descriptions)

    def _locate(self, k: int) -> tuple[CodedPart | IndexPart, int]:
        check_int("segment", k, f"an integer in [0, {self.n_segments})", lambda v: 0 <= v < self.n_segments)
        j = int(np.searchsorted(self._offsets, k, side="right")) - 1
        return self._parts[j], int(k - self._offsets[j])

    def indices(self, k: int) -> NDArray[np.intp]:
        """Sorted row indices of segment ``k``.

        Parameters
        ----------
        k : int
            Segment number, in ``[0, n_segments)``.

        Returns
        -------
        indices : ndarray of shape (sizes[k],), intp

        Raises
        ------
        ValueError
            If ``k`` is not a segment number.
        TypeError
            If ``k`` is not an integer.
        """
        part, i = self._locate(k)
        if isinstance(part, IndexPart):
            return part.indices[part.indptr[i] : part.indptr[i + 1]].copy()
        keep = np.ones(self.n_samples, dtype=bool)
        for f, c in part.conditions(i):
            keep &= part.codes[f] == c
        return np.flatnonzero(keep)

    def mask(self, k: int) -> NDArray[np.bool_]:
        """Boolean membership of segment ``k``.

        Parameters
        ----------
        k : int
            Segment number, as for :meth:`indices`.

        Returns
        -------
        mask : ndarray of shape (n_samples,), bool

        Raises
        ------
        ValueError
            If ``k`` is not a segment number.
        TypeError
            If ``k`` is not an integer.
        """
        out = np.zeros(self.n_samples, dtype=bool)
        out[self.indices(k)] = True
        return out

    def to_masks(self) -> NDArray[np.bool_]:
        """Dense membership matrix of shape (n_samples, n_segments): ``n_samples * n_segments`` bytes.

        For methods that take groups as boolean columns (HKRR, DFMC); prefer :meth:`indices` at scale.

        Returns
        -------
        masks : ndarray of shape (n_samples, n_segments), bool
            Column ``k`` is :meth:`mask` ``(k)``.
        """
        out = np.zeros((self.n_samples, self.n_segments), dtype=bool)
        for part, offset in zip(self._parts, self._offsets, strict=False):
            if isinstance(part, CodedPart):
                out[:, offset : offset + part.sizes.size] = part.masks(self.n_samples)
            else:
                for i in range(part.sizes.size):
                    out[part.indices[part.indptr[i] : part.indptr[i + 1]], offset + i] = True
        return out

    def segment_sums(self, values: ArrayLike) -> NDArray[np.float64]:
        """Sum of a per-row quantity over each segment.

        Parameters
        ----------
        values : array-like of shape (n_samples,)
            Finite numbers, one per row.

        Returns
        -------
        sums : ndarray of shape (n_segments,), float64

        Raises
        ------
        ValueError
            If ``values`` has the wrong length or is not finite.
        TypeError
            If ``values`` is not array-like (None or a string) or holds complex numbers.
        """
        arr = np.asarray(as_1d(values, "values"), dtype=np.float64)
        if arr.shape[0] != self.n_samples:
            raise ValueError(f"values must have length {self.n_samples} (n_samples); got {arr.shape[0]}")
        if not np.isfinite(arr).all():
            raise ValueError("values must be finite; got NaN or infinity")
        return self._sums(arr)

    def _sums(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        out = [p.sums(values) for p in self._parts]
        return np.concatenate(out) if out else np.zeros(0)

    def _blocks(self, order: NDArray[np.intp]) -> Iterator[Block]:
        """Blocks of segments for one pass in score order (``order`` sorts the rows by score)."""
        for part, offset in zip(self._parts, self._offsets, strict=False):
            for block in part.blocks(order):
                yield Block(
                    block.ids + offset, block.positions, block.starts, block.group, block.labels, block.nonempty
                )

    def apply(self, X: Any) -> Segments:
        """The same segment definitions evaluated on another table with the same feature columns.

        For scoring a held-out split, or a partition of a larger table, on the segments of another.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_new_samples, n_features)
            Holds every feature the segments use, by name (``x0, x1, ...`` for arrays).

        Returns
        -------
        segments : Segments
            Same descriptions and order, sizes counted on ``X`` (possibly 0). Categories and numbers not seen when
            the segments were generated match no value condition (they fall in ``x not in {...}`` where the set
            was collapsed); numerical bins are open-ended at both ends.

        Raises
        ------
        ValueError
            If the segments include masks (they belong to fixed rows), or ``X`` lacks a feature.
        TypeError
            If ``X`` is not a DataFrame or 2-D array-like (None or a string), or a numerical feature's column holds
            complex numbers or datetimes.
        """
        if any(isinstance(p, IndexPart) for p in self._parts):
            raise ValueError("segments must be generated from features to be applied to new rows; got masks")
        names, columns, _ = feature_table(X)
        parts = []
        for p in self._parts:
            assert isinstance(p, CodedPart)  # masks were refused above
            codes = tuple(encode_feature(f, column_of(names, columns, f.name)) for f in p.features)
            fresh = CodedPart(p.features, codes, p.combos, p.seg_combo, p.seg_group, np.zeros(0, np.int64))
            parts.append(with_sizes(fresh))
        return Segments(parts, columns[0].shape[0], capped=self.capped)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe definitions, for :meth:`from_dict`.

        Returns
        -------
        state : dict
            Generated and label segments keep their feature levels and conditions (rows are encoded again by
            :meth:`from_dict`); mask segments keep their row indices, so the state grows with their sizes.
        """
        parts = []
        for p in self._parts:
            if isinstance(p, CodedPart):
                conds = [[list(c) for c in p.conditions(k)] for k in range(p.sizes.size)]
                parts.append({"kind": "generated", "features": [f.to_dict() for f in p.features], "segments": conds})
            else:
                parts.append({"kind": "masks", "names": list(p.names), "indptr": p.indptr.tolist(),
                              "indices": p.indices.tolist()})  # fmt: skip
        return {"n_samples": self.n_samples, "capped": self.capped, "parts": parts}

    @classmethod
    def from_dict(cls, state: dict[str, Any], X: Any = None) -> Segments:
        """Rebuild segments from :meth:`to_dict`.

        Parameters
        ----------
        state : dict
            Output of :meth:`to_dict` (possibly through JSON).
        X : DataFrame or array-like of shape (n_samples, n_features), default=None
            The feature table to evaluate generated segments on; required when the state has them.

        Returns
        -------
        segments : Segments

        Raises
        ------
        ValueError
            If the state is malformed, or ``X`` is missing or lacks a feature while generated parts exist.
        """
        if not isinstance(state, dict) or not {"n_samples", "capped", "parts"} <= set(state):
            raise ValueError(f"state must be a dict from Segments.to_dict(); got {type(state).__name__}")
        try:
            return cls._from_state(state, X)
        except (TypeError, AttributeError, KeyError, IndexError, RecursionError) as exc:
            raise ValueError(
                f"state must be a dict from Segments.to_dict(); got a malformed one ({type(exc).__name__}: "
                f"{str(exc)[:200]})"
            ) from exc

    @classmethod
    def _from_state(cls, state: dict[str, Any], X: Any) -> Segments:
        parts: list[CodedPart | IndexPart] = []
        n_samples = int(state["n_samples"])
        for ps in state["parts"]:
            if ps.get("kind") == "masks":
                parts.append(index_part_from_state(ps, n_samples))
            elif ps.get("kind") == "generated":
                if X is None:
                    raise ValueError("X must be given to rebuild generated segments; got None")
                coded = coded_part_from_state(ps, X)
                parts.append(coded)
                n_samples = coded.codes[0].shape[0] if coded.codes else n_samples
            else:
                raise ValueError(f"segment part kind must be 'generated' or 'masks'; got {ps.get('kind')!r}")
        return cls(parts, n_samples, capped=bool(state["capped"]))


def from_masks(masks: Any, names: Sequence[str] | None = None) -> Segments:
    """Prespecified segments from boolean masks, one per column.

    Parameters
    ----------
    masks : array-like of shape (n_samples, n_segments) or (n_samples,), or DataFrame
        Boolean (or 0/1) membership; a DataFrame's column names become the segment names.
    names : sequence of str of length n_segments, default=None
        Readable names; default the DataFrame's columns, else ``"segment 0"``, ``"segment 1"``, ...

    Returns
    -------
    segments : Segments
        Stored as sorted row indices. An all-False mask gives an empty segment (size 0).

    Raises
    ------
    ValueError
        If ``masks`` is empty, has missing values or values other than 0/1, or ``names`` has the wrong length.

    Examples
    --------
    >>> segs = from_masks([[True, False], [True, True], [False, True]], names=["a", "b"])
    >>> segs.sizes.tolist(), segs.indices(1).tolist()
    ([2, 2], [1, 2])
    """
    if isinstance(masks, pd.DataFrame):
        names = [str(c) for c in masks.columns] if names is None else names
        masks = masks.to_numpy()
    arr = np.asarray(masks)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"masks must be a non-empty array of shape (n_samples, n_segments); got shape {arr.shape}")
    if arr.dtype != bool:
        if pd.isna(arr).any():
            raise ValueError(f"masks must not contain missing values; got {int(pd.isna(arr).sum())}")
        try:
            numeric = arr.astype(np.float64)
        except (TypeError, ValueError):
            numeric = np.full(arr.shape, np.nan)
        if arr.dtype.kind not in "biufO" or not np.isin(numeric, (0.0, 1.0)).all():
            raise ValueError(f"masks must be boolean or 0/1; got dtype {arr.dtype} with other values")
        arr = numeric.astype(bool)
    n, k = arr.shape
    names = [f"segment {j}" for j in range(k)] if names is None else [str(s) for s in names]
    if len(names) != k:
        raise ValueError(f"names must have one entry per mask ({k}); got {len(names)}")
    flat = np.flatnonzero(arr.T)
    owner, rows = np.divmod(flat, n)
    indptr = np.concatenate(([0], np.cumsum(np.bincount(owner, minlength=k)))).astype(np.int64)
    return Segments([IndexPart(tuple(names), indptr, rows.astype(np.intp))], n)


def from_labels(labels: ArrayLike, name: str | None = None) -> Segments:
    """Prespecified segments from a column of group labels: one segment per distinct label.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Any hashable values; missing values form their own segment ``<name> is missing``.
    name : str, default=None
        Used in descriptions (``"<name>=<label>"``); default the Series name, else ``"group"``.

    Returns
    -------
    segments : Segments
        One segment per label, most frequent first (ties by the label's text); a column with one value gives
        one segment equal to the whole table.

    Examples
    --------
    >>> segs = from_labels(["x", "y", "x"], name="country")
    >>> segs.descriptions, segs.sizes.tolist()
    (['country=x', 'country=y'], [2, 1])
    """
    if name is None:
        name = str(labels.name) if isinstance(labels, pd.Series) and labels.name is not None else "group"
    column = as_1d(labels, "labels")
    n_values = int(pd.Series(column).nunique(dropna=True))
    feature, codes = fit_feature(name, column, True, max(n_values, 2))
    counts = np.bincount(codes, minlength=feature.n_levels)
    groups = np.flatnonzero(counts)
    part = CodedPart((feature,), (codes,), ((0,),), np.zeros(groups.size, np.intp), groups.astype(np.int64),
                      counts[groups].astype(np.int64))  # fmt: skip
    return Segments([part], column.shape[0])


def concat(*segments: Segments) -> Segments:
    """Join segment sets defined on the same rows (e.g. masks and a label column), in the order given.

    Parameters
    ----------
    *segments : Segments
        One or more segment sets with the same ``n_samples``.

    Returns
    -------
    segments : Segments
        Their segments in the order given (duplicates kept); ``capped`` if any input was.

    Raises
    ------
    ValueError
        If no set is given or their ``n_samples`` differ.
    TypeError
        If an argument is not a :class:`Segments`.
    """
    if not segments:
        raise ValueError("concat needs at least one Segments; got none")
    for s in segments:
        if not isinstance(s, Segments):
            raise TypeError(f"concat takes Segments; got {type(s).__name__}")
    n = {s.n_samples for s in segments}
    if len(n) > 1:
        raise ValueError(f"segments must share n_samples to be joined; got {sorted(n)}")
    return Segments([p for s in segments for p in s._parts], n.pop(), capped=any(s.capped for s in segments))

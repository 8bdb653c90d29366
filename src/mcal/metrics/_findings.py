"""The worst segments of several score columns, near-duplicates grouped, followed across every column."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import MAX_OVERLAP, POSITIVE_INT, Instance, validate_params
from mcal._shared.mce import MCEResult
from mcal._validation import check_sample_weight
from mcal.segments import Segments

#: Candidates examined per listed segment before the search for distinct ones stops.
_SCAN_FACTOR = 20

#: Columns of each (segment, score column) row of :func:`worst_segments`, after those naming the segment.
_PER_SCORE = ["mean_prediction", "mean_outcome", "direction", "ecce", "ecce_sigma", "pvalue", "pvalue_adjusted"]


@validate_params({
    "segments": Instance(Segments),
    "n_worst": POSITIVE_INT,
    "max_overlap": MAX_OVERLAP,
})  # fmt: skip
def worst_segments(
    results: Mapping[str, MCEResult],
    segments: Segments,
    *,
    n_worst: int = 10,
    max_overlap: float | None = 0.8,
    sample_weight: ArrayLike | None = None,
) -> pd.DataFrame:
    """The worst segments of each score column, near-duplicates grouped, with every column's numbers for each.

    The first score column's ``n_worst`` worst segments come first, then each later column's worst segments that
    are not listed yet, so that one table shows what a calibrated column fixed and what it broke.

    Parameters
    ----------
    results : mapping of str to MCEResult
        :func:`mcal.metrics.mce` of each score column on the same ``segments``, in the order to follow.
    segments : Segments
        The segments the results were computed on.
    n_worst : int, default=10
        Segments each column adds at most (its worst ones not listed yet).
    max_overlap : float in (0, 1] or None, default=0.8
        Near-duplicate rule: a segment that errs in the same direction as a segment listed before it, and shares
        at least this fraction of the larger one's weight with it (:math:`w(A \\cap B) / \\max(w(A), w(B))`, so
        that each holds most of the other's rows), is not listed but counted in that segment's ``n_similar``: it is
        a parent or a child of a worse segment that differs from it in few rows. A small child of a large
        segment is a finding of its own and stays. None lists every segment, duplicates included.
    sample_weight : array-like of shape (n_samples,), default=None
        The weights the results were computed with, for the overlaps (rows count once when None).

    Returns
    -------
    table : DataFrame
        One row per listed segment and score column, segment by segment in listing order: ``rank`` (from 1),
        ``segment`` (its number), ``description``, ``size`` (rows), ``listed_for`` (the score column whose worst
        segment it is), ``n_similar`` (near-duplicates grouped under it, for that column), ``score`` (the score
        column of the row), then that column's ``mean_prediction``, ``mean_outcome``, ``direction``, ``ecce``,
        ``ecce_sigma``, ``pvalue`` and ``pvalue_adjusted`` (Holm, over all segments), as in
        the ``table`` of :class:`~mcal.metrics.MCEResult`.

    Raises
    ------
    ValueError
        If ``results`` is empty or its tables do not match ``segments``.
    TypeError
        If ``results`` is not a mapping of names to MCEResult.

    Notes
    -----
    At most ``20 * n_worst`` candidates are examined per column; a column whose worst candidates are all
    near-duplicates then lists fewer than ``n_worst``.

    Examples
    --------
    >>> import numpy as np
    >>> from mcal.metrics import mce
    >>> from mcal.segments import from_masks
    >>> y = np.repeat([0, 1], 5); p = np.full(10, 0.5)
    >>> a, b = np.arange(10) < 5, np.arange(10) >= 5
    >>> segs = from_masks(np.column_stack([a, np.arange(10) < 4, b]), names=["a", "a-child", "b"])
    >>> table = worst_segments({"model": mce(y, p, segments=segs)}, segs)
    >>> table[["description", "direction", "n_similar"]].values.tolist()
    [['a', 'over', 1], ['b', 'under', 0]]
    """
    _check(results, segments)
    w = check_sample_weight(sample_weight, segments.n_samples)
    tables = {name: r.table.set_index("segment") for name, r in results.items()}
    listed: list[tuple[int, str, int]] = []
    for name, table in tables.items():
        listed += _distinct(table, segments, w, [k for k, _, _ in listed], n_worst, max_overlap, name)
    rows = [
        {"rank": rank, "segment": k, "description": tables[by].at[k, "description"],
         "size": int(tables[by].at[k, "size"]), "listed_for": by, "n_similar": similar if name == by else 0,
         "score": name, **{c: table.at[k, c] for c in _PER_SCORE}}
        for rank, (k, by, similar) in enumerate(listed, start=1)
        for name, table in tables.items()
    ]  # fmt: skip
    columns = ["rank", "segment", "description", "size", "listed_for", "n_similar", "score", *_PER_SCORE]
    return pd.DataFrame(rows, columns=columns)


def _check(results: object, segments: Segments) -> None:
    if not isinstance(results, Mapping) or not all(isinstance(r, MCEResult) for r in results.values()):
        raise TypeError(f"results must be a mapping of names to MCEResult; got {type(results).__name__}")
    if not results:
        raise ValueError("results must hold at least one score column; got none")
    for name, r in results.items():
        if r.n_segments != segments.n_segments:
            raise ValueError(f"results[{name!r}] must be computed on segments ({segments.n_segments} segments); "
                             f"got {r.n_segments}")  # fmt: skip


def _distinct(
    table: pd.DataFrame,
    segments: Segments,
    w: NDArray[np.float64],
    before: list[int],
    n_worst: int,
    max_overlap: float | None,
    name: str,
) -> list[tuple[int, str, int]]:
    """The worst segments of ``table`` (indexed by segment, worst first) not in ``before`` nor near-duplicates of
    a segment listed before, each with the number of near-duplicates grouped under it."""
    candidates = [k for k in table.index[table["weight"] > 0] if k not in before][: _SCAN_FACTOR * n_worst]
    if max_overlap is None:
        return [(int(k), name, 0) for k in candidates[:n_worst]]
    shown = [int(k) for k in before]
    members = [segments.mask(k) for k in shown]
    chosen: list[list] = []
    for k in candidates:
        mask = segments.mask(int(k))
        weight = w[mask].sum()
        direction = table.at[k, "direction"]
        match = next(
            (j for j, (other, seg) in enumerate(zip(members, shown, strict=True))
             if table.at[seg, "direction"] == direction
             and w[mask & other].sum() >= max_overlap * max(weight, w[other].sum())),
            None,
        )  # fmt: skip
        if match is None:
            if len(chosen) == n_worst:
                break
            shown.append(int(k))
            members.append(mask)
            chosen.append([int(k), name, 0])
        elif match >= len(before):
            chosen[match - len(before)][2] += 1
    return [tuple(c) for c in chosen]

"""Segment figures: each segment's ECCE / sigma against its size, and the reliability curves of the worst."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._optional import import_optional
from mcal._shared.text import plain_text
from mcal._validation import check_positive_int
from mcal.metrics import MCEResult, mce
from mcal.plotting._common import axes_or_new, critical_range
from mcal.plotting._reliability import plot_reliability_diagram
from mcal.segments import Segments


def plot_segment_errors(
    result: Any, *, n_labels: int = 5, numbered: Sequence[int] | None = None, ax: Any = None
) -> Any:
    """Draw each segment's ECCE / sigma against its size, the worst ones numbered.

    Points are numbered rather than labelled with their descriptions, which overlapped each other and the legend:
    the numbers are the key to a table (``result.table``'s order, or the order of ``numbered``).

    Parameters
    ----------
    result : MCEResult
        From :func:`mcal.metrics.mce`.
    n_labels : int, default=5
        Number of worst segments numbered 1 to ``n_labels``, in the order of ``result.table`` (worst first).
    numbered : sequence of int, default=None
        Segment numbers (the ``segment`` column of ``result.table``) to number 1, 2, ... in this order instead,
        e.g. the rows of :func:`mcal.metrics.worst_segments`; ``n_labels`` is then ignored.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure is made when None.

    Returns
    -------
    ax : matplotlib Axes
        Size (rows, log scale) on x, ECCE/sigma on y, with the 5% significance level of one segment
        (2.4977, the Brownian-range quantile) dashed. Segments with zero weight or infinite ECCE/sigma are
        not drawn.

    Raises
    ------
    TypeError
        If ``result`` is not an MCEResult, or ``n_labels`` is not an integer.
    ValueError
        If ``n_labels`` is negative.
    ImportError
        If matplotlib is not installed (``pip install 'mcal[plot]'``).
    """
    if not isinstance(result, MCEResult):
        raise TypeError(f"result must be an MCEResult from mcal.metrics.mce; got {type(result).__name__}")
    check_positive_int("n_labels", n_labels, minimum=0)
    table = result.table[np.isfinite(result.table["ecce_sigma"].to_numpy(dtype=float))]
    ax = axes_or_new(ax)
    ax.scatter(table["size"], table["ecce_sigma"], s=12, alpha=0.6)
    ax.axhline(critical_range(0.05), linestyle="--", color="grey", linewidth=1, label="p = 0.05 for one segment")
    shown = table.head(n_labels) if numbered is None else table.set_index("segment").reindex(list(numbered))
    shown = shown.assign(number=np.arange(1, len(shown) + 1))[np.isfinite(shown["ecce_sigma"].to_numpy(float))]
    ax.scatter(shown["size"], shown["ecce_sigma"], s=28, facecolors="none", edgecolors="black", linewidths=0.8)
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(import_optional("matplotlib.ticker").NullFormatter())  # 2x10^2 ... overlapped
    ax.margins(y=0.12)  # head room for the numbers above the highest points
    ax.autoscale_view()
    offsets = _label_offsets(ax, shown["size"].to_numpy(float), shown["ecce_sigma"].to_numpy(float),
                             [len(str(n)) for n in shown["number"]])  # fmt: skip
    for row, (dx, dy) in zip(shown.itertuples(), offsets, strict=True):
        ax.annotate(str(row.number), (row.size, row.ecce_sigma), fontsize=7, xytext=(dx, dy),
                    textcoords="offset points", arrowprops={"arrowstyle": "-", "linewidth": 0.4, "color": "grey"}
                    if dy > 3 else None)  # fmt: skip
    ax.set_xlabel("segment size (rows)")
    ax.set_ylabel("ECCE / sigma")
    # above the axes, where the numbers, which stay inside them, cannot run under it
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False, borderaxespad=0.2)
    return ax


def _label_offsets(ax: Any, x: NDArray, y: NDArray, n_chars: list[int]) -> list[tuple[float, float]]:
    """Offsets in points of small labels at the points ``(x, y)`` of ``ax``, stacked upwards where they would
    overlap a label placed before them (each label about 4.5 points wide per character and 8 high)."""
    xy = ax.transData.transform(np.column_stack([x, y])) * 72.0 / ax.figure.dpi if len(x) else np.zeros((0, 2))
    placed: list[tuple[float, float, float, float]] = []
    offsets = []
    for (px, py), chars in zip(xy, n_chars, strict=True):
        width, dy = 4.5 * chars + 1.0, 3.0
        while any(
            px + 3 < right and left < px + 3 + width and py + dy < top and bottom < py + dy + 8.0
            for left, bottom, right, top in placed
        ):
            dy += 8.0
        placed.append((px + 3, py + dy, px + 3 + width, py + dy + 8.0))
        offsets.append((3.0, dy))
    return offsets


def plot_worst_segment_curves(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    segments: Any,
    result: Any = None,
    k: int = 3,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 10,
    strategy: str = "quantile",
    ax: Any = None,
) -> Any:
    """Draw the reliability curves of the ``k`` segments with the largest ECCE / sigma.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    segments : Segments
        The segments ``result`` was computed on.
    result : MCEResult, default=None
        From ``mcal.metrics.mce(y_true, y_prob, segments=segments, sample_weight=sample_weight)``; computed when None.
    k : int, default=3
        Number of segments drawn, worst first.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    n_bins : int, default=10
        Bins of each curve.
    strategy : {"uniform", "quantile"}, default="quantile"
        Binning, as in :func:`mcal.metrics.reliability_curve` (quantile bins suit small segments).
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure is made when None.

    Returns
    -------
    ax : matplotlib Axes
        One curve per segment, labelled with its description and ECCE / sigma.

    Raises
    ------
    TypeError
        If ``segments`` is not a Segments, ``result`` not an MCEResult, or ``k`` not an integer.
    ValueError
        On invalid input, ``k < 1``, arrays of another length than the segments, or a ``result`` with another
        number of segments.
    ImportError
        If matplotlib is not installed (``pip install 'mcal[plot]'``).
    """
    if not isinstance(segments, Segments):
        raise TypeError(f"segments must be a Segments; got {type(segments).__name__}")
    check_positive_int("k", k)
    if result is None:
        result = mce(y_true, y_prob, segments=segments, sample_weight=sample_weight)
    elif not isinstance(result, MCEResult):
        raise TypeError(f"result must be an MCEResult from mcal.metrics.mce; got {type(result).__name__}")
    if result.n_segments != segments.n_segments:
        raise ValueError(f"result must come from these {segments.n_segments} segments; got {result.n_segments}")
    y, p = np.asarray(y_true), np.asarray(y_prob)
    w = None if sample_weight is None else np.asarray(sample_weight)
    for name, arr in (("y_true", y), ("y_prob", p), ("sample_weight", w)):
        if arr is not None and arr.shape[0] != segments.n_samples:
            raise ValueError(f"{name} must have {segments.n_samples} rows, as the segments; got {arr.shape[0]}")
    ax = axes_or_new(ax)
    for row in result.table.dropna(subset=["ecce_sigma"]).head(k).itertuples():
        rows = segments.indices(row.segment)
        plot_reliability_diagram(
            y[rows], p[rows], sample_weight=None if w is None else w[rows], n_bins=n_bins, strategy=strategy,
            label=f"{plain_text(row.description)} ({row.ecce_sigma:.1f} sigma)", ax=ax,
        )  # fmt: skip
    return ax

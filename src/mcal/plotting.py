"""Figures for calibration. Numbers come from :mod:`mcal.metrics`; this module only draws.

matplotlib is imported inside each function; no function changes global style (rcParams).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from mcal._optional import import_optional
from mcal.metrics import MCEResult, mce, reliability_curve
from mcal.segments import Segments

#: ECCE / sigma at which one segment's p-value is 0.05 (range of Brownian motion; Arrieta-Ibarra et al. 2022).
_SIGMA_5_PERCENT = 2.4977


def _axes(ax: Any) -> Any:
    if ax is not None:
        return ax
    plt = import_optional("matplotlib.pyplot")
    _, ax = plt.subplots(figsize=(5.5, 5))
    return ax


def plot_reliability_diagram(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
    label: str | None = None,
    ax: Any = None,
) -> Any:
    """Draw a reliability diagram: observed frequency against mean score per bin, with the diagonal.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    n_bins : int, default=10
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Binning, as in :func:`mcal.metrics.reliability_curve`.
    label : str, default=None
        Legend label of the curve.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure is made when None.

    Returns
    -------
    ax : matplotlib Axes

    Raises
    ------
    ValueError
        On invalid input (see :func:`mcal.metrics.reliability_curve`).
    ImportError
        If matplotlib is not installed (``pip install 'mcal[plot]'``).
    """
    curve = reliability_curve(y_true, y_prob, sample_weight=sample_weight, n_bins=n_bins, strategy=strategy)
    ax = _axes(ax)
    keep = ~curve.empty
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1)
    ax.plot(curve.mean_predicted[keep], curve.fraction_positive[keep], marker="o", label=label)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean predicted probability")
    ax.set_ylabel("observed frequency of the positive class")
    if label is not None:
        ax.legend(loc="upper left")
    return ax


def plot_segment_errors(result: Any, *, n_labels: int = 5, ax: Any = None) -> Any:
    """Draw each segment's ECCE / sigma against its size, the worst ones labelled.

    Parameters
    ----------
    result : MCEResult
        From :func:`mcal.metrics.mce`.
    n_labels : int, default=5
        Number of worst segments whose descriptions are written next to their points.
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
        If ``result`` is not an MCEResult.
    ValueError
        If ``n_labels`` is negative.
    ImportError
        If matplotlib is not installed (``pip install 'mcal[plot]'``).
    """
    if not isinstance(result, MCEResult):
        raise TypeError(f"result must be an MCEResult from mcal.metrics.mce; got {type(result).__name__}")
    if isinstance(n_labels, bool) or not isinstance(n_labels, int) or n_labels < 0:
        raise ValueError(f"n_labels must be a non-negative integer; got {n_labels!r}")
    table = result.table[np.isfinite(result.table["ecce_sigma"].to_numpy(dtype=float))]
    ax = _axes(ax)
    ax.scatter(table["size"], table["ecce_sigma"], s=12, alpha=0.6)
    ax.axhline(_SIGMA_5_PERCENT, linestyle="--", color="grey", linewidth=1, label="p = 0.05 for one segment")
    for row in table.head(n_labels).itertuples():
        ax.annotate(row.description, (row.size, row.ecce_sigma), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("segment size (rows)")
    ax.set_ylabel("ECCE / sigma")
    ax.legend(loc="upper right", fontsize=8)
    return ax


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
        If ``segments`` is not a Segments or ``result`` not an MCEResult.
    ValueError
        On invalid input, ``k < 1``, arrays of another length than the segments, or a ``result`` with another
        number of segments.
    ImportError
        If matplotlib is not installed (``pip install 'mcal[plot]'``).
    """
    if not isinstance(segments, Segments):
        raise TypeError(f"segments must be a Segments; got {type(segments).__name__}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer; got {k!r}")
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
    ax = _axes(ax)
    for row in result.table.dropna(subset=["ecce_sigma"]).head(k).itertuples():
        rows = segments.indices(row.segment)
        plot_reliability_diagram(
            y[rows], p[rows], sample_weight=None if w is None else w[rows], n_bins=n_bins, strategy=strategy,
            label=f"{row.description} ({row.ecce_sigma:.1f} sigma)", ax=ax,
        )  # fmt: skip
    return ax

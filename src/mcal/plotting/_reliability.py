"""Binned figures: reliability diagrams (with Wilson intervals and rows per bin) and the score histogram."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from mcal._constraints import check_bins
from mcal._optional import import_optional
from mcal._shared.text import plain_text
from mcal._validation import check_sample_weight, check_y_prob
from mcal.metrics import reliability_curve, reliability_intervals
from mcal.plotting._common import axes_or_new


def plot_reliability_diagram(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
    confidence: float | None = None,
    label: str | None = None,
    ax: Any = None,
    outcome: str = "classification",
) -> Any:
    """Draw a reliability diagram: observed frequency against mean score per bin, with the diagonal.

    With ``outcome="regression"``: mean outcome against mean prediction per bin of real-valued predictions, with
    the diagonal, on axes that fit the points of every curve drawn on them.

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
    confidence : float in (0, 1), default=None
        When given, each bin gets an error bar: the Wilson score interval of its observed frequency at this
        level, from :func:`mcal.metrics.reliability_intervals` (Kish effective size under weights).
    label : str, default=None
        Legend label of the curve.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure is made when None.
    outcome : {"classification", "regression"}, default="classification"
        Binary labels with probabilities, or real outcomes with real-valued predictions (no ``confidence``).

    Returns
    -------
    ax : matplotlib Axes

    Raises
    ------
    ValueError
        On invalid input (see :func:`mcal.metrics.reliability_curve`), a ``confidence`` outside (0, 1), or a
        ``confidence`` with ``outcome="regression"``.
    ImportError
        If matplotlib is not installed (``pip install 'mcal[plot]'``).
    TypeError
        If ``n_bins`` is not an integer, or ``y_true``, ``y_prob`` or ``sample_weight`` is not array-like (None,
        a string, or a scalar weight), or holds complex numbers.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> ax = plot_reliability_diagram([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4], n_bins=2, confidence=0.95, ax=ax)
    >>> len(ax.containers)  # the error bars
    1
    """
    if outcome == "regression":
        if confidence is not None:
            raise ValueError(
                f"confidence must be None for outcome='regression' (Wilson intervals are for binary "
                f"labels); got {confidence!r}"
            )
        curve = reliability_curve(y_true, y_prob, sample_weight=sample_weight, n_bins=n_bins, strategy=strategy,
                                  outcome=outcome)  # fmt: skip
        return _regression_diagram(curve, label, axes_or_new(ax))
    if confidence is None:
        curve, yerr = (
            reliability_curve(y_true, y_prob, sample_weight=sample_weight, n_bins=n_bins, strategy=strategy),
            None,
        )
    else:
        iv = reliability_intervals(
            y_true, y_prob, sample_weight=sample_weight, n_bins=n_bins, strategy=strategy, confidence=confidence
        )
        curve = iv.curve
        # the Wilson interval contains the observed frequency; clip float rounding at the 0 and 1 ends
        yerr = np.vstack((curve.fraction_positive - iv.lower, iv.upper - curve.fraction_positive))[:, ~curve.empty]
        yerr = np.maximum(yerr, 0.0)
    ax = axes_or_new(ax)
    keep = ~curve.empty
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1)
    x, frac = curve.mean_predicted[keep], curve.fraction_positive[keep]
    (line,) = ax.plot(x, frac, marker="o", markersize=4, label=label)
    if yerr is not None:
        ax.errorbar(x, frac, yerr=yerr, fmt="none", ecolor=line.get_color(), capsize=2)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean predicted probability")
    ax.set_ylabel("observed frequency of the positive class")
    if label is not None:
        ax.legend(loc="upper left")
    return ax


def plot_calibration(
    y_true: ArrayLike,
    y_probs: Mapping[str, ArrayLike],
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 10,
    strategy: str = "uniform",
    confidence: float = 0.95,
    axes: tuple[Any, Any] | None = None,
) -> tuple[Any, Any]:
    """Draw every score column on one reliability diagram, with intervals, above the rows in each bin.

    The figure of ``mcal evaluate --plot`` and the demo: each bin's observed frequency with its Wilson interval
    (so that a bin of one row shows a bar from 0 to about 0.8 rather than a trusted point), and beneath, on the
    same horizontal axis, the number of rows in each bin of each column.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_probs : mapping of str to array-like of shape (n_samples,)
        Probabilities in [0, 1] by column name, in legend order.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights (the intervals use the Kish effective size of each bin).
    n_bins : int, default=10
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width or equal-weight bins, as in :func:`mcal.metrics.reliability_curve`.
    confidence : float in (0, 1), default=0.95
        Level of the Wilson intervals (:func:`mcal.metrics.reliability_intervals`).
    axes : (Axes, Axes), default=None
        The reliability axes and the counts axes beneath it; a new figure with both when None.

    Returns
    -------
    axes : (Axes, Axes)
        The reliability diagram and the bar chart of rows per bin.

    Raises
    ------
    ValueError, TypeError
        As :func:`plot_reliability_diagram`; ``y_probs`` empty or not a mapping of names to scores.
    ImportError
        If matplotlib is not installed (``pip install 'mcal[plot]'``).

    Examples
    --------
    >>> top, bottom = plot_calibration([0, 1, 1, 0], {"model": [0.2, 0.7, 0.9, 0.4]}, n_bins=2)
    >>> top.get_ylabel(), bottom.get_ylabel(), [int(p.get_height()) for p in bottom.patches]
    ('observed frequency of the positive class', 'rows per bin', [2, 2])
    """
    if not isinstance(y_probs, Mapping) or not y_probs:
        raise TypeError(f"y_probs must be a non-empty mapping of names to scores; got {type(y_probs).__name__}")
    if axes is None:
        fig = import_optional("matplotlib.figure").Figure(figsize=(6, 7))
        grid = fig.add_gridspec(2, 1, height_ratios=(3, 1), hspace=0.08)
        axes = (fig.add_subplot(grid[0]), fig.add_subplot(grid[1]))
    top, bottom = axes
    width = 0.8 / len(y_probs)
    for k, (name, p) in enumerate(y_probs.items()):
        first = len(top.lines) + 1  # the diagonal, then this column's curve
        plot_reliability_diagram(y_true, p, sample_weight=sample_weight, n_bins=n_bins, strategy=strategy,
                                 confidence=confidence, label=plain_text(name), ax=top)  # fmt: skip
        curve = reliability_curve(y_true, p, sample_weight=sample_weight, n_bins=n_bins, strategy=strategy)
        centres = (curve.bin_edges[:-1] + curve.bin_edges[1:]) / 2
        spans = np.diff(curve.bin_edges)
        bottom.bar(centres - spans / 2 + spans * (0.1 + width * (k + 0.5)), curve.count, width=spans * width,
                   color=top.lines[first].get_color(), alpha=0.8)  # fmt: skip
    top.set_xlabel("")
    top.tick_params(labelbottom=False)
    # the note goes in the legend, not a title, so that it never meets a caller's panel title or the panel above
    top.legend(loc="upper left", fontsize=7, title=f"bars: {confidence:.0%} Wilson intervals", title_fontsize=7)
    bottom.set_xlim(0, 1)
    bottom.set_xlabel("mean predicted probability (bins of the score)")
    bottom.set_ylabel("rows per bin")
    return top, bottom


def _regression_diagram(curve: Any, label: str | None, ax: Any) -> Any:
    """Mean outcome against mean prediction per bin, the diagonal across the range of every point on ``ax``."""
    keep = ~curve.empty
    x, y = curve.mean_predicted[keep], curve.mean_outcome[keep]
    ax.plot(x, y, marker="o", markersize=4, label=label)
    points = np.concatenate([np.concatenate([line.get_xdata(), line.get_ydata()]) for line in ax.get_lines()])
    low, high = float(np.min(points)), float(np.max(points))
    for line in [line for line in ax.get_lines() if line.get_gid() == "diagonal"]:
        line.remove()
    ax.plot([low, high], [low, high], linestyle="--", color="grey", linewidth=1, gid="diagonal")
    ax.set_xlabel("mean prediction")
    ax.set_ylabel("mean outcome")
    if label is not None:
        ax.legend(loc="upper left")
    return ax


def plot_score_histogram(
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 50,
    label: str | None = None,
    ax: Any = None,
) -> Any:
    """Draw the distribution of the scores: the share of the total weight in each of ``n_bins`` equal-width bins.

    Drawn from the bin totals (never from the raw points), so the figure's size does not grow with the data.
    Placed under a reliability diagram with a shared horizontal axis, it shows where the bins' evidence lies.

    Parameters
    ----------
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    n_bins : int, default=50
        Number of equal-width bins on [0, 1].
    label : str, default=None
        Legend label.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure is made when None.

    Returns
    -------
    ax : matplotlib Axes

    Raises
    ------
    ValueError
        On invalid scores or weights, or ``n_bins`` not a positive integer.
    ImportError
        If matplotlib is not installed.
    TypeError
        If ``n_bins`` is not an integer, or ``y_prob`` or ``sample_weight`` is not array-like (None, a string, or a
        scalar weight), or holds complex numbers.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = plot_score_histogram([0.1, 0.15, 0.8], n_bins=4, ax=Figure().add_subplot())
    >>> [round(h, 3) for h in ax.patches[0].get_data().values.tolist()]
    [0.667, 0.0, 0.0, 0.333]
    """
    check_bins(n_bins, "uniform")
    p = check_y_prob(y_prob)
    w = check_sample_weight(sample_weight, p.shape[0])
    counts, edges = np.histogram(p, bins=n_bins, range=(0.0, 1.0), weights=w)
    ax = axes_or_new(ax)
    ax.stairs(counts / w.sum(), edges, fill=True, alpha=0.6, label=label)
    ax.set_xlim(0, 1)
    ax.set_xlabel("predicted probability")
    ax.set_ylabel("share of weight")
    if label is not None:
        ax.legend(loc="upper right")
    return ax

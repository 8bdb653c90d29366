"""Figures for calibration. Numbers come from :mod:`mcal.metrics`; this module only draws.

matplotlib is imported inside each function; no function changes global style (rcParams).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._optional import import_optional
from mcal._validation import check_positive_int, check_sample_weight, check_y_prob
from mcal.metrics import MCEResult, cumulative_curve, ecce_pvalue, mce, reliability_curve, reliability_intervals
from mcal.metrics.helpers import brownian_range_sf, check_bins, check_open_unit
from mcal.segments import Segments


def plain_text(text: object) -> str:
    """A label that matplotlib draws as written: ``text`` with its dollar signs escaped.

    Matplotlib parses text between dollar signs as mathtext: a segment ``price=$5 to $10`` drew as math, and
    ``$\\frac{x$`` raised a ParseSyntaxException.

    Parameters
    ----------
    text : object
        The label; its ``str``.

    Returns
    -------
    label : str
        ``str(text)`` with every ``$`` escaped.
    """
    return str(text).replace("$", r"\$")


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
        return _regression_diagram(curve, label, _axes(ax))
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
    ax = _axes(ax)
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
    top.set_title(f"bars: {confidence:.0%} Wilson intervals", fontsize=8, loc="right")
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
    ax = _axes(ax)
    ax.stairs(counts / w.sum(), edges, fill=True, alpha=0.6, label=label)
    ax.set_xlim(0, 1)
    ax.set_xlabel("predicted probability")
    ax.set_ylabel("share of weight")
    if label is not None:
        ax.legend(loc="upper right")
    return ax


def plot_cumulative_differences(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    alpha: float = 0.05,
    max_points: int = 2000,
    label: str | None = None,
    ax: Any = None,
    outcome: str = "classification",
) -> Any:
    """Draw the cumulative differences between labels and scores in score order: the plot behind ECCE.

    The horizontal axis is the cumulative share of the weight in score order (scores on the top axis), the vertical
    axis the walk :math:`C_k` of :func:`mcal.metrics.cumulative_curve`; ECCE is its range (max minus min).
    A steady slope over a stretch of scores is miscalibration there: upward where outcomes exceed the scores,
    downward where they fall short, the slope being the size of the gap. A vertical bar at the origin shows the
    range that ECCE must exceed to be significant at level ``alpha`` (:math:`x_\\alpha\\sigma` with
    :math:`P(R > x_\\alpha) = \\alpha` for the range R of standard Brownian motion; 2.4977 sigma at 0.05).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels (real outcomes for ``outcome="regression"``).
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1] (real-valued predictions for ``outcome="regression"``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    alpha : float, default=0.05
        Significance level of the scale bar.
    max_points : int, default=2000
        Most points drawn (see :func:`mcal.metrics.cumulative_curve`); the drawn range is ECCE exactly.
    label : str, default=None
        Legend label; ECCE/sigma and the p-value are appended.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure is made when None.
    outcome : {"classification", "regression"}, default="classification"
        As in :func:`mcal.metrics.ecce`: real outcomes and predictions, the walk in the outcome's units and
        sigma from successive differences of the residuals (:func:`mcal.metrics.ecce_std`).

    Returns
    -------
    ax : matplotlib Axes

    Raises
    ------
    ValueError
        On invalid input, an unknown ``outcome``, or ``alpha`` outside (0, 1).
    ImportError
        If matplotlib is not installed.
    TypeError
        If ``y_true``, ``y_prob`` or ``sample_weight`` is not array-like (None, a string, or a scalar weight), or
        holds complex numbers.

    References
    ----------
    .. [1] Arrieta-Ibarra, Gujral, Tannen, Tygert, Xu, "Metrics of calibration for probabilistic predictions",
       JMLR 23(351), 2022 (the cumulative plots and ECCE); Tax et al., MCGrad, arXiv 2509.19884, eq. 1.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = plot_cumulative_differences([0, 1, 0, 1], [0.1, 0.3, 0.6, 0.9], ax=Figure().add_subplot())
    >>> np.round(ax.lines[1].get_ydata(), 3).tolist()  # lines[0] is the zero line
    [0.0, -0.025, 0.15, 0.0, 0.025]
    """
    check_open_unit(alpha, "alpha")
    curve = cumulative_curve(y_true, y_prob, sample_weight=sample_weight, max_points=max_points, outcome=outcome)
    pvalue = ecce_pvalue(y_true, y_prob, sample_weight=sample_weight, outcome=outcome)
    ecce_value = float(curve.difference.max() - curve.difference.min())
    scale = ecce_value / curve.sigma if curve.sigma > 0 else float("nan")
    text = f"ECCE/σ = {scale:.2f}, p = {pvalue:.2g}"
    ax = _axes(ax)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.plot(curve.fraction, curve.difference, linewidth=1.2, label=text if label is None else f"{label}: {text}")
    bar = _critical_range(alpha) * curve.sigma
    ax.plot(
        [0, 0],
        [-bar / 2, bar / 2],
        color="black",
        linewidth=3,
        solid_capstyle="butt",
        label=f"significant range at {alpha:g}",
    )
    ax.set_xlim(0, 1)
    score, label_name = ("prediction", "outcome") if outcome == "regression" else ("score", "label")
    ax.set_xlabel(f"cumulative share of weight, in {score} order")
    ax.set_ylabel(f"cumulative difference ({label_name} - {score})")
    ticks = np.linspace(0.0, 1.0, 6)
    top = ax.secondary_xaxis("top")
    top.set_xticks(ticks, [f"{s:.2g}" for s in np.interp(ticks, curve.fraction, curve.score)])
    top.set_xlabel(score)
    ax.legend(loc="best", fontsize="small")
    return ax


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
    ax = _axes(ax)
    ax.scatter(table["size"], table["ecce_sigma"], s=12, alpha=0.6)
    ax.axhline(_critical_range(0.05), linestyle="--", color="grey", linewidth=1, label="p = 0.05 for one segment")
    shown = table.head(n_labels) if numbered is None else table.set_index("segment").reindex(list(numbered))
    shown = shown.assign(number=np.arange(1, len(shown) + 1))[np.isfinite(shown["ecce_sigma"].to_numpy(float))]
    ax.scatter(shown["size"], shown["ecce_sigma"], s=28, facecolors="none", edgecolors="black", linewidths=0.8)
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(import_optional("matplotlib.ticker").NullFormatter())  # 2x10^2 ... overlapped
    ax.autoscale_view()
    offsets = _label_offsets(ax, shown["size"].to_numpy(float), shown["ecce_sigma"].to_numpy(float),
                             [len(str(n)) for n in shown["number"]])  # fmt: skip
    for row, (dx, dy) in zip(shown.itertuples(), offsets, strict=True):
        ax.annotate(str(row.number), (row.size, row.ecce_sigma), fontsize=7, xytext=(dx, dy),
                    textcoords="offset points", arrowprops={"arrowstyle": "-", "linewidth": 0.4, "color": "grey"}
                    if dy > 3 else None)  # fmt: skip
    ax.set_xlabel("segment size (rows)")
    ax.set_ylabel("ECCE / sigma")
    ax.legend(loc="lower right", fontsize=8, framealpha=0.8)
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
    ax = _axes(ax)
    for row in result.table.dropna(subset=["ecce_sigma"]).head(k).itertuples():
        rows = segments.indices(row.segment)
        plot_reliability_diagram(
            y[rows], p[rows], sample_weight=None if w is None else w[rows], n_bins=n_bins, strategy=strategy,
            label=f"{plain_text(row.description)} ({row.ecce_sigma:.1f} sigma)", ax=ax,
        )  # fmt: skip
    return ax


def _critical_range(alpha: float) -> float:
    """x with P(R > x) = alpha for the range R of standard Brownian motion on [0, 1]."""
    from scipy.optimize import brentq

    return float(brentq(lambda x: brownian_range_sf(x)[0] - alpha, 0.3, 20.0, xtol=1e-10))


def plot_learning_curve(model: Any, *, ax: Any = None) -> Any:
    """Draw a fitted MCGrad's validation log loss after each round, and its early-stopping metric when it differs.

    Round 0 is the input scores; a dashed vertical line marks the rounds kept (``n_rounds_``). The metric of
    ``early_stopping_metric`` other than the log loss goes on a second y axis (``ax.twinx()``), in orange.

    Parameters
    ----------
    model : MCGrad
        Fitted with validation (early stopping, or an ``eval_set``): it has ``validation_losses_``,
        ``validation_scores_`` and ``n_rounds_``.
    ax : matplotlib Axes, default=None
        Axes to draw on; a new figure is made when None.

    Returns
    -------
    ax : matplotlib Axes
        The axes of the log loss.

    Raises
    ------
    ValueError
        If ``model`` has no validation values (fitted with ``early_stopping=None`` and no ``eval_set``, or
        ``max_rounds=0``), or is not fitted.
    """
    losses = np.asarray(getattr(model, "validation_losses_", np.zeros(0)))
    if losses.size == 0:
        raise ValueError(
            "model must be a fitted MCGrad with validation values (early stopping or an eval_set); got "
            f"{type(model).__name__} with {'none' if hasattr(model, 'validation_losses_') else 'no fit'}"
        )
    scores = np.asarray(getattr(model, "validation_scores_", losses))
    ax = _axes(ax)
    rounds = np.arange(losses.size)
    ax.plot(rounds, losses, marker="o", label="validation log loss")
    ax.axvline(model.n_rounds_, color="grey", linestyle="--", label=f"rounds kept ({model.n_rounds_})")
    ax.set_xlabel("round")
    ax.set_ylabel("validation log loss")
    if not np.array_equal(scores, losses):
        metric = getattr(model, "early_stopping_metric", "metric")
        name = metric if isinstance(metric, str) else getattr(metric, "__name__", "metric")
        twin = ax.twinx()
        twin.plot(rounds, scores, marker="s", color="tab:orange", label=f"validation {name}")
        twin.set_ylabel(plain_text(f"validation {name}"))
        twin.legend(loc="upper center")
    ax.legend(loc="upper right")
    return ax

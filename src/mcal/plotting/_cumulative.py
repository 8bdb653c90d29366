"""The plot of cumulative differences between outcomes and scores in score order, behind ECCE."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from mcal._constraints import check_open_unit
from mcal.metrics import cumulative_curve, ecce_pvalue
from mcal.plotting._common import axes_or_new, critical_range


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
    # ecce_pvalue is 0.0 below 1e-15, its precision: "p < 1e-15" then, never "p = 0"
    text = f"ECCE/σ = {scale:.2f}, " + ("p < 1e-15" if pvalue == 0 else f"p = {pvalue:.2g}")
    ax = axes_or_new(ax)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.plot(curve.fraction, curve.difference, linewidth=1.2, label=text if label is None else f"{label}: {text}")
    bar = critical_range(alpha) * curve.sigma
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

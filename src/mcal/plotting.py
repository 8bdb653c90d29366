"""Figures for calibration. Numbers come from :mod:`mcal.metrics`; this module only draws.

matplotlib is imported inside each function; no function changes global style (rcParams).
"""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from mcal._optional import import_optional
from mcal.metrics import reliability_curve


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

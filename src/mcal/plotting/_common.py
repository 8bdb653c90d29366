"""What every figure of :mod:`mcal.plotting` shares: labels drawn as written, the axes to draw on, and the
significance level of a range of cumulative differences."""

from __future__ import annotations

from typing import Any

from mcal._optional import import_optional
from mcal._shared.brownian import brownian_range_sf


def axes_or_new(ax: Any) -> Any:
    """``ax``, or the axes of a new figure when None."""
    if ax is not None:
        return ax
    plt = import_optional("matplotlib.pyplot")
    _, ax = plt.subplots(figsize=(5.5, 5))
    return ax


def critical_range(alpha: float) -> float:
    """x with P(R > x) = alpha for the range R of standard Brownian motion on [0, 1]."""
    from scipy.optimize import brentq

    return float(brentq(lambda x: brownian_range_sf(x)[0] - alpha, 0.3, 20.0, xtol=1e-10))

"""The distribution of the range of standard Brownian motion, behind every p-value of ECCE and MCE, and the scale
of ECCE in sigmas (Arrieta-Ibarra et al., JMLR 23(351), 2022; Guy et al., arXiv 2506.11251, 2025)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: p-values of the Brownian range below this are not resolvable in float64: computed as 0.0, printed as "< 1e-15".
PVALUE_FLOOR = 1e-15


#: From this range on the tail is below the floor (it already is from x = 9), so it is 0.0 without the series,
#: whose number of terms grows with x (a segment with ECCE/sigma of 1e8 asked for 1.25 TiB).
_SERIES_MAX = 20.0


def brownian_range_sf(x: ArrayLike) -> NDArray[np.float64]:
    """Survival function P(R > x) of the range R of standard Brownian motion on [0, 1].

    Uses the series (Feller 1951) ``P(R <= x) = sum_{k>=0} [8/x^2 + 2/((k+1/2)^2 pi^2)] exp(-2 (k+1/2)^2 pi^2 / x^2)``;
    values below 1e-15 are returned as 0.0. ``x = 2.4977`` gives 0.05 and ``x = 4.7081`` gives 1e-5.
    """
    x = np.atleast_1d(np.asarray(x, dtype=np.float64))
    out = np.ones_like(x)
    out[x >= _SERIES_MAX] = 0.0
    pos = (x > 0) & (x < _SERIES_MAX)
    xs = x[pos][:, None]
    n_terms = int(max(50, np.ceil(4 * xs.max()))) if xs.size else 1
    k = np.arange(n_terms)[None, :] + 0.5
    cdf = np.sum((8.0 / xs**2 + 2.0 / (k**2 * np.pi**2)) * np.exp(-2.0 * k**2 * np.pi**2 / xs**2), axis=1)
    sf = 1.0 - cdf
    out[pos] = np.where(sf < PVALUE_FLOOR, 0.0, np.clip(sf, 0.0, 1.0))
    return out


def sigma_scale(stat: float, sigma: float) -> float:
    """``stat / sigma``, and for ``sigma == 0`` (every score 0 or 1) 0.0 when ``stat`` is 0 and ``inf`` otherwise,
    the limits that :func:`mcal.metrics.ecce_pvalue` (1.0 and 0.0) and the MCE table use."""
    if sigma > 0:
        return stat / sigma
    return float("inf") if stat > 0 else 0.0


#: The warning of :func:`mcal.metrics.ecce_sigma` in mcal 0.2 (``mcal.dask.metrics.ecce_sigma`` gives it too).
ECCE_SIGMA_CHANGED = (
    "ecce_sigma returns ECCE / sigma (ECCE in units of sigma) since mcal 0.2, as mcgrad.metrics.ecce_sigma and "
    "the ecce_sigma column of mce's table do; it returned sigma before, which is now ecce_std. This warning goes "
    "in mcal 0.3."
)

"""The result of the multicalibration error (:class:`MCEResult`) and its making from per-segment ECCE, sigma and
weight, however computed: by :func:`mcal.metrics.mce` on one machine, by ``mcal.dask.metrics.mce`` on a cluster.

Guy, Haimovich, Linder, Okati, Perini, Tax, Tygert, "Measuring multi-calibration", arXiv 2506.11251, 2025;
MCGrad paper (Tax et al., arXiv 2509.19884), section 2, eq. 2 and Appendix A.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import N_WORST, TEXT_WIDTH, validate_params
from mcal._shared.brownian import PVALUE_FLOOR, brownian_range_sf
from mcal._shared.text import pvalue_text, segments_text

if TYPE_CHECKING:
    from mcal.segments import Segments

#: The minimum detectable error is this many global sigmas (Guy et al. 2025; ``mcgrad`` ``mde``).
_MDE_SIGMAS = 5.0


_TABLE_COLUMNS = ["segment", "description", "size", "weight", "mean_prediction", "mean_outcome", "direction", "ecce",
                  "sigma", "ecce_sigma", "pvalue", "pvalue_adjusted"]  # fmt: skip


@dataclass(frozen=True, eq=False)
class MCEResult:
    """Multicalibration error with its scales, significance and the per-segment table.

    The MCE of Guy et al. (2025, arXiv 2506.11251) as the MCGrad paper (Tax et al. 2025) defines it in section 2,
    eq. 2; see :func:`mce`.

    Attributes
    ----------
    mce_sigma : float
        :math:`\\max_k \\mathrm{ECCE}_k / \\sigma_k`, the strongest evidence of miscalibration over the segments
        (MCGrad paper eq. 2; ``inf`` when a segment has ECCE > 0 and sigma 0).
    mce_absolute : float
        ``mce_sigma * sigma``, rescaled to probability units with the global sigma (MCGrad paper section 2).
        This is not the largest absolute ECCE of a segment; that one is in ``table``.
    mce_relative : float
        ``mce_absolute / minority_prevalence``, a fraction (``mcgrad`` reports it in percent); NaN for regression.
    pvalue : float
        Brownian-range tail probability of ``mce_sigma`` (not adjusted for multiple testing; 0.0 below 1e-15).
    pvalue_adjusted : float
        ``pvalue`` adjusted for the number of segments tested (Holm 1979, which for the smallest p-value is
        Bonferroni's ``min(1, m * pvalue)``; ``m`` the segments of positive weight).
    mde : float
        Minimum detectable error, ``5 * sigma``, in probability units.
    mde_relative : float
        ``mde / minority_prevalence``.
    global_ecce : float
        ECCE of the whole table, in probability units.
    global_ecce_sigma : float
        ``global_ecce / sigma``.
    sigma : float
        Global scale :math:`\\sqrt{\\sum_i w_i^2 p_i (1 - p_i)} / W`.
    minority_prevalence : float
        Weighted rate of the rarer class, :math:`\\min(\\pi, 1 - \\pi)`, as in the reference implementation.
    n_segments : int
        Number of segments evaluated.
    capped : bool
        Whether the cap of generated segments applied.
    table : DataFrame of shape (n_segments, 12)
        One row per segment, worst first (by ``ecce_sigma``, then segment number): ``segment`` (its number in
        the :class:`~mcal.segments.Segments`), ``description``, ``size`` (rows), ``weight`` (total sample weight),
        ``mean_prediction`` and ``mean_outcome`` (weighted means over the segment; the observed rate for binary
        labels), ``direction`` (``"over"`` where the mean prediction exceeds the mean outcome, ``"under"`` where
        it falls short, ``""`` where they are equal or unknown), ``ecce`` (probability units), ``sigma``,
        ``ecce_sigma``, ``pvalue`` and ``pvalue_adjusted`` (Holm's step-down adjustment over the segments of
        positive weight, which holds the family-wise error rate under any dependence between the overlapping
        segments). Segments of zero weight have NaN statistics and come last.
    """

    mce_sigma: float
    mce_absolute: float
    mce_relative: float
    pvalue: float
    pvalue_adjusted: float
    mde: float
    mde_relative: float
    global_ecce: float
    global_ecce_sigma: float
    sigma: float
    minority_prevalence: float
    n_segments: int
    capped: bool
    table: pd.DataFrame

    @property
    def worst_segment(self) -> str:
        """Description of the segment attaining ``mce_sigma``."""
        return str(self.table["description"].iloc[0])

    @validate_params({"n_worst": N_WORST, "width": TEXT_WIDTH})
    def summary(self, n_worst: int = 10, width: int = 100) -> str:
        """The MCE with its p-values, then the worst segments by description, as text.

        Parameters
        ----------
        n_worst : int >= 0, default=10
            Segments listed, worst first (0: the MCE line alone).
        width : int >= 1, default=100
            Characters per line: a description longer than the room the numbers leave takes more lines.

        Returns
        -------
        text : str
            A line with the MCE (in sigmas, with its p-value, Holm-adjusted over the segments of positive
            weight, and in probability units), then a table of the worst segments: description, rows, mean
            prediction ("predicted"), mean outcome ("observed"), error direction ("over" where the prediction
            exceeds the outcome), ECCE / sigma and Holm-adjusted p-value.

        Examples
        --------
        >>> from mcal.metrics import mce
        >>> from mcal.segments import from_labels
        >>> res = mce([0, 1, 1, 0, 1, 0], [0.2, 0.4, 0.9, 0.1, 0.5, 0.6], segments=from_labels(list("aabbab")))
        >>> print(res.summary())  # doctest: +NORMALIZE_WHITESPACE
        MCE 1.36 sigma (p = 0.639, Holm-adjusted p = 1) over 2 segments; 0.235 in probability units
        segment  rows predicted observed error ECCE/σ p (Holm)
        group=a     3    0.3667   0.6667 under   1.36        1
        group=b     3    0.5333   0.3333  over   1.08        1
        """
        tested = int(self.table["pvalue"].notna().sum())
        head = (f"MCE {self.mce_sigma:.3g} sigma (p {_equals(pvalue_text(self.pvalue))}, Holm-adjusted p "
                f"{_equals(pvalue_text(self.pvalue_adjusted, min(1.0, tested * PVALUE_FLOOR)))}) over {self.n_segments:,} "
                f"segments{' (capped)' if self.capped else ''}; {self.mce_absolute:.3g} in probability units")  # fmt: skip
        head = textwrap.fill(head, width)
        return head if n_worst == 0 else head + "\n" + segments_text(self.table, n_worst, width)

    def __str__(self) -> str:
        return self.summary()


def _equals(text: str) -> str:
    return text if text.startswith("<") else f"= {text}"


def sigma_scales(ecce: NDArray[np.float64], sigma: NDArray[np.float64]) -> NDArray[np.float64]:
    """``ecce / sigma`` elementwise; where sigma is 0, 0.0 if ECCE is 0 and ``inf`` otherwise; NaN where ECCE is."""
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(sigma > 0, ecce / sigma, np.where(ecce > 0, np.inf, 0.0))
    return np.where(np.isnan(ecce), np.nan, scaled)


def largest_sigma_scale(ecce: NDArray[np.float64], sigma: NDArray[np.float64]) -> float:
    """The MCE in sigmas of per-segment ECCE and sigma (NaN for empty segments): NaN when every segment is."""
    scaled = sigma_scales(ecce, sigma)
    return float(np.nanmax(scaled)) if not np.isnan(scaled).all() else float("nan")


def _pvalues(ecce_sigma: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.full(ecce_sigma.shape, np.nan)
    finite = np.isfinite(ecce_sigma)
    out[finite] = brownian_range_sf(ecce_sigma[finite])
    out[np.isposinf(ecce_sigma)] = 0.0
    return out


def holm(pvalues: ArrayLike) -> NDArray[np.float64]:
    """Holm's step-down adjustment of p-values for multiple testing; NaN entries are not tests and stay NaN.

    Parameters
    ----------
    pvalues : array-like of shape (n_tests,)
        Unadjusted p-values in [0, 1], NaN for no test.

    Returns
    -------
    adjusted : ndarray of shape (n_tests,)
        :math:`\\tilde p_{(i)} = \\max_{j \\le i} \\min(1, (m - j + 1) p_{(j)})` with :math:`p_{(1)} \\le \\dots
        \\le p_{(m)}` the ``m`` non-NaN p-values in order: each is at least its own p-value, and rejecting where
        it is below :math:`\\alpha` keeps the family-wise error rate at :math:`\\alpha` whatever the dependence.

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6(2), 1979.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, float("nan")]).round(4).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    tested = np.flatnonzero(~np.isnan(p))
    order = tested[np.argsort(p[tested], kind="stable")]
    factors = np.arange(order.size, 0, -1, dtype=np.float64)
    out[order] = np.maximum.accumulate(np.minimum(1.0, factors * p[order]))
    return out


def mce_result(
    ecce: NDArray[np.float64], sigma: NDArray[np.float64], weight: NDArray[np.float64], global_ecce: float, *,
    segments: Segments, sizes: NDArray[np.int64], global_sigma: float, rate: float,
    means: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> MCEResult:  # fmt: skip
    """The :class:`~mcal.metrics.MCEResult` of per-segment ECCE, sigma and weight (NaN for empty segments), however computed.

    ``segments`` gives the descriptions and the cap, ``sizes`` the rows per segment, ``rate`` the weighted
    positive rate, ``means`` the weighted mean prediction and mean outcome of each segment. Shared by :func:`~mcal.metrics.mce`
    and ``mcal.dask.metrics.mce``.

    Raises
    ------
    ValueError
        If no segment has positive weight.
    """
    segs = segments
    ecce_sigma = sigma_scales(ecce, sigma)
    if np.isnan(ecce_sigma).all():
        raise ValueError("segments must include one with positive total sample weight; got none")
    pvalues = _pvalues(ecce_sigma)
    adjusted = holm(pvalues)
    mean_prediction, mean_outcome = means
    direction = np.select([mean_prediction > mean_outcome, mean_prediction < mean_outcome], ["over", "under"], "")
    table = pd.DataFrame(
        {
            "segment": np.arange(segs.n_segments),
            "description": segs.descriptions,
            "size": sizes,
            "weight": weight,
            "mean_prediction": mean_prediction,
            "mean_outcome": mean_outcome,
            "direction": direction,
            "ecce": ecce,
            "sigma": sigma,
            "ecce_sigma": ecce_sigma,
            "pvalue": pvalues,
            "pvalue_adjusted": adjusted,
        },
        columns=_TABLE_COLUMNS,
    )
    order = np.lexsort((table["segment"].to_numpy(), -np.nan_to_num(ecce_sigma, nan=-np.inf)))
    table = table.iloc[order].reset_index(drop=True)
    mce_sigma = float(table["ecce_sigma"].iloc[0])
    minority = min(rate, 1.0 - rate)
    with np.errstate(divide="ignore", invalid="ignore"):
        mce_absolute = mce_sigma * global_sigma
        relative = np.divide([mce_absolute, _MDE_SIGMAS * global_sigma], minority)
    return MCEResult(
        mce_sigma=mce_sigma,
        mce_absolute=float(mce_absolute),
        mce_relative=float(relative[0]),
        pvalue=float(table["pvalue"].iloc[0]),
        pvalue_adjusted=float(table["pvalue_adjusted"].iloc[0]),
        mde=_MDE_SIGMAS * global_sigma,
        mde_relative=float(relative[1]),
        global_ecce=global_ecce,
        global_ecce_sigma=float(sigma_scales(np.array([global_ecce]), np.array([global_sigma]))[0]),
        sigma=global_sigma,
        minority_prevalence=minority,
        n_segments=segs.n_segments,
        capped=segs.capped,
        table=table,
    )

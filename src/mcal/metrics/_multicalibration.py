"""Multicalibration error (MCE): the largest sigma-scaled ECCE over segments.

Guy, Haimovich, Linder, Okati, Perini, Tax, Tygert, "Measuring multi-calibration", arXiv 2506.11251, 2025;
MCGrad paper (Tax et al., arXiv 2509.19884), section 2, eq. 2 and Appendix A.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import OUTCOME, validate_params
from mcal._validation import check_metric_inputs
from mcal.metrics._cumulative import brownian_range_sf, outcome_sigma
from mcal.metrics._regression import successive_difference_sigmas
from mcal.segments import Segments, from_masks, generate_segments

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

    def summary(self, n_worst: int = 10, width: int = 100) -> str:
        """The MCE with its p-values, then the worst segments by description, as text.

        Parameters
        ----------
        n_worst : int, default=10
            Segments listed, worst first.
        width : int, default=100
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
        >>> from mcal.segments import from_labels
        >>> res = mce([0, 1, 1, 0, 1, 0], [0.2, 0.4, 0.9, 0.1, 0.5, 0.6], segments=from_labels(list("aabbab")))
        >>> print(res.summary())  # doctest: +NORMALIZE_WHITESPACE
        MCE 1.36 sigma (p = 0.639, Holm-adjusted p = 1) over 2 segments; 0.235 in probability units
        segment  rows predicted observed error ECCE/σ p (Holm)
        group=a     3    0.3667   0.6667 under   1.36        1
        group=b     3    0.5333   0.3333  over   1.08        1
        """
        from mcal.metrics._text import pvalue_text, segments_text

        tested = int(self.table["pvalue"].notna().sum())
        head = (f"MCE {self.mce_sigma:.3g} sigma (p {_equals(pvalue_text(self.pvalue))}, Holm-adjusted p "
                f"{_equals(pvalue_text(self.pvalue_adjusted, min(1.0, tested * 1e-15)))}) over {self.n_segments:,} "
                f"segments{' (capped)' if self.capped else ''}; {self.mce_absolute:.3g} in probability units")  # fmt: skip
        return textwrap.fill(head, width) + "\n" + segments_text(self.table, n_worst, width)

    def __str__(self) -> str:
        return self.summary()


def _equals(text: str) -> str:
    return text if text.startswith("<") else f"= {text}"


def walk_ranges(
    residuals: NDArray[np.float64],
    scores: NDArray[np.float64] | None,
    positions: NDArray[np.intp] | None,
    starts: NDArray[np.intp],
    workspace: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Range of the unnormalised cumulative walk of every group, vectorised over groups.

    Takes the arguments of :func:`walk_extremes` and returns, for each group, ``max(0, top) - min(0, bottom)``
    of its extremes: :math:`\\max(0, \\max_k S_k) - \\min(0, \\min_k S_k)` with :math:`S_k` the partial sums of
    the residuals of the group; divided by the group's weight this is its ECCE.
    """
    top, bottom = walk_extremes(residuals, scores, positions, starts, workspace)
    return np.maximum(top, 0.0) - np.minimum(bottom, 0.0)


def walk_extremes(
    residuals: NDArray[np.float64],
    scores: NDArray[Any] | None,
    positions: NDArray[np.intp] | None,
    starts: NDArray[np.intp],
    workspace: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Largest and smallest partial sum of the residuals of every group, vectorised over groups.

    The partial sums of consecutive blocks of rows can be joined: the extremes of the concatenation are those
    of each block shifted by the sum of the blocks before it (``mcal.dask`` joins score-sorted partitions so).

    Parameters
    ----------
    residuals : ndarray of shape (n_samples,)
        ``w_i (y_i - p_i)`` with the rows sorted by score.
    scores : ndarray of shape (n_samples,) or None
        The sorted scores, when they have ties (the walk is then read at the end of each tie block within a
        group, as :func:`mcal.metrics.ecce` reads it); None when all are distinct; or the boolean positions to
        read, ``tie_block_ends`` of the scores, computed once for repeated walks.
    positions : ndarray of shape (n_positions,) or None
        Rows (indices into the sorted arrays) grouped so that each group is contiguous and in score order;
        None for all rows in order.
    starts : ndarray of shape (n_groups,)
        Start of each group in ``positions``; groups are nonempty and run to the next start.
    workspace : ndarray of shape (>= n_positions,), default=None
        Scratch memory reused across calls (saves allocating and faulting in a large array per call).

    Returns
    -------
    top, bottom : ndarray of shape (n_groups,)
        :math:`\\max_k S_k` and :math:`\\min_k S_k` over the tie-block ends of the group, with :math:`S_k` the
        partial sums of its residuals from its first row.
    """
    size = residuals.size if positions is None else positions.size
    walk = workspace[:size] if workspace is not None and workspace.size >= size else np.empty(size)
    if positions is None:
        np.cumsum(residuals, out=walk)
    else:
        np.take(residuals, positions, out=walk)
        np.cumsum(walk, out=walk)
    base = np.where(starts > 0, walk[np.maximum(starts - 1, 0)], 0.0)
    read = scores if scores is None or scores.dtype == bool else tie_block_ends(scores, positions, starts)
    if read is not None:  # the walk at the read positions only; every group has one (its last)
        at = np.flatnonzero(read)
        walk, starts = walk[at], np.searchsorted(at, starts)
    return np.maximum.reduceat(walk, starts) - base, np.minimum.reduceat(walk, starts) - base


def tie_block_ends(
    scores: NDArray[np.float64], positions: NDArray[np.intp] | None, starts: NDArray[np.intp]
) -> NDArray[np.bool_]:
    """Where :func:`walk_extremes` reads the walk of sorted ``scores`` with ties: the last position of each block of
    equal scores within a group (the arguments are those of :func:`walk_extremes`). It depends on the scores and
    groups only, so a caller walking the same rows with other weights (bootstrap resamples) passes it instead of
    ``scores``."""
    s = scores if positions is None else scores[positions]
    block_end = np.empty(s.size, dtype=bool)
    np.not_equal(s[1:], s[:-1], out=block_end[:-1])
    block_end[-1] = True
    block_end[starts[1:] - 1] = True
    return block_end


def segment_ecce(
    y: NDArray[np.float64],
    p: NDArray[np.float64],
    w: NDArray[np.float64],
    segments: Segments,
    outcome: str = "classification",
    *,
    variance_weight: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float]:
    """Absolute ECCE, sigma and total weight of every segment, and the global ECCE, from one sort of the scores.

    Inputs are clean float64 arrays. Segments of zero weight get NaN ECCE and sigma. For ``outcome="regression"``
    sigma is the successive-differences estimate within the segment (``successive_difference_sigmas``).
    ``variance_weight`` replaces ``w ** 2`` in the variance terms ``w^2 p (1 - p)`` of a binary outcome: a
    bootstrap resample that draws row ``i`` ``c_i`` times passes weights ``c w`` and variance weights ``c w^2``.
    """
    order = np.argsort(p, kind="stable")
    p_sorted, w_sorted = p[order], w[order]
    residuals = w_sorted * (y[order] - p_sorted)
    regression = outcome == "regression"
    squared = w_sorted * w_sorted if variance_weight is None else variance_weight[order]
    # the raw residuals of a regression outcome, the variance terms of a binary one
    spread = y[order] - p_sorted if regression else squared * p_sorted * (1.0 - p_sorted)
    ties = p_sorted if np.any(p_sorted[1:] == p_sorted[:-1]) else None
    ranges, weight, sigma = np.zeros((3, segments.n_segments))
    workspace = np.empty(p.size)
    for block in segments._blocks(order):
        ranges[block.ids] = walk_ranges(residuals, ties, block.positions, block.starts, workspace)[block.group]
        weight[block.ids] = block.sums(w_sorted)[block.group]
        if regression:
            sigma[block.ids] = successive_difference_sigmas(spread, w_sorted, block.positions, block.starts)[
                block.group
            ]
        else:
            sigma[block.ids] = np.sqrt(block.sums(spread)[block.group])
    with np.errstate(divide="ignore", invalid="ignore"):
        positive = weight > 0
        ecce = np.where(positive, ranges / weight, np.nan)
        sigma = np.where(positive, sigma if regression else sigma / weight, np.nan)
    global_ecce = float(walk_ranges(residuals, ties, None, np.zeros(1, dtype=np.intp), workspace)[0] / w.sum())
    return ecce, sigma, weight, global_ecce


def score_blocks(segments: Segments, p: NDArray[np.float64]) -> list[Any]:
    """The blocks of :func:`segment_ecce` for the scores ``p``, kept for repeated walks on them (bootstrap
    resamples differ in weights only): sorting the memberships is most of the cost of one call."""
    return list(segments._blocks(np.argsort(p, kind="stable")))


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


def check_categorical_use(categorical_features: Any, X: Any, segments: Any) -> None:
    """Refuse a ``categorical_features`` other than ``"from_dtype"`` where no segments are generated from ``X``
    (it would be ignored)."""
    if isinstance(categorical_features, str) and categorical_features == "from_dtype":
        return
    if segments is not None:
        raise ValueError(
            "categorical_features applies only to segments generated from X: pass either segments or "
            "categorical_features, not both; got segments and "
            f"categorical_features={categorical_features!r:.100}"
        )
    if X is None:
        raise ValueError("categorical_features applies only to segments generated from X; got X=None and "
                         f"categorical_features={categorical_features!r:.100}")  # fmt: skip


def _resolve_segments(X: Any, segments: Any, n_samples: int, categorical_features: Any = "from_dtype") -> Segments:
    if X is not None and segments is not None:
        raise ValueError("pass either X (to generate segments) or segments, not both; got both")
    check_categorical_use(categorical_features, X, segments)
    if X is not None:
        resolved = generate_segments(X, categorical_features=categorical_features)
    elif segments is None:
        resolved = from_masks(np.ones((n_samples, 1), dtype=bool), names=["all"])
    elif isinstance(segments, Segments):
        resolved = segments
    else:
        rule = "segments must be a Segments or a boolean array of shape (n_samples, n_segments)"
        if isinstance(segments, (str, bytes, dict)) or np.ndim(segments) == 0:
            raise TypeError(f"{rule}; got {type(segments).__name__}")
        arr = np.asarray(segments)
        if arr.ndim != 2:
            raise ValueError(f"{rule}; got shape {arr.shape}; use mcal.segments.from_labels for a label column")
        resolved = from_masks(arr)
    if resolved.n_samples != n_samples:
        raise ValueError(f"segments must cover {n_samples} rows (n_samples); got {resolved.n_samples}")
    return resolved


@validate_params({"outcome": OUTCOME})
def mce(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    X: Any = None,
    segments: Any = None,
    sample_weight: ArrayLike | None = None,
    categorical_features: Any = "from_dtype",
    outcome: str = "classification",
) -> MCEResult:
    """Multicalibration error (MCE): the largest sigma-scaled ECCE over segments, with a per-segment table.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    X : DataFrame or array-like of shape (n_samples, n_features), default=None
        Features to generate segments from with :func:`mcal.segments.generate_segments` at its defaults (depth 3,
        3 values per feature, at least 10 rows, at most 1000 segments); call that function for other settings.
    segments : Segments or array-like of bool of shape (n_samples, n_segments), default=None
        Prespecified segments. With neither ``X`` nor ``segments``, the only segment is the whole table and
        ``mce_sigma`` equals the global ECCE / sigma.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    categorical_features : "from_dtype", None, or 1-D array-like of int, bool or str, default="from_dtype"
        Which columns of ``X`` the generated segments treat as categorical (one segment per frequent value rather
        than per quantile range), as in :class:`mcal.MCGrad`: ``"from_dtype"`` (object, string, category and
        bool columns), None (none), or column positions, a boolean mask of shape (n_features,) or column names,
        e.g. to declare an integer-coded column categorical. Only with ``X`` (not with ``segments``).
    outcome : {"classification", "regression"}, default="classification"
        Binary labels with probabilities, or real outcomes with real-valued predictions (any finite numbers). For
        regression each segment's sigma is estimated from successive differences of its residuals in score order
        (Guy et al. 2025, eq. 6; see :func:`mcal.metrics.ecce_std`), as the reference implementation does with
        ``outcome_type="regression"``, and the relative scales (``mce_relative``, ``mde_relative``,
        ``minority_prevalence``) are NaN: there is no prevalence.

    Returns
    -------
    result : MCEResult
        MCE in sigma, absolute and relative scales, its p-value, the minimum detectable error, the global ECCE,
        and the per-segment table sorted worst first.

    Raises
    ------
    ValueError
        If both ``X`` and ``segments`` are given, ``categorical_features`` is given with ``segments`` or without ``X``,
        the segments cover another number of rows, or no segment has positive weight.
    TypeError
        If ``segments`` is neither a Segments nor an array of masks.

    Notes
    -----
    For segment :math:`k` with rows sorted by score, :math:`C^k_j = \\frac{1}{W_k} \\sum_{i \\le j, i \\in k}
    w_i (y_i - p_i)` and :math:`\\mathrm{ECCE}_k = \\max_j C^k_j - \\min_j C^k_j` (with :math:`C^k_0 = 0`),
    :math:`\\sigma_k = \\sqrt{\\sum_{i \\in k} w_i^2 p_i (1 - p_i)} / W_k`, and

    .. math:: \\mathrm{MCE} = \\max_k \\mathrm{ECCE}_k / \\sigma_k  \\qquad \\text{(MCGrad paper, eq. 2)}.

    The scores are sorted once; every segment's walk is a cumulative sum over its rows in that order, computed
    for all segments of a feature combination at once, in float64. Tied scores form one block read at its end,
    so the value does not depend on row order (the reference sorts without grouping ties; with distinct scores
    the two agree). Values agree with ``mcgrad.metrics.MulticalibrationError`` (``precision_dtype="float64"``)
    on the same segments.

    References
    ----------
    .. [1] Guy et al., "Measuring multi-calibration", arXiv 2506.11251, 2025.
    .. [2] Tax et al., "MCGrad: Multicalibration at Web Scale", arXiv 2509.19884, eq. 2 and Appendix A.
    .. [3] Arrieta-Ibarra et al., "Metrics of calibration for probabilistic predictions", JMLR 23(351), 2022.

    Examples
    --------
    >>> import numpy as np
    >>> y = [0, 1, 0, 1, 1, 0]
    >>> p = [0.2, 0.4, 0.5, 0.6, 0.7, 0.9]
    >>> groups = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]], dtype=bool)
    >>> result = mce(y, p, segments=groups)
    >>> round(result.mce_sigma, 4), result.table["segment"].tolist()
    (1.2247, [1, 0])
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight, outcome)
    segs = _resolve_segments(X, segments, y.shape[0], categorical_features)
    ecce, sigma, weight, global_ecce = segment_ecce(y, p, w, segs, outcome)
    rate = np.nan if outcome == "regression" else float(np.dot(w, y) / w.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        means = segs.segment_sums(w * p) / weight, segs.segment_sums(w * y) / weight
    return mce_result(ecce, sigma, weight, global_ecce, segments=segs, sizes=segs.sizes,
                      global_sigma=outcome_sigma(y, p, w, outcome), rate=rate, means=means)  # fmt: skip


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


def mce_sigma(y_true: ArrayLike, y_prob: ArrayLike, *, segments: Any, sample_weight: ArrayLike | None = None) -> float:
    """Multicalibration error in sigmas, ``mce_sigma`` of :func:`~mcal.metrics.mce`, as a plain metric.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    segments : Segments or array-like of bool of shape (n_samples, n_segments)
        The segments, as for :func:`mce`.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    mce_sigma : float
        The largest ECCE / sigma over the segments (:func:`ecce_sigma` of each segment's rows).

    Raises
    ------
    ValueError, TypeError
        As :func:`mce` for ``segments``.

    Examples
    --------
    >>> import numpy as np
    >>> groups = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 1]], dtype=bool)
    >>> round(mce_sigma([0, 1, 0, 1, 1, 0], [0.2, 0.4, 0.5, 0.6, 0.7, 0.9], segments=groups), 4)
    1.2247
    """
    return mce(y_true, y_prob, segments=segments, sample_weight=sample_weight).mce_sigma

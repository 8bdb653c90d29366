"""Multicalibration error (MCE): the largest sigma-scaled ECCE over segments.

Guy, Haimovich, Linder, Okati, Perini, Tax, Tygert, "Measuring multi-calibration", arXiv 2506.11251, 2025;
MCGrad paper (Tax et al., arXiv 2509.19884), section 2, eq. 2 and Appendix A.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import OUTCOME, validate_params
from mcal._shared.mce import MCEResult, mce_result
from mcal._shared.segments import resolve_segments
from mcal._shared.walks import successive_difference_sigmas, walk_ranges
from mcal._validation import check_metric_inputs
from mcal.metrics._cumulative import outcome_sigma
from mcal.segments import Segments


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
    segs = resolve_segments(X, segments, y.shape[0], categorical_features)
    ecce, sigma, weight, global_ecce = segment_ecce(y, p, w, segs, outcome)
    rate = np.nan if outcome == "regression" else float(np.dot(w, y) / w.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        means = segs.segment_sums(w * p) / weight, segs.segment_sums(w * y) / weight
    return mce_result(ecce, sigma, weight, global_ecce, segments=segs, sizes=segs.sizes,
                      global_sigma=outcome_sigma(y, p, w, outcome), rate=rate, means=means)  # fmt: skip


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

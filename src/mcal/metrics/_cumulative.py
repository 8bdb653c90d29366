"""Estimated cumulative calibration error (ECCE) and its scale and p-value, without bins.

Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu, "Metrics of calibration for probabilistic predictions",
JMLR 23(351), 2022; MCGrad paper (Tax et al., arXiv 2509.19884), section 2, eq. 1.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import OUTCOME, validate_params
from mcal._shared.brownian import ECCE_SIGMA_CHANGED, brownian_range_sf, sigma_scale
from mcal._validation import check_metric_inputs
from mcal.metrics._regression import regression_sigma


def cumulative_differences(
    y: NDArray[np.float64], p: NDArray[np.float64], w: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The walk ``C_k = (1/W) sum_{j<=k} w_j (y_j - p_j)`` in score order, read at the end of each tie block.

    Returns the walk with ``C_0 = 0`` prepended, shape (n_distinct_scores + 1,). Reading the walk only where
    the score changes makes it independent of the order of rows with equal scores.
    """
    order = np.argsort(p, kind="stable")
    ps = p[order]
    walk = np.cumsum((w * (y - p))[order]) / w.sum()
    block_end = np.append(ps[1:] != ps[:-1], True)
    return np.concatenate(([0.0], walk[block_end]))


def _ecce(y: NDArray[np.float64], p: NDArray[np.float64], w: NDArray[np.float64]) -> float:
    walk = cumulative_differences(y, p, w)
    return float(walk.max() - walk.min())


def _sigma(p: NDArray[np.float64], w: NDArray[np.float64]) -> float:
    return float(np.sqrt(np.sum(w**2 * p * (1.0 - p))) / w.sum())


def outcome_sigma(y: NDArray[np.float64], p: NDArray[np.float64], w: NDArray[np.float64], outcome: str) -> float:
    """The scale of ECCE: from the probabilities for binary labels, from the residuals for real outcomes."""
    return regression_sigma(y, p, w) if outcome == "regression" else _sigma(p, w)


@validate_params({"outcome": OUTCOME})
def ecce(
    y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None, outcome: str = "classification"
) -> float:
    """Estimated cumulative calibration error (ECCE), range form: the range of the cumulative differences.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    outcome : {"classification", "regression"}, default="classification"
        Binary labels with probabilities, or real outcomes with real-valued predictions (any finite numbers).

    Returns
    -------
    ecce : float
        In probability units (the outcome's units for regression): ``max_k C_k - min_k C_k`` with ``C_0 = 0``.

    Notes
    -----
    Sort by score; :math:`C_k = \\frac{1}{W}\\sum_{j \\le k} w_j (y_j - p_j)`; ECCE :math:`= \\max_k C_k - \\min_k C_k`
    (the Kuiper form, MCGrad paper eq. 1). Tied scores form one block and the walk is read at block ends, so
    the value does not depend on row order.

    References
    ----------
    .. [1] Arrieta-Ibarra et al., JMLR 23(351), 2022.
    .. [2] Tax et al., "MCGrad: Multicalibration at Web Scale", arXiv 2509.19884, eq. 1.

    Examples
    --------
    >>> round(ecce([0, 1, 0, 1], [0.1, 0.3, 0.6, 0.9]), 6)
    0.175
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight, outcome)
    return _ecce(y, p, w)


@validate_params({"outcome": OUTCOME})
def ecce_std(
    y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None, outcome: str = "classification"
) -> float:
    """Standard deviation (sigma) of ECCE's cumulative differences under perfect calibration, its scale.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels (validated, unused by the formula).
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    outcome : {"classification", "regression"}, default="classification"
        Binary labels with probabilities, or real outcomes with real-valued predictions (any finite numbers).

    Returns
    -------
    sigma : float
        :math:`\\sigma = \\sqrt{\\sum_j w_j^2 p_j (1 - p_j)} / W`, in probability units; for regression the
        successive-differences estimate of Guy et al. (2025, eq. 6), in the outcome's units (see Notes).

    See Also
    --------
    ecce_sigma : ECCE in units of this sigma.

    Notes
    -----
    Added in mcal 0.2: before, :func:`ecce_sigma` returned this sigma.

    For regression, with rows sorted by prediction (rows of equal prediction in their input order) and residuals
    :math:`r_j = y_j - p_j`,
    :math:`\\sigma^2 = \\sum_j (r_{j+1} - r_j)^2 (w_j + w_{j+1})^2 / (4 W (w_1 + w_n + 2 \\sum_{j=2}^{n-1} w_j))`,
    as the reference implementation computes it (mcgrad 0.1.5,
    ``mcgrad.metrics._ecce_regression_standard_deviation_per_segment``).

    References
    ----------
    .. [1] Arrieta-Ibarra et al., JMLR 23(351), 2022; MCGrad paper, section 2.

    Examples
    --------
    >>> ecce_std([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5])
    0.25
    >>> round(ecce_std([1.0, 3.0, 2.0], [0.0, 1.0, 2.0], outcome="regression"), 6)
    0.645497
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight, outcome)
    return outcome_sigma(y, p, w, outcome)


@validate_params({"outcome": OUTCOME})
def ecce_sigma(
    y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None, outcome: str = "classification"
) -> float:
    """ECCE in units of its sigma: ECCE / sigma, the statistic whose null distribution gives :func:`~mcal.metrics.ecce_pvalue`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    outcome : {"classification", "regression"}, default="classification"
        Binary labels with probabilities, or real outcomes with real-valued predictions (any finite numbers).

    Returns
    -------
    ecce_sigma : float
        :func:`ecce` / :func:`ecce_std`, unitless; where sigma is 0 (every score 0 or 1), 0.0 if ECCE is 0 and
        ``inf`` otherwise. The ``ecce_sigma`` of :func:`mce`'s per-segment table, and ``mcgrad.metrics.ecce_sigma``
        of the reference package, are the same quantity.

    Warns
    -----
    FutureWarning
        On every call in mcal 0.2: until 0.2 this function returned sigma itself, which is now :func:`ecce_std`.
        Silence it with ``warnings.filterwarnings("ignore", "ecce_sigma", FutureWarning)`` once the calling code
        expects ECCE / sigma; the warning goes in mcal 0.3.

    See Also
    --------
    ecce_std : sigma, the scale.

    Notes
    -----
    Under perfect calibration the cumulative differences divided by sigma behave like standard Brownian motion,
    so ECCE / sigma is distributed as its range: about 2.5 or more happens with probability 0.05 (MCGrad paper,
    section 2; Arrieta-Ibarra et al. 2022, section 3).

    References
    ----------
    .. [1] Arrieta-Ibarra et al., JMLR 23(351), 2022.
    .. [2] Tax et al., "MCGrad: Multicalibration at Web Scale", arXiv 2509.19884, section 2.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     round(ecce_sigma([0, 1, 0, 1], [0.1, 0.3, 0.6, 0.9]), 6)
    0.881917
    """
    warnings.warn(ECCE_SIGMA_CHANGED, FutureWarning, stacklevel=2)
    return ecce_in_sigmas(y_true, y_prob, sample_weight=sample_weight, outcome=outcome)


def ecce_in_sigmas(
    y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None, outcome: str = "classification"
) -> float:
    """:func:`ecce_sigma` without its warning, for mcal's own callers."""
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight, outcome)
    return sigma_scale(_ecce(y, p, w), outcome_sigma(y, p, w, outcome))


@validate_params({"outcome": OUTCOME})
def ecce_pvalue(
    y_true: ArrayLike, y_prob: ArrayLike, *, sample_weight: ArrayLike | None = None, outcome: str = "classification"
) -> float:
    """P-value of ECCE under the null hypothesis of perfect calibration.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    outcome : {"classification", "regression"}, default="classification"
        Binary labels with probabilities, or real outcomes with real-valued predictions (any finite numbers).

    Returns
    -------
    pvalue : float
        ``P(R > ECCE / sigma)`` for the range R of standard Brownian motion on [0, 1]; 1.0 when sigma is 0
        and ECCE is 0; values below 1e-15 are reported as 0.0.

    Notes
    -----
    Under calibration, :math:`C_k/\\sigma` behaves like standard Brownian motion, so ECCE/σ is distributed as
    its range (Arrieta-Ibarra et al. 2022, section 3; MCGrad paper, section 2).

    References
    ----------
    .. [1] Arrieta-Ibarra, Gujral, Tannen, Tygert and Xu, "Metrics of calibration for probabilistic predictions",
       JMLR 23(351), 2022.
    .. [2] Tax et al., "MCGrad: Multicalibration at Web Scale", arXiv 2509.19884, section 2.

    Examples
    --------
    >>> round(ecce_pvalue([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]), 4)
    1.0
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight, outcome)
    return float(brownian_range_sf(sigma_scale(_ecce(y, p, w), outcome_sigma(y, p, w, outcome)))[0])

"""The monitor of calibration over time windows: per-window metrics with intervals and the anytime-valid drift
alarm, from the building blocks that :mod:`mcal.dask` shares (:mod:`mcal._monitoring`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from mcal._constraints import validate_params
from mcal._features.table import take_rows
from mcal._monitoring.windows import (
    MONITOR_CONSTRAINTS,
    MonitorResult,
    monitor_result,
    summarize_window,
    summary_columns,
    window_starts,
)
from mcal._validation import check_consistent, check_metric_inputs
from mcal.segments import Segments, generate_segments


@validate_params(MONITOR_CONSTRAINTS)
def monitor(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    times: ArrayLike,
    *,
    window: Any = "1D",
    X: Any = None,
    segments: Segments | None = None,
    sample_weight: ArrayLike | None = None,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    n_resamples: int = 200,
) -> MonitorResult:
    """Calibration over time: metrics per time window with intervals, and an anytime-valid drift alarm.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    times : array-like of shape (n_samples,)
        When each row was scored: datetimes (numpy ``datetime64``, pandas ``Timestamp``; timezone-aware ones are read
        in UTC), ISO 8601 text, or numbers; the rows need not be sorted.
    window : str, timedelta or number, default="1D"
        Window length, windows anchored at the Unix epoch: a pandas timedelta string with a unit (``"1D"``, ``"6h"``,
        ``"15min"``) or ``datetime.timedelta`` for datetimes; a positive number for numeric times.
    X : DataFrame or array-like of shape (n_samples, n_features), default=None
        Features (pandas, or polars and pyarrow tables, read through ``to_pandas``) of the segments of the
        per-window MCE: segments are generated once from all rows with
        :func:`mcal.segments.generate_segments` (its defaults), or taken from ``segments``, and evaluated in each
        window with :meth:`~mcal.segments.Segments.apply`, so that every window is measured on the same segments.
    segments : Segments, default=None
        Segment definitions generated from features (needs ``X``, which must hold those features).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative frequency weights: a weight of k counts as k rows, also in the alarm (see Notes).
    alpha : float, default=0.05
        Level of the drift alarm: on a calibrated stream it fires with probability at most ``alpha``, however many
        windows are looked at.
    confidence_level : float, default=0.95
        Coverage of the per-window intervals.
    n_resamples : int, default=200
        Bootstrap resamples of the per-window intervals of ECCE / sigma and the MCE; 0 leaves them NaN (each
        costs one evaluation of the window's MCE).

    Returns
    -------
    result : MonitorResult
        The per-window table, the alarm and the first window where it fired.

    Raises
    ------
    ValueError
        If ``segments`` is given without ``X``, ``X`` has another number of rows, a time is missing (NaT, NaN),
        infinite or unreadable, or ``window`` is not a positive length (a string without a unit, such as ``"5"``,
        included).
    TypeError
        If the times are neither datetimes nor numbers, or ``window`` is not of their kind.

    Notes
    -----
    Per window: the log loss with a normal interval from the standard error of the weighted mean of the per-row
    losses; ECCE, ECCE / sigma (:func:`mcal.metrics.ecce_sigma`) and its p-value; PCOC with a normal interval from
    the linearisation (delta-method) standard error of a ratio, :math:`\\sqrt{\\sum_i w_i^2 (p_i - \\mathrm{PCOC}
    \\, y_i)^2} / \\sum_i w_i y_i`; and with segments the MCE (:func:`mcal.metrics.mce`). ECCE / sigma and the MCE,
    which are not means, get basic bootstrap intervals (:func:`mcal.metrics.bootstrap`, rows resampled with their
    weights), which correct the statistics' upward bias: they may lie below the estimate, down to 0, and
    like every interval of these statistics they do not cover 0 on a calibrated window at the nominal rate
    (``benchmarks/results/bootstrap_intervals.md``). The MCE's p-value, ``mce_pvalue``, is that of the worst segment's ECCE
    (:func:`mcal.metrics.mce`): it is not adjusted for the number of segments (nor of windows), so it is small
    more often than its level on calibrated data with many segments; ``mce_pvalue_adjusted`` is the same p-value
    Holm-adjusted for the window's segments (not for the number of windows). A window without rows is left out of the
    table, and the e-process skips it (no bet, no fixed-share step), so that the table may have gaps in time.

    The alarm tests the null hypothesis that the stream is calibrated, :math:`P(y_t = 1 \\mid p_t, \\text{past}) =
    p_t` for every row, with an e-process: the mixture, with equal weights, of the likelihood-ratio martingales
    :math:`\\prod_t (q_j(p_t)^{y_t} (1 - q_j(p_t))^{1 - y_t} / (p_t^{y_t} (1 - p_t)^{1 - y_t}))^{w_t}` of 30
    logit-linear recalibrations :math:`q_j(p) = \\operatorname{expit}(a_j + b_j \\operatorname{logit} p)` (shifts
    :math:`a_j` of the base rate and slopes :math:`b_j` of over- or under-confidence, on geometric grids), with
    1% of the wealth spread evenly over the alternatives before each window (fixed share, Herbster and Warmuth
    1998) so that a drift that starts late is not buried under its alternative's losses before. Each ratio has
    conditional mean 1 under the null (Henzi and Ziegel 2022), so the wealth is a test martingale and
    Ville's inequality bounds the chance that it ever reaches :math:`1/\\alpha` by :math:`\\alpha` (Ramdas et al.
    2023): the alarm stays valid when it is checked after every window, and a window's rows may come in any order.
    A weight of k is k rows; weights in [0, 1] keep the guarantee (:math:`E[L^w] \\le 1` by Jensen), other
    fractional weights above 1 do not. Scores of exactly 0 or 1 are not bet on. The alarm has power against
    drifts that move the logit-linear recalibration (base rate, confidence); local miscalibration shows in the
    per-window ECCE and MCE. Its false-alarm rate and detection delay are measured in
    ``benchmarks/results/monitor_drift.md``.

    References
    ----------
    .. [1] A. Henzi and J. F. Ziegel, "Valid sequential inference on probability forecast performance",
       Biometrika 109(3), 2022, doi:10.1093/biomet/asab047.
    .. [2] A. Ramdas, P. Grünwald, V. Vovk and G. Shafer, "Game-theoretic statistics and safe anytime-valid
       inference", Statistical Science 38(4), 2023, doi:10.1214/23-STS894.
    .. [3] S. R. Howard, A. Ramdas, J. McAuliffe and J. Sekhon, "Time-uniform, nonparametric, nonasymptotic
       confidence sequences", Annals of Statistics 49(2), 2021, doi:10.1214/20-AOS1991.
    .. [4] M. Herbster and M. K. Warmuth, "Tracking the best expert", Machine Learning 32(2), 1998,
       doi:10.1023/A:1007424614876.
    .. [5] D. R. Cox, "Two further applications of a model for binary regression", Biometrika 45(3/4), 1958.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.5, 2000)
    >>> y = rng.random(2000) < p
    >>> days = np.repeat(np.arange(10), 200)
    >>> result = monitor(y, p, days, window=1)
    >>> len(result.table), result.alarm
    (10, False)
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    starts = window_starts(times, window)
    check_consistent(y_true=y, times=starts)
    if X is not None and not isinstance(X, (pd.DataFrame, pd.Series)) and hasattr(X, "to_pandas"):
        X = X.to_pandas()  # polars, pyarrow: rows are taken per window by position, columns kept by name
    segs = _monitor_segments(X, segments, y.shape[0])
    order = np.argsort(starts, kind="stable")
    keys, first = np.unique(starts[order], return_index=True)
    bounds = np.append(first, order.size)
    rows = []
    for k in range(keys.size):
        idx = order[bounds[k] : bounds[k + 1]]
        window_segments = None if segs is None else segs.apply(take_rows(X, idx))
        rows.append(summarize_window(y[idx], p[idx], w[idx], segments=window_segments, n_resamples=n_resamples,
                                     confidence_level=confidence_level))  # fmt: skip
    stats = pd.DataFrame(rows, index=pd.Index(keys), columns=summary_columns(segs is not None))
    return monitor_result(stats, window=window, alpha=alpha, confidence_level=confidence_level)


def _monitor_segments(X: Any, segments: Any, n_samples: int) -> Segments | None:
    if X is None:
        if segments is not None:
            raise ValueError("X must hold the segment features when segments are given; got None")
        return None
    if np.shape(X)[0] != n_samples:
        raise ValueError(f"X must have {n_samples} rows (n_samples); got {np.shape(X)[0]}")
    return generate_segments(X) if segments is None else segments

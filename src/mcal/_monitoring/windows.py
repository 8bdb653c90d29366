"""The windows of calibration monitoring: times, window starts, the summary of one window, the result of all
(:class:`MonitorResult`) and the rules of the monitor's parameters, shared by :func:`mcal.monitor.monitor` and
``mcal.dask.monitor``."""

from __future__ import annotations

import datetime
import numbers
import textwrap
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtri, xlogy

from mcal._constraints import OPEN_UNIT, TEXT_WIDTH, Instance, Interval, validate_params
from mcal._monitoring.eprocess import N_ALTERNATIVES, log_evalues, log_likelihood_ratios
from mcal._validation import check_real
from mcal.metrics import bootstrap, ecce, ecce_pvalue, ecce_sigma, ecce_std, mce, mce_sigma
from mcal.segments import Segments

#: The per-window sums of the e-process, one column per alternative, in the table of :func:`summarize_window`.
LOG_LR_COLUMNS = [f"log_lr_{j}" for j in range(N_ALTERNATIVES)]
#: Columns of :meth:`MonitorResult.summary` (and of ``mcal monitor``'s table), those the table holds.
SUMMARY_COLUMNS = ["window_start", "n_samples", "log_loss", "ecce_sigma_scale", "pcoc", "mce_sigma", "log10_evalue",
                   "alarm"]  # fmt: skip
#: ``evalue`` of the table is capped here (a badly calibrated stream exceeds the float range within a few windows);
#: ``log10_evalue`` holds the e-value uncapped, and the alarm is decided on the log scale.
EVALUE_CAP = 1e300
#: Clipping of scores in the log loss, as scikit-learn's ``log_loss`` (and :func:`mcal.metrics.log_loss`) clips.
_EPS64 = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, eq=False)
class MonitorResult:
    """Calibration metrics per time window, with intervals, and the anytime-valid drift alarm; see :func:`mcal.monitor.monitor`.

    Attributes
    ----------
    table : DataFrame of shape (n_windows, n_columns)
        One row per window that holds rows, in time order (a window without rows is left out, and the e-process
        skips it): ``window_start`` (the window is
        ``[window_start, window_start + window)``), ``n_samples``, ``weight``, ``positive_rate``, ``mean_score``,
        ``log_loss`` with ``log_loss_low`` and ``log_loss_high``, ``ecce`` (probability units),
        ``ecce_sigma_scale`` (ECCE / sigma) with ``_low`` and ``_high``, ``ecce_pvalue``, ``pcoc`` with
        ``pcoc_low`` and ``pcoc_high``, ``mce_sigma`` with ``_low`` and ``_high``, ``mce_pvalue`` (the worst segment's
        p-value, not adjusted for the number of segments) and ``mce_pvalue_adjusted`` (Holm) with segments, ``evalue``
        (the e-process at the window's end, capped at ``EVALUE_CAP`` = 1e300 so that it stays finite),
        ``log10_evalue`` (its base-10 logarithm, uncapped and finite) and
        ``alarm`` (whether it has reached ``1 / alpha`` by then). A metric undefined in a window is NaN (PCOC
        without positives; everything but the counts where the weights sum to 0).
    window : str
        The window length, as given.
    alpha : float
        Level of the drift alarm.
    confidence_level : float
        Coverage of the per-window intervals.
    alarm_window : Timestamp, float or None
        ``window_start`` of the first window at whose end the e-process reached ``1 / alpha``; None if it never did.
    """

    table: pd.DataFrame
    window: str
    alpha: float
    confidence_level: float
    alarm_window: Any

    @property
    def alarm(self) -> bool:
        """Whether the drift alarm fired (the calibration null hypothesis is rejected at level ``alpha``)."""
        return self.alarm_window is not None

    @validate_params({"width": TEXT_WIDTH})
    def summary(self, width: int = 100) -> str:
        """The windows and the drift alarm as text, the e-value as its log10 (finite however strong the evidence).

        Parameters
        ----------
        width : int >= 1, default=100
            Characters per line; a wider table wraps in blocks of columns.

        Returns
        -------
        text : str
            A row per window (start, rows, log loss, ECCE / sigma, PCOC, MCE / sigma with segments, log10 of the
            e-value, alarm), then a line saying whether and where the drift alarm fired.
        """
        shown = self.table[[c for c in SUMMARY_COLUMNS if c in self.table.columns]]
        text = shown.to_string(index=False, float_format=lambda v: f"{v:.6g}", line_width=width)
        if self.alarm:
            verdict = (f"drift alarm: fired in the window starting {self.alarm_window} (e-value >= {1 / self.alpha:g}, "
                       f"log10_evalue >= {np.log10(1 / self.alpha):.3g}; level {self.alpha:g})")  # fmt: skip
        else:
            verdict = f"drift alarm: not fired (level {self.alpha:g})"
        return text + "\n" + textwrap.fill(verdict, width, subsequent_indent="    ")

    def __str__(self) -> str:
        return self.summary()


def parse_times(times: ArrayLike, *, name: str = "times") -> pd.Series:
    """Times as :func:`window_starts` reads them: datetimes in UTC, or numbers.

    Parameters
    ----------
    times : array-like of shape (n_samples,)
        Numbers, datetimes (numpy ``datetime64``, pandas ``Timestamp``; timezone-aware ones are read in UTC), or
        text: ISO 8601 in any precision, row by row (``2026-01-01``, ``2026-01-01T00:03:11``,
        ``2026-01-01T00:03:11.5+01:00`` in one column), else one format that pandas infers from the first value.
    name : str, default="times"
        How error messages name ``times`` (``mcal monitor`` passes its option).

    Returns
    -------
    times : Series of shape (n_samples,)
        float64 for numbers, else ``datetime64[ns]`` (UTC, naive); a default index.

    Raises
    ------
    ValueError
        If ``times`` is not 1-D and non-empty, a time is missing (NaT, NaN), or a text is not a date (the first
        such is named).
    TypeError
        If the times are neither datetimes, text nor numbers.
    """
    values = times.reset_index(drop=True) if isinstance(times, pd.Series) else pd.Series(np.asarray(times))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array-like; got shape {np.shape(times)}")
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values.dtype):
        return values.astype(np.float64)
    missing = values.isna().to_numpy()
    if missing.any():
        raise ValueError(f"{name} must not be missing; got {int(missing.sum())} missing, the first at index "
                         f"{int(np.flatnonzero(missing)[0])}")  # fmt: skip
    if pd.api.types.is_bool_dtype(values.dtype):
        raise TypeError(f"{name} must be datetimes or numbers; got dtype {values.dtype}")
    try:
        stamps = _to_datetime(values)
    except (TypeError, ValueError):
        if pd.api.types.infer_dtype(values) != "string":
            raise TypeError(f"{name} must be datetimes or numbers; got dtype {values.dtype}") from None
        # the first text that neither ISO 8601 nor the format inferred from the first value reads
        bad = np.logical_and(*(pd.to_datetime(values, utc=True, errors="coerce", format=f).isna().to_numpy()
                               for f in ("ISO8601", None)))  # fmt: skip
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be datetimes, numbers or dates as text (ISO 8601 such as "
                         f"2026-01-01T00:03:11.5); got {values.iloc[first]!r} at index {first}") from None  # fmt: skip
    return stamps.dt.tz_localize(None).astype("datetime64[ns]")


def _to_datetime(values: pd.Series) -> pd.Series:
    """``pd.to_datetime`` in UTC: ISO 8601 text in any precision, else, as pandas advises, one inferred format."""
    try:
        return pd.to_datetime(values, utc=True, format="ISO8601")
    except (TypeError, ValueError):
        return pd.to_datetime(values, utc=True)


def window_starts(times: ArrayLike, window: Any) -> NDArray:
    """The start of the window of each time: ``floor(t / window) * window``, windows anchored at the Unix epoch.

    Parameters
    ----------
    times : array-like of shape (n_samples,)
        Datetimes (numpy ``datetime64``, pandas ``Timestamp``, timezone-aware ones are read in UTC), dates as
        ISO 8601 text, or numbers: see :func:`parse_times`.
    window : str, timedelta or number
        A fixed length: a pandas timedelta string with a unit (``"1D"``, ``"6h"``, ``"15min"``) or
        ``datetime.timedelta`` for datetimes; a positive number for numeric times.

    Returns
    -------
    starts : ndarray of shape (n_samples,)
        ``datetime64[ns]`` (UTC, naive) for datetimes, float64 for numbers.

    Raises
    ------
    ValueError
        If a time is missing (NaT, NaN), infinite or unreadable, or ``window`` is not a positive length (a string
        without a unit, such as ``"5"``, included: pandas would read it as nanoseconds).
    TypeError
        If the times are neither datetimes nor numbers, or ``window`` is not of their kind.
    """
    values = parse_times(times)
    if values.dtype == np.float64:
        return _numeric_starts(values.to_numpy(), window)
    step = _timedelta(window).value
    ns = values.to_numpy("datetime64[ns]").astype(np.int64)
    return ((ns // step) * step).astype("datetime64[ns]")


def _timedelta(window: Any) -> pd.Timedelta:
    if not isinstance(window, (str, datetime.timedelta, np.timedelta64)):
        raise TypeError(f"window must be a timedelta string such as '1D' or '6h' for datetime times; got {window!r}")
    if isinstance(window, str) and _is_number(window):  # pandas would read "5" as 5 nanoseconds
        raise ValueError(f"window must be a length with a unit such as '1D' or '6h' for datetime times; got "
                         f"{window!r}")  # fmt: skip
    try:
        step = pd.Timedelta(window)
    except ValueError as exc:
        raise ValueError(f"window must be a fixed length such as '1D', '6h' or '15min'; got {window!r} "
                         f"({exc})") from None  # fmt: skip
    if pd.isna(step) or step.value <= 0:
        raise ValueError(f"window must be a positive length; got {window!r}")
    return step


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _numeric_starts(t: NDArray[np.float64], window: Any) -> NDArray[np.float64]:
    if isinstance(window, (bool, np.bool_)) or not isinstance(window, (int, float, np.integer, np.floating)):
        raise TypeError(f"window must be a positive number for numeric times; got {window!r}")
    check_real("window", window, "a positive finite number", lambda v: 0 < v < np.inf)
    bad = ~np.isfinite(t)
    if bad.any():
        raise ValueError(f"times must be finite (no NaN or infinity); got {int(bad.sum())} such, the first at index "
                         f"{int(np.flatnonzero(bad)[0])}")  # fmt: skip
    return np.floor(t / window) * window


def summary_columns(with_segments: bool) -> list[str]:
    """The keys of :func:`summarize_window`, in order.

    Parameters
    ----------
    with_segments : bool
        Whether the windows are summarised with segments (adds ``mce_sigma``, ``mce_pvalue`` and
        ``mce_pvalue_adjusted``).

    Returns
    -------
    columns : list of str
        ``n_samples``, ``weight``, the e-process terms ``log_lr_0, ...``, then the metrics and standard errors.
    """
    metrics = ["positive_rate", "mean_score", "log_loss", "log_loss_se", "ecce", *_with_interval("ecce_sigma_scale"),
               "ecce_pvalue", "pcoc", "pcoc_se"]  # fmt: skip
    mce_columns = [*_with_interval("mce_sigma"), "mce_pvalue", "mce_pvalue_adjusted"] if with_segments else []
    return ["n_samples", "weight", *LOG_LR_COLUMNS, *metrics, *mce_columns]


def _with_interval(name: str) -> list[str]:
    return [name, f"{name}_low", f"{name}_high"]


def summarize_window(
    y: NDArray[np.float64],
    p: NDArray[np.float64],
    w: NDArray[np.float64],
    *,
    segments: Segments | None = None,
    n_resamples: int = 200,
    confidence_level: float = 0.95,
) -> dict[str, float]:
    """Every statistic of one window: counts, metrics, standard errors and the window's e-process terms.

    Shared with ``mcal.dask``, which calls it on each window's rows; inputs are not validated again.

    Parameters
    ----------
    y : ndarray of shape (n_samples,), float64
        Labels in {0, 1} of the window's rows (at least one row).
    p : ndarray of shape (n_samples,), float64
        Probabilities in [0, 1].
    w : ndarray of shape (n_samples,), float64
        Non-negative weights (they may sum to 0: then every metric is NaN).
    segments : Segments, default=None
        Segments of these rows (definitions applied to the window); adds ``mce_sigma``, ``mce_pvalue`` and
        ``mce_pvalue_adjusted``.
    n_resamples : int, default=200
        Bootstrap resamples of the intervals of ECCE / sigma and the MCE (:func:`mcal.metrics.bootstrap`, seed 0,
        the rows in a canonical order so that the interval does not depend on it); 0 leaves them NaN.
    confidence_level : float, default=0.95
        Level of those intervals.

    Returns
    -------
    summary : dict of str to float
        The keys of :func:`summary_columns`: the columns of the ``table`` of :class:`~mcal.monitor.MonitorResult` before the intervals and
        the e-process, the standard errors ``log_loss_se`` and ``pcoc_se``, and the e-process terms ``log_lr_j``
        (the sum over the rows of ``w`` times the log likelihood ratio of alternative ``j``).
    """
    total = float(w.sum())
    row = {"n_samples": float(p.size), "weight": total}
    row |= dict(zip(LOG_LR_COLUMNS, log_likelihood_ratios(y, p, w), strict=False))
    nan = float("nan")
    if not total > 0:
        return row | dict.fromkeys(summary_columns(segments is not None)[2 + N_ALTERNATIVES :], nan)
    positives, predicted = float(w @ y), float(w @ p)
    q = np.clip(p, _EPS64, 1.0 - _EPS64)
    loss = -(xlogy(y, q) + xlogy(1.0 - y, 1.0 - q))
    mean_loss = float(w @ loss) / total
    sigma = ecce_std(y, p, sample_weight=w)
    stat = ecce(y, p, sample_weight=w)
    row |= {
        "positive_rate": positives / total, "mean_score": predicted / total, "log_loss": mean_loss,
        "log_loss_se": float(np.sqrt(w**2 @ (loss - mean_loss) ** 2)) / total, "ecce": stat,
        "ecce_sigma_scale": stat / sigma if sigma > 0 else (np.inf if stat > 0 else 0.0),
        "ecce_pvalue": ecce_pvalue(y, p, sample_weight=w),
    }  # fmt: skip
    if positives > 0:
        ratio = predicted / positives
        row |= {"pcoc": ratio, "pcoc_se": float(np.sqrt(w**2 @ (p - ratio * y) ** 2)) / positives}
    else:
        row |= {"pcoc": nan, "pcoc_se": nan}
    if segments is not None:
        result = mce(y, p, segments=segments, sample_weight=w)
        row |= {
            "mce_sigma": result.mce_sigma,
            "mce_pvalue": result.pvalue,
            "mce_pvalue_adjusted": result.pvalue_adjusted,
        }
    return row | _intervals(y, p, w, segments, n_resamples, confidence_level)


def _intervals(
    y: NDArray[np.float64], p: NDArray[np.float64], w: NDArray[np.float64], segments: Segments | None,
    n_resamples: int, confidence_level: float,
) -> dict[str, float]:  # fmt: skip
    """Bootstrap intervals of ECCE / sigma and (with segments) the MCE of one window, basic (bias-corrected; see
    ``benchmarks/results/bootstrap_intervals.md``): NaN without resamples, or where the metric is undefined on a
    resample (every segment empty)."""
    masks = None if segments is None else segments.to_masks()
    metrics = {"ecce_sigma_scale": (ecce_sigma, None)} | ({} if masks is None else {"mce_sigma": (mce_sigma, masks)})
    out = {f"{name}_{end}": float("nan") for name in metrics for end in ("low", "high")}
    if n_resamples == 0:
        return out
    # rows in a canonical order (score, label, weight, segment pattern): the resamples drawn for a window do not
    # depend on the order of its rows, which differs between mcal.monitor and mcal.dask
    patterns = [] if masks is None else [np.unique(np.packbits(masks, axis=1), axis=0, return_inverse=True)[1].ravel()]
    keys = [p, y, w, *patterns]
    order = np.lexsort(keys[::-1])
    for name, (metric, rows) in metrics.items():
        with warnings.catch_warnings():  # ecce_sigma's FutureWarning of mcal 0.2, for users who meant sigma
            warnings.simplefilter("ignore", FutureWarning)
            try:
                res = bootstrap(metric, y[order], p[order], sample_weight=w[order], n_resamples=n_resamples,
                                confidence_level=confidence_level, method="basic", random_state=0,
                                row_args=None if rows is None else {"segments": rows[order]})  # fmt: skip
            except ValueError:
                continue
        out[f"{name}_low"], out[f"{name}_high"] = res.low, res.high
    return out


def monitor_result(stats: pd.DataFrame, *, window: Any, alpha: float, confidence_level: float) -> MonitorResult:
    """The :class:`MonitorResult` of per-window statistics, however computed (shared with ``mcal.dask``).

    Parameters
    ----------
    stats : DataFrame of shape (n_windows, n_columns)
        Rows of :func:`summarize_window` (columns :func:`summary_columns`), indexed by window start, in time order.
    window : str, timedelta or number
        The window length, recorded as text.
    alpha : float
        Level of the drift alarm, in (0, 1).
    confidence_level : float
        Coverage of the normal intervals, in (0, 1).

    Returns
    -------
    result : MonitorResult
        The table with intervals, e-values and alarm flags.
    """
    z = float(ndtri(0.5 + confidence_level / 2.0))  # the standard normal quantile
    table = stats.drop(columns=[*LOG_LR_COLUMNS, "log_loss_se", "pcoc_se"]).rename_axis("window_start").reset_index()
    table["n_samples"] = table["n_samples"].astype(np.int64)
    for name in ("log_loss", "pcoc"):
        at = table.columns.get_loc(name) + 1
        table.insert(at, f"{name}_high", stats[name].to_numpy() + z * stats[f"{name}_se"].to_numpy())
        table.insert(at, f"{name}_low", stats[name].to_numpy() - z * stats[f"{name}_se"].to_numpy())
    log_e = log_evalues(stats[LOG_LR_COLUMNS].to_numpy(np.float64))
    table["evalue"] = np.minimum(np.exp(np.minimum(log_e, np.log(EVALUE_CAP) + 1.0)), EVALUE_CAP)  # no overflow
    table["log10_evalue"] = log_e / np.log(10.0)
    crossed = log_e >= np.log(1.0 / alpha)
    table["alarm"] = np.logical_or.accumulate(crossed)
    first = table["window_start"].iloc[int(np.argmax(crossed))] if crossed.any() else None
    return MonitorResult(table=table, window=str(window), alpha=alpha, confidence_level=confidence_level,
                         alarm_window=first)  # fmt: skip


#: The rule of ``n_resamples``: 0 (no intervals) or enough resamples for an interval.
_N_RESAMPLES_RULE = "0 (no bootstrap intervals) or an integer >= 2"
#: The parameter rules of :func:`mcal.monitor.monitor` (shared with ``mcal.dask.monitor``).
MONITOR_CONSTRAINTS = {
    "segments": [None, Instance(Segments)],
    "alpha": OPEN_UNIT,
    "confidence_level": OPEN_UNIT,
    "n_resamples": [
        Interval(numbers.Integral, 0, 0, rule=_N_RESAMPLES_RULE),
        Interval(numbers.Integral, 2, None, rule=_N_RESAMPLES_RULE),
    ],
}

"""Bootstrap confidence intervals on any metric, resampling rows and carrying their weights."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import N_RESAMPLES, OPEN_UNIT, Instance, StrOptions, validate_params
from mcal._validation import check_choice, check_metric_inputs, warn
from mcal.metrics._resampled import SortedRows, resampled_metric

#: The kinds of bootstrap interval.
_METHODS = ("percentile", "basic", "bca")

#: Resampled rows held in memory at once (scipy's ``batch``): about 32 MB of indices, and of counts.
_MAX_BATCH_VALUES = 4_000_000


@dataclass(frozen=True)
class BootstrapResult:
    """A metric's value with a bootstrap confidence interval; see :func:`bootstrap`.

    Attributes
    ----------
    estimate : float
        The metric on all rows.
    low, high : float
        Bounds of the two-sided interval of level ``confidence_level``.
    standard_error : float
        Standard deviation of the metric over the resamples.
    confidence_level : float
        Coverage the interval aims at, in (0, 1).
    n_resamples : int
        Number of resamples.
    method : str
        ``"percentile"``, ``"basic"`` or ``"bca"``.
    """

    estimate: float
    low: float
    high: float
    standard_error: float
    confidence_level: float
    n_resamples: int
    method: str


@validate_params({
    "metric": Instance(Callable, rule="callable, e.g. mcal.metrics.log_loss"),  # type: ignore[arg-type]
    "n_resamples": N_RESAMPLES,
    "confidence_level": OPEN_UNIT,
    "method": StrOptions(*_METHODS),
})  # fmt: skip
def bootstrap(
    metric: Callable[..., float],
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    row_args: Mapping[str, ArrayLike] | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    method: str = "percentile",
    random_state: int | np.random.Generator | None = None,
) -> BootstrapResult:
    """Bootstrap confidence interval of a metric: rows resampled with replacement, each carrying its weight.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, y_prob, *, sample_weight, **row_args) -> float``, e.g. :func:`mcal.metrics.log_loss`;
        bind other settings first (``functools.partial(ece, n_bins=20)``), and take an attribute of a result
        in a ``lambda`` (``lambda y, p, *, sample_weight: mce(y, p, ...).mce_sigma``).
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_prob : array-like of shape (n_samples,)
        Probabilities in [0, 1].
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights. Rows of zero weight are dropped first (so they equal absent rows); the others are
        resampled uniformly, each keeping its weight (see Notes).
    row_args : mapping of str to array-like of shape (n_samples, ...), default=None
        Further per-row keyword arguments of ``metric``, resampled with the rows: ``{"field": field}`` for
        :func:`~mcal.metrics.f_rce`, ``{"segments": segments.to_masks()}`` for :func:`~mcal.metrics.mce`.
    n_resamples : int, default=1000
        Number of resamples (at least 2).
    confidence_level : float, default=0.95
        In (0, 1).
    method : {"percentile", "basic", "bca"}, default="percentile"
        Interval of ``scipy.stats.bootstrap``: ``"percentile"`` suits means (log loss, Brier score, PCOC);
        ``"basic"`` (the percentile interval reflected around the estimate) suits ECE, ECCE, MCE and F-RCE, whose
        upward bias it corrects (see Notes); ``"bca"`` (bias-corrected and accelerated) also evaluates the metric
        on the ``n_samples`` leave-one-out subsets (the jackknife), so it suits small data only, and its bounds
        are NaN when nearly every resample lies on one side of the estimate.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the resampling (``numpy.random.default_rng``); the same seed resamples the same rows for every
        metric of the same data.

    Returns
    -------
    result : BootstrapResult
        ``estimate``, ``low``, ``high``, ``standard_error``, ``confidence_level``, ``n_resamples``, ``method``.

    Raises
    ------
    ValueError
        If the metric raises ``ValueError`` on the full data or on a resample (e.g. a resample with a single class for
        ROC-AUC; the message counts them), or an array of ``row_args`` has another length.
    TypeError
        If ``row_args`` is not a mapping with string keys.

    Notes
    -----
    The nonparametric bootstrap (Efron and Tibshirani 1993) through :func:`scipy.stats.bootstrap`, on the row
    indices. Weights are treated as sampling weights of independent rows: a row is resampled as a unit and keeps
    its weight, so the interval reflects the variability of a weighted mean (a ratio estimator) correctly. A
    row of weight k is *not* the same as k copies here: the copies are resampled independently, which narrows
    the interval; expand frequency weights with ``numpy.repeat`` to resample the copies. The estimate itself
    is the same either way, and scaling all weights leaves the interval unchanged.

    A resample is the count of each row in it. mcal's metrics (:func:`log_loss`, :func:`brier_score`,
    :func:`roc_auc`, :func:`pr_auc`, :func:`ece` with uniform bins, also as ``functools.partial(ece, n_bins=k)``,
    :func:`ecce`, :func:`ecce_sigma`, :func:`pcoc`, :func:`f_rce` and :func:`mce_sigma`) are evaluated on a
    block of resamples at once, as weighted sums over the rows sorted by score once; any other callable is called
    on each resample's rows. Both see the same resamples and give the same values, to rounding; timings are in
    ``benchmarks/results/bootstrap_speed.md``.

    ECE, ECCE, MCE and F-RCE are non-negative and biased upwards (MCE is a maximum too), and a resample adds the
    bias once more: their percentile intervals lie above the population value, and above their own estimate
    when the estimate is mostly bias (a nearly calibrated model). The basic interval subtracts the bias the
    resamples show, and covers the population value far more often; it may then lie below the estimate, and its
    bounds are cut at 0 when every resample is non-negative (a bound of 0 reads as "consistent with no error";
    both are 0 when the resamples' bias exceeds the estimate). No method's interval covers
    the value 0 of a calibrated model at the nominal rate. The coverage of known values is measured in
    ``benchmarks/results/bootstrap_coverage.md`` (means) and ``benchmarks/results/bootstrap_intervals.md``
    (ECE, ECCE, MCE, F-RCE).

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall, 1993,
       doi:10.1201/9780429246593.

    Examples
    --------
    >>> import numpy as np
    >>> from mcal.metrics import brier_score
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = rng.uniform(size=500) < p
    >>> res = bootstrap(brier_score, y, p, n_resamples=200, random_state=0)
    >>> bool(res.low < res.estimate < res.high), round(res.estimate, 3)
    (True, 0.163)
    """
    keys = list(row_args) if isinstance(row_args, Mapping) else []  # others are refused by bootstrap_metrics
    return bootstrap_metrics({"metric": (metric, keys)}, y_true, y_prob, sample_weight=sample_weight,
                             row_args=row_args, n_resamples=n_resamples, confidence_level=confidence_level, method=method,
                             random_state=random_state)["metric"]  # fmt: skip


def bootstrap_metrics(
    metrics: Mapping[str, tuple[Callable[..., float], Sequence[str]]],
    y_true: ArrayLike,
    y_prob: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    row_args: Mapping[str, ArrayLike] | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    method: str | Mapping[str, str] = "percentile",
    random_state: int | np.random.Generator | None = None,
    undefined: str = "raise",
    of: str = "",
) -> dict[str, BootstrapResult]:
    """:func:`bootstrap` of several metrics on the same resamples, drawn once.

    ``metrics`` maps a name to ``(metric, names of the row_args it takes)``; ``method`` is one method for all, or
    maps each name to its method (``"percentile"`` and ``"basic"`` mix; ``"bca"`` goes alone); the other arguments
    are those of :func:`bootstrap`. Each result equals :func:`bootstrap` of its metric with the same
    ``random_state``. A metric undefined on some resamples raises ``ValueError`` (``undefined="raise"``), or
    (``undefined="warn"``) gets NaN bounds and standard error, with a warning naming it (and ``of``, e.g. the
    score column), while the others keep their intervals.
    """
    from scipy import stats

    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    args = _check_row_args(row_args, y.shape[0])
    methods = _check_methods(method, metrics)
    keep = w > 0
    y, p, w, args = y[keep], p[keep], w[keep], {k: v[keep] for k, v in args.items()}
    estimates = {name: float(fn(y, p, sample_weight=w, **{k: args[k] for k in keys}))
                 for name, (fn, keys) in metrics.items()}  # fmt: skip
    statistic = _statistic(list(metrics.values()), y, p, w, args)
    n = y.shape[0]
    with warnings.catch_warnings():  # scipy warns of NaN statistics and degenerate distributions: refused below
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap(
            (np.arange(n),), statistic, n_resamples=int(n_resamples), batch=max(1, _MAX_BATCH_VALUES // n),
            vectorized=True, confidence_level=float(confidence_level),
            method="BCa" if "bca" in methods.values() else "percentile", random_state=np.random.default_rng(random_state),
        )  # fmt: skip
    failed = np.isnan(res.bootstrap_distribution).sum(axis=-1)
    results = {}
    for j, name in enumerate(metrics):
        if failed[j] and undefined == "warn":
            warn(f"{name}{of} has no interval: it is undefined on {int(failed[j])} of {int(n_resamples)} resamples "
                 "(e.g. a resample with a single class); more rows give it one")  # fmt: skip
            results[name] = BootstrapResult(estimates[name], np.nan, np.nan, np.nan, float(confidence_level),
                                            int(n_resamples), methods[name])  # fmt: skip
            continue
        if failed[j]:
            raise ValueError(
                f"metric must be defined on every resample; {'it' if len(metrics) == 1 else name} raised "
                f"ValueError on {int(failed[j])} of {int(n_resamples)} resamples (e.g. a resample with a single "
                "class): use more rows or another metric"
            )
        low, high = float(res.confidence_interval.low[j]), float(res.confidence_interval.high[j])
        # basic: the percentile interval reflected around the estimate, as scipy's "basic"; an infinite estimate
        # (ECCE / sigma of scores of 0 and 1 that are wrong: sigma 0) keeps the percentile bounds, not inf - inf
        if methods[name] == "basic" and np.isfinite(estimates[name]):
            low, high = 2 * estimates[name] - high, 2 * estimates[name] - low
            if res.bootstrap_distribution[j].min() >= 0.0:  # a non-negative metric: its value is not below 0
                low, high = max(low, 0.0), max(high, 0.0)  # high < 0 when the resamples' bias exceeds the estimate
        results[name] = BootstrapResult(estimates[name], low, high, float(res.standard_error[j]),
                                        float(confidence_level), int(n_resamples), methods[name])  # fmt: skip
    return results


def _check_methods(method: Any, metrics: Mapping[str, Any]) -> dict[str, str]:
    """The method of each metric: ``method`` for all, or ``method[name]``; "bca" only when all use it."""
    methods = dict(method) if isinstance(method, Mapping) else dict.fromkeys(metrics, method)
    if set(methods) != set(metrics):
        raise ValueError(f"method must name the method of each metric {sorted(metrics)}; got {sorted(methods)}")
    for value in methods.values():
        check_choice("method", value, _METHODS)
    if "bca" in methods.values() and set(methods.values()) != {"bca"}:
        raise ValueError(f"method 'bca' must be the method of every metric or of none; got {methods}")
    return methods


def _statistic(
    metrics: list[tuple[Callable[..., float], Sequence[str]]], y: NDArray, p: NDArray, w: NDArray,
    args: dict[str, NDArray],
) -> Callable[..., Any]:  # fmt: skip
    """The vectorised statistic of ``scipy.stats.bootstrap`` on row numbers of shape (n_resamples, n_drawn) or
    (n_drawn,): each metric (a row of the result) on each resample, NaN where it raises ValueError (is undefined).

    Metrics with a form on counts (:func:`~mcal.metrics._resampled.resampled_metric`) share one matrix of counts
    per block of resamples; the others are called on each resample's rows."""
    rows_sorted = SortedRows(y, p, w, args)
    forms = [resampled_metric(fn, {k: args[k] for k in keys}) for fn, keys in metrics]

    def one(fn: Callable[..., float], keys: Sequence[str], rows: NDArray[np.intp]) -> float:
        try:
            return float(fn(y[rows], p[rows], sample_weight=w[rows], **{k: args[k][rows] for k in keys}))
        except ValueError:
            return np.nan

    def statistic(rows: NDArray[np.intp], axis: int = -1) -> Any:
        many = np.atleast_2d(rows)
        counts = rows_sorted.counts(many) if any(form is not None for form in forms) else None
        values = np.stack([
            form(rows_sorted, counts) if form is not None and counts is not None else np.array([one(fn, keys, r) for r in many])
            for form, (fn, keys) in zip(forms, metrics, strict=True)
        ])  # fmt: skip
        return values if rows.ndim > 1 else values[:, 0]

    return statistic


def _check_row_args(row_args: Any, n_samples: int) -> dict[str, NDArray]:
    if row_args is None:
        return {}
    if not isinstance(row_args, Mapping) or not all(isinstance(k, str) for k in row_args):
        raise TypeError(
            f"row_args must be a mapping of argument names to per-row arrays; got {type(row_args).__name__}"
        )
    args = {k: np.asarray(v) for k, v in row_args.items()}
    for k, v in args.items():
        if v.ndim == 0 or v.shape[0] != n_samples:
            raise ValueError(f"row_args[{k!r}] must have {n_samples} rows (the length of y_true); got shape {v.shape}")
    return args

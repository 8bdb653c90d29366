"""One table of every core metric for several score columns, shared by the CLI, the demo and the report."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import N_BINS, N_RESAMPLES, OPEN_UNIT, Instance, validate_params
from mcal._validation import (
    check_both_classes,
    check_metric_inputs,
    check_sample_weight,
    check_y_real,
    check_y_true,
    warn,
)
from mcal.metrics._binned import ece
from mcal.metrics._bootstrap import bootstrap, bootstrap_metrics
from mcal.metrics._cumulative import ecce, ecce_in_sigmas, ecce_pvalue
from mcal.metrics._field import f_rce, pcoc
from mcal.metrics._multicalibration import mce, mce_sigma
from mcal.metrics._regression import mae, mse
from mcal.metrics._standard import brier_score, log_loss, pr_auc, roc_auc
from mcal.segments import Segments


@validate_params({"n_bins": N_BINS})
def calibration_summary(
    y_true: ArrayLike,
    y_probs: Mapping[str, ArrayLike],
    *,
    sample_weight: ArrayLike | None = None,
    field: ArrayLike | None = None,
    segments: Any = None,
    n_bins: int = 10,
) -> pd.DataFrame:
    """Every core metric for each named score column.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels with both classes present.
    y_probs : mapping of str to array-like of shape (n_samples,)
        Score columns (probabilities in [0, 1]) by name.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    field : array-like of shape (n_samples,), default=None
        Field of each row; adds the ``f_rce`` column when given.
    segments : Segments or array-like of bool of shape (n_samples, n_segments), default=None
        Segments (e.g. from :func:`mcal.segments.generate_segments`); adds the multicalibration error columns
        ``mce_sigma``, ``mce_absolute`` and ``mce_pvalue`` (see :func:`mcal.metrics.mce`) when given.
    n_bins : int, default=10
        Equal-width bins of the ECE.

    Returns
    -------
    table : DataFrame of shape (len(y_probs), n_metrics)
        One row per score column (index = names); columns ``log_loss``, ``brier_score``, ``roc_auc``,
        ``pr_auc``, ``ece``, ``ecce``, ``ecce_sigma_scale`` (ECCE/sigma; 0 or ``inf`` when sigma is 0,
        i.e. every score is 0 or 1), ``ecce_pvalue``, ``pcoc``, ``f_rce`` when a field is given, and the MCE
        columns when segments are.

    Raises
    ------
    ValueError
        If ``y_probs`` is empty, or ``y_true`` holds one class only (with positive weight).
    TypeError
        If ``y_probs`` is not a mapping.
    """
    _check_mapping("y_probs", y_probs)
    y = check_y_true(y_true)
    w = check_sample_weight(sample_weight, y.shape[0])
    check_both_classes(y, w, "y_true")
    rows = {}
    for name, p in y_probs.items():
        row = {
            "log_loss": log_loss(y, p, sample_weight=w),
            "brier_score": brier_score(y, p, sample_weight=w),
            "roc_auc": roc_auc(y, p, sample_weight=w),
            "pr_auc": pr_auc(y, p, sample_weight=w),
            "ece": ece(y, p, sample_weight=w, n_bins=n_bins),
            "ecce": ecce(y, p, sample_weight=w),
        }
        row["ecce_sigma_scale"] = ecce_in_sigmas(y, p, sample_weight=w)
        row["ecce_pvalue"] = ecce_pvalue(y, p, sample_weight=w)
        row["pcoc"] = pcoc(y, p, sample_weight=w)
        if field is not None:
            row["f_rce"] = f_rce(y, p, field=field, sample_weight=w)
        if segments is not None:
            result = mce(y, p, segments=segments, sample_weight=w)
            row |= {"mce_sigma": result.mce_sigma, "mce_absolute": result.mce_absolute, "mce_pvalue": result.pvalue}
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


@validate_params({"n_bins": N_BINS, "n_resamples": N_RESAMPLES, "confidence_level": OPEN_UNIT})
def summary_intervals(
    y_true: ArrayLike,
    y_probs: Mapping[str, ArrayLike],
    *,
    sample_weight: ArrayLike | None = None,
    field: ArrayLike | None = None,
    segments: Any = None,
    n_bins: int = 10,
    n_resamples: int = 200,
    confidence_level: float = 0.95,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Bootstrap intervals of the metrics of :func:`calibration_summary` (all but its p-values).

    Parameters
    ----------
    y_true, y_probs, sample_weight, field, segments, n_bins
        As for :func:`calibration_summary`.
    n_resamples : int, default=200
        Resamples per metric; every metric and score column is resampled on the same rows.
    confidence_level : float, default=0.95
        In (0, 1).
    random_state : int or None, default=0
        Seed of the resampling, fixed by default so that a table is reproducible.

    Returns
    -------
    intervals : DataFrame of shape (len(y_probs), 2 * n_metrics)
        One row per score column; columns ``<metric>_low`` and ``<metric>_high`` for ``log_loss``,
        ``brier_score``, ``roc_auc``, ``pr_auc``, ``ece``, ``ecce``, ``ecce_sigma_scale``, ``pcoc``, then
        ``f_rce`` with a field and ``mce_sigma`` with segments: intervals of :func:`bootstrap`, percentile
        intervals of the first four and PCOC, basic intervals (bias-corrected) of ECE, ECCE, ECCE / sigma,
        F-RCE and MCE / sigma, the methods that cover the population value best
        (``benchmarks/results/bootstrap_intervals.md``).

    Raises
    ------
    ValueError, TypeError
        As :func:`calibration_summary` and :func:`bootstrap`.

    Warns
    -----
    CalibrationWarning
        For each metric undefined on some resamples (e.g. the AUCs, on a resample with a single class): its bounds
        are NaN.
    """
    _check_mapping("y_probs", y_probs)
    metrics: dict[str, tuple[Callable[..., float], list[str]]] = {
        "log_loss": (log_loss, []), "brier_score": (brier_score, []), "roc_auc": (roc_auc, []),
        "pr_auc": (pr_auc, []), "ece": (partial(ece, n_bins=n_bins), []), "ecce": (ecce, []),
        "ecce_sigma_scale": (ecce_in_sigmas, []), "pcoc": (pcoc, []),
    }  # fmt: skip
    row_args: dict[str, Any] = {}
    if field is not None:
        metrics["f_rce"], row_args["field"] = (f_rce, ["field"]), field
    if segments is not None:
        masks = segments.to_masks() if isinstance(segments, Segments) else np.asarray(segments, dtype=bool)
        metrics["mce_sigma"], row_args["segments"] = (mce_sigma, ["segments"]), masks
    rows = {}
    for name, p in y_probs.items():
        methods = {metric: _interval_method(metric) for metric in metrics}
        if segments is not None:
            methods["mce_sigma"] = _mce_method(y_true, p, sample_weight, row_args["segments"], name)
        results = bootstrap_metrics(metrics, y_true, p, sample_weight=sample_weight, row_args=row_args,
                                    n_resamples=n_resamples, confidence_level=confidence_level, method=methods,
                                    random_state=random_state, undefined="warn", of=f" of {name!r}")  # fmt: skip
        rows[name] = {
            f"{metric}_{end}": getattr(res, end) for metric, res in results.items() for end in ("low", "high")
        }
    return pd.DataFrame.from_dict(rows, orient="index")


@validate_params({
    "segments": Instance(Segments),
    "n_resamples": N_RESAMPLES,
    "confidence_level": OPEN_UNIT,
})  # fmt: skip
def segment_intervals(
    y_true: ArrayLike,
    y_prob: ArrayLike,
    segments: Segments,
    which: Sequence[int],
    *,
    sample_weight: ArrayLike | None = None,
    n_resamples: int = 200,
    confidence_level: float = 0.95,
    random_state: int | None = 0,
) -> pd.DataFrame:
    """Bootstrap intervals (basic: bias-corrected) of the ECCE in sigmas (``ecce_sigma`` of :func:`mce`'s table) of
    chosen segments.

    Parameters
    ----------
    y_true, y_prob, sample_weight : array-like of shape (n_samples,)
        As for :func:`mce`.
    segments : Segments
        The segments of the :func:`mce` call.
    which : sequence of int
        Segment numbers (the ``segment`` column of the ``table`` of :class:`~mcal.metrics.MCEResult`), e.g. the worst ten.
    n_resamples, confidence_level, random_state
        As for :func:`summary_intervals`; the rows of each segment are resampled within it.

    Returns
    -------
    intervals : DataFrame of shape (len(which), 2)
        Index ``which``; columns ``ecce_sigma_low`` and ``ecce_sigma_high``; NaN for a segment whose resamples
        do not all hold both classes.

    Raises
    ------
    ValueError
        As :func:`bootstrap`.
    """
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    out = {}
    for k in which:
        rows = segments.mask(int(k))
        try:
            method = _method_of_walk(y[rows], p[rows], w[rows], f"segment {segments.descriptions[int(k)]!r}")
            res = bootstrap(ecce_in_sigmas, y[rows], p[rows], sample_weight=w[rows], n_resamples=n_resamples,
                            confidence_level=confidence_level, method=method, random_state=random_state)  # fmt: skip
            out[k] = (res.low, res.high)
        except ValueError:  # a segment too small or of one class: no interval rather than no table
            out[k] = (np.nan, np.nan)
    return pd.DataFrame.from_dict(out, orient="index", columns=["ecce_sigma_low", "ecce_sigma_high"])


def _method_of_walk(y: NDArray, p: NDArray, w: NDArray, what: str) -> str:
    """The interval method of the ECCE in sigmas of rows ``y``, ``p``, ``w`` (``what`` names them in the warning):
    basic, or percentile, with a warning, when one residual ``|w (y - p)|`` makes at least half of the ECCE's walk
    range (issue 32: a positive at a score of 1e-8). The basic interval reflects the resamples' spread around the
    estimate; a statistic that scales with the count of one row in a resample (0, 1, 2, 3, ... times) has a long
    upper tail, which the reflection turns into a lower bound of 0 beside a p-value below 1e-15."""
    walk_range = ecce(y, p, sample_weight=w) * w.sum()
    residuals = np.abs(w * (y - p))
    top = int(np.argmax(residuals))
    share = residuals[top] / walk_range if walk_range > 0 else 0.0
    if share < _ONE_ROW_SHARE:
        return _interval_method("ecce_sigma")
    warn(f"one row (label {y[top]:g} at score {p[top]:.3g}) makes {share:.0%} of the ECCE of {what}: its ECCE / "
         "sigma scales with the count of that row in a bootstrap resample, so its interval is the percentile "
         "interval of the resamples (the basic one would reflect their long upper tail to a lower bound near 0)")  # fmt: skip
    return "percentile"


def _mce_method(y_true: ArrayLike, y_prob: ArrayLike, sample_weight: ArrayLike | None, masks: Any, name: Any) -> str:
    """The interval method of the MCE of score column ``name``: :func:`_method_of_walk` of its worst segment."""
    y, p, w = check_metric_inputs(y_true, y_prob, sample_weight)
    table = mce(y, p, segments=masks, sample_weight=w).table
    worst = int(table.loc[table["ecce_sigma"].idxmax(), "segment"]) if table["ecce_sigma"].notna().any() else 0
    rows = np.asarray(masks, dtype=bool)[:, worst]
    return _method_of_walk(y[rows], p[rows], w[rows], f"the worst segment of score column {name!r}, the MCE")


#: A share of the ECCE from one row (:func:`_one_row_share`) from which the MCE interval is the percentile interval.
_ONE_ROW_SHARE = 0.5

#: The metrics that are not means: non-negative, biased upwards, and given basic (bias-corrected) bootstrap intervals.
BIASED_METRICS = ("ece", "ecce", "ecce_sigma", "ecce_sigma_scale", "mce_sigma", "f_rce")


def _interval_method(metric: str) -> str:
    """The bootstrap interval of a metric of the summary: basic for :data:`BIASED_METRICS`, percentile for the
    means, by coverage of known values (``benchmarks/results/bootstrap_intervals.md``)."""
    return "basic" if metric in BIASED_METRICS else "percentile"


def _check_mapping(name: str, scores: Any) -> None:
    if not isinstance(scores, Mapping):
        raise TypeError(
            f"{name} must be a mapping of names to score arrays, e.g. {{'model': p}}; got {type(scores).__name__}"
        )
    if not scores:
        raise ValueError(f"{name} must name at least one score column; got none")


def regression_summary(
    y_true: ArrayLike,
    y_preds: Mapping[str, ArrayLike],
    *,
    sample_weight: ArrayLike | None = None,
    segments: Any = None,
) -> pd.DataFrame:
    """Every core metric of real-valued predictions, for each named prediction column.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Real outcomes, finite.
    y_preds : mapping of str to array-like of shape (n_samples,)
        Prediction columns (finite real numbers) by name.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    segments : Segments or array-like of bool of shape (n_samples, n_segments), default=None
        Segments; adds ``mce_sigma``, ``mce_absolute`` and ``mce_pvalue`` (:func:`mcal.metrics.mce` with
        ``outcome="regression"``) when given.

    Returns
    -------
    table : DataFrame of shape (len(y_preds), n_metrics)
        One row per prediction column (index = names); columns ``mse``, ``mae``, ``mean_prediction``,
        ``mean_outcome`` (weighted means), ``ecce`` (in the outcome's units), ``ecce_sigma_scale`` (ECCE over its
        successive-differences sigma), ``ecce_pvalue``, and the MCE columns when segments are given.

    Raises
    ------
    ValueError
        If ``y_preds`` is empty.
    TypeError
        If ``y_preds`` is not a mapping.

    Examples
    --------
    >>> table = regression_summary([1.0, 2.0, 4.0], {"model": [1.0, 3.0, 2.0]})
    >>> table.loc["model", ["mse", "mae"]].round(4).tolist()
    [1.6667, 1.0]
    """
    _check_mapping("y_preds", y_preds)
    y = check_y_real(y_true, "y_true")
    w = check_sample_weight(sample_weight, y.shape[0])
    regression: dict[str, Any] = {"sample_weight": w, "outcome": "regression"}
    rows = {}
    for name, p in y_preds.items():
        row = {
            "mse": mse(y, p, sample_weight=w),
            "mae": mae(y, p, sample_weight=w),
            "mean_prediction": float(np.dot(w, check_y_real(p, f"y_preds[{name!r}]")) / w.sum()),
            "mean_outcome": float(np.dot(w, y) / w.sum()),
            "ecce": ecce(y, p, **regression),
        }
        row["ecce_sigma_scale"] = ecce_in_sigmas(y, p, **regression)
        row["ecce_pvalue"] = ecce_pvalue(y, p, **regression)
        if segments is not None:
            result = mce(y, p, segments=segments, **regression)
            row |= {"mce_sigma": result.mce_sigma, "mce_absolute": result.mce_absolute, "mce_pvalue": result.pvalue}
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")

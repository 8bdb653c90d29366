"""The metrics of :mod:`mcal.metrics` on dask collections: same names, signatures and values.

Every function takes ``y_true``, ``y_prob`` (and ``sample_weight``, ``field``) as dask Arrays or Series with the
same partitions, and returns the value :mod:`mcal.metrics` returns on the concatenated data, up to the order of
floating-point additions (agreement to 1e-9 is tested). Nothing row-sized is gathered on the client, except
the feature columns of ``mce`` called with ``X`` but without ``segments`` (generating the segments needs them;
pass segments generated from a sample to avoid it):

- sums (log loss, Brier score, PCOC, ECE with equal-width bins, the ECCE scale sigma, F-RCE per field) are added
  up partition by partition;
- MSE and MAE of real outcomes are sums too; ``ecce``, ``ecce_sigma``, ``ecce_pvalue`` and ``mce`` take
  ``outcome="regression"`` as in :mod:`mcal.metrics` (the successive-differences scale joins neighbouring
  residuals across partitions);
- ECCE, MCE (over segments), ROC-AUC, average precision and the equal-weight ECE bins need the global score order: the rows are
  sorted by score with dask's distributed sort, each partition computes its cumulative sums, and the partitions
  are joined with prefix offsets.

Computations run on the current dask scheduler (the default ``distributed.Client`` when one is running).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal import metrics
from mcal._constraints import BINS, N_BINS, NON_NEGATIVE, OUTCOME, POSITIVE_INT, Instance, validate_params
from mcal._optional import import_optional
from mcal._shared.brownian import ECCE_SIGMA_CHANGED, brownian_range_sf, sigma_scale
from mcal._shared.mce import mce_result
from mcal._shared.per_value import value_rows, value_segments
from mcal._shared.segments import check_categorical_use
from mcal._shared.walks import join_successive_differences
from mcal.dask import _passes, _sorted
from mcal.metrics import MCEResult
from mcal.segments import Segments, from_masks, generate_segments

__all__ = [
    "brier_score",
    "calibration_summary",
    "ecce",
    "ecce_pvalue",
    "ecce_sigma",
    "ecce_std",
    "ece",
    "f_rce",
    "log_loss",
    "mae",
    "mce",
    "mse",
    "pcoc",
    "per_value_table",
    "pr_auc",
    "regression_summary",
    "roc_auc",
]


def _both_classes(pos: float, neg: float) -> None:
    if pos <= 0 or neg <= 0:
        only = "1 (all positive)" if neg <= 0 else "0 (all negative)"
        raise ValueError(f"y_true must contain both classes (with positive weight); got only class {only}")


# -- public metrics -------------------------------------------------------------------------------------------
_INPUTS = """    y_true : dask Array or Series of shape (n_samples,)
        Binary labels, 0/1 or bool.
    y_prob : dask Array or Series of shape (n_samples,)
        Probabilities in [0, 1], partitioned as ``y_true``.
    sample_weight : dask Array or Series of shape (n_samples,), default=None
        Non-negative weights, partitioned as ``y_true``."""


def _mirror(
    name: str,
    returns: str,
    *,
    parameters: str = "",
    raises: str = "",
    notes: str = "",
    inputs: str = _INPUTS,
) -> Any:
    """Document a dask metric from the in-memory one it mirrors: its summary line, the shared inputs, the rest,
    the ``ValueError`` it raises of its own (``raises``; the common errors are on the errors page of the user
    guide), and the mirrored docstring's References (the metric's source)."""

    def decorate(func: Any) -> Any:
        summary = getattr(metrics, name).__doc__.strip().splitlines()[0]
        references = _references(getattr(metrics, name).__doc__)
        own_raises = f"\n    Raises\n    ------\n    ValueError\n        {raises}\n" if raises else ""
        func.__doc__ = f"""{summary}

    Of dask collections; equals :func:`mcal.metrics.{name}` on the concatenated data up to the order of the
    floating-point additions.{notes}

    Parameters
    ----------
{inputs}{parameters}

    Returns
    -------
    {returns}
{own_raises}{references}    """
        return func

    return decorate


def _references(doc: str) -> str:
    """The References section of a numpydoc docstring (header and entries, with a blank line before), or ""."""
    lines = doc.splitlines()
    for i in range(len(lines) - 1):
        if lines[i].strip() == "References" and lines[i + 1].strip().startswith("---"):
            end = i + 2
            while end < len(lines) and not (end + 1 < len(lines) and lines[end + 1].strip().startswith("---")):
                end += 1
            body = "\n".join(lines[i:end]).rstrip()
            return f"\n{body}\n"
    return ""


@_mirror("log_loss", "loss : float\n        Weighted mean of ``-[y log p + (1 - y) log(1 - p)]`` in nats.")
def log_loss(y_true: Any, y_prob: Any, *, sample_weight: Any = None) -> float:
    s = _passes.sums(y_true, y_prob, sample_weight)
    return s.log_loss / s.w


@_mirror("brier_score", "score : float\n        Weighted mean of ``(p - y)^2``.")
def brier_score(y_true: Any, y_prob: Any, *, sample_weight: Any = None) -> float:
    s = _passes.sums(y_true, y_prob, sample_weight)
    return s.brier / s.w


@_mirror("pcoc", "pcoc : float\n        ``sum w p / sum w y``.", raises="If no row has a positive label.")
def pcoc(y_true: Any, y_prob: Any, *, sample_weight: Any = None) -> float:
    s = _passes.sums(y_true, y_prob, sample_weight)
    if s.wy <= 0:
        raise ValueError("y_true must contain a positive label with positive weight; PCOC is undefined without one")
    return s.wp / s.wy


_OUTCOME = """
    outcome : {"classification", "regression"}, default="classification"
        Binary labels with probabilities, or real outcomes with real-valued predictions (any finite numbers),
        as in :mod:`mcal.metrics`."""


@_mirror(
    "ecce_std", "sigma : float\n        ``sqrt(sum w^2 p (1 - p)) / sum w``, in probability units; for regression the "
    "successive-differences\n        estimate of Guy et al. (2025, eq. 6), in the outcome's units.",
    parameters=_OUTCOME,
    notes="""

    For regression the rows are sorted by prediction across the cluster (tied predictions in input order, as
    in memory); each partition sums the squared differences of its neighbouring residuals, and the pairs
    across partition boundaries are added on the client.""",
)  # fmt: skip
@validate_params({"outcome": OUTCOME})
def ecce_std(y_true: Any, y_prob: Any, *, sample_weight: Any = None, outcome: str = "classification") -> float:
    if outcome == "regression":
        return _sorted.regression_sigma(_passes.ordered(y_true, y_prob, sample_weight, outcome=outcome))
    s = _passes.sums(y_true, y_prob, sample_weight)
    return float(np.sqrt(s.variance) / s.w)


@_mirror(
    "ecce_sigma",
    "ecce_sigma : float\n        ECCE / sigma (:func:`ecce` over :func:`ecce_std`), unitless.",
    notes="\n\n    Warns FutureWarning in mcal 0.2, as :func:`mcal.metrics.ecce_sigma`: it returned sigma before.",
    parameters=_OUTCOME,
)  # fmt: skip
@validate_params({"outcome": OUTCOME})
def ecce_sigma(y_true: Any, y_prob: Any, *, sample_weight: Any = None, outcome: str = "classification") -> float:
    warnings.warn(ECCE_SIGMA_CHANGED, FutureWarning, stacklevel=2)
    return sigma_scale(ecce(y_true, y_prob, sample_weight=sample_weight, outcome=outcome),
                       ecce_std(y_true, y_prob, sample_weight=sample_weight, outcome=outcome))  # fmt: skip


@_mirror(
    "ece", "ece : float\n        In probability units.",
    parameters="""
    n_bins : int, default=10
        Number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins (one pass of sums), or equal-weight bins whose edges are the exact weighted quantiles
        of the scores (found on the score-sorted partitions), then the pass of sums.""",
)  # fmt: skip
@validate_params(BINS)
def ece(y_true: Any, y_prob: Any, *, sample_weight: Any = None, n_bins: int = 10, strategy: str = "uniform") -> float:
    if strategy == "uniform":
        bins: tuple = ("uniform", n_bins)
    else:
        bins = ("quantile", n_bins, *_sorted.quantile_steps(_passes.ordered(y_true, y_prob, sample_weight), n_bins))
    s = _passes.sums(y_true, y_prob, sample_weight, bins=bins)
    return float(np.abs(s.bins).sum() / s.w)


@_mirror(
    "ecce", "ecce : float\n        ``max_k C_k - min_k C_k`` with ``C_0 = 0``, in probability units (the outcome's "
    "units for\n        regression).", parameters=_OUTCOME,
    notes="""

    The rows are sorted by score across the cluster; each partition walks its own cumulative differences
    ``sum w (y - p)`` (read at the ends of tie blocks), and the partitions' extremes are joined with the sums of
    the partitions before them, which gives the range of the global walk exactly (Arrieta-Ibarra et al.,
    JMLR 23(351), 2022; MCGrad paper eq. 1).""",
)  # fmt: skip
@validate_params({"outcome": OUTCOME})
def ecce(y_true: Any, y_prob: Any, *, sample_weight: Any = None, outcome: str = "classification") -> float:
    ordered = _passes.ordered(y_true, y_prob, sample_weight, outcome=outcome)
    return _sorted.walk_range(ordered) / sum(s.pos + s.neg for s in ordered.stats)


@_mirror(
    "ecce_pvalue", "pvalue : float\n        ``P(R > ECCE / sigma)`` for the range R of Brownian motion on [0, 1].",
    parameters=_OUTCOME,
)  # fmt: skip
@validate_params({"outcome": OUTCOME})
def ecce_pvalue(y_true: Any, y_prob: Any, *, sample_weight: Any = None, outcome: str = "classification") -> float:
    if outcome == "regression":  # one sort serves both
        ordered = _passes.ordered(y_true, y_prob, sample_weight, outcome=outcome)
        stat = _sorted.walk_range(ordered) / sum(s.pos + s.neg for s in ordered.stats)
        return _ecce_pvalue(stat, _sorted.regression_sigma(ordered))
    return _ecce_pvalue(ecce(y_true, y_prob, sample_weight=sample_weight),
                        ecce_std(y_true, y_prob, sample_weight=sample_weight))  # fmt: skip


def _ecce_pvalue(stat: float, sigma: float) -> float:
    return float(brownian_range_sf(sigma_scale(stat, sigma))[0])


@_mirror(
    "roc_auc",
    "auc : float\n        Ties count one half.",
    raises="If ``y_true`` holds one class only (with positive weight).",
)
def roc_auc(y_true: Any, y_prob: Any, *, sample_weight: Any = None) -> float:
    ordered = _passes.ordered(y_true, y_prob, sample_weight)
    _both_classes(sum(s.pos for s in ordered.stats), sum(s.neg for s in ordered.stats))
    return _sorted.roc_auc(ordered)


@_mirror(
    "pr_auc",
    "ap : float\n        Average precision over the distinct scores.",
    raises="If ``y_true`` holds one class only (with positive weight).",
)
def pr_auc(y_true: Any, y_prob: Any, *, sample_weight: Any = None) -> float:
    ordered = _passes.ordered(y_true, y_prob, sample_weight)
    _both_classes(sum(s.pos for s in ordered.stats), sum(s.neg for s in ordered.stats))
    return _sorted.average_precision(ordered)


@_mirror(
    "f_rce", "f_rce : float\n        A fraction (MCNet paper eq. 4).",
    raises="If ``epsilon`` is 0 and a field has no positive label.",
    parameters="""
    field : dask Array or Series of shape (n_samples,)
        The field of each row (missing values form a field value of their own), partitioned as ``y_true``.
    epsilon : float, default=0.01
        Added to every label in the denominator.""",
)  # fmt: skip
@validate_params({"epsilon": NON_NEGATIVE})
def f_rce(y_true: Any, y_prob: Any, *, field: Any, sample_weight: Any = None, epsilon: float = 0.01) -> float:
    return _f_rce(_passes.sums(y_true, y_prob, sample_weight, field=field), epsilon)


def _f_rce(s: _passes.Sums, epsilon: float) -> float:
    t = s.fields
    denom = t["labels"].to_numpy() + epsilon * t["weight"].to_numpy()
    n_c = t["weight"].to_numpy()
    if np.any((n_c > 0) & (denom <= 0)):
        raise ValueError("f_rce is undefined for a field without positives when epsilon is 0; use epsilon > 0")
    with np.errstate(divide="ignore", invalid="ignore"):
        per_field = np.where(n_c > 0, np.abs(t["gap"].to_numpy()) / denom, 0.0)
    return float(np.dot(n_c, per_field) / s.w)


@_mirror(
    "mce", "result : MCEResult\n        As :func:`mcal.metrics.mce` (the segment sizes are counted on these rows).",
    raises="If ``segments`` is given without ``X``, ``categorical_features`` with ``segments`` or without ``X``,\n"
    "        the segments include masks (they belong to fixed rows of another table), or no segment has positive weight.",
    parameters="""
    X : dask DataFrame or 2-D Array of shape (n_samples, n_features), default=None
        The segment features, partitioned as ``y_true``.
    segments : Segments, default=None
        Generated segment definitions (:func:`mcal.segments.generate_segments`, e.g. on a sample of the
        features), evaluated on every partition of ``X``. When None and ``X`` is given, they are generated from
        ``X`` gathered on the client (the feature columns only), exactly as :func:`mcal.metrics.mce` would.
        With neither, the only segment is the whole table.
    categorical_features : "from_dtype", None, or 1-D array-like of int, bool or str, default="from_dtype"
        Which columns of ``X`` the generated segments treat as categorical, as in :func:`mcal.metrics.mce`; only
        when the segments are generated from ``X`` (not with ``segments``).
    outcome : {"classification", "regression"}, default="classification"
        As in :func:`mcal.metrics.mce`: for real outcomes each segment's sigma is the successive-differences
        estimate within the segment, its pairs across partition boundaries joined on the client.""",
    notes="""

    The rows, with the segment features, are sorted by score across the cluster. Each partition evaluates the
    segment definitions on its own rows (:meth:`mcal.segments.Segments.apply`) and walks every segment's
    cumulative differences; the partitions are joined with per-segment prefix offsets, which gives each
    segment's exact ECCE (MCGrad paper eq. 2).""",
)  # fmt: skip
@validate_params({"segments": [None, Instance(Segments)], "outcome": OUTCOME})
def mce(
    y_true: Any,
    y_prob: Any,
    *,
    X: Any = None,
    segments: Any = None,
    sample_weight: Any = None,
    categorical_features: Any = "from_dtype",
    outcome: str = "classification",
) -> MCEResult:
    if segments is not None and X is None:
        raise ValueError("X must hold the segment features when segments are given; got None")
    check_categorical_use(categorical_features, X, segments)
    dask = import_optional("dask")
    if segments is None:
        segments = (
            generate_segments(X.compute(), categorical_features=categorical_features)
            if X is not None
            else from_masks(np.ones((1, 1), bool), ["all"])
        )
    ordered = _passes.ordered(y_true, y_prob, sample_weight, X, outcome)
    stats = ordered.stats
    total = sum(s.pos + s.neg for s in stats)
    global_ecce = _sorted.walk_range(ordered) / total
    regression = outcome == "regression"
    if X is None:
        walks = np.stack([_whole_partition_walk(s, regression) for s in stats])
    else:
        features = _feature_names(X)
        task = dask.delayed(_sorted.partition_walks, pure=True)
        walks = np.stack(dask.compute(*[task(b, segments, features) for b in ordered.blocks]))
    weight, variance = walks[:, 3].sum(axis=0), walks[:, 4].sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ecce = np.where(weight > 0, _sorted.segment_ranges(walks) / weight, np.nan)
        mean_prediction = walks[:, 6].sum(axis=0) / weight
        means = mean_prediction, mean_prediction + walks[:, 2].sum(axis=0) / weight  # sum w y = sum w p + walk
        if regression:
            sigma = join_successive_differences(walks[:, 7:], walks[:, 3], walks[:, 5] > 0)
            sigma = np.where(weight > 0, sigma, np.nan)
        else:
            sigma = np.where(weight > 0, np.sqrt(variance) / weight, np.nan)
    global_sigma = (
        _sorted.regression_sigma(ordered) if regression else float(np.sqrt(sum(s.variance for s in stats)) / total)
    )
    return mce_result(ecce, sigma, weight, global_ecce, segments=segments, sizes=walks[:, 5].sum(axis=0).astype(np.int64),
                      global_sigma=global_sigma,
                      rate=np.nan if regression else sum(s.pos for s in stats) / total, means=means)  # fmt: skip


@_mirror(
    "per_value_table",
    "result : mcal.metrics.PerValueTable\n        As :func:`mcal.metrics.per_value_table` returns it.",
    parameters="""
    X : dask DataFrame of shape (n_samples, n_features)
        The features, partitioned as ``y_true``: gathered on the client (the feature columns only) to generate
        the segments of their values, and evaluated on every partition.
    categorical_features : "from_dtype", None, or 1-D array-like of int, bool or str, default="from_dtype"
        As in :func:`mcal.metrics.per_value_table`.
    max_values_per_feature : int or mapping of str to int, default=3
        As in :func:`mcal.metrics.per_value_table`.
    min_samples_per_value : int >= 1, default=10
        As in :func:`mcal.metrics.per_value_table`.
    outcome : {"classification", "regression"}, default="classification"
        As in :func:`mcal.metrics.per_value_table`.""",
    notes="""

    The values of all features are the segments of one :func:`mce` pass (one distributed sort by score).""",
)  # fmt: skip
@validate_params({"min_samples_per_value": POSITIVE_INT, "outcome": OUTCOME})
def per_value_table(
    y_true: Any,
    y_prob: Any,
    *,
    X: Any,
    sample_weight: Any = None,
    categorical_features: Any = "from_dtype",
    max_values_per_feature: int | Mapping[str, int] = 3,
    min_samples_per_value: int = 10,
    outcome: str = "classification",
) -> metrics.PerValueTable:
    segments, spans = value_segments(X.compute(), categorical_features, max_values_per_feature)
    table = mce(y_true, y_prob, X=X, segments=segments, sample_weight=sample_weight, outcome=outcome).table
    return metrics.PerValueTable(*value_rows(table, spans, min_samples_per_value), min_samples_per_value)


_REAL_INPUTS = """    y_true : dask Array or Series of shape (n_samples,)
        Observed outcomes, finite.
    y_pred : dask Array or Series of shape (n_samples,)
        Predictions, finite, partitioned as ``y_true``.
    sample_weight : dask Array or Series of shape (n_samples,), default=None
        Non-negative weights, partitioned as ``y_true``."""


@_mirror(
    "mse", "mse : float\n        ``sum w (y - p)^2 / sum w``, in squared units of the outcome.", inputs=_REAL_INPUTS
)
def mse(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    total = _passes.errors(y_true, y_pred, sample_weight)
    return float(total[2] / total[1])


@_mirror("mae", "mae : float\n        ``sum w |y - p| / sum w``, in units of the outcome.", inputs=_REAL_INPUTS)
def mae(y_true: Any, y_pred: Any, *, sample_weight: Any = None) -> float:
    total = _passes.errors(y_true, y_pred, sample_weight)
    return float(total[3] / total[1])


def _whole_partition_walk(s: _sorted.PartStats, regression: bool) -> NDArray[np.float64]:
    """A partition's summary as :func:`mcal.dask._sorted.partition_walks` gives it for one segment of every row."""
    rows = [s.top, s.bottom, s.total, s.pos + s.neg, s.variance, s.n, s.score_sum]
    if regression:
        rows += list(s.differences) if s.n else [0.0] * 5
    return np.array(rows)[:, None]


def _feature_names(X: Any) -> list[str]:
    dd = import_optional("dask.dataframe")
    if isinstance(X, dd.Series):
        return [str(X.name)]
    if isinstance(X, dd.DataFrame):
        return [str(c) for c in X.columns]
    return [f"x{j}" for j in range(X.shape[1])]


@validate_params({"n_bins": N_BINS})
def calibration_summary(
    y_true: Any, y_probs: Mapping[str, Any], *, sample_weight: Any = None, field: Any = None, n_bins: int = 10
) -> pd.DataFrame:
    """Every core metric for each named score column of dask collections; as :func:`mcal.metrics.calibration_summary`.

    Parameters
    ----------
    y_true : dask Array or Series of shape (n_samples,)
        Binary labels with both classes present.
    y_probs : mapping of str to dask Array or Series of shape (n_samples,)
        Score columns (probabilities in [0, 1]) by name, partitioned as ``y_true``.
    sample_weight, field : dask Array or Series of shape (n_samples,), default=None
        Weights; the field adds the ``f_rce`` column.
    n_bins : int, default=10
        Equal-width bins of the ECE.

    Returns
    -------
    table : DataFrame of shape (len(y_probs), n_metrics)
        The columns of :func:`mcal.metrics.calibration_summary`, with the same values.

    Raises
    ------
    ValueError
        If ``y_probs`` is empty, or ``y_true`` holds one class only (with positive weight).
    """
    if not y_probs:
        raise ValueError("y_probs must name at least one score column; got none")
    rows = {}
    for name, p in y_probs.items():
        s = _passes.sums(y_true, p, sample_weight, field=field, bins=("uniform", n_bins))
        ordered = _passes.ordered(y_true, p, sample_weight)
        _both_classes(s.wy, s.w - s.wy)
        sigma = float(np.sqrt(s.variance) / s.w)
        stat = _sorted.walk_range(ordered) / s.w
        row = {
            "log_loss": s.log_loss / s.w, "brier_score": s.brier / s.w, "roc_auc": _sorted.roc_auc(ordered),
            "pr_auc": _sorted.average_precision(ordered), "ece": float(np.abs(s.bins).sum() / s.w), "ecce": stat,
            "ecce_sigma_scale": sigma_scale(stat, sigma), "ecce_pvalue": _ecce_pvalue(stat, sigma),
            "pcoc": s.wp / s.wy,
        }  # fmt: skip
        if field is not None:
            row["f_rce"] = _f_rce(s, 0.01)
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def regression_summary(y_true: Any, y_preds: Mapping[str, Any], *, sample_weight: Any = None) -> pd.DataFrame:
    """Every core metric of real-valued predictions, for each named column of dask collections; as
    :func:`mcal.metrics.regression_summary` without segments (:func:`mce` with ``outcome="regression"`` adds them).

    Parameters
    ----------
    y_true : dask Array or Series of shape (n_samples,)
        Real outcomes, finite.
    y_preds : mapping of str to dask Array or Series of shape (n_samples,)
        Prediction columns (finite real numbers) by name, partitioned as ``y_true``.
    sample_weight : dask Array or Series of shape (n_samples,), default=None
        Non-negative weights.

    Returns
    -------
    table : DataFrame of shape (len(y_preds), 7)
        The columns of :func:`mcal.metrics.regression_summary` (``mse``, ``mae``, ``mean_prediction``,
        ``mean_outcome``, ``ecce``, ``ecce_sigma_scale``, ``ecce_pvalue``), with the same values up to the order
        of floating-point additions.

    Raises
    ------
    ValueError
        If ``y_preds`` is empty.
    """
    if not y_preds:
        raise ValueError("y_preds must name at least one prediction column; got none")
    rows = {}
    for name, p in y_preds.items():
        total = _passes.errors(y_true, p, sample_weight)
        ordered = _passes.ordered(y_true, p, sample_weight, outcome="regression")
        stat = _sorted.walk_range(ordered) / sum(s.pos + s.neg for s in ordered.stats)
        sigma = _sorted.regression_sigma(ordered)
        rows[name] = {
            "mse": total[2] / total[1], "mae": total[3] / total[1], "mean_prediction": total[4] / total[1],
            "mean_outcome": total[5] / total[1], "ecce": stat, "ecce_sigma_scale": sigma_scale(stat, sigma),
            "ecce_pvalue": _ecce_pvalue(stat, sigma),
        }  # fmt: skip
    return pd.DataFrame.from_dict(rows, orient="index")

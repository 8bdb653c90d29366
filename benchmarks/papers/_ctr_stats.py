"""Metrics, paired bootstrap and noise floor of ``paper_mcnet_ctr.py``.

Benchmark scripts only. Point estimates come from ``mcal.metrics``; the bootstrap recomputes F-RCE (eq. 4 of
the MCNet paper, epsilon 0.01), log loss and the per-field PCOC STD from per-field weighted sums so that all
replicates are one matrix product, and :func:`check_against_mcal` ties those sums to ``mcal.metrics``.
"""

from __future__ import annotations

import warnings

import numpy as np

from mcal import CalibrationWarning
from mcal import metrics as M

#: Bootstrap replicates (Poisson(1) row weights, drawn independently per seed; the same weights for every method
#: of a seed, so differences are paired) and label redraws of the noise floor.
N_BOOT = 200
N_REDRAW = 200
EPS = np.finfo(np.float64).eps  # scikit-learn's clip in mcal.metrics.log_loss
F_RCE_EPSILON = 0.01


def field_of(split) -> np.ndarray:
    return split.frame[split.field].astype(str).to_numpy()


def metrics(y, p, field) -> dict[str, float]:
    """The MCNet paper's columns (PCOC, F-RCE in %, AUC, log loss) and the per-field PCOC with its STD."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        per_field = M.field_pcoc(y, p, field=field)
    return {
        "pcoc": M.pcoc(y, p),
        "f_rce": 100 * M.f_rce(y, p, field=field),
        "auc": M.roc_auc(y, p),
        "log_loss": M.log_loss(y, p),
        "pcoc_field_std": per_field.std,
        **{f"pcoc[{k}]": float(v) for k, v in per_field.per_field.items()},
    }


class Resampler:
    """Per-field weighted sums of one seed's test rows under ``n_boot`` Poisson(1) weightings."""

    def __init__(self, y: np.ndarray, field: np.ndarray, n_boot: int, seed: int):
        self.codes, self.uniques = np.unique(field, return_inverse=True)[1], np.unique(field)
        rng = np.random.default_rng(10_000 + seed)
        self.W = rng.poisson(1.0, (n_boot, y.shape[0])).astype(np.float64)
        self.y = y.astype(np.float64)
        self.onehot = np.eye(len(self.uniques))[self.codes]  # (n, k)
        self.n_g = self.W @ self.onehot  # (B, k)
        self.y_g = self.W @ (self.onehot * self.y[:, None])

    def stats(self, p: np.ndarray) -> dict[str, np.ndarray]:
        """F-RCE (%), log loss and per-field PCOC STD of scores ``p`` under every weighting, shape (n_boot,)."""
        p_g = self.W @ (self.onehot * p[:, None])
        frce = (
            100 * (np.abs(self.y_g - p_g) / (self.y_g + F_RCE_EPSILON * self.n_g) * self.n_g).sum(1) / self.n_g.sum(1)
        )
        q = np.clip(p, EPS, 1 - EPS)
        ll = self.W @ -(self.y * np.log(q) + (1 - self.y) * np.log1p(-q)) / self.W.sum(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(self.y_g > 0, p_g / self.y_g, np.nan)
        return {"f_rce": frce, "log_loss": ll, "pcoc_field_std": np.nanstd(ratio, axis=1, ddof=1)}


def check_against_mcal(y, p, field) -> None:
    """The bootstrap's formulas at unit weights equal ``mcal.metrics`` (else the intervals would be of something
    else): raise ``AssertionError`` otherwise."""
    one = Resampler(y, field, 1, 0)
    one.W[:] = 1.0
    one.n_g, one.y_g = one.W @ one.onehot, one.W @ (one.onehot * one.y[:, None])
    got, want = one.stats(p), metrics(y, p, field)
    for key in ("f_rce", "log_loss", "pcoc_field_std"):
        if not np.isclose(got[key][0], want[key], rtol=1e-6, atol=1e-9, equal_nan=True):
            raise AssertionError(f"bootstrap {key} {got[key][0]} differs from mcal.metrics {want[key]}")


def boot_stats(
    preds: dict[str, np.ndarray], y: np.ndarray, field: np.ndarray, n_boot: int, seed: int
) -> dict[str, dict[str, np.ndarray]]:
    """``{method: {metric: values under each of the seed's n_boot weightings}}`` for every prediction vector."""
    resampler = Resampler(y, field, n_boot, seed)
    return {name: resampler.stats(p) for name, p in preds.items()}


def paired_difference(per_seed: list[dict], point: float, a: str, b: str, metric: str) -> dict[str, float]:
    """Mean over seeds of metric(a) - metric(b): ``point`` (from the metric rows) with a 95 % percentile interval
    of the paired bootstrap, each replicate averaging the seeds' differences under their own weightings."""
    diffs = np.mean([s[a][metric] - s[b][metric] for s in per_seed], axis=0)
    lo, hi = np.nanpercentile(diffs, [2.5, 97.5])
    return {"diff": float(point), "lo": float(lo), "hi": float(hi)}


def noise_floor(p: np.ndarray, field: np.ndarray, n_redraw: int, seed: int) -> dict[str, float]:
    """F-RCE (%) of scores ``p`` against labels redrawn from ``p`` itself (the scores exactly true): mean and 95th
    percentile over ``n_redraw`` redraws."""
    codes = np.unique(field, return_inverse=True)[1]
    onehot = np.eye(codes.max() + 1)[codes]
    rng = np.random.default_rng(20_000 + seed)
    Y = (rng.random((n_redraw, p.shape[0])) < p).astype(np.float64)
    y_g, p_g, n_g = Y @ onehot, p @ onehot, onehot.sum(0)
    frce = 100 * (np.abs(y_g - p_g) / (y_g + F_RCE_EPSILON * n_g) * n_g).sum(1) / n_g.sum()
    return {"mean": float(frce.mean()), "q95": float(np.quantile(frce, 0.95))}

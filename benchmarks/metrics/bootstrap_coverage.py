"""Coverage of mcal.metrics.bootstrap intervals of metrics whose population value is known.

    PYTHONPATH=src python benchmarks/metrics/bootstrap_coverage.py [--reps 150] [--n-resamples 200] [--sizes 300,3000]
    PYTHONPATH=src python benchmarks/metrics/bootstrap_coverage.py --quick      # tiny, for tests/benchmarks/test_quick.py

Data (seeded): scores p ~ U(0, 1) and labels y ~ Bernoulli(p), so the scores are calibrated. Unweighted, and with
weight 10 on the rows with p < 0.2 and 1 elsewhere (the weighted population value differs from the unweighted one,
so an interval that ignored the weights would miss it). Population values, by integration over p: Brier score
E[w p(1-p)] / E[w], log loss E[w h(p)] / E[w] with h the binary entropy in nats, ROC-AUC the weighted probability
that a positive outranks a negative, PCOC 1, ECE 0 (a calibrated model; the ECE estimate is biased upwards, so its
interval is not expected to cover 0: reported to show that). For each replicate data set every metric gets a 95%
percentile interval from ``--n-resamples`` resamples; the basic interval is derived from the same resamples
(2 * estimate - high, 2 * estimate - low). Coverage is the share of replicates whose interval holds the
population value; its binomial standard error at 0.95 is sqrt(0.95 * 0.05 / reps).
Writes benchmarks/results/bootstrap_coverage.{md,csv}; OMP_NUM_THREADS=1 (set below).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd
from scipy import integrate

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import command_line, md_table, run_header, write_results

from mcal.metrics import bootstrap, brier_score, ece, log_loss, pcoc, roc_auc

SEED = 2026
LEVEL = 0.95


def weight(p: np.ndarray | float) -> np.ndarray | float:
    return np.where(np.asarray(p) < 0.2, 10.0, 1.0)


def _mean(f, weighted: bool) -> float:
    """E[w f(p)] / E[w] for p ~ U(0, 1)."""
    w = (lambda p: float(weight(p))) if weighted else (lambda p: 1.0)
    top = integrate.quad(lambda p: w(p) * f(p), 0, 1, points=[0.2])[0]
    return top / integrate.quad(w, 0, 1, points=[0.2])[0]


def _auc(weighted: bool) -> float:
    """P(score of a positive > score of a negative), rows weighted: positives have density w(a) a, negatives
    w(b) (1 - b)."""
    w = (lambda p: float(weight(p))) if weighted else (lambda p: 1.0)
    below = lambda a: integrate.quad(lambda b: w(b) * (1 - b), 0, a, points=[0.2] if a > 0.2 else None)[0]
    top = integrate.quad(lambda a: w(a) * a * below(a), 0, 1, points=[0.2])[0]
    pos = integrate.quad(lambda a: w(a) * a, 0, 1, points=[0.2])[0]
    neg = integrate.quad(lambda b: w(b) * (1 - b), 0, 1, points=[0.2])[0]
    return top / (pos * neg)


def population_values(weighted: bool) -> dict[str, float]:
    entropy = lambda p: -(p * np.log(p) + (1 - p) * np.log1p(-p)) if 0 < p < 1 else 0.0
    return {
        "brier_score": _mean(lambda p: p * (1 - p), weighted),
        "log_loss": _mean(entropy, weighted),
        "roc_auc": _auc(weighted),
        "pcoc": 1.0,
        "ece": 0.0,
    }


METRICS = {
    "brier_score": brier_score,
    "log_loss": log_loss,
    "roc_auc": roc_auc,
    "pcoc": pcoc,
    "ece": partial(ece, n_bins=10),
}


def run(sizes: list[int], reps: int, n_resamples: int) -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    rows = []
    for weighted in (False, True):
        truth = population_values(weighted)
        for n in sizes:
            for rep in range(reps):
                p = rng.uniform(0, 1, n)
                y = (rng.uniform(size=n) < p).astype(float)
                w = weight(p) if weighted else None
                seed = int(rng.integers(2**32))
                for name, metric in METRICS.items():
                    start = time.perf_counter()
                    res = bootstrap(
                        metric,
                        y,
                        p,
                        sample_weight=w,
                        n_resamples=n_resamples,
                        confidence_level=LEVEL,
                        random_state=seed,
                    )
                    basic = (2 * res.estimate - res.high, 2 * res.estimate - res.low)
                    rows.append(
                        {
                            "metric": name,
                            "weighted": weighted,
                            "n": n,
                            "rep": rep,
                            "truth": truth[name],
                            "estimate": res.estimate,
                            "low": res.low,
                            "high": res.high,
                            "basic_low": basic[0],
                            "basic_high": basic[1],
                            "seconds": time.perf_counter() - start,
                        }
                    )
    return pd.DataFrame(rows)


def summarize(raw: pd.DataFrame) -> pd.DataFrame:
    raw = raw.assign(
        percentile=(raw["low"] <= raw["truth"]) & (raw["truth"] <= raw["high"]),
        basic=(raw["basic_low"] <= raw["truth"]) & (raw["truth"] <= raw["basic_high"]),
        width=raw["high"] - raw["low"],
    )
    table = raw.groupby(["metric", "weighted", "n"], sort=False).agg(
        truth=("truth", "first"),
        coverage_percentile=("percentile", "mean"),
        coverage_basic=("basic", "mean"),
        mean_width=("width", "mean"),
        mean_seconds=("seconds", "mean"),
        reps=("rep", "count"),
    )
    return table.reset_index()


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=150)
    parser.add_argument("--n-resamples", type=int, default=200)
    parser.add_argument("--sizes", default="300,3000")
    parser.add_argument("--quick", action="store_true", help="3 replicates of 100 rows, 20 resamples; no files")
    args = parser.parse_args(argv)
    sizes, reps, n_resamples = (
        ([100], 3, 20) if args.quick else ([int(s) for s in args.sizes.split(",")], args.reps, args.n_resamples)
    )
    raw = run(sizes, reps, n_resamples)
    table = summarize(raw)
    if args.quick:
        return table
    se = np.sqrt(LEVEL * (1 - LEVEL) / reps)
    header = run_header(
        "Coverage of bootstrap intervals on metrics",
        [SEED],
        {
            "command": command_line(__file__, argv),
            "design": f"{reps} replicate data sets per (metric, weighting, n); {n_resamples} resamples; level {LEVEL}; "
            "OMP_NUM_THREADS=1",
        },
    )
    sections = [
        "## Coverage of the population value\n\n"
        f"Nominal {LEVEL}; binomial standard error of a coverage at the nominal rate: {se:.3f}. ECE's population "
        "value is 0 (the scores are calibrated): its estimate is biased upwards, so the percentile interval never "
        "covers 0, as the bootstrap docstring says; the basic interval, reflected around the estimate, reaches below "
        "0 (a value ECE cannot take) and holds 0 in part of the data sets for that reason only.\n\n" + md_table(table),
    ]
    write_results("bootstrap_coverage", header, sections, raw)
    print(md_table(table))
    return table


if __name__ == "__main__":
    main()

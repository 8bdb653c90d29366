"""Build time and file size of the HTML report as the rows grow, against computing its metrics alone.

Seeded synthetic data: scores from a Beta(2, 5), labels drawn from a distorted version of them (so the report has
something to show), a field of 50 values, random weights, and five features (four categorical, one numerical)
whose generated segments (depth 3, at most 1000) feed the MCE section. For each size the script times, in the same
run: ``calibration_summary`` alone (the metrics every report needs: the floor), ``mce`` on every score column (the
other large computation), and ``make_report`` (all of it plus the figures and the HTML), and records the report's
size. Writes ``benchmarks/results/report_scale.md`` and ``.csv``.

    PYTHONPATH=src python benchmarks/report/report_scale.py [--quick]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, logit

import mcal
from mcal.metrics import calibration_summary, mce
from mcal.report import make_report
from mcal.segments import generate_segments

RESULTS = Path(__file__).resolve().parents[1] / "results"
SEED = 0


def make_data(n: int, n_scores: int, rng: np.random.Generator) -> tuple:
    X = pd.DataFrame({f"c{k}": rng.integers(0, 3 + 4 * k, n).astype(str) for k in range(4)})
    X["x"] = rng.normal(size=n)
    p = rng.beta(2.0, 5.0, n)
    y = (rng.uniform(size=n) < expit(0.7 * logit(p) + 0.2)).astype(float)
    scores = {"base": p}
    for k in range(1, n_scores):
        scores[f"model_{k}"] = expit((1 + 0.1 * k) * logit(p) + 0.05 * k)
    field = rng.integers(0, 50, n)
    w = rng.uniform(0.5, 2.0, n)
    return y, scores, field, w, X


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run(sizes: list[int], n_scores_list: list[int], repeats: int) -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            for n_scores in n_scores_list:
                y, scores, field, w, X = make_data(n, n_scores, rng)
                path = Path(tmp) / f"report_{n}_{n_scores}.html"
                segs = generate_segments(X)
                metrics_s = best_of(repeats, lambda: calibration_summary(y, scores, sample_weight=w, field=field))
                mce_s = best_of(repeats, lambda: [mce(y, p, segments=segs, sample_weight=w) for p in scores.values()])
                report_s = best_of(
                    repeats, lambda: make_report(y, scores, path=path, X=X, field=field, sample_weight=w)
                )
                rows.append(
                    {
                        "rows": n,
                        "score_columns": n_scores,
                        "segments": segs.n_segments,
                        "metrics_only_s": round(metrics_s, 3),
                        "mce_only_s": round(mce_s, 3),
                        "report_s": round(report_s, 3),
                        "report_over_metrics_plus_mce": round(report_s / (metrics_s + mce_s), 2),
                        "report_mb": round(path.stat().st_size / 1e6, 3),
                    }
                )
                print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write(table: pd.DataFrame, repeats: int) -> None:
    RESULTS.mkdir(exist_ok=True)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    header = [
        "# HTML report: build time and size against the number of rows",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"- mcal {mcal.__version__}, git commit {git_commit()}",
        f"- machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, "
        f"numpy {np.__version__}",
        f"- seed {SEED}; best of {repeats} runs per cell; weights, a 50-value field and 5 segment features in every run",
        f"- peak resident memory of the whole run: {peak_mb:.0f} MB",
        "",
        "`metrics_only_s` is `calibration_summary` alone and `mce_only_s` is `mce` on every score column (on segments",
        "generated once): what any report must compute. `report_s` is `make_report` (segment generation, the same",
        "metrics and MCE, reliability intervals, the cumulative curve, the SVG figures and the HTML), in the same run;",
        "`report_over_metrics_plus_mce` is the ratio. The file size stays flat in the rows because every figure is",
        "drawn from binned or thinned summaries.",
        "",
    ]
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    (RESULTS / "report_scale.md").write_text("\n".join(header + lines) + "\n")
    table.to_csv(RESULTS / "report_scale.csv", index=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one run each (a smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        sizes, n_scores_list, repeats = [10_000], [1], 1
    else:
        sizes, n_scores_list, repeats = [10_000, 100_000, 1_000_000], [1, 3], 3
    table = run(sizes, n_scores_list, repeats)
    if not args.quick:
        write(table, repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())

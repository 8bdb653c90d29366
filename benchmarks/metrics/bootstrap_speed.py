"""Time of the bootstrap intervals of ``mcal evaluate --ci``: resamples as count matrices against one call per resample.

    PYTHONPATH=src python benchmarks/metrics/bootstrap_speed.py [--sizes 100000,1000000] [--n-resamples 200]
    PYTHONPATH=src python benchmarks/metrics/bootstrap_speed.py --quick      # tiny, for tests/benchmarks/test_quick.py

Data (seeded): scores p ~ U(0, 1), labels y ~ Bernoulli(p), weights 10 where p < 0.2 and 1 elsewhere, a field of 5
values and two segment features (a of 3 values, b of 5). Timed, in one process, for each size:

- ``summary_intervals``: the metric table of ``mcal evaluate --ci`` (log loss, Brier score, ROC-AUC, PR-AUC, ECE,
  ECCE, ECCE / sigma, PCOC, F-RCE; ``--n-resamples``), with the metrics on count matrices (mcal's way);
- the same metrics called once per resample on the resampled rows (the previous implementation), on fewer
  resamples (``--old-resamples``; its time grows linearly with them) and scaled to ``--n-resamples``; both draw
  the same resamples, and the intervals of the two agree to float64 rounding on those resamples (column
  ``max_interval_diff``);
- ``mcal evaluate --ci`` end to end (read, metrics, intervals) on a Parquet file, and with ``--segments a,b``
  (adds the MCE and the worst segments' intervals).

Times are CPU seconds of this process (``time.process_time``) and wall seconds: the machine is shared, and its
load inflates wall time. OMP_NUM_THREADS=1 (set below). Writes benchmarks/results/bootstrap_speed.{md,csv}.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import command_line, md_table, run_header, write_results

from mcal.cli import main as mcal_main
from mcal.metrics import brier_score, ecce, ece, f_rce, log_loss, pcoc, pr_auc, roc_auc, summary_intervals
from mcal.metrics._bootstrap import bootstrap_metrics
from mcal.metrics._cumulative import ecce_in_sigmas

SEED = 2026


def make_data(n: int, seed: int = SEED) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, n)
    return pd.DataFrame({
        "p": p, "y": (rng.uniform(size=n) < p).astype(int), "w": np.where(p < 0.2, 10.0, 1.0),
        "f": rng.integers(0, 5, n).astype(str), "a": rng.choice(["x", "y", "z"], n), "b": rng.integers(0, 5, n),
    })  # fmt: skip


def _per_resample(metric):
    """The metric behind a wrapper that the count-matrix forms do not know: it is called once per resample."""
    return lambda y, p, *, sample_weight, **kw: metric(y, p, sample_weight=sample_weight, **kw)


def _metrics(per_resample: bool) -> dict:
    metrics = {"log_loss": log_loss, "brier_score": brier_score, "roc_auc": roc_auc, "pr_auc": pr_auc,
               "ece": partial(ece, n_bins=10), "ecce": ecce, "ecce_sigma": ecce_in_sigmas, "pcoc": pcoc}  # fmt: skip
    out = {name: (_per_resample(fn) if per_resample else fn, []) for name, fn in metrics.items()}
    out["f_rce"] = (_per_resample(f_rce) if per_resample else f_rce, ["field"])
    return out


def _timed(fn):
    cpu, wall = time.process_time(), time.perf_counter()
    result = fn()
    return result, time.process_time() - cpu, time.perf_counter() - wall


def _compare(df: pd.DataFrame, n_resamples: int) -> tuple[float, float, float]:
    """CPU and wall seconds of the per-resample path on ``n_resamples``, and the largest difference of its
    interval bounds from the count-matrix path's on the same resamples."""
    options = {"sample_weight": df["w"].to_numpy(), "row_args": {"field": df["f"].to_numpy()},
               "n_resamples": n_resamples, "random_state": 0}  # fmt: skip
    y, p = df["y"].to_numpy(), df["p"].to_numpy()
    old, cpu, wall = _timed(lambda: bootstrap_metrics(_metrics(True), y, p, **options))
    new = bootstrap_metrics(_metrics(False), y, p, **options)
    diff = max(abs(getattr(old[k], e) - getattr(new[k], e)) for k in old for e in ("low", "high"))
    return cpu, wall, diff


def _cli(path: Path, *extra: str) -> tuple[float, float]:
    argv = ["evaluate", str(path), "--score-col", "p", "--label-col", "y", "--weight-col", "w", "--ci", *extra]
    with contextlib.redirect_stdout(io.StringIO()):
        status, cpu, wall = _timed(lambda: mcal_main(argv))
    if status != 0:
        raise RuntimeError(f"mcal {' '.join(argv)} exited {status}")
    return cpu, wall


def run(sizes: list[int], n_resamples: int, old_resamples: int, segments_up_to: int) -> pd.DataFrame:
    rows = []
    for n in sizes:
        df = make_data(n)
        options = {"sample_weight": df["w"].to_numpy(), "field": df["f"].to_numpy(), "n_resamples": n_resamples}
        _, cpu, wall = _timed(lambda: summary_intervals(df["y"].to_numpy(), {"p": df["p"].to_numpy()}, **options))
        old_cpu, old_wall, diff = _compare(df, old_resamples)
        scale = n_resamples / old_resamples
        row = {"n": n, "n_resamples": n_resamples, "table_cpu_s": cpu, "table_wall_s": wall,
               "per_resample_cpu_s": old_cpu * scale, "per_resample_wall_s": old_wall * scale,
               "speedup_cpu": old_cpu * scale / cpu, "max_interval_diff": diff}  # fmt: skip
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "scores.parquet"
            df.to_parquet(path, index=False)
            row["evaluate_ci_cpu_s"], row["evaluate_ci_wall_s"] = _cli(path, "--n-resamples", str(n_resamples))
            if n <= segments_up_to:
                row["evaluate_ci_segments_cpu_s"], row["evaluate_ci_segments_wall_s"] = _cli(
                    path, "--n-resamples", str(n_resamples), "--segments", "a,b"
                )
        rows.append(row)
        print(row, flush=True)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--n-resamples", type=int, default=200)
    parser.add_argument("--old-resamples", type=int, default=4, help="resamples of the per-resample path")
    parser.add_argument("--segments-up-to", type=int, default=100_000, help="largest size timed with --segments")
    parser.add_argument("--quick", action="store_true", help="2000 rows, 20 resamples; no files")
    args = parser.parse_args(argv)
    if args.quick:
        return run([2000], 20, 4, 2000)
    table = run([int(s) for s in args.sizes.split(",")], args.n_resamples, args.old_resamples, args.segments_up_to)
    header = run_header(
        "Time of the bootstrap intervals of mcal evaluate --ci",
        [SEED],
        {
            "command": command_line(__file__, argv),
            "design": f"{args.n_resamples} resamples; per-resample path timed on {args.old_resamples} and scaled; "
            "CPU seconds of this process and wall seconds; OMP_NUM_THREADS=1",
        },
    )
    sections = ["## Seconds per score column\n\n" + md_table(table)]
    write_results("bootstrap_speed", header, sections, table)
    print(md_table(table))
    return table


if __name__ == "__main__":
    main()

"""Speed of ``mcal.select_calibrator`` against one MCGrad fit on the same rows (issue 33).

The target: the whole selection (default candidates with features: identity, temperature, Platt, beta, histogram,
isotonic and MCGrad, each cross-fitted on 5 shared folds, the MCE of each over segments generated once, and the
chosen method refitted on all rows) takes at most 3x one ``MCGrad().fit`` on the same rows. Both run in this
process with their defaults (``random_state=0``), one after the other: MCGrad, the selection, MCGrad again; the
ratio divides by the mean of the two MCGrad fits, so that a change of the machine's load during the run shows as
a gap between them. The machine is shared: the load average is recorded before and after each timing.

Data: a synthetic table of 5 features (2 categorical of 4 and 12 levels, 3 numerical) whose base score is
over-confident and blind to one category's bias, so that MCGrad is the method the selection should choose.

A second table times the one sort the selection shares: isotonic regression and histogram binning fitted on
0.8 of the rows, given in random order and in score order (the order in which the selection hands every
candidate its fold's rows).

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/selection/selection_speed.py               # 1M rows
    PYTHONPATH=src python benchmarks/selection/selection_speed.py --n-rows 100000 --name selection_speed_100k
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))

from _common import add_out_dir_option, md_table, out_dir_of, run_header, write_results

import mcal


def synthetic(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Five features; the true logit has a category effect and a slope the over-confident base score lacks."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    c0 = rng.integers(0, 4, n)
    c1 = rng.integers(0, 12, n)
    x = rng.normal(size=(n, 3))
    linear = -1.0 + 0.9 * x[:, 0] - 0.5 * x[:, 1]
    true_logit = linear + 0.6 * (c0 == 1) - 0.4 * (c1 < 3) + 0.3 * np.sin(2 * x[:, 2])
    base = expit(1.5 * linear)
    y = (rng.random(n) < expit(true_logit)).astype(int)
    X = pd.DataFrame({"c0": pd.Categorical(c0), "c1": pd.Categorical(c1), "x0": x[:, 0], "x1": x[:, 1], "x2": x[:, 2]})
    return X, base, y


def _load() -> float:
    return os.getloadavg()[0]


def timed(fn) -> tuple[object, dict]:
    """``fn()`` and its wall and CPU seconds (this process, all threads), with the load average around it."""
    before = _load()
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    took = {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu}
    return out, took | {"load_before": before, "load_after": _load()}


def _rounds(selection, direct) -> str:
    """The rounds of the chosen MCGrad and of ``MCGrad().fit``."""
    if selection.chosen != "mcgrad":
        return ""
    return (f" ({selection.calibrator.n_rounds_} rounds, chosen by early stopping on the held-out loss pooled over "
            f"the folds; MCGrad().fit kept {direct.n_rounds_})")  # fmt: skip


def sort_gain(p: np.ndarray, y: np.ndarray, seed: int) -> list[dict]:
    """Fits of the univariate methods that sort on 0.8 of the rows, in random order and in score order."""
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(p.size, int(0.8 * p.size), replace=False))
    shuffled, ordered = rows, rows[np.argsort(p[rows], kind="stable")]
    out = []
    for name in ("IsotonicCalibration", "HistogramBinning", "PlattScaling"):
        cls = getattr(mcal, name)
        best = {}
        for order_name, idx in (("random order", shuffled), ("score order", ordered)):
            times = []
            for _ in range(3):
                start = time.perf_counter()
                cls().fit(p[idx], y[idx])
                times.append(time.perf_counter() - start)
            best[order_name] = min(times)
        out.append({"method": name, "rows": rows.size, "random_order_s": best["random order"],
                    "score_order_s": best["score order"], "ratio": best["score order"] / best["random order"]})  # fmt: skip
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="selection_speed")
    parser.add_argument("--quick", action="store_true", help="5,000 rows: a smoke test")
    add_out_dir_option(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.n_rows = 5_000
    args.out_dir = out_dir_of(args, args.name)
    X, p, y = synthetic(args.n_rows, args.seed)
    rows = []
    direct, first = timed(lambda: mcal.MCGrad(random_state=0).fit(p, y, X=X))
    rows.append({"what": "MCGrad().fit (first)"} | first)
    selection, whole = timed(lambda: mcal.select_calibrator(p, y, X=X, random_state=0))
    rows.append({"what": "select_calibrator (whole)"} | whole)
    _, second = timed(lambda: mcal.MCGrad(random_state=0).fit(p, y, X=X))
    rows.append({"what": "MCGrad().fit (second)"} | second)
    ratio = whole["seconds"] / ((first["seconds"] + second["seconds"]) / 2)
    cpu_ratio = whole["cpu_seconds"] / ((first["cpu_seconds"] + second["cpu_seconds"]) / 2)
    ts = whole["seconds"]
    table = selection.table.reset_index()
    parts = table[["method", "fit_seconds", "log_loss", "delta", "delta_se", "mce_sigma", "chosen"]]
    shared = ts - float(table["fit_seconds"].sum())
    sorts = pd.DataFrame(sort_gain(p, y, args.seed))
    header = run_header("select_calibrator against one MCGrad fit: speed", [args.seed], {
        "rows": f"{args.n_rows:,} (5 features: 2 categorical, 3 numerical)",
        "load average (1 min)": f"{first['load_before']:.2f} at start, {second['load_after']:.2f} at end (shared "
        "machine)",
    })  # fmt: skip
    sections = [
        f"## Result\n\nThe whole selection took **{cpu_ratio:.2f}x** the CPU time and {ratio:.2f}x the wall time "
        f"of the mean of two MCGrad fits on the same rows (target: at most 3x). It chose **{selection.chosen}**"
        f"{_rounds(selection, direct)}. "
        "CPU time (this process, all threads) is the measure less disturbed by the other tenants of the machine; "
        "the wall time moves with their load.",
        "## Timings (one process, in this order)\n\n" + md_table(pd.DataFrame(rows), 2),
        "## The selection's candidates\n\n`fit_seconds` = fitting and predicting the 5 folds, the MCE of its "
        f"held-out predictions included; the rest of the selection (sort, folds, segments, refit of the chosen "
        f"method on all rows) took {shared:.1f} s.\n\n" + md_table(parts, 4),
        "## The one sort\n\nFit seconds (best of 3) on 0.8 of the rows, handed over in random order and in "
        "score order, as the selection hands each candidate its fold's rows.\n\n" + md_table(sorts, 3),
    ]
    raw = pd.concat([pd.DataFrame(rows).assign(table="timings"), parts.assign(table="candidates"),
                     sorts.assign(table="sort")], ignore_index=True)  # fmt: skip
    whole_row = raw["what"].eq("select_calibrator (whole)")
    raw["ratio_to_mcgrad"] = np.where(whole_row, ratio, np.nan)
    raw["cpu_ratio_to_mcgrad"] = np.where(whole_row, cpu_ratio, np.nan)
    md, _ = write_results(args.name, header, sections, raw, args.out_dir)
    print(md.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

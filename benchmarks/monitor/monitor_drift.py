"""The drift alarm of ``mcal.monitor``: its false-alarm rate on calibrated streams and its delay on planted drifts.

Simulated streams of windows (seeded): scores from a Beta(1.5, 5), labels drawn with probability
``expit(a + b logit p)``; ``a = 0, b = 1`` (calibrated) until the change window, then a planted drift: a logit shift
``a`` (the base rate moves) or a slope ``b`` (the model becomes over- or under-confident). Each window is summarised
with :func:`mcal.monitor.summarize_window` and the e-process read with :func:`mcal.monitor.monitor_result`, as
:func:`mcal.monitor.monitor` does, at level alpha = 0.05.

- False alarms: on calibrated streams, the fraction of streams on which the alarm ever fires (Ville's inequality
  bounds it by alpha), beside the naive rule "alarm when a window's ECCE p-value is below alpha", which tests again
  at every window and so fires on almost every long stream.
- Delay: on drifted streams, the windows from the change to the alarm (0: it fired at the end of the first drifted
  window), and the fraction of streams where it fired by the end.

    PYTHONPATH=src python benchmarks/monitor/monitor_drift.py [--quick]

One thread (``OMP_NUM_THREADS=1``); writes ``benchmarks/results/monitor_drift.md`` and ``.csv``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit, logit

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import md_table, run_header, write_results

from mcal._monitoring.windows import monitor_result, summarize_window, summary_columns

ALPHA = 0.05
SEED = 0
#: (name, intercept a, slope b) of the drift after the change window.
DRIFTS = [("shift +0.10", 0.10, 1.0), ("shift +0.25", 0.25, 1.0), ("shift -0.25", -0.25, 1.0),
          ("shift +0.50", 0.50, 1.0), ("slope 0.80", 0.0, 0.80), ("slope 1.25", 0.0, 1.25)]  # fmt: skip
FULL = {"streams": 500, "windows": 100, "rows": 500, "drift_streams": 100, "changes": (10, 50), "drifts": DRIFTS}
QUICK = {"streams": 60, "windows": 20, "rows": 200, "drift_streams": 10, "changes": (10,), "drifts": DRIFTS[3:5]}


def stream(rng: np.random.Generator, n_windows: int, rows: int, change: int, a: float, b: float) -> pd.DataFrame:
    """Per-window statistics of one stream: calibrated before window ``change``, ``expit(a + b logit p)`` after."""
    out = []
    for k in range(n_windows):
        p = rng.beta(1.5, 5.0, rows)
        truth = p if k < change else expit(a + b * logit(p))
        y = (rng.random(rows) < truth).astype(np.float64)
        out.append(summarize_window(y, p, np.ones(rows), n_resamples=0))  # the alarm needs no intervals
    return pd.DataFrame(out, index=pd.Index(np.arange(n_windows, dtype=float)), columns=summary_columns(False))


def first_alarm(stats: pd.DataFrame) -> tuple[float, float]:
    """The first window where the e-process reached 1/alpha, and where the naive per-window ECCE test fired (NaN:
    never)."""
    table = monitor_result(stats, window=1, alpha=ALPHA, confidence_level=0.95).table
    e = np.flatnonzero(table["alarm"].to_numpy())
    naive = np.flatnonzero(table["ecce_pvalue"].to_numpy() < ALPHA)
    return (float(e[0]) if e.size else np.nan), (float(naive[0]) if naive.size else np.nan)


def false_alarms(cfg: dict, rng: np.random.Generator) -> dict:
    firsts = np.array([first_alarm(stream(rng, cfg["windows"], cfg["rows"], cfg["windows"], 0.0, 1.0))
                       for _ in range(cfg["streams"])])  # fmt: skip
    fired = ~np.isnan(firsts)
    return {"streams": cfg["streams"], "windows": cfg["windows"], "rows_per_window": cfg["rows"], "alpha": ALPHA,
            "eprocess_false_alarm_rate": float(fired[:, 0].mean()),
            "naive_ecce_false_alarm_rate": float(fired[:, 1].mean())}  # fmt: skip


def delays(cfg: dict, rng: np.random.Generator) -> list[dict]:
    rows = []
    for change in cfg["changes"]:
        horizon = change + 20
        for name, a, b in cfg["drifts"]:
            firsts = np.array([first_alarm(stream(rng, horizon, cfg["rows"], change, a, b))[0]
                               for _ in range(cfg["drift_streams"])])  # fmt: skip
            late = firsts[~np.isnan(firsts)] - change
            rows.append({
                "drift": name, "change_window": change, "windows": horizon, "rows_per_window": cfg["rows"],
                "streams": cfg["drift_streams"], "before_change": float(np.sum(late < 0) / firsts.size),
                "detected": float(np.sum(late >= 0) / firsts.size),
                "median_delay": float(np.median(late[late >= 0])) if np.any(late >= 0) else np.nan,
                "p90_delay": float(np.quantile(late[late >= 0], 0.9)) if np.any(late >= 0) else np.nan,
            })  # fmt: skip
    return rows


def run(quick: bool = False) -> tuple[dict, list[dict]]:
    """The false-alarm row and the delay rows (quick: a few streams of few windows, for the test suite)."""
    cfg = QUICK if quick else FULL
    rng = np.random.default_rng(SEED)
    return false_alarms(cfg, rng), delays(cfg, rng)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny run, results not written")
    args = parser.parse_args()
    null, drift = run(args.quick)
    if args.quick:
        print(null, *drift, sep="\n")
        return
    header = run_header("Drift alarm of mcal.monitor: false alarms and detection delay", [SEED],
                        {"threads": "OMP_NUM_THREADS=1", "alpha": str(ALPHA)})  # fmt: skip
    sections = [
        "## False alarms on calibrated streams\n\nFraction of calibrated streams on which the alarm ever fired "
        "within the horizon (the e-process: at most alpha by Ville's inequality), beside the naive rule that "
        "fires when any window's ECCE p-value is below alpha.\n\n" + md_table(pd.DataFrame([null])),
        "## Delay on planted drifts\n\nWindows from the change to the alarm (0: at the end of the first drifted "
        "window) over the streams where it fired after the change; `before_change`: fraction of streams where it "
        "fired before the change (false alarms); `detected`: fraction of streams where it first fired within the "
        "20 windows after the change.\n\n" + md_table(pd.DataFrame(drift)),
    ]
    raw = pd.concat([pd.DataFrame([null]).assign(kind="null"), pd.DataFrame(drift).assign(kind="drift")])
    md, csv = write_results("monitor_drift", header, sections, raw)
    print(f"wrote {md} and {csv}")


if __name__ == "__main__":
    main()

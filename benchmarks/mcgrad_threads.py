"""LightGBM threads for MCGrad's fit and predict: one thread against all cores, on an idle machine and with one core busy.

LightGBM parallelises each tree with OpenMP, and every parallel region ends at a barrier that waits for all its
threads. When another process holds a core (a shared machine, a notebook beside a browser, a CI runner), a thread
that has lost its core holds the barrier until the scheduler gives it one back, and small trees have many such
regions per second. This script measures how much that costs, as the wall time of fitting two MCGrad rounds
(``early_stopping=None, max_rounds=2``; 188 trees) on the synthetic data of ``mcgrad_vs_reference.py`` and of
predicting the same rows:

- ``n_jobs=1`` and ``n_jobs=<all cores>``, and ``n_jobs=None`` (mcal's default, which picks the threads from the
  number of rows), at each size;
- on an idle machine, and with one core kept busy by a spinning subprocess (``--busy`` processes, 1 by default).

Each time is the median of ``--repeats`` fits. Run it on an otherwise quiet machine: other tenants' load turns
the idle rows into busy ones.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/mcgrad_threads.py [--sizes 3000,30000,300000,1000000]

Writes ``benchmarks/results/mcgrad_threads.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, md_table, run_header, write_results
from mcgrad_vs_reference import synthetic

from mcal import MCGrad
from mcal._lightgbm import lightgbm_threads


@contextlib.contextmanager
def busy_cores(n: int):
    """``n`` subprocesses that spin on a core each until the block ends."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(0.5)  # let them reach the scheduler
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def timings(frame: pd.DataFrame, p: np.ndarray, y: np.ndarray, cats: list[str], n_jobs, repeats: int) -> tuple:
    """Median seconds of fitting, and of predicting the same rows, with ``n_jobs``."""
    fits, predicts = [], []
    for _ in range(repeats):
        model = MCGrad(early_stopping=None, max_rounds=2, n_jobs=n_jobs, random_state=0, categorical_features=cats)
        start = time.perf_counter()
        model.fit(p, y, X=frame)
        fits.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.predict(p, X=frame)
        predicts.append(time.perf_counter() - start)
    return float(np.median(fits)), float(np.median(predicts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3000,30000,300000,1000000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--busy", type=int, default=1, help="spinning processes in the busy condition")
    parser.add_argument("--out", default=str(RESULTS / "mcgrad_threads"))
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    load_start = os.getloadavg()[0]
    rows = []
    for n in map(int, args.sizes.split(",")):
        frame, p, y, cats, _ = synthetic(n, seed=0)
        for condition in ("idle", f"{args.busy} core(s) busy"):
            with busy_cores(args.busy) if condition != "idle" else contextlib.nullcontext():
                times = {
                    label: timings(frame, p, y, cats, n_jobs, args.repeats)
                    for label, n_jobs in (("1", 1), (str(cores), cores), ("default", None))
                }
            row = {"rows": n, "condition": condition, "default_threads": lightgbm_threads(None, n)}
            for k, what in enumerate(("fit", "predict")):
                row |= {f"{what}_s_{label}": t[k] for label, t in times.items()}
                row |= {f"{what}_{label}_over_1": t[k] / times["1"][k] for label, t in times.items() if label != "1"}
            rows.append(row)
            print(rows[-1], flush=True)
    header = run_header(
        "MCGrad fit and predict time by LightGBM threads, idle and with a busy core",
        [0],
        {
            "protocol": f"two MCGrad rounds (188 trees) on the synthetic data of `mcgrad_vs_reference.py`, then a batch "
            f"predict of the same rows; median of {args.repeats} of each; busy = {args.busy} subprocess(es) "
            "spinning on a core",
            "load average": f"{load_start:.2f} at start, {os.getloadavg()[0]:.2f} at end",
            "default": "`n_jobs=None`, whose threads (`default_threads`) mcal picks from the rows",
        },
    )
    out = Path(args.out)
    md, _ = write_results(out.name, header, [md_table(pd.DataFrame(rows), 3)], pd.DataFrame(rows), out.parent)
    print(f"wrote {md}")


if __name__ == "__main__":
    main()

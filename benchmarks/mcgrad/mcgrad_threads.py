"""LightGBM threads for MCGrad's fit and predict, on a quiet machine and beside two spinning processes.

LightGBM parallelises each tree with OpenMP; every parallel region ends at a barrier that waits for all its
threads, and GNU OpenMP (libgomp, which LightGBM's wheel links) makes a waiting thread spin before it sleeps
(``OMP_WAIT_POLICY`` unset or ``active``). When other processes hold the cores, the spinning threads take the
time slices that the thread they wait for needs, and a tree with a few thousand rows per thread runs many
times slower. This script measures that cost and the candidate defaults, as the wall time of:

- ``fit``: ``MCGrad(random_state=0)`` as a user writes it (holdout early stopping, up to 100 rounds) for up to
  ``--full-max`` rows, and two rounds (``early_stopping=None, max_rounds=2``; 188 trees) above it;
- ``predict``: a batch predict of the same rows;

with ``n_jobs=1``, with every core under libgomp's spin policy (``OMP_WAIT_POLICY`` unset) and under
``OMP_WAIT_POLICY=passive``, with the previous default (one thread per 10,000 rows, at most the cores), and
with ``n_jobs=None`` (mcal's default as of the commit in the header). Each measurement runs in a fresh
subprocess, since libgomp reads its wait policy when it is loaded, and records the 1-minute load average at
its start (``os.getloadavg``). The two conditions:

- ``as found``: nothing added; the load average says how quiet the machine was (the machine is shared);
- ``2 busy``: two subprocesses spinning (``while True: pass``) for the whole measurement, killed afterwards.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_threads.py [--sizes 5000,20000,200000,2000000]
    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_threads.py --quick   # to a temporary folder: a smoke test

Writes ``benchmarks/results/mcgrad_threads.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import RESULTS, md_table, run_header, write_results

#: label -> (n_jobs, OMP_WAIT_POLICY or None to leave it unset); "old" is the previous default, resolved per size.
CONFIGS = {
    "1": (1, None),
    "all": (-1, None),
    "all_passive": (-1, "passive"),
    "old_default": ("old", None),
    "default": (None, None),
}


def child(n: int, n_jobs, full_max: int, repeats: int) -> None:
    """One measurement, in this (fresh) process: print a JSON line of median seconds and the threads used."""
    from mcgrad_vs_reference import synthetic

    from mcal import MCGrad
    from mcal._lightgbm import lightgbm_threads, others_running

    frame, p, y, cats, _ = synthetic(n, seed=0)
    kwargs = {} if n <= full_max else {"early_stopping": None, "max_rounds": 2}
    load, others = os.getloadavg()[0], others_running()
    threads = lightgbm_threads(n_jobs, n)
    fits, predicts = [], []
    for _ in range(repeats):
        model = MCGrad(n_jobs=n_jobs, random_state=0, categorical_features=cats, **kwargs)
        start = time.perf_counter()
        model.fit(p, y, X=frame)
        fits.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.predict(p, X=frame)
        predicts.append(time.perf_counter() - start)
    out = {"load_1min": load, "others_running": others, "threads": threads, "rounds": model.n_rounds_}
    print(json.dumps(out | {"fit_s": float(np.median(fits)), "predict_s": float(np.median(predicts))}))


@contextlib.contextmanager
def spinning(n: int):
    """``n`` subprocesses that spin on a core each until the block ends."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        # until the 1-minute load average counts them (at most 90 s), as it does for processes already running
        deadline = time.monotonic() + 90.0
        while os.getloadavg()[0] < n and time.monotonic() < deadline:
            time.sleep(1.0)
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def measure(n: int, label: str, args, cores: int) -> dict:
    n_jobs, policy = CONFIGS[label]
    if n_jobs == "old":
        n_jobs = max(1, min(cores, n // 10_000))
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    repeats = args.repeats if n <= 5_000 else 1
    cmd = [sys.executable, __file__, "--child", str(n), repr(n_jobs), str(args.full_max), str(repeats)]
    load = os.getloadavg()[0]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:  # a collapse: the time is at least the limit
        threads = cores if n_jobs == -1 else n_jobs  # None: what the default picked is not known
        return {
            "load_1min": load,
            "threads": threads,
            "fit_s": float(args.timeout),
            "censored": True,
            "repeats": repeats,
        }
    return json.loads(out.stdout.strip().splitlines()[-1]) | {"repeats": repeats, "censored": False}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        n, n_jobs, full_max, repeats = argv[1:5]
        child(int(n), None if n_jobs == "None" else int(n_jobs), int(full_max), int(repeats))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,20000,200000,2000000")
    parser.add_argument("--full-max", type=int, default=200_000, help="largest size fitted with the default rounds")
    parser.add_argument("--repeats", type=int, default=3, help="fits per measurement up to 5,000 rows (1 above)")
    parser.add_argument("--busy", type=int, default=2, help="spinning processes in the busy condition")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds after which a measurement is stopped")
    parser.add_argument("--out", help="results path without extension (default: benchmarks/results/mcgrad_threads)")
    parser.add_argument("--quick", action="store_true", help="2,000 rows, 2 configs, 1 busy process: a smoke test")
    parser.add_argument("--rows-from", type=Path, help="write the rows a run printed (one dict a line) instead")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.repeats, args.busy, args.configs, args.timeout = "2000", 1, 1, "1,default", 60.0
    if args.out is None:
        folder = Path(tempfile.mkdtemp(prefix="mcal-bench-mcgrad_threads-")) if args.quick else RESULTS
        args.out = str(folder / "mcgrad_threads")
    cores = len(os.sched_getaffinity(0))
    rows = (
        [] if args.rows_from is None else [ast.literal_eval(line) for line in args.rows_from.read_text().splitlines()]
    )
    for n in map(int, args.sizes.split(",") if args.rows_from is None else []):
        for condition in ("as found", f"{args.busy} busy"):
            with spinning(args.busy) if condition != "as found" else contextlib.nullcontext():
                for label in args.configs.split(","):
                    row = {"rows": n, "condition": condition, "config": label} | measure(n, label, args, cores)
                    rows.append(row)
                    print(row, flush=True)
    raw = pd.DataFrame(rows)
    ones = raw[raw.config == "1"].set_index(["rows", "condition"])
    for what in ("fit", "predict"):
        base = ones[f"{what}_s"].reindex(pd.MultiIndex.from_frame(raw[["rows", "condition"]])).to_numpy()
        raw[f"{what}_over_1"] = raw[f"{what}_s"] / base
    header = run_header(
        "MCGrad fit and predict time by LightGBM threads and OpenMP wait policy, quiet and beside 2 busy processes",
        [0],
        {
            "cores": f"{cores} (this process's CPU affinity)",
            "protocol": f"`MCGrad(random_state=0)` (early stopping) up to {args.full_max} rows, 2 rounds above; "
            f"then a batch predict of the same rows; median of {args.repeats} fits up to 5,000 rows, 1 above; "
            f"each measurement in a fresh subprocess; busy = {args.busy} processes spinning for the whole "
            "measurement",
            "configs": "`1`: n_jobs=1; `all`: n_jobs=-1; `all_passive`: n_jobs=-1 with OMP_WAIT_POLICY=passive; "
            "`old_default`: one thread per 10,000 rows (the default before ffd2659); `default`: n_jobs=None, "
            "mcal's default at the header's commit",
            "censored": f"a measurement stopped after {args.timeout:g} s (fit and predict of all repeats) shows "
            "`censored` True and that limit as `fit_s`: the fit took at least that long",
            "load average": "1-minute load average at the start of each measurement, in `load_1min` (the machine "
            "is shared with other sessions; `as found` is only as quiet as that column says); `others_running`: "
            "other processes' runnable threads then, as `mcal._lightgbm.others_running` counts them",
        },
    )
    table = raw[
        [
            "rows",
            "condition",
            "config",
            "threads",
            "load_1min",
            "others_running",
            "rounds",
            "fit_s",
            "censored",
            "fit_over_1",
            "predict_s",
        ]
    ]
    out = Path(args.out)
    md, _ = write_results(out.name, header, [md_table(table, 3)], raw, out.parent)
    print(f"wrote {md}")


if __name__ == "__main__":
    main()

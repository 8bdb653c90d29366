"""MCGrad on a local Dask cluster against the single-machine path, on the same partitioned Parquet data.

Data: a seeded synthetic table with a known miscalibration (2 categorical features of 8 and 30 levels, 8
numerical ones; the base score is over-confident and blind to the categoricals), written as ``--partitions``
Parquet files, plus a held-out table of ``--test-rows`` rows from another seed.

Each engine runs in its own subprocess, one after the other:

- ``local``: ``pandas.read_parquet`` of the folder, then :class:`mcal.MCGrad` with ``n_jobs=--local-threads``
  (1 by default: on a shared 2-core machine two OpenMP threads stall whenever another process runs; pass 2 on
  a quiet machine to give the single-machine path every core the cluster gets);
- ``dask``: a ``LocalCluster`` of ``--workers`` worker processes x 1 thread, :func:`mcal.dask.read_parquet`,
  then :class:`mcal.dask.DaskMCGrad`, exported with ``to_local()``.

Both use MCGrad's defaults (holdout early stopping, 94 trees of 5 leaves per round) with ``max_rounds`` capped
by ``--max-rounds`` to bound the run time. Reported per engine: fit wall time (reading the data excluded, and
separately included), peak resident memory (VmHWM) of the process and, for Dask, of each worker process, and
held-out log loss, ECCE and MCE of the saved model, computed in this process with the same code for both.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/dask/dask_scale.py                      # 10M rows (about an hour on 2 cores)
    PYTHONPATH=src python benchmarks/dask/dask_scale.py --rows 200000 --out /tmp/check   # a smaller run
    PYTHONPATH=src python benchmarks/dask/dask_scale.py --quick   # 20,000 rows, to a temporary folder: a smoke test

Writes ``benchmarks/results/dask_scale.md`` and ``.csv`` (or into ``--out``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
LEVELS = (8, 30)
N_NUMERIC = 8


# -- data ----------------------------------------------------------------------------------------------------
def synthetic(n: int, seed: int) -> pd.DataFrame:
    """Columns c0, c1 (strings), x0..x7, p (base score), y; the true logit has category effects the base ignores."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    cols, effect = {}, np.zeros(n)
    for j, k in enumerate(LEVELS):
        prob = 1.0 / np.arange(1, k + 1)
        codes = rng.choice(k, size=n, p=prob / prob.sum())
        cols[f"c{j}"] = np.array([f"L{i}" for i in range(k)])[codes]
        effect += np.random.default_rng(100 + j).normal(0.0, 0.5, size=k)[codes]  # fixed across seeds
    x = rng.normal(size=(n, N_NUMERIC))
    linear = -1.0 + 0.8 * x[:, 0] - 0.6 * x[:, 1]
    true_logit = linear + 0.5 * np.sin(2 * x[:, 2]) + effect
    for j in range(N_NUMERIC):
        cols[f"x{j}"] = x[:, j]
    cols["p"] = expit(1.6 * (linear + 0.3 * x[:, 2]))
    cols["y"] = (rng.random(n) < expit(true_logit)).astype(np.float64)
    return pd.DataFrame(cols)


FEATURES = [f"c{j}" for j in range(len(LEVELS))] + [f"x{j}" for j in range(N_NUMERIC)]


def write_data(folder: Path, rows: int, partitions: int, test_rows: int) -> None:
    """``folder/train/part-*.parquet`` (one seed per partition) and ``folder/test.parquet``."""
    (folder / "train").mkdir(parents=True)
    bounds = np.linspace(0, rows, partitions + 1).astype(int)
    for k in range(partitions):
        synthetic(int(bounds[k + 1] - bounds[k]), seed=1000 + k).to_parquet(folder / "train" / f"part-{k:04d}.parquet")
    synthetic(test_rows, seed=7).to_parquet(folder / "test.parquet")


# -- one engine, in a subprocess -------------------------------------------------------------------------------
def peak_mib() -> float:
    """Peak resident memory (VmHWM) of this process, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def run_engine(engine: str, folder: Path, workers: int, local_threads: int, max_rounds: int, out: Path) -> None:
    import mcal

    params = dict(max_rounds=max_rounds, random_state=0)
    record: dict = {"engine": engine}
    if engine == "local":
        start = time.perf_counter()
        frame = pd.read_parquet(folder / "train")
        read = time.perf_counter()
        model = mcal.MCGrad(n_jobs=local_threads, **params).fit(frame["p"], frame["y"], X=frame[FEATURES])
        done = time.perf_counter()
        record["n_rows"] = len(frame)
    else:
        import distributed

        from mcal.dask import DaskMCGrad, read_parquet

        begin = time.perf_counter()
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                      host="127.0.0.1", memory_limit="9GiB") as cluster, \
                distributed.Client(cluster) as client:  # fmt: skip
            start = time.perf_counter()
            frame = read_parquet(folder / "train")
            read = time.perf_counter()
            model = DaskMCGrad(client=client, **params).fit(frame["p"], frame["y"], X=frame[FEATURES]).to_local()
            done = time.perf_counter()
            record["worker_peak_mib"] = sorted(client.run(peak_mib).values())
            record["n_rows"] = int(frame.shape[0].compute())
            record["cluster_start_s"] = start - begin
    record.update(fit_s=done - read, total_s=done - start, peak_mib=peak_mib(), n_rounds=model.n_rounds_,
                  model=str(out.with_suffix(".json")))  # fmt: skip
    mcal.save(model, out.with_suffix(".json"))
    out.write_text(json.dumps(record))


# -- driver ----------------------------------------------------------------------------------------------------
def held_out(model_path: str, test: pd.DataFrame) -> dict:
    import mcal
    from mcal.segments import generate_segments

    model = mcal.load(model_path)
    p = model.predict(test["p"], X=test[FEATURES])
    segments = generate_segments(test[FEATURES])
    return {
        "log_loss": mcal.metrics.log_loss(test["y"], p),
        "ecce": mcal.metrics.ecce(test["y"], p),
        "mce_sigma": mcal.metrics.mce(test["y"], p, segments=segments).mce_sigma,
    }


class LoadSampler:
    """The machine's 1-minute load average, sampled every 5 s while the block runs (other users included)."""

    def __enter__(self) -> LoadSampler:
        import threading

        self._samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(5.0):
            self._samples.append(os.getloadavg()[0])

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def mean(self) -> float:
        return float(np.mean(self._samples)) if self._samples else float("nan")


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--test-rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--local-threads",
        type=int,
        default=1,
        help="LightGBM threads of the single-machine path (default 1: on a shared 2-core machine, "
        "2 OpenMP threads stall under load)",
    )
    parser.add_argument("--max-rounds", type=int, default=5)
    parser.add_argument("--engines", default="local,dask")
    parser.add_argument("--out", type=Path, help="default: benchmarks/results/, a new temporary folder with --quick")
    parser.add_argument("--quick", action="store_true", help="20,000 rows in 4 partitions, 2 rounds: a smoke test")
    parser.add_argument("--run", help=argparse.SUPPRESS)  # internal: one engine in this process
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--record", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run_engine(args.run, args.data, args.workers, args.local_threads, args.max_rounds, args.record)
        return
    if args.quick:
        args.rows, args.partitions, args.test_rows, args.max_rounds = 20_000, 4, 5_000, 2
    if args.out is None:
        args.out = (
            Path(tempfile.mkdtemp(prefix="mcal-bench-dask_scale-")) if args.quick else ROOT / "benchmarks" / "results"
        )
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "src")}
    rows = []
    with tempfile.TemporaryDirectory(prefix="dask_scale_") as tmp:
        folder = Path(tmp)
        t = time.perf_counter()
        write_data(folder, args.rows, args.partitions, args.test_rows)
        print(f"data written in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        test = pd.read_parquet(folder / "test.parquet")
        base = {
            "engine": "input scores",
            "log_loss": float(np.mean(-(test["y"] * np.log(test["p"]) + (1 - test["y"]) * np.log1p(-test["p"])))),
        }
        rows.append(base)
        for engine in args.engines.split(","):
            record_path = folder / f"{engine}.record"
            cmd = [sys.executable, __file__, "--run", engine, "--data", str(folder), "--record", str(record_path),
                   "--workers", str(args.workers), "--local-threads", str(args.local_threads),
                   "--max-rounds", str(args.max_rounds)]  # fmt: skip
            t = time.perf_counter()
            with LoadSampler() as load:
                subprocess.run(cmd, env=env, check=True)
            record = json.loads(record_path.read_text())
            record["load_mean"] = load.mean()
            record.update(held_out(record.pop("model"), test))
            print(f"{engine}: {time.perf_counter() - t:.0f} s {record}", file=sys.stderr)
            rows.append(record)
    write_results(args, rows)


def write_results(args, rows: list[dict]) -> None:
    table = pd.DataFrame(rows)
    local = table.set_index("engine").loc["local"] if "local" in set(table["engine"]) else None
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "dask_scale.csv", index=False)
    import dask
    import lightgbm

    load = os.getloadavg()[0]
    lines = [
        "# MCGrad on Dask vs the single-machine path",
        "",
        f"- date: {datetime.date.today()}; mcal commit {git_commit()}; {os.cpu_count()} cores (shared, load average "
        f"{load:.1f} at the end); Python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
        f"dask {dask.__version__}, lightgbm {lightgbm.__version__}",
        f"- data: {args.rows:,} training rows in {args.partitions} Parquet files, {args.test_rows:,} held-out rows; "
        f"2 categorical (8, 30 levels) + 8 numerical features; MCGrad defaults, max_rounds={args.max_rounds}",
        f"- local: one process, LightGBM n_jobs={args.local_threads}; dask: LocalCluster of {args.workers} worker processes "
        "x 1 thread; fit_s: the fit (for dask this includes reading the Parquet files, which dask does lazily), "
        "total_s: reading and fit; cluster_start_s: starting the local cluster",
        "- peak_mib: VmHWM of the process (for dask: the client, which also runs the scheduler); worker_peak_mib: "
        "VmHWM of each worker process; load_mean: the machine's 1-minute load average during the run (other "
        "users' work included: with 2 cores, times are only comparable at similar loads)",
    ]
    if local is not None and "dask" in set(table["engine"]):
        d = table.set_index("engine").loc["dask"]
        lines.append(
            f"- ratios dask / local: fit time {d['fit_s'] / local['fit_s']:.2f}, total time "
            f"{d['total_s'] / local['total_s']:.2f}, peak memory of the largest worker "
            f"{max(d['worker_peak_mib']) / local['peak_mib']:.2f}, held-out log loss "
            f"{d['log_loss'] - local['log_loss']:+.5f} (difference)"
        )
    lines += ["", *markdown(table)]
    (out / "dask_scale.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def markdown(table: pd.DataFrame) -> list[str]:
    """A Markdown table, numbers with 5 significant digits, missing values blank."""

    def cell(v) -> str:
        if isinstance(v, list):
            return ", ".join(f"{x:.0f}" for x in v)
        if isinstance(v, float):
            return "" if np.isnan(v) else f"{int(v):,}" if v.is_integer() and abs(v) >= 1e4 else f"{v:.5g}"
        return str(v)

    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * table.shape[1]]
    return lines + ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]


if __name__ == "__main__":
    main()

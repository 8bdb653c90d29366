"""Where MCGrad's single-process fit peaks in memory, by phase (issue #20, the 10M-row target).

The data of ``dask_scale.py`` (2 string categoricals, 8 numerical features, a base score and labels), written to
Parquet and read back into pandas (pyarrow's ``to_pandas(self_destruct=True)``, then its allocator's cache
released), then ``MCGrad(max_rounds=5, random_state=0, n_jobs=1)`` fitted on it. A thread samples the process's
resident memory (``VmRSS`` in ``/proc/self/status``) every 20 ms and charges each sample to the phase that runs:
reading, the fit's checks, encoding and binning X (LightGBM ``Dataset``, built from row blocks), the
early-stopping split, the early-stopping rounds, the refit rounds; "whole fit" is the highest of the fit's phases.
Reported per phase: the peak resident memory and that peak minus the resident memory before reading (what the
phase holds on top of the interpreter and libraries, the caller's frame included), beside the size of the float64
input (rows x (features + score + label) x 8 bytes) and the size of the frame pandas holds.

Usage (from the repository root)::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/mcgrad/mcgrad_memory.py [--rows 2000000] [--quick] [--name mcgrad_memory] [--render]

Writes ``benchmarks/results/mcgrad_memory.md`` and ``.csv`` (``--out-dir`` elsewhere; ``--quick``: 20,000 rows, to a
temporary folder); ``--render`` rewrites the ``.md`` from the ``.csv``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dask"))
from _common import (
    RESULTS,
    add_output_options,
    docstring_sections,
    md_table,
    out_dir_of,
    render_results,
    run_header,
    write_results,
)
from dask_scale import FEATURES, synthetic


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class PhaseSampler:
    """Peak resident memory per phase, from a thread that samples every ``interval`` seconds."""

    def __init__(self, interval: float = 0.02) -> None:
        self.phase, self.peaks, self.interval = "start", {}, interval
        self.order: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            time.sleep(self.interval)

    def sample(self) -> None:
        phase, rss = self.phase, rss_mib()
        self.peaks[phase] = max(self.peaks.get(phase, 0.0), rss)

    def enter(self, phase: str) -> None:
        self.sample()
        self.phase = phase
        if phase not in self.order:
            self.order.append(phase)
        self.sample()

    def __enter__(self) -> PhaseSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def instrument(sampler: PhaseSampler) -> None:
    """Mark the phases by wrapping the functions that start them (measurement only)."""
    import mcal.mcgrad._controls as controls
    import mcal.mcgrad._estimator as est
    from mcal.mcgrad.engine import LocalEngine

    def wrap(owner, name, phase, after=None):
        original = getattr(owner, name)

        def wrapped(*args, **kwargs):
            sampler.enter(phase(args, kwargs) if callable(phase) else phase)
            try:
                return original(*args, **kwargs)
            finally:
                if after:
                    sampler.enter(after)

        setattr(owner, name, wrapped)

    wrap(LocalEngine, "bin_features", "encode and bin X (LightGBM Dataset)")
    wrap(est, "split_parts", "early-stopping split")
    wrap(controls, "boost_rounds", lambda a, k: "refit rounds" if a[2] is None else "early-stopping rounds")


def write_parquet(rows: int, path: Path) -> None:
    synthetic(rows, seed=1).to_parquet(path)


def measure(rows: int, folder: Path) -> list[dict]:
    # written by a child process, so that what generating the data leaves in this process's heap cannot be reused
    child = multiprocessing.get_context("spawn").Process(target=write_parquet, args=(rows, folder / "train.parquet"))
    child.start()
    child.join()
    if child.exitcode != 0:
        raise RuntimeError(f"writing the data failed (exit code {child.exitcode})")
    import mcal

    small = synthetic(2_000, seed=2)  # a first fit imports what the fit uses (LightGBM, scikit-learn) before the start
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcal.CalibrationWarning)
        mcal.MCGrad(max_rounds=1, random_state=0, n_jobs=1).fit(small["p"], small["y"], X=small[FEATURES])
    del small
    base = rss_mib()
    with PhaseSampler() as sampler:
        instrument(sampler)
        sampler.enter("read Parquet (pandas)")
        # pyarrow's table is freed column by column as pandas takes it, and its allocator's cache is returned
        frame = pq.read_table(folder / "train.parquet").to_pandas(self_destruct=True, split_blocks=True)
        pa.default_memory_pool().release_unused()
        frame_mib = frame.memory_usage(deep=True).sum() / 2**20
        sampler.enter("fit: checks")
        start = time.perf_counter()
        model = mcal.MCGrad(max_rounds=5, random_state=0, n_jobs=1).fit(frame["p"], frame["y"], X=frame[FEATURES])
        fit_s = time.perf_counter() - start
        sampler.enter("end")
    input_mib = rows * (len(FEATURES) + 2) * 8 / 2**20
    fit_phases = sampler.order[sampler.order.index("fit: checks") : sampler.order.index("end")]
    sampler.peaks["whole fit"] = max(sampler.peaks[phase] for phase in fit_phases)
    sampler.order.append("whole fit")
    return [
        {"phase": phase, "peak_mib": sampler.peaks[phase], "above_start_mib": sampler.peaks[phase] - base,
         "per_input": (sampler.peaks[phase] - base) / input_mib, "rows": rows, "float64_input_mib": input_mib,
         "pandas_frame_mib": frame_mib, "fit_s": fit_s, "n_rounds": model.n_rounds_}
        for phase in sampler.order
    ]  # fmt: skip


#: The results file's text after its header: what is measured, then the table.
sections = docstring_sections(__doc__, digits=2)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    add_output_options(parser)
    parser.add_argument("--name", default="mcgrad_memory", help="results file name (without extension)")
    args = parser.parse_args(argv)
    if args.render:
        render_results(args.name, sections, args.out_dir or RESULTS)
        return 0
    rows = 20_000 if args.quick else args.rows
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mcal-memory-") as folder:
        raw = pd.DataFrame(measure(rows, Path(folder)))
    head = run_header("MCGrad's fit memory by phase", [0], {
        "mode": "quick" if args.quick else "full", "rows": f"{rows:,}", "threads": f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; n_jobs=1",
        "wall time": f"{time.perf_counter() - start:.0f} s",
    })  # fmt: skip
    name = f"{args.name}_quick" if args.quick else args.name
    write_results(name, head, sections(raw), raw, out_dir_of(args, name))
    print(md_table(raw, digits=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

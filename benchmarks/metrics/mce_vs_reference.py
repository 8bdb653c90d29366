"""MCE speed, peak memory and agreement: mcal.metrics.mce against mcgrad's MulticalibrationError, same data.

    PYTHONPATH=src python benchmarks/metrics/mce_vs_reference.py [--n-rows 1000000] [--large-rows 10000000]
    PYTHONPATH=src python benchmarks/metrics/mce_vs_reference.py --quick   # to a temporary folder: a smoke test

Data (seeded): 5 categorical features (6 values each, skewed frequencies) and 5 numerical features, distinct
scores, labels miscalibrated in one category. Segments: depth 3, 3 values per feature (the library defaults of
both), so 3,676 candidate segments, capped at 1,000; each library applies its own cap (mcgrad keeps the first
1,000 in listing order, mcal a seeded random choice of feature combinations), so the two evaluate different
1,000-segment sets of the same kind. Agreement is checked on mcgrad's own segments: after its timed run, mcal
recomputes all 3,676 segments (untimed) and the per-segment ECCE/sigma of mcgrad's 1,000 are compared.

Every measurement runs in a fresh subprocess that builds the data, then times the metric (segment generation
included) and records the peak resident memory during it (Linux VmHWM, reset after the data are built); the
1M-row measurements are repeated (``--repeats``, best time kept) because the machine is shared.
The large run (``--large-rows`` rows, 5 values per feature so 16,176 candidates, cap 10,000) is mcal alone.
Writes benchmarks/results/mce_vs_reference.{md,csv}.
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd

SEED = 7
N_CATEGORICAL = N_NUMERICAL = 5
RESULTS = Path(__file__).resolve().parents[1] / "results"


def make_data(n_rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    values = np.array(["a", "b", "c", "d", "e", "f"], dtype=object)
    frame = {f"cat{j}": rng.choice(values, n_rows, p=[0.3, 0.25, 0.2, 0.1, 0.1, 0.05]) for j in range(N_CATEGORICAL)}
    frame |= {f"num{j}": rng.normal(size=n_rows) for j in range(N_NUMERICAL)}
    score = rng.uniform(0.01, 0.99, n_rows)
    shift = np.where(frame["cat0"] == "b", 0.03, 0.0)
    frame["y_prob"] = score
    frame["y_true"] = (rng.random(n_rows) < np.clip(score + shift, 0, 1)).astype(np.int64)
    return pd.DataFrame(frame)


def _memory_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak() -> None:
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # return freed heap to the system, so RSS is the live data
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS (Linux >= 4.0)


def worker(kind: str, n_rows: int, max_values: int, max_n_segments: int, out: Path) -> None:
    from mcal.metrics import mce
    from mcal.segments import generate_segments

    if kind != "mcal":
        from mcgrad.metrics import MulticalibrationError
    data = make_data(n_rows)
    features = [c for c in data.columns if c.startswith(("cat", "num"))]
    _reset_peak()
    rss_before = _memory_kib("VmRSS")
    start = time.perf_counter()
    if kind == "mcal":
        segments = generate_segments(data[features], max_values_per_feature=max_values, max_n_segments=max_n_segments)
        result = mce(data["y_true"], data["y_prob"], segments=segments)
        seconds = time.perf_counter() - start
        record = {"mce_sigma": result.mce_sigma, "n_segments": result.n_segments}
    else:
        ref = MulticalibrationError(
            data, label_column="y_true", score_column="y_prob",
            categorical_segment_columns=features[:N_CATEGORICAL], numerical_segment_columns=features[N_CATEGORICAL:],
            max_values_per_segment_feature=max_values, max_n_segments=max_n_segments,
            precision_dtype="float64" if kind == "mcgrad-float64" else "float32",
        )  # fmt: skip
        mce_sigma = float(ref.mce_sigma)
        pvalues = ref.segments_ecce_pvalue  # the per-segment table mcal also returns
        seconds = time.perf_counter() - start
        record = {"mce_sigma": mce_sigma, "n_segments": int(pvalues.size)}
    record |= {"seconds": seconds, "rss_before_mib": rss_before / 1024, "peak_mib": _memory_kib("VmHWM") / 1024}
    if kind != "mcal":
        record["max_rel_diff"] = _agreement(data, features, ref, max_values)
    out.write_text(json.dumps(record))


def _agreement(data: pd.DataFrame, features: list[str], ref, max_values: int) -> float:
    """Largest relative difference of per-segment ECCE/sigma on mcgrad's segments (untimed)."""
    from mcal.metrics import mce
    from mcal.segments import generate_segments

    segments = generate_segments(data[features], max_values_per_feature=max_values, max_n_segments=None)
    ours = mce(data["y_true"], data["y_prob"], segments=segments).table.set_index("description")["ecce_sigma"]
    levels = {f.name: f for f in segments._parts[0].features}  # mcal's level codes, to name mcgrad's segments
    conditions = ref._segments[1]  # (segment_column, value, idx_segment); no public accessor
    described = {}
    for idx, rows in conditions.groupby("idx_segment"):
        parts = sorted(rows.itertuples(), key=lambda r: features.index(r.segment_column))
        described[idx] = " & ".join(_describe(levels[r.segment_column], r.value) for r in parts)
    theirs = np.asarray(ref.segments_ecce_sigma, dtype=np.float64)
    mine = np.array([ours["all"]] + [ours[described[k]] for k in range(1, theirs.size)])
    return float(np.max(np.abs(mine - theirs) / np.abs(mine)))


def _describe(feature, value) -> str:
    if feature.kind == "categorical":
        code = feature.values.index(value) if value in feature.values else feature.n_values
    else:
        code = int(value)  # quantile bin number of pandas.cut
    return feature.describe(code)


def run(kind: str, n_rows: int, max_values: int, max_n_segments: int, folder: Path) -> dict:
    """One measurement in a fresh worker process, which writes its record into ``folder``."""
    out = folder / f".worker-{kind}-{n_rows}.json"
    cmd = [sys.executable, __file__, "--worker", kind, "--n-rows", str(n_rows), "--max-values", str(max_values),
           "--max-n-segments", str(max_n_segments), "--out", str(out)]  # fmt: skip
    subprocess.run(cmd, check=True, env=os.environ | {"OMP_NUM_THREADS": "1"})
    record = json.loads(out.read_text())
    out.unlink()
    return {"library": kind, "n_rows": n_rows, "max_values_per_feature": max_values,
            "max_n_segments": max_n_segments} | record  # fmt: skip


def best_of(records: list[dict]) -> dict:
    """The fastest of repeated measurements, with the largest peak memory among them."""
    best = dict(min(records, key=lambda r: r["seconds"]))
    return best | {"repeats": len(records), "peak_mib": max(r["peak_mib"] for r in records)}


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-rows", type=int, default=1_000_000)
    parser.add_argument("--large-rows", type=int, default=10_000_000)
    parser.add_argument("--worker", choices=["mcal", "mcgrad", "mcgrad-float64"])
    parser.add_argument("--max-values", type=int, default=3)
    parser.add_argument("--max-n-segments", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2, help="fresh processes per 1M-row measurement (best time)")
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)  # internal: the worker's record
    parser.add_argument("--quick", action="store_true", help="20,000 rows, one repeat, no large run: a smoke test")
    parser.add_argument(
        "--out-dir", type=Path, help="default: benchmarks/results/, a new temporary folder with --quick"
    )
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker, args.n_rows, args.max_values, args.max_n_segments, args.out)
        return
    if args.quick:
        args.n_rows, args.large_rows, args.repeats = 20_000, 0, 1
    out_dir = args.out_dir or (Path(tempfile.mkdtemp(prefix="mcal-bench-mce_vs_reference-")) if args.quick else RESULTS)
    out_dir.mkdir(parents=True, exist_ok=True)
    kinds = ("mcgrad", "mcal", "mcgrad-float64")
    # interleaved repeats, so that a change in the machine's load hits every library alike
    measured = [[run(kind, args.n_rows, 3, 1000, out_dir) for kind in kinds] for _ in range(args.repeats)]
    rows = [best_of([m[j] for m in measured]) for j in range(len(kinds))]
    if args.large_rows:
        rows.append(best_of([run("mcal", args.large_rows, 5, 10_000, out_dir)]))
    table = pd.DataFrame(rows)
    table.to_csv(out_dir / "mce_vs_reference.csv", index=False)
    ref = table.iloc[0]
    ours = table.iloc[1]
    header = [
        "# MCE: mcal vs mcgrad MulticalibrationError",
        "",
        f"- date: {datetime.date.today().isoformat()}; mcal commit {_commit()}; {os.cpu_count()} cores "
        f"(shared, load average {os.getloadavg()[0]:.1f} at the end); Python {platform.python_version()}, "
        f"numpy {version('numpy')}, pandas {version('pandas')}, mcgrad {version('mcgrad')}",
        f"- data: seed {SEED}, {N_CATEGORICAL} categorical + {N_NUMERICAL} numerical features, depth 3; "
        "time includes segment generation; seconds = best of `repeats` fresh processes, peak = largest VmHWM of "
        "the worker processes (reset after the data are built; rss_before = live data at that point)",
        f"- speed-up vs mcgrad (default float32): {ref.seconds / ours.seconds:.1f}x; "
        f"peak memory increase ratio: {(ours.peak_mib - ours.rss_before_mib) / (ref.peak_mib - ref.rss_before_mib):.3f}",
        "- max_rel_diff: largest relative difference of per-segment ECCE/sigma between mcgrad and mcal on mcgrad's "
        "1,000 segments",
        "",
    ]
    (out_dir / "mce_vs_reference.md").write_text("\n".join(header + _markdown(table)) + "\n")


def _markdown(table: pd.DataFrame) -> list[str]:
    cells = [[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row] for row in table.itertuples(index=False)]
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * table.shape[1]]
    return lines + ["| " + " | ".join(row) + " |" for row in cells]


if __name__ == "__main__":
    main()

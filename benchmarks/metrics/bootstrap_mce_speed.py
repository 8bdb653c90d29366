"""CPU time of the MCE's bootstrap interval (``mcal evaluate --ci --segments``) before and after a change.

Data: ``bootstrap_speed.make_data`` (seeded; segment features a of 3 values and b of 5), segments generated from a and
b at depth 3 as ``mcal evaluate --segments a,b`` does, and the interval of ``mce_sigma`` by :func:`mcal.metrics.bootstrap`
on ``--n-resamples`` resamples (basic interval, seed 0), with the scores as drawn (all distinct) and rounded to 3
decimals (ties, as in a CSV of rounded scores). Each code version runs in its own subprocess with its ``src`` first on
the path: this checkout's, and ``--before-src`` (e.g. the main branch before the change). Times are CPU seconds
(``time.process_time``) with OMP_NUM_THREADS=1: the machine is shared, and its load (recorded) inflates wall time.

    PYTHONPATH=src python benchmarks/metrics/bootstrap_mce_speed.py --before-src /path/to/previous/src [--n 1000000]
    PYTHONPATH=src python benchmarks/metrics/bootstrap_mce_speed.py --quick   # to a temporary folder: a smoke test
    # e.g. the code before a commit: git archive COMMIT~1 src | tar -x -C /tmp/before, then
    # --before-src /tmp/before/src --before-commit COMMIT~1

Writes ``benchmarks/results/bootstrap_mce_speed.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import RESULTS, md_table, run_header, write_results

ROOT = Path(__file__).resolve().parents[2]


def child(n: int, n_resamples: int) -> None:
    """Time the MCE interval in this process; print one JSON line per score rounding."""
    import numpy as np
    from bootstrap_speed import make_data

    from mcal.metrics import bootstrap, mce_sigma
    from mcal.segments import generate_segments

    df = make_data(n)
    segments = generate_segments(df[["a", "b"]], max_depth=3)
    masks = segments.to_masks()
    y = df["y"].to_numpy()
    for scores, p in (("distinct", df["p"].to_numpy()), ("3 decimals", np.round(df["p"].to_numpy(), 3))):
        load = os.getloadavg()[0]
        start, wall = time.process_time(), time.perf_counter()
        res = bootstrap(mce_sigma, y, p, row_args={"segments": masks}, n_resamples=n_resamples, method="basic",
                        random_state=0)  # fmt: skip
        out = {"scores": scores, "cpu_s": time.process_time() - start, "wall_s": time.perf_counter() - wall,
               "load_1min": load, "low": res.low, "high": res.high, "n_segments": segments.n_segments,
               "memberships": int(segments.sizes.sum())}  # fmt: skip
        print(json.dumps(out), flush=True)


def commit_of(src: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=src, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "."], cwd=src,
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    return out.stdout.strip() + ("+uncommitted changes" if dirty else "")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(int(argv[1]), int(argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-src", type=Path, help="the src folder of the code before the change (required)")
    parser.add_argument("--before-commit", help="the commit of --before-src, where it is not a git checkout")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--n-resamples", type=int, default=200)
    parser.add_argument(
        "--out", help="results path without extension (default: benchmarks/results/bootstrap_mce_speed)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="20,000 rows, 20 resamples, this src as both: a smoke test"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.n_resamples, args.before_src = 20_000, 20, args.before_src or ROOT / "src"
    if args.before_src is None:
        parser.error("--before-src is required (the src folder of the code before the change)")
    if args.out is None:
        folder = Path(tempfile.mkdtemp(prefix="mcal-bench-bootstrap_mce_speed-")) if args.quick else RESULTS
        args.out = str(folder / "bootstrap_mce_speed")
    rows = []
    for version, src in (("before", args.before_src.resolve()), ("after", ROOT / "src")):
        env = {
            **os.environ,
            "PYTHONPATH": f"{src}{os.pathsep}{Path(__file__).resolve().parent}",
            "OMP_NUM_THREADS": "1",
        }
        cmd = [sys.executable, __file__, "--child", str(args.n), str(args.n_resamples)]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
        for line in out.strip().splitlines():
            commit = args.before_commit if version == "before" and args.before_commit else commit_of(src)
            rows.append({"version": version, "commit": commit, "n": args.n} | json.loads(line))
            print(rows[-1], flush=True)
    raw = pd.DataFrame(rows)
    header = run_header(
        "CPU time of the MCE's bootstrap interval (mcal evaluate --ci --segments), before and after",
        [0],
        {
            "protocol": f"{args.n} rows of `bootstrap_speed.make_data`, segments of a and b at depth 3, "
            f"`bootstrap(mce_sigma, ...)` with {args.n_resamples} resamples (basic interval, seed 0); CPU seconds, "
            "OMP_NUM_THREADS=1; each version in its own subprocess",
            "load average": "1-minute load average at the start of each timing, in `load_1min`",
        },
    )
    md, _ = write_results(Path(args.out).name, header, [md_table(raw, 4)], raw, Path(args.out).parent)
    print(f"wrote {md}")


if __name__ == "__main__":
    main()

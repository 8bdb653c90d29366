"""Run both paper benchmarks: ``paper_mcgrad.py`` (MCGrad Tables 2, 5, 6) and ``paper_mcnet.py`` (MCNet Tables 1-3).

Usage::

    PYTHONPATH=src python benchmarks/run_all.py            # full: about an hour on 2 cores (base models cached after)
    PYTHONPATH=src python benchmarks/run_all.py --quick    # a few minutes: one seed, small or sampled datasets

Every option is passed to both scripts. Results go to ``benchmarks/results/`` (``--out-dir`` to change).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C
import paper_mcgrad
import paper_mcnet


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small version (one seed or run, sampled data)")
    parser.add_argument("--max-rows", type=int, help="sample every dataset down to this many rows")
    parser.add_argument("--mcgrad-datasets", help="datasets of paper_mcgrad.py (comma-separated)")
    parser.add_argument("--mcnet-datasets", help="datasets of paper_mcnet.py (comma-separated)")
    parser.add_argument("--out-dir", type=Path, default=C.RESULTS)
    parser.add_argument("--no-cache", action="store_true", help="refit the base models")
    parser.add_argument("--blas-threads", type=int, default=C.BASE_BLAS_THREADS)
    parser.add_argument("--smoke", action="store_true", help="cap training length (the test suite's run)")
    args = parser.parse_args(argv)

    common = ["--out-dir", str(args.out_dir), "--blas-threads", str(args.blas_threads)]
    common += ["--quick"] if args.quick else []
    common += ["--no-cache"] if args.no_cache else []
    common += ["--smoke"] if args.smoke else []
    common += ["--max-rows", str(args.max_rows)] if args.max_rows else []
    start = time.perf_counter()
    status = paper_mcgrad.main(common + (["--datasets", args.mcgrad_datasets] if args.mcgrad_datasets else []))
    status |= paper_mcnet.main(common + (["--datasets", args.mcnet_datasets] if args.mcnet_datasets else []))
    print(f"both benchmarks done in {time.perf_counter() - start:.0f} s")
    return status


if __name__ == "__main__":
    raise SystemExit(main())

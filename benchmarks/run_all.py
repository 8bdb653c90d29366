"""Run the paper replays (``papers/paper_mcgrad.py``, MCGrad Tables 2, 5, 6, and ``papers/paper_mcnet.py``, MCNet
Tables 1-3), or the quick mode of every script of one topic.

Usage::

    PYTHONPATH=src python benchmarks/run_all.py                 # both papers, full: about an hour on 2 cores
    PYTHONPATH=src python benchmarks/run_all.py --quick         # both papers, a few minutes: one seed, sampled data
    PYTHONPATH=src python benchmarks/run_all.py --topic mcgrad  # the quick mode of each script of benchmarks/mcgrad/

The paper replays write to ``benchmarks/results/`` (``--out-dir`` to change); every other option is passed to
both scripts. ``--topic`` runs each script of the topic that has a quick mode, one process each, and writes what
they write to ``--out-dir`` (a new temporary folder by default, never ``benchmarks/results/``): the quick modes
check that a script runs, and their numbers mean nothing. benchmarks/README.md lists the topics and scripts.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = "{out}"  # replaced by the output folder
#: topic -> the scripts of benchmarks/<topic>/ with a quick mode, and the arguments that select it.
#: Scripts of a topic that are not listed have no quick mode (benchmarks/README.md says so).
TOPICS: dict[str, dict[str, list[str]]] = {
    "papers": {
        "paper_mcgrad": ["--quick", "--out-dir", OUT],
        "paper_mcnet": ["--quick", "--out-dir", OUT],
        "paper_mcnet_ctr": ["--quick", "--out-dir", OUT],
    },
    "mcgrad": {
        "mcgrad_overconfident": ["--quick", "--out-dir", OUT],
        "mcgrad_mce": ["--quick", "--out-dir", OUT],
        "mcgrad_memory": ["--quick", "--out-dir", OUT],
        "mcgrad_profile": ["--quick", "--out-dir", OUT],
        "mcgrad_stopping_rule": ["--quick", "--out-dir", OUT],
        "mcgrad_tuning_vs_reference": ["--quick", "--out-dir", OUT],
        "regression_vs_reference": ["--quick", "--out", f"{OUT}/regression_vs_reference"],
    },
    "mcnet": {
        "mcnet": ["--quick", "--out-dir", OUT],
        "mcnet_synthetic": ["--quick", "--out-dir", OUT],
    },
    "baselines": {
        "calibrated_classifier": ["--quick"],
        "multiclass": ["--quick", "--out-dir", OUT],
    },
    "metrics": {
        "bootstrap_coverage": ["--quick"],
        "bootstrap_intervals": ["--quick"],
        "bootstrap_speed": ["--quick"],
    },
    "monitor": {"monitor_drift": ["--quick"]},
    "report": {"report_open": ["--quick"], "report_scale": ["--quick"]},
    "selection": {},
    "dask": {},
    "package": {},
}


def run_topic(topic: str, out_dir: Path) -> int:
    """Run the quick mode of every script of ``topic`` that has one; the number of scripts that failed."""
    scripts = TOPICS[topic]
    if not scripts:
        print(f"benchmarks/{topic}/ has no script with a quick mode (benchmarks/README.md)")
        return 0
    out_dir.mkdir(parents=True, exist_ok=True)
    failed = []
    for name, args in scripts.items():
        cmd = [sys.executable, str(HERE / topic / f"{name}.py"), *(a.replace(OUT, str(out_dir)) for a in args)]
        print("$", " ".join(cmd), flush=True)
        if subprocess.run(cmd, check=False).returncode != 0:
            failed.append(name)
    print(f"{len(scripts) - len(failed)} of {len(scripts)} quick runs of {topic} passed; output in {out_dir}")
    if failed:
        print("failed:", ", ".join(failed))
    return len(failed)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topic", choices=sorted(TOPICS), help="run the quick mode of this topic's scripts")
    parser.add_argument("--quick", action="store_true", help="the small version (one seed or run, sampled data)")
    parser.add_argument("--max-rows", type=int, help="sample every dataset down to this many rows")
    parser.add_argument("--mcgrad-datasets", help="datasets of paper_mcgrad.py (comma-separated)")
    parser.add_argument("--mcnet-datasets", help="datasets of paper_mcnet.py (comma-separated)")
    parser.add_argument("--out-dir", type=Path, help="default: benchmarks/results/, or a temporary folder with --topic")
    parser.add_argument("--no-cache", action="store_true", help="refit the base models")
    parser.add_argument("--blas-threads", type=int, help="BLAS threads of the base model (the scripts' default)")
    parser.add_argument("--smoke", action="store_true", help="cap training length (the test suite's run)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.topic:
        out_dir = args.out_dir or Path(tempfile.mkdtemp(prefix=f"mcal-bench-{args.topic}-"))
        status = int(run_topic(args.topic, out_dir) > 0)
    else:
        common = ["--out-dir", str(args.out_dir or HERE / "results")]
        common += ["--blas-threads", str(args.blas_threads)] if args.blas_threads else []
        common += ["--quick"] if args.quick else []
        common += ["--no-cache"] if args.no_cache else []
        common += ["--smoke"] if args.smoke else []
        common += ["--max-rows", str(args.max_rows)] if args.max_rows else []
        status = 0
        for name, datasets in (("paper_mcgrad", args.mcgrad_datasets), ("paper_mcnet", args.mcnet_datasets)):
            cmd = [sys.executable, str(HERE / "papers" / f"{name}.py"), *common]
            status |= subprocess.run([*cmd, *(["--datasets", datasets] if datasets else [])], check=False).returncode
    print(f"done in {time.perf_counter() - start:.0f} s")
    return status


if __name__ == "__main__":
    raise SystemExit(main())

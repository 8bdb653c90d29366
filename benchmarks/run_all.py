"""Run the paper replays (``papers/paper_mcgrad.py``, MCGrad Tables 2, 5, 6, and ``papers/paper_mcnet.py``, MCNet
Tables 1-3), or the quick mode of every script of a topic.

Usage::

    PYTHONPATH=src python benchmarks/run_all.py                 # both papers, full: about an hour on 2 cores
    PYTHONPATH=src python benchmarks/run_all.py --quick         # both papers, a few minutes: one seed, sampled data
    PYTHONPATH=src python benchmarks/run_all.py --topic mcgrad  # the quick mode of each script of benchmarks/mcgrad/
    PYTHONPATH=src python benchmarks/run_all.py --topic all     # every topic's quick modes (about 10 minutes)

The paper replays write to ``benchmarks/results/`` (``--out-dir`` to change); every other option is passed to
both scripts. ``--topic`` runs the quick mode of each script of the topic, one process each, and writes what they
write to ``--out-dir`` (a new temporary folder by default, never ``benchmarks/results/``): the quick modes check
that a script runs, and their numbers mean nothing. A script that needs what is not installed (the reference
package mcgrad 0.1.5, Chromium) is skipped with the reason. benchmarks/README.md lists the topics and scripts.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = "{out}"  # replaced by the output folder
QUICK = ["--quick", "--out-dir", OUT]
#: topic -> every script of benchmarks/<topic>/ and the arguments of its quick mode (tests/benchmarks/test_index.py
#: checks that the folders and benchmarks/README.md list the same scripts).
TOPICS: dict[str, dict[str, list[str]]] = {
    "papers": {"paper_mcgrad": QUICK, "paper_mcnet": QUICK, "paper_mcnet_ctr": QUICK},
    "mcgrad": {
        "mcgrad_vs_reference": ["--quick", "--out", f"{OUT}/mcgrad_vs_reference"],
        "mcgrad_tuning_vs_reference": QUICK,
        "regression_vs_reference": ["--quick", "--out", f"{OUT}/regression_vs_reference"],
        "mcgrad_early_stopping": ["--quick", "--out", f"{OUT}/mcgrad_early_stopping"],
        "mcgrad_stopping_rule": QUICK,
        "mcgrad_mce": QUICK,
        "mcgrad_overconfident": QUICK,
        "mcgrad_memory": QUICK,
        "mcgrad_profile": QUICK,
        "mcgrad_threads": ["--quick", "--out", f"{OUT}/mcgrad_threads"],
        "mcgrad_thread_determinism": QUICK,
    },
    "mcnet": {"mcnet_synthetic": QUICK, "mcnet": QUICK},
    "baselines": {"calibrated_classifier": ["--quick"], "multiclass": QUICK, "groups_scaling": QUICK},
    "metrics": {
        "bootstrap_coverage": ["--quick"],
        "bootstrap_intervals": ["--quick"],
        "bootstrap_speed": ["--quick"],
        "bootstrap_mce_speed": ["--quick", "--out", f"{OUT}/bootstrap_mce_speed"],
        "mce_vs_reference": QUICK,
    },
    "selection": {"selection_quality": QUICK, "selection_rule": QUICK, "selection_speed": QUICK},
    "dask": {"dask_scale": ["--quick", "--out", OUT]},
    "monitor": {"monitor_drift": ["--quick"]},
    "report": {"report_scale": ["--quick"], "report_open": ["--quick"]},
    "package": {
        "input_safety": QUICK,
        "model_file_safety": ["--quick"],
        "dependency_weight": QUICK,
    },
}
#: what a script needs beyond mcal's extras: ("module", name) importable, or ("program", name) on the PATH; without
#: it the quick run is skipped with the reason (the reference package mcgrad 0.1.5 is the ``bench`` group's).
NEEDS: dict[str, tuple[str, str]] = {
    "mcgrad_vs_reference": ("module", "mcgrad.metrics"),
    "regression_vs_reference": ("module", "mcgrad.metrics"),
    "mce_vs_reference": ("module", "mcgrad.metrics"),
    "report_open": ("program", "chromium"),
}


def missing(name: str) -> str | None:
    """Why the quick run of ``name`` cannot run here (None when it can)."""
    kind, what = NEEDS.get(name, ("", ""))
    if kind == "module":
        try:
            found = importlib.util.find_spec(what) is not None
        except ModuleNotFoundError:
            found = False
    else:
        found = kind != "program" or shutil.which(what) is not None
    return None if found else f"needs the {kind} {what}, which is not found"


def run_topic(topic: str, out_dir: Path) -> int:
    """Run the quick mode of every script of ``topic``; the number of scripts that failed (a skipped one is said)."""
    scripts = TOPICS[topic]
    out_dir.mkdir(parents=True, exist_ok=True)
    failed, skipped = [], []
    for name, args in scripts.items():
        if reason := missing(name):
            print(f"skipped {topic}/{name}.py: {reason}", flush=True)
            skipped.append(name)
            continue
        cmd = [sys.executable, str(HERE / topic / f"{name}.py"), *(a.replace(OUT, str(out_dir)) for a in args)]
        print("$", " ".join(cmd), flush=True)
        if subprocess.run(cmd, check=False).returncode != 0:
            failed.append(name)
    ran = len(scripts) - len(skipped)
    print(f"{ran - len(failed)} of {ran} quick runs of {topic} passed ({len(skipped)} skipped); output in {out_dir}")
    if failed:
        print("failed:", ", ".join(failed))
    return len(failed)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--topic",
        choices=[*sorted(TOPICS), "all"],
        help="run the quick mode of this topic's scripts (all: every topic)",
    )
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
        topics = sorted(TOPICS) if args.topic == "all" else [args.topic]
        status = int(sum(run_topic(topic, out_dir / topic) for topic in topics) > 0)
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

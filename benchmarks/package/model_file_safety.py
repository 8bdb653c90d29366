"""Forged MCGrad model files: the memory and time ``mcal.load`` takes on them, against their size.

A model file may come from anyone, and the cost of loading LightGBM model text grows with its trees and leaves, not
its bytes: issue #18 measured a forged 104 MB file of 1.2M one-leaf trees that took 61 s and 2.65 GB to load. Each
file here is a small fitted MCGrad whose first booster's trees are replaced by ``n`` copies of one tree text (the
digest recomputed, as anyone who edits a file can), plus an MCGrad fitted as usual for reference. Each is loaded in
a fresh process (one thread), which reports the outcome, the seconds ``mcal.load`` took, and its peak resident
memory above what the process held after importing mcal and LightGBM.

Used by ``input_safety.py`` (the section "Forged model files" of ``benchmarks/results/input_safety.md``); run alone,
``PYTHONPATH=src python benchmarks/package/model_file_safety.py [--quick]`` prints its table and writes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import mcal
from mcal._persistence.files import DIGEST_KEY, content_digest

#: The smallest one-leaf tree LightGBM's parser accepts (the lines mcal's check needs): 50 bytes a tree.
COMPACT = "num_leaves=1\nnum_cat=0\nleaf_value=0\nshrinkage=1\n\n\n"
#: A one-leaf tree as LightGBM 4 writes it (leaf value 0): 222 bytes a tree, the densest a real file can be.
AS_LIGHTGBM_WRITES = (
    "num_leaves=1\nnum_cat=0\nsplit_feature=\nsplit_gain=\nthreshold=\ndecision_type=\nleft_child=\nright_child=\n"
    "leaf_value=0\nleaf_weight=\nleaf_count=1\ninternal_value=\ninternal_weight=\ninternal_count=\nis_linear=0\n"
    "shrinkage=1\n\n\n"
)
#: name -> (tree text, number of trees, expected outcome); the first is the file of issue #18.
FORGED = {
    "1.2M compact one-leaf trees": (COMPACT, 1_200_000, "refused"),
    "420k one-leaf trees as LightGBM writes them": (AS_LIGHTGBM_WRITES, 420_000, "loaded"),
}

_MEASURE = """
import json, resource, sys, time
import lightgbm, mcal, mcal.mcgrad
def peak():  # this process's own high-water mark (ru_maxrss also counts the parent's memory at the fork)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
base, start = peak(), time.perf_counter()
try:
    mcal.load(sys.argv[1])
    outcome, detail = "loaded", ""
except ValueError as exc:
    outcome, detail = "refused", str(exc)
print(json.dumps({"outcome": outcome, "detail": detail, "seconds": time.perf_counter() - start,
                  "peak_mb": peak(), "peak_above_imports_mb": peak() - base}))
"""


def _small_mcgrad(path: Path, rounds: int, n_rows: int) -> Path:
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, n_rows)
    X = pd.DataFrame({"x0": rng.normal(size=n_rows), "x1": rng.normal(size=n_rows)})
    y = (rng.uniform(size=n_rows) < np.clip(p + 0.1 * X["x0"].to_numpy(), 0, 1)).astype(float)
    model = mcal.MCGrad(n_jobs=1, early_stopping=None, max_rounds=rounds, random_state=0)
    return mcal.save(model.fit(p, y, X=X), path)


def forge(path: Path, template: Path, tree: str, n_trees: int) -> Path:
    """Write ``template`` (an MCGrad model file) to ``path`` with the trees of its first booster replaced by
    ``n_trees`` copies of ``tree`` (the lines after ``Tree=i``), ``tree_sizes`` and the digest to match."""
    doc = json.loads(template.read_text())
    doc.pop(DIGEST_KEY)
    text = doc["model"]["state"]["boosters"][0]
    head = [line for line in text.partition("\nTree=0\n")[0].split("\n") if not line.startswith("tree_sizes=")]
    sizes = " ".join(str(len(f"Tree={i}\n") + len(tree)) for i in range(n_trees))
    trees = "".join(f"Tree={i}\n{tree}" for i in range(n_trees))
    doc["model"]["state"]["boosters"][0] = "\n".join(head) + f"\ntree_sizes={sizes}\n\n{trees}end of trees\n"
    doc[DIGEST_KEY] = content_digest(doc)
    path.write_text(json.dumps(doc))
    return path


def measure(path: Path) -> dict:
    """Load ``path`` in a fresh single-threaded process; its outcome, seconds and peak memory."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], env=env, capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(f"loading {path} failed: {run.stderr[-2000:]}")
    return {"bytes": path.stat().st_size, **json.loads(run.stdout.strip().splitlines()[-1])}


def run(quick: bool = False) -> pd.DataFrame:
    """One row per file: the forged ones and an MCGrad fitted on 20,000 rows with 20 rounds of 94 trees, for
    reference. ``quick``: a thousandth of the forged trees, and 2 rounds on 2,000 rows (the test suite)."""
    scale, rounds, n_rows = (0.001, 2, 2_000) if quick else (1.0, 20, 20_000)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        template = _small_mcgrad(folder / "template.json", 1, 500)
        fitted = _small_mcgrad(folder / "fitted.json", rounds, n_rows)
        files = {f"fitted MCGrad, {rounds} rounds on {n_rows} rows": (fitted, "loaded")}
        for name, (tree, n, expected) in FORGED.items():
            label = f"forged: {name}" if not quick else f"forged: {int(n * scale)} trees ({name})"
            files[label] = (forge(folder / f"forged{len(files)}.json", template, tree, int(n * scale)), expected)
        for name, (path, expected) in files.items():
            result = measure(path)
            rows.append({"case": name, "expected": expected, "impl": "mcal", **result})
            print(
                f"{name:60s} {result['outcome']:8s} {result['seconds']:7.2f} s {result['peak_mb']:7.0f} MB", flush=True
            )
            path.unlink()
    frame = pd.DataFrame(rows)
    frame["as_expected"] = np.where(frame["outcome"] == frame["expected"], "yes", "no")
    return frame


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a thousandth of the forged trees: a smoke test")
    print(run(quick=parser.parse_args(argv).quick).to_string())


if __name__ == "__main__":
    main()

"""What installing and importing MCGrad costs: mcal against the reference package ``mcgrad`` 0.1.5.

Each environment is a fresh virtual environment built in one run, on the same machine:

- ``mcal[mcgrad]``: this checkout with its MCGrad extra (LightGBM), what a user of MCGrad alone installs;
- ``mcgrad 0.1.5``: the reference package from PyPI, with ``torch==2.13.0`` (the CPU build) installed first, as
  ``mcgrad_vs_reference.py`` does: an unpinned torch is a CUDA build of several GB, which would only widen the gap;
- ``mcal[all]``: this checkout with every extra (MCNet's PyTorch, Dask, plotting, lleaves), the same torch first,
  for the breadth the reference does not offer.

Per environment: the distributions that the install added (names and count), the disk the venv grew by
(``site-packages`` and ``bin``), the wall time of the install (it depends on pip's cache and the network: a
shape, not a target), and, for the statement that makes MCGrad usable (import the class and LightGBM), the
import time (the best of ``--repeats`` fresh interpreters, minus a bare interpreter's start) and the peak
resident memory of that interpreter (VmHWM). Ratios are the reference's over mcal[mcgrad]'s.

Usage (from the repository root; needs PyPI, and a few GB of disk in ``--workdir``)::

    PYTHONPATH=src python benchmarks/package/dependency_weight.py [--workdir /tmp/mcal-depweight] [--repeats 5]
    PYTHONPATH=src python benchmarks/package/dependency_weight.py --quick   # the import half here, no network

Writes ``benchmarks/results/dependency_weight.md`` and ``.csv``; the venvs are deleted afterwards unless
``--keep``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
TORCH = "torch==2.13.0"
REFERENCE = "mcgrad==0.1.5"

#: name -> (pip requirement lists, installed in order; statement that makes MCGrad usable).
ENVIRONMENTS = {
    "mcal[mcgrad]": ([[f"{ROOT}[mcgrad]"]], "from mcal import MCGrad; import lightgbm"),
    "mcgrad 0.1.5": ([[TORCH], [REFERENCE]], "from mcgrad.methods import MCGrad; import lightgbm"),
    "mcal[all]": ([[TORCH], [f"{ROOT}[all]"]], "from mcal import MCGrad, MCNet; import lightgbm, torch"),
}

#: Prints the distributions of the interpreter that runs it, as JSON.
_LIST_DISTS = "import json, importlib.metadata as m; print(json.dumps(sorted({d.metadata['Name'].lower() for d in m.distributions()})))"
#: Runs a statement, then prints its peak resident memory in KiB (VmHWM).
_PEAK_AFTER = (
    "import sys; exec(sys.argv[1]); "
    "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"
)


def disk_bytes(folder: Path) -> int:
    """Bytes of the regular files under ``folder`` (links not followed)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def distributions(python: Path) -> set[str]:
    out = subprocess.run([python, "-c", _LIST_DISTS], check=True, capture_output=True, text=True)
    return set(json.loads(out.stdout))


def best_start(python: Path, args: list[str], repeats: int) -> float:
    """Fewest seconds of ``python *args`` over ``repeats`` runs (others' load only adds time)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([python, *args], check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def measure(name: str, workdir: Path, repeats: int) -> dict:
    steps, statement = ENVIRONMENTS[name]
    venv = workdir / name.replace("[", "_").replace("]", "").replace(" ", "_")
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = venv / "bin" / "python"
    before_dists, before_bytes = distributions(python), disk_bytes(venv)
    start = time.perf_counter()
    for requirements in steps:
        subprocess.run(
            [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *requirements], check=True
        )
    install_s = time.perf_counter() - start
    added = sorted(distributions(python) - before_dists)
    return {
        "environment": name,
        "statement": statement,
        "distributions_added": len(added),
        "disk_mib": (disk_bytes(venv) - before_bytes) / 2**20,
        "install_s": install_s,
        **import_cost(python, statement, repeats),
        "added": " ".join(added),
    }


def import_cost(python: Path, statement: str, repeats: int) -> dict:
    """Seconds of ``statement`` beyond a bare interpreter's start, and the peak resident memory after it."""
    bare = best_start(python, ["-c", "pass"], repeats)
    imported = best_start(python, ["-c", statement], repeats)
    peak = subprocess.run([python, "-c", _PEAK_AFTER, statement], check=True, capture_output=True, text=True)
    return {"import_s": imported - bare, "import_peak_rss_mib": int(peak.stdout.split()[-1]) / 1024}


def quick_row() -> dict:
    """The import half in this interpreter, nothing installed (no network): a smoke test of the measurement."""
    statement = ENVIRONMENTS["mcal[mcgrad]"][1]
    row = {"environment": "this interpreter (quick)", "statement": statement, "distributions_added": 0,
           "disk_mib": 0.0, "install_s": 0.0}  # fmt: skip
    return {**row, **import_cost(Path(sys.executable), statement, 1), "added": ""}


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        return out.stdout.strip() + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def write(rows: list[dict], repeats: int, out: Path) -> None:
    import pandas as pd  # the benchmark's own interpreter, not the measured venvs

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
    from _common import md_table

    frame = pd.DataFrame(rows)
    by_env = frame.set_index("environment")
    ratios = pd.DataFrame(
        [
            {
                "quantity": q,
                "mcgrad 0.1.5 / mcal[mcgrad]": by_env.loc["mcgrad 0.1.5", q] / by_env.loc["mcal[mcgrad]", q],
            }
            for q in ("distributions_added", "disk_mib", "install_s", "import_s", "import_peak_rss_mib")
            if {"mcgrad 0.1.5", "mcal[mcgrad]"} <= set(by_env.index)
        ]
    )
    header = [
        f"- date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; mcal commit {git_commit()}; "
        f"{os.cpu_count()} cores ({platform.machine()}), Python {platform.python_version()}",
        f"- fresh venvs built in this run; import times: best of {repeats} fresh interpreters minus a bare one's "
        "start; `import_peak_rss_mib`: VmHWM of an interpreter after the statement; `install_s` depends on pip's "
        "cache and the network",
        f"- the reference gets `{TORCH}` (the CPU build) first; an unpinned torch is a CUDA build of several GB",
    ]
    table = md_table(frame.drop(columns=["added", "statement"]), digits=3)
    statements = "\n".join(f"- `{r['environment']}`: `{r['statement']}`" for r in rows)
    added = "\n".join(f"- `{r['environment']}` ({r['distributions_added']}): {r['added']}" for r in rows)
    text = (
        "# Dependency weight: mcal against the reference package mcgrad 0.1.5\n\n"
        + "\n".join(header)
        + "\n\n## Per environment\n\n"
        + table
        + "\n\nImport statements:\n\n"
        + statements
        + "\n\n## Ratios, reference over mcal[mcgrad]\n\n"
        + md_table(ratios, digits=3)
        + "\n\n## Distributions each install added\n\n"
        + added
        + "\n"
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "dependency_weight.md").write_text(text, encoding="utf-8")
    frame.to_csv(out / "dependency_weight.csv", index=False, float_format="%.6g")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/mcal-depweight"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the venvs")
    parser.add_argument("--quick", action="store_true", help="the import cost in this interpreter only: no venv")
    parser.add_argument(
        "--out-dir", type=Path, help="default: benchmarks/results/, a new temporary folder with --quick"
    )
    args = parser.parse_args(argv)
    if args.quick:
        write([quick_row()], 1, args.out_dir or Path(tempfile.mkdtemp(prefix="mcal-bench-dependency_weight-")))
        return
    args.workdir.mkdir(parents=True, exist_ok=True)
    try:
        rows = [measure(name, args.workdir, args.repeats) for name in ENVIRONMENTS]
    finally:
        if not args.keep:
            shutil.rmtree(args.workdir, ignore_errors=True)
    write(rows, args.repeats, args.out_dir or RESULTS)


if __name__ == "__main__":
    main()

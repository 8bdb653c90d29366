"""Shared plumbing of the paper benchmarks: run header, base model with a cache, result files.

Benchmark scripts only; never imported by the package.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import os
import platform
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from _datasets import DataUnavailable, protocol_split
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import mcal

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
CACHE = ROOT / "benchmarks" / ".cache"
#: BLAS threads of the base logistic regression. lbfgs stops at its iteration cap on Bank Marketing, and
#: OpenBLAS takes a different summation path with one thread than with two or more (2, 3 and 4 threads give
#: identical fits); the multi-threaded path reproduces the paper's Credit Default base row to the 4th decimal.
BASE_BLAS_THREADS = 2


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=10
        )
        # results files written earlier in the same run (run_all.py) are not changes to the code
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)benchmarks/results"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return out.stdout.strip() + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def mcal_version() -> str:
    """``mcal.__version__``, or the source tree's pyproject version when mcal runs uninstalled from ``src``."""
    if not mcal.__version__.startswith("0.0.0"):
        return mcal.__version__
    for line in (ROOT / "pyproject.toml").read_text(encoding="utf-8").splitlines():
        if line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"') + " (source tree, not installed)"
    return mcal.__version__


def command_line(script: str, argv: list[str] | None) -> str:
    """How ``script`` (its ``__file__``) was run: ``python benchmarks/<topic>/<name>.py`` and its arguments."""
    args = sys.argv[1:] if argv is None else argv
    return " ".join(["python", Path(script).resolve().relative_to(ROOT).as_posix(), *args])


def run_header(title: str, seeds, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The facts every results file starts with."""
    versions = (
        f"python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
        f"scikit-learn {sklearn.__version__}"
    )
    for dist in ("lightgbm", "torch"):
        try:
            versions += f", {dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            versions += f", {dist} not installed"
    head = {
        "benchmark": title,
        "mcal version": mcal_version(),
        "git commit": git_commit(),
        "date (UTC)": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "seeds": ", ".join(str(s) for s in seeds),
        "cores": str(os.cpu_count()),
        "machine": f"{platform.system()} {platform.machine()}",
        "versions": versions,
    }
    head.update(extra or {})
    return head


def base_model_scores(
    ds,
    train: np.ndarray,
    parts: dict[str, np.ndarray],
    *,
    cache_key: str,
    max_iter: int = 5000,
    solver: str = "lbfgs",
    blas_threads: int = BASE_BLAS_THREADS,
    cache: Path | None = CACHE,
) -> tuple[dict[str, np.ndarray], dict]:
    """Fit the protocol's base model, ``LogisticRegression(C=ds.C, max_iter=5000)``, and score ``parts``.

    Scores are cached under ``benchmarks/.cache`` keyed by the data, the rows, the settings and the
    scikit-learn version, because lbfgs on unscaled Bank Marketing takes minutes per fit.

    Returns
    -------
    scores : dict of name to ndarray
        P(y=1) for the rows of each part.
    info : dict
        ``n_iter`` (int), ``converged`` (bool), ``fit_s`` (float, 0 when read from the cache).
    """
    digest = hashlib.sha256()
    for arr in (ds.X.to_numpy(), ds.y, train, *parts.values()):
        digest.update(np.ascontiguousarray(arr).tobytes())
    digest.update(f"{ds.C}|{max_iter}|{solver}|{blas_threads}|{sklearn.__version__}|{list(parts)}".encode())
    path = None if cache is None else cache / f"{cache_key}-{digest.hexdigest()[:16]}.npz"
    if path is not None and path.exists():
        with np.load(path) as z:
            return {k: z[k] for k in parts}, {
                "n_iter": int(z["_n_iter"]),
                "converged": bool(z["_converged"]),
                "fit_s": 0.0,
            }
    X = ds.X.to_numpy()
    start = _dt.datetime.now()
    with threadpool_limits(limits=blas_threads, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LogisticRegression(C=ds.C, max_iter=max_iter, solver=solver).fit(X[train], ds.y[train])
    fit_s = (_dt.datetime.now() - start).total_seconds()
    scores = {k: model.predict_proba(X[rows])[:, 1] for k, rows in parts.items()}
    n_iter = int(np.max(model.n_iter_))
    info = {"n_iter": n_iter, "converged": n_iter < max_iter, "fit_s": fit_s}
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **scores, _n_iter=n_iter, _converged=info["converged"])
    return scores, info


def protocol_scores(ds, key: str, max_rows, seed: int, *, cache: Path | None, blas_threads: int):
    """The protocol's split of ``ds`` by ``seed`` and the base model's scores of its parts.

    Returns ``((train, validation, test) row indices, scores of "train", "val" and "test", info)``, as
    :func:`base_model_scores` (cached under a key of the dataset, its row cap and the seed).
    """
    tr, va, te = protocol_split(ds.n, seed)
    scores, info = base_model_scores(
        ds,
        tr,
        {"train": tr, "val": va, "test": te},
        cache_key=f"{key}-{max_rows}-{seed}",
        cache=cache,
        blas_threads=blas_threads,
    )
    return (tr, va, te), scores, info


def cache_note(fit_seconds: pd.Series) -> str:
    """How many base-model fits came from the cache (fit time 0) and how long the others took."""
    cached = int((fit_seconds == 0).sum())
    return (
        f"{len(fit_seconds)} fits, {cached} read from benchmarks/.cache (fitted by an earlier run with the same "
        f"data, rows, settings and scikit-learn), the others took {fit_seconds.sum():.0f} s in this run"
    )


def add_run_options(parser) -> None:
    """The command-line options both paper scripts share."""
    parser.add_argument("--quick", action="store_true", help="the small version (one seed or run, sampled data)")
    parser.add_argument("--datasets", help="comma-separated dataset keys (see the script's docstring)")
    parser.add_argument("--max-rows", type=int, help="sample every dataset down to this many rows")
    add_out_dir_option(parser)
    parser.add_argument("--no-cache", action="store_true", help="refit the base models")
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=BASE_BLAS_THREADS,
        help="BLAS threads of the base model (2 reproduces the paper; 1 is faster on tiny data)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="cap training epochs/iterations: exercises every code path, numbers meaningless (tests)",
    )


def run_datasets(keys, run_one, max_rows_for) -> tuple[list[dict], list[dict], dict[str, str]]:
    """``run_one(key, max_rows) -> (rows, description)`` for every key; missing data is skipped and recorded."""
    rows, descs, skipped = [], [], {}
    for key in keys:
        max_rows = max_rows_for(key)
        print(f"{key}" + (f" (at most {max_rows} rows)" if max_rows else ""))
        try:
            ds_rows, desc = run_one(key, max_rows)
        except DataUnavailable as exc:
            skipped[key] = str(exc)
            print(f"  skipped: {exc}")
            continue
        rows += ds_rows
        descs.append(desc)
    return rows, descs, skipped


def results_frame(rows: list[dict]) -> pd.DataFrame:
    """The raw results, one row per fit: always with a ``reason`` column (empty where every method ran)."""
    raw = pd.DataFrame(rows)
    if "reason" not in raw:
        raw["reason"] = pd.Series(pd.NA, index=raw.index, dtype=object)
    return raw


def fmt(value, digits: int = 4) -> str:
    """A table cell: 4 decimals, "n/a" for a missing value, "inf" for an infinite one."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "n/a"
    if isinstance(value, float) and np.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, (int, np.integer)):
        return str(value)
    return f"{value:.{digits}f}"


def md_table(df: pd.DataFrame, digits: int = 4) -> str:
    """A Markdown table of ``df`` (index ignored), numbers with ``digits`` decimals."""
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = [
            fmt(v, digits)
            if isinstance(v, (float, int, np.floating, np.integer)) and not isinstance(v, bool)
            else ("" if v is None else str(v))
            for v in row
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def implementation_section(implementation: dict[str, str]) -> str:
    table = pd.DataFrame([{"quantity": k, "computed by": v} for k, v in implementation.items()])
    return "## Which code computed each number\n\n" + md_table(table)


def write_markdown(name: str, header: dict[str, str], sections: list[str], out_dir: Path = RESULTS) -> Path:
    """Write ``<name>.md``: the title, the header as a list, then the sections."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / f"{name}.md"
    head_md = "\n".join(f"- **{k}**: {v}" for k, v in header.items())
    md.write_text(f"# {header['benchmark']}\n\n{head_md}\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8")
    return md


def write_results(
    name: str, header: dict[str, str], sections: list[str], raw: pd.DataFrame, out_dir: Path = RESULTS
) -> tuple[Path, Path]:
    """Write ``<name>.md`` (header + sections) and ``<name>.csv`` (header as ``# key: value`` lines + rows)."""
    md = write_markdown(name, header, sections, out_dir)
    csv = out_dir / f"{name}.csv"
    with csv.open("w", encoding="utf-8") as fh:
        for k, v in header.items():
            fh.write(f"# {k}: {v}\n")
        raw.to_csv(fh, index=False, float_format="%.6g")
    return md, csv


def read_results(csv: Path) -> tuple[dict[str, str], pd.DataFrame]:
    """The header (``# key: value`` lines) and rows of a ``.csv`` that :func:`write_results` wrote."""
    header = {}
    for line in csv.read_text(encoding="utf-8").splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(": ")
        header[key] = value
    return header, pd.read_csv(csv, comment="#")


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--quick``, ``--out-dir`` and ``--render``, the output options every results-writing script shares."""
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: checks that the script runs, numbers meaningless"
    )
    add_out_dir_option(parser)
    add_render_option(parser)


def add_render_option(parser: argparse.ArgumentParser) -> None:
    """``--render``: rewrite the results' ``.md`` from their ``.csv`` (see :func:`render_results`)."""
    parser.add_argument(
        "--render", action="store_true", help="rewrite the .md from the .csv of an earlier run (nothing measured)"
    )


def add_out_dir_option(parser: argparse.ArgumentParser) -> None:
    """``--out-dir``: where the results files go (see :func:`out_dir_of`)."""
    parser.add_argument(
        "--out-dir", type=Path, help="default: benchmarks/results/, or a new temporary folder with --quick"
    )


def out_dir_of(args: argparse.Namespace, name: str) -> Path:
    """``--out-dir``, else a new temporary folder for ``--quick`` (never ``benchmarks/results/``), else that folder."""
    if args.out_dir is not None:
        return args.out_dir
    if args.quick:
        folder = Path(tempfile.mkdtemp(prefix=f"mcal-bench-{name}-"))
        print(f"--quick: writing to {folder}")
        return folder
    return RESULTS


def docstring_sections(doc: str | None, digits: int) -> Callable[[pd.DataFrame], list[str]]:
    """The sections of a results file that is a script's docstring (up to its usage) and its rows as one table."""
    return lambda raw: [(doc or "").split("\n\nUsage")[0], md_table(raw, digits=digits)]


def render_results(name: str, sections: Callable[[pd.DataFrame], list[str]], out_dir: Path = RESULTS) -> Path:
    """Rewrite ``<name>.md`` from ``<name>.csv``: its header and ``sections(rows)``; the ``.csv`` is left as it is."""
    csv = out_dir / f"{name}.csv"
    if not csv.exists():
        raise SystemExit(f"--render needs the results of an earlier run; {csv} does not exist")
    header, raw = read_results(csv)
    return write_markdown(name, header, sections(raw), out_dir)

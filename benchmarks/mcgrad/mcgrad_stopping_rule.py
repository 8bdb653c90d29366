"""MCGrad's early-stopping rule: plain "any lower validation loss" against a standard-error rule (``min_gain_se``).

Issue #20: on scores calibrated by construction, holdout early stopping kept a harmful round that k-fold did not.
``min_gain_se=k`` keeps a round only if its mean per-row validation log-loss gain over the best round exceeds k
standard errors of that gain. This script fits MCGrad (defaults otherwise: holdout 0.2, patience 0,
``rescale_input``) with each ``k`` of ``--rules`` on, per seed,

1. ``calibrated_N``: scores calibrated by construction, ``y ~ Bernoulli(p)`` with ``p`` a function of the
   features (2 categoricals of 5 and 12 levels, 3 numericals, the score is the true probability), N training
   rows and a fresh test set of max(N, 50,000) rows drawn the same way: MCGrad should leave ``p`` unchanged;
   reported: rounds, held-out log loss minus the truth's, and the mean |prediction - p| on the test rows;
2. the data sets of ``mcgrad_early_stopping.md`` (synthetic 100k, Bank Marketing, Credit Default with the
   paper's splits, loaders of ``mcgrad_vs_reference.py``), where rounds help: held-out log loss and
   ``mcal.metrics.mce(...).mce_sigma`` with segments from the features.

Seed s draws the calibrated data and is MCGrad's ``random_state`` (so it sets the holdout split). Means and
standard errors are over seeds; differences to ``k=0`` are paired by seed.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_stopping_rule.py [--jobs 2]
    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_stopping_rule.py --quick   # tiny data, 2 seeds: a smoke test
    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_stopping_rule.py --render  # the .md again from the .csv

Writes ``benchmarks/results/mcgrad_stopping_rule.md`` and ``.csv`` (``--out-dir`` for another folder; ``--quick``
writes to a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.metrics import log_loss

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import RESULTS, add_output_options, md_table, out_dir_of, render_results, run_header, write_results

from mcal import MCGrad
from mcal.metrics import mce

NAME = "mcgrad_stopping_rule"
TITLE = "MCGrad: the early-stopping rule min_gain_se, on calibrated and on real data"


def calibrated(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Features, the true probability (the score) and labels drawn from it."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 5, n), rng.integers(0, 12, n)
    x = rng.normal(size=(n, 3))
    logit = -1.0 + np.linspace(-1, 1, 5)[a] + 0.5 * np.sin(b) + 0.8 * x[:, 0] - 0.4 * x[:, 1] * x[:, 2]
    p = expit(logit)
    X = pd.DataFrame({"a": pd.Categorical(a), "b": pd.Categorical(b), "x0": x[:, 0], "x1": x[:, 1], "x2": x[:, 2]})
    return X, p, (rng.random(n) < p).astype(float)


def run_calibrated(task: tuple[int, int, list[float]]) -> list[dict]:
    n, seed, rules = task
    X, p, y = calibrated(n, 10_000 + seed)
    X_te, p_te, y_te = calibrated(max(n, 50_000), 20_000 + seed)
    truth = log_loss(y_te, p_te)
    rows = []
    for k in rules:
        start = time.perf_counter()
        model = MCGrad(min_gain_se=k, n_jobs=1, random_state=seed).fit(p, y, X=X)
        pred = model.predict(p_te, X=X_te)
        rows.append({"data": f"calibrated_{n}", "min_gain_se": k, "seed": seed, "rounds": model.n_rounds_,
                     "fit_s": time.perf_counter() - start, "log_loss_excess": log_loss(y_te, pred) - truth,
                     "mean_abs_change": float(np.abs(pred - p_te).mean()), "mce_sigma": np.nan})  # fmt: skip
    return rows


def prepare_dataset(task: tuple[str, bool, str]) -> dict | None:
    """Write one data set's train/test files to the cache folder once (the base logistic fits take minutes)."""
    name, quick, folder = task
    from mcgrad_vs_reference import prepare

    size = (5_000 if quick else 100_000) if name == "synthetic" else None
    tag = f"{name}_{size}" if size else name
    info_file = Path(folder) / f"{tag}.json"
    if not info_file.exists():
        info = prepare(name, size, Path(folder))
        if info is None:
            return None
        info_file.write_text(json.dumps(info))
    return json.loads(info_file.read_text())


def run_dataset(task: tuple[dict, int, list[float], bool, str]) -> list[dict]:
    info, seed, rules, quick, folder = task
    train = pd.read_parquet(Path(folder) / f"{info['tag']}_train.parquet")
    test = pd.read_parquet(Path(folder) / f"{info['tag']}_test.parquet")
    cols, cats = info["cats"] + info["nums"], info["cats"]
    if quick:
        train, test = train.iloc[:3000], test.iloc[:2000]
    y_te, segments_X = test["__label__"].to_numpy(), test[cols].astype({c: str for c in cats})
    rows = []
    for k in rules:
        start = time.perf_counter()
        model = MCGrad(min_gain_se=k, n_jobs=1, categorical_features=cats, random_state=seed)
        model.fit(train["__score__"].to_numpy(), train["__label__"].to_numpy(), X=train[cols])
        fit_s = time.perf_counter() - start
        pred = model.predict(test["__score__"].to_numpy(), X=test[cols])
        rows.append({"data": info["tag"], "min_gain_se": k, "seed": seed, "rounds": model.n_rounds_, "fit_s": fit_s,
                     "log_loss": log_loss(y_te, pred), "mce_sigma": float(mce(y_te, pred, X=segments_X).mce_sigma),
                     "mean_abs_change": float(np.abs(pred - test["__score__"].to_numpy()).mean())})  # fmt: skip
    return rows


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per data set and rule: rounds, and mean ± standard error over seeds of each quality column, with the paired
    difference to ``min_gain_se=0``."""
    out = []
    metrics = [c for c in ("log_loss_excess", "log_loss", "mce_sigma", "mean_abs_change") if c in table]
    for (data, k), group in table.groupby(["data", "min_gain_se"], sort=False):
        base = table[(table.data == data) & (table.min_gain_se == 0)].set_index("seed")
        row = {"data": data, "min_gain_se": k, "seeds": len(group),
               "rounds": f"{group.rounds.min()}-{group.rounds.max()} (mean {group.rounds.mean():.2f})",
               "fit_s": group.fit_s.mean()}  # fmt: skip
        for m in metrics:
            values = group.set_index("seed")[m]
            if values.isna().all():
                continue
            row[m] = f"{values.mean():.5f} ± {_se(values):.5f}"
            if k != 0 and not base.empty:
                diff = values - base[m].reindex(values.index)
                row[f"{m} vs 0"] = f"{diff.mean():+.5f} ± {_se(diff):.5f}"
        out.append(row)
    return pd.DataFrame(out)


def _se(values: pd.Series) -> float:
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=float, nargs="+", default=[0.0, 1.0], help="min_gain_se values (0 first)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 50_000, 500_000])
    parser.add_argument("--size-seeds", type=int, nargs="+", default=[20, 10, 3], help="seeds per size")
    parser.add_argument("--datasets", nargs="*", default=["synthetic", "bank", "credit"])
    parser.add_argument("--seeds", type=int, default=10, help="seeds of each data set of --datasets")
    parser.add_argument("--jobs", type=int, default=1, help="processes, each fitting with one LightGBM thread")
    add_output_options(parser)
    parser.add_argument(
        "--cache-dir", help="folder of the prepared data sets, kept between runs (default: a temporary one)"
    )
    parser.add_argument("--from-csv", nargs="+", help="write the summary of these runs' CSV files, fitting nothing")
    args = parser.parse_args(argv)
    if args.render:
        render_results(NAME, sections, args.out_dir or RESULTS)
        return 0
    out = out_dir_of(args, NAME)
    if args.from_csv:
        head = {"benchmark": TITLE, "merged from": ", ".join(Path(f).name for f in args.from_csv),
                "threads": "1 LightGBM thread per fit"}  # fmt: skip
        write(pd.concat([pd.read_csv(f, comment="#") for f in args.from_csv]).to_dict("records"), head, out)
        return 0
    if args.quick:
        args.sizes, args.size_seeds, args.seeds = [2_000], [2], 2
    if len(args.size_seeds) != len(args.sizes):
        parser.error(f"--size-seeds must give one count per size; got {len(args.size_seeds)} for {len(args.sizes)}")
    head = run_header(TITLE, range(max([args.seeds, *args.size_seeds])),
                      {"threads": "1 LightGBM thread per fit, OMP_NUM_THREADS=1", "processes": str(args.jobs),
                       "load average at start": f"{os.getloadavg()[0]:.1f}"})  # fmt: skip
    sizes = list(zip(args.sizes, args.size_seeds, strict=True))
    tasks = [(run_calibrated, (n, s, args.rules)) for n, k in sizes[:1] for s in range(k)]
    n_first = len(tasks)
    tasks += [(run_calibrated, (n, s, args.rules)) for n, k in sizes[1:] for s in range(k)]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(args.jobs) as pool:
        folder = args.cache_dir or tmp
        Path(folder).mkdir(parents=True, exist_ok=True)
        infos = [i for i in pool.map(prepare_dataset, [(d, args.quick, folder) for d in args.datasets]) if i]
        tasks = [*tasks[:n_first], *[(run_dataset, (i, s, args.rules, args.quick, folder)) for i in infos
                                     for s in range(args.seeds)], *tasks[n_first:]]  # fmt: skip
        # results written after each task: a cut run keeps what it has
        for done in as_completed([pool.submit(fn, task) for fn, task in tasks]):
            rows += done.result()
            print(f"{len(rows)} fits: {rows[-1]['data'] if rows else ''}", flush=True)
            write(rows, head, out)
    print(f"wrote {out / NAME}.md")
    return 0


def sections(table: pd.DataFrame) -> list[str]:
    """The results file's text after its header: the columns, then the summary over seeds."""
    return [
        "- `log_loss_excess`: held-out log loss minus that of the true probabilities; `mean_abs_change`: mean\n"
        "  |prediction - input score| on the test rows; `vs 0`: mean ± standard error over seeds of the\n"
        "  difference to `min_gain_se=0` paired by seed; `fit_s`: seconds per fit (shared machine)",
        md_table(summary(table), 5),
    ]


def write(rows: list[dict], head: dict[str, str], out_dir: Path) -> None:
    """The CSV of every fit and the Markdown summary, from the rows so far."""
    head = {**head, "load average at end": f"{os.getloadavg()[0]:.1f}"} if "seeds" in head else head
    table = pd.DataFrame(rows).sort_values(["data", "min_gain_se", "seed"], kind="stable")
    write_results(NAME, head, sections(table), table, out_dir)


if __name__ == "__main__":
    sys.exit(main())

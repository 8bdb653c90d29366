"""How MCGrad's early-stopping rule chooses the number of rounds, over many seeds: the evidence for its defaults.

mcal and the reference package fit the same model for the same number of rounds ``T`` (see
``results/mcgrad_vs_reference.md``: rows with equal rounds have equal log loss and MCE), so held-out quality
differs only through the ``T`` that early stopping picks, and that pick moves with the random split. This
script measures, per data set:

1. the held-out log loss and multicalibration error of the refit with ``T = 0..12`` rounds
   (``early_stopping=None, max_rounds=T``; deterministic), T = 0..20;
2. for each rule (holdout with ``validation_fraction`` 0.1, 0.2, 0.3; k-fold with 5 folds, the reference
   package's rule below 2.5M rows) and seed (``random_state``), the validation-loss curve over rounds, from one
   fit with a long patience; the rounds that patience 0, 1 and 2 would choose follow from the curve, because
   the losses of the rounds do not depend on the patience;
3. per rule and patience: the spread of ``T``, the mean and standard error over seeds of the held-out MCE and
   log loss that ``T`` gives (from step 1), and the cost of the fit in full-data rounds (early-stopping
   boosters times the share of rows each trains on, plus the ``T`` refit rounds): a measure of fit time that
   the load of this shared machine does not move.

Data as in ``mcgrad_vs_reference.py`` (its loaders): the 100k-row synthetic set, Bank Marketing and Credit
Default with the paper's splits. MCE is ``mcal.metrics.mce(...).mce_sigma`` with segments from the
features (the reference's metric needs its package; the two agree to the shown digits on Bank Marketing).

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_early_stopping.py [--seeds 20] [--kfold-seeds 10]
    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_early_stopping.py --quick   # to a temporary folder: a smoke test

Writes ``benchmarks/results/mcgrad_early_stopping.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import RESULTS, git_commit, md_table
from mcgrad_vs_reference import prepare

from mcal import MCGrad
from mcal.metrics import mce

RULES = {
    "holdout 0.1": dict(validation_fraction=0.1),
    "holdout 0.2": dict(validation_fraction=0.2),
    "holdout 0.3": dict(validation_fraction=0.3),
    "kfold 5": dict(early_stopping="kfold", n_folds=5),
}
MAX_T = 20
LONG_PATIENCE = 6


def chosen_rounds(losses: list[float], patience: int) -> tuple[int, int]:
    """``(T, rounds fitted)`` that early stopping with ``patience`` picks on a validation-loss curve (index 0:
    the input), by the rule of ``mcal.mcgrad.engine.boost_rounds``."""
    best, wait = 0, 0
    for t in range(1, len(losses)):
        if losses[t] < losses[best]:
            best, wait = t, 0
        else:
            wait += 1
            if wait > patience:
                return best, t
    return best, len(losses) - 1


def run_dataset(name: str, seeds: int, kfold_seeds: int, synthetic_rows: int = 100_000) -> tuple[pd.DataFrame, dict]:
    """Per-seed rows of every rule and patience on one data set, and its ``{T: (mce, log loss)}``."""
    with tempfile.TemporaryDirectory() as tmp:
        return _run_dataset(name, seeds, kfold_seeds, Path(tmp), synthetic_rows)


def _run_dataset(
    name: str, seeds: int, kfold_seeds: int, folder: Path, synthetic_rows: int
) -> tuple[pd.DataFrame, dict]:
    info = prepare(name, synthetic_rows if name == "synthetic" else None, folder)
    if info is None:
        return pd.DataFrame(), {}
    cats, nums = info["cats"], info["nums"]
    train = pd.read_parquet(folder / f"{info['tag']}_train.parquet")
    test = pd.read_parquet(folder / f"{info['tag']}_test.parquet")
    p, y, X = train["__score__"].to_numpy(), train["__label__"].to_numpy(), train[cats + nums]
    segments_X = test[cats + nums].astype({c: str for c in cats})
    base = dict(n_jobs=1, categorical_features=cats)
    quality = {}
    for T in range(MAX_T + 1):  # the refit with T rounds: what any rule gets when it picks T
        model = MCGrad(early_stopping=None, max_rounds=T, **base).fit(p, y, X=X)
        pred = model.predict(test["__score__"].to_numpy(), X=test[cats + nums])
        quality[T] = (
            float(mce(test["__label__"].to_numpy(), pred, X=segments_X).mce_sigma),
            log_loss(test["__label__"].to_numpy(), pred),
        )
        print(f"{name} T={T}: mce {quality[T][0]:.4f} log loss {quality[T][1]:.5f}", flush=True)
    rows = []
    for rule, kwargs in RULES.items():
        share = (1 - kwargs["validation_fraction"]) if "validation_fraction" in kwargs else kwargs["n_folds"] - 1
        for seed in range(kfold_seeds if rule.startswith("kfold") else seeds):
            start = time.perf_counter()
            model = MCGrad(
                random_state=seed, patience=LONG_PATIENCE, max_rounds=MAX_T + LONG_PATIENCE + 1, **base, **kwargs
            ).fit(p, y, X=X)
            losses = list(model.validation_losses_)
            print(f"{name} {rule} seed={seed}: {time.perf_counter() - start:.1f}s", flush=True)
            for patience in (0, 1, 2):
                T, fitted = chosen_rounds(losses, patience)
                if T > MAX_T:
                    raise RuntimeError(f"{name} {rule} seed={seed} chose {T} > {MAX_T} rounds; raise MAX_T")
                rows.append({"dataset": info["tag"], "rule": rule, "patience": patience, "seed": seed, "rounds": T,
                             "cost_rounds": fitted * share + T, "mce_sigma": quality[T][0],
                             "log_loss": quality[T][1]})  # fmt: skip
    return pd.DataFrame(rows), quality


def summary(table: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (rule, patience), group in table.groupby(["rule", "patience"], sort=False):
        n = len(group)
        out.append({"rule": rule, "patience": patience, "seeds": n,
                    "rounds": f"{group.rounds.min()}-{group.rounds.max()} (mean {group.rounds.mean():.2f})",
                    "mce_mean": group.mce_sigma.mean(), "mce_se": group.mce_sigma.std(ddof=1) / np.sqrt(n),
                    "log_loss_mean": group.log_loss.mean(), "cost_rounds": group.cost_rounds.mean()})  # fmt: skip
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="synthetic,bank,credit")
    parser.add_argument("--seeds", type=int, default=20, help="seeds of each holdout rule")
    parser.add_argument("--kfold-seeds", type=int, default=10, help="seeds of the k-fold rule")
    parser.add_argument("--jobs", type=int, default=1, help="data sets run in parallel, one process each")
    parser.add_argument(
        "--out", help="results path without extension (default: benchmarks/results/mcgrad_early_stopping)"
    )
    parser.add_argument("--quick", action="store_true", help="5,000 synthetic rows, 2 seeds: a smoke test")
    args = parser.parse_args(argv)
    synthetic_rows = 100_000
    if args.quick:
        args.datasets, args.seeds, args.kfold_seeds, synthetic_rows = "synthetic", 2, 1, 5_000
    if args.out is None:
        folder = Path(tempfile.mkdtemp(prefix="mcal-bench-mcgrad_early_stopping-")) if args.quick else RESULTS
        args.out = str(folder / "mcgrad_early_stopping")
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    sections, tables = [], []
    names = args.datasets.split(",")
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run_dataset, names, [args.seeds] * len(names), [args.kfold_seeds] * len(names),
                                [synthetic_rows] * len(names)))  # fmt: skip
    for table, quality in results:
        if not table.empty:
            tables.append(table)
            by_t = (
                pd.DataFrame([{"T": T, "mce_sigma": m, "log_loss": ll} for T, (m, ll) in quality.items()])
                .set_index("T")
                .T
            )
            sections += [f"## {table.dataset.iloc[0]}", "", "Held-out quality of the refit with T rounds:", "",
                         md_table(by_t.reset_index(names="T"), 4), "", "Early-stopping rules over seeds:", "",
                         md_table(summary(table), 4), ""]  # fmt: skip
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    pd.concat(tables).to_csv(args.out + ".csv", index=False)
    header = [
        "# MCGrad: the rounds that each early-stopping rule picks, over seeds",
        "",
        f"- date: {started}; mcal commit {git_commit()}; {os.cpu_count()} cores; LightGBM 1 thread",
        f"- holdout rules over {args.seeds} seeds, k-fold over {args.kfold_seeds} (`random_state` 0, 1, ...); "
        f"every fit with patience {LONG_PATIENCE}, the rounds of patience 0-2 read from its validation curve",
        "- `mce_mean` ± `mce_se`: held-out `mcal.metrics.mce(...).mce_sigma` of the refit with the chosen rounds, "
        "mean and standard error over seeds; `cost_rounds`: early-stopping boosters x share of rows each trains "
        "on + refit rounds, in full-data rounds (the fit time up to the fixed costs)",
        "- `kfold 5` is the reference package's rule below 2.5M rows; mcal's default is `holdout 0.2`, patience 0",
        "",
    ]
    Path(args.out + ".md").write_text("\n".join(header + sections))
    print(f"wrote {args.out}.md")


if __name__ == "__main__":
    main()

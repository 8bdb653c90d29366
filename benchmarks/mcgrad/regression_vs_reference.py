"""RegressionMCGrad in mcal against the reference package ``mcgrad`` 0.1.5, side by side on the same data.

Data (each with a base model that leaves features out, so that its predictions are biased by segment):

- ``synthetic``: 5 categorical features of 3 to 20 levels, 5 numerical ones (one with 5 % missing values); the
  outcome has additive level effects of 3 categoricals, an interaction and a nonlinearity, plus unit Gaussian
  noise; the base prediction is the linear part alone (blind to the categoricals). 100k and 1M training rows,
  a held-out quarter.
- ``census_weeks``: UCI Census-Income (KDD), outcome ``weeks_worked_in_year`` (0 to 52); base = ridge regression
  on the numerical columns only (age, wage, capital gains and losses, dividends, persons worked for employer),
  fitted on the training file, which is also the calibration set; the features of the calibrators add the
  categoricals (class of worker, education, marital status, sex, race, ...); test = the UCI test file.
- ``credit_limit``: UCI Default of Credit Card Clients, outcome ``LIMIT_BAL`` (the credit limit, NT$ thousands);
  base = ridge regression on the six bill and six payment amounts, fitted on the protocol's 60 % training split
  (the calibration set); the calibrators add sex, education, marriage, age and the repayment statuses; test =
  the protocol's 20 % test split.

Each fit runs in its own subprocess, one after the other (peak memory is VmHWM of that process, as in
``benchmarks/mcgrad/mcgrad_vs_reference.py``), with the same LightGBM thread count (``--threads``, 1 by default: the
machine is shared) and otherwise each package's defaults (mcgrad: 5-fold early stopping on the MSE, its
``RegressionMCGrad`` LightGBM defaults, seed 42 + s; mcal: holdout early stopping, MCGrad's defaults,
``random_state`` s). Held-out MSE and the regression MCE (``mcgrad.metrics.MulticalibrationError(...,
outcome_type="regression").mce_sigma`` with its default segments, and ``mcal.metrics.mce(..., outcome=
"regression")``) are computed in this process from the saved predictions, with the same code for both.

Usage (from the repository root; mcgrad 0.1.5 importable, the ``bench`` dependency group)::

    PYTHONPATH=src python benchmarks/mcgrad/regression_vs_reference.py
    PYTHONPATH=src python benchmarks/mcgrad/regression_vs_reference.py --quick   # tiny data, one seed: a smoke test
    PYTHONPATH=src python benchmarks/mcgrad/regression_vs_reference.py --render [--out PATH]  # the .md from the .csv

Writes ``benchmarks/results/regression_vs_reference.md`` and ``.csv`` (``--out`` for another place; ``--quick``
writes to a temporary folder).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import RESULTS, command_line, read_results, write_markdown
from _datasets import CENSUS_COLUMNS
from mcgrad_vs_reference import (
    DATA,
    _markdown,
    _paper_splits,
    _status_mib,
    _versions,
    categoricals,
    held_out_frame,
    write_parts,
)
from mcgrad_vs_reference import run_one as run_script

ROOT = Path(__file__).resolve().parents[2]
NAME = "regression_vs_reference"
REFERENCE_ROW, MCAL_ROW = "mcgrad 0.1.5", "mcal"
#: The implementations a run can measure: row name and mcal parameters (None: the reference). "mcal-paper" is mcal
#: with MCGrad's paper defaults for the boosters instead of the reference's LightGBM defaults, and "mcal-kfold" mcal
#: with the reference's 5-fold early stopping instead of holdout, "mcal-se0"/"mcal-se1" mcal with min_gain_se 0 or 1
#: (a round kept only if its validation gain beats that many standard errors), for the choice of its defaults.
IMPLS = {"reference": (REFERENCE_ROW, None), "mcal": (MCAL_ROW, {}),
         "mcal-kfold": ("mcal, 5-fold early stopping", {"early_stopping": "kfold"}),
         "mcal-se0": ("mcal, min_gain_se=0", {"min_gain_se": 0.0}),
         "mcal-se1": ("mcal, min_gain_se=1", {"min_gain_se": 1.0}),
         "mcal-paper": ("mcal, MCGrad's paper defaults", {"learning_rate": 0.02873, "max_depth": 5,
                        "min_child_samples": 160, "n_estimators": 94, "max_leaves": 5, "l2_regularization": 0.00913,
                        "min_gain_to_split": 0.15})}  # fmt: skip


# -- data ----------------------------------------------------------------------------------------------------
def synthetic(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, list[str], list[str]]:
    """Segment-wise bias: the outcome has level effects and a nonlinearity that the linear base ignores."""
    rng = np.random.default_rng(seed)
    cols, effect = categoricals(n, rng)
    x = rng.normal(size=(n, 5))
    linear = 2.0 + 0.8 * x[:, 0] - 0.6 * x[:, 1]
    y = linear + 0.5 * np.sin(2 * x[:, 2]) + effect + 0.6 * (cols["c3"].codes == 0) * x[:, 3] + rng.normal(size=n)
    x[rng.random(n) < 0.05, 4] = np.nan
    for j in range(5):
        cols[f"x{j}"] = x[:, j]
    return pd.DataFrame(cols), linear, y, [f"c{j}" for j in range(5)], [f"x{j}" for j in range(5)]


def _ridge(features: pd.DataFrame, y: np.ndarray, train: np.ndarray) -> np.ndarray:
    from sklearn.linear_model import Ridge
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        return Ridge(alpha=1.0).fit(features.iloc[train].to_numpy(float), y[train]).predict(features.to_numpy(float))


def census(max_rows: int | None) -> tuple:
    read = lambda name, rows: pd.read_csv(DATA / "census_income_kdd" / name, header=None, names=CENSUS_COLUMNS,
                                          skipinitialspace=True, na_values="?", nrows=rows)  # fmt: skip
    train = read("census_income_1994_1995_train.csv.gz", max_rows)
    test = read("census_income_1994_1995_test.csv.gz", max_rows // 2 if max_rows else None)
    df = pd.concat([train, test], ignore_index=True)
    y = df.pop("weeks_worked_in_year").to_numpy(float)
    nums = ["age", "wage_per_hour", "capital_gains", "capital_losses", "dividends_from_stocks",
            "num_persons_worked_for_employer"]  # fmt: skip
    cats = ["class_of_worker", "education", "marital_stat", "major_industry_code", "major_occupation_code", "race",
            "sex", "full_or_part_time_employment_stat", "citizenship"]  # fmt: skip
    rows_tr, rows_te = np.arange(len(train)), np.arange(len(train), len(df))
    p = _ridge(df[nums], y, rows_tr)
    return df[cats + nums], p, y, cats, nums, rows_tr, rows_te


def credit(max_rows: int | None) -> tuple:
    df = pd.read_csv(DATA / "credit_default" / "UCI_Credit_Card.csv.gz").drop(columns="ID")
    if max_rows:
        df = df.iloc[:max_rows]
    y = (df.pop("LIMIT_BAL") / 1000.0).to_numpy()
    amounts = [f"BILL_AMT{i}" for i in range(1, 7)] + [f"PAY_AMT{i}" for i in range(1, 7)]
    cats = ["SEX", "EDUCATION", "MARRIAGE", "PAY_0"] + [f"PAY_{i}" for i in range(2, 7)]
    for c in cats:
        df[c] = df[c].astype(str)
    train, test = _paper_splits(len(df))
    p = _ridge(df[amounts], y, train)
    return df[[*cats, "AGE", *amounts]], p, y, cats, ["AGE", *amounts], train, test


def prepare(name: str, size: int | None, folder: Path, max_rows: int | None) -> dict | None:
    """Write train/test parquet files for one data set; return its description, or None if its files are absent."""
    path = DATA / ("census_income_kdd" if name == "census_weeks" else "credit_default")
    load = (lambda: census(max_rows)) if name == "census_weeks" else (lambda: credit(max_rows))
    return write_parts(name, size, folder, synthetic, path, load)


# -- one measured run (in a subprocess) ----------------------------------------------------------------------
def worker(spec: dict) -> None:
    import lightgbm  # noqa: F401  (both implementations train with it; imported before the memory baseline)

    if spec["impl"] == "reference":
        from mcgrad.methods import RegressionMCGrad as Reference
    else:
        from mcal import RegressionMCGrad
    folder = Path(spec["folder"])
    train = pd.read_parquet(folder / f"{spec['tag']}_train.parquet")
    test = pd.read_parquet(folder / f"{spec['tag']}_test.parquet")
    cats, nums, threads, seed = spec["cats"], spec["nums"], spec["threads"], spec["seed"]
    rss_before = _status_mib("VmRSS")
    if spec["impl"] == "reference":
        model = Reference(lightgbm_params={"num_threads": threads}, random_state=42 + seed)
        fit = lambda: model.fit(train, "__score__", "__label__", categorical_feature_column_names=cats,
                                numerical_feature_column_names=nums)  # fmt: skip
        predict = lambda: model.predict(test, "__score__", cats, nums)
        rounds = lambda: len(model.mr)
    else:
        model = RegressionMCGrad(n_jobs=threads, random_state=seed, categorical_features=cats, **spec["params"])
        fit = lambda: model.fit(train["__score__"].to_numpy(), train["__label__"].to_numpy(), X=train[cats + nums])
        predict = lambda: model.predict(test["__score__"].to_numpy(), X=test[cats + nums])
        rounds = lambda: model.n_rounds_
    start = time.perf_counter()
    fit()
    fit_s = time.perf_counter() - start
    peak = _status_mib("VmHWM")
    start = time.perf_counter()
    pred = predict()
    predict_s = time.perf_counter() - start
    np.save(folder / f"{spec['tag']}_{spec['label']}_pred.npy", np.asarray(pred, dtype=np.float64))
    print(json.dumps({"fit_s": fit_s, "rounds": int(rounds()), "predict_s": predict_s, "peak_rss_mib": peak,
                      "fit_added_mib": peak - rss_before}))  # fmt: skip


def quality(folder: Path, tag: str, label: str, cats: list[str], nums: list[str]) -> dict:
    """Held-out MSE, MAE and the regression MCE (the reference's and mcal's) of one set of predictions."""
    from mcgrad.metrics import MulticalibrationError

    from mcal import CalibrationWarning
    from mcal.metrics import mae, mce, mse

    y, p, frame = held_out_frame(folder, tag, label, cats, nums)
    ref = MulticalibrationError(frame, label_column="__label__", score_column="__pred__",
                                categorical_segment_columns=cats, numerical_segment_columns=nums,
                                outcome_type="regression")  # fmt: skip
    with warnings.catch_warnings():  # columns of a single level (census dividends in a sample) define no segment
        warnings.simplefilter("ignore", CalibrationWarning)
        ours = mce(y, p, X=frame[cats + nums], outcome="regression")
    return {"mse": mse(y, p), "mae": mae(y, p), "mce_sigma": float(ref.mce_sigma), "mce_sigma_mcal": ours.mce_sigma}


# -- driver --------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--datasets", nargs="+", default=["synthetic", "census_weeks", "credit_limit"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=20, help="seeds of both on data sets of at most --seed-rows rows")
    parser.add_argument("--seeds-large", type=int, default=3, help="seeds of both on larger data sets")
    parser.add_argument("--seed-rows", type=int, default=250_000)
    parser.add_argument("--seed-list", type=int, nargs="+", help="these seeds instead of --seeds / --seeds-large")
    parser.add_argument("--max-rows", type=int, default=None, help="cap the rows read from the real data sets")
    parser.add_argument("--impls", nargs="+", choices=sorted(IMPLS), default=["reference", "mcal"])
    parser.add_argument("--quick", action="store_true", help="tiny data and one seed (a temporary folder by default)")
    parser.add_argument("--out", help="results path without extension (default: benchmarks/results/" + NAME + ")")
    parser.add_argument("--render", action="store_true", help="rewrite the .md from the .csv, measuring nothing")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    if args.out is None:
        folder = Path(tempfile.mkdtemp(prefix=f"mcal-bench-{NAME}-")) if args.quick and not args.render else RESULTS
        args.out = str(folder / NAME)
    if args.render:
        header, table = read_results(Path(args.out + ".csv"))
        write_markdown(Path(args.out).name, header, sections(table), Path(args.out).parent)
        return 0
    if args.quick:
        args.sizes, args.seeds, args.seeds_large, args.max_rows = [3000], 1, 1, args.max_rows or 3000
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip() or os.environ.get("MCAL_COMMIT", "unknown")  # a copy of the tree
    meta = {"started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
            "commit": commit, "load_start": os.getloadavg()[0],
            "command": command_line(__file__, argv)}  # fmt: skip
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        jobs = [("synthetic", s) for s in args.sizes if "synthetic" in args.datasets]
        jobs += [(d, None) for d in args.datasets if d != "synthetic"]
        for name, size in jobs:
            info = prepare(name, size, folder, args.max_rows)
            if info is None:
                continue
            base = {"dataset": info["tag"], "n_train": info["n_train"], "n_test": info["n_test"]}
            rows.append({**base, "impl": "base prediction", "seed": 0,
                         **quality(folder, info["tag"], "base", info["cats"], info["nums"])})  # fmt: skip
            n_seeds = args.seeds if info["n_train"] <= args.seed_rows else args.seeds_large
            for seed in args.seed_list or range(n_seeds):
                for impl in args.impls:
                    label, (row, params) = f"{impl}_{seed}", IMPLS[impl]
                    spec = {**info, "folder": str(folder), "threads": args.threads, "label": label, "seed": seed,
                            "impl": "reference" if params is None else "mcal", "params": params or {}}  # fmt: skip
                    print(f"{info['tag']}: {label} ...", file=sys.stderr, flush=True)
                    result = run_script(sys.executable, spec, __file__)
                    rows.append(
                        {
                            **base,
                            "impl": row,
                            "seed": seed,
                            **result,
                            **quality(folder, info["tag"], label, info["cats"], info["nums"]),
                        }
                    )
            write(rows, args, meta)  # after each data set, so that a partial run keeps its results
    return 0


def compare(group: pd.DataFrame) -> tuple[list[tuple[str, float, bool]], str]:
    """The targets on one data set: ratios and differences of the means over seeds."""
    r, o = (group[group.impl == name] for name in (REFERENCE_ROW, MCAL_ROW))
    n = len(group.n_train.iloc[:1]) and int(group.n_train.iloc[0])
    speed_target = 5.0 if n >= 1_000_000 else 3.0
    diff = o.mce_sigma.to_numpy() - r.mce_sigma.to_numpy()  # paired by seed
    se = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.nan
    mse_gap = o.mse.mean() / r.mse.mean() - 1.0
    checks = [
        (
            f"fit time, reference / mcal (target >= {speed_target:g})",
            r.fit_s.mean() / o.fit_s.mean(),
            r.fit_s.mean() / o.fit_s.mean() >= speed_target,
        ),
        ("held-out MSE, mcal / reference - 1 (target <= 0.005)", mse_gap, mse_gap <= 0.005),
        (
            "regression MCE (reference's), mean of mcal - reference paired by seed (target <= one standard error)",
            diff.mean(),
            bool(diff.mean() <= (se if np.isfinite(se) else 0.0)),
        ),
        (
            "memory added by fit, mcal / reference (target <= 0.5)",
            o.fit_added_mib.mean() / r.fit_added_mib.mean(),
            o.fit_added_mib.mean() <= 0.5 * r.fit_added_mib.mean(),
        ),
    ]
    note = (
        f"{diff.size} seed(s); MCE difference: mean {diff.mean():.3g}, standard error {se:.3g}; mean MCE "
        f"reference {r.mce_sigma.mean():.3g}, mcal {o.mce_sigma.mean():.3g}"
    )
    return checks, note


def sections(table: pd.DataFrame) -> list[str]:
    """The results file's text after its header: what is measured, then per data set the means and targets."""
    lines = [
        "- each fit in its own subprocess; `fit_added_mib` = VmHWM after fit minus VmRSS just before it (data and",
        "  imports excluded), `peak_rss_mib` = VmHWM after fit; `predict_s` = one predict of the test set",
        "- defaults of both: mcgrad `RegressionMCGrad()` (5-fold early stopping on MSE, LightGBM defaults: 100 trees",
        "  of 31 leaves, learning rate 0.1), seed 42 + s; mcal `RegressionMCGrad()` (holdout early stopping, the same",
        "  LightGBM defaults), random_state s; `mcal, MCGrad's paper defaults` (--impls mcal-paper): 94 trees of 5",
        "  leaves, learning rate 0.02873, 160 rows per leaf",
        "- MCE = `mcgrad.metrics.MulticalibrationError(..., outcome_type='regression').mce_sigma` with its default",
        "  segments (categoricals as strings); `mce_sigma_mcal` = `mcal.metrics.mce(..., outcome='regression')` on the",
        "  same columns (its own segments); MSE and MAE on the held-out rows",
        "",
    ]
    for dataset, group in table.groupby("dataset", sort=False):
        lines += [f"## {dataset} (train {int(group.n_train.iloc[0]):,} rows, test {int(group.n_test.iloc[0]):,})", ""]
        numeric = ["rounds", "fit_s", "predict_s", "peak_rss_mib", "fit_added_mib", "mse", "mae", "mce_sigma",
                   "mce_sigma_mcal"]  # fmt: skip
        summary = group.groupby("impl", sort=False)[[c for c in numeric if c in group]].mean().reset_index()
        summary.insert(1, "seeds", group.groupby("impl", sort=False).size().to_numpy())
        lines += ["Means over seeds:", "", _markdown(summary), ""]
        if {REFERENCE_ROW, MCAL_ROW} <= set(group.impl):
            checks, note = compare(group)
            lines += [f"Targets ({note}):", "", "| target | value | met |", "|---|---|---|"]
            lines += [f"| {name} | {value:.4g} | {'yes' if ok else 'no'} |" for name, value, ok in checks]
        lines.append("")
    return ["\n".join(lines).rstrip("\n")]


def write(rows: list[dict], args: argparse.Namespace, meta: dict) -> None:
    table = pd.DataFrame(rows)
    header = {
        "benchmark": "RegressionMCGrad: mcal against the reference package mcgrad 0.1.5",
        "command": meta["command"],
        "date (UTC)": meta["started"],
        "git commit": meta["commit"],
        "cores": f"{os.cpu_count()} ({platform.processor() or platform.machine()})",
        "versions": f"Python {platform.python_version()}, {_versions(('lightgbm', 'mcgrad', 'numpy'))}",
        "threads": f"LightGBM {args.threads} for both (OMP_NUM_THREADS={args.threads}, BLAS 1 thread)",
        "load average": f"at start {meta['load_start']:.1f}, at end {os.getloadavg()[0]:.1f} (a shared machine: "
        "timings carry noise)",
    }
    out = Path(args.out)
    write_markdown(out.name, header, sections(table), out.parent)
    with out.with_suffix(".csv").open("w", encoding="utf-8") as fh:
        fh.writelines(f"# {key}: {value}\n" for key, value in header.items())
        table.to_csv(fh, index=False)


if __name__ == "__main__":
    sys.exit(main())

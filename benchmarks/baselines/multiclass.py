"""Calibration for k classes on real data: every mcal.multiclass method against miscalibrated base models.

    PYTHONPATH=src python benchmarks/baselines/multiclass.py [--seeds 0,1,2] [--rows 20000]
    PYTHONPATH=src python benchmarks/baselines/multiclass.py --quick      # tiny, for tests/benchmarks/test_quick.py

Data sets (../shared/data, or $MCAL_DATA_DIR):
- census_education: UCI Census-Income (KDD), adults (age >= 25), target = education in 5 groups (no high school
  diploma, high school, some college or associate, bachelors, graduate). Base-model features: age, sex, race,
  marital status, class of worker, weeks worked, wage per hour. Calibrators' features (MCGrad, and the segments of
  MCE) add the occupation, industry, citizenship, tax-filer status and full/part-time status the base model never
  saw, so its errors differ by segment.
- shoppers_visitor: Online Shoppers Intention, target = VisitorType (new, returning, other). Base-model features:
  the page counts and durations; calibrators add month, region, traffic type, browser, weekend and revenue.
Base models (trained on their own rows, disjoint from calibration and test), chosen to be miscalibrated:
- mlp: scikit-learn MLPClassifier (two layers of 128, no early stopping, 300 epochs): over-fitted, over-confident;
- lightgbm: 400 trees of 63 leaves, learning rate 0.1: over-fitted boosted trees;
- resampled: LightGBM (100 trees of 15 leaves) trained on a class-balanced resample: wrong class priors.
Each seed draws new base/calibration/test rows (``--rows`` each). Calibrators are fitted on the calibration rows
and scored on the test rows: multiclass log loss, top-label ECE and classwise ECE (15 bins), worst-class MCE (in
sigma, over segments generated from the calibrators' feature table), fit time. Binary MCGrad's time is measured on
the same rows and features, for the one-vs-rest problem of the most frequent class, for the speed target.
MulticlassMCGrad runs as by default and in the variants its default was chosen against (without the input
temperature, and with one rescaling factor per class).
Writes benchmarks/results/multiclass.{md,csv} (``--render`` rewrites the .md from the .csv); OMP_NUM_THREADS=1 and
one LightGBM thread everywhere.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import RESULTS, md_table, read_results, render_results, run_header, write_results
from _datasets import DataUnavailable, _path, read_census_kdd

import mcal
from mcal.metrics import classwise_ece, classwise_mce, multiclass_log_loss, top_label_ece
from mcal.multiclass import (
    DirichletCalibration,
    MulticlassMCGrad,
    MulticlassTemperatureScaling,
    OneVsRestCalibrator,
    VectorScaling,
)

EDUCATION = {
    "Children": None,
    "Less than 1st grade": "no diploma",
    "1st 2nd 3rd or 4th grade": "no diploma",
    "5th or 6th grade": "no diploma",
    "7th and 8th grade": "no diploma",
    "9th grade": "no diploma",
    "10th grade": "no diploma",
    "11th grade": "no diploma",
    "12th grade no diploma": "no diploma",
    "High school graduate": "high school",
    "Some college but no degree": "some college",
    "Associates degree-occup /vocational": "some college",
    "Associates degree-academic program": "some college",
    "Bachelors degree(BA AB BS)": "bachelors",
    "Masters degree(MA MS MEng MEd MSW MBA)": "graduate",
    "Prof school degree (MD DDS DVM LLB JD)": "graduate",
    "Doctorate degree(PhD EdD)": "graduate",
}


def load(name: str) -> tuple[pd.DataFrame, list[str], list[str], np.ndarray]:
    """(frame, base-model columns, calibrator columns, labels as strings)."""
    if name == "census_education":
        df = read_census_kdd()
        df = df[df["age"] >= 25].reset_index(drop=True)
        y = df["education"].map(EDUCATION).to_numpy(dtype=object)
        base = ["age", "sex", "race", "marital_stat", "class_of_worker", "weeks_worked_in_year", "wage_per_hour"]
        extra = ["major_occupation_code", "major_industry_code", "citizenship", "tax_filer_stat",
                 "full_or_part_time_employment_stat"]  # fmt: skip
    elif name == "shoppers_visitor":
        df = pd.read_csv(_path("online_shoppers", "online_shoppers_intention.csv.gz"))
        y = df["VisitorType"].to_numpy(dtype=object)
        base = ["Administrative", "Administrative_Duration", "Informational", "Informational_Duration",
                "ProductRelated", "ProductRelated_Duration", "BounceRates", "ExitRates", "PageValues"]  # fmt: skip
        extra = ["Month", "Region", "TrafficType", "Browser", "Weekend", "Revenue"]
        df[["Region", "TrafficType", "Browser", "Weekend", "Revenue"]] = df[
            ["Region", "TrafficType", "Browser", "Weekend", "Revenue"]
        ].astype(str)
    else:
        raise ValueError(f"unknown data set {name!r}")
    keep = pd.notna(y)
    df = df.loc[keep].reset_index(drop=True)
    for col in base + extra:
        if not pd.api.types.is_numeric_dtype(df[col]):
            df[col] = df[col].astype(object).fillna("missing").astype(str).astype("category")
    return df, base, base + extra, y[keep].astype(str)


def base_scores(kind: str, X_train: pd.DataFrame, y_train: np.ndarray, X_rest: pd.DataFrame, seed: int):
    """Probabilities of a deliberately miscalibrated base model on ``X_rest`` (classes in sorted order)."""
    import lightgbm as lgb

    if kind == "mlp":
        from sklearn.compose import make_column_transformer
        from sklearn.impute import SimpleImputer
        from sklearn.neural_network import MLPClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import OneHotEncoder, StandardScaler

        cat = [c for c in X_train if X_train[c].dtype == "category"]
        num = [c for c in X_train if c not in cat]
        prep = make_column_transformer(
            (OneHotEncoder(handle_unknown="ignore"), cat), (make_pipeline(SimpleImputer(), StandardScaler()), num)
        )
        net = MLPClassifier(
            (128, 128), max_iter=300, early_stopping=False, random_state=seed, tol=0, n_iter_no_change=300
        )
        model = make_pipeline(prep, net).fit(X_train, y_train)
        return model.predict_proba(X_rest)
    params = {"n_estimators": 400, "num_leaves": 63, "learning_rate": 0.1, "verbose": -1, "n_jobs": 1,
              "random_state": seed}  # fmt: skip
    if kind == "resampled":
        rng = np.random.default_rng(seed)
        classes, counts = np.unique(y_train, return_counts=True)
        rows = np.concatenate([rng.choice(np.flatnonzero(y_train == c), counts.max(), replace=True) for c in classes])
        X_train, y_train = X_train.iloc[rows], y_train[rows]
        params.update(n_estimators=100, num_leaves=15)
    return lgb.LGBMClassifier(**params).fit(X_train, y_train).predict_proba(X_rest)


#: MulticlassMCGrad as it is by default, and the variants it was chosen against.
OURS = ("MulticlassMCGrad", "MulticlassMCGrad (no rescale_input)", "MulticlassMCGrad (per-class rescale)")


def methods(seed: int, quick: bool) -> dict[str, object]:
    fast = {"n_estimators": 10, "max_rounds": 2} if quick else {}
    return {
        "Temperature": MulticlassTemperatureScaling(),
        "Vector": VectorScaling(),
        "Dirichlet (ODIR)": DirichletCalibration(),
        "OvR isotonic": OneVsRestCalibrator(mcal.IsotonicCalibration()),
        "OvR MCGrad": OneVsRestCalibrator(mcal.MCGrad(random_state=seed, n_jobs=1, **fast)),
        "MulticlassMCGrad": MulticlassMCGrad(random_state=seed, n_jobs=1, **fast),
        OURS[1]: MulticlassMCGrad(random_state=seed, n_jobs=1, rescale_input=False, **fast),
        OURS[2]: MulticlassMCGrad(random_state=seed, n_jobs=1, rescale="per_class", **fast),
    }


def run_one(name: str, kind: str, seed: int, rows: int, quick: bool) -> list[dict]:
    df, base_cols, cal_cols, y = load(name)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(df))[: 3 * rows]
    tr, ca, te = np.array_split(order, 3)
    classes = np.unique(y[tr])
    ca, te = ca[np.isin(y[ca], classes)], te[np.isin(y[te], classes)]
    p_all = base_scores(kind, df.loc[tr, base_cols], y[tr], df.loc[np.concatenate([ca, te]), base_cols], seed)
    p_ca, p_te = p_all[: ca.size], p_all[ca.size :]
    X_ca, X_te = df.loc[ca, cal_cols].reset_index(drop=True), df.loc[te, cal_cols].reset_index(drop=True)
    y_ca, y_te = y[ca], y[te]
    out = []

    def score(method: str, q: np.ndarray, fit_s: float) -> None:
        out.append({
            "data": name, "base": kind, "seed": seed, "k": classes.size, "method": method, "fit_s": fit_s,
            "log_loss": multiclass_log_loss(y_te, q), "top_label_ece": top_label_ece(y_te, q),
            "classwise_ece": classwise_ece(y_te, q), "worst_class_mce": classwise_mce(y_te, q, X=X_te).mce_sigma,
        })  # fmt: skip

    score("base model", p_te, 0.0)
    for method, cal in methods(seed, quick).items():
        uses_x = isinstance(cal, MulticlassMCGrad) or getattr(cal, "method", None) == "mcgrad"
        start = time.perf_counter()
        cal.fit(p_ca, y_ca, **({"X": X_ca} if uses_x else {}))
        fit_s = time.perf_counter() - start
        score(method, cal.predict(p_te, **({"X": X_te} if uses_x else {})), fit_s)
        if isinstance(cal, MulticlassMCGrad):
            out[-1]["rounds_fitted"] = rounds_fitted(cal)
    j = int(np.argmax([(y_ca == c).sum() for c in classes]))
    fast = {"n_estimators": 10, "max_rounds": 2} if quick else {}
    start = time.perf_counter()
    binary = mcal.MCGrad(random_state=seed, n_jobs=1, **fast)
    binary.fit(p_ca[:, j], (y_ca == classes[j]).astype(float), X=X_ca)
    out.append({"data": name, "base": kind, "seed": seed, "k": classes.size, "method": "binary MCGrad (one class)",
                "fit_s": time.perf_counter() - start, "rounds_fitted": rounds_fitted(binary)})  # fmt: skip
    return out


def rounds_fitted(model) -> int:
    """Rounds an MCGrad fit ran: those tried by early stopping and those of the refit."""
    return max(model.validation_losses_.size - 1, 0) + model.n_rounds_


def target_row(g: pd.DataFrame, seeds: pd.DataFrame, variant: str) -> dict[str, object]:
    """The targets of one (data, base) for one variant of ours: ``g`` holds the means by method, ``seeds`` the
    worst-class MCE by seed and method."""
    others = g.drop(index=[*OURS, "base model", "binary MCGrad (one class)"])
    ours, binary, best = g.loc[variant], g.loc["binary MCGrad (one class)"], others["worst_class_mce"].idxmin()
    diff = seeds[variant] - seeds[best]
    return {
        "MCE ours": ours["worst_class_mce"], "best other MCE": others["worst_class_mce"].min(), "best other": best,
        "MCE ours - best other": diff.mean(), "SE": diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.nan,
        "MCE target met": bool(ours["worst_class_mce"] <= others["worst_class_mce"].min()),
        "log loss ours - base": ours["log_loss"] - g.loc["base model", "log_loss"],
        "log loss ours - best other": ours["log_loss"] - others["log_loss"].min(),
        "fit ours / (k x binary)": ours["fit_s"] / (ours["k"] * binary["fit_s"]),
        "rounds ours / binary": f"{ours['rounds_fitted']:.1f} / {binary['rounds_fitted']:.1f}",
        "per round: ours / (k x binary)": (ours["fit_s"] / ours["rounds_fitted"])
        / (ours["k"] * binary["fit_s"] / binary["rounds_fitted"]),
    }  # fmt: skip


def run_case(case: tuple[str, str, int], rows: int, quick: bool) -> list[dict]:
    """The rows of :func:`run_one` for one (data, base, seed), or none when the data are absent."""
    try:
        return run_one(*case, rows, quick)
    except DataUnavailable as exc:
        print(f"skipping {case[0]}: {exc}", file=sys.stderr)
        return []


def targets(means: pd.DataFrame, raw: pd.DataFrame) -> pd.DataFrame:
    """Per (data, base): does MulticlassMCGrad lower the worst-class MCE at least as much as any other method,
    without a higher log loss than the base model; and is its fit time at most k times binary MCGrad's? With the
    standard error over seeds of the paired MCE difference to the best other method, and the fit-time ratio per
    round fitted (the rounds each model's early stopping tried plus its refit)."""
    rows = []
    for (data, base), g in means.groupby(["data", "base"]):
        g = g.set_index("method")
        seeds = raw[(raw["data"] == data) & (raw["base"] == base)].pivot(
            index="seed", columns="method", values="worst_class_mce"
        )
        rows += [{"data": data, "base": base, "ours": variant, **target_row(g, seeds, variant)} for variant in OURS]
    out = pd.DataFrame(rows)
    out["time target met"] = out["fit ours / (k x binary)"] <= 1.0
    return out


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--rows", type=int, default=20000, help="rows of each of the base/calibration/test parts")
    parser.add_argument("--data", default="census_education,shoppers_visitor")
    parser.add_argument("--bases", default="mlp,lightgbm,resampled")
    parser.add_argument("--quick", action="store_true", help="tiny run for the test suite (numbers meaningless)")
    parser.add_argument("--out-dir", type=Path, default=None)
    parser.add_argument("--render", action="store_true", help="rewrite the .md from the .csv, measuring nothing")
    parser.add_argument("--jobs", type=int, default=1, help="(data, base, seed) cases run at once, one process each")
    args = parser.parse_args(argv)
    if args.render:
        render_results("multiclass", lambda raw: sections(raw, mean_table(raw)), args.out_dir or RESULTS)
        return mean_table(read_results((args.out_dir or RESULTS) / "multiclass.csv")[1])
    seeds = [0] if args.quick else [int(s) for s in args.seeds.split(",")]
    rows_n = 400 if args.quick else args.rows
    bases = ["lightgbm"] if args.quick else args.bases.split(",")
    started, load_start = time.perf_counter(), os.getloadavg()
    cases = [(name, kind, seed) for name in args.data.split(",") for kind in bases for seed in seeds]
    run = partial(run_case, rows=rows_n, quick=args.quick)
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            raw = pd.DataFrame([row for out in pool.map(run, cases) for row in out])
    else:
        raw = pd.DataFrame([row for out in map(run, cases) for row in out])
    if raw.empty:
        return raw
    means = mean_table(raw)
    header = run_header("Calibration for k classes on real data (mcal.multiclass)", seeds, {
        "rows": f"{rows_n} base / {rows_n} calibration / {rows_n} test per seed",
        "threads": f"OMP_NUM_THREADS=1, LightGBM n_jobs=1; {args.jobs} case(s) at once, one process each",
        "machine load": "1/5/15-minute load average {:.1f}/{:.1f}/{:.1f} at the start, {:.1f}/{:.1f}/{:.1f} at the end".format(
            *load_start, *os.getloadavg()
        ),
        "wall time": f"{time.perf_counter() - started:.0f} s",
        "mode": "quick (numbers meaningless)" if args.quick else "full",
    })  # fmt: skip
    out_dir = args.out_dir
    if out_dir is None and not args.quick:
        out_dir = RESULTS
    if out_dir is not None:
        write_results("multiclass", header, sections(raw, means), raw, out_dir)
    return means


def mean_table(raw: pd.DataFrame) -> pd.DataFrame:
    """The means over seeds per data set, base model and method; ``seed`` holds the number of seeds."""
    means = raw.groupby(["data", "base", "method"], sort=False).mean(numeric_only=True).reset_index()
    means["seed"] = raw["seed"].nunique()
    return means


def sections(raw: pd.DataFrame, means: pd.DataFrame) -> list[str]:
    """The results file's text after its header: the targets, then the means over seeds."""
    return [
        "## Targets (issue #21)\n\n" + md_table(targets(means, raw)),
        "## Means over seeds (test rows)\n\n`worst_class_mce`: the largest classwise MCE over classes, in sigma. "
        "`fit_s`: seconds on one thread.\n\n" + md_table(means.drop(columns=["seed"])),
    ]


if __name__ == "__main__":
    main()

"""CalibratedClassifier's fitting schemes against scikit-learn's CalibratedClassifierCV, by held-out log loss.

    MCAL_DATA_DIR=../shared/data PYTHONPATH=src python benchmarks/baselines/calibrated_classifier.py [--seeds 0,1,...,9]
    PYTHONPATH=src python benchmarks/baselines/calibrated_classifier.py --quick    # tiny, for tests/benchmarks/test_quick.py

Base model: the logistic regression of benchmarks/common/_datasets.py (its encoded features and C, max_iter=1000). Each
seed draws a stratified 70 / 30 train / test split; every method is fitted on the train part only and scored on
the test part. Methods: the base model alone; mcal's CalibratedClassifier with isotonic calibration and
(a) one 70 / 30 split of the train part (cv=None, the default before this benchmark), (b) 5-fold cross-fitting with
an ensemble of 5 (base, calibrator) pairs, (c) 5-fold out-of-fold scores with one calibrator and the base model
refitted on all rows, each with the Jeffreys end blocks (the default) and (b) also with the empirical 0 / 1 ends;
scikit-learn's CalibratedClassifierCV(method="isotonic") with cv=3 and cv=5 (ensemble=True, its default; it
calibrates the logistic regression's decision_function). "exact 0/1" counts the test rows predicted exactly 0 or 1,
where one wrong label costs log loss an infinite term (scikit-learn clips it to machine epsilon: 36 nats).
Every method's log loss is compared with scikit-learn's cv=5 and with mcal's default seed by seed on the same rows
(paired differences, mean +- standard error over the seeds).
Writes benchmarks/results/calibrated_classifier.{md,csv}; OMP_NUM_THREADS=1 (set below).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import command_line, git_commit, md_table, read_results, run_header, write_results
from _datasets import DataUnavailable, load

from mcal import CalibratedClassifier, IsotonicCalibration
from mcal.metrics import brier_score, log_loss

DATASETS = ("bank_marketing", "credit_default", "online_shoppers", "census_kdd")
RESULTS_CSV = Path(__file__).resolve().parents[1] / "results" / "calibrated_classifier.csv"
#: Rows sampled from the larger datasets (census_kdd has 199,523), to keep the run to minutes on 2 cores.
MAX_ROWS = 60_000


def _methods(C: float) -> dict:
    base = LogisticRegression(C=C, max_iter=1000)
    jeffreys, empirical = IsotonicCalibration(), IsotonicCalibration(extremes="empirical")
    return {
        "base model": lambda seed: base,
        "mcal split (cv=None)": lambda seed: CalibratedClassifier(base, jeffreys, cv=None, random_state=seed),
        "mcal cv=5 ensemble": lambda seed: CalibratedClassifier(base, jeffreys, cv=5, random_state=seed),
        "mcal cv=5 one calibrator": lambda seed: CalibratedClassifier(base, jeffreys, cv=5, ensemble=False,
                                                                      random_state=seed),
        "mcal cv=5 ensemble, empirical ends": lambda seed: CalibratedClassifier(base, empirical, cv=5,
                                                                                random_state=seed),
        "sklearn CCV isotonic cv=3": lambda seed: CalibratedClassifierCV(base, method="isotonic", cv=3),
        "sklearn CCV isotonic cv=5": lambda seed: CalibratedClassifierCV(base, method="isotonic", cv=5),
    }  # fmt: skip


def run(datasets, seeds, max_rows: int | None, on_seed=None) -> pd.DataFrame:
    """Every method on every dataset, seed after seed; ``on_seed(rows so far, seeds done)`` after each seed, so that
    an interrupted run leaves the seeds it completed on every dataset."""
    loaded = {}
    for key in datasets:
        try:
            ds = load(key, max_rows=max_rows)
        except DataUnavailable as exc:
            print(f"{key}: skipped ({exc})")
            continue
        loaded[key] = (ds.X.to_numpy(dtype=np.float64), np.asarray(ds.y), ds.C)
    rows = []
    for done, seed in enumerate(seeds, start=1):
        for key, (X, y, C) in loaded.items():
            train, test = train_test_split(np.arange(y.size), test_size=0.3, stratify=y, random_state=seed)
            for name, make in _methods(C).items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    q = make(seed).fit(X[train], y[train]).predict_proba(X[test])[:, 1]
                rows.append({"dataset": key, "rows": y.size, "seed": seed, "method": name,
                             "log_loss": log_loss(y[test], q), "brier_score": brier_score(y[test], q),
                             "exact_0_or_1": int(np.count_nonzero((q == 0) | (q == 1)))})  # fmt: skip
            print(f"{key} seed {seed} done", flush=True)
        if on_seed is not None:
            on_seed(pd.DataFrame(rows), seeds[:done])
    return pd.DataFrame(rows)


def summarize(raw: pd.DataFrame) -> pd.DataFrame:
    """Mean test log loss per dataset and method (over seeds), with the change against the base model."""
    mean = raw.groupby(["dataset", "method"], sort=False)[["log_loss", "brier_score", "exact_0_or_1"]].mean()
    base = mean.xs("base model", level="method")["log_loss"]
    mean["vs base"] = mean["log_loss"] - base.reindex(mean.index.get_level_values("dataset")).to_numpy()
    return mean.reset_index()


#: The reference every scheme is compared with, seed by seed on the same rows, and mcal's default.
REFERENCE, DEFAULT = "sklearn CCV isotonic cv=5", "mcal cv=5 ensemble"


def _mean_se(diff: pd.Series) -> pd.Series:
    """Mean, standard error (sample sd / sqrt(n); nan for one seed) and count of paired differences."""
    n = diff.size
    return pd.Series({"mean": diff.mean(), "se": diff.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan, "n": n})


def paired(raw: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Per dataset and method, the mean +- standard error over seeds of (method's log loss - reference's), and
    over the datasets the mean of the per-dataset means with SE sqrt(sum SE^2) / k (datasets independent)."""
    runs = raw.pivot_table(index=["dataset", "seed"], columns="method", values="log_loss", sort=False)
    diff = runs.drop(columns=[reference, "base model"]).sub(runs[reference], axis=0)
    long = diff.stack().rename("diff").reset_index()
    out = long.groupby(["dataset", "method"], sort=False)["diff"].apply(_mean_se).unstack().reset_index()
    over = out.groupby("method", sort=False).agg(
        mean=("mean", "mean"), se=("se", lambda se: np.sqrt((se**2).sum()) / se.size), n=("n", "sum")
    )
    out = pd.concat([out, over.reset_index().assign(dataset="mean over datasets")], ignore_index=True)
    out["n"] = out["n"].astype(int)
    out["difference"] = [f"{m:+.4f} ± {s:.4f}" for m, s in zip(out["mean"], out["se"], strict=True)]
    return out[["dataset", "method", "difference", "mean", "se", "n"]]


def _verdict(rows: pd.DataFrame) -> np.ndarray:
    """'lower', 'higher' (beyond 2 standard errors) or 'no clear difference', per row of :func:`paired`."""
    return np.select([rows["mean"] + 2 * rows["se"] < 0, rows["mean"] - 2 * rows["se"] > 0],
                     ["lower", "higher"], "no clear difference")  # fmt: skip


def _decision(n_seeds: int, vs_ref: pd.DataFrame, vs_default: pd.DataFrame) -> str:
    """The decision, written from the numbers: the default against scikit-learn and against mcal's other schemes."""
    datasets = [d for d in vs_ref["dataset"].unique() if d != "mean over datasets"]
    ref_rows = vs_ref[(vs_ref["method"] == DEFAULT) & vs_ref["dataset"].isin(datasets)]
    beats = vs_default[vs_default["dataset"].isin(datasets) & (vs_default["verdict"] == "lower")]
    mean_rows = vs_ref[vs_ref["dataset"] == "mean over datasets"].set_index("method")
    overall, same_ends = mean_rows.loc[DEFAULT], mean_rows.loc[f"{DEFAULT}, empirical ends"]
    text = (
        f"Differences are paired, seed by seed on the same test rows, over {n_seeds} seeds; mean ± standard error; "
        "a difference counts as clear when the mean is more than 2 standard errors from 0 (with about 20 such "
        "comparisons, one clear difference may be chance). "
    )
    if beats.empty:
        text += (
            f"**The default ({DEFAULT}) is supported among mcal's schemes**: no other scheme has clearly lower log "
            "loss on any dataset. "
        )
    else:
        text += f"**The default ({DEFAULT}) is not supported**: clearly lower than it are " + "; ".join(
            f"{r.method} on {r.dataset} ({r.difference})" for r in beats.itertuples()) + ". "  # fmt: skip
    by_verdict = {v: [r.dataset for r in ref_rows.itertuples() if r.verdict == v] for v in ref_rows["verdict"]}
    return text + (
        f"Against scikit-learn's CalibratedClassifierCV(method='isotonic', cv=5) its log loss differs by "
        f"{overall['mean']:+.4f} ± {overall['se']:.4f} on average over the {len(datasets)} datasets (negative: mcal "
        "lower); per dataset: "
        + "; ".join(f"{r.dataset} {r.difference}" for r in ref_rows.itertuples())
        + " ("
        + "; ".join(f"{v}: {', '.join(d)}" for v, d in by_verdict.items())
        + f"). With scikit-learn's empirical ends (exact 0 and 1) instead of the Jeffreys ends, the same ensemble "
        f"differs from it by {same_ends['mean']:+.4f} ± {same_ends['se']:.4f} on average"
        + (
            ", within noise: what separates the two is the ends, not the cross-fitting."
            if abs(same_ends["mean"]) <= 2 * same_ends["se"]
            else ", beyond noise: the two differ in more than the ends."
        )
    )


def _sections(raw: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """The results file's sections; the decision is written from the numbers."""
    overall = table.groupby("method", sort=False)[["vs base"]].mean().reset_index()
    by_method = table.set_index(["method", "dataset"])
    exact = by_method.loc["mcal cv=5 ensemble, empirical ends", "exact_0_or_1"]
    vs_ref = paired(raw, REFERENCE)
    vs_ref["verdict"] = _verdict(vs_ref)
    vs_default = paired(raw[raw["method"].str.startswith("mcal") | (raw["method"] == "base model")], DEFAULT)
    vs_default["verdict"] = _verdict(vs_default)
    ends = (
        f"With the empirical ends (exact 0 and 1 from isotonic regression) the ensemble left up to "
        f"{int(exact.max()):,} test rows at exactly 0 or 1 (mean over seeds, {exact.idxmax()}), each a potential "
        "infinite log-loss term; the Jeffreys ends (the default) leave none."
    )
    cols = ["dataset", "method", "difference", "n", "verdict"]
    return [
        "## Mean test log loss (and Brier score) per dataset\n\n'vs base' is the change in log loss against the "
        "uncalibrated logistic regression (negative: calibration helped).\n\n" + md_table(table),
        "## Mean change against the base model over the datasets\n\n" + md_table(overall),
        f"## Paired differences against {REFERENCE}\n\nLog loss of the method minus that of {REFERENCE}, "
        "seed by seed on the same rows: mean ± standard error over the seeds (n runs); negative: the method is "
        "lower. Verdict: more than 2 standard errors from 0.\n\n" + md_table(vs_ref[cols]),
        f"## Paired differences against mcal's default ({DEFAULT})\n\nLog loss of the method minus that of "
        f"{DEFAULT}; negative: the method is lower than the default.\n\n" + md_table(vs_default[cols]),
        "## Decision\n\n" + _decision(raw["seed"].nunique(), vs_ref, vs_default) + " " + ends,
    ]


def rewrite(csv: Path = RESULTS_CSV) -> None:
    """Rewrite the Markdown file from the raw rows of ``csv`` and its header (no refitting)."""
    header, raw = read_results(csv)
    header["markdown rewritten"] = (
        f"from the .csv at commit {git_commit()} (python benchmarks/baselines/calibrated_classifier.py --rewrite)"
    )
    write_results("calibrated_classifier", header, _sections(raw, summarize(raw)), raw)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default=",".join(map(str, range(10))))
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated dataset keys")
    parser.add_argument("--quick", action="store_true", help="one seed, 3000 rows of one dataset; no files")
    parser.add_argument("--rewrite", action="store_true", help="rewrite the .md from the .csv of an earlier run")
    args = parser.parse_args(argv)
    if args.rewrite:
        rewrite()
        return pd.read_csv(RESULTS_CSV, comment="#")
    if args.quick:
        table = summarize(raw := run(DATASETS[:1], [0], 3000))
        _sections(raw, table)
        return table
    # the header (commit, date) is taken before the run: edits made while it runs are not the code that ran
    header = run_header(
        "CalibratedClassifier against scikit-learn's CalibratedClassifierCV",
        [],
        {"command": command_line(__file__, argv),
         "design": f"stratified 70/30 train/test per seed; datasets sampled to at most {MAX_ROWS} rows; "
                   "OMP_NUM_THREADS=1; the files are rewritten after every seed (all datasets)"},
    )  # fmt: skip

    def write(raw: pd.DataFrame, done: list[int]) -> None:
        header["seeds"] = ", ".join(map(str, done))
        write_results("calibrated_classifier", header, _sections(raw, summarize(raw)), raw)

    raw = run(args.datasets.split(","), [int(s) for s in args.seeds.split(",")], MAX_ROWS, on_seed=write)
    table = summarize(raw)
    print(md_table(table))
    return table


if __name__ == "__main__":
    main()

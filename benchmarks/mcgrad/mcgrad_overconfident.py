"""MCGrad on a heavily over-confident base model, against Platt, temperature and isotonic scaling (issue #20).

Base model: scikit-learn's ``HistGradientBoostingClassifier`` over-fitted on the protocol's training split (400
iterations at learning rate 0.3, 63 leaves, 2 rows per leaf, no early stopping), so that most held-out scores are
below 0.01 or above 0.99. Calibrators are fitted on the protocol's validation split and scored on its test split
(``_datasets.protocol_split``; the test rows are fixed, the validation rows move with the seed). MCGrad is fitted
with the data set's field as its only feature (as the issue's case) and with all features, each with
``rescale_input`` on (the default) and off (Algorithm 1 as published). MCE is ``mcal.metrics.mce(...).mce_sigma``
with segments generated from all features of the test rows.

Usage (from the repository root; the shared data in ``$MCAL_DATA_DIR``)::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/mcgrad/mcgrad_overconfident.py [--seeds 15 25 35 45 55] [--quick]

Writes ``benchmarks/results/mcgrad_overconfident.md`` and ``.csv`` (``--out-dir`` elsewhere).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import (
    RESULTS,
    add_out_dir_option,
    add_render_option,
    md_table,
    out_dir_of,
    render_results,
    run_header,
    write_results,
)
from _datasets import PAPER_SEED, SEEDS, load_bank_marketing, load_credit_default, protocol_split
from sklearn.ensemble import HistGradientBoostingClassifier

import mcal
from mcal.metrics import log_loss, mce

LOADERS = {"BankMarketing": load_bank_marketing, "CreditDefault": load_credit_default}


def base_scores(ds, train, parts, quick):
    base = HistGradientBoostingClassifier(
        max_iter=20 if quick else 400, learning_rate=0.3, max_leaf_nodes=63, min_samples_leaf=2,
        early_stopping=False, random_state=0,
    )  # fmt: skip
    base.fit(ds.X.iloc[train], ds.y[train])
    return {k: base.predict_proba(ds.X.iloc[rows])[:, 1] for k, rows in parts.items()}


def methods(field):
    mc = dict(random_state=0, n_jobs=1)
    return {
        "Platt": (mcal.PlattScaling(), None),
        "Temperature": (mcal.TemperatureScaling(), None),
        "Isotonic": (mcal.IsotonicCalibration(), None),
        "MCGrad field, rescale_input": (mcal.MCGrad(**mc), [field]),
        "MCGrad field, Algorithm 1": (mcal.MCGrad(**mc, rescale_input=False), [field]),
        "MCGrad all, rescale_input": (mcal.MCGrad(**mc), "all"),
        "MCGrad all, Algorithm 1": (mcal.MCGrad(**mc, rescale_input=False), "all"),
    }


def run_one(name, seed, quick):
    ds = LOADERS[name]()
    if quick:
        ds = ds.subset(np.random.default_rng(0).choice(ds.n, 3000, replace=False))
    train, val, test = protocol_split(ds.n, seed)
    scores = base_scores(ds, train, {"val": val, "test": test}, quick)
    y_val, y_test, frame = ds.y[val], ds.y[test], ds.frame
    rows = [{"data": name, "seed": seed, "method": "Base", "log_loss": log_loss(y_test, scores["test"]),
             "mce_sigma": mce(y_test, scores["test"], X=frame.iloc[test]).mce_sigma, "n_rounds": np.nan,
             "input_factor": np.nan, "extreme_share": np.mean((scores["test"] < 0.01) | (scores["test"] > 0.99)),
             "fit_s": 0.0}]  # fmt: skip
    for method, (model, cols) in methods(ds.field).items():
        X = None if cols is None else frame[list(frame.columns) if cols == "all" else cols]
        start = time.perf_counter()
        if X is None:
            model.fit(scores["val"], y_val)
            p = model.predict(scores["test"])
        else:
            model.fit(scores["val"], y_val, X=X.iloc[val])
            p = model.predict(scores["test"], X=X.iloc[test])
        rows.append({"data": name, "seed": seed, "method": method, "log_loss": log_loss(y_test, p),
                     "mce_sigma": mce(y_test, p, X=frame.iloc[test]).mce_sigma,
                     "n_rounds": getattr(model, "n_rounds_", np.nan), "input_factor": getattr(model, "input_factor_",
                     np.nan), "extreme_share": np.nan, "fit_s": time.perf_counter() - start})  # fmt: skip
    return rows


def summary(raw: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error over seeds per data set and method, with the difference to Platt per seed."""
    platt = raw[raw["method"] == "Platt"].set_index(["data", "seed"])["log_loss"]
    raw = raw.assign(
        vs_platt=raw["log_loss"].to_numpy() - platt.loc[list(zip(raw["data"], raw["seed"], strict=True))].to_numpy()
    )
    g = raw.groupby(["data", "method"], sort=False)
    n = g.size()
    out = pd.DataFrame({
        "seeds": n,
        "log loss": g["log_loss"].mean(),
        "minus Platt (mean ± se)": [f"{m:+.4f} ± {s:.4f}" for m, s in zip(g["vs_platt"].mean(), g["vs_platt"].sem(), strict=True)],
        "MCE (mean ± se)": [f"{m:.2f} ± {s:.2f}" for m, s in zip(g["mce_sigma"].mean(), g["mce_sigma"].sem(), strict=True)],
        "rounds": g["n_rounds"].mean(),
        "theta_0": g["input_factor"].mean(),
        "fit s": g["fit_s"].mean(),
    })  # fmt: skip
    return out.reset_index()


def sections(raw: pd.DataFrame) -> list[str]:
    """The results file's text after its header: what is measured, then the summary over seeds."""
    return [(__doc__ or "").split("\n\nUsage")[0], md_table(summary(raw), digits=4)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    parser.add_argument("--quick", action="store_true", help="3,000 rows, a small base model, one seed")
    add_out_dir_option(parser)
    add_render_option(parser)
    args = parser.parse_args(argv)
    if args.render:
        render_results("mcgrad_overconfident", sections, args.out_dir or RESULTS)
        return 0
    args.out_dir = out_dir_of(args, "mcgrad_overconfident")
    seeds = [PAPER_SEED] if args.quick else args.seeds
    start = time.perf_counter()
    with warnings.catch_warnings():  # single-level columns of small data define no segment: said once per call
        warnings.simplefilter("ignore", mcal.CalibrationWarning)
        raw = pd.DataFrame([row for name in LOADERS for seed in seeds for row in run_one(name, seed, args.quick)])
    table = summary(raw)
    head = run_header("MCGrad on an over-confident base model", seeds, {
        "mode": "quick" if args.quick else "full", "threads": "OMP_NUM_THREADS as set by the caller; n_jobs=1",
        "wall time": f"{time.perf_counter() - start:.0f} s",
        "base extreme share (test scores < 0.01 or > 0.99)": ", ".join(
            f"{d} {s:.2f}" for d, s in raw[raw["method"] == "Base"].groupby("data")["extreme_share"].mean().items()),
    })  # fmt: skip
    write_results("mcgrad_overconfident", head, sections(raw), raw, args.out_dir)
    print(md_table(table, digits=4))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""MCGrad's multicalibration error against its noise floor, and with early_stopping_metric="mce" (issue #20).

Why does MCGrad raise the MCE on Census-KDD while it lowers the log loss? Protocol of ``paper_mcgrad.py``
(``_datasets.protocol_split``, the base logistic regression, calibrators fitted on the training split, metrics
on the test split; Census-KDD sampled to 30,000 rows), on its data sets. For each data set, seed and variant
of MCGrad this measures, on the test split, the MCE on the protocol's segments (``MCE u``, the paper's column)
and the log loss; on the training split (where MCGrad is fitted), the same MCE (``MCE u train``: does MCGrad
remove the miscalibration it can see?); and the noise floor: the mean and 90th percentile of ``MCE u`` over
``--redraws`` label vectors drawn from the variant's own test predictions (labels for which the predictions are
exactly calibrated). A test MCE within the noise floor is what a perfectly calibrated model shows on 6,000 rows.

Variants: the paper's configuration (``paper_mcgrad.py``'s "MCGrad": 5-fold early stopping, at most 10 rounds,
seed 42) with ``rescale_input`` off (Algorithm 1, as in ``paper_mcgrad.md``) and on; the same with
``early_stopping_metric="mce"``; and larger leaves (``min_child_samples=800``).

Usage (from the repository root; the shared data in ``$MCAL_DATA_DIR``)::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/mcgrad/mcgrad_mce.py [--datasets census_kdd ...] [--seeds 15 25 35]

Writes ``benchmarks/results/mcgrad_mce.md`` and ``.csv`` (``--out-dir`` elsewhere).
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
import _common as C
import _datasets as D
from _common import md_table, run_header
from _evaluation import protocol_segments

import mcal
from mcal.metrics import log_loss, mce

_PAPER = {"max_rounds": 10, "early_stopping": "kfold", "n_folds": 5, "n_jobs": 1, "random_state": 42}
#: The data sets of paper_mcgrad.md and their row caps (its full run's).
DATASETS = {"bank_marketing": None, "credit_default": None, "census_kdd": 30_000, "german_credit": None,
            "online_shoppers": None, "hmda_boston": None, "acs12": None}  # fmt: skip
VARIANTS = {
    "MCGrad (paper config, Algorithm 1)": {**_PAPER, "rescale_input": False},
    "MCGrad (paper config)": _PAPER,
    "MCGrad, early_stopping_metric=mce": {**_PAPER, "early_stopping_metric": "mce"},
    "MCGrad, min_child_samples=800": {**_PAPER, "min_child_samples": 800},
}


def mce_u(y, p, split):
    masks, names = protocol_segments(split.frame, split.categorical, split.numerical, p)
    result = mce(y, p, segments=masks.T)
    worst = int(result.table["segment"].iloc[0])
    return result.mce_sigma, names[worst], masks


def noise_floor(p, masks, redraws, seed):
    rng = np.random.default_rng(seed)
    values = [mce((rng.random(p.size) < p).astype(float), p, segments=masks.T).mce_sigma for _ in range(redraws)]
    return float(np.mean(values)), float(np.quantile(values, 0.9))


def run_seed(key, ds, seed, redraws, max_rows):
    train, _, test = D.protocol_split(ds.n, seed)
    scores, _ = C.base_model_scores(ds, train, {"train": train, "test": test},
                                    cache_key=f"{key}-{max_rows}-{seed}")  # fmt: skip
    parts = {"train": ds.subset(train), "test": ds.subset(test)}
    preds = {"base_model": (scores["train"], scores["test"], np.nan, np.nan)}
    for name, params in VARIANTS.items():
        start = time.perf_counter()
        model = mcal.MCGrad(**params).fit(scores["train"], parts["train"].y, X=parts["train"].frame)
        preds[name] = (model.predict(scores["train"], X=parts["train"].frame),
                       model.predict(scores["test"], X=parts["test"].frame), model.n_rounds_,
                       time.perf_counter() - start)  # fmt: skip
    rows = []
    for name, (p_train, p_test, rounds, fit_s) in preds.items():
        test_mce, worst, masks = mce_u(parts["test"].y, p_test, parts["test"])
        floor_mean, floor_q90 = noise_floor(p_test, masks, redraws, seed)
        print(f"{ds.name} seed {seed}: {name}", flush=True)
        rows.append({"data": ds.name, "seed": seed, "method": name, "MCE u": test_mce, "noise mean": floor_mean,
                     "noise q90": floor_q90, "MCE u train": mce_u(parts["train"].y, p_train, parts["train"])[0],
                     "log loss": log_loss(parts["test"].y, p_test), "rounds": rounds, "fit s": fit_s,
                     "worst segment": worst})  # fmt: skip
    return rows


def summary(raw: pd.DataFrame) -> pd.DataFrame:
    g = raw.groupby(["data", "method"], sort=False)
    cols = ["MCE u", "noise mean", "noise q90", "MCE u train", "log loss", "rounds", "fit s"]
    out = g[cols].mean()
    out.insert(0, "seeds", g.size())
    out["MCE u se"] = g["MCE u"].sem()
    base = raw[raw["method"] == "base_model"].set_index(["data", "seed"])["MCE u"]
    diff = pd.Series(raw["MCE u"].to_numpy() - base.loc[list(zip(raw["data"], raw["seed"], strict=True))].to_numpy())
    d = diff.groupby([raw["data"].to_numpy(), raw["method"].to_numpy()], sort=False)
    out["MCE u minus base (mean ± se)"] = [f"{m:+.2f} ± {s:.2f}" for m, s in zip(d.mean(), d.sem(), strict=True)]
    return out.reset_index()


def sections(raw: pd.DataFrame) -> list[str]:
    """The results file's text after its header: what is measured, the summary, the worst segments."""
    worst = raw[["data", "seed", "method", "worst segment"]].to_string(index=False)
    return [(__doc__ or "").split("\n\nUsage")[0], md_table(summary(raw), digits=4),
            f"Worst test segment per seed and method:\n\n```\n{worst}\n```"]  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[15, 25, 35])
    parser.add_argument("--redraws", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="3,000 rows, one seed, 3 redraws")
    C.add_out_dir_option(parser)
    parser.add_argument("--name", default="mcgrad_mce", help="stem of the results files")
    C.add_render_option(parser)
    args = parser.parse_args(argv)
    if args.render:
        C.render_results(args.name, sections, args.out_dir or C.RESULTS)
        return 0
    args.out_dir = C.out_dir_of(args, args.name)
    seeds, redraws = ([D.PAPER_SEED], 3) if args.quick else (args.seeds, args.redraws)
    keys = ["census_kdd"] if args.quick else args.datasets
    start, rows = time.perf_counter(), []
    for key in keys:
        max_rows = 3000 if args.quick else DATASETS[key]
        ds = D.load(key, max_rows=max_rows)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mcal.CalibrationWarning)
            rows += [row for seed in seeds for row in run_seed(key, ds, seed, redraws, max_rows)]
    raw = pd.DataFrame(rows)
    table = summary(raw)
    head = run_header("MCGrad's MCE against its noise floor", seeds, {
        "mode": "quick" if args.quick else "full", "datasets": ", ".join(keys), "label redraws": str(redraws),
        "threads": "OMP_NUM_THREADS as set by the caller; n_jobs=1", "wall time": f"{time.perf_counter() - start:.0f} s",
    })  # fmt: skip
    C.write_results(args.name, head, sections(raw), raw, args.out_dir)
    print(md_table(table, digits=4))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

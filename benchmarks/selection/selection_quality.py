"""Quality of ``mcal.select_calibrator`` on real data: the chosen method's test log loss against the method that
was best in hindsight, and against the identity (issue 33).

For each dataset and seed: a base model scores a calibration part and a test part it did not see;
``select_calibrator`` runs on the calibration part with its defaults (identity, temperature, Platt, beta,
histogram, isotonic, per-field isotonic where the dataset has a field, MCGrad on the dataset's raw features;
``random_state`` = the seed); then every candidate is refitted on the whole calibration part and scored on the test
part. "hindsight best" is the candidate of lowest test log loss; "chosen" is the selection's refitted method. The
differences are paired over the test rows: ``d_best`` = chosen minus hindsight best, ``d_identity`` = chosen minus
the identity (the base score), each with its paired standard error (rows as independent draws).

Data: Bank Marketing, Credit Default, Census-KDD (all rows by default; ``--max-rows`` samples) and Online
Shoppers, with the logistic-regression base model of ``benchmarks/common/_datasets.py`` (its C; solver newton-cholesky,
which converges in seconds where lbfgs takes minutes on the unscaled Bank Marketing columns) fitted once per
dataset on a stratified 50 % of the rows, the other half cut into calibration and test halves (stratified) by each
seed; and the CTR-style arms of the MCNet benchmark (``benchmarks/papers/_ctr_data.py`` and ``paper_mcnet_ctr.ARMS``, on
a seeded sample of 60,000 of Census-KDD's rows): arms A (LightGBM base model) and B (PyTorch MLP) trained on the
1994 rows with per-field negative sampling, calibrated and tested on two halves of the 1995 rows; the controls C1
(arm A without the sampling) and C2 (C1 on an i.i.d. split instead of the years).

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/selection/selection_quality.py [--seeds 0,1,2,3,4] [--datasets ...] [--arms A,B,C1,C2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "papers"))
import _common as C
import _ctr_data as CD
import _datasets as D
from paper_mcnet_ctr import ARMS

import mcal

DATASETS = ("bank_marketing", "credit_default", "census_kdd", "online_shoppers")
#: Rows sampled from the tables by default: all of them (Census-KDD, the largest, has 199,523).
MAX_ROWS = None
#: Rows sampled from Census-KDD for the CTR arms (the MCNet benchmark uses all 299,285): their base models, a
#: LightGBM and a PyTorch MLP per arm and seed, take most of an hour on all rows on 2 shared cores.
CTR_MAX_ROWS = 60_000


def _models(field: str | None, seed: int) -> dict:
    """The default candidates of ``select_calibrator``, unfitted, for the hindsight refits."""
    models = {"identity": mcal.IdentityCalibration(), "temperature": mcal.TemperatureScaling(),
              "platt": mcal.PlattScaling(), "beta": mcal.BetaCalibration(), "histogram": mcal.HistogramBinning(),
              "isotonic": mcal.IsotonicCalibration()}  # fmt: skip
    if field is not None:
        models["per-field-isotonic"] = mcal.PerFieldCalibrator(field=field)
    models["mcgrad"] = mcal.MCGrad(random_state=seed)
    return models


def _row_losses(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    q = np.clip(p, np.finfo(float).eps, 1 - np.finfo(float).eps)
    return -(y * np.log(q) + (1 - y) * np.log1p(-q))


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    d = a - b
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))


def _features(model, data: D.Dataset) -> dict:
    return {"X": data.frame} if model.uses_features else {}


def evaluate(name: str, seed: int, cal: D.Dataset, test: D.Dataset, p_cal, p_test) -> list[dict]:
    """One selection and the refits of every candidate; one row per candidate."""
    field = cal.field if cal.field in cal.frame.columns else None
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcal.CalibrationWarning)
        selection = mcal.select_calibrator(p_cal, cal.y, X=cal.frame, field=field, random_state=seed)
    select_s = time.perf_counter() - start
    losses = {}
    for method, model in _models(field, seed).items():
        if method not in selection.table.index or np.isnan(selection.table.loc[method, "log_loss"]):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mcal.CalibrationWarning)
            fitted = model.fit(p_cal, cal.y, **_features(model, cal))
        losses[method] = _row_losses(test.y, fitted.predict(p_test, **_features(fitted, test)))
    chosen = _row_losses(test.y, selection.calibrator.predict(p_test, **_features(selection.calibrator, test)))
    best = min(losses, key=lambda m: losses[m].mean())
    d_best, se_best = _paired(chosen, losses[best])
    d_id, se_id = _paired(chosen, losses["identity"])
    rows = []
    for method, ll in losses.items():
        rows.append({"dataset": name, "seed": seed, "method": method, "n_cal": cal.n, "n_test": test.n,
                     "test_log_loss": float(ll.mean()), "chosen_test_log_loss": float(chosen.mean()),
                     "cv_log_loss": selection.table.loc[method, "log_loss"],
                     "cv_delta_se": selection.table.loc[method, "delta_se"],
                     "chosen": method == selection.chosen, "hindsight_best": method == best,
                     "cv_best": method == selection.best, "d_best": d_best, "se_best": se_best,
                     "d_identity": d_id, "se_identity": se_id, "select_s": select_s})  # fmt: skip
    print(f"  {name} seed {seed}: chosen {selection.chosen}, hindsight best {best}, d_best {d_best:+.5f} "
          f"± {se_best:.5f}, d_identity {d_id:+.5f} ± {se_id:.5f} ({select_s:.0f} s)", flush=True)  # fmt: skip
    return rows


def base_scores(key: str, ds: D.Dataset, max_rows: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The rows the base model did not see, and its scores on them: one fit per dataset, on a stratified half."""
    train, rest = train_test_split(np.arange(ds.n), train_size=0.5, stratify=ds.y, random_state=0)
    rest = np.sort(rest)
    scores, _ = C.base_model_scores(ds, np.sort(train), {"rest": rest}, cache_key=f"selection-{key}-{max_rows}",
                                    solver="newton-cholesky")  # fmt: skip
    return rest, scores["rest"]


def tabular(ds: D.Dataset, rest: np.ndarray, p_rest: np.ndarray, seed: int) -> list[dict]:
    """The seed's calibration and test halves of the rows the base model did not see (stratified)."""
    cal, test = train_test_split(np.arange(rest.size), train_size=0.5, stratify=ds.y[rest], random_state=seed)
    cal, test = np.sort(cal), np.sort(test)
    return evaluate(ds.name, seed, ds.subset(rest[cal]), ds.subset(rest[test]), p_rest[cal], p_rest[test])


def ctr(arm: str, seed: int, data) -> list[dict]:
    ds, year = data
    split = CD.split_for(ds, year, arm, ARMS[arm], seed, use_cache=True, n_threads=1)
    return evaluate(f"CTR arm {arm}", seed, split.cal, split.test, split.p_cal, split.p_test)


def summarize(raw: pd.DataFrame) -> pd.DataFrame:
    """Per dataset: mean test log loss of the identity, the chosen and the hindsight-best method over the seeds,
    the mean paired differences, and how often the chosen method lost beyond its standard error."""
    out = []
    for name, sub in raw.groupby("dataset", sort=False):
        chosen, best = sub[sub["chosen"]], sub[sub["hindsight_best"]]
        ident, cv_best = sub[sub["method"] == "identity"], sub[sub["cv_best"]]
        per_seed = chosen.set_index("seed")
        out.append({
            "dataset": name, "seeds": len(per_seed),
            "identity": ident["test_log_loss"].mean(), "chosen": per_seed["chosen_test_log_loss"].mean(),
            "hindsight best": best["test_log_loss"].mean(), "lowest cv log loss": cv_best["test_log_loss"].mean(),
            "chosen - best": per_seed["d_best"].mean(), "mean SE (best)": per_seed["se_best"].mean(),
            "seeds chosen > best + 2 SE": int((per_seed["d_best"] > 2 * per_seed["se_best"]).sum()),
            "chosen - identity": per_seed["d_identity"].mean(),
            "seeds chosen > identity + SE": int((per_seed["d_identity"] > per_seed["se_identity"]).sum()),
            "chosen methods": ", ".join(f"{m} x{c}" for m, c in chosen["method"].value_counts().items()),
            "hindsight-best methods": ", ".join(f"{m} x{c}" for m, c in best["method"].value_counts().items()),
        })  # fmt: skip
    return pd.DataFrame(out)


def run(args) -> tuple[dict[str, str], pd.DataFrame]:
    """The run's header and one row per dataset, seed and candidate."""
    seeds = [int(s) for s in args.seeds.split(",")]
    load_before = os.getloadavg()[0]
    rows = []
    for key in [k for k in args.datasets.split(",") if k]:
        ds = D.load(key, max_rows=args.max_rows, random_state=0)
        rest, p_rest = base_scores(key, ds, args.max_rows)
        for seed in seeds:
            rows += tabular(ds, rest, p_rest, seed)
    arms = [a for a in args.arms.split(",") if a]
    if arms:
        data = CD.load(max_rows=CTR_MAX_ROWS, random_state=0)
        for arm in arms:
            for seed in seeds:
                rows += ctr(arm, seed, data)
    header = C.run_header("select_calibrator on real data: chosen against hindsight best and identity", seeds, {
        "load average (1 min)": f"{load_before:.2f} at start, {os.getloadavg()[0]:.2f} at end (shared machine)",
        "rows": f"tables: {'all' if args.max_rows is None else f'a seeded sample of {args.max_rows:,}'}; CTR arms: "
        f"a seeded sample of {CTR_MAX_ROWS:,} of Census-KDD's 299,285",
    })  # fmt: skip
    return header, pd.DataFrame(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--max-rows", type=int, default=MAX_ROWS, help="rows sampled from each table (default all)")
    parser.add_argument("--name", default="selection_quality")
    parser.add_argument("--render", type=Path, metavar="CSV", help="only rewrite the Markdown of this results CSV")
    parser.add_argument("--quick", action="store_true", help="3,000 rows of Credit Default, one seed: a smoke test")
    C.add_out_dir_option(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.datasets, args.arms, args.max_rows = "0", "credit_default", "", 3000
    args.out_dir = C.out_dir_of(args, args.name)
    if args.render is not None:
        header, raw = C.read_results(args.render)
    else:
        header, raw = run(args)
    summary = summarize(raw)
    methods = raw.pivot_table(index=["dataset", "seed"], columns="method", values="test_log_loss", sort=False)
    methods = methods.reset_index()
    marks = raw[raw["chosen"]].set_index(["dataset", "seed"])["method"]
    methods.insert(2, "chosen", [marks[(d, s)] for d, s in zip(methods["dataset"], methods["seed"], strict=True)])
    sections = [
        "## Summary over seeds\n\nTest log loss (nats), means over the seeds. `chosen - best` and `chosen - "
        "identity` are the means of the per-seed paired differences; `mean SE` is the mean per-seed paired "
        "standard error (test rows as independent draws). The last counts say in how many seeds the chosen "
        "method's test log loss exceeded the hindsight best's by more than 2 SE, and the identity's by more "
        "than 1 SE. `lowest cv log loss` is the mean test log loss of the candidate of lowest held-out log "
        "loss in the selection's own cross-fit, refitted as in the hindsight columns (MCGrad by its own fit).\n\n"
        + C.md_table(summary, 5),
        "## Test log loss of every candidate, per seed\n\n" + C.md_table(methods, 5),
    ]
    md, _ = C.write_results(args.name, header, sections, raw, args.out_dir)
    print(md.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Why ``select_calibrator`` missed MCGrad on Credit Default and CTR arm A: the fold fits and the decision rule.

For each dataset and seed (the calibration and test halves of ``selection_quality.py``), every default candidate
is cross-fitted on the same 5 stratified folds of the calibration half, and MCGrad in three ways:

- ``mcgrad_split``: early stopping on a fifth of the fold's training rows, the rounds kept without a refit (so
  fitted on 64 % of the calibration rows);
- ``mcgrad_refit``: ``MCGrad().fit`` on the fold's training rows (early stopping on a fifth, then the rounds
  refitted on all of them, 80 % of the calibration rows), as MCGrad is fitted when chosen;
- ``mcgrad_global``: the rounds ``T`` chosen once by ``MCGrad().fit`` on the calibration half, then ``T`` rounds
  fitted on each fold's training rows without early stopping.

Each way's held-out log loss gain over the simpler candidates is compared with the gain of ``MCGrad().fit`` on the
whole calibration half over the same candidates on the test half; and each rule's choice is scored on the test half.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/selection/selection_rule.py [--seeds 0,1,2,3,4] [--datasets credit_default] [--arms A]
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
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold, train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "papers"))
import _common as C
import _ctr_data as CD
import _datasets as D
import selection_quality as Q
from paper_mcnet_ctr import ARMS

import mcal
from mcal.metrics import mce
from mcal.segments import generate_segments

VARIANTS = ("mcgrad_split", "mcgrad_refit", "mcgrad_global")


def _fit(model, p, y, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcal.CalibrationWarning)
        return model.fit(p, y, **({"X": X} if model.uses_features else {}))


def _pred(model, p, X):
    return model.predict(p, **({"X": X} if model.uses_features else {}))


def cross_fit(model, p, y, X, folds, *, split_seed=None):
    """Held-out predictions; with ``split_seed`` MCGrad early-stops on a split of the fold's rows (no refit)."""
    out, rounds = np.empty(p.size), []
    for k in range(folds.max() + 1):
        tr, te = np.flatnonzero(folds != k), np.flatnonzero(folds == k)
        if split_seed is None:
            fitted = _fit(clone(model), p[tr], y[tr], X.iloc[tr])
        else:
            inner, valid = train_test_split(tr, test_size=0.2, stratify=y[tr], random_state=split_seed)
            inner, valid = np.sort(inner), np.sort(valid)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", mcal.CalibrationWarning)
                fitted = clone(model).fit(p[inner], y[inner], X=X.iloc[inner],
                                          eval_set=(p[valid], y[valid], X.iloc[valid]))  # fmt: skip
        out[te] = _pred(fitted, p[te], X.iloc[te])
        rounds.append(int(getattr(fitted, "n_rounds_", -1)))
    return out, rounds


def one(name, seed, cal, test, p_cal, p_test) -> list[dict]:
    field = cal.field if cal.field in cal.frame.columns else None
    X, Xt, y, yt = cal.frame, test.frame, cal.y.astype(float), test.y.astype(float)
    folds = np.empty(y.size, dtype=int)
    for k, (_, te) in enumerate(StratifiedKFold(5, shuffle=True, random_state=seed).split(np.zeros(y.size), y)):
        folds[te] = k
    segments = generate_segments(X)
    models = Q._models(field, seed)
    mc = models.pop("mcgrad")
    start = time.perf_counter()
    full = _fit(clone(mc), p_cal, y, X)
    held, rounds = {}, {}
    for m, model in models.items():
        held[m], _ = cross_fit(model, p_cal, y, X, folds)
    held["mcgrad_split"], rounds["mcgrad_split"] = cross_fit(mc, p_cal, y, X, folds, split_seed=seed)
    held["mcgrad_refit"], rounds["mcgrad_refit"] = cross_fit(mc, p_cal, y, X, folds)
    fixed = clone(mc).set_params(early_stopping=None, max_rounds=full.n_rounds_)
    held["mcgrad_global"], rounds["mcgrad_global"] = cross_fit(fixed, p_cal, y, X, folds)
    tr, va = np.flatnonzero(folds != 0), np.flatnonzero(folds == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcal.CalibrationWarning)
        es = clone(mc).fit(p_cal[tr], y[tr], X=X.iloc[tr], eval_set=(p_cal[va], y[va], X.iloc[va]))
    fixed0 = clone(mc).set_params(early_stopping=None, max_rounds=es.n_rounds_)
    held["mcgrad_fold0"], rounds["mcgrad_fold0"] = cross_fit(fixed0, p_cal, y, X, folds)
    held["mcgrad_fold0"][va] = es.predict(p_cal[va], X=X.iloc[va])
    test_pred = {"mcgrad_fold0": _pred(_fit(clone(fixed0), p_cal, y, X), p_test, Xt)}
    test_pred |= {m: _pred(_fit(clone(model), p_cal, y, X), p_test, Xt) for m, model in models.items()}
    test_pred["mcgrad"] = _pred(full, p_test, Xt)
    median = int(np.median(rounds["mcgrad_split"]))
    med = _fit(clone(mc).set_params(early_stopping=None, max_rounds=median), p_cal, y, X)
    test_pred["mcgrad_median_rounds"] = _pred(med, p_test, Xt)
    rows = []
    for m, pred in held.items():
        r = mce(y, pred, segments=segments)
        rows.append({"dataset": name, "seed": seed, "part": "cv", "method": m, "loss": Q._row_losses(y, pred),
                     "mce_sigma": r.mce_sigma, "mce_pvalue": r.pvalue_adjusted, "rounds": rounds.get(m)})  # fmt: skip
    for m, pred in test_pred.items():
        r = mce(yt, pred, segments=generate_segments(Xt))
        rows.append({"dataset": name, "seed": seed, "part": "test", "method": m, "loss": Q._row_losses(yt, pred),
                     "mce_sigma": r.mce_sigma, "mce_pvalue": r.pvalue_adjusted,
                     "rounds": full.n_rounds_ if m == "mcgrad" else (median if m.endswith("rounds") else None)})  # fmt: skip
    print(f"  {name} seed {seed}: {time.perf_counter() - start:.0f} s, rounds full {full.n_rounds_}, "
          f"split {rounds['mcgrad_split']}, refit {rounds['mcgrad_refit']}", flush=True)  # fmt: skip
    return rows


#: The held-out MCGrad of each way, and the refit of MCGrad on the whole calibration half that goes with it.
FINAL = {"mcgrad_split": "mcgrad_median_rounds", "mcgrad_refit": "mcgrad", "mcgrad_global": "mcgrad",
         "mcgrad_fold0": "mcgrad_fold0"}  # fmt: skip
#: The rules: tolerance in paired SE of log loss, and whether a simpler method must be within it on the MCE too.
RULES = {"log loss, 0 SE (the best)": (0.0, False), "log loss, 1 SE": (1.0, False),
         "log loss and MCE, 1 SE": (1.0, True)}  # fmt: skip


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    d = a - b
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))


def decide(raw: pd.DataFrame) -> pd.DataFrame:
    """Each way and rule's choice per dataset and seed, scored on the test half against the hindsight best."""
    out = []
    for (ds, seed), g in raw.groupby(["dataset", "seed"], sort=False):
        cv = {r.method: r for r in g[g.part == "cv"].itertuples()}
        te = {r.method: r for r in g[g.part == "test"].itertuples()}
        simple = [m for m in cv if not m.startswith("mcgrad")]
        hindsight = min([*simple, "mcgrad"], key=lambda m: te[m].loss.mean())
        for way, final in FINAL.items():
            names = [*simple, way]
            best = min(names, key=lambda m: cv[m].loss.mean())
            for rule, (tol, with_mce) in RULES.items():

                def within(m, tol=tol, with_mce=with_mce, best=best):
                    d, se = _paired(cv[m].loss, cv[best].loss)
                    return d <= tol * se and (not with_mce or cv[m].mce_sigma <= cv[best].mce_sigma + tol)

                chosen = next(m for m in names if within(m))
                test = te[final if chosen == way else chosen].loss
                d_best, se_best = _paired(test, te[hindsight].loss)
                d_id, se_id = _paired(test, te["identity"].loss)
                out.append({"dataset": ds, "seed": seed, "way": way, "rule": rule, "chosen": chosen,
                            "hindsight_best": hindsight, "d_best": d_best, "se_best": se_best, "d_identity": d_id,
                            "se_identity": se_id, "cv_gain_over_platt": cv["platt"].loss.mean() - cv[way].loss.mean(),
                            "cv_gain_se": _paired(cv["platt"].loss, cv[way].loss)[1],
                            "test_gain_over_platt": te["platt"].loss.mean() - te[final].loss.mean(),
                            "rounds": str(cv[way].rounds)})  # fmt: skip
    return pd.DataFrame(out)


def summarize(decisions: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The gain of each way (held-out against test) and each rule's loss to the hindsight best, over the seeds."""
    one_rule = decisions[decisions["rule"] == next(iter(RULES))]
    gains = one_rule.groupby(["dataset", "way"], sort=False).agg(
        cv_gain_over_platt=("cv_gain_over_platt", "mean"), cv_gain_se=("cv_gain_se", "mean"),
        test_gain_over_platt=("test_gain_over_platt", "mean")).reset_index()  # fmt: skip
    d = decisions.assign(miss=decisions["d_best"] > 2 * decisions["se_best"],
                         lost_to_identity=decisions["d_identity"] > decisions["se_identity"])  # fmt: skip
    rules = d.groupby(["dataset", "way", "rule"], sort=False).agg(
        chosen_minus_best=("d_best", "mean"), seeds_beyond_2se=("miss", "sum"),
        chosen_minus_identity=("d_identity", "mean"), seeds_lost_to_identity=("lost_to_identity", "sum"),
        chosen=("chosen", lambda s: ", ".join(f"{m} x{c}" for m, c in s.value_counts().items()))).reset_index()  # fmt: skip
    return gains, rules


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="0,1,2,3,4")
    parser.add_argument("--datasets", default="credit_default")
    parser.add_argument("--arms", default="A")
    parser.add_argument("--name", default="selection_rule")
    parser.add_argument("--quick", action="store_true", help="3,000 rows of Credit Default, one seed: a smoke test")
    C.add_out_dir_option(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds, args.datasets, args.arms = "0", "credit_default", ""
    args.out_dir = C.out_dir_of(args, args.name)
    max_rows = 3000 if args.quick else Q.MAX_ROWS
    seeds = [int(s) for s in args.seeds.split(",")]
    load_before = os.getloadavg()[0]
    rows = []
    for key in [k for k in args.datasets.split(",") if k]:
        ds = D.load(key, max_rows=max_rows, random_state=0)
        rest, p_rest = Q.base_scores(key, ds, max_rows)
        for seed in seeds:
            cal, test = train_test_split(np.arange(rest.size), train_size=0.5, stratify=ds.y[rest], random_state=seed)
            cal, test = np.sort(cal), np.sort(test)
            rows += one(ds.name, seed, ds.subset(rest[cal]), ds.subset(rest[test]), p_rest[cal], p_rest[test])
    arms = [a for a in args.arms.split(",") if a]
    if arms:
        dsy = CD.load(max_rows=Q.CTR_MAX_ROWS, random_state=0)
        for arm in arms:
            for seed in seeds:
                s = CD.split_for(*dsy, arm, ARMS[arm], seed, use_cache=True, n_threads=1)
                rows += one(f"CTR arm {arm}", seed, s.cal, s.test, s.p_cal, s.p_test)
    decisions = decide(pd.DataFrame(rows))
    gains, rules = summarize(decisions)
    header = C.run_header("select_calibrator: MCGrad's fold fits and the decision rule", seeds, {
        "load average (1 min)": f"{load_before:.2f} at start, {os.getloadavg()[0]:.2f} at end (shared machine)",
    })  # fmt: skip
    sections = [
        "## MCGrad's gain over Platt scaling: held out in the cross-fit, and on the test half\n\nMean over the "
        "seeds of Platt's log loss minus MCGrad's (nats): `cv_gain_over_platt` on the calibration half's held-out "
        "folds, with its mean paired SE, for each way of fitting MCGrad in the folds; `test_gain_over_platt` for "
        "the MCGrad refitted on the whole calibration half that goes with that way, on the test half.\n\n"
        + C.md_table(gains, 5),
        "## Each rule's choice against the hindsight best\n\n`chosen_minus_best`: mean over the seeds of the "
        "chosen method's test log loss minus that of the best method on the test half (MCGrad fitted by its own "
        "`fit`); `seeds_beyond_2se`: seeds where that difference exceeds 2 paired SE; `seeds_lost_to_identity`: "
        "seeds where the chosen method's test log loss exceeds the identity's by more than 1 SE.\n\n"
        + C.md_table(rules, 5),
    ]
    md, _ = C.write_results(args.name, header, sections, decisions, args.out_dir)
    print(md.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

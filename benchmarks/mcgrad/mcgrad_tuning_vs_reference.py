"""``mcal.tune_mcgrad`` against ``mcgrad``'s ``tune_mcgrad_params`` (Ax), on Bank Marketing and Credit Default.

Protocol: for each data set and seed, the protocol's split (``_datasets.protocol_split``: test rows fixed by seed
42, the training rows move with the seed) and its base logistic regression fitted on the training rows (scores
cached by ``_common.base_model_scores``). Both tuners get the same training rows as calibration data ("data
reuse", as in ``paper_mcgrad.py``), the same features (the protocol's categorical and numerical segment
columns), the same trial budget (``--n-trials``, the reference's default 20) and the same search space (mcal's
``default_search_space`` is the reference's ``default_parameter_configurations``), and are scored on the same
held-out test rows. The scores and rows are written once to parquet files that both interpreters read.

- mcal: ``tune_mcgrad(..., n_trials, random_state=seed)``: successive halving over the training rows, scored on
  a held-out 20 % of them, the winner refitted on all training rows.
- reference: ``tune_mcgrad_params(MCGrad(random_state=seed), df_train, n_trials=...)``: 20 % of the rows held
  out (``train_test_split(random_state=42)``), each trial a full MCGrad fit (5-fold early stopping below 2.5M
  rows) on the other 80 %, Sobol then Bayesian optimization (Ax), the best trial refitted on the same 80 %. Ax
  takes no seed there, so its trials are not reproducible.

Each tuner runs in its own subprocess, one after the other (the reference in an interpreter with Ax: its ~30
extra packages are kept out of mcal's environment), with ``OMP_NUM_THREADS=1`` and one LightGBM thread (mcal
``n_jobs=1``, reference ``lightgbm_params={"num_threads": 1}``). Reported per run: wall time of the tuning call
(final fit included), the MCGrad fits it made and the boosters it trained (``lightgbm.train`` calls), held-out
log loss, ECE (10 uniform bins) and MCE (``mcal.metrics.mce(...).mce_sigma`` with segments generated from the test
features), all computed in this process by mcal from the saved predictions, and the chosen parameters. MCGrad
with mcal's defaults (no tuning) is scored beside them.

Usage (from the repository root; the reference interpreter needs ``mcgrad==0.1.5`` and ``ax-platform``)::

    python3.11 -m venv /tmp/axvenv && /tmp/axvenv/bin/pip install "pip>=25.1" torch==2.13.0
    /tmp/axvenv/bin/pip install --group reference   # mcgrad 0.1.5, ax-platform 1.3.1 (pyproject.toml)
    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/mcgrad/mcgrad_tuning_vs_reference.py \\
        --reference-python /tmp/axvenv/bin/python [--seeds 15 25 35] [--n-trials 20] [--quick]

Without an interpreter that imports ``mcgrad.tuning`` the reference half is skipped with a message, and its rows
say so. Writes ``benchmarks/results/mcgrad_tuning_vs_reference.md`` and ``.csv`` (``--out-dir`` elsewhere; ``--quick``
writes to a temporary folder); ``--render`` rewrites the ``.md`` from the ``.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
#: The reference's names of the searched parameters, and mcal's.
REFERENCE_NAMES = {"num_leaves": "max_leaves", "lambda_l2": "l2_regularization"}
SEARCHED = ("learning_rate", "min_child_samples", "num_leaves", "n_estimators", "lambda_l2", "min_gain_to_split",
            "max_depth", "min_sum_hessian_in_leaf")  # fmt: skip
DATASETS = {"bank_marketing": "BankMarketing", "credit_default": "CreditDefault"}
NAME = "mcgrad_tuning_vs_reference"
IMPLS = ("mcal defaults", "mcal tune_mcgrad", "mcgrad tune_mcgrad_params")


# -- one tuning run, in a subprocess (also under the reference's interpreter: numpy and pandas only here) ------
def _count_calls(owner, name: str, counter: list[int]) -> None:
    """Wrap ``owner.name`` so that every call adds one to ``counter[0]``."""
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        counter[0] += 1
        return real(*args, **kwargs)

    setattr(owner, name, counted)


def _run_reference(spec, train, test, cats, nums, fits):
    import logging

    from mcgrad.methods import MCGrad
    from mcgrad.tuning import tune_mcgrad_params

    logging.disable(logging.WARNING)  # Ax logs every trial
    _count_calls(MCGrad, "fit", fits)
    model = MCGrad(lightgbm_params={"num_threads": spec["threads"]}, random_state=spec["seed"])
    start = time.perf_counter()
    tuned, trials = tune_mcgrad_params(
        model, train, "__score__", "__label__", categorical_feature_column_names=cats,
        numerical_feature_column_names=nums, n_trials=spec["n_trials"],
    )  # fmt: skip
    seconds = time.perf_counter() - start
    params = {REFERENCE_NAMES.get(k, k): tuned.lightgbm_params[k] for k in SEARCHED}
    return seconds, tuned.predict(test, "__score__", cats, nums), params, trials, len(tuned.mr)


def _run_mcal(spec, train, test, cats, nums, fits):
    from mcal import MCGrad, tune_mcgrad

    _count_calls(MCGrad, "fit", fits)
    fixed = {"n_jobs": spec["threads"], "categorical_features": cats}
    y_prob, y, X = train["__score__"].to_numpy(), train["__label__"].to_numpy(), train[cats + nums]
    start = time.perf_counter()
    if spec["impl"] == "mcal defaults":
        model, params, trials = MCGrad(**fixed, random_state=spec["seed"]).fit(y_prob, y, X=X), {}, pd.DataFrame()
    else:
        result = tune_mcgrad(y_prob, y, X=X, n_trials=spec["n_trials"], mcgrad_params=fixed, random_state=spec["seed"])
        model, params, trials = result.model, result.best_params, result.trials
    seconds = time.perf_counter() - start
    return seconds, model.predict(test["__score__"].to_numpy(), X=test[cats + nums]), params, trials, model.n_rounds_


def worker(spec: dict) -> None:
    """Run one tuner on the prepared rows; save its test predictions and trials, print a JSON summary."""
    import lightgbm

    folder, tag = Path(spec["folder"]), spec["tag"]
    train, test = (pd.read_parquet(folder / f"{tag}_{part}.parquet") for part in ("train", "test"))
    boosters, fits = [0], [0]
    _count_calls(lightgbm, "train", boosters)
    run = _run_reference if spec["impl"].startswith("mcgrad") else _run_mcal
    seconds, pred, params, trials, rounds = run(spec, train, test, spec["cats"], spec["nums"], fits)
    np.save(folder / f"{tag}_{spec['label']}_pred.npy", np.asarray(pred, dtype=np.float64))
    trials.to_csv(folder / f"{tag}_{spec['label']}_trials.csv", index=False)
    params = {k: v.item() if isinstance(v, np.generic) else v for k, v in params.items()}
    summary = {"tune_s": seconds, "n_fits": fits[0], "n_boosters": boosters[0], "rounds": int(rounds)}
    print(json.dumps({**summary, "params": params}))


# -- the driver (mcal's interpreter) -------------------------------------------------------------------------
def has_reference(python: str) -> bool:
    """Whether ``python`` imports the reference tuner (``mcgrad.tuning`` needs Ax)."""
    code = "import mcgrad.tuning"
    return (
        subprocess.run([python, "-c", code], capture_output=True, env={**os.environ, "PYTHONPATH": ""}).returncode == 0
    )


def prepare(key: str, seed: int, folder: Path, max_rows: int | None) -> dict:
    """Write the training and test rows (features, base score, label) of one data set and seed to parquet."""
    import _common as C
    import _datasets as D

    ds = D.load(key, max_rows=max_rows)
    train, val, test = D.protocol_split(ds.n, seed)
    parts = {"train": train, "val": val, "test": test}  # as paper_mcgrad.py, which then shares the cache
    scores, _ = C.base_model_scores(ds, train, parts, cache_key=f"{key}-{max_rows}-{seed}")
    cats, nums = list(ds.categorical), list(ds.numerical)
    tag = f"{key}_{seed}"
    for part, rows in (("train", train), ("test", test)):
        frame = ds.frame.iloc[rows][cats + nums].reset_index(drop=True)
        frame.assign(__score__=scores[part], __label__=ds.y[rows].astype(float)).to_parquet(
            folder / f"{tag}_{part}.parquet"
        )
    return {"tag": tag, "data": DATASETS[key], "seed": seed, "cats": cats, "nums": nums, "n_train": int(train.size)}


def score(folder: Path, desc: dict, label: str) -> dict:
    """Held-out log loss, ECE and MCE of ``label``'s saved test predictions (or of the base scores)."""
    import warnings

    from mcal import CalibrationWarning
    from mcal.metrics import ece, log_loss, mce

    test = pd.read_parquet(folder / f"{desc['tag']}_test.parquet")
    y = test["__label__"].to_numpy()
    p = test["__score__"].to_numpy() if label == "base" else np.load(folder / f"{desc['tag']}_{label}_pred.npy")
    with warnings.catch_warnings():  # columns of a single level define no segment: said on every call
        warnings.simplefilter("ignore", CalibrationWarning)
        mce_sigma = mce(y, p, X=test[desc["cats"] + desc["nums"]]).mce_sigma
    return {"log_loss": log_loss(y, p), "ece": ece(y, p), "mce_sigma": mce_sigma}


def run_seed(desc: dict, folder: Path, args, reference: str | None) -> list[dict]:
    """The base model and the three runs on one data set and seed: one result row each."""
    from mcgrad_vs_reference import run_one

    rows = [
        {
            "data": desc["data"],
            "seed": desc["seed"],
            "method": "base model",
            "status": "ok",
            **score(folder, desc, "base"),
        }
    ]
    for impl in IMPLS:
        row = {"data": desc["data"], "seed": desc["seed"], "method": impl, "n_train": desc["n_train"],
               "n_trials": args.n_trials}  # fmt: skip
        if impl.startswith("mcgrad") and reference is None:
            rows.append({**row, "status": "not run", "reason": "no interpreter with mcgrad.tuning (Ax) given"})
            continue
        label = impl.replace(" ", "_")
        spec = {**desc, "impl": impl, "label": label, "folder": str(folder), "threads": args.threads,
                "n_trials": args.n_trials}  # fmt: skip
        load = os.getloadavg()[0]
        out = run_one(reference if impl.startswith("mcgrad") else sys.executable, spec, __file__)
        print(f"  {desc['tag']} {impl}: {out['tune_s']:.0f} s, {out['n_fits']} fits")
        rows.append({**row, "status": "ok", **score(folder, desc, label), **{k: out[k] for k in out if k != "params"},
                     "load_1min": load, "params": json.dumps(out["params"], sort_keys=True)})  # fmt: skip
    return rows


def summary(raw: pd.DataFrame) -> pd.DataFrame:
    """Mean ± standard error over seeds per data set and method; the log loss also as a difference to the
    reference's on the same seed."""
    ok = raw[raw["status"] == "ok"]
    ref = ok[ok["method"] == IMPLS[2]].set_index(["data", "seed"])["log_loss"]
    keys = pd.MultiIndex.from_frame(ok[["data", "seed"]])
    ok = ok.assign(vs_ref=ok["log_loss"].to_numpy() - ref.reindex(keys).to_numpy())
    g = ok.groupby(["data", "method"], sort=False)

    def ms(col, digits):
        if col not in ok:
            return ""
        return ["" if m != m else f"{m:.{digits}f} ± {s:.{digits}f}" if s == s else f"{m:.{digits}f}" for m, s in
                zip(g[col].mean(), g[col].sem(), strict=True)]  # fmt: skip

    out = pd.DataFrame({"seeds": g.size(), "wall s": ms("tune_s", 0), "MCGrad fits": ms("n_fits", 0),
                        "boosters": ms("n_boosters", 0), "rounds of the model": ms("rounds", 1),
                        "log loss": ms("log_loss", 4), "minus reference": ms("vs_ref", 4), "ECE": ms("ece", 4),
                        "MCE (sigma)": ms("mce_sigma", 2)})  # fmt: skip
    return out.reset_index()


def params_table(raw: pd.DataFrame) -> pd.DataFrame:
    """The parameters each tuner chose, one row per data set, seed and tuner (mcal's parameter names)."""
    tuned = raw[raw["method"].isin(IMPLS[1:]) & (raw["status"] == "ok")]
    cols = [REFERENCE_NAMES.get(k, k) for k in SEARCHED]
    chosen = pd.DataFrame([json.loads(p) for p in tuned["params"]], index=tuned.index).reindex(columns=cols)
    return pd.concat([tuned[["data", "seed", "method", "rounds"]], chosen], axis=1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[15, 25, 35])
    parser.add_argument("--n-trials", type=int, default=20, help="trials of both tuners (the reference's default)")
    parser.add_argument("--reference-python", help="an interpreter with mcgrad 0.1.5 and ax-platform")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="3,000 rows of Bank Marketing, 4 trials, one seed")
    parser.add_argument("--out-dir", type=Path, help="default: benchmarks/results/, a temporary folder with --quick")
    parser.add_argument("--render", action="store_true", help="rewrite the .md from the .csv, measuring nothing")
    args = parser.parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE.parent / "common"))
    from _common import RESULTS, out_dir_of, render_results

    if args.render:
        render_results(NAME, sections, args.out_dir or RESULTS)
        return 0
    args.out_dir = out_dir_of(args, NAME)
    if args.quick:
        args.datasets, args.seeds, args.n_trials = ["bank_marketing"], args.seeds[:1], 4
    reference = args.reference_python or sys.executable
    if not has_reference(reference):
        print(f"reference half skipped: {reference} cannot import mcgrad.tuning (needs mcgrad 0.1.5 and ax-platform)")
        reference = None
    start, rows = time.perf_counter(), []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:  # every data set once before the next seed; the files are rewritten after each
            for key in args.datasets:
                rows += run_seed(
                    prepare(key, seed, Path(tmp), 3000 if args.quick else None), Path(tmp), args, reference
                )
                done = args.seeds[: args.seeds.index(seed) + 1]
                write(pd.DataFrame(rows), args, reference, done, time.perf_counter() - start)
    return 0


def write(raw: pd.DataFrame, args, reference: str | None, seeds: list[int], seconds: float) -> None:
    """Write the results files of the seeds run so far."""
    from _common import md_table, run_header, write_results

    head = run_header("mcal.tune_mcgrad against mcgrad's tune_mcgrad_params (Ax)", seeds, {
        "mode": "quick" if args.quick else "full", "trials": str(args.n_trials),
        "threads": f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, LightGBM {args.threads} thread(s)",
        "reference interpreter": reference or "none (reference half not run)",
        "machine load": "1-minute load average before each run in the CSV's load_1min column",
        "wall time": f"{seconds:.0f} s",
    })  # fmt: skip
    write_results(NAME, head, sections(raw), raw, args.out_dir)
    print(md_table(summary(raw), digits=4))


def sections(raw: pd.DataFrame) -> list[str]:
    """The results file's text after its header: the protocol, the summary over seeds, the chosen parameters."""
    from _common import md_table

    return [(__doc__ or "").split("\n\nUsage")[0], "## Per data set (mean ± standard error over seeds)",
            md_table(summary(raw), digits=4), "## Chosen parameters", md_table(params_table(raw), digits=4)]  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())

"""MCGrad in mcal against the reference package ``mcgrad`` 0.1.5, side by side on the same data.

Data: a synthetic generator with a known miscalibration (5 categorical features of 3 to 20 levels, 5
numerical ones, one with 5 % missing values; the base score is over-confident and ignores the categoricals),
with 100k and 1M training rows plus a held-out quarter; and the Bank Marketing and Credit Default data
prepared as in the MCGrad paper's benchmark (``shared/papers/MCGRAD_BENCHMARK_PROTOCOL.md`` sections 2-3:
logistic-regression base model fit on the 60 % training split, which is also the calibration set; metrics on
the 20 % test split).

Each fit runs in its own subprocess, one after the other, so that peak memory (VmHWM) and timings of one
implementation do not leak into the other. Both use the same LightGBM thread count (``--threads``, 1 by
default: the machine is shared) and otherwise their own defaults (mcgrad: 5-fold early stopping below 2.5M
rows, seed 42; mcal: holdout early stopping). Held-out log loss, PR-AUC and the multicalibration error are
computed in this process from the saved predictions, with the same code for both; the multicalibration
error is ``mcgrad.metrics.MulticalibrationError`` with the paper's settings (``mce_sigma``, "MCE" in
Tables 5-6), and also ``mcal.metrics.mce`` where this mcal has it.

Both implementations draw their early-stopping split (and LightGBM's seed) from ``random_state``, and the
number of rounds and the MCE move with it as much as between the two implementations (one seed of mcal
gave MCE 3.70 to 3.84 on the same 100k rows, 3.94 to 4.65 on Bank Marketing). On data sets up to ``--variants-max-rows`` rows, both
therefore run with ``--seeds`` seeds (mcgrad: ``random_state`` 42, its default, 43, ...; mcal: 0, 1, ...)
and the targets compare the means over seeds; larger data sets run one seed each.

Usage (from the repository root)::

    # reference already importable by this interpreter (e.g. the project's shared venv):
    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_vs_reference.py
    # or build a separate venv for the reference first (needs PyPI; torch is pinned before mcgrad):
    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_vs_reference.py --make-venv /tmp/mcgrad-ref
    # a smaller run
    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_vs_reference.py --sizes 100000 --datasets synthetic
    PYTHONPATH=src python benchmarks/mcgrad/mcgrad_vs_reference.py --quick   # to a temporary folder: a smoke test

Writes ``benchmarks/results/mcgrad_vs_reference.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"
if not DATA.exists():
    DATA = Path("/work/shared/data")
LEVELS = (3, 5, 8, 12, 20)
REFERENCE = "mcgrad==0.1.5"
TORCH = "torch==2.13.0"


# -- data ----------------------------------------------------------------------------------------------------
def categoricals(n: int, rng: np.random.Generator) -> tuple[dict[str, pd.Categorical], np.ndarray]:
    """The synthetic data's categoricals (Zipf-like levels of ``LEVELS``) and the effect of the first three on the
    outcome, fixed across seeds (drawn from ``rng``, which then draws the numericals)."""
    cols, effect = {}, np.zeros(n)
    for j, k in enumerate(LEVELS):
        prob = 1.0 / np.arange(1, k + 1)
        codes = rng.choice(k, size=n, p=prob / prob.sum())
        cols[f"c{j}"] = pd.Categorical.from_codes(codes, categories=[f"L{i}" for i in range(k)])
        if j < 3:
            effect += np.random.default_rng(100 + j).normal(0.0, 0.5, size=k)[codes]  # fixed across seeds
    return cols, effect


def synthetic(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, list[str], list[str]]:
    """Known miscalibration: the true logit has category effects and a nonlinearity the base ignores."""
    from scipy.special import expit

    rng = np.random.default_rng(seed)
    cols, effect = categoricals(n, rng)
    x = rng.normal(size=(n, 5))
    linear = -1.0 + 0.8 * x[:, 0] - 0.6 * x[:, 1]
    true_logit = linear + 0.5 * np.sin(2 * x[:, 2]) + effect + 0.6 * (cols["c3"].codes == 0) * x[:, 3]
    base = expit(1.6 * (linear + 0.3 * x[:, 2]))  # over-confident, blind to the categoricals
    y = (rng.random(n) < expit(true_logit)).astype(float)
    x[rng.random(n) < 0.05, 4] = np.nan
    for j in range(5):
        cols[f"x{j}"] = x[:, j]
    return pd.DataFrame(cols), base, y, [f"c{j}" for j in range(5)], [f"x{j}" for j in range(5)]


def _paper_splits(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Protocol section 2: test = 20 % drawn with seed 42, validation 20 % with seed 15, train the rest."""
    np.random.seed(42)
    test = np.random.choice(np.arange(n), int(0.2 * n), replace=False)
    rest = np.setdiff1d(np.arange(n), test)
    np.random.seed(15)
    val = np.random.choice(rest, int(0.2 * n), replace=False)
    return np.setdiff1d(rest, val), np.sort(test)


#: BLAS threads of the base logistic regression, as in the paper benchmarks (``_common.BASE_BLAS_THREADS``):
#: lbfgs stops at its iteration cap on Bank Marketing and OpenBLAS sums differently with one thread, so the base
#: scores (and every row after them) depended on OMP_NUM_THREADS until this was fixed; 2 gives the paper's base row.
BASE_BLAS_THREADS = 2


def _logistic_base(features: pd.DataFrame, y: np.ndarray, train: np.ndarray, C: float) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    with threadpool_limits(BASE_BLAS_THREADS, user_api="blas"):
        model = LogisticRegression(C=C, max_iter=5000).fit(features.iloc[train].to_numpy(float), y[train])
        return model.predict_proba(features.to_numpy(float))[:, 1]


def bank() -> tuple[pd.DataFrame, np.ndarray, np.ndarray, list[str], list[str], np.ndarray, np.ndarray]:
    df = pd.read_csv(DATA / "bank_marketing" / "bank-full.csv.gz", sep=";").drop(columns="day")
    df["age"] = (df["age"] / 5).round() * 5
    y = (df.pop("y") == "yes").to_numpy(float)
    cats = ["job", "marital", "education", "default", "housing", "loan", "contact", "month", "poutcome"]
    nums = ["age", "balance", "duration", "campaign", "pdays", "previous"]
    features = pd.get_dummies(df, columns=cats, drop_first=True)
    train, test = _paper_splits(len(df))
    p = _logistic_base(features, y, train, C=2.0)
    return df[cats + nums], p, y, cats, nums, train, test


def credit() -> tuple[pd.DataFrame, np.ndarray, np.ndarray, list[str], list[str], np.ndarray, np.ndarray]:
    df = pd.read_csv(DATA / "credit_default" / "UCI_Credit_Card.csv.gz").drop(columns="ID")
    y = df.pop("default.payment.next.month").to_numpy(float)
    bucketed = ["LIMIT_BAL", "AGE"] + [f"BILL_AMT{i}" for i in range(1, 7)] + [f"PAY_AMT{i}" for i in range(1, 7)]
    for col in bucketed:
        df[col] = pd.qcut(df[col], 3, labels=False, duplicates="drop")
    cats = ["LIMIT_BAL", "AGE", "EDUCATION", "MARRIAGE", "PAY_0"] + [f"PAY_{i}" for i in range(2, 7)]
    cats += [f"BILL_AMT{i}" for i in range(1, 7)] + [f"PAY_AMT{i}" for i in range(1, 7)]
    features = pd.get_dummies(df, columns=cats, drop_first=False)
    train, test = _paper_splits(len(df))
    p = _logistic_base(features, y, train, C=4.0)
    return df[[*cats, "SEX"]], p, y, cats, ["SEX"], train, test


def prepare(name: str, size: int | None, folder: Path) -> dict | None:
    """Write train/test parquet files for one dataset; return its description or None if absent."""
    path = DATA / ("bank_marketing/bank-full.csv.gz" if name == "bank" else "credit_default/UCI_Credit_Card.csv.gz")
    return write_parts(name, size, folder, synthetic, path, bank if name == "bank" else credit)


def write_parts(name: str, size: int | None, folder: Path, make_synthetic, path: Path, load) -> dict | None:
    """The train and test parquet files of a data set, with the base score and label as columns ``__score__``
    and ``__label__``, and its description; None (said on stderr) where ``path`` is absent.

    ``make_synthetic(n, seed)`` gives ``(frame, p, y, cats, nums)`` (``size`` training rows, a quarter as many
    test rows) for the name "synthetic"; ``load()`` gives ``(frame, p, y, cats, nums, train, test)`` otherwise.
    """
    if name == "synthetic":
        frame_tr, p_tr, y_tr, cats, nums = make_synthetic(size, seed=0)
        frame_te, p_te, y_te, _, _ = make_synthetic(size // 4, seed=1)
    else:
        if not path.exists():
            print(f"skipping {name}: {path} is absent", file=sys.stderr)
            return None
        frame, p, y, cats, nums, train, test = load()
        frame_tr, p_tr, y_tr = frame.iloc[train].reset_index(drop=True), p[train], y[train]
        frame_te, p_te, y_te = frame.iloc[test].reset_index(drop=True), p[test], y[test]
    tag = f"{name}_{size}" if size else name
    for part, frame, p, y in (("train", frame_tr, p_tr, y_tr), ("test", frame_te, p_te, y_te)):
        frame.assign(__score__=p, __label__=y).to_parquet(folder / f"{tag}_{part}.parquet")
    return {"tag": tag, "name": name, "cats": cats, "nums": nums, "n_train": len(y_tr), "n_test": len(y_te)}


# -- one measured run (in a subprocess) ----------------------------------------------------------------------
def _status_mib(field: str) -> float:
    """A memory field of /proc/self/status in MiB: VmRSS now, or VmHWM, the peak of this process.

    (``ru_maxrss`` would not do: Linux carries the parent's peak over ``fork`` + ``exec``.)
    """
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _best_batch(predict, batch, n_runs: int = 3) -> tuple[float, Any]:
    """Seconds of the fastest of ``n_runs`` calls ``predict(batch)``, and its output."""
    times = []
    for _ in range(n_runs):
        start = time.perf_counter()
        pred = predict(batch)
        times.append(time.perf_counter() - start)
    return min(times), pred


def _block_median(predict, one, n_calls: int = 20) -> float:
    """Median seconds of ``n_calls`` calls ``predict(one)``, after one warm-up call."""
    predict(one)
    times = []
    for _ in range(n_calls):
        start = time.perf_counter()
        predict(one)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _one_row_ms(predict, one, n_blocks: int = 10) -> float:
    """One-row latency in ms: the best of ``n_blocks`` block medians (other tenants' load only adds time)."""
    return min(_block_median(predict, one) for _ in range(n_blocks)) * 1e3


def worker(args: argparse.Namespace) -> None:
    import lightgbm  # both implementations train with it (and it imports scikit-learn and scipy when installed)

    spec = json.loads(args.worker)
    if spec["impl"] == "reference":
        from mcgrad.methods import MCGrad as Reference
    else:
        from mcal import MCGrad
    import_mib = _status_mib("VmHWM")  # the process after its imports, before any data
    folder = Path(spec["folder"])
    train = pd.read_parquet(folder / f"{spec['tag']}_train.parquet")
    test = pd.read_parquet(folder / f"{spec['tag']}_test.parquet")
    cats, nums, threads = spec["cats"], spec["nums"], spec["threads"]
    inside = [0.0]
    real_train = lightgbm.train

    def timed_train(*a, **k):
        start = time.perf_counter()
        try:
            return real_train(*a, **k)
        finally:
            inside[0] += time.perf_counter() - start

    lightgbm.train = timed_train
    rss_before = _status_mib("VmRSS")
    if spec["impl"] == "reference":
        model = Reference(lightgbm_params={"num_threads": threads}, **spec.get("params", {}))
        fit = lambda: model.fit(
            train, "__score__", "__label__", categorical_feature_column_names=cats, numerical_feature_column_names=nums
        )
        prepare_input = lambda frame: frame
        predict = lambda frame: model.predict(frame, "__score__", cats, nums)
        rounds = lambda: len(model.mr)
    else:
        model = MCGrad(**{"n_jobs": threads, "random_state": 0, "categorical_features": cats, **spec.get("params", {})})
        fit = lambda: model.fit(train["__score__"].to_numpy(), train["__label__"].to_numpy(), X=train[cats + nums])
        prepare_input = lambda frame: (frame["__score__"].to_numpy(), frame[cats + nums])
        predict = lambda pair: model.predict(pair[0], X=pair[1])
        rounds = lambda: model.n_rounds_
    start = time.perf_counter()
    fit()
    fit_s = time.perf_counter() - start
    peak_fit = _status_mib("VmHWM")
    test_input = prepare_input(test)
    batch_s, pred = _best_batch(predict, test_input)
    one = prepare_input(test.iloc[:1])
    single_ms = _one_row_ms(predict, one)
    np.save(folder / f"{spec['tag']}_{spec['label']}_pred.npy", np.asarray(pred, dtype=np.float64))
    extra = {}
    if spec.get("compile"):  # the same fitted model compiled by lleaves, measured before the public path below
        extra["compiled"] = compiled_timings(model, predict, test_input, one)
        np.save(folder / f"{spec['tag']}_{spec['label']}_compiled_pred.npy", extra["compiled"].pop("pred"))
    if spec["impl"] == "mcal":  # the same one-row calls without the single-row C path
        import mcal.mcgrad._fast_predict

        mcal.mcgrad._fast_predict._FAST_PATH_LIGHTGBM, model._single_row, model._compiled = (), None, None
        extra["one_row_public_ms"] = _one_row_ms(predict, one)  # through Booster.predict
    print(
        json.dumps(
            {
                **extra,
                "fit_s": fit_s,
                "lgb_train_s": inside[0],
                "rounds": int(rounds()),
                "batch_us_per_row": batch_s / len(test) * 1e6,
                "one_row_ms": single_ms,
                "import_mib": import_mib,
                "peak_rss_mib": peak_fit,
                "fit_added_mib": peak_fit - rss_before,
            }
        )
    )


def compiled_timings(model, predict, test_input, one) -> dict:
    """``MCGrad.compile()`` wall time, then batch (best of 3) and one-row predict of the compiled model.

    One-row calls are timed in 10 alternating blocks of 20 through the single-row C path (``one_row_ms``, what
    ``predict`` does) and through the compiled rounds (``one_row_lleaves_ms``), so that the load of the shared
    machine weighs on both alike; each is its best block median, as :func:`_one_row_ms`.
    """
    import mcal.mcgrad._fast_predict as fast_predict

    start = time.perf_counter()
    model.compile()
    compile_s = time.perf_counter() - start
    batch_s, pred = _best_batch(predict, test_input)
    predict(one)
    paths = {"one_row_ms": (fast_predict._FAST_PATH_LIGHTGBM, model._single_row), "one_row_lleaves_ms": ((), None)}
    times: dict[str, list[float]] = {name: [] for name in paths}
    for _ in range(10):
        for name, (versions, single_row) in paths.items():
            fast_predict._FAST_PATH_LIGHTGBM, model._single_row = versions, single_row
            times[name].append(_block_median(predict, one))
    fast_predict._FAST_PATH_LIGHTGBM, model._single_row = paths["one_row_ms"]
    return {
        "compile_s": compile_s,
        "batch_us_per_row": batch_s / len(pred) * 1e6,
        **{name: min(t) * 1e3 for name, t in times.items()},
        "pred": np.asarray(pred, dtype=np.float64),
    }


def _compiled_available(python: str) -> bool:
    code = "import importlib.util, sys; sys.exit(importlib.util.find_spec('lleaves') is None)"
    return subprocess.run([python, "-c", code]).returncode == 0


# -- driver --------------------------------------------------------------------------------------------------
def run_one(python: str, spec: dict, script: str = __file__) -> dict:
    """Run ``script --worker SPEC`` (this benchmark's worker by default) with ``spec["threads"]`` threads; return
    the JSON line it prints last."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "OMP_NUM_THREADS": str(spec["threads"]),
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    out = subprocess.run([python, script, "--worker", json.dumps(spec)], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{spec['label']} on {spec['tag']} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def held_out_frame(folder: Path, tag: str, label: str, cats: list[str], nums: list[str]) -> tuple:
    """Labels, predictions (``label``'s saved ones, or the base score) and the test features with ``__label__`` and
    ``__pred__`` columns, categoricals as strings (the reference metric buckets them by frequency)."""
    test = pd.read_parquet(folder / f"{tag}_test.parquet")
    y = test["__label__"].to_numpy()
    p = test["__score__"].to_numpy() if label == "base" else np.load(folder / f"{tag}_{label}_pred.npy")
    frame = test[cats + nums].copy()
    for c in cats:
        frame[c] = frame[c].astype(str)
    frame["__label__"], frame["__pred__"] = y, p
    return y, p, frame


def quality(folder: Path, tag: str, label: str, cats: list[str], nums: list[str]) -> dict:
    from mcgrad.metrics import MulticalibrationError
    from sklearn.metrics import average_precision_score, log_loss

    y, p, frame = held_out_frame(folder, tag, label, cats, nums)
    mce = MulticalibrationError(
        frame,
        label_column="__label__",
        score_column="__pred__",
        categorical_segment_columns=cats,
        numerical_segment_columns=nums,
    )
    out = {
        "log_loss": log_loss(y, np.clip(p, 1e-15, 1 - 1e-15)),
        "pr_auc": average_precision_score(y, p),
        "mce_sigma": float(mce.mce_sigma),
    }
    try:  # mcal's own MCE (segments from mcal.segments; categoricals as strings, as above)
        from mcal.metrics import mce as mcal_mce
    except ImportError:  # an mcal without it
        return out
    return {**out, "mce_sigma_mcal": float(mcal_mce(y, p, X=frame[cats + nums]).mce_sigma)}


def make_venv(folder: str) -> str:
    subprocess.run([sys.executable, "-m", "venv", folder], check=True)
    python = str(Path(folder) / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", TORCH], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", REFERENCE, "pyarrow"], check=True)
    return python


VARIANTS = {  # extra mcal configurations measured on the smaller data sets, for the choice of defaults
    "mcal msh=20": {"min_sum_hessian_in_leaf": 20.0},
    "mcal kfold": {"early_stopping": "kfold"},
    "mcal patience=1": {"patience": 1},
    "mcal vf=0.3": {"validation_fraction": 0.3},
}
#: Impl names of the two implementations' seed-0 rows; their other seeds are "<name> seed=<s>".
REFERENCE_ROW, MCAL_ROW = "mcgrad 0.1.5", "mcal"


def seed_labels(n_seeds: int) -> dict[str, dict | None]:
    """Both implementations at ``n_seeds`` seeds: label -> mcal params, or None for the reference's seed 0."""
    labels: dict[str, dict | None] = {"reference": None, MCAL_ROW: {}}
    for s in range(1, n_seeds):
        labels[f"reference seed={s}"] = {"random_state": 42 + s}
        labels[f"{MCAL_ROW} seed={s}"] = {"random_state": s}
    return labels


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--datasets", nargs="+", default=["synthetic", "bank", "credit"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--reference-python",
        default=sys.executable,
        help="interpreter with mcgrad 0.1.5 importable (default: this one)",
    )
    parser.add_argument("--make-venv", metavar="DIR", help=f"create DIR as a venv with {TORCH} and {REFERENCE}")
    parser.add_argument(
        "--variants-max-rows",
        type=int,
        default=100_000,
        help="run the extra mcal variants and the extra seeds only on data sets with at most this many rows",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=5,
        help="seeds of both implementations on those data sets (the targets compare means)",
    )
    parser.add_argument(
        "--out", help="results path without extension (default: benchmarks/results/mcgrad_vs_reference)"
    )
    parser.add_argument("--quick", action="store_true", help="3,000 synthetic rows, one seed: a smoke test")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return
    if args.quick:
        args.sizes, args.datasets, args.seeds = [3000], ["synthetic"], 1
    if args.out is None:
        folder = (
            Path(tempfile.mkdtemp(prefix="mcal-bench-mcgrad_vs_reference-"))
            if args.quick
            else ROOT / "benchmarks" / "results"
        )
        args.out = str(folder / "mcgrad_vs_reference")
    print(f"results go to {args.out}.md and .csv", file=sys.stderr)
    ref_python = make_venv(args.make_venv) if args.make_venv else args.reference_python
    git = ["git", "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(git, capture_output=True, text=True, cwd=ROOT).stdout.strip()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_start = os.getloadavg()
    compile_rows = _compiled_available(sys.executable)
    if not compile_rows:
        print("lleaves is not installed (mcal[compiled]): no 'mcal compiled' rows", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        jobs = [("synthetic", s) for s in args.sizes if "synthetic" in args.datasets]
        jobs += [(d, None) for d in args.datasets if d != "synthetic"]
        for name, size in jobs:
            info = prepare(name, size, folder)
            if info is None:
                continue
            small = info["n_train"] <= args.variants_max_rows
            labels = seed_labels(args.seeds if small else 1)
            if small:
                labels.update(VARIANTS)
            base = {"dataset": info["tag"], "n_train": info["n_train"], "n_test": info["n_test"]}
            base_quality = quality(folder, info["tag"], "base", info["cats"], info["nums"])
            rows.append({**base, "impl": "base score", **base_quality})
            for label, params in labels.items():
                reference = label.startswith("reference")
                spec = {
                    **info,
                    "folder": str(folder),
                    "threads": args.threads,
                    "label": label.replace(" ", "_").replace("=", ""),
                    "impl": "reference" if reference else "mcal",
                    "params": params or {},
                    "compile": compile_rows and (label == MCAL_ROW or label.startswith(f"{MCAL_ROW} seed=")),
                }
                print(f"{info['tag']}: {label} ...", file=sys.stderr, flush=True)
                result = run_one(ref_python if reference else sys.executable, spec)
                compiled = result.pop("compiled", None)
                rows.append(
                    {
                        **base,
                        "impl": label.replace("reference", REFERENCE_ROW),
                        **result,
                        **quality(folder, info["tag"], spec["label"], info["cats"], info["nums"]),
                    }
                )
                if compiled is not None:
                    name = f"{spec['label']}_compiled"
                    gap = np.abs(
                        np.load(folder / f"{info['tag']}_{name}_pred.npy")
                        - np.load(folder / f"{info['tag']}_{spec['label']}_pred.npy")
                    ).max()
                    rows.append(
                        {
                            **base,
                            "impl": f"{label} compiled",
                            "rounds": result["rounds"],
                            **compiled,
                            "max_abs_diff": float(gap),
                            **quality(folder, info["tag"], name, info["cats"], info["nums"]),
                        }
                    )
            write(rows, args, commit, started, load_start)  # after each data set, so partial runs keep results


def _markdown(frame: pd.DataFrame) -> str:
    def cell(v: object) -> str:
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else f"{v:.4g}"
        return str(v)

    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * frame.shape[1]
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def _versions(dists: tuple[str, ...]) -> str:
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for dist in dists:
        try:
            found.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            found.append(f"{dist} not installed")
    return ", ".join(found)


def _seed_mean(group: pd.DataFrame, name: str, compiled: bool = False) -> pd.Series | None:
    """Mean of the numeric columns over the rows ``name`` and ``name seed=<s>`` (plus ``n_seeds``, ``mce_sd``)."""
    rows = group[group.impl.str.fullmatch(rf"{re.escape(name)}( seed=\d+)?{' compiled' if compiled else ''}")]
    if rows.empty:
        return None
    mean = rows.select_dtypes("number").mean()
    mean["n_seeds"], mean["mce_sd"] = len(rows), rows.mce_sigma.std(ddof=1) if len(rows) > 1 else 0.0
    return mean


def write(rows: list[dict], args: argparse.Namespace, commit: str, started: str, load_start: tuple) -> None:
    table = pd.DataFrame(rows)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out + ".csv", index=False)
    lines = [
        "# MCGrad: mcal against the reference package mcgrad 0.1.5",
        "",
        f"- date: {started}; mcal commit {commit}; {os.cpu_count()} cores "
        f"({platform.processor() or platform.machine()}), "
        f"Python {platform.python_version()}, {_versions(('lightgbm', 'lleaves', 'llvmlite'))}",
        f"- LightGBM threads: {args.threads} for both; load average at start {load_start[0]:.1f}, "
        f"at end {os.getloadavg()[0]:.1f} (the machine is shared: timings carry that noise); the real data sets' "
        f"base logistic regression with {BASE_BLAS_THREADS} BLAS threads (before f4db5cc it followed "
        "OMP_NUM_THREADS, and earlier results files used 1, which gives other base scores)",
        "- each fit in its own subprocess, which imports numpy, pandas (with pyarrow, to read the parquet data),",
        "  lightgbm (which itself imports scikit-learn and scipy) and its implementation only: `mcal.MCGrad` or",
        "  `mcgrad.methods.MCGrad`; `import_mib` = VmHWM after those imports, before any data;",
        "  `peak_rss_mib` = VmHWM of that process after fit (imports and data",
        "  included), `fit_added_mib` = that peak minus the resident memory just before fit;",
        "  one-row latency = 10 blocks of 20 `predict` calls on a one-row DataFrame, the best block's median",
        "  (other tenants' load only adds time, as for batch = best of 3 on the test set; the same for both",
        "  implementations); `one_row_public_ms`: the same with mcal's single-row C path switched off, through",
        "  `Booster.predict`",
        "- `mcal compiled` = the `mcal` row's fitted model, compiled in the same process after its LightGBM timings",
        "  with `MCGrad.compile()` (lleaves: each round's booster to native code); `compile_s` = wall time of that",
        "  call, reported apart and counted in neither `fit_s` nor the predict times; then batch = best of 3 and",
        "  one-row = 10 blocks of 20 calls alternating with as many through the compiled rounds",
        "  (`one_row_lleaves_ms`): one-row calls keep LightGBM's single-row C path after compile;",
        "  `max_abs_diff` = largest |compiled - LightGBM| predicted probability on the test set",
        "- MCE = `mcgrad.metrics.MulticalibrationError(...).mce_sigma` with the paper's settings (protocol section 3);",
        "  `mce_sigma_mcal` = `mcal.metrics.mce(...).mce_sigma` on the same columns, where this mcal has it",
        "",
    ]
    for dataset, group in table.groupby("dataset", sort=False):
        lines += [f"## {dataset} (train {int(group.n_train.iloc[0]):,} rows, test {int(group.n_test.iloc[0]):,})", ""]
        cols = [
            "impl",
            "rounds",
            "fit_s",
            "lgb_train_s",
            "compile_s",
            "batch_us_per_row",
            "one_row_ms",
            "one_row_public_ms",
            "one_row_lleaves_ms",
            "import_mib",
            "peak_rss_mib",
            "fit_added_mib",
            "log_loss",
            "pr_auc",
            "mce_sigma",
            "mce_sigma_mcal",
            "max_abs_diff",
        ]
        shown = group[[c for c in cols if c in group]].copy()
        if "lgb_train_s" in shown:
            shown.insert(4, "in_lgb_train", shown["lgb_train_s"] / shown["fit_s"])
        lines.append(_markdown(shown))
        r, o, fast = _seed_mean(group, REFERENCE_ROW), _seed_mean(group, MCAL_ROW), _seed_mean(group, MCAL_ROW, True)
        if r is not None and o is not None:
            b, b_name = (fast, "mcal compiled") if fast is not None else (o, "mcal (not compiled: no lleaves)")
            checks = [
                ("fit time, reference / mcal (target >= 5)", r.fit_s / o.fit_s, r.fit_s / o.fit_s >= 5),
                (
                    "log loss, mcal - reference (target <= 0.001)",
                    o.log_loss - r.log_loss,
                    o.log_loss - r.log_loss <= 0.001,
                ),
                (
                    "MCE, mcal - reference (target <= 0; below 0.001, the shown precision, counts as equal)",
                    o.mce_sigma - r.mce_sigma,
                    o.mce_sigma - r.mce_sigma < 0.001,
                ),
                (
                    f"batch predict per row, {b_name} / reference (target <= 0.5)",
                    b.batch_us_per_row / r.batch_us_per_row,
                    b.batch_us_per_row <= 0.5 * r.batch_us_per_row,
                ),
                (
                    "batch predict per row, mcal through LightGBM / reference (same target)",
                    o.batch_us_per_row / r.batch_us_per_row,
                    o.batch_us_per_row <= 0.5 * r.batch_us_per_row,
                ),
                ("one-row predict, mcal ms (target < 0.2)", o.one_row_ms, o.one_row_ms < 0.2),
                (
                    "peak memory of the process, mcal / reference (target <= 0.5)",
                    o.peak_rss_mib / r.peak_rss_mib,
                    o.peak_rss_mib <= 0.5 * r.peak_rss_mib,
                ),
                (
                    "memory added by fit, mcal / reference (same target)",
                    o.fit_added_mib / r.fit_added_mib,
                    o.fit_added_mib <= 0.5 * r.fit_added_mib,
                ),
            ]
            se = np.sqrt(r.mce_sd**2 / r.n_seeds + o.mce_sd**2 / o.n_seeds)
            lines += [
                "",
                f"Targets on the means over {int(r.n_seeds)} seed(s) of each implementation "
                f"(MCE sd over seeds: reference {r.mce_sd:.3g}, mcal {o.mce_sd:.3g}; standard error "
                f"of the difference of the means {se:.3g}):",
                "",
                "| target | value | met |",
                "|---|---|---|",
            ]
            lines += [f"| {name} | {value:.4g} | {'yes' if ok else 'no'} |" for name, value, ok in checks]
        lines.append("")
    Path(args.out + ".md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()

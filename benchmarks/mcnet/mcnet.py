"""MCNet-None and MCNet-Field against the classic calibrators, on a synthetic click log and on real data with a field.

    PYTHONPATH=src python benchmarks/mcnet/mcnet.py [--quick] [--data DIR]   # DIR: $MCAL_DATA_DIR or ../shared/data

(a) A synthetic click log (seeded) with a known, non-linear, field-dependent and monotone calibration function,
    in the spirit of the MCNet paper's Figure 1: 5 fields with shares 40/25/15/12/8 %, base logit
    s ~ N(-2.5 + 0.25 c, 1.1) and true logit a_c s + b_c + 0.4 sin(1.2 s + c) with slopes a_c in 0.6..1.3.
    Metrics on a separate test log: L2 (root mean square) distance to the true probability, PCOC, F-RCE
    (eq. 4, epsilon 0.01), the standard deviation of the per-field PCOC, log loss and ROC-AUC.
(b) Real data with a field, each split 40/30/30 (seeded, stratified) into base-model training, calibration and
    test rows; the base model is scikit-learn's HistGradientBoostingClassifier on all features (categoricals
    from dtype): Online Shoppers (field TrafficType), Bank Marketing bank-full without ``duration`` (field job),
    Open Bandit small sample, both policies (field campaign). A missing data set is skipped with a message.
(c) Cost: training seconds per epoch, inference microseconds per row in the exact and compiled modes (and their
    largest absolute difference), and the peak resident memory of one training step (2,048 rows, 20 bins,
    5 fields) with autograd's backward and with the memory-efficient one (Algorithm 2), each in a fresh process.

MCNet runs with its defaults and, as "(tuned)", with bins joined as "raised" (each bin keeps its own bias term,
raised where needed), a weak order hinge (beta=0.1) and early stopping that waits 1,500 optimizer steps (patience
and min_steps count steps: three times the defaults) out of the noisy held-out loss. For MCNet rows the cost table
also gives the worst drop of the calibrated probability on a 20,001-point score grid over every field (0 means
monotone across bin boundaries too; within a bin the map is increasing by construction). Everything runs
single-threaded (torch.set_num_threads(1)). Writes benchmarks/results/mcnet.{md,csv}.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

from mcal import MCNet
from mcal._registry import get_method
from mcal.metrics import f_rce, log_loss, pcoc, roc_auc

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "papers"))
from _common import out_dir_of
from _datasets import data_dir
from _report_mcnet_ctr import mcnet_defaults

SEED = 5
CLASSIC = ["platt", "temperature", "beta", "isotonic", "histogram"]


# -- data -----------------------------------------------------------------------------------------------------
def synthetic_log(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """The synthetic click log: score, label, field and the true probability of each row."""
    share = np.array([0.40, 0.25, 0.15, 0.12, 0.08])
    slope = np.array([0.6, 1.0, 1.3, 0.8, 1.1])
    shift = np.array([-0.4, 0.3, -0.8, 0.6, 0.0])
    field = rng.choice(share.size, n, p=share)
    s = rng.normal(-2.5 + 0.25 * field, 1.1)
    truth = expit(slope[field] * s + shift[field] + 0.4 * np.sin(1.2 * s + field))
    return pd.DataFrame({"score": expit(s), "y": rng.binomial(1, truth), "field": field, "truth": truth})


def real_datasets(root: Path) -> dict[str, tuple[pd.DataFrame, str, str] | str]:
    """name -> (features + label frame, label column, field column), or the reason it is skipped."""
    out: dict[str, tuple[pd.DataFrame, str, str] | str] = {}
    path = root / "online_shoppers" / "online_shoppers_intention.csv.gz"
    if path.exists():
        df = pd.read_csv(path)
        for col in ("Month", "VisitorType", "OperatingSystems", "Browser", "Region", "TrafficType"):
            df[col] = df[col].astype(str).astype("category")
        out["online_shoppers"] = (df.astype({"Weekend": int, "Revenue": int}), "Revenue", "TrafficType")
    else:
        out["online_shoppers"] = f"skipped: {path} not found"
    path = root / "bank_marketing" / "bank-full.csv.gz"
    if path.exists():
        df = pd.read_csv(path, sep=";").drop(columns=["duration"])  # duration is known only after the call
        df["y"] = (df["y"] == "yes").astype(int)
        for col in df.select_dtypes(exclude="number").columns:
            df[col] = df[col].astype("category")
        out["bank_marketing"] = (df, "y", "job")
    else:
        out["bank_marketing"] = f"skipped: {path} not found"
    frames = []
    for policy in ("random", "bts"):
        for campaign in ("all", "men", "women"):
            path = root / "open_bandit" / policy / campaign / f"{campaign}.csv.gz"
            if not path.exists():
                out["open_bandit"] = f"skipped: {path} not found"
                break
            cols = ["item_id", "position", "click", *[f"user_feature_{j}" for j in range(4)]]
            frames.append(pd.read_csv(path, index_col=0)[cols].assign(policy=policy, campaign=campaign))
    if "open_bandit" not in out:
        df = pd.concat(frames, ignore_index=True)
        for col in df.columns.drop("click"):
            df[col] = df[col].astype(str).astype("category")
        out["open_bandit"] = (df, "click", "campaign")
    return out


def base_model_split(df: pd.DataFrame, label: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Calibration and test rows with the score of a base model trained on a separate 40 %."""
    train, rest = train_test_split(df, train_size=0.4, stratify=df[label], random_state=SEED)
    cal, test = train_test_split(rest, train_size=0.5, stratify=rest[label], random_state=SEED)
    features = df.columns.drop(label)
    model = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=SEED)
    model.fit(train[features], train[label])
    cal, test = cal.reset_index(drop=True), test.reset_index(drop=True)
    return cal.assign(score=model.predict_proba(cal[features])[:, 1]), test.assign(
        score=model.predict_proba(test[features])[:, 1]
    )


# -- methods and metrics --------------------------------------------------------------------------------------
#: The "(tuned)" variant: bins "raised" with a weak eq. 10 hinge, and early stopping that waits 1,500 steps.
TUNED = {"bin_joins": "raised", "beta": 0.1, "patience": 1500, "min_steps": 1500}


def methods(field: str) -> dict[str, object]:
    out: dict[str, object] = {name: get_method(name)() for name in CLASSIC}
    out["MCNet-None"] = MCNet(random_state=SEED)
    out["MCNet-Field"] = MCNet(field=field, random_state=SEED)
    tuned = dict(TUNED, random_state=SEED)
    out["MCNet-None (tuned)"] = MCNet(**tuned)
    out["MCNet-Field (tuned)"] = MCNet(field=field, **tuned)
    return out


def worst_boundary_drop(model: MCNet, field: str, values: np.ndarray) -> float:
    """The largest decrease of the calibrated probability on a fine score grid, over every field (0 = monotone)."""
    grid = np.linspace(0.0, 1.0, 20001)
    drops = [np.diff(model.predict(grid, X=pd.DataFrame({field: np.full(grid.size, v)}))).min() for v in values]
    return float(max(0.0, -min(drops)))


def scores(y: np.ndarray, p: np.ndarray, field: np.ndarray, truth: np.ndarray | None) -> dict[str, float]:
    per_field = [pcoc(y[field == c], p[field == c]) for c in np.unique(field) if y[field == c].sum() > 0]
    return {
        "l2_truth": float(np.sqrt(np.mean((p - truth) ** 2))) if truth is not None else np.nan,
        "pcoc": pcoc(y, p),
        "f_rce": f_rce(y, p, field=field),
        "field_pcoc_std": float(np.std(per_field)),
        "log_loss": log_loss(y, p),
        "roc_auc": roc_auc(y, p),
    }


def timed_predict(model, p: np.ndarray, X) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    out = model.predict(p, X=X) if model.uses_features else model.predict(p)
    return out, (time.perf_counter() - start) / p.size * 1e6


def run_dataset(name: str, cal: pd.DataFrame, test: pd.DataFrame, field: str, truth: np.ndarray | None) -> list[dict]:
    rows = []
    y_test = test["y"].to_numpy() if "y" in test else None
    for method, model in methods(field).items():
        X_cal = cal[[field]] if model.uses_features else None
        start = time.perf_counter()
        if model.uses_features:
            model.fit(cal["score"].to_numpy(), cal["y"].to_numpy(), X=X_cal)
        else:
            model.fit(cal["score"].to_numpy(), cal["y"].to_numpy())
        fit_s = time.perf_counter() - start
        X_test = test[[field]] if model.uses_features else None
        p, us = timed_predict(model, test["score"].to_numpy(), X_test)
        row = {
            "dataset": name,
            "method": method,
            "n_cal": len(cal),
            "n_test": len(test),
            "fit_s": fit_s,
            **scores(y_test, p, test[field].to_numpy(), truth),
            "infer_us_per_row": us,
        }
        if isinstance(model, MCNet):
            model.set_params(inference="compiled")
            p_compiled, us_compiled = timed_predict(model, test["score"].to_numpy(), X_test)
            row |= {
                "epochs": model.n_epochs_,
                "best_epoch": model.best_epoch_,
                "fit_s_per_epoch": fit_s / model.n_epochs_,
                "infer_us_per_row_compiled": us_compiled,
                "compiled_speedup": us / us_compiled,
                "max_abs_diff_exact_compiled": float(np.abs(p - p_compiled).max()),
                "worst_boundary_drop": worst_boundary_drop(model, field, np.unique(test[field])),
            }
        rows.append(row)
        print(f"  {name:<16s} {method:<20s} fit {fit_s:7.2f} s  log loss {row['log_loss']:.4f}", flush=True)
    rows.insert(
        0,
        {
            "dataset": name,
            "method": "uncalibrated",
            "n_cal": len(cal),
            "n_test": len(test),
            **scores(y_test, test["score"].to_numpy(), test[field].to_numpy(), truth),
        },
    )
    return rows


# -- memory of one training step ------------------------------------------------------------------------------
def memory_probe(memory_efficient: bool, width: int) -> dict[str, float]:
    """Run in a fresh process: peak RSS growth (MiB) and seconds of one forward + backward on 2,048 rows."""
    import torch

    from mcal.mcnet._network import Architecture, context_tables, initial_weights, integrate_rows, to_parameters

    torch.set_num_threads(1)
    rng = np.random.default_rng(SEED)
    arch = Architecture(
        n_bins=20, n_fields=5, hidden_sizes=(width, width), embedding_dim=width, n_auxiliary=0, auxiliary_hidden_size=1
    )
    P = to_parameters(torch, initial_weights(arch, rng, slope=1.0), device="cpu", dtype=torch.float32)
    geometry = {"anchor": torch.arange(20.0), "center": torch.arange(20.0) + 0.5, "half_width": torch.full((20,), 0.5)}
    bins, codes = rng.integers(0, 20, 2048), rng.integers(0, 6, 2048)
    x = torch.as_tensor(bins + rng.random(2048), dtype=torch.float32)
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM, the peak resident set size
    before = _status_kib("VmRSS")
    start = time.perf_counter()
    offset, bias = context_tables(torch, P, 2)
    out = integrate_rows(
        torch, P, geometry, x, bins, offset[bins, codes], n_hidden=2, n_nodes=50, memory_efficient=memory_efficient
    )
    (bias[bins, codes] + out).sum().backward()
    seconds = time.perf_counter() - start
    return {
        "rss_before_mib": before / 1024,
        "peak_growth_mib": (_status_kib("VmHWM") - before) / 1024,
        "step_s": seconds,
    }


def _status_kib(key: str) -> int:
    line = next(v for v in Path("/proc/self/status").read_text().splitlines() if v.startswith(key + ":"))
    return int(line.split()[1])


def memory_rows() -> list[dict]:
    rows = []
    for width in (64, 128):
        for efficient in (False, True):
            code = (
                f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import mcnet; "
                f"print(json.dumps(mcnet.memory_probe({efficient}, {width})))"
            )
            res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            rows.append(
                {
                    "hidden": f"({width}, {width})",
                    "backward": "memory-efficient" if efficient else "autograd",
                    **json.loads(res.stdout.strip().splitlines()[-1]),
                }
            )
    return rows


# -- report ---------------------------------------------------------------------------------------------------
def header(args) -> list[str]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return [
        f"- date: {datetime.date.today()}; mcal commit {commit}; {os.cpu_count()} cores (shared; load average "
        f"{os.getloadavg()[0]:.1f} at the end); torch.set_num_threads(1); Python {platform.python_version()}, "
        f"torch {version('torch')}, numpy {np.__version__}, scikit-learn {version('scikit-learn')}",
        f"- seed {SEED}; synthetic log: {args.n_cal} calibration and {args.n_test} test rows; real data split "
        "40/30/30 (base HistGradientBoosting / calibration / test)",
        f"- MCNet defaults: {mcnet_defaults()}; (tuned) = {TUNED} (patience and min_steps in optimizer steps)",
        "- fit_s includes the warm start and the compiled tables; fit_s_per_epoch = fit_s / epochs",
    ]


def to_markdown(frame: pd.DataFrame) -> str:
    def cell(v) -> str:
        return "" if pd.isna(v) else f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = [" | ".join(map(str, frame.columns)), " | ".join("---" for _ in frame.columns)]
    lines += [" | ".join(cell(v) for v in row) for row in frame.itertuples(index=False)]
    return "\n".join(f"| {line} |" for line in lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=data_dir(), help="the shared data (default: %(default)s)")
    parser.add_argument("--n-cal", type=int, default=20000)
    parser.add_argument("--n-test", type=int, default=20000)
    parser.add_argument("--quick", action="store_true", help="small synthetic log only, no real data, no memory probe")
    parser.add_argument("--out-dir", type=Path, help="where mcnet.md and mcnet.csv go (default: benchmarks/results/, "
                        "a new temporary folder with --quick)")  # fmt: skip
    args = parser.parse_args(argv)
    args.out_dir = out_dir_of(args, "mcnet")
    import torch

    torch.set_num_threads(1)
    rng = np.random.default_rng(SEED)
    rows, notes = [], []
    if args.quick:
        args.n_cal, args.n_test = 3000, 3000
    cal, test = synthetic_log(args.n_cal, rng), synthetic_log(args.n_test, rng)
    rows += run_dataset("synthetic", cal, test, "field", test["truth"].to_numpy())
    if not args.quick and not args.data.is_dir():
        notes.append(f"- real data skipped: {args.data} is not a folder (set --data or $MCAL_DATA_DIR)")
        print(notes[-1][2:], flush=True)
    elif not args.quick:
        for name, entry in real_datasets(args.data).items():
            if isinstance(entry, str):
                notes.append(f"- {name}: {entry}")
                print(f"  {name}: {entry}", flush=True)
                continue
            df, label, field = entry
            cal, test = base_model_split(df.rename(columns={label: "y"}), "y")
            rows += run_dataset(name, cal, test, field, None)
    table = pd.DataFrame(rows)
    memory = pd.DataFrame(memory_rows() if not args.quick else [])
    args.out_dir.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out_dir / "mcnet.csv", index=False)
    quality = ["dataset", "method", "l2_truth", "pcoc", "f_rce", "field_pcoc_std", "log_loss", "roc_auc"]
    cost = [
        "dataset",
        "method",
        "n_cal",
        "fit_s",
        "epochs",
        "best_epoch",
        "fit_s_per_epoch",
        "infer_us_per_row",
        "infer_us_per_row_compiled",
        "compiled_speedup",
        "max_abs_diff_exact_compiled",
        "worst_boundary_drop",
    ]
    lines = [
        "# MCNet vs the classic calibrators",
        "",
        *header(args),
        *notes,
        "",
        "## Calibration quality (test rows)",
        "",
        to_markdown(table[quality]),
        "",
        "## Cost (MCNet rows: exact and compiled inference)",
        "",
        to_markdown(table.loc[table["method"].str.startswith("MCNet"), cost]),
    ]
    if not memory.empty:
        lines += [
            "",
            "## One training step (2,048 rows, 20 bins, 5 fields, T = 50): peak resident memory growth (VmHWM "
            "reset before the step, fresh process each)",
            "",
            to_markdown(memory),
        ]
    (args.out_dir / "mcnet.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out_dir / 'mcnet.md'} and {args.out_dir / 'mcnet.csv'}")


if __name__ == "__main__":
    main()

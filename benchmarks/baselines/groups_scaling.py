"""Fit and predict time per row of MCGrad, HKRR and DFMC as the number of prespecified groups grows.

    PYTHONPATH=src python benchmarks/baselines/groups_scaling.py [--n-rows 200000] [--n-test 50000]
        [--groups 10,30,100,300,1000] [--repeats 3] [--quick]

The MCGrad paper's Figure 3 (Tax et al., arXiv:2509.19884, section 4.2, Q5): HKRR and DFMC are given the
groups as indicator columns, so their cost grows with the number of groups; MCGrad is given the features the
groups are defined on, so its cost does not depend on how many groups anyone specifies.

Data (seeded): ``--n-rows`` training and ``--n-test`` test rows; 5 categorical features (8 values, skewed
frequencies) and 5 numerical features; base scores from a logit that ignores part of the signal, so the
scores are miscalibrated in feature-defined regions. Groups: a fixed seeded list of conjunctions of one or two
feature conditions (``cat == value`` or ``num > quantile``) holding 2-60 % of the rows; the first G are used,
so the group sets are nested. Every method runs single-threaded (``n_jobs=1``) with its library defaults
(HKRR: lambda 0.1, alpha 0.05, guess-and-check oracle; DFMC: LightGBM defaults with depth 2; MCGrad: mcal's
defaults). Each (method, G) is fitted and predicted ``--repeats`` times in this process (same seed, so the same
work); the best fit and predict times are reported.
Writes benchmarks/results/groups_scaling.{md,csv}.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

import mcal
from mcal.groups import DFMC, HKRR

SEED = 11
N_CATEGORICAL = N_NUMERICAL = 5
RESULTS = Path(__file__).resolve().parents[1] / "results"


def make_data(n_rows: int, rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Features, base scores and labels; the base logit misses the cat0/num0 effects."""
    values = np.array(list("abcdefgh"), dtype=object)
    freq = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.07, 0.05, 0.03])
    frame = {f"cat{j}": rng.choice(values, n_rows, p=freq) for j in range(N_CATEGORICAL)}
    frame |= {f"num{j}": rng.normal(size=n_rows) for j in range(N_NUMERICAL)}
    X = pd.DataFrame(frame)
    base = -1.5 + 0.8 * X["num1"].to_numpy() - 0.5 * X["num2"].to_numpy()
    truth = base + 0.7 * (X["cat0"].to_numpy() == "b") - 0.6 * (X["num0"].to_numpy() > 0.5)
    y = (rng.random(n_rows) < expit(truth)).astype(np.float64)
    return X, expit(base), y


def group_definitions(X: pd.DataFrame, n_groups: int, rng: np.random.Generator) -> list[list[tuple[str, str, object]]]:
    """A seeded list of distinct conjunctions of one or two conditions, each holding 2-60 % of the rows."""
    conditions = [(f"cat{j}", "==", v) for j in range(N_CATEGORICAL) for v in "abcdefgh"]
    conditions += [(f"num{j}", ">", q) for j in range(N_NUMERICAL) for q in (-1.0, -0.5, 0.0, 0.5, 1.0)]
    seen, groups = set(), []
    while len(groups) < n_groups:
        k = int(rng.integers(1, 3))
        picked = tuple(sorted(int(i) for i in rng.choice(len(conditions), k, replace=False)))
        if picked in seen or (k == 2 and conditions[picked[0]][0] == conditions[picked[1]][0]):
            continue
        group = [conditions[i] for i in picked]
        share = membership(X, [group]).mean()
        if 0.02 <= share <= 0.6:
            seen.add(picked)
            groups.append(group)
    return groups


def membership(X: pd.DataFrame, groups: list[list[tuple[str, str, object]]]) -> np.ndarray:
    """Boolean matrix (n_rows, n_groups) of the groups' conditions evaluated on X."""
    out = np.ones((len(X), len(groups)), dtype=bool)
    for g, group in enumerate(groups):
        for column, op, value in group:
            col = X[column].to_numpy()
            out[:, g] &= (col == value) if op == "==" else (col > value)
    return out


def methods() -> dict[str, tuple[object, str]]:
    """name -> (factory, what X holds); MCGrad only when this mcal has it."""
    out: dict[str, tuple[object, str]] = {
        "HKRR": (lambda: HKRR(random_state=0), "groups"),
        "DFMC": (lambda: DFMC(n_jobs=1, random_state=0), "groups"),
    }
    if hasattr(mcal, "MCGrad"):
        out["MCGrad"] = (lambda: mcal.MCGrad(n_jobs=1, random_state=0), "features")
    return out


def timed(factory, p, y, fit_X, pt, test_X, repeats: int) -> tuple[float, float, np.ndarray]:
    """Best fit and predict seconds over ``repeats`` runs, and the predictions."""
    fits, predicts = [], []
    for _ in range(repeats):
        model = factory()
        start = time.perf_counter()
        model.fit(p, y, X=fit_X)
        fits.append(time.perf_counter() - start)
        start = time.perf_counter()
        q = model.predict(pt, X=test_X)
        predicts.append(time.perf_counter() - start)
    return min(fits), min(predicts), q


def run(n_rows: int, n_test: int, group_counts: list[int], repeats: int) -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    X, p, y = make_data(n_rows, rng)
    Xt, pt, yt = make_data(n_test, rng)
    definitions = group_definitions(X, max(group_counts), rng)
    masks, masks_t = membership(X, definitions), membership(Xt, definitions)
    rows = []
    for name, (factory, kind) in methods().items():
        for g in group_counts:  # MCGrad sees the features whatever G is; it is timed at every G all the same
            fit_X, test_X = (masks[:, :g], masks_t[:, :g]) if kind == "groups" else (X, Xt)
            fit_s, predict_s, q = timed(factory, p, y, fit_X, pt, test_X, repeats)
            mce = group_mce(yt, q, masks_t[:, :g])
            rows.append(
                {
                    "method": name,
                    "n_groups": g,
                    "fit_s": fit_s,
                    "predict_s": predict_s,
                    "fit_us_per_row": 1e6 * fit_s / n_rows,
                    "predict_us_per_row": 1e6 * predict_s / n_test,
                    "test_group_mce": mce,
                    "base_group_mce": group_mce(yt, pt, masks_t[:, :g]),
                }
            )
            print(
                f"{name:7s} G={g:5d}  fit {fit_s:8.2f} s  predict {predict_s:7.2f} s  group MCE {mce:6.2f}", flush=True
            )
    return pd.DataFrame(rows)


def group_mce(y: np.ndarray, p: np.ndarray, masks: np.ndarray) -> float:
    """Max over groups of ECCE / sigma (the MCGrad paper's MCE on prespecified groups)."""
    return mcal.metrics.mce(y, p, segments=masks).mce_sigma


def header(args: argparse.Namespace) -> list[str]:
    root = Path(__file__).resolve().parents[2]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "src"], cwd=root, capture_output=True, text=True
    ).stdout
    return [
        f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- mcal commit: {commit}{' (with uncommitted changes in src)' if dirty.strip() else ''}",
        f"- machine: {os.cpu_count()} cores visible, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}; every method single-threaded",
        f"- versions: numpy {np.__version__}, lightgbm {version('lightgbm')}",
        f"- data: {args.n_rows:,} training rows, {args.n_test:,} test rows, seed {SEED}; best of {args.repeats} runs",
        f"- command: `python benchmarks/baselines/groups_scaling.py {' '.join(sys.argv[1:])}`".rstrip(),
    ]


def markdown(frame: pd.DataFrame, digits: int = 2) -> str:
    """A pipe table of ``frame`` with its index as the first column."""
    cols = [str(frame.index.name or "")] + [str(c) for c in frame.columns]
    body = [
        [str(i)] + [f"{v:.{digits}f}" if isinstance(v, float) else str(v) for v in row]
        for i, row in zip(frame.index, frame.itertuples(index=False), strict=False)
    ]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---:" for _ in cols) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])


def write(table: pd.DataFrame, args: argparse.Namespace, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "groups_scaling.csv", index=False, float_format="%.6g")
    lines = ["# Fit and predict time per row as the number of prespecified groups grows", "", *header(args), ""]
    lines += ["Times in microseconds per row (fit: per training row; predict: per test row).", ""]
    for what in ("fit_us_per_row", "predict_us_per_row"):
        wide = table.pivot(index="n_groups", columns="method", values=what)
        lines += [f"## {what.replace('_', ' ')}", "", markdown(wide), ""]
        if "MCGrad" in wide:
            ratio = wide.drop(columns="MCGrad").div(wide["MCGrad"], axis=0)
            lines += [f"Ratio to MCGrad at the same number of groups ({what.split('_')[0]}):", "", markdown(ratio), ""]
        growth = wide.iloc[-1] / wide.iloc[0]
        lines += [
            f"Growth from {wide.index[0]} to {wide.index[-1]} groups: "
            + ", ".join(f"{m} x{v:.1f}" for m, v in growth.items()),
            "",
        ]
    mce = table.pivot(index="n_groups", columns="method", values="test_group_mce")
    mce["base scores"] = table.groupby("n_groups")["base_group_mce"].first()
    lines += ["## test MCE over the prespecified groups (max ECCE/sigma; lower is better)", "", markdown(mce), ""]
    if "MCGrad" not in table["method"].unique():
        lines += ["MCGrad is not in this mcal build (it lands from the `mcgrad` branch); rerun when it does.", ""]
    (out / "groups_scaling.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-rows", type=int, default=200_000)
    parser.add_argument("--n-test", type=int, default=50_000)
    parser.add_argument("--groups", default="10,30,100,300,1000", help="comma-separated numbers of groups")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement; the best time is kept")
    parser.add_argument("--quick", action="store_true", help="2,000 rows, 10 and 30 groups, one run: a smoke test")
    parser.add_argument(
        "--out-dir", type=Path, help="default: benchmarks/results/, a new temporary folder with --quick"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.n_rows, args.n_test, args.groups, args.repeats = 2_000, 1_000, "10,30", 1
    out = args.out_dir or (Path(tempfile.mkdtemp(prefix="mcal-bench-groups_scaling-")) if args.quick else RESULTS)
    counts = sorted(int(g) for g in args.groups.split(","))
    write(run(args.n_rows, args.n_test, counts, args.repeats), args, out)


if __name__ == "__main__":
    main()

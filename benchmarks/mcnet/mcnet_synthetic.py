"""MCNet against the field-aware and classic calibrators on synthetic click logs whose calibration map is known.

    PYTHONPATH=src python benchmarks/mcnet/mcnet_synthetic.py [--quick] [--cases NAME@ROWS,...] [--seeds 3]
        [--methods NAME,...] [--speed-rows N]

Generators (seeded; base score logit s drawn per field, the label drawn from the true probability):

- ``power``, 3 fields: true P = sigmoid(s) ** gamma_c, gamma = 0.6 / 1.0 / 1.8 (a power map, concave or convex);
- ``kinked``, 10 fields: a logistic map whose logit has a kink: a_c s + b_c + (a2_c - a_c) max(s - k_c, 0);
- ``ripple``, 50 fields with Zipf-like shares: a_c s + b_c + 0.35 a_c sin(2 s + phi_c) (monotone: slope >= 0.3 a_c);
- ``global``, no field: 0.8 s + 0.5 sin(1.5 s) + 0.3 for every row.

For each case (generator and calibration rows; the test log has min(rows, 200k) rows of the same generator):

- ``msd_truth``: the mean squared distance between the calibrated and the true probability on a grid of 101 score
  logits between each field's 1st and 99th score percentile, averaged over the fields (``msd_truth_worst``: the
  largest field's);
- test log loss and ROC-AUC; ``field_auc_drop``: the largest fall, over the fields, of the ROC-AUC within a field
  against the base score's (a map that keeps the order within every field has 0; ties cost some);
- MCNet rows: the bin count fitted (``n_bins="auto"`` chooses it), optimizer steps run, the best step and its epoch
  (0 = the Platt warm start), fit seconds;
- against AdaCalib, per case and data seed: the ratio of the distances, and the test log loss difference with its
  paired standard error (over the test rows); the Targets section pools the seeds (SE: root sum of squares / n).

The global case has no field, so the field-aware methods do not run on it. Everything runs with one torch and
one LightGBM thread (``torch.set_num_threads(1)``, ``OMP_NUM_THREADS=1``) except the speed section, which
measures MCNet-Field's training throughput (rows x epochs per second; full batch, a step is an epoch; 2 bins) at
``--speed-rows`` rows of the kinked log with its fields folded to 4, with 1 and 2 torch threads (the difference
of two fits of ``--speed-steps`` and twice as many steps: the warm start, the bins and the tables cancel).
Writes ``benchmarks/results/mcnet_synthetic.{md,csv}``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd
from scipy.special import expit, logit
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from _common import add_out_dir_option, md_table, out_dir_of, results_frame, run_header, write_results

import mcal
from mcal.metrics import log_loss

SEED = 3
N_GRID = 101
MAX_TEST_ROWS = 200_000
FIELD = "field"


@dataclass(frozen=True)
class Generator:
    """A synthetic click log: field shares, the score logit's mean per field, and the true logit map."""

    n_fields: int
    true_logit: Callable[[np.ndarray, np.ndarray], np.ndarray]
    shares: np.ndarray
    score_mean: np.ndarray
    score_sd: float = 1.2

    def draw(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        f = rng.choice(self.n_fields, n, p=self.shares)
        s = rng.normal(self.score_mean[f], self.score_sd)
        truth = expit(self.true_logit(s, f))
        return pd.DataFrame({"score": expit(s), "y": rng.binomial(1, truth), FIELD: f, "truth": truth})


def _generators() -> dict[str, Generator]:
    r = np.random.default_rng(2026)  # the maps' constants, fixed
    gamma = np.array([0.6, 1.0, 1.8])
    a, a2 = r.uniform(0.5, 1.3, 10), r.uniform(0.3, 2.0, 10)
    b, kink = r.uniform(-0.8, 0.8, 10), r.uniform(-2.5, 0.0, 10)
    ra, rb, phase = r.uniform(0.6, 1.4, 50), r.uniform(-1.0, 1.0, 50), r.uniform(0, 2 * np.pi, 50)
    zipf = 1.0 / np.arange(1, 51) ** 0.8
    return {
        "power": Generator(
            3,
            lambda s, f: logit(np.clip(expit(s) ** gamma[f], 1e-12, 1 - 1e-12)),
            np.array([0.5, 0.3, 0.2]),
            np.array([-0.5, -1.0, 0.0]),
        ),
        "kinked": Generator(
            10,
            lambda s, f: a[f] * s + b[f] + (a2[f] - a[f]) * np.maximum(s - kink[f], 0.0),
            np.full(10, 0.1),
            np.linspace(-2.0, -0.5, 10),
        ),
        "ripple": Generator(
            50,
            lambda s, f: ra[f] * s + rb[f] + 0.35 * ra[f] * np.sin(2.0 * s + phase[f]),
            zipf / zipf.sum(),
            r.uniform(-2.0, 0.0, 50),
        ),
        "global": Generator(1, lambda s, f: 0.8 * s + 0.5 * np.sin(1.5 * s) + 0.3, np.ones(1), np.array([-1.0])),
    }


GENERATORS = _generators()
CASES = ("power@20000", "power@200000", "kinked@50000", "kinked@1000000", "ripple@50000", "global@50000")
QUICK_CASES = ("power@4000", "global@4000")
#: MCNet's parameters beyond its defaults: none in full runs; a short budget in quick mode (``--quick``).
MCNET_EXTRA: dict[str, object] = {}
#: The speed section's bin count: fixed, so that the two fits differ by training epochs alone (``n_bins="auto"``
#: adds its choice fits, which grow with the budget too).
SPEED_BINS = 2
QUICK_MCNET = {"max_steps": 60, "hidden_sizes": (8, 8), "embedding_dim": 4, "n_nodes": 10}


def methods(has_field: bool) -> dict[str, tuple[Callable[[], object], bool]]:
    """name -> (factory, uses the field); field-aware methods only where the log has a field."""
    out: dict[str, tuple[Callable[[], object], bool]] = {
        "MCNet-None": (lambda: mcal.MCNet(random_state=SEED, progress=False, **MCNET_EXTRA), False),
        "Platt": (mcal.PlattScaling, False),
        "Isotonic": (mcal.IsotonicCalibration, False),
        "SIR": (mcal.SmoothedIsotonic, False),
    }
    if has_field:
        out |= {
            "MCNet-Field": (lambda: mcal.MCNet(field=FIELD, random_state=SEED, progress=False, **MCNET_EXTRA), True),
            "PerField-Isotonic": (lambda: mcal.PerFieldCalibrator(mcal.IsotonicCalibration(), field=FIELD), True),
            "NeuCalib": (lambda: mcal.NeuCalib(field=FIELD, random_state=SEED), True),
            "AdaCalib": (lambda: mcal.AdaCalib(field=FIELD, random_state=SEED), True),
            "MCGrad": (lambda: mcal.MCGrad(n_jobs=1, random_state=SEED), True),
        }
    return out


def _X(field: np.ndarray, n_fields: int) -> pd.DataFrame:
    return pd.DataFrame({FIELD: pd.Categorical(field, categories=range(n_fields))})


def truth_distance(model, gen: Generator, cal: pd.DataFrame, uses_field: bool) -> tuple[float, float]:
    """Mean and worst (over fields) mean squared distance to the true map on each field's score grid."""
    per_field = []
    for c in range(gen.n_fields):
        s = logit(cal.loc[cal[FIELD] == c, "score"].to_numpy())
        grid = np.linspace(*np.quantile(s, [0.01, 0.99]), N_GRID)
        field = np.full(N_GRID, c)
        pred = model.predict(expit(grid), X=_X(field, gen.n_fields) if uses_field else None)
        per_field.append(np.mean((pred - expit(gen.true_logit(grid, field))) ** 2))
    return float(np.mean(per_field)), float(np.max(per_field))


def field_auc_drop(test: pd.DataFrame, pred: np.ndarray) -> float:
    """Largest fall, over fields with both classes, of the within-field ROC-AUC against the base score's."""
    drops = [
        roc_auc_score(g["y"], g["score"]) - roc_auc_score(g["y"], pred[g.index])
        for _, g in test.groupby(FIELD)
        if 0 < g["y"].sum() < len(g)
    ]
    return float(max(drops))


def run_case(case: str, rng_seed: int, only: set[str] | None = None) -> list[dict]:
    name, rows = case.split("@")
    gen, n = GENERATORS[name], int(rows)
    rng = np.random.default_rng([rng_seed, n, list(GENERATORS).index(name)])
    cal, test = gen.draw(n, rng), gen.draw(min(n, MAX_TEST_ROWS), rng)
    out = []
    base = {"case": case, "seed": rng_seed, "generator": name, "n_fields": gen.n_fields, "n_cal": n}
    losses: dict[str, np.ndarray] = {}
    for method, (make, uses_field) in methods(gen.n_fields > 1).items():
        if only is not None and method not in only:
            continue
        model = make()
        start = time.perf_counter()
        model.fit(cal["score"].to_numpy(), cal["y"].to_numpy(), X=_X(cal[FIELD], gen.n_fields) if uses_field else None)
        fit_s = time.perf_counter() - start
        pred = model.predict(test["score"].to_numpy(), X=_X(test[FIELD], gen.n_fields) if uses_field else None)
        msd, worst = truth_distance(model, gen, cal, uses_field)
        y = test["y"].to_numpy()
        losses[method] = -(y * np.log(pred) + (1 - y) * np.log1p(-pred))
        row = base | {
            "method": method,
            "msd_truth": msd,
            "msd_truth_worst": worst,
            "log_loss": log_loss(test["y"].to_numpy(), pred),
            "roc_auc": roc_auc_score(test["y"], pred),
            "field_auc_drop": field_auc_drop(test, pred),
            "fit_s": fit_s,
        }
        if isinstance(model, mcal.MCNet):
            row |= {"steps": model.n_steps_, "best_step": model.best_step_, "epochs": model.n_epochs_,
                    "n_bins": model.n_bins_}  # fmt: skip
        out.append(row)
        print(f"{case:>16} seed {rng_seed} {method:>18} msd={msd:.2e} fit={fit_s:.1f}s", flush=True)
    for row in out:
        if "AdaCalib" in losses and row["method"] in losses:
            diff = losses[row["method"]] - losses["AdaCalib"]
            row |= {"log_loss_minus_adacalib": diff.mean(), "paired_se": diff.std(ddof=1) / np.sqrt(diff.size)}
    return out


def speed_rows(n: int, n_steps: int) -> list[dict]:
    """MCNet-Field training throughput at ``n`` rows and 4 fields, 1 and 2 torch threads: the rows x epochs that a
    full-batch fit of ``2 * n_steps`` steps runs beyond one of ``n_steps``, over the extra time (the warm start, the
    bins and the tables cancel out)."""
    gen = GENERATORS["kinked"]
    cal = gen.draw(n, np.random.default_rng(SEED))
    X = _X(cal[FIELD] % 4, 4)
    out = []
    for threads in (1, 2):
        seconds = []
        for steps in (n_steps, 2 * n_steps):
            model = mcal.MCNet(field=FIELD, random_state=SEED, max_steps=steps, n_threads=threads, progress=False,
                               n_bins=SPEED_BINS)  # fmt: skip
            start = time.perf_counter()
            model.fit(cal["score"].to_numpy(), cal["y"].to_numpy(), X=X)
            seconds.append(time.perf_counter() - start)
        out.append(
            {
                "n_rows": n,
                "n_threads": threads,
                "extra_epochs": n_steps,
                "fit_s_short": seconds[0],
                "fit_s_long": seconds[1],
                "rows_x_epochs_per_s": n_steps * n / (seconds[1] - seconds[0]),
                "load_average": os.getloadavg()[0],
            }
        )
    return out


def _pooled(g: pd.DataFrame, method: str, column: str) -> float:
    return float(g.loc[g["method"] == method, column].mean())


def verdicts(raw: pd.DataFrame) -> list[str]:
    """The issue's targets, each with its numbers (means over the data seeds) and whether it holds."""
    lines = []
    for case, g in raw.groupby("case", sort=False):
        n, n_seeds = int(g["n_cal"].iloc[0]), g["seed"].nunique()
        methods_run = set(g["method"])
        if {"MCNet-Field", "AdaCalib"} <= methods_run:
            net, ada = _pooled(g, "MCNet-Field", "msd_truth"), _pooled(g, "AdaCalib", "msd_truth")
            limit = 1.10 if g["generator"].iloc[0] == "ripple" else 1.0
            rows = g[g["method"] == "MCNet-Field"]
            diff = float(rows["log_loss_minus_adacalib"].mean())
            se = float(np.sqrt((rows["paired_se"] ** 2).sum()) / len(rows))
            fit = _pooled(g, "MCNet-Field", "fit_s") / _pooled(g, "AdaCalib", "fit_s")
            scope = "" if n >= 50_000 else " (below 50k rows: no target)"
            lines.append(
                f"- {case}{scope}, {n_seeds} seed(s): distance MCNet-Field {net:.2e} vs AdaCalib {ada:.2e} (ratio "
                f"{net / ada:.2f}, target < {limit:.2f}: {'met' if net < limit * ada else 'NOT met'}); test log loss "
                f"MCNet-Field - AdaCalib {diff:+.2e} (paired SE {se:.1e}: {'met' if diff <= se else 'NOT met'}); "
                f"fit time ratio MCNet-Field / AdaCalib {fit:.2f} (1 thread, same run)"
            )
        if {"MCNet-None", "Isotonic", "Platt"} <= methods_run and g["n_fields"].iloc[0] == 1:
            net = _pooled(g, "MCNet-None", "msd_truth")
            best = min(_pooled(g, m, "msd_truth") for m in ("Isotonic", "Platt"))
            lines.append(
                f"- {case}: MCNet-None {net:.2e} vs best of isotonic / Platt {best:.2e}: "
                f"{'met' if net < best else 'NOT met'}"
            )
    nets = raw[raw["method"].str.startswith("MCNet")]
    lines.append(f"- MCNet fits that train every row for their whole budget: {int((nets['best_step'] == nets['steps']).sum())}"
                 f" of {len(nets)}")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny cases, no speed section (the test suite's run)")
    parser.add_argument("--cases", help="comma-separated GENERATOR@ROWS (default: the full list)")
    parser.add_argument("--speed-rows", type=int, default=1_000_000, help="rows of the speed section (0: skip)")
    parser.add_argument("--speed-steps", type=int, default=20, help="full-batch epochs timed per thread count")
    parser.add_argument("--seeds", type=int, default=3, help="data seeds per case (3, 4, ...)")
    parser.add_argument("--methods", help="comma-separated methods to run (default: all)")
    add_out_dir_option(parser)
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        help="only write the tables from the raw CSV files of "
        "earlier runs (e.g. cases run in parallel processes), each with its _speed.csv if any",
    )
    args = parser.parse_args(argv)
    args.out_dir = out_dir_of(args, "mcnet_synthetic")
    if args.merge:
        raw = pd.concat([pd.read_csv(f, comment="#") for f in args.merge], ignore_index=True)
        found = [f.with_name(f.stem + "_speed.csv") for f in args.merge]
        speed = pd.concat([pd.read_csv(f) for f in found if f.exists()] or [pd.DataFrame()], ignore_index=True)
        write_tables(raw, speed, args.out_dir, "merged from " + ", ".join(str(f) for f in args.merge))
        return 0
    import torch

    torch.set_num_threads(1)
    if args.quick:
        MCNET_EXTRA.update(QUICK_MCNET)
    cases = QUICK_CASES if args.quick else tuple(args.cases.split(",")) if args.cases else CASES
    only = set(args.methods.split(",")) if args.methods else None
    seeds = range(SEED, SEED + (1 if args.quick else args.seeds))
    raw = results_frame([row for case in cases for seed in seeds for row in run_case(case, seed, only)])
    speed = (
        pd.DataFrame()
        if args.quick or args.speed_rows == 0
        else pd.DataFrame(speed_rows(args.speed_rows, args.speed_steps))
    )
    write_tables(raw, speed, args.out_dir, "quick" if args.quick else "full")
    return 0


def write_tables(raw: pd.DataFrame, speed: pd.DataFrame, out_dir: Path, mode: str) -> None:
    """Write the Markdown tables and the raw CSV (and the speed CSV when there is a speed section)."""
    header = run_header(
        "MCNet on synthetic logs with a known calibration map",
        sorted(raw["seed"].unique().tolist()),
        {
            "threads": "torch.set_num_threads(1), OMP_NUM_THREADS=1, LightGBM n_jobs=1 (speed section: 1 and 2)",
            "load average at the end": f"{os.getloadavg()[0]:.1f} (2 shared cores)",
            "mode": mode,
        },
    )
    cols = ["msd_truth", "msd_truth_worst", "log_loss", "roc_auc", "field_auc_drop", "fit_s"]
    means = raw.groupby(["case", "method"], sort=False)[cols].mean().reset_index()
    paired = ["case", "seed", "method", "msd_truth", "log_loss_minus_adacalib", "paired_se", "fit_s"]
    nets = raw[raw["method"].str.startswith("MCNet")]
    sections = [
        "## Targets\n\n" + "\n".join(verdicts(raw)),
        "## Distance to the true map, log loss and ROC-AUC (test rows; means over the data seeds)\n\n"
        + md_table(means, 5),
    ]
    if "log_loss_minus_adacalib" in raw:
        sections.append(
            "## Against AdaCalib, per data seed (log loss difference over the test rows, paired SE)\n\n"
            + md_table(raw.loc[raw["log_loss_minus_adacalib"].notna() & (raw["method"] != "AdaCalib"), paired], 5)
        )
    sections.append(
        "## MCNet training (best step = steps: every row trained for the whole budget)\n\n"
        + md_table(nets[["case", "seed", "method", "n_bins", "steps", "best_step", "epochs", "fit_s"]].astype(
            {"n_bins": int, "steps": int, "best_step": int, "epochs": int}))
    )  # fmt: skip
    if not speed.empty:
        sections.append(
            "## Training throughput on the CPU (MCNet-Field, kinked log folded to 4 fields, defaults, full batch)\n\n"
            + md_table(speed, 1)
        )
    write_results("mcnet_synthetic", header, sections, raw, out_dir)
    if not speed.empty:
        speed.to_csv(out_dir / "mcnet_synthetic_speed.csv", index=False, float_format="%.6g")


if __name__ == "__main__":
    raise SystemExit(main())

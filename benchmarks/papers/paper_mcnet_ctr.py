"""MCNet in its paper's setting: a click-log-like calibration problem on Census-KDD (issue #17, part 3).

The base model trains on the 1994 survey rows; calibration and test are two random halves of the 1995 rows (a
period shift: 1995's positive rate is 13 % above 1994's). The field is ``class_of_worker`` collapsed to four
groups (``_ctr_data.WORKER_GROUPS``). Arms:

- A: LightGBM trained on rows whose negatives were kept at a different rate per field group
  (``_ctr_data.KEEP_NEGATIVES``), not corrected, as ads systems sample;
- B: an over-confident PyTorch MLP (trained far past its validation minimum) on the same sampled rows;
- C1: control, LightGBM without sampling (period shift only); C2: control, LightGBM on an i.i.d. split of all rows.

Every method of the MCNet paper's Table 1 plus MCGrad (``_methods.MCNET_TABLE1``) and MCNet with the
field-balance regularizer on (alpha = 1) is fitted on the calibration half and scored on the test half, for each
seed (the seed draws the halves, the sampled rows, the base model and the calibrators). MCNet runs at its
library defaults, so rerunning this script measures whatever MCNet is in the tree.

Usage::

    PYTHONPATH=src python benchmarks/papers/paper_mcnet_ctr.py [--quick] [--arms A,B,C1,C2] [--seeds 5]
        [--control-seeds 2] [--report-only] [--no-cache] [--out-dir DIR]

Writes ``benchmarks/results/paper_mcnet_ctr.md`` and ``.csv``. Fits and test predictions are cached per arm and
seed under ``benchmarks/.cache/paper_mcnet_ctr`` so that an interrupted run resumes; ``--report-only`` rebuilds
the results from that cache.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))

import _common as C
import _ctr_data as CD
import _ctr_stats as S
import _methods as MT
import _report_mcnet_ctr as R

ARMS = {
    "A": {"base": "lightgbm", "sampling": True, "split": "period"},
    "B": {"base": "mlp", "sampling": True, "split": "period"},
    "C1": {"base": "lightgbm", "sampling": False, "split": "period"},
    "C2": {"base": "lightgbm", "sampling": False, "split": "iid"},
}
CONTROL_ARMS = ("C1", "C2")
#: Table 1 of the MCNet paper plus MCGrad, then MCNet with the field-balance regularizer on (Table 3), then
#: MCNet-Field with the auxiliary network on the base model's features (Table 2), the MCNet variant that sees the
#: features MCGrad sees.
METHODS = (
    MT.MCNET_TABLE1
    + tuple(m for m in MT.MCNET_TABLE3 if m.cls == "MCNet" and m.name.endswith("L_b on"))
    + tuple(m for m in MT.MCNET_TABLE2 if m.name == "MCNet-Field-Aux")
)
QUICK_ROWS = 8_000
#: Threads of every fit (the machine's 2 cores are shared).
N_THREADS = 1


def run_split(arm: str, seed: int, split: CD.Split, done: set, log=print) -> tuple[list[dict], dict]:
    """Fit every method not in ``done`` on the calibration half; metric rows and test predictions."""
    field = S.field_of(split.test)
    rows, preds = [], {"Base": split.p_test}
    if "Base" not in done:
        rows.append(
            {
                "arm": arm,
                "seed": seed,
                "method": "Base",
                "status": "ok",
                **{f"base_{k}": v for k, v in split.info.items() if not isinstance(v, (list, dict))},
                **S.metrics(split.test.y, split.p_test, field),
            }
        )
    for m in METHODS:
        if m.name in done:
            continue
        row = {"arm": arm, "seed": seed, "method": m.name}
        try:
            out, info = MT.fit_predict(
                m, split.cal, split.cal.y, split.p_cal, {"test": (split.test, split.p_test)}, seed
            )
        except MT.Unavailable as exc:
            rows.append({**row, "status": "not available in this run", "reason": str(exc)})
            continue
        preds[m.name] = out["test"]
        rows.append({**row, "status": "ok", **info, **S.metrics(split.test.y, out["test"], field)})
        log(f"    {arm} seed {seed} {m.name}: fit {info['fit_s']:.1f} s")
    return rows, preds


def _store(arm: str, seed: int, quick: bool) -> Path:
    return CD.CACHE / f"fits-{'quick-' if quick else ''}{arm}-seed{seed}"


def run_arm_seed(ds, year, arm: str, seed: int, *, quick: bool, use_cache: bool, log=print) -> None:
    """Fit (or resume) one arm and seed; rows go to ``rows.json``, predictions to ``preds.npz`` in its folder."""
    store = _store(arm, seed, quick)
    rows, preds = [], {}
    if use_cache and (store / "rows.json").exists():
        rows = json.loads((store / "rows.json").read_text())
        with np.load(store / "preds.npz", allow_pickle=True) as z:  # our own file; the field is an object array
            preds = {k: z[k] for k in z.files if k not in ("y", "field")}  # written again from the split below
    done = {r["method"] for r in rows if r["status"] == "ok"}
    if done >= {"Base", *(m.name for m in METHODS)}:
        return
    split = CD.split_for(ds, year, arm, ARMS[arm], seed, use_cache=use_cache, n_threads=N_THREADS, log=log)
    rows = [r for r in rows if r["method"] in done]
    new_rows, new_preds = run_split(arm, seed, split, done, log)
    rows += new_rows
    preds |= new_preds
    store.mkdir(parents=True, exist_ok=True)
    np.savez(
        store / "preds.tmp.npz",
        y=split.test.y,
        field=S.field_of(split.test),
        **{k: np.asarray(v, dtype=np.float64) for k, v in preds.items()},
    )
    (store / "preds.tmp.npz").replace(store / "preds.npz")
    (store / "rows.json").write_text(json.dumps(rows, default=float))


def collect(plan: dict[str, list[int]], quick: bool) -> tuple[pd.DataFrame, dict]:
    """Every stored row of the planned arms and seeds, and their test predictions ``{(arm, seed): npz dict}``."""
    rows, preds = [], {}
    for arm, seeds in plan.items():
        for seed in seeds:
            store = _store(arm, seed, quick)
            if not (store / "rows.json").exists():
                continue
            rows += json.loads((store / "rows.json").read_text())
            with np.load(store / "preds.npz", allow_pickle=True) as z:
                preds[(arm, seed)] = {k: z[k] for k in z.files}
    return C.results_frame(rows) if rows else pd.DataFrame(), preds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ROWS} sampled rows, one seed, capped training")
    parser.add_argument("--arms", default=",".join(ARMS), help="comma-separated arms (default: all)")
    parser.add_argument("--seeds", type=int, help="seeds of arms A and B (default 5; 1 with --quick)")
    parser.add_argument("--control-seeds", type=int, help="seeds of the control arms (default 2; 1 with --quick)")
    parser.add_argument("--report-only", action="store_true", help="rebuild the results from the stored fits")
    parser.add_argument("--no-cache", action="store_true", help="refit everything (and store nothing)")
    parser.add_argument("--n-boot", type=int, default=S.N_BOOT, help="bootstrap replicates")
    C.add_out_dir_option(parser)
    parser.add_argument("--note", help="a line for the results header (e.g. which code the stored fits ran)")
    args = parser.parse_args(argv)
    args.out_dir = C.out_dir_of(args, "paper_mcnet_ctr")
    arms = args.arms.split(",")
    if set(arms) - set(ARMS):
        parser.error(f"--arms must be among {sorted(ARMS)}; got {sorted(set(arms) - set(ARMS))}")
    n_seeds = args.seeds or (1 if args.quick else 5)
    n_control = args.control_seeds or (1 if args.quick else 2)
    plan = {a: list(range(n_control if a in CONTROL_ARMS else n_seeds)) for a in arms}
    MT.limit_threads()
    MT.set_smoke(args.quick)
    start = time.perf_counter()
    if args.no_cache and args.report_only:
        parser.error("--report-only reads the stored fits; it cannot be combined with --no-cache")
    store_root, mlp = CD.CACHE, CD.MLP
    if args.quick:  # a few epochs: the code path, not an over-confident model
        CD.MLP = {**mlp, "epochs": 3}
    if args.no_cache:  # a throwaway store: the quick test must not touch or reuse the real one
        import tempfile

        CD.CACHE = Path(tempfile.mkdtemp(prefix="paper_mcnet_ctr-"))
    try:
        if not args.report_only:
            ds, year = CD.load(QUICK_ROWS if args.quick else None)
            for seed in range(max(len(s) for s in plan.values())):  # seed by seed: a partial run stays balanced
                for arm in [a for a, seeds in plan.items() if seed in seeds]:
                    run_arm_seed(ds, year, arm, seed, quick=args.quick, use_cache=True)
        raw, preds = collect(plan, args.quick)
        plan = {a: [s for s in seeds if (a, s) in preds] for a, seeds in plan.items()}
        plan = {a: seeds for a, seeds in plan.items() if seeds}
        sections = R.build_sections(raw, preds, plan, n_boot=args.n_boot)
    finally:
        CD.CACHE, CD.MLP = store_root, mlp
    header = C.run_header(
        "MCNet in its paper's setting: Census-KDD as a click log (issue #17)",
        sorted({s for v in plan.values() for s in v}),
        {
            "seeds": "; ".join(f"arm {a}: {', '.join(map(str, s))}" for a, s in plan.items()),
            "mode": ("quick (sampled rows, capped training: numbers meaningless)" if args.quick else "full"),
            "threads": f"{N_THREADS} (torch.set_num_threads, LightGBM n_jobs, OMP_NUM_THREADS as set by the caller)",
            "wall time": f"{time.perf_counter() - start:.0f} s" + (" (report only)" if args.report_only else ""),
            "MCNet defaults": R.mcnet_defaults(),
            **({"note": args.note} if args.note else {}),
        },
    )
    md, csv = C.write_results("paper_mcnet_ctr", header, sections, raw, args.out_dir)
    print(f"wrote {md} and {csv}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Replay the MCNet paper's Tables 1-3 with mcal on the field-bearing data we hold.

The paper's datasets (AliExpress, Huawei Browser) cannot be had here, so the comparison is of the direction of
each effect, not of the numbers. Protocol, as in the paper's section 5.1.3: the base model (a logistic regression,
where the paper has a deep CTR model) is trained on the training split; every calibrator is fitted on the
validation split and scored on the test split. The split is the MCGrad protocol's 60/20/20 with seed 15; the
three runs of Table 1 vary the calibrators' ``random_state`` (0, 1, 2), so deterministic methods show no spread,
as in the paper's Table 1; Tables 2 and 3 are single runs by default, as the paper reports them.

Usage::

    PYTHONPATH=src python benchmarks/papers/paper_mcnet.py [--quick] [--datasets a,b] [--runs 3] [--max-rows N]

Writes ``benchmarks/results/paper_mcnet.md`` and ``paper_mcnet.csv`` (``--out-dir`` to change).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this topic's scripts, in a child process too
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))

import _common as C
import _datasets as D
import _evaluation as E
import _methods as MT
import _report_mcnet as R

#: Dataset key -> field column (the issue's choices).
DATASETS = {
    "census_kdd": "class_of_worker",
    "online_shoppers": "TrafficType",
    "bank_marketing": "month",
    "open_bandit": "campaign",
}
#: Row caps of the full run (the 1-hour budget on 2 cores): Census-Income KDD is sampled.
FULL_MAX_ROWS = {"census_kdd": 30_000}
QUICK_MAX_ROWS = 6_000
QUICK_DATASETS = ("online_shoppers", "bank_marketing")
SPLIT_SEED = D.PAPER_SEED


def run_dataset(
    key: str,
    runs: dict[str, int],
    tables: dict,
    *,
    max_rows=None,
    cache=C.CACHE,
    blas_threads=C.BASE_BLAS_THREADS,
    log=print,
) -> tuple[list[dict], dict]:
    """Every method of ``tables`` (name -> methods) on one dataset, ``runs[table]`` calibrator seeds each."""
    ds = D.load(key, max_rows=max_rows)
    ds.field = DATASETS[key]
    (_train, va, te), scores, info = C.protocol_scores(
        ds, key, max_rows, SPLIT_SEED, cache=cache, blas_threads=blas_threads
    )
    val, test = ds.subset(va), ds.subset(te)
    field_test = test.frame[ds.field].astype(str).to_numpy()
    desc = {
        "name": ds.name,
        "n": ds.n,
        "field": ds.field,
        "n_fields": int(pd.Series(field_test).nunique()),
        "prevalence": float(ds.y.mean()),
        "notes": ds.notes,
        "val": len(va),
        "test": len(te),
        "val_prevalence": float(val.y.mean()),
        "test_prevalence": float(test.y.mean()),
        "base_val_pcoc": float(E.M.pcoc(val.y, scores["val"])),
    }

    def metrics(p):
        return E.mcnet_table_metrics(test.y, p, field_test, test)

    rows = [
        {
            "dataset": ds.name,
            "table": "all",
            "method": "Base",
            "run": 0,
            "status": "ok",
            "fit_s": info["fit_s"],
            **metrics(scores["test"]),
        }
    ]
    log(f"  {ds.name}: base model ({info['n_iter']} lbfgs iterations); field {ds.field}")
    for table, methods in tables.items():
        for m in methods:
            for run in range(runs[table] if m.seeded == "run" else 1):
                row = {"dataset": ds.name, "table": table, "method": m.name, "run": run}
                try:
                    preds, fit_info = MT.fit_predict(
                        m, val, val.y, scores["val"], {"test": (test, scores["test"])}, run
                    )
                except MT.Unavailable as exc:
                    rows.append({**row, "status": "not available in this run", "reason": str(exc)})
                    break
                rows.append({**row, "status": "ok", **fit_info, **metrics(preds["test"])})
                log(f"    {table} {m.name} run {run}: fit {fit_info['fit_s']:.1f} s")
    return rows, desc


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    C.add_run_options(parser)
    parser.add_argument("--runs", type=int, help="calibrator seeds per method of Table 1 (default 3; 1 with --quick)")
    parser.add_argument(
        "--ablation-runs",
        type=int,
        default=1,
        help="calibrator seeds per method of Tables 2 and 3 (default 1: the paper reports no spread)",
    )
    args = parser.parse_args(argv)
    args.out_dir = C.out_dir_of(args, "paper_mcnet")
    MT.limit_threads()
    MT.set_smoke(args.smoke)

    n_runs = args.runs or (1 if args.quick else 3)
    runs = {"Table 1": n_runs, "Table 2": args.ablation_runs, "Table 3": args.ablation_runs}
    keys = tuple(args.datasets.split(",")) if args.datasets else (QUICK_DATASETS if args.quick else tuple(DATASETS))
    unknown = set(keys) - set(DATASETS)
    if unknown:
        parser.error(f"--datasets must be among {sorted(DATASETS)}; got {sorted(unknown)}")
    tables = {"Table 1": MT.with_registered(MT.MCNET_TABLE1), "Table 2": MT.MCNET_TABLE2, "Table 3": MT.MCNET_TABLE3}
    start = time.perf_counter()
    cache = None if args.no_cache else C.CACHE
    rows, descs, skipped = C.run_datasets(
        keys,
        lambda key, n: run_dataset(key, runs, tables, max_rows=n, cache=cache, blas_threads=args.blas_threads),
        lambda key: args.max_rows or (QUICK_MAX_ROWS if args.quick else FULL_MAX_ROWS.get(key)),
    )
    raw = C.results_frame(rows)
    header = C.run_header(
        "MCNet paper, Tables 1-3, replayed with mcal on field-bearing data",
        range(n_runs),
        {
            "seeds": f"calibrator random_state 0..{n_runs - 1} (Table 1), 0..{args.ablation_runs - 1} (Tables 2-3); "
            f"data split seed {SPLIT_SEED} (test seed {D.TEST_SEED})",
            "datasets": ", ".join(f"{d['name']} (field {d['field']}, {d['n']} rows)" for d in descs) or "none",
            "mode": ("smoke (training capped, numbers meaningless) + " if args.smoke else "")
            + ("quick" if args.quick else "full"),
            "wall time": f"{time.perf_counter() - start:.0f} s",
            "base models": C.cache_note(raw[raw["method"] == "Base"]["fit_s"]) if len(raw) else "none",
        },
    )
    md, csv = C.write_results("paper_mcnet", header, R.build_sections(raw, descs, skipped), raw, args.out_dir)
    print(f"wrote {md} and {csv}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

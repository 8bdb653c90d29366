"""Markdown sections of ``results/paper_mcnet_ctr.md``: per-arm tables, paired bootstrap, noise floor, and which
of the MCNet paper's effects reproduce.

Benchmark scripts only.
"""

from __future__ import annotations

import _common as C
import _ctr_data as CD
import _ctr_stats as S
import numpy as np
import pandas as pd

import mcal

COLS = {
    "pcoc": "PCOC",
    "f_rce": "F-RCE (%)",
    "auc": "AUC",
    "log_loss": "log loss",
    "pcoc_field_std": "field PCOC STD",
    "best_epoch": "best epoch",
    "n_epochs": "epochs run",
}
MCNET = ("MCNet-None", "MCNet-Field")
ARM_TEXT = {
    "A": "LightGBM base, negatives kept per field at "
    + ", ".join(f"{k} {v}" for k, v in CD.KEEP_NEGATIVES.items())
    + " (not corrected); 1994 -> 1995",
    "B": "over-confident PyTorch MLP base, same sampling; 1994 -> 1995",
    "C1": "control: LightGBM base, no sampling; 1994 -> 1995 (period shift only)",
    "C2": "control: LightGBM base, no sampling; i.i.d. split of both years",
}


def mcnet_defaults() -> str:
    """MCNet's size and training defaults, read from the class (so a results header cannot go stale)."""
    keep = ("n_bins", "integral", "n_nodes", "bin_joins", "hidden_sizes", "embedding_dim", "beta", "alpha",
            "learning_rate", "batch_size", "max_steps", "validation_fraction", "inference")  # fmt: skip
    params = mcal.MCNet().get_params()
    return ", ".join(f"{k}={params[k]!r}" for k in keep if k in params)


def _ok(raw: pd.DataFrame) -> pd.DataFrame:
    return raw[raw["status"] == "ok"] if len(raw) else raw


def _means(ok: pd.DataFrame, arm: str) -> pd.DataFrame:
    sub = ok[ok["arm"] == arm]
    return sub.groupby("method", sort=False)[[c for c in COLS if c in sub]].mean()


def _best_other(means: pd.DataFrame) -> str | None:
    others = means.drop(index=[m for m in means.index if m == "Base" or m.startswith("MCNet")], errors="ignore")
    return None if others.empty else str(others["f_rce"].idxmin())


def arm_table(ok: pd.DataFrame, arm: str, floor: dict) -> str:
    sub = ok[ok["arm"] == arm]
    cols = [c for c in COLS if c in sub and sub[c].notna().any()]
    g = sub.groupby("method", sort=False)
    mean, std = g[cols].mean(), g[cols].std(ddof=1)
    out = mean.astype(object)
    for k in cols:
        out[k] = [
            C.fmt(m) + ("" if not np.isfinite(s) or s == 0 else f" ({s:.4f})")
            for m, s in zip(mean[k], std[k], strict=False)
        ]
    seeds = sorted(sub["seed"].unique())
    fields = sorted(c for c in sub if c.startswith("pcoc[") and sub[c].notna().any())
    base = sub[sub["method"] == "Base"]
    per_field = ", ".join(f"{c[5:-1]} {base[c].mean():.3f}" for c in fields)
    text = [
        f"### Arm {arm}: {ARM_TEXT[arm]}",
        f"Seeds {', '.join(map(str, seeds))}; mean (standard deviation over seeds). Base per-field PCOC on the "
        f"test half: {per_field}. **Noise floor**: F-RCE of the base scores against labels redrawn from them "
        f"(the scores exactly true) is {floor['mean']:.3f} % on average, 95th percentile {floor['q95']:.3f} %; "
        "F-RCE differences below that are label noise.",
        "",
        C.md_table(out.rename(columns=COLS).reset_index()),
    ]
    if arm == "B":
        info = base[[c for c in base if c.startswith("base_val_log_loss") or c == "base_epochs"]].mean()
        if len(info):
            text.insert(
                2,
                "The MLP's held-out log loss (a tenth of the 1994 training rows) was lowest at epoch "
                f"{info.get('base_val_log_loss_min_epoch', np.nan):.1f} "
                f"({info.get('base_val_log_loss_min', np.nan):.4f}) "
                f"and {info.get('base_val_log_loss_last', np.nan):.4f} at the last epoch, "
                f"{info.get('base_epochs', np.nan):.0f} (means over seeds): the base is over-confident.",
            )
    return "\n".join(text)


def _verdict(d: dict) -> str:
    if d["diff"] == d["lo"] == d["hi"] == 0:
        return "no (identical predictions)"
    if d["hi"] < 0:
        return "yes"
    if d["lo"] > 0:
        return "no (reversed)"
    return "not resolved (interval holds 0)"


def _lowest_verdict(mcnet_lowest: bool, d: dict | None) -> str:
    if d is None:
        return "n/a"
    if mcnet_lowest:
        return "yes" if d["hi"] < 0 else "partly (lowest, interval holds 0)"
    return "no (reversed)" if d["lo"] > 0 else "no (not lowest; interval holds 0)"


def _cmp(boot, ok, arm, a, b, metric) -> dict | None:
    stats = boot.get(arm)
    means = _means(ok, arm)
    if not stats or a not in means.index or b not in means.index or any(a not in s or b not in s for s in stats):
        return None
    return S.paired_difference(stats, float(means.loc[a, metric] - means.loc[b, metric]), a, b, metric)


def _fmt_cmp(d: dict | None, digits: int = 3) -> str:
    return "n/a" if d is None else f"{d['diff']:+.{digits}f} [{d['lo']:+.{digits}f}, {d['hi']:+.{digits}f}]"


def bootstrap_table(ok, boot, arms) -> str:
    recs = []
    for arm in arms:
        means = _means(ok, arm)
        best = _best_other(means)
        if best is None:
            continue
        for m in MCNET:
            for metric in ("f_rce", "log_loss"):
                d = _cmp(boot, ok, arm, m, best, metric)
                recs.append(
                    {
                        "arm": arm,
                        "MCNet variant": m,
                        "best other (lowest F-RCE)": best,
                        "metric": COLS[metric],
                        "difference (MCNet - other) [95 % CI]": _fmt_cmp(d, 4 if metric == "log_loss" else 3),
                        "MCNet better?": "n/a" if d is None else _verdict(d),
                    }
                )
    return (
        "## MCNet against the best other method, paired bootstrap\n\nDifference of the seed means, with a 95 % "
        "percentile interval from Poisson-weighted resamples of each seed's test half (the same weights for "
        "both methods; each replicate averages the seeds). Negative is better for MCNet.\n\n"
        + C.md_table(pd.DataFrame(recs))
    )


def effects(ok, boot, arms) -> str:
    recs = []
    for arm in [a for a in ("A", "B") if a in arms]:
        means = _means(ok, arm)
        if means.empty:
            continue
        lowest = str(means.drop(index="Base", errors="ignore")["f_rce"].idxmin())
        best = _best_other(means)
        mc = [m for m in MCNET if m in means.index]
        best_mc = min(mc, key=lambda m: means.loc[m, "f_rce"]) if mc else None
        d = _cmp(boot, ok, arm, best_mc, best, "f_rce") if best_mc and best else None
        recs.append(
            {
                "effect (paper)": "an MCNet variant has the lowest F-RCE",
                "arm": arm,
                "measured": f"lowest: {lowest} ({means.loc[lowest, 'f_rce']:.3f} %); {best_mc} - {best}: {_fmt_cmp(d)}",
                "reproduces?": _lowest_verdict(lowest.startswith("MCNet"), d),
            }
        )
    if "A" in arms:
        d = _cmp(boot, ok, "A", "MCNet-Field", "MCNet-None", "f_rce")
        recs.append(
            {
                "effect (paper)": "MCNet-Field beats MCNet-None (F-RCE)",
                "arm": "A",
                "measured": f"Field - None: {_fmt_cmp(d)}",
                "reproduces?": "n/a" if d is None else _verdict(d),
            }
        )
    for arm in [a for a in ("A", "B") if a in arms]:
        for m in MCNET:
            d = _cmp(boot, ok, arm, f"{m} L_b on", m, "pcoc_field_std")
            recs.append(
                {
                    "effect (paper)": "the field-balance regularizer lowers the per-field PCOC STD",
                    "arm": arm,
                    "measured": f"{m}: on - off {_fmt_cmp(d, 4)}",
                    "reproduces?": "n/a" if d is None else _verdict(d),
                }
            )
    if "B" in arms:
        for other in ("Platt Scaling", "SIR", "NeuCalib"):
            d = _cmp(boot, ok, "B", "MCNet-None", other, "f_rce")
            dl = _cmp(boot, ok, "B", "MCNet-None", other, "log_loss")
            recs.append(
                {
                    "effect (paper)": f"MCNet-None beats {other} (F-RCE; log loss in brackets)",
                    "arm": "B",
                    "measured": f"{_fmt_cmp(d)} (log loss {_fmt_cmp(dl, 4)})",
                    "reproduces?": "n/a" if d is None else _verdict(d),
                }
            )
    return (
        '## Which of the paper\'s effects reproduce\n\n"yes": the 95 % interval of the paired difference lies '
        'on the paper\'s side of 0; "no (reversed)": on the other side; "not resolved": it holds 0. The '
        "regularizer rows compare MCNet with alpha = 1 against the Table 1 row (MCNet's default alpha, "
        "listed in the header).\n\n" + C.md_table(pd.DataFrame(recs))
    )


def diagnosis(ok, arms) -> str:
    recs = []
    for arm in arms:
        sub = ok[(ok["arm"] == arm) & ok["method"].str.startswith("MCNet")]
        for m, g in sub.groupby("method", sort=False):
            if "best_epoch" not in g:
                continue
            recs.append(
                {
                    "arm": arm,
                    "method": m,
                    "fits": len(g),
                    "fits that kept epoch 0": int((g["best_epoch"] == 0).sum()),
                    "mean epochs run": g["n_epochs"].mean(),
                    "mean fit s": g["fit_s"].mean(),
                }
            )
    return (
        "## MCNet's training, per fit\n\nAn MCNet fit that keeps epoch 0 returns its warm start (a Platt-like "
        "map), where neither the field input nor the regularizers have acted; such fits cannot show the "
        "paper's effects.\n\n" + (C.md_table(pd.DataFrame(recs)) if recs else "No MCNet fit ran.")
    )


def setup_section(ds_rows: pd.DataFrame) -> str:
    groups = ", ".join(
        f"{g}: {' / '.join(k for k, v in CD.WORKER_GROUPS.items() if v == g)}"
        for g in dict.fromkeys(CD.WORKER_GROUPS.values())
    )
    return (
        "## Setup\n\n"
        "- data: UCI Census-Income (KDD), both files stacked (299,285 rows); label income > $50k; the 1994 "
        "survey rows train the base model, the 1995 rows are cut at random into a calibration half and a test "
        "half (arm C2: an i.i.d. split of all rows in the same sizes);\n"
        f"- field `{CD.FIELD}`: `class_of_worker` collapsed to four groups ({groups});\n"
        f"- per-field negative sampling of the base model's training rows (arms A and B): {CD.KEEP_NEGATIVES};\n"
        f"- base models: LightGBM {CD.LGBM_PARAMS}; MLP {CD.MLP} (one-hot categoricals, standardized "
        "numericals, Adam, no regularization, kept at the last epoch);\n"
        "- calibrators: every row of the MCNet paper's Table 1 plus MCGrad (as `benchmarks/common/_methods.py` "
        "defines them, at the library defaults), and MCNet-None / MCNet-Field with the field-balance "
        "regularizer on (alpha = 1, Table 3); fitted on the calibration half, scored on the test half. Nothing "
        "is tuned on the test half; MCNet trains on every calibration row for its whole budget (no holdout, "
        "as the paper trains)."
    )


def build_sections(raw: pd.DataFrame, preds: dict, plan: dict, *, n_boot: int) -> list[str]:
    if raw.empty:
        return ["No arm was run."]
    ok = _ok(raw)
    boot, floors = {}, {}
    for (arm, seed), p in preds.items():
        names = [k for k in p if k not in ("y", "field")]
        S.check_against_mcal(p["y"], p["Base"], p["field"])
        boot.setdefault(arm, []).append(S.boot_stats({k: p[k] for k in names}, p["y"], p["field"], n_boot, seed))
        floors.setdefault(arm, []).append(S.noise_floor(p["Base"], p["field"], S.N_REDRAW, seed))
    arms = [a for a in plan if a in set(ok["arm"])]
    floor = {a: {k: float(np.mean([f[k] for f in floors[a]])) for k in ("mean", "q95")} for a in arms}
    bad = raw[raw["status"] != "ok"].drop_duplicates("method")
    missing = "None: every listed method ran." if bad.empty else C.md_table(bad[["arm", "method", "reason"]])
    return [
        setup_section(raw),
        effects(ok, boot, arms),
        bootstrap_table(ok, boot, arms),
        "## Results per arm\n\n" + "\n\n".join(arm_table(ok, a, floor[a]) for a in arms),
        diagnosis(ok, arms),
        "## Methods not available in this run\n\n" + missing,
        C.implementation_section(
            {
                "PCOC, F-RCE (eq. 4, epsilon 0.01), AUC, log loss, per-field PCOC and STD (ddof=1)": "mcal.metrics.pcoc, f_rce, roc_auc, log_loss, field_pcoc",
                "paired bootstrap and noise floor": "benchmarks/papers/_ctr_stats.py (checked against mcal.metrics at "
                "unit weights in every run)",
            }
        ),
    ]

"""Markdown sections of ``results/paper_mcgrad.md``: the paper's values beside ours, differences, directions, ranks.

Benchmark scripts only. Every number printed here comes from the rows that ``paper_mcgrad.py`` just computed or
from ``_paper_values.py`` (the paper's own figures).
"""

from __future__ import annotations

import _common as C
import _datasets as D
import _evaluation as E
import numpy as np
import pandas as pd
from _paper_values import BASE_TOLERANCE, PAPER_MCGRAD, PAPER_TABLE2, TABLE2_ROWS

METRICS = {**E.TABLE5, **E.TABLE6}
#: Columns beyond the paper's, shown in the per-dataset tables when computed.
EXTRA = {"mce_sigma_u_mcal": "MCE u (mcal segments)", "roc_auc": "ROC-AUC"}
#: Row counts of the paper's two datasets: a sampled run is not compared number for number.
FULL_SIZE = {"BankMarketing": 45_211, "CreditDefault": 30_000}
#: Our row used for each of the paper's rows in the rank comparison (the paper's DFMC is the authors' own
#: re-implementation on MCGrad's machinery, which DFMC_protocol replays; mcal.DFMC is compared in section 3).
OURS_FOR_PAPER = {"DFMC": "DFMC_protocol"}


def _ok(raw: pd.DataFrame) -> pd.DataFrame:
    return raw[raw["status"] == "ok"] if len(raw) else raw


def _better(metric: str, delta: float) -> int:
    """+1 if ``delta`` (method minus base) is an improvement, -1 if a deterioration, 0 if none."""
    if delta == 0 or not np.isfinite(delta):
        return 0
    improved = delta > 0 if metric in E.HIGHER_IS_BETTER else delta < 0
    return 1 if improved else -1


def availability(raw: pd.DataFrame) -> str:
    bad = raw[raw["status"] != "ok"].drop_duplicates("method")
    if bad.empty:
        return "## Methods not available in this run\n\nNone: every listed method ran."
    table = pd.DataFrame({"method": bad["method"], "reason": bad["reason"].fillna("")})
    return (
        '## Methods not available in this run\n\nThese rows are listed in the tables below as "not available '
        'in this run"; no number is reported for them.\n\n' + C.md_table(table)
    )


def base_replay(raw: pd.DataFrame, descs: list[dict], sensitivity: pd.DataFrame | None) -> str:
    """Milestone 1: the base model's row against the paper, with the tolerance check on Bank Marketing."""
    ok = _ok(raw)
    lines = ["## 1. The base model replayed (seed 15, test split)"]
    for name in PAPER_MCGRAD:
        row = ok[(ok["dataset"] == name) & (ok["seed"] == D.PAPER_SEED) & (ok["method"] == "base_model")]
        if row.empty:
            lines.append(f"\n{name}: not run (dataset or seed 15 not in this run).")
            continue
        r = row.iloc[0]
        paper = PAPER_MCGRAD[name]["base_model"]
        tab = pd.DataFrame(
            [
                {"metric": lab, "ours": r[k], "paper": paper[k], "ours - paper": r[k] - paper[k]}
                for k, lab in METRICS.items()
            ]
        )
        full = _full_size(name, descs)
        lines.append(
            f"\n**{name}** (lbfgs stopped after {int(r['n_iter'])} iterations"
            f"{'' if r['converged'] else ', at its cap'}"
            f"{'' if full else '; rows sampled: not comparable with the paper'}):\n\n" + C.md_table(tab)
        )
        if name == "BankMarketing" and full:
            verdicts = [
                f"{k}: |{r[k] - paper[k]:+.4f}| {'<=' if abs(r[k] - paper[k]) <= tol else '>'} {tol} "
                f"({'PASS' if abs(r[k] - paper[k]) <= tol else 'FAIL'})"
                for k, tol in BASE_TOLERANCE.items()
            ]
            lines.append("\nTolerance check (issue 7): " + "; ".join(verdicts) + ".")
    if sensitivity is not None:
        lines.append(
            "\n**Why the last digits move.** On Bank Marketing lbfgs stops at `max_iter=5000` on unscaled "
            "features (balance up to 1e5), so the returned coefficients are an unconverged iterate whose "
            "last digits depend on floating-point summation order: OpenBLAS takes a different path with "
            "one thread than with two or more (2, 3 and 4 threads give identical fits), and scikit-learn "
            "versions differ (the paper pinned 1.8.0, we run the version in the header). The exact "
            "optimum of the same objective (Newton) lies on the other side of the paper's numbers. On "
            "Credit Default lbfgs converges, yet its loose default tolerance still leaves the "
            "thread-dependent digits; the multi-threaded path reproduces the paper's base row there to "
            "the 4th decimal, so the benchmark pins 2 BLAS threads for the base model.\n\n" + C.md_table(sensitivity)
        )
    return "\n".join(lines)


def paper_tables(raw: pd.DataFrame, descs: list[dict]) -> str:
    """Tables 5 and 6 at seed 15; each cell reads "ours (paper; ours - paper)" where the paper has the row."""
    out = [
        "## 2. Tables 5 and 6 (seed 15, test split)",
        "Cells read **ours (paper; ours − paper)** for the paper's rows and **ours** for the rows the paper does "
        "not have. HKRR is the alpha picked by validation max smECE (in brackets).",
    ]
    seed_rows = raw[raw["seed"] == D.PAPER_SEED]
    for name, paper in PAPER_MCGRAD.items():
        sub = seed_rows[seed_rows["dataset"] == name]
        if sub.empty:
            continue
        note = "" if _full_size(name, descs) else " (rows sampled: not comparable with the paper)"
        for title, cols in (("Table 5 (multicalibration)", E.TABLE5), ("Table 6 (global)", E.TABLE6)):
            recs = []
            for _, r in sub.iterrows():
                label = r["method"] + (f" [{r['selected']}]" if isinstance(r.get("selected"), str) else "")
                if r["status"] != "ok":
                    recs.append({"method": label, cols[next(iter(cols))]: "not available in this run"})
                    continue
                prow = r.get("paper_row") if isinstance(r.get("paper_row"), str) else None
                rec = {"method": label}
                for k, lab in cols.items():
                    rec[lab] = C.fmt(r[k]) + (
                        f" ({paper[prow][k]:.4f}; {r[k] - paper[prow][k]:+.4f})" if prow in paper else ""
                    )
                recs.append(rec)
            out.append(f"\n### {name}: {title}{note}\n\n" + C.md_table(pd.DataFrame(recs).fillna("")))
    return "\n".join(out)


def _full_size(name: str, descs: list[dict]) -> bool:
    return any(d["name"] == name and d["n"] == FULL_SIZE.get(name) for d in descs)


def _effects(values: dict[str, dict[str, float]], base: str) -> dict[str, dict[str, int]]:
    return {
        row: {k: _better(k, v[k] - values[base][k]) for k in METRICS if k in v and k in values[base]}
        for row, v in values.items()
        if row != base
    }


def directions(raw: pd.DataFrame) -> str:
    """Does each method move each metric the same way as in the paper (against the base model)?"""
    ok = _ok(raw)
    out = [
        "## 3. Direction of each effect against the paper",
        "For one method and metric, the sign of (method − base model) in the paper against ours. The symbol is "
        "seed 15 (the paper's split): ✓ same direction, ✗ opposite, · no change in ours; `=` means the paper "
        "shows no change at 4 decimals (not counted). The fraction is how many of this run's seeds go the "
        "paper's way.",
    ]
    agree = total = seeds_agree = seeds_total = 0
    for name, paper in PAPER_MCGRAD.items():
        effects = _effects(paper, "base_model")
        sub = ok[ok["dataset"] == name]
        if sub.empty:
            continue
        per_seed = {s: g.groupby("method")[list(METRICS)].mean() for s, g in sub.groupby("seed")}
        recs = []
        for ours_row, row in sub[["method", "paper_row"]].dropna().drop_duplicates().itertuples(index=False):
            if row not in effects:
                continue
            rec = {"method": ours_row + (f" (paper: {row})" if ours_row != row else "")}
            for k, lab in METRICS.items():
                if effects[row][k] == 0:
                    rec[lab] = "="
                    continue
                signs = {
                    s: _better(k, t.loc[ours_row, k] - t.loc["base_model", k])
                    for s, t in per_seed.items()
                    if ours_row in t.index and "base_model" in t.index
                }
                hits = sum(v == effects[row][k] for v in signs.values())
                mark = (
                    {1: "✓", -1: "✗", 0: "·"}[signs[D.PAPER_SEED] * effects[row][k]] if D.PAPER_SEED in signs else "?"
                )
                rec[lab] = f"{mark} {hits}/{len(signs)}"
                if D.PAPER_SEED in signs:
                    agree, total = agree + (mark == "✓"), total + 1
                seeds_agree, seeds_total = seeds_agree + hits, seeds_total + len(signs)
            recs.append(rec)
        if recs:
            out.append(f"### {name}\n\n" + C.md_table(pd.DataFrame(recs)))
    out.append(
        f"**Agreement:** at seed 15, {agree} of {total} effects go the paper's way; over all seeds of this "
        f"run, {seeds_agree} of {seeds_total} (method, metric, seed) effects do."
    )
    return "\n\n".join(out)


def _ranks(table: pd.DataFrame) -> pd.DataFrame:
    """Rank rows (methods) per column, 1 = best; ties share the average rank."""
    return pd.DataFrame(
        {k: table[k].rank(ascending=k not in E.HIGHER_IS_BETTER, method="average") for k in table.columns}
    )


def table2(raw: pd.DataFrame) -> str:
    """Table 2's average values and ranks: ours on our datasets, the paper's on the same two and on all 11."""
    ok = _ok(raw)
    keys = list(PAPER_TABLE2["MCGrad"])
    ours_rows = {m: OURS_FOR_PAPER.get(r, r) for m, r in TABLE2_ROWS.items()}
    out = [
        "## 4. Table 2: average value and average rank (MCE on unspecified groups, log loss, PR-AUC, ECCE)",
        "Methods as in the paper's Table 2 (its \"MCGrad\" is the msh_20 row, its DFMC the authors' "
        "re-implementation = our DFMC_protocol). Ranks are 1 (best) to 5 within each dataset, averaged over "
        "datasets; ECCE in the paper's Table 2 is not on the scale of Table 6 (the protocol could not reconcile "
        "it), so compare its ranks only.",
    ]

    def summarize(per_dataset: dict[str, pd.DataFrame]) -> pd.DataFrame:
        frames = [
            t.loc[list(ours_rows.values())] for t in per_dataset.values() if set(ours_rows.values()) <= set(t.index)
        ]
        if not frames:
            return None
        avg = sum(f[keys] for f in frames) / len(frames)
        rank = sum(_ranks(f[keys]) for f in frames) / len(frames)
        return pd.DataFrame(
            {
                "method": list(ours_rows),
                **{f"{METRICS.get(k, k)} avg": avg[k].to_numpy() for k in keys},
                **{f"{METRICS.get(k, k)} rank": rank[k].to_numpy() for k in keys},
            }
        ), len(frames)

    paper_two = {name: pd.DataFrame(v).T.rename(index={"DFMC": "DFMC_protocol"}) for name, v in PAPER_MCGRAD.items()}
    ours15 = {
        n: g[g["seed"] == D.PAPER_SEED].groupby("method")[keys].mean()
        for n, g in ok.groupby("dataset")
        if n in PAPER_MCGRAD
    }
    ours_all = {n: g.groupby("method")[keys].mean() for n, g in ok.groupby("dataset")}
    for title, tabs in (
        ("Paper, Bank Marketing + Credit Default (from its Tables 5/6)", paper_two),
        ("Ours, Bank Marketing + Credit Default, seed 15", ours15),
        ("Ours, every dataset of this run, mean over seeds", ours_all),
    ):
        res = summarize(tabs)
        if res is not None:
            out.append(f"\n**{title}** ({res[1]} datasets)\n\n" + C.md_table(res[0], 3))
        else:
            out.append(f"\n**{title}**: not computable (a method of Table 2 is missing in this run).")
    paper = pd.DataFrame(
        [
            {
                "method": m,
                **{f"{METRICS.get(k, k)} avg": v[k][0] for k in keys},
                **{f"{METRICS.get(k, k)} rank": v[k][1] for k in keys},
            }
            for m, v in PAPER_TABLE2.items()
        ]
    )
    out.append("\n**Paper, Table 2 (11 datasets, 9 of which we cannot obtain)**\n\n" + C.md_table(paper, 3))
    return "\n".join(out)


def seeds_tables(raw: pd.DataFrame, descs: list[dict]) -> str:
    """Mean and standard deviation over seeds for every dataset, method and metric."""
    ok = _ok(raw)
    out = [
        "## 5. Every dataset over its seeds: mean ± standard deviation",
        "Test-split metrics; the test split is fixed (seed 42) and the seed draws the validation split, so the "
        "spread reflects the training set and the methods' randomness. Same protocol on every dataset. "
        '"MCE u (mcal segments)" is the MCE over mcal\'s own generated segments (same depth, levels and '
        "minimum size, but a cap that does not favour the first columns), next to the protocol's set.",
    ]
    extra = {k: v for k, v in EXTRA.items() if k in ok.columns and ok[k].notna().any()}
    cols = list(METRICS) + list(extra)
    labels = {**METRICS, **extra}
    for d in descs:
        sub = ok[ok["dataset"] == d["name"]]
        if sub.empty:
            continue
        g = sub.groupby("method", sort=False)
        mean, std, n = g[cols].mean(), g[cols].std(ddof=1), g.size()
        order = list(dict.fromkeys(raw[raw["dataset"] == d["name"]]["method"]))
        recs = []
        for m in order:
            if m not in mean.index:
                recs.append({"method": m, "runs": 0, labels[cols[0]]: "not available in this run"})
                continue
            rec = {"method": m, "runs": int(n[m])}
            for k in cols:
                s = std.loc[m, k]
                rec[labels[k]] = C.fmt(mean.loc[m, k]) + ("" if not np.isfinite(s) else f" ± {s:.4f}")
            recs.append(rec)
        caption = (
            f"Seeds {', '.join(map(str, d['seeds']))}; {d['n']} rows, {d['features']} base-model features, "
            f"prevalence {d['prevalence']:.3f}; "
            f"groups ({len(d['groups'])}, {d['source']}): {', '.join(d['groups'])}"
            + (f"; dropped by the 0.5 % filter: {d['dropped']}" if d["dropped"] else "")
            + (f"; {'; '.join(d['notes'])}" if d["notes"] else "")
        )
        out.append(f"\n### {d['name']}\n\n{caption}\n\n" + C.md_table(pd.DataFrame(recs).fillna("")))
    return "\n".join(out)


def timings(raw: pd.DataFrame) -> str:
    ok = _ok(raw)
    if ok.empty or "fit_s" not in ok:
        return ""
    t = ok.pivot_table(index="method", columns="dataset", values="fit_s", aggfunc="mean", sort=False)
    t = t.reset_index()
    return (
        "## 6. Fit time (seconds, mean over seeds; one thread; the base model's 0 means read from the cache)\n\n"
        + C.md_table(t, 2)
    )


def build_sections(raw, descs, skipped, sensitivity) -> list[str]:
    sections = [C.implementation_section(E.IMPLEMENTATION)]
    if skipped:
        sections.append("## Datasets skipped\n\n" + "\n".join(f"- {k}: {v}" for k, v in skipped.items()))
    if raw.empty:
        return [*sections, "No dataset could be run."]
    sections += [
        availability(raw),
        base_replay(raw, descs, sensitivity),
        paper_tables(raw, descs),
        directions(raw),
        table2(raw),
        seeds_tables(raw, descs),
        timings(raw),
    ]
    return sections

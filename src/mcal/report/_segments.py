"""The multicalibration section of the report: MCE per column and the worst segments."""

from __future__ import annotations

from html import escape
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._shared.brownian import PVALUE_FLOOR
from mcal._shared.text import findings_note
from mcal.metrics import (
    segment_intervals,
)
from mcal.report._html import _ci_note, _figure_panel, _interval, _num, _pvalue_cell, _svg_uri
from mcal.segments import Segments

#: Rows of the MCE summary table: attribute of :class:`mcal.metrics.MCEResult` and label.
_MCE_ROWS = (
    ("mce_sigma", "MCE (ECCE / σ of the worst segment)"),
    ("pvalue", "p-value"),
    ("pvalue_adjusted", "p-value, Holm-adjusted over the segments"),
    ("mce_absolute", "MCE, absolute"),
    ("mce_relative", "MCE, relative to the rarer class"),
    ("mde", "minimum detectable error"),
    ("global_ecce_sigma", "global ECCE / σ"),
)

#: Segments of the followed worst-segment table (a row per score column, one small diagram): the first columns' worst
#: segments, which keeps the file a few MB with many columns (``mcal evaluate`` prints every row, as text).
MAX_FINDINGS_ROWS = 30
#: Score columns (the first ones) drawn in a segment's small curve in that table; later columns show numbers only.
MAX_THUMBNAIL_COLUMNS = 4


def _thumbnail(Figure: Any, y: NDArray, probs: list[NDArray], w: NDArray | None, confidence: float) -> str:
    """One small reliability diagram of a segment with a curve per score column, in the colours of the overlay."""
    from mcal.plotting import plot_reliability_diagram

    ax = Figure(figsize=(1.9, 1.9)).add_subplot()
    for p in probs:
        plot_reliability_diagram(y, p, sample_weight=w, n_bins=5, confidence=confidence, ax=ax)
    ax.set_xlabel("score", fontsize=6, labelpad=1)
    ax.set_ylabel("observed", fontsize=6, labelpad=1)
    ax.set_xticks([0, 0.5, 1], labels=["0", ".5", "1"])
    ax.set_yticks([0, 0.5, 1], labels=["0", ".5", "1"])
    ax.tick_params(labelsize=6, length=2, pad=1)
    return _svg_uri(ax.figure)


def segment_name(description: str) -> str:
    """A segment's description as HTML that breaks between its conditions only, never inside one."""
    return " &amp; ".join(f'<span class="cond">{escape(c)}</span>' for c in description.split(" & "))


def _findings_rows(
    Figure: Any, y: NDArray, probs: dict, w: NDArray | None, segs: Segments, worst: pd.DataFrame,
    n_tests: int, confidence: float, intervals: dict | None,
) -> list[str]:  # fmt: skip
    """A ``<tbody>`` per listed segment: its facts and its small curve spanning one row per score column."""
    floor = min(1.0, n_tests * PVALUE_FLOOR)
    drawn = list(probs)[:MAX_THUMBNAIL_COLUMNS]
    groups = []
    for rank, group in worst.groupby("rank", sort=True):
        first = group.iloc[0]
        idx = segs.indices(int(first["segment"]))
        thumb = _thumbnail(Figure, y[idx], [probs[name][idx] for name in drawn], None if w is None else w[idx],
                           confidence)  # fmt: skip
        span = f' rowspan="{len(group)}"'
        head = (
            f'<td class="num"{span}>{rank}</td><td class="name"{span}>{segment_name(str(first["description"]))}</td>'
            f'<td class="num"{span} data-value="{int(first["size"])}">{int(first["size"]):,}</td>'
            + _num(first["mean_outcome"], attrs=span)
            + f'<td class="num"{span}>{int(group["n_similar"].max())}</td>'
        )
        alt = f"reliability curves of the segment for {', '.join(drawn)}"
        rows = []
        for k, r in enumerate(group.itertuples(index=False)):
            interval = None if intervals is None else tuple(intervals[r.score].loc[r.segment])
            failing = " fail" if r.pvalue_adjusted < 0.05 else ""
            swatch = f'<span class="swatch c{k}"></span>' if k < MAX_THUMBNAIL_COLUMNS else ""
            cells = (
                f'<th scope="row" class="score">{swatch}{escape(r.score)}</th>{_num(r.mean_prediction)}'
                f'<td class="dir {r.direction}{failing}">{r.direction or "–"}</td>'
                + _num(r.ecce_sigma, interval=interval)
                + _pvalue_cell(r.pvalue_adjusted, floor)
            )
            if k == 0:
                cells = head + cells + f'<td{span}><img class="thumb" alt="{escape(alt)}" src="{thumb}"></td>'
            rows.append(f'<tr data-score="{escape(r.score)}">{cells}</tr>')
        groups.append(f'<tbody data-segment="{int(first["segment"])}">{"".join(rows)}</tbody>')
    return groups


def _findings_table(groups: list[str]) -> str:
    return (
        '<div class="scroll"><table class="segments findings sortable grouped"><thead><tr><th>#</th>'
        '<th class="left">segment</th><th>rows</th><th>observed</th><th>similar</th><th class="left">score column'
        '</th><th>mean score</th><th>error</th><th>ECCE / σ</th><th>p (Holm)</th><th class="left">reliability</th>'
        "</tr></thead>"
        f"{''.join(groups)}</table></div>"
    )


def _segments_section(
    Figure: Any, y: NDArray, probs: dict, w: NDArray, weighted: bool, segs: Segments, results: dict,
    worst: pd.DataFrame, max_overlap: float | None, confidence: float, ci: dict | None,
) -> str:  # fmt: skip
    """The MCE of every column, a numbered scatter of every segment per column, and one table that follows the
    first column's worst segments (then each later column's) across every column."""
    from mcal.plotting import plot_segment_errors

    head = "".join(f"<th>{escape(n)}</th>" for n in probs)
    n_tests = int(next(iter(results.values())).table["pvalue"].notna().sum())
    floor = min(1.0, n_tests * PVALUE_FLOOR)
    summary = "".join(
        f'<tr data-metric="{key}"><th scope="row">{label}</th>'
        + "".join(
            _pvalue_cell(getattr(r, key), PVALUE_FLOOR if key == "pvalue" else floor) if "pvalue" in key
            else _num(getattr(r, key), interval=_interval(ci, name, key) if key == "mce_sigma" else None)
            for name, r in results.items()
        )
        + "</tr>"
        for key, label in _MCE_ROWS
    )  # fmt: skip
    n_listed = int(worst["rank"].nunique())
    worst = worst[worst["rank"] <= MAX_FINDINGS_ROWS]
    listed = worst.drop_duplicates("rank")["segment"].tolist()
    capped = (
        f" The table shows the first {MAX_FINDINGS_ROWS} of the {n_listed} segments listed (the first columns' "
        "worst); <code>mcal evaluate</code> prints them all."
        if n_listed > MAX_FINDINGS_ROWS
        else ""
    )
    panels = []
    for name, r in results.items():
        scatter = plot_segment_errors(r, numbered=listed, ax=Figure(figsize=(5.6, 3.4)).add_subplot())
        alt = f"ECCE / sigma against size of every segment (the listed ones numbered) of {name}"
        panels.append(_figure_panel(name, _svg_uri(scatter.figure), alt))
    intervals = None if ci is None else {
        name: segment_intervals(y, p, segs, listed, sample_weight=w, n_resamples=ci["n_resamples"],
                                confidence_level=ci["confidence_level"]) for name, p in probs.items()}  # fmt: skip
    rows = _findings_rows(Figure, y, probs, w if weighted else None, segs, worst, n_tests, confidence, intervals)
    return (
        '<section id="multicalibration"><h2>Multicalibration: the worst segments</h2>'
        f'<div class="scroll"><table class="mce"><thead><tr><th></th>{head}</tr></thead><tbody>{summary}</tbody>'
        "</table></div>"
        f'<p class="note">MCE is the largest ECCE / σ over the {segs.n_segments:,} segments (MCGrad paper, Tax et '
        "al. 2025, eq. 2; Guy et al. 2025), with its p-value, and that p-value Holm-adjusted for the "
        f"{n_tests:,} segments tested; the absolute MCE rescales it by the global σ and the relative one divides "
        "that by the rarer class's rate. Every segment's ECCE / σ against its size (dashed: p = 0.05 for one "
        "segment); the numbers are the rows of the table below.</p>"
        f'<div class="grid wide">{"".join(panels)}</div>'
        f"<h3>The worst segments, followed across every column</h3>{_findings_table(rows)}"
        f'<p class="note">{escape(findings_note(worst, n_tests, max_overlap))}. Similar: near-duplicates grouped '
        "under the row (<code>mcal.metrics.worst_segments</code>; <code>--all-segments</code> lists them). "
        f"Reliability: the segment's curve of each score column on 5 bins with {confidence:.0%} Wilson intervals"
        f"{f', for the first {MAX_THUMBNAIL_COLUMNS} score columns' if len(probs) > MAX_THUMBNAIL_COLUMNS else ''}"
        ", in the colour beside the column's name (those of the reliability diagram of every column). Red: fails "
        "after the Holm adjustment (p &lt; 0.05). Click a heading to sort the segments (by a column's heading: by "
        f"the smallest value among the segment's rows ascending, the largest descending).{capped}{_ci_note(ci)}"
        "</p></section>"
    )


def _feature_section(probs: dict, segs: Segments, results: dict) -> str:
    """Calibration error by value of each segment feature: every one-condition segment, in feature order, laid out
    as the worst segments are: a ``<tbody>`` per value, its facts spanning one row per score column."""
    single = np.flatnonzero(segs.depths == 1)
    if single.size == 0:
        return ""
    tables = {name: r.table.set_index("segment").loc[single] for name, r in results.items()}
    first = next(iter(tables.values()))
    span = f' rowspan="{len(tables)}"'
    groups = []
    for k in single:
        size = int(first.at[k, "size"])
        rows = []
        for j, (name, t) in enumerate(tables.items()):
            cells = (
                f'<th scope="row" class="score">{escape(name)}</th>{_num(t.at[k, "mean_prediction"])}'
                f'<td class="dir {t.at[k, "direction"]}">{t.at[k, "direction"] or "–"}</td>'
                + _num(t.at[k, "ecce_sigma"])
            )
            if j == 0:
                cells = (f'<td class="name"{span}>{escape(str(first.at[k, "description"]))}</td>'
                         f'<td class="num"{span} data-value="{size}">{size:,}</td>'
                         + _num(first.at[k, "mean_outcome"], attrs=span) + cells)  # fmt: skip
            rows.append(f'<tr data-score="{escape(name)}">{cells}</tr>')
        groups.append(f'<tbody data-segment="{int(k)}">{"".join(rows)}</tbody>')
    return (
        '<section id="features"><h2>Calibration by feature value</h2>'
        '<div class="scroll"><table class="features sortable grouped"><thead><tr><th class="left">feature value</th>'
        '<th>rows</th><th>observed</th><th class="left">score column</th><th>mean score</th><th>error</th>'
        f"<th>ECCE / σ</th></tr></thead>{''.join(groups)}</table></div>"
        '<p class="note">Every segment of one condition (one value, or one quantile range, of one feature), in '
        "feature order: the mean score of each score column against the observed rate, and its ECCE / σ. Click a "
        "heading to sort the values (by a column's heading: by the smallest value among the value's rows "
        "ascending, the largest descending).</p></section>"
    )

"""The multicalibration section of the report: MCE per column and the worst segments."""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd
from numpy.typing import NDArray

from mcal.metrics import (
    mce,
    segment_intervals,
)
from mcal.report._html import _ci_note, _figure_panel, _interval, _num, _svg_uri
from mcal.segments import Segments

#: Rows of the MCE summary table: attribute of :class:`mcal.metrics.MCEResult` and label.
_MCE_ROWS = (
    ("mce_sigma", "MCE (ECCE / σ of the worst segment)"),
    ("pvalue", "p-value"),
    ("mce_absolute", "MCE, absolute"),
    ("mce_relative", "MCE, relative to the rarer class"),
    ("mde", "minimum detectable error"),
    ("global_ecce_sigma", "global ECCE / σ"),
)


def _thumbnail(Figure: Any, y: NDArray, p: NDArray, w: NDArray | None, confidence: float) -> str:
    from mcal.plotting import plot_reliability_diagram

    ax = Figure(figsize=(1.6, 1.6)).add_subplot()
    plot_reliability_diagram(y, p, sample_weight=w, n_bins=5, confidence=confidence, ax=ax)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.set_xticks([0, 0.5, 1], labels=[])
    ax.set_yticks([0, 0.5, 1], labels=[])
    return _svg_uri(ax.figure)


def _worst_table(
    Figure: Any,
    y: NDArray,
    p: NDArray,
    w: NDArray | None,
    segs: Segments,
    result: Any,
    n_worst: int,
    confidence: float,
    intervals: pd.DataFrame | None,
) -> str:
    rows = []
    for rank, seg in enumerate(result.table.head(n_worst).itertuples(index=False), start=1):
        interval = None if intervals is None else tuple(intervals.loc[seg.segment])
        idx = segs.indices(int(seg.segment))
        thumb = (
            f'<img class="thumb" alt="reliability curve of the segment" '
            f'src="{_thumbnail(Figure, y[idx], p[idx], None if w is None else w[idx], confidence)}">'
            if seg.weight > 0
            else "–"
        )
        rows.append(
            f'<tr><td>{rank}</td><td>{escape(str(seg.description))}</td><td class="num">{seg.size:,}</td>'
            + _num(seg.ecce)
            + _num(seg.ecce_sigma, interval=interval)
            + _num(seg.pvalue)
            + f"<td>{thumb}</td></tr>"
        )
    return (
        '<table class="segments"><thead><tr><th>#</th><th>segment</th><th>rows</th><th>ECCE</th>'
        f"<th>ECCE / σ</th><th>p-value</th><th>reliability</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _segments_section(
    Figure: Any,
    y: NDArray,
    probs: dict,
    w: NDArray,
    weighted: bool,
    segs: Segments,
    n_worst: int,
    confidence: float,
    bar: Any,
    ci: dict | None,
) -> str:
    from mcal.plotting import plot_segment_errors

    results = {}
    for name, p in probs.items():
        results[name] = mce(y, p, segments=segs, sample_weight=w)
        bar.update()
    head = "".join(f"<th>{escape(n)}</th>" for n in probs)
    summary = "".join(
        f'<tr data-metric="{key}"><th scope="row">{label}</th>'
        + "".join(
            _num(getattr(r, key), interval=_interval(ci, name, key) if key == "mce_sigma" else None)
            for name, r in results.items()
        )
        + "</tr>"
        for key, label in _MCE_ROWS
    )
    panels = []
    for name, r in results.items():
        scatter = plot_segment_errors(r, n_labels=3, ax=Figure(figsize=(5.6, 3.4)).add_subplot())
        alt = f"ECCE / sigma against size of every segment of {name}"
        intervals = None if ci is None else segment_intervals(
            y, probs[name], segs, r.table["segment"].head(n_worst).tolist(), sample_weight=w,
            n_resamples=ci["n_resamples"], confidence_level=ci["confidence_level"])  # fmt: skip
        table = _worst_table(Figure, y, probs[name], w if weighted else None, segs, r, n_worst, confidence, intervals)
        panels.append(_figure_panel(name, _svg_uri(scatter.figure), alt, table))
    return (
        '<section id="multicalibration"><h2>Multicalibration: the worst segments</h2>'
        f'<table class="mce"><thead><tr><th></th>{head}</tr></thead><tbody>{summary}</tbody></table>'
        f'<p class="note">MCE is the largest ECCE / σ over the {segs.n_segments:,} segments (MCGrad paper, Tax et '
        "al. 2025, eq. 2; Guy et al. 2025), with its p-value (not adjusted for the number of segments); the "
        "absolute MCE rescales it by the global σ and the relative one divides that by the rarer class's rate. "
        "Below, for each column, every segment's ECCE / σ against its size (dashed: p = 0.05 for one segment), "
        f"and the {n_worst} worst segments with a {confidence:.0%}-interval reliability curve on 5 bins (axes 0 "
        f'to 1, dashed diagonal).{_ci_note(ci)}</p><div class="grid wide">{"".join(panels)}</div></section>'
    )

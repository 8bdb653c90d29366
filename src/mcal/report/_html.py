"""HTML building blocks of the report: page, header, tables, number cells and embedded figures."""

from __future__ import annotations

import base64
import datetime
import io
import math
from html import escape
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._shared.brownian import PVALUE_FLOOR
from mcal.report._findings import format_pvalue
from mcal.segments import Segments

#: Label, and which direction is better ("min", "max", "one" for closest to 1, None), of each summary column.
_METRICS: dict[str, tuple[str, str | None]] = {
    "log_loss": ("Log loss", "min"),
    "brier_score": ("Brier score", "min"),
    "roc_auc": ("ROC-AUC", "max"),
    "pr_auc": ("PR-AUC", "max"),
    "ece": ("ECE", "min"),
    "ecce": ("ECCE", "min"),
    "ecce_sigma_scale": ("ECCE / σ", "min"),
    "ecce_pvalue": ("ECCE p-value", None),
    "pcoc": ("PCOC", "one"),
    "f_rce": ("F-RCE", "min"),
    "mse": ("MSE", "min"),
    "mae": ("MAE", "min"),
    "mean_prediction": ("mean prediction", None),
    "mean_outcome": ("mean outcome", None),
    "accuracy": ("accuracy", "max"),
    "top_label_ece": ("top-label ECE", "min"),
    "classwise_ece": ("classwise ECE", "min"),
    "classwise_mce_sigma": ("classwise MCE (worst class, σ)", "min"),
    "top_label_mce_sigma": ("top-label MCE (σ)", "min"),
}

_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1d2330;
       margin: 0 auto; padding: 1.5rem 2rem 3rem; max-width: 1400px; background: #fff; }
h1 { font-size: 1.6rem; margin: 0 0 .6rem; } h2 { font-size: 1.25rem; margin: 2rem 0 .5rem;
     border-bottom: 2px solid #e3e7ef; padding-bottom: .2rem; } h3 { font-size: 1rem; margin: .2rem 0 .4rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1.2rem; margin: 0; }
dl.facts dt { color: #5a6478; } dl.facts dd { margin: 0; }
nav a { margin-right: 1rem; color: #2458a6; text-decoration: none; }
table { border-collapse: collapse; margin: .4rem 0; font-variant-numeric: tabular-nums; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid #e3e7ef; text-align: right; vertical-align: middle; }
th:first-child, td:first-child { text-align: left; } thead th { background: #f4f6fa; } td.num { white-space: nowrap; }
td.best { font-weight: 700; color: #11663a; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(380px, 1fr)); gap: 1rem 1.5rem; }
.grid.wide { grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); }
/* a segment name breaks between its conditions only, never inside one */
table.features td:first-child { text-align: left; white-space: nowrap; }
table.findings th.left { text-align: left; } table.findings td.name { text-align: left; min-width: 14rem; } span.cond { white-space: nowrap; }
table.findings tbody, table.features tbody { border-top: 2px solid #c9d1e0; }
table.findings th.score, table.features th.score { text-align: left; font-weight: 400; white-space: nowrap; }
table.findings td[rowspan], table.features td[rowspan] { vertical-align: top; } table.features th.left { text-align: left; }
.swatch { display: inline-block; width: .75em; height: .75em; margin-right: .4em; border-radius: 2px; }
.swatch.c0 { background: #1f77b4; } .swatch.c1 { background: #ff7f0e; } .swatch.c2 { background: #2ca02c; }
.swatch.c3 { background: #d62728; }
figure.panel { margin: 0; padding: .6rem; border: 1px solid #e3e7ef; border-radius: 6px; }
figure.panel img { width: 100%; height: auto; display: block; }
figcaption { font-weight: 600; margin-bottom: .3rem; overflow-wrap: anywhere; }
img.thumb { width: 120px; height: auto; display: block; }
details { margin-top: .4rem; } summary { cursor: pointer; color: #2458a6; }
p.note, .muted { color: #5a6478; } .num { font-variant-numeric: tabular-nums; }
.ci { font-size: 0.8em; color: #5a6478; }
footer { margin-top: 2.5rem; font-size: .9rem; color: #5a6478; }
.scroll { overflow-x: auto; max-width: 100%; } th.group { text-align: center; border-bottom: 2px solid #c9d1e0; }
td.dir.over { color: #a5361f; } td.dir.under { color: #1f5fa5; } td.fail { background: #fde8e8; font-weight: 700; }
table.sortable thead tr:last-child th { cursor: pointer; } table.sortable th[aria-sort]::after { content: " ⇅"; }
ul.verdict { padding-left: 1.2rem; } ul.verdict li { margin: .3rem 0; }
figure.overlay { max-width: 640px; }
"""

#: Sorts a ``table.sortable`` by the clicked column of its last header row (numbers by ``data-value``, else text).
#: A ``table.grouped`` holds a ``<tbody>`` per segment, whose first row spans the segment's cells over its rows (one
#: per score column): its groups move whole, by the smallest value among their rows ascending, the largest
#: descending, so that the segment of the worst column comes first.
_SCRIPT = """
var sortKey = function (cell) {
  var v = cell.getAttribute("data-value");
  var n = v === null ? parseFloat(cell.textContent.replace(/,/g, "")) : parseFloat(v);
  return isNaN(n) ? cell.textContent : n;
};
var compare = function (x, y) {
  return typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : typeof x === "number" ? -1 : 1;
};
var groupKey = function (body, col, up) {
  var first = body.rows[0], cell = first.cells[col];
  if (cell.rowSpan > 1) return sortKey(cell);
  var before = Array.prototype.slice.call(first.cells, 0, col).filter(function (c) { return c.rowSpan > 1; });
  var keys = Array.prototype.map.call(body.rows, function (row, k) {
    return sortKey(row.cells[k === 0 ? col : col - before.length]);
  }).sort(compare);
  return up ? keys[0] : keys[keys.length - 1];
};
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[table.tHead.rows.length - 1].cells, grouped = table.classList.contains("grouped");
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var parent = grouped ? table : table.tBodies[0];
      var items = Array.prototype.slice.call(grouped ? table.tBodies : table.tBodies[0].rows).map(function (item) {
        return [grouped ? groupKey(item, col, up) : sortKey(item.cells[col]), item];
      });
      items.sort(function (a, b) { return up ? compare(a[0], b[0]) : -compare(a[0], b[0]); });
      items.forEach(function (item) { parent.appendChild(item[1]); });
    });
  });
});
"""


# ----------------------------------------------------------------------------------------------- formatting


def _num(
    value: float, digits: int = 4, css: str = "num", interval: tuple[float, float] | None = None, attrs: str = ""
) -> str:
    """A table cell: the value rounded for reading, the exact value in ``data-value`` for machines; an
    ``interval`` (low, high) follows it in brackets, ``0.288 [0.282, 0.297]``, and is kept in
    ``data-low``/``data-high``; ``attrs`` are more attributes of the cell (e.g. ``' rowspan="3"'``)."""
    value = float(value)
    if math.isnan(value):
        return f'<td class="{css}"{attrs} data-value="nan">–</td>'
    if interval is None:
        return f'<td class="{css}"{attrs} data-value="{value!r}">{value:.{digits}g}</td>'
    low, high = (float(v) for v in interval)
    shown = "[–]" if math.isnan(low) else f"[{low:.3g}, {high:.3g}]"
    return (
        f'<td class="{css}"{attrs} data-value="{value!r}" data-low="{low!r}" data-high="{high!r}">{value:.{digits}g}'
        f' <span class="ci">{shown}</span></td>'
    )


def _pvalue_cell(pvalue: float, floor: float = PVALUE_FLOOR) -> str:
    """A p-value cell that never reads 0: ``< floor`` below the precision of the Brownian-range tail."""
    text = format_pvalue(float(pvalue), floor=floor)
    return f'<td class="num" data-value="{float(pvalue)!r}">{escape(text)}</td>'


def _interval(ci: dict | None, name: str, metric: str) -> tuple[float, float] | None:
    """The bootstrap interval of ``metric`` for score column ``name`` from ``ci["table"]``, if there is one."""
    if ci is None or f"{metric}_low" not in ci["table"].columns:
        return None
    return ci["table"].loc[name, f"{metric}_low"], ci["table"].loc[name, f"{metric}_high"]


def _ci_note(ci: dict | None) -> str:
    if ci is None:
        return ""
    return (
        f" After a value, in brackets, its {ci['confidence_level']:.0%} bootstrap interval ({ci['n_resamples']} resamples of "
        "the rows with their weights; <code>mcal.metrics.bootstrap</code>): percentile for the log loss, Brier "
        "score, ROC-AUC, PR-AUC and PCOC; basic for ECE, ECCE, MCE and F-RCE, which are biased upwards: the "
        "percentile interval reflected around the value, which corrects that bias, so it may lie below the value, "
        "down to 0."
    )


def _best(values: pd.Series, rule: str | None) -> set[str]:
    finite = values.dropna()
    if rule is None or finite.empty or len(values) < 2:
        return set()
    key = {"min": finite, "max": -finite, "one": (finite - 1.0).abs()}[rule]
    return set(key.index[key == key.min()])


def _svg_uri(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _figure_panel(name: str, uri: str, alt: str, extra: str = "") -> str:
    return (
        f'<figure class="panel" data-score="{escape(name)}"><figcaption>{escape(name)}</figcaption>'
        f'<img alt="{escape(alt)}" src="{uri}">{extra}</figure>'
    )


# ----------------------------------------------------------------------------------------------- sections


def _header(
    title: str,
    description: str | None,
    y: NDArray,
    w: NDArray,
    weighted: bool,
    probs: dict,
    field_name: Any,
    fields: tuple[NDArray, NDArray] | None,
    segs: Segments | None,
    rate: str = "Positive rate",
) -> str:
    from mcal import __version__

    total = float(w.sum())
    facts = [
        ("Data", escape(description) if description else '<span class="muted">not described</span>'),
        ("Rows", f"{y.shape[0]:,}"),
        ("Weights", f"sample weights, total {total:,.6g}" if weighted else "none (every row counts once)"),
        (rate, f"{float(np.dot(w, y)) / total:.4g}" + (" (weighted)" if weighted else "")),
        ("Score columns", ", ".join(escape(n) for n in probs)),
    ]
    if fields is not None:
        name = "field" if field_name is None else str(field_name)
        facts.append(("Field", f"{escape(name)} ({len(fields[1]):,} values)"))
    if segs is not None:
        capped = " (capped)" if segs.capped else ""
        facts.append(("Segments", f"{segs.n_segments:,}{capped}"))
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    facts += [("Created", created), ("mcal version", escape(__version__))]
    rows = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    return f'<header id="header"><h1>{escape(title)}</h1><dl class="facts">{rows}</dl></header>'


def _metrics_section(summary: pd.DataFrame, n_bins: int, ci: dict | None = None, note: str | None = None) -> str:
    head = "".join(f"<th>{escape(n)}</th>" for n in summary.index)
    body = []
    for column in summary.columns:
        label, rule = _METRICS.get(column, (column, None))
        best = _best(summary[column], rule)
        if str(column).endswith("pvalue"):  # "< 1e-15" below the floor, never "0"
            cells = "".join(_pvalue_cell(v) for v in summary[column])
        else:
            cells = "".join(_num(v, css="num best" if name in best else "num", interval=_interval(ci, name, column))
                            for name, v in summary[column].items())  # fmt: skip
        body.append(f'<tr data-metric="{escape(column)}"><th scope="row">{escape(label)}</th>{cells}</tr>')
    return (
        '<section id="metrics"><h2>Core metrics</h2>'
        f'<div class="scroll"><table class="metrics"><thead><tr><th>metric</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
        + '<p class="note">'
        + (
            note
            or f"From <code>mcal.metrics.calibration_summary</code>. ECE on {n_bins} equal-width bins; "
            "ECCE is the range of the cumulative differences (no bins), ECCE / σ its size in standard deviations "
            "under perfect calibration, with its p-value; PCOC is mean score over mean label (1 is calibrated in the "
            "large)."
        )
        + f" Bold marks the best column of a row.{_ci_note(ci)}</p></section>"
    )


def _page(title: str, header: str, sections: list[str]) -> str:
    from mcal import __version__

    nav = "".join(
        f'<a href="#{sid}">{label}</a>'
        for sid, label in (
            ("verdict", "Verdict"),
            ("metrics", "Metrics"),
            ("reliability", "Reliability"),
            ("cumulative", "Cumulative"),
            ("multicalibration", "Segments"),
            ("features", "Features"),
            ("values", "Values"),
            ("fields", "Fields"),
        )
        if f'<section id="{sid}"' in "".join(sections)
    )
    footer = (
        '<footer id="notes">Made by mcal ' + escape(__version__) + ". Intervals: Wilson (1927) score intervals. "
        "ECCE: Arrieta-Ibarra, Gujral, Tannen, Tygert, Xu, JMLR 23(351), 2022; MCGrad (Tax et al. 2025), eq. 1. "
        "MCE: MCGrad, eq. 2, and Guy et al., arXiv 2506.11251, 2025. "
        "PCOC and F-RCE: MCNet (Dai et al. 2025), eq. 3-4. Multiple testing: Holm, Scand. J. Statist. 6(2), 1979. "
        "This file is self-contained (its one script sorts tables) and needs no network.</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="mcal {escape(__version__)}"><title>{escape(title)}</title>'
        f"<style>{_CSS}</style></head><body>{header}<nav>{nav}</nav>{''.join(sections)}{footer}"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )

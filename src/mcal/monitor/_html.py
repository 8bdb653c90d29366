"""The monitoring page: one self-contained HTML file with a time series per metric of a :class:`MonitorResult`.

Figures are PNG images embedded as base64 data URIs and the CSS is inline: no scripts and nothing fetched, so the
file opens offline. The page only lays out the numbers of :func:`mcal.monitor.monitor`.
"""

from __future__ import annotations

import base64
import datetime
import io
import math
import os
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mcal._constraints import OPTIONAL_STR, Instance, validate_params
from mcal._monitoring.windows import MonitorResult
from mcal._optional import import_optional
from mcal._persistence import atomic_write_bytes, check_output_path
from mcal._shared.per_value import per_value_html
from mcal.metrics import PerValueTable

_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}"
    "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em}.muted{color:#777}"
    "dl.facts{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:600}"
    ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:1em}"
    "figure{margin:0}figure img{width:100%}figcaption{font-weight:600}"
    "table{border-collapse:collapse;font-size:.85em}td,th{padding:.2em .6em;border-bottom:1px solid #ddd}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}tr.alarm td{background:#fde2e2}"
    ".alarm{color:#b00020;font-weight:600}.ok{color:#1b7f3b;font-weight:600}p.note{color:#777}"
)

#: P(R > 2.4977) = 0.05 for the range R of standard Brownian motion on [0, 1], the null distribution of ECCE / sigma
#: (:func:`mcal.metrics.ecce_pvalue` of a window at this value is 0.05).
_RANGE_95 = 2.4977

#: The table columns shown on the page, with their headings.
_COLUMNS = {
    "window_start": "window start", "n_samples": "rows", "weight": "weight", "log_loss": "log loss",
    "ecce_sigma_scale": "ECCE / σ", "ecce_pvalue": "ECCE p", "pcoc": "PCOC", "mce_sigma": "MCE / σ",
    "mce_pvalue": "MCE p", "mce_pvalue_adjusted": "MCE p (Holm)", "log10_evalue": "log10 e-value",
}  # fmt: skip


@validate_params({
    "result": Instance(MonitorResult, rule="a MonitorResult (from mcal.monitor.monitor)"),
    "title": OPTIONAL_STR,
    "description": OPTIONAL_STR,
})  # fmt: skip
def monitor_report(
    result: MonitorResult,
    path: str | os.PathLike,
    *,
    title: str | None = None,
    description: str | None = None,
    per_value: Mapping[str, Any] | None = None,
) -> Path:
    """Write a self-contained HTML page of a monitoring result: a time series per metric and the per-window table.

    Parameters
    ----------
    result : MonitorResult
        From :func:`mcal.monitor.monitor` (or ``mcal.dask.monitor``).
    path : str or path-like
        The HTML file to write, atomically (a failure leaves no partial file).
    title : str, default=None
        Page title; "Calibration monitor" when None.
    description : str, default=None
        What the data is, shown in the header.
    per_value : mapping of str to PerValueTable, default=None
        :func:`mcal.metrics.per_value_table` of the latest window's rows, by score column: adds the section
        "Calibration per value" after the per-window table (as ``mcal monitor --segments`` prints it).

    Returns
    -------
    path : Path
        The file written.

    Raises
    ------
    FileNotFoundError, IsADirectoryError
        If the folder of ``path`` does not exist, or ``path`` is a folder.
    TypeError
        If ``per_value`` is not a non-empty mapping of names to :class:`mcal.metrics.PerValueTable`.
    ImportError
        If matplotlib is not installed.

    Notes
    -----
    Plots: the log loss and PCOC with their normal intervals; ECCE / sigma with its bootstrap interval, over the
    band that the range of a Brownian motion stays below with probability 0.95 (where a calibrated window lies 95%
    of the time); the MCE / sigma with its bootstrap interval, with segments; and the e-process with
    its alarm threshold ``1 / alpha``, both as base-10 logarithms.
    """
    path = check_output_path(path, "path")
    if per_value is not None and (not isinstance(per_value, Mapping) or not per_value
                                  or not all(isinstance(t, PerValueTable) for t in per_value.values())):  # fmt: skip
        raise TypeError(f"per_value must be a mapping of score column names to PerValueTable; got {per_value!r:.100}")
    Figure = import_optional("matplotlib.figure").Figure
    table = result.table
    metrics = ("log_loss", "ecce_sigma_scale", "pcoc", "mce_sigma", "log10_evalue")
    figures = [_figure(Figure, table, name, result) for name in metrics if name in table.columns]
    title = title or "Calibration monitor"
    body = _header(title, description, result) + '<section id="plots"><h2>Metrics per window</h2><div class="grid">'
    body += "".join(figures) + "</div></section>" + _table(table)
    if per_value is not None:
        body += per_value_html(per_value, "In the latest window, ")
    mce_note = (
        "MCE p: the worst segment's p-value, not adjusted for the number of segments; MCE p (Holm): "
        "adjusted for the window's segments by Holm's method (not for the number of windows). "
    )
    footer = (
        '<footer><p class="muted">Made by mcal. Windows without rows are left out. Intervals: normal, from '
        "linearisation standard errors (log loss, PCOC), basic bootstrap (ECCE / σ, MCE: the percentile interval "
        "reflected around the value, which corrects their upward bias, so it may lie below the value, down "
        "to 0). "
        + (mce_note if "mce_pvalue" in table.columns else "")
        + "ECCE: Arrieta-Ibarra et al., JMLR 23(351), 2022. MCE: Guy et al., arXiv 2506.11251. Drift alarm: a "
        "mixture of likelihood-ratio test martingales (Henzi and Ziegel, Biometrika 2022; Ramdas et al., "
        "Statistical Science 2023), valid at every window. This file is self-contained and needs no network."
        "</p></footer>"
    )
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>' + escape(title) + "</title><style>"
        + _CSS + "</style></head><body>" + body + footer + "</body></html>\n"
    )  # fmt: skip
    atomic_write_bytes(path, page.encode("utf-8"))
    return path


def _header(title: str, description: str | None, result: MonitorResult) -> str:
    table = result.table
    if result.alarm:
        verdict = f'<span class="alarm">fired in the window starting {escape(_when(result.alarm_window))}</span>'
    else:
        verdict = '<span class="ok">not fired</span>'
    facts = [
        ("Data", escape(description) if description else '<span class="muted">not described</span>'),
        ("Rows", f"{int(table['n_samples'].sum()):,} in {len(table):,} windows of {escape(result.window)}"),
        ("Drift alarm", f"{verdict} (level α = {result.alpha:g}: e-value ≥ {1 / result.alpha:g})"),
        ("Intervals", f"{result.confidence_level:.0%}"),
        ("Created", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")),
    ]
    rows = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
    return f'<header><h1>{escape(title)}</h1><dl class="facts">{rows}</dl></header>'


def _when(value: Any) -> str:
    return str(pd.Timestamp(value)) if isinstance(value, (np.datetime64, pd.Timestamp)) else f"{value:g}"


def _figure(Figure: Any, table: pd.DataFrame, name: str, result: MonitorResult) -> str:
    fig = Figure(figsize=(6.4, 3.2))
    ax = fig.subplots()
    x = table["window_start"].to_numpy()
    values = table[name].to_numpy(np.float64)
    caption = {"log_loss": "Log loss", "ecce_sigma_scale": "ECCE / σ", "pcoc": "PCOC", "mce_sigma": "MCE / σ",
               "log10_evalue": "Drift e-process (log10)"}[name]  # fmt: skip
    if f"{name}_low" in table.columns:
        ax.fill_between(x, table[f"{name}_low"], table[f"{name}_high"], alpha=0.25, step="mid",
                        label=f"{result.confidence_level:.0%} interval")  # fmt: skip
    if name == "pcoc":
        ax.axhline(1.0, color="0.4", lw=0.8, ls="--")
    if name == "ecce_sigma_scale":
        ax.axhspan(0.0, _RANGE_95, color="tab:green", alpha=0.12, label="95% of calibrated windows")
    if name == "log10_evalue":  # the log of the e-value, finite however strong the evidence
        ax.axhline(math.log10(1.0 / result.alpha), color="tab:red", lw=1.0, ls="--",
                   label=f"alarm at 1/α = {1 / result.alpha:g}")  # fmt: skip
    ax.plot(x, values, marker="o", ms=3, lw=1.2, color="tab:blue")
    if result.alarm:
        ax.axvline(result.alarm_window, color="tab:red", lw=0.8, alpha=0.6)
    ax.set_title(caption, fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="best")
    fig.autofmt_xdate()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    uri = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    return (
        f'<figure data-metric="{name}"><figcaption>{caption}</figcaption>'
        f'<img alt="{caption} per window" src="{uri}"></figure>'
    )


def _table(table: pd.DataFrame) -> str:
    columns = [c for c in _COLUMNS if c in table.columns]
    head = "".join(f"<th>{escape(_COLUMNS[c])}</th>" for c in columns)
    body = []
    for _, row in table.iterrows():
        cells = "".join(_cell(row[c]) for c in columns)
        body.append(f"<tr{' class=alarm' if row['alarm'] else ''}>{cells}</tr>")
    return f'<section id="windows"><h2>Windows</h2><table><tr>{head}</tr>{"".join(body)}</table></section>'


def _cell(value: Any) -> str:
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return f"<td>{escape(str(pd.Timestamp(value)))}</td>"
    value = float(value)
    shown = "–" if math.isnan(value) else f"{value:.4g}"
    return f'<td class="num" data-value="{value!r}">{shown}</td>'

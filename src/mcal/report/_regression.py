"""The HTML report of real-valued predictions (``make_report(..., outcome="regression")``)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._optional import import_optional
from mcal._persistence import atomic_write_bytes
from mcal._shared.brownian import PVALUE_FLOOR
from mcal._shared.segments import check_categorical_use, resolve_segments
from mcal.metrics import mce, regression_summary, reliability_curve
from mcal.report._checks import _check_inputs
from mcal.report._html import _figure_panel, _header, _metrics_section, _num, _page, _svg_uri
from mcal.report._per_value import per_value_section
from mcal.report._segments import _pvalue_cell

#: Rows of the MCE table of real outcomes (the relative scales need a prevalence).
_MCE_ROWS = (("mce_sigma", "MCE (ECCE / σ of the worst segment)"), ("pvalue", "p-value"),
             ("mce_absolute", "MCE, absolute (outcome units)"), ("mde", "minimum detectable error"),
             ("global_ecce_sigma", "global ECCE / σ"))  # fmt: skip
_NOTE = (
    "From <code>mcal.metrics.regression_summary</code>: weighted MSE and MAE, mean prediction and mean outcome; "
    "ECCE is the range of the cumulative differences of outcome minus prediction in prediction order (outcome "
    "units), ECCE / σ its size in standard deviations, σ estimated from successive differences of the residuals "
    "(Guy et al. 2025, eq. 6; as mcgrad 0.1.5), with its p-value."
)


def regression_report(
    y_true: ArrayLike, y_preds: Mapping[str, ArrayLike], *, path: Path, X: Any, segments: Any,
    categorical_features: Any, sample_weight: ArrayLike | None, title: str | None, description: str | None,
    n_bins: int, n_worst_segments: int, per_value: Mapping[str, Any] | None = None,
) -> Path:  # fmt: skip
    """Write the report of real predictions to ``path`` (checked by :func:`mcal.report.make_report`)."""
    y, preds, w = _check_inputs(y_true, y_preds, sample_weight, "regression")
    check_categorical_use(categorical_features, X, segments)
    segs = None if X is None and segments is None else resolve_segments(X, segments, y.shape[0], categorical_features)
    Figure = import_optional("matplotlib.figure").Figure
    weighted = sample_weight is not None
    sections = [_metrics_section(regression_summary(y, preds, sample_weight=w), n_bins, note=_NOTE),
                _reliability_section(Figure, y, preds, w, n_bins), _cumulative_section(Figure, y, preds, w)]  # fmt: skip
    if segs is not None:
        sections.append(_segments_section(y, preds, w, segs, n_worst_segments))
    if per_value is not None:
        sections.append(per_value_section(per_value))
    name = title or "Calibration report"
    header = _header(name, description, y, w, weighted, preds, None, None, segs, rate="Mean outcome")
    atomic_write_bytes(path, _page(name, header, sections).encode("utf-8"))
    return path


def _reliability_section(Figure: Any, y: NDArray, preds: dict, w: NDArray, n_bins: int) -> str:
    from mcal.plotting import plot_reliability_diagram

    panels = []
    for name, p in preds.items():
        ax = plot_reliability_diagram(y, p, sample_weight=w, n_bins=n_bins, outcome="regression",
                                      ax=Figure(figsize=(4.4, 4.4)).add_subplot())  # fmt: skip
        curve = reliability_curve(y, p, sample_weight=w, n_bins=n_bins, outcome="regression")
        rows = "".join(
            f'<tr><td class="num">{curve.count[k]:,}</td>' + _num(curve.mean_predicted[k]) + _num(curve.mean_outcome[k])
            + "</tr>" for k in np.flatnonzero(~curve.empty)
        )  # fmt: skip
        table = (
            '<details><summary>numbers per bin</summary><table class="bins"><thead><tr><th>rows</th>'
            f"<th>mean prediction</th><th>mean outcome</th></tr></thead><tbody>{rows}</tbody></table></details>"
        )
        panels.append(
            _figure_panel(name, _svg_uri(ax.figure), f"Mean outcome against mean prediction of {name}", table)
        )
    return (
        '<section id="reliability"><h2>Reliability diagrams</h2>'
        f'<p class="note">Mean outcome against mean prediction in {n_bins} equal-width bins of the prediction range '
        "(empty bins left out). A calibrated model stays on the dashed diagonal.</p>"
        f'<div class="grid">{"".join(panels)}</div></section>'
    )


def _cumulative_section(Figure: Any, y: NDArray, preds: dict, w: NDArray) -> str:
    from mcal.plotting import plot_cumulative_differences

    axes = {
        name: plot_cumulative_differences(y, p, sample_weight=w, outcome="regression",
                                          ax=Figure(figsize=(4.4, 3.8)).add_subplot())
        for name, p in preds.items()
    }  # fmt: skip
    low, high = min(ax.get_ylim()[0] for ax in axes.values()), max(ax.get_ylim()[1] for ax in axes.values())
    panels = []
    for name, ax in axes.items():
        ax.set_ylim(low, high)  # one vertical scale, so that the columns compare at a glance
        panels.append(
            _figure_panel(
                name, _svg_uri(ax.figure), f"Cumulative differences between outcomes and predictions of {name}"
            )
        )
    return (
        '<section id="cumulative"><h2>Cumulative differences (ECCE)</h2>'
        '<p class="note">The running sum of outcome minus prediction, in prediction order, divided by the total '
        "weight (Arrieta-Ibarra et al. 2022), in the outcome's units. No bins: ECCE is the curve's range. A slope "
        "over a stretch of predictions is miscalibration there (up: outcomes above the predictions); a calibrated "
        "model wanders like Brownian motion, and the black bar at the origin is the range it exceeds with "
        "probability 5%, σ estimated from successive differences of the residuals. The panels share one vertical "
        "scale.</p>"
        f'<div class="grid">{"".join(panels)}</div></section>'
    )


def _segments_section(y: NDArray, preds: dict, w: NDArray, segs: Any, n_worst: int) -> str:
    results = {name: mce(y, p, segments=segs, sample_weight=w, outcome="regression") for name, p in preds.items()}
    head = "".join(f"<th>{escape(n)}</th>" for n in preds)
    summary = "".join(
        f'<tr data-metric="{key}"><th scope="row">{label}</th>'
        + "".join(_pvalue_cell(r.pvalue, PVALUE_FLOOR) if key == "pvalue" else _num(getattr(r, key))
                  for r in results.values()) + "</tr>"
        for key, label in _MCE_ROWS
    )  # fmt: skip
    panels = []
    for name, r in results.items():
        rows = "".join(
            f"<tr><td>{rank}</td><td>{escape(str(seg.description))}</td><td class=\"num\">{seg.size:,}</td>"
            + _num(seg.ecce) + _num(seg.ecce_sigma) + _pvalue_cell(seg.pvalue, PVALUE_FLOOR) + "</tr>"
            for rank, seg in enumerate(r.table.head(n_worst).itertuples(index=False), start=1)
        )  # fmt: skip
        panels.append(
            f'<figure class="panel" data-score="{escape(name)}"><figcaption>{escape(name)}</figcaption>'
            '<table class="segments"><thead><tr><th>#</th><th>segment</th><th>rows</th><th>ECCE</th>'
            f"<th>ECCE / σ</th><th>p-value</th></tr></thead><tbody>{rows}</tbody></table></figure>"
        )
    return (
        '<section id="multicalibration"><h2>Multicalibration: the worst segments</h2>'
        f'<table class="mce"><thead><tr><th></th>{head}</tr></thead><tbody>{summary}</tbody></table>'
        f'<p class="note">MCE is the largest ECCE / σ over the {segs.n_segments:,} segments (MCGrad paper, eq. 2; Guy '
        "et al. 2025), σ of each segment from successive differences of its residuals, with its p-value (not "
        f"adjusted for the number of segments); below, the {n_worst} worst segments of each column.</p>"
        f'<div class="grid wide">{"".join(panels)}</div></section>'
    )

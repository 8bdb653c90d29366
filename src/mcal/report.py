"""One self-contained HTML calibration report: metrics tables and figures for several score columns side by side.

The report is a single file with every figure embedded (SVG, as base64 data URIs) and its CSS inline: no scripts,
no fonts or images fetched from anywhere, so it opens offline in any browser. Figures are drawn from binned or
thinned summaries (:func:`mcal.metrics.reliability_intervals`, :func:`mcal.metrics.cumulative_curve`), never from
raw points, so the file stays small however many rows there are. Numbers come from :mod:`mcal.metrics`; this module
only lays them out, and :mod:`mcal.plotting` draws.
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
from numpy.typing import ArrayLike, NDArray

from mcal._optional import import_optional
from mcal._persistence.files import atomic_write_bytes
from mcal._progress import progress as progress_bar
from mcal._validation import (
    OUTCOMES,
    check_both_classes,
    check_choice,
    check_consistent,
    check_positive_int,
    check_sample_weight,
    check_y_prob,
    check_y_real,
    check_y_true,
)
from mcal.metrics import (
    calibration_summary,
    field_pcoc,
    mce,
    reliability_intervals,
    segment_intervals,
    summary_intervals,
)
from mcal.metrics.helpers import check_categorical_use, encode_field, resolve_segments
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
}

#: At most this many field values (the largest by weight) get a row of the per-field table.
_MAX_FIELD_ROWS = 50

#: Rows of the MCE summary table: attribute of :class:`mcal.metrics.MCEResult` and label.
_MCE_ROWS = (
    ("mce_sigma", "MCE (ECCE / σ of the worst segment)"),
    ("pvalue", "p-value"),
    ("mce_absolute", "MCE, absolute"),
    ("mce_relative", "MCE, relative to the rarer class"),
    ("mde", "minimum detectable error"),
    ("global_ecce_sigma", "global ECCE / σ"),
)

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
table.segments td:nth-child(2) { text-align: left; max-width: 16rem; overflow-wrap: anywhere; }
figure.panel { margin: 0; padding: .6rem; border: 1px solid #e3e7ef; border-radius: 6px; }
figure.panel img { width: 100%; height: auto; display: block; }
figcaption { font-weight: 600; margin-bottom: .3rem; overflow-wrap: anywhere; }
img.thumb { width: 120px; height: auto; display: block; }
details { margin-top: .4rem; } summary { cursor: pointer; color: #2458a6; }
p.note, .muted { color: #5a6478; } .num { font-variant-numeric: tabular-nums; }
.ci { font-size: 0.8em; color: #5a6478; }
footer { margin-top: 2.5rem; font-size: .9rem; color: #5a6478; }
"""


def make_report(
    y_true: ArrayLike,
    y_probs: Mapping[str, ArrayLike],
    *,
    path: str | os.PathLike,
    X: Any = None,
    segments: Any = None,
    categorical_features: Any = "from_dtype",
    field: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    title: str | None = None,
    description: str | None = None,
    n_bins: int = 10,
    confidence: float = 0.95,
    n_worst_segments: int = 10,
    n_resamples: int = 0,
    progress: bool | None = False,
    outcome: str = "classification",
) -> Path:
    """Write a self-contained HTML report comparing the calibration of several score columns.

    For every score column, side by side: the core metrics (:func:`mcal.metrics.calibration_summary`), a
    reliability diagram with a Wilson interval per bin and the score histogram beneath, and the cumulative
    differences plot behind ECCE; with segments (``X`` or ``segments``), the multicalibration error
    (:func:`mcal.metrics.mce`) with its p-value and the worst segments, each with a small reliability curve; with
    a ``field``, F-RCE and PCOC per field value (:func:`mcal.metrics.field_pcoc`). A header says what data, how
    many rows and what weights, when and with which mcal version.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels (0/1 or bool), both classes present, at least 2 rows.
    y_probs : mapping of str to array-like of shape (n_samples,)
        Score columns (probabilities in [0, 1]) by name, in the order they are shown, e.g.
        ``{"uncalibrated": p, "isotonic": p_iso}``.
    path : str or path-like
        The HTML file to write, in an existing folder. Nothing is written unless the whole report succeeds.
    X : DataFrame or array-like of shape (n_samples, n_features), default=None
        Features to generate segments from (:func:`mcal.segments.generate_segments` at its defaults: up to 3
        conditions per segment, at most 1000 segments); adds the multicalibration section.
    segments : Segments or array-like of bool of shape (n_samples, n_segments), default=None
        Prespecified segments instead of ``X`` (e.g. :func:`mcal.segments.generate_segments` with other
        settings, or :func:`mcal.segments.from_labels`).
    categorical_features : "from_dtype", None, or 1-D array-like of int, bool or str, default="from_dtype"
        Which columns of ``X`` the generated segments treat as categorical, as in :func:`mcal.metrics.mce`
        (e.g. to declare an integer-coded column categorical). Only with ``X``.
    field : array-like of shape (n_samples,), default=None
        Field (context) of each row, e.g. a country or an ad slot; adds F-RCE and per-field PCOC.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; every number and figure is weighted.
    title : str, default=None
        Page title; "Calibration report" when None.
    description : str, default=None
        What the data is (e.g. the file it came from), shown in the header.
    n_bins : int, default=10
        Equal-width bins of the ECE and of the reliability diagrams.
    confidence : float, default=0.95
        Level of the per-bin Wilson intervals.
    n_worst_segments : int, default=10
        Segments listed, worst first, for each score column.
    n_resamples : int, default=0
        Bootstrap resamples of the intervals (level ``confidence``) shown beneath the core metrics, the MCE and
        the worst segments' ECCE / σ (:func:`mcal.metrics.summary_intervals` and
        :func:`mcal.metrics.segment_intervals`, fixed seed); 0 shows none. Each interval costs ``n_resamples``
        evaluations of its metric.
    progress : bool or None, default=False
        Progress bar on standard error: None shows it on a terminal only (see :mod:`mcal._progress`).
    outcome : {"classification", "regression"}, default="classification"
        ``"regression"``: ``y_true`` holds real outcomes and the columns real predictions; the report then shows
        :func:`mcal.metrics.regression_summary`, a diagram of mean outcome against mean prediction per column
        (``n_bins`` equal-width bins on the range of the predictions) and, with segments, the regression MCE and
        the worst segments; ``field`` and ``confidence`` do not apply (``field`` must be None).

    Returns
    -------
    path : Path
        The file written.

    Raises
    ------
    ValueError
        On invalid labels, scores, weights, field or segments (the message names the score column), fewer than
        2 rows, a single class, an empty ``y_probs``, both ``X`` and ``segments``, ``categorical_features``
        without ``X`` or invalid for it, or invalid ``n_bins`` / ``confidence`` / ``n_worst_segments``.
    TypeError
        If ``y_probs`` is not a mapping with string keys, ``title`` / ``description`` are not strings, or
        ``n_bins`` / ``n_worst_segments`` are not integers.
    FileNotFoundError
        If the folder of ``path`` does not exist.
    ImportError
        If matplotlib is not installed (``pip install 'mcal[plot]'``).

    See Also
    --------
    mcal.metrics.reliability_intervals, mcal.plotting.plot_cumulative_differences, mcal.metrics.mce

    Notes
    -----
    Every figure is an SVG of a few tens of kilobytes drawn from summaries: per-bin totals for the reliability
    diagrams and histograms, the cumulative walk thinned to 2000 points (keeping its extremes) for ECCE, and 5 bins
    for each worst segment, so the file size does not depend on ``n_samples``.

    References
    ----------
    .. [1] E. B. Wilson, JASA 22(158), 1927 (the per-bin intervals).
    .. [2] Arrieta-Ibarra, Gujral, Tannen, Tygert, Xu, JMLR 23(351), 2022 (ECCE and the cumulative plot).
    .. [3] Tax et al., "MCGrad: Multicalibration at Web Scale", arXiv 2509.19884, eq. 1-2 (ECCE, MCE).
    .. [4] Dai et al., "MCNet", WWW 2025, arXiv 2503.00334, eq. 3-4 and Table 3 (PCOC, F-RCE, field PCOC).

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500); y = rng.uniform(size=500) < p
    >>> out = make_report(y, {"model": p}, path=tempfile.mkdtemp() + "/report.html")
    >>> out.read_text().startswith("<!DOCTYPE html>")
    True
    """
    path = _check_path(path)
    for name, value in (("title", title), ("description", description)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a string or None; got {type(value).__name__}")
    check_choice("outcome", outcome, OUTCOMES)
    if outcome == "regression":
        from mcal._report_regression import regression_report

        if field is not None:
            raise ValueError(
                "field must be None for outcome='regression' (PCOC and F-RCE are for binary labels); got a field"
            )
        return regression_report(
            y_true,
            y_probs,
            path=path,
            X=X,
            segments=segments,
            categorical_features=categorical_features,
            sample_weight=sample_weight,
            title=title,
            description=description,
            n_bins=n_bins,
            n_worst_segments=n_worst_segments,
        )
    y, probs, w = _check_inputs(y_true, y_probs, sample_weight)
    check_positive_int("n_worst_segments", n_worst_segments)
    check_positive_int("n_resamples", n_resamples, minimum=0)
    fields = None if field is None else encode_field(field, y.shape[0])
    check_categorical_use(categorical_features, X, segments)  # refused without X, where no segments are generated
    segs = None if X is None and segments is None else resolve_segments(X, segments, y.shape[0], categorical_features)
    Figure = import_optional("matplotlib.figure").Figure
    summary = calibration_summary(y, probs, sample_weight=w, field=None if fields is None else fields[0], n_bins=n_bins)
    weighted = sample_weight is not None
    ci = None
    if n_resamples:
        ci = {"n_resamples": n_resamples, "confidence_level": confidence}
        ci["table"] = summary_intervals(y, probs, sample_weight=w, field=None if fields is None else fields[0],
                                        segments=segs, n_bins=n_bins, **ci)  # fmt: skip
    sections = [_metrics_section(summary, n_bins, ci)]
    steps = (2 + (segs is not None)) * len(probs)
    with progress_bar(steps, "report", enabled=progress, unit="step") as bar:
        sections.append(_reliability_section(Figure, y, probs, w, weighted, n_bins, confidence, bar))
        sections.append(_cumulative_section(Figure, y, probs, w, bar))
        if segs is not None:
            sections.append(_segments_section(Figure, y, probs, w, weighted, segs, n_worst_segments, confidence, bar,
                                              ci))  # fmt: skip
    if fields is not None:
        sections.append(_field_section(y, probs, w, fields, summary))
    field_name = getattr(field, "name", None) if isinstance(field, pd.Series) else None
    header = _header(title or "Calibration report", description, y, w, weighted, probs, field_name, fields, segs)
    document = _page(title or "Calibration report", header, sections)
    atomic_write_bytes(path, document.encode("utf-8"))
    return path


# ----------------------------------------------------------------------------------------------- validation


def _check_path(path: Any) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like; got {type(path).__name__}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"path must name a file; got the folder {path}")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"path must be in an existing folder; got {path} (no folder {path.parent})")
    return path


def _check_inputs(
    y_true: ArrayLike,
    y_probs: Mapping[str, ArrayLike],
    sample_weight: ArrayLike | None,
    outcome: str = "classification",
) -> tuple[NDArray[np.float64], dict[str, NDArray[np.float64]], NDArray[np.float64]]:
    if not isinstance(y_probs, Mapping):
        raise TypeError(
            f"y_probs must be a mapping of names to score arrays, e.g. {{'model': p}}; got {type(y_probs).__name__}"
        )
    if not y_probs:
        raise ValueError("y_probs must name at least one score column; got none")
    bad = [k for k in y_probs if not isinstance(k, str)]
    if bad:
        raise TypeError(f"y_probs keys must be strings (score column names); got {bad[:3]!r}")
    regression = outcome == "regression"
    y = check_y_real(y_true, "y_true") if regression else check_y_true(y_true)
    if y.shape[0] < 2:
        raise ValueError(f"y_true must have at least 2 rows for a report; got {y.shape[0]}")
    check = check_y_real if regression else check_y_prob
    probs = {name: check(p, f"score column {name!r}") for name, p in y_probs.items()}
    check_consistent(y_true=y, **{f"score column {name!r}": p for name, p in probs.items()})
    w = check_sample_weight(sample_weight, y.shape[0])
    if not regression:
        check_both_classes(y, w, "y_true")
    return y, probs, w


# ----------------------------------------------------------------------------------------------- formatting


def _num(value: float, digits: int = 4, css: str = "num", interval: tuple[float, float] | None = None) -> str:
    """A table cell: the value rounded for reading, the exact value in ``data-value`` for machines; an
    ``interval`` (low, high) is shown beneath it and kept in ``data-low``/``data-high``."""
    value = float(value)
    if math.isnan(value):
        return f'<td class="{css}" data-value="nan">–</td>'
    if interval is None:
        return f'<td class="{css}" data-value="{value!r}">{value:.{digits}g}</td>'
    low, high = (float(v) for v in interval)
    shown = "–" if math.isnan(low) else f"{low:.3g} to {high:.3g}"
    return (
        f'<td class="{css}" data-value="{value!r}" data-low="{low!r}" data-high="{high!r}">{value:.{digits}g}'
        f'<br><span class="ci">{shown}</span></td>'
    )


def _interval(ci: dict | None, name: str, metric: str) -> tuple[float, float] | None:
    """The bootstrap interval of ``metric`` for score column ``name`` from ``ci["table"]``, if there is one."""
    if ci is None or f"{metric}_low" not in ci["table"].columns:
        return None
    return ci["table"].loc[name, f"{metric}_low"], ci["table"].loc[name, f"{metric}_high"]


def _ci_note(ci: dict | None) -> str:
    if ci is None:
        return ""
    return (
        f" Beneath a value, its {ci['confidence_level']:.0%} bootstrap percentile interval ({ci['n_resamples']} "
        "resamples of the rows with their weights; <code>mcal.metrics.bootstrap</code>); for ECE, ECCE and MCE, "
        "which are biased upwards, it shows the statistic's variability, not a range for the true error."
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
        cells = "".join(_num(v, css="num best" if name in best else "num", interval=_interval(ci, name, column))
                        for name, v in summary[column].items())  # fmt: skip
        body.append(f'<tr data-metric="{escape(column)}"><th scope="row">{escape(label)}</th>{cells}</tr>')
    return (
        '<section id="metrics"><h2>Core metrics</h2>'
        f'<table class="metrics"><thead><tr><th>metric</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
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


def _edge_decimals(edges: NDArray) -> int:
    """Decimals (at least 2) that print distinct bin edges as distinct texts (3 for 101 to 1000 bins)."""
    distinct = np.unique(edges)
    for decimals in range(2, 17):
        if len({f"{e:.{decimals}f}" for e in distinct}) == distinct.size:
            return decimals
    return 17


def _bins_table(iv: Any) -> str:
    c = iv.curve
    d = _edge_decimals(c.bin_edges)
    rows = []
    for k in range(c.weight.size):
        lo, hi = c.bin_edges[k], c.bin_edges[k + 1]
        rows.append(
            f'<tr><td>[{lo:.{d}f}, {hi:.{d}f}{"]" if k == c.weight.size - 1 else ")"}</td><td class="num">{c.count[k]:,}</td>'
            + "".join(_num(v) for v in (c.mean_predicted[k], c.fraction_positive[k], iv.lower[k], iv.upper[k]))
            + "</tr>"
        )
    return (
        '<details><summary>numbers per bin</summary><table class="bins"><thead><tr><th>bin</th><th>rows</th>'
        "<th>mean score</th><th>observed</th><th>lower</th><th>upper</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></details>"
    )


def _reliability_section(
    Figure: Any, y: NDArray, probs: dict, w: NDArray, weighted: bool, n_bins: int, confidence: float, bar: Any
) -> str:
    from mcal.plotting import plot_reliability_diagram, plot_score_histogram

    sw = w if weighted else None
    panels = []
    for name, p in probs.items():
        iv = reliability_intervals(y, p, sample_weight=sw, n_bins=n_bins, confidence=confidence)
        fig = Figure(figsize=(4.4, 5.2))
        grid = fig.add_gridspec(2, 1, height_ratios=(3, 1), hspace=0.08)
        top = fig.add_subplot(grid[0])
        bottom = fig.add_subplot(grid[1], sharex=top)
        plot_reliability_diagram(y, p, sample_weight=sw, n_bins=n_bins, confidence=confidence, ax=top)
        top.set_xlabel("")
        top.tick_params(labelbottom=False)
        plot_score_histogram(p, sample_weight=sw, ax=bottom)
        alt = f"Reliability diagram of {name} with {confidence:.0%} Wilson intervals, score histogram beneath"
        panels.append(_figure_panel(name, _svg_uri(fig), alt, _bins_table(iv)))
        bar.update()
    return (
        '<section id="reliability"><h2>Reliability diagrams</h2>'
        f'<p class="note">Observed frequency against mean score in {n_bins} equal-width bins; the bars are '
        f"{confidence:.0%} Wilson score intervals of each bin's frequency"
        + (" (with the Kish effective size of the weighted bin)" if weighted else "")
        + ". A calibrated model stays on the diagonal within its bars. Beneath: the share of the weight at each "
        f'score.</p><div class="grid">{"".join(panels)}</div></section>'
    )


def _cumulative_section(Figure: Any, y: NDArray, probs: dict, w: NDArray, bar: Any) -> str:
    from mcal.plotting import plot_cumulative_differences

    axes = {}
    for name, p in probs.items():
        axes[name] = plot_cumulative_differences(y, p, sample_weight=w, ax=Figure(figsize=(4.4, 3.8)).add_subplot())
        bar.update()
    low = min(ax.get_ylim()[0] for ax in axes.values())
    high = max(ax.get_ylim()[1] for ax in axes.values())
    panels = []
    for name, ax in axes.items():
        ax.set_ylim(low, high)  # one vertical scale, so that the columns compare at a glance
        alt = f"Cumulative differences between labels and scores of {name}"
        panels.append(_figure_panel(name, _svg_uri(ax.figure), alt))
    return (
        '<section id="cumulative"><h2>Cumulative differences (ECCE)</h2>'
        '<p class="note">The running sum of label minus score, in score order, divided by the total weight '
        "(Arrieta-Ibarra et al. 2022). No bins: ECCE is the curve's range. A slope over a stretch of scores is "
        "miscalibration there (up: outcomes above the scores); a calibrated model wanders like Brownian motion, "
        "and the black bar at the origin is the range it exceeds with probability 5%. The panels share one "
        "vertical scale.</p>"
        f'<div class="grid">{"".join(panels)}</div></section>'
    )


def _field_section(y: NDArray, probs: dict, w: NDArray, fields: tuple[NDArray, NDArray], summary: pd.DataFrame) -> str:
    codes, uniques = fields
    weight = np.bincount(codes, weights=w, minlength=len(uniques))
    shown = np.argsort(-weight, kind="stable")[:_MAX_FIELD_ROWS]
    values = uniques[codes]  # not the codes, which a warning about fields without positives would list
    results = {name: field_pcoc(y, p, field=values, sample_weight=w) for name, p in probs.items()}
    head = "".join(f"<th>{escape(n)}</th>" for n in probs)
    rows = "".join(
        f"<tr><td>{escape(str(uniques[j]))}</td>{_num(weight[j], 6)}"
        + "".join(_num(r.per_field.iloc[j]) for r in results.values())
        + "</tr>"
        for j in shown
    )
    frce = "".join(_num(v) for v in summary["f_rce"])
    spread = "".join(_num(r.std) for r in results.values())
    more = (
        f" The {len(shown):,} largest of {len(uniques):,} field values are listed." if len(uniques) > len(shown) else ""
    )
    return (
        '<section id="fields"><h2>Calibration per field</h2>'
        f'<table class="frce"><thead><tr><th></th>{head}</tr></thead>'
        f'<tbody><tr data-metric="f_rce"><th scope="row">F-RCE</th>{frce}</tr>'
        f'<tr data-metric="pcoc_std"><th scope="row">PCOC std over fields</th>{spread}</tr></tbody></table>'
        f'<table class="fields"><thead><tr><th>field value</th><th>weight</th>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        '<p class="note">PCOC per field value (weighted mean score over weighted mean label; 1 is calibrated, '
        '"–" where the field has no positives), their standard deviation, and F-RCE, the field-size-weighted '
        f"relative calibration error (MCNet paper, Dai et al. 2025, eq. 3-4 and Table 3).{more}</p></section>"
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


def _page(title: str, header: str, sections: list[str]) -> str:
    from mcal import __version__

    nav = "".join(
        f'<a href="#{sid}">{label}</a>'
        for sid, label in (
            ("metrics", "Metrics"),
            ("reliability", "Reliability"),
            ("cumulative", "Cumulative"),
            ("multicalibration", "Segments"),
            ("fields", "Fields"),
        )
        if f'<section id="{sid}"' in "".join(sections)
    )
    footer = (
        '<footer id="notes">Made by mcal ' + escape(__version__) + ". Intervals: Wilson (1927) score intervals. "
        "ECCE: Arrieta-Ibarra, Gujral, Tannen, Tygert, Xu, JMLR 23(351), 2022; MCGrad (Tax et al. 2025), eq. 1. "
        "MCE: MCGrad, eq. 2, and Guy et al., arXiv 2506.11251, 2025. "
        "PCOC and F-RCE: MCNet (Dai et al. 2025), eq. 3-4. This file is self-contained and needs no network.</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="mcal {escape(__version__)}"><title>{escape(title)}</title>'
        f"<style>{_CSS}</style></head><body>{header}<nav>{nav}</nav>{''.join(sections)}{footer}</body></html>\n"
    )

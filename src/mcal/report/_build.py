"""make_report, and the report sections of every score column: metrics, reliability, cumulative, fields."""

from __future__ import annotations

import os
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import (
    MAX_OVERLAP,
    N_BINS,
    NON_NEGATIVE_INT,
    OPEN_UNIT,
    OPTIONAL_STR,
    OUTCOME,
    POSITIVE_INT,
    STRATEGY,
    validate_params,
)
from mcal._features.fields import encode_field, field_value_label
from mcal._optional import import_optional
from mcal._persistence.files import atomic_write_bytes
from mcal._progress import progress as progress_bar
from mcal._shared.segments import check_categorical_use, resolve_segments
from mcal._shared.text import plain_text
from mcal.metrics import (
    calibration_summary,
    field_pcoc,
    mce,
    reliability_intervals,
    summary_intervals,
    worst_segments,
)
from mcal.report._checks import _check_inputs, _check_path
from mcal.report._comparison import comparison_section
from mcal.report._html import _figure_panel, _header, _metrics_section, _num, _page, _svg_uri
from mcal.report._per_value import check_per_value, per_value_section
from mcal.report._segments import _feature_section, _segments_section
from mcal.report._verdict import column_verdict, verdict_section

#: At most this many field values (the largest by weight) get a row of the per-field table.
_MAX_FIELD_ROWS = 50


@validate_params({
    "title": OPTIONAL_STR,
    "description": OPTIONAL_STR,
    "n_bins": N_BINS,
    "confidence": OPEN_UNIT,
    "n_worst_segments": POSITIVE_INT,
    "n_resamples": NON_NEGATIVE_INT,
    "outcome": OUTCOME,
    "strategy": STRATEGY,
    "max_overlap": MAX_OVERLAP,
})  # fmt: skip
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
    strategy: str = "uniform",
    max_overlap: float | None = 0.8,
    method_comparison: Any = None,
    per_value: Mapping[str, Any] | None = None,
) -> Path:
    """Write a self-contained HTML report comparing the calibration of several score columns.

    The report opens with a verdict per score column in plain words (calibrated overall? in the segments? which
    segments fail, by how much). Then, for every score column, side by side: the core metrics (:func:`mcal.metrics.calibration_summary`), a
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
        Segments each score column adds to the table of worst segments (its worst ones not listed yet), where
        each segment shows a row per score column beneath its name and one small reliability diagram of the
        columns. The table keeps its first 30 segments (``MAX_FINDINGS_ROWS``: the first columns' worst ones)
        and draws the first 4 score columns only in the small diagrams (``MAX_THUMBNAIL_COLUMNS``), so the file
        stays a few MB with many columns; its caption says so.
    n_resamples : int, default=0
        Bootstrap resamples of the intervals (level ``confidence``) shown beneath the core metrics, the MCE and
        the worst segments' ECCE / σ (:func:`mcal.metrics.summary_intervals` and
        :func:`mcal.metrics.segment_intervals`, fixed seed); 0 shows none. Each interval costs ``n_resamples``
        evaluations of its metric.
    progress : bool or None, default=False
        Progress bar on standard error (tqdm): None shows it on a terminal only.
    outcome : {"classification", "regression"}, default="classification"
        ``"regression"``: ``y_true`` holds real outcomes and the columns real predictions; the report then shows
        :func:`mcal.metrics.regression_summary`, a diagram of mean outcome against mean prediction per column
        (``n_bins`` equal-width bins on the range of the predictions) and, with segments, the regression MCE and
        the worst segments; ``field`` and ``confidence`` do not apply (``field`` must be None).
    strategy : {"uniform", "quantile"}, default="uniform"
        Bins of the reliability diagrams: equal-width, or equal-weight (quantiles of the scores).
    max_overlap : float in (0, 1] or None, default=0.8
        Near-duplicate rule of the worst segments (see :func:`mcal.metrics.worst_segments`); None lists them all.
    method_comparison : CalibratorSelection or None, default=None
        A comparison of calibration methods from :func:`mcal.select_calibrator` (``mcal report
        --compare-methods``), shown as a section after the core metrics: held-out log loss with paired standard
        errors, the MCE, and the chosen method. Binary labels only.
    per_value : mapping of str to PerValueTable, default=None
        :func:`mcal.metrics.per_value_table` of each score column (the keys of ``y_probs``): adds the section
        "Calibration per value", every value of each feature with enough rows (tables of
        ``outcome="regression"`` with real outcomes).

    Returns
    -------
    path : Path
        The file written.

    Raises
    ------
    ValueError
        On fewer than 2 rows, a single class, an empty ``y_probs``, both ``X`` and ``segments``,
        ``categorical_features`` without ``X``, or an argument for binary labels (``field``, ``method_comparison``,
        ``per_value``, ``strategy``, ``max_overlap``) with ``outcome="regression"``; a bad score column is named in
        the message.
    TypeError
        If ``y_probs`` is not a mapping with string keys, or ``path`` is not a str or path-like.
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
    if per_value is not None:
        check_per_value(per_value, [str(name) for name in y_probs] if isinstance(y_probs, Mapping) else [])
    if outcome == "regression":
        if method_comparison is not None:
            raise ValueError("method_comparison applies to binary labels; got one with outcome='regression'")
        if strategy != "uniform" or max_overlap != 0.8:
            raise ValueError("strategy and max_overlap apply to binary labels; leave them at their defaults with "
                             f"outcome='regression'; got strategy={strategy!r}, max_overlap={max_overlap!r}")  # fmt: skip
        from mcal.report._regression import regression_report

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
            per_value=per_value,
        )
    y, probs, w = _check_inputs(y_true, y_probs, sample_weight)
    fields = None if field is None else encode_field(field, y.shape[0])
    check_categorical_use(categorical_features, X, segments)  # refused without X, where no segments are generated
    segs = None if X is None and segments is None else resolve_segments(X, segments, y.shape[0], categorical_features)
    Figure = import_optional("matplotlib.figure").Figure
    summary = calibration_summary(y, probs, sample_weight=w, field=None if fields is None else fields[0], n_bins=n_bins)
    weighted = sample_weight is not None
    ci: dict[str, Any] | None = None
    if n_resamples:
        ci = {"n_resamples": n_resamples, "confidence_level": confidence}
        ci["table"] = summary_intervals(y, probs, sample_weight=w, field=None if fields is None else fields[0],
                                        segments=segs, n_bins=n_bins, **ci)  # fmt: skip
    sections = [_metrics_section(summary, n_bins, ci)]
    if method_comparison is not None:
        sections.append(comparison_section(method_comparison))
    steps = (2 + (segs is not None)) * len(probs)
    results = {}
    with progress_bar(steps, "report", enabled=progress, unit="step") as bar:
        sections.append(_reliability_section(Figure, y, probs, w, weighted, n_bins, confidence, bar, strategy))
        sections.append(_cumulative_section(Figure, y, probs, w, bar))
        if segs is not None:
            for name, p in probs.items():
                results[name] = mce(y, p, segments=segs, sample_weight=w)
                bar.update()
            worst = worst_segments(results, segs, n_worst=n_worst_segments, max_overlap=max_overlap,
                                   sample_weight=w)  # fmt: skip
            sections.append(_segments_section(Figure, y, probs, w, weighted, segs, results, worst, max_overlap,
                                              confidence, ci))  # fmt: skip
            sections.append(_feature_section(probs, segs, results))
    if per_value is not None:
        sections.append(per_value_section(per_value))
    field_name = getattr(field, "name", None) if isinstance(field, pd.Series) else None
    if fields is not None:
        sections.append(_field_section(y, probs, w, fields, summary, "field" if field_name is None else field_name))
    worst_rows = {} if segs is None else {name: segs.indices(int(r.table["segment"].iloc[0]))
                                          for name, r in results.items()}  # fmt: skip
    items = [column_verdict(name, y, p, w, summary.loc[name], results.get(name), worst_rows.get(name))
             for name, p in probs.items()]  # fmt: skip
    best = str(summary["log_loss"].idxmin()) if len(probs) > 1 else None
    sections.insert(0, verdict_section(items, best))
    header = _header(title or "Calibration report", description, y, w, weighted, probs, field_name, fields, segs)
    document = _page(title or "Calibration report", header, sections)
    atomic_write_bytes(path, document.encode("utf-8"))
    return path


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
    Figure: Any, y: NDArray, probs: dict, w: NDArray, weighted: bool, n_bins: int, confidence: float, bar: Any,
    strategy: str = "uniform",
) -> str:  # fmt: skip
    from mcal.plotting import plot_reliability_diagram, plot_score_histogram

    sw = w if weighted else None
    panels = []
    for name, p in probs.items():
        iv = reliability_intervals(y, p, sample_weight=sw, n_bins=n_bins, strategy=strategy, confidence=confidence)
        fig = Figure(figsize=(4.4, 5.2))
        grid = fig.add_gridspec(2, 1, height_ratios=(3, 1), hspace=0.08)
        top = fig.add_subplot(grid[0])
        bottom = fig.add_subplot(grid[1], sharex=top)
        plot_reliability_diagram(y, p, sample_weight=sw, n_bins=n_bins, strategy=strategy, confidence=confidence,
                                 ax=top)  # fmt: skip
        top.set_xlabel("")
        top.tick_params(labelbottom=False)
        plot_score_histogram(p, sample_weight=sw, ax=bottom)
        alt = f"Reliability diagram of {name} with {confidence:.0%} Wilson intervals, score histogram beneath"
        panels.append(_figure_panel(name, _svg_uri(fig), alt, _bins_table(iv)))
        bar.update()
    bins = "equal-width" if strategy == "uniform" else "equal-weight (quantile)"
    return (
        '<section id="reliability"><h2>Reliability diagrams</h2>'
        + _overlay(Figure, y, probs, sw, n_bins, strategy, confidence)
        + f'<p class="note">Observed frequency against mean score in {n_bins} {bins} bins; the bars are '
        f"{confidence:.0%} Wilson score intervals of each bin's frequency"
        + (" (with the Kish effective size of the weighted bin)" if weighted else "")
        + ", so a bin of few rows shows a long bar rather than a trusted point. A calibrated model stays on the "
        "diagonal within its bars. Above, every column on one diagram; below, one per column with the share of "
        f'the weight at each score beneath.</p><div class="grid">{"".join(panels)}</div></section>'
    )


def _overlay(
    Figure: Any, y: NDArray, probs: dict, w: NDArray | None, n_bins: int, strategy: str, confidence: float
) -> str:  # fmt: skip
    """One reliability diagram with every score column, each with its intervals, for comparison at a glance."""
    from mcal.plotting import plot_reliability_diagram

    ax = Figure(figsize=(5.6, 5.0)).add_subplot()
    for name, p in probs.items():
        plot_reliability_diagram(y, p, sample_weight=w, n_bins=n_bins, strategy=strategy, confidence=confidence,
                                 label=plain_text(name), ax=ax)  # fmt: skip
    alt = f"Reliability diagram of every score column ({', '.join(probs)}) on one set of axes"
    return f'<figure class="panel overlay" data-score="all columns"><figcaption>All columns</figcaption><img alt="{escape(alt)}" src="{_svg_uri(ax.figure)}"></figure>'


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


def _field_section(
    y: NDArray, probs: dict, w: NDArray, fields: tuple[NDArray, NDArray], summary: pd.DataFrame, name: Any
) -> str:
    """PCOC per field value (missing values as ``<name> is missing``), its spread and F-RCE."""
    codes, uniques = fields
    weight = np.bincount(codes, weights=w, minlength=len(uniques))
    shown = np.argsort(-weight, kind="stable")[:_MAX_FIELD_ROWS]
    values = uniques[codes]  # not the codes, which a warning about fields without positives would list
    results = {name: field_pcoc(y, p, field=values, sample_weight=w) for name, p in probs.items()}
    head = "".join(f"<th>{escape(n)}</th>" for n in probs)
    rows = "".join(
        f"<tr><td>{escape(field_value_label(uniques[j], name))}</td>{_num(weight[j], 6)}"
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

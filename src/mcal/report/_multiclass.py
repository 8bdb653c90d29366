"""The HTML report of probabilities for k classes (:func:`make_multiclass_report`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mcal._constraints import N_BINS, OPTIONAL_STR, POSITIVE_INT, STRATEGY, validate_params
from mcal._optional import import_optional
from mcal._persistence import atomic_write_bytes
from mcal._shared.brownian import PVALUE_FLOOR
from mcal._shared.segments import check_categorical_use, resolve_segments
from mcal._shared.text import plain_text
from mcal._validation import check_class_labels, check_class_scores, check_consistent, check_sample_weight
from mcal.metrics import classwise_mce, multiclass_summary, top_label, top_label_mce
from mcal.report._checks import _check_names, _check_path
from mcal.report._html import _figure_panel, _header, _metrics_section, _num, _page, _svg_uri
from mcal.report._per_value import check_per_value, per_value_section
from mcal.report._segments import _pvalue_cell

#: At most this many classes (the first, in column order) get a one-vs-rest reliability panel.
MAX_CLASS_PANELS = 20
_NOTE = (
    "From <code>mcal.metrics.multiclass_summary</code>: log loss and Brier score over the k classes, accuracy of "
    "the most probable class; top-label ECE is the ECE of “was the most probable class right?” scored by the top "
    "probability (Guo et al. 2017), classwise ECE the mean over classes of the ECE of “is it this class?” scored "
    "by its probability (Kull et al. 2019), both on {n_bins} {strategy} bins. With segments, the classwise MCE is "
    "that of the worst class and the top-label MCE that of the top-label problem (ECCE / σ of the worst segment)."
)


@validate_params({
    "title": OPTIONAL_STR,
    "description": OPTIONAL_STR,
    "strategy": STRATEGY,
    "n_bins": N_BINS,
    "n_worst_segments": POSITIVE_INT,
})  # fmt: skip
def make_multiclass_report(
    y_true: ArrayLike,
    y_probs: Mapping[str, ArrayLike],
    *,
    path: str | os.PathLike,
    X: Any = None,
    segments: Any = None,
    categorical_features: Any = "from_dtype",
    sample_weight: ArrayLike | None = None,
    class_names: Sequence[Any] | None = None,
    title: str | None = None,
    description: str | None = None,
    n_bins: int = 15,
    strategy: str = "uniform",
    n_worst_segments: int = 10,
    per_value: Mapping[str, Any] | None = None,
) -> Path:
    """Write a self-contained HTML report comparing probability matrices of k classes.

    For every matrix, side by side: the metrics of k classes (:func:`mcal.metrics.multiclass_summary`), a top-label
    reliability diagram (accuracy against confidence, :func:`mcal.metrics.top_label`) and, per class, a one-vs-rest
    reliability diagram with every matrix on it; with segments (``X`` or ``segments``), the classwise MCE of every
    class (:func:`mcal.metrics.classwise_mce`), the top-label MCE, and the worst segments of each matrix's worst
    class.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels: integers ``0 .. k - 1`` naming the column, or exactly k class names (sorted order = columns).
    y_probs : mapping of str to array-like of shape (n_samples, k)
        Probability matrices (rows summing to 1) by name, in the order they are shown; every one with the same k.
    path : str or path-like
        The HTML file to write, in an existing folder. Nothing is written unless the whole report succeeds.
    X, segments, categorical_features
        Segments, as in :func:`mcal.report.make_report`.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; every number and figure is weighted.
    class_names : sequence of length k, default=None
        The class of each column, as shown; the classes of ``y_true`` when None.
    title, description
        As in :func:`mcal.report.make_report`.
    n_bins : int, default=15
        Bins of the ECEs and of the reliability diagrams (15 as in Guo et al. 2017).
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width or equal-weight bins.
    n_worst_segments : int, default=10
        Rows of the table of each matrix's worst-class segments.
    per_value : mapping of str to PerValueTable, default=None
        One-vs-rest :func:`mcal.metrics.per_value_table` of a class (``y_true == j`` against column ``j``) by a
        name of its own (e.g. the class, or matrix and class): adds the section "Calibration per value", every
        value of each feature with enough rows, a column per table.

    Returns
    -------
    path : Path
        The file written.

    Raises
    ------
    ValueError
        On matrices of different k, ``class_names`` of another length, or both ``X`` and ``segments``; a bad matrix is
        named in the message.
    TypeError
        If ``y_probs`` is not a mapping with string keys, or ``path`` is not a str or path-like.
    FileNotFoundError
        If the folder of ``path`` does not exist.
    ImportError
        If matplotlib is not installed (``pip install 'mcal[plot]'``).

    References
    ----------
    .. [1] Guo, Pleiss, Sun, Weinberger, "On calibration of modern neural networks", ICML 2017 (top-label).
    .. [2] Kull et al., "Beyond temperature scaling", NeurIPS 2019 (classwise).
    .. [3] Tax et al., "MCGrad: Multicalibration at Web Scale", arXiv 2509.19884, eq. 2 (MCE).

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from scipy.special import softmax
    >>> rng = np.random.default_rng(0)
    >>> p = softmax(rng.normal(size=(300, 3)), axis=1); y = [rng.choice(3, p=row) for row in p]
    >>> out = make_multiclass_report(y, {"model": p}, path=tempfile.mkdtemp() + "/report.html")
    >>> out.read_text().startswith("<!DOCTYPE html>")
    True
    """
    path = _check_path(path)
    if per_value is not None:
        check_per_value(per_value, None)
    y, probs, w, names = _check_inputs(y_true, y_probs, sample_weight, class_names)
    check_categorical_use(categorical_features, X, segments)
    segs = None if X is None and segments is None else resolve_segments(X, segments, y.shape[0], categorical_features)
    Figure = import_optional("matplotlib.figure").Figure
    summary = multiclass_summary(y, probs, sample_weight=w, n_bins=n_bins, strategy=strategy)
    results = {}
    if segs is not None:
        for name, P in probs.items():
            results[name] = (classwise_mce(y, P, segments=segs, sample_weight=w),
                             top_label_mce(y, P, segments=segs, sample_weight=w))  # fmt: skip
            summary.loc[name, "classwise_mce_sigma"] = results[name][0].mce_sigma
            summary.loc[name, "top_label_mce_sigma"] = results[name][1].mce_sigma
    note = _NOTE.format(n_bins=n_bins, strategy="equal-width" if strategy == "uniform" else "equal-weight")
    sections = [_metrics_section(summary, n_bins, note=note),
                _top_label_section(Figure, y, probs, w, n_bins, strategy),
                _classwise_section(Figure, y, probs, w, n_bins, strategy, names)]  # fmt: skip
    if segs is not None:
        sections.append(_worst_class_section(results, names, segs.n_segments, n_worst_segments))
    if per_value is not None:
        sections.append(per_value_section(per_value))
    counts = np.bincount(y, weights=w, minlength=len(names))
    common = int(np.argmax(counts))
    name = title or "Calibration report"
    header = _header(name, description, (y == common).astype(np.float64), w, sample_weight is not None, probs, None,
                     None, segs, rate=f"Share of the most frequent class ({escape(str(names[common]))})")  # fmt: skip
    atomic_write_bytes(path, _page(name, header, sections).encode("utf-8"))
    return path


def _check_inputs(
    y_true: ArrayLike, y_probs: Mapping[str, ArrayLike], sample_weight: ArrayLike | None, class_names: Any
) -> tuple[NDArray[np.intp], dict[str, NDArray[np.float64]], NDArray[np.float64], list[str]]:
    _check_names(y_probs, "probability matrices", "probability matrix")
    probs = {name: check_class_scores(P, f"probability matrix {name!r}") for name, P in y_probs.items()}
    ks = {name: P.shape[1] for name, P in probs.items()}
    if len(set(ks.values())) > 1:
        raise ValueError(f"y_probs must hold matrices of the same number of classes; got {ks}")
    k = next(iter(ks.values()))
    y, classes = check_class_labels(y_true, k, "y_true")
    check_consistent(y_true=y, **{f"probability matrix {name!r}": P for name, P in probs.items()})
    names = [str(c) for c in (classes.tolist() if class_names is None else list(class_names))]
    if len(names) != k:
        raise ValueError(f"class_names must name the {k} classes (columns); got {len(names)}")
    return y, probs, check_sample_weight(sample_weight, y.shape[0]), names


def _top_label_section(Figure: Any, y: NDArray, probs: dict, w: NDArray, n_bins: int, strategy: str) -> str:
    from mcal.plotting import plot_reliability_diagram

    panels = []
    for name, P in probs.items():
        correct, confidence = top_label(y, P)
        ax = plot_reliability_diagram(correct, confidence, sample_weight=w, n_bins=n_bins, strategy=strategy,
                                      confidence=0.95, ax=Figure(figsize=(4.4, 4.4)).add_subplot())  # fmt: skip
        ax.set_xlabel("confidence (top probability)")
        ax.set_ylabel("accuracy")
        panels.append(_figure_panel(name, _svg_uri(ax.figure), f"Top-label reliability diagram of {name}"))
    return (
        '<section id="reliability"><h2>Top-label reliability</h2>'
        '<p class="note">Accuracy against confidence: per bin of the top probability, the share of rows whose most '
        "probable class was right, with its 95% Wilson interval. A calibrated model stays on the diagonal.</p>"
        f'<div class="grid">{"".join(panels)}</div></section>'
    )


def _classwise_section(
    Figure: Any, y: NDArray, probs: dict, w: NDArray, n_bins: int, strategy: str, names: list[str]
) -> str:
    from mcal.plotting import plot_reliability_diagram

    panels = []
    for j, cls in enumerate(names[:MAX_CLASS_PANELS]):
        ax = Figure(figsize=(4.4, 4.4)).add_subplot()
        for name, P in probs.items():
            plot_reliability_diagram(y == j, P[:, j], sample_weight=w, n_bins=n_bins, strategy=strategy,
                                     label=plain_text(name), ax=ax)  # fmt: skip
        ax.legend(loc="lower right", fontsize=7)
        ax.set_xlabel(plain_text(f"probability of {cls}"))
        ax.set_ylabel(plain_text(f"share of {cls}"))
        panels.append(_figure_panel(f"class {cls}", _svg_uri(ax.figure), f"One-vs-rest reliability of class {cls}"))
    left = len(names) - MAX_CLASS_PANELS
    more = f" The first {MAX_CLASS_PANELS} classes are drawn; {left} more are not." if left > 0 else ""
    return (
        '<section id="classwise"><h2>Per-class reliability (one-vs-rest)</h2>'
        '<p class="note">For each class, the share of rows of that class against its probability, per bin, with '
        f"every probability matrix on the same diagram (Kull et al. 2019, classwise calibration).{more}</p>"
        f'<div class="grid">{"".join(panels)}</div></section>'
    )


def _worst_class_section(results: dict, names: list[str], n_segments: int, n_worst: int) -> str:
    head = "".join(f"<th>{escape(n)}</th>" for n in results)
    rows = [
        f'<tr data-class="{escape(cls)}"><th scope="row">{escape(cls)}</th>'
        + "".join(_num(r[0].per_class[j].mce_sigma) for r in results.values()) + "</tr>"
        for j, cls in enumerate(names)
    ]  # fmt: skip
    rows.append('<tr data-metric="top_label"><th scope="row">top label</th>'
                + "".join(_num(r[1].mce_sigma) for r in results.values()) + "</tr>")  # fmt: skip
    panels = []
    for name, (cw, _) in results.items():
        worst = cw.per_class[cw.worst_class]
        body = "".join(
            f'<tr><td>{rank}</td><td>{escape(str(seg.description))}</td><td class="num">{seg.size:,}</td>'
            + _num(seg.ecce) + _num(seg.ecce_sigma) + _pvalue_cell(seg.pvalue, PVALUE_FLOOR) + "</tr>"
            for rank, seg in enumerate(worst.table.head(n_worst).itertuples(index=False), start=1)
        )  # fmt: skip
        caption = f"{name}: worst class {names[cw.worst_class]} (MCE {worst.mce_sigma:.3g} σ)"
        panels.append(
            f'<figure class="panel" data-score="{escape(name)}"><figcaption>{escape(caption)}</figcaption>'
            '<table class="segments worst-class"><thead><tr><th>#</th><th>segment</th><th>rows</th><th>ECCE</th>'
            f"<th>ECCE / σ</th><th>p-value</th></tr></thead><tbody>{body}</tbody></table></figure>"
        )
    return (
        '<section id="multicalibration"><h2>Multicalibration per class: the worst class</h2>'
        f'<table class="mce classwise"><thead><tr><th>class</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
        "</table>"
        f'<p class="note">The MCE of each class\'s one-vs-rest problem (“is it this class?” scored by its probability) '
        f"and of the top-label problem: the largest ECCE / σ over the {n_segments:,} segments (MCGrad paper, eq. 2). "
        f"Below, the {n_worst} worst segments of each matrix's worst class, with p-values not adjusted for the "
        "number of segments.</p>"
        f'<div class="grid wide">{"".join(panels)}</div></section>'
    )

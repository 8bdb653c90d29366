"""``mcal evaluate``: every core metric for each score column, as a table or JSON, and a reliability diagram.

With ``--segments``, also the multicalibration error (MCE) of each score column over segments generated from
the named feature columns, and one table of the worst segments that follows the first column's worst segments
(then each later column's) across every column (the full per-segment tables in ``--json``). With ``--ci``,
bootstrap intervals of the metrics, the MCE and the worst segments' ECCE in sigmas.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcal._persistence import atomic_write_bytes
from mcal.cli import _auto, _dask, _gates, _multiclass
from mcal.cli._common import check_output, column, labels_scores_weights, read_data, score_values
from mcal.cli._layout import findings_text, metrics_text, terminal_width, with_interval, wrap
from mcal.cli._options import (
    N_RESAMPLES,
    SEGMENTS_SYNTAX,
    CLIError,
    Command,
    add_data_arguments,
    add_evaluation_arguments,
    check_ci,
    check_regression_options,
    check_unique_scores,
)
from mcal.cli._per_value import per_value_json, per_value_tables, print_per_value
from mcal.cli._segments import segment_features, segments_of

#: Worst segments printed per score column.
_N_WORST = 10


def _configure(parser) -> None:
    add_data_arguments(parser, score_required=True, multiple_scores=True, classes=True)
    parser.add_argument(
        "--field", metavar="COL", help="field column: adds F-RCE (field-level relative calibration error)"
    )
    add_evaluation_arguments(
        parser, n_bins_help="bins of the ECE and --plot (default 10)", segments_help="feature columns to generate "
        "segments from: adds the multicalibration error (MCE) of each score column and its ten worst segments; "
        "dates and durations are categories, as they are as text in a CSV file" + SEGMENTS_SYNTAX + " (with "
        "--scheduler too; with --score-cols, one per class)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--plot", metavar="OUT.png", help="write a reliability diagram of every score column")
    _auto.add_compare_argument(parser)
    _dask.add_arguments(parser)
    _gates.EVALUATE_ANY.add_argument(parser, "score column")


def _json_safe(value: float) -> float | None:
    return None if isinstance(value, float) and not math.isfinite(value) else value


@dataclass
class _Evaluation:
    """What ``mcal evaluate`` computed for its printers: the metrics table (a row per score column), the row count
    and total weight, and with ``--segments`` the MCE results, per-segment tables, worst segments and per-value
    tables; the method comparison of ``--compare-methods``."""

    table: Any
    n_rows: int
    total: float | None
    results: dict[str, Any]
    segments: Any
    per_value: dict[str, Any] = dataclasses.field(default_factory=dict)
    selection: Any = None
    tables: dict[str, Any] = dataclasses.field(default_factory=dict)
    worst: Any = None
    max_overlap: float | None = None


def _run(args) -> int:
    _auto.check_compare(args)
    if args.score_cols is not None:
        return _multiclass.evaluate(args)
    gates = _check_options(args)
    if _dask.requested(args):
        found = _Evaluation(*_dask.evaluate(args))
        _add_segment_results(found, args)
    else:
        found = _evaluate_in_memory(args)
    if args.json:
        _print_json(found)
    else:
        _print_text(found, args)
    return gates.report(args.fail_if, ((f"score column {name!r}", row) for name, row in found.table.iterrows()))


def _check_options(args) -> _gates.Gates:
    """Refuse, before any work, options that do not go together; the gates of ``--outcome``."""
    check_output(args.plot, "--plot", inputs=[("DATA", args.data)])
    if args.plot:
        _check_plot_format(args.plot)
    check_unique_scores(args.score_col)
    gates = _gates.EVALUATE_REGRESSION if args.outcome == "regression" else _gates.EVALUATE
    gates.check_options(args.fail_if, args, f"with --outcome {args.outcome}")
    check_ci(args)
    for option, value in (("--ci", args.ci), ("--compare-methods", args.compare_methods or None)):
        if value is not None and _dask.requested(args):
            raise CLIError(f"{option} needs the data in memory: it is not available with --scheduler or "
                           "--dask-workers")  # fmt: skip
    check_regression_options(args)
    return gates


def _evaluate_in_memory(args) -> _Evaluation:
    """DATA read into memory: the metrics, the MCE, the per-value tables, the comparison, the diagram and the
    intervals that the options ask for."""
    from mcal.metrics import calibration_summary, mce, regression_summary

    df = read_data(args)
    y, _, w = labels_scores_weights(df, label_col=args.label_col, score_col=None, weight_col=args.weight_col,
                                    pos_label=args.pos_label, outcome=args.outcome)  # fmt: skip
    scores = {name: score_values(df, name, args.outcome) for name in args.score_col}
    field = column(df, args.field, "--field").to_numpy() if args.field else None
    segments = segments_of(df, args)
    if args.outcome == "regression":
        table = regression_summary(y, scores, sample_weight=w)
    else:
        table = calibration_summary(y, scores, sample_weight=w, field=field, n_bins=args.n_bins)
    results = {} if segments is None else {name: mce(y, p, segments=segments, sample_weight=w, outcome=args.outcome)
                                           for name, p in scores.items()}  # fmt: skip
    found = _Evaluation(table, len(df), None if w is None else float(w.sum()), results, segments)
    if segments is not None:
        found.per_value = per_value_tables(y, scores, segment_features(df, args), w, args)
    if args.compare_methods:
        found.selection = _auto.compare(df, y, w, segment_features(df, args), args)
    if args.plot:
        _plot(y, scores, w, args.plot, args.outcome, args.n_bins, args.strategy)
    _add_segment_results(found, args)
    if args.ci is not None:
        found.table, found.tables = _with_intervals(args, found, y, scores, w, field)
    return found


def _add_segment_results(found: _Evaluation, args) -> None:
    """The MCE columns of the metrics table, the per-segment tables and the worst segments across every column."""
    from mcal.metrics import worst_segments

    results = found.results
    if results:  # the columns calibration_summary(..., segments=...) adds, from the results printed below
        found.table["mce_sigma"] = [results[name].mce_sigma for name in found.table.index]
        found.table["mce_absolute"] = [results[name].mce_absolute for name in found.table.index]
        found.table["mce_pvalue"] = [results[name].pvalue for name in found.table.index]
        found.table["mce_pvalue_adjusted"] = [results[name].pvalue_adjusted for name in found.table.index]
    found.tables = {name: r.table for name, r in results.items()}
    found.max_overlap = None if args.all_segments else 0.8
    if results and found.segments is not None:
        found.worst = worst_segments(results, found.segments, n_worst=_N_WORST, max_overlap=found.max_overlap)


def _print_json(found: _Evaluation) -> None:
    out = {
        "n_samples": int(found.n_rows),
        "total_weight": found.total if found.total is not None else float(found.n_rows),
        "metrics": {name: {k: _json_safe(float(v)) for k, v in row.items()} for name, row in found.table.iterrows()},
    }
    if found.results:
        out["segments"] = {name: _records(t) for name, t in found.tables.items()}
        out["worst_segments"] = {"p_adjustment": "holm", "max_overlap": found.max_overlap,
                                 "rows": _records(found.worst)}  # fmt: skip
    if found.selection is not None:
        out["method_comparison"] = found.selection.to_dict()
    if found.per_value:
        out["per_value"] = per_value_json(found.per_value)
    print(json.dumps(out, indent=2, allow_nan=False))


def _print_text(found: _Evaluation, args) -> None:
    from mcal._shared.brownian import PVALUE_FLOOR
    from mcal.report import format_pvalue, format_pvalue_columns

    total = "" if found.total is None else f", total weight {found.total:.6g}"
    print(f"{found.n_rows} rows{total}, label {args.label_col!r}")
    shown = format_pvalue_columns(found.table)
    if found.results:  # adjusted over a column's m tested segments: "< m * 1e-15" below the floor, never "0"
        shown["mce_pvalue_adjusted"] = [
            format_pvalue(found.results[name].pvalue_adjusted,
                          floor=min(1.0, int(found.results[name].table["pvalue"].notna().sum()) * PVALUE_FLOOR))
            for name in found.table.index
        ]  # fmt: skip
    width = terminal_width()
    print(metrics_text(found.table, shown, width))
    if found.results:
        _print_segments(found.results, found.worst, found.tables, args.segments, found.max_overlap, width)
    if found.selection is not None:
        _auto.print_comparison(found.selection, found.n_rows)
    if found.per_value:
        print_per_value(found.per_value)


def _print_segments(results, worst, tables, names, max_overlap, width: int) -> None:
    """Each column's MCE, then the table of the worst segments across every column (with its intervals, if any),
    no wider than ``width``."""
    from mcal._shared.brownian import PVALUE_FLOOR
    from mcal._shared.text import findings_note, p_equals
    from mcal.report import findings_table

    n_tests = 0
    for name, result in results.items():
        n_tests = int(result.table["pvalue"].notna().sum())
        capped = ", capped" if result.capped else ""
        floor = min(1.0, n_tests * PVALUE_FLOOR)
        print(wrap(f"{name}: MCE {result.mce_sigma:.4f} sigma ({p_equals(result.pvalue)}, Holm-adjusted "
                   f"{p_equals(result.pvalue_adjusted, floor=floor)}) over {result.n_segments} segments of "
                   f"{names}{capped}", width, "    "))  # fmt: skip
    shown = findings_table(worst, n_tests)
    for name, segment_table in tables.items():
        if "ecce_sigma_low" in segment_table.columns:
            bounds = segment_table.set_index("segment").loc[worst.drop_duplicates("rank")["segment"]]
            shown[(name, "ECCE/σ")] = [with_interval(v, lo, hi) for v, lo, hi in zip(
                shown[(name, "ECCE/σ")], bounds["ecce_sigma_low"], bounds["ecce_sigma_high"], strict=True)]  # fmt: skip
    print("\n" + wrap(f"worst segments ({findings_note(worst, n_tests, max_overlap)}):", width))
    print(findings_text(shown, width))


def _with_intervals(args, found: _Evaluation, y, scores, w, field):
    """The metrics table with the columns ``<metric>_low`` and ``<metric>_high`` after each metric that has them,
    and the per-segment tables with ``ecce_sigma_low``/``_high`` for the worst segments (NaN for the others)."""
    from mcal.metrics import segment_intervals, summary_intervals

    table, tables, segments, worst = found.table, dict(found.tables), found.segments, found.worst
    options = {"n_resamples": args.n_resamples or N_RESAMPLES, "confidence_level": args.ci}
    intervals = summary_intervals(y, scores, sample_weight=w, field=field, segments=segments, n_bins=args.n_bins,
                                  **options)  # fmt: skip
    columns = [c for metric in table.columns for c in (metric, f"{metric}_low", f"{metric}_high") if
               c in table.columns or c in intervals.columns]  # fmt: skip
    table = table.join(intervals)[columns]
    for name, segment_table in tables.items():
        listed = segment_intervals(y, scores[name], segments, worst.drop_duplicates("rank")["segment"].tolist(),
                                   sample_weight=w, **options)  # fmt: skip
        tables[name] = segment_table.join(listed, on="segment")
    return table, tables


def _records(table) -> list[dict]:
    """Rows of a per-segment table as JSON-safe dicts (non-finite numbers become null)."""
    return [
        {k: _json_safe(v.item() if hasattr(v, "item") else v) for k, v in row.items()}
        for row in table.to_dict("records")
    ]


def _plot_format(path: str) -> str:
    return str(path).rsplit(".", 1)[-1].lower() if "." in Path(path).name else "png"


def _check_plot_format(path: str) -> None:
    """Fail before any work when matplotlib cannot write the image format that ``path`` ends in."""
    from mcal._optional import import_optional

    formats = import_optional("matplotlib.figure").Figure().canvas.get_supported_filetypes()
    if _plot_format(path) not in formats:
        raise CLIError(
            f"--plot must end in an image format matplotlib writes ({', '.join(sorted(formats))}); got {str(path)!r}"
        )


def _plot(y, scores, w, path, outcome: str = "classification", n_bins: int = 10, strategy: str = "uniform") -> None:
    """Every score column on one reliability diagram with 95% Wilson intervals, the rows per bin beneath
    (regression: mean outcome against mean prediction)."""
    import io

    from mcal._optional import import_optional
    from mcal._shared.text import plain_text
    from mcal.plotting import plot_calibration, plot_reliability_diagram

    plt = import_optional("matplotlib.pyplot")
    fig = plt.figure(figsize=(6, 7) if outcome == "classification" else (6, 6))
    try:
        if outcome == "classification":
            grid = fig.add_gridspec(2, 1, height_ratios=(3, 1), hspace=0.08)
            plot_calibration(y, scores, sample_weight=w, n_bins=n_bins, strategy=strategy,
                             axes=(fig.add_subplot(grid[0]), fig.add_subplot(grid[1])))  # fmt: skip
        else:
            ax = fig.add_subplot()
            for name, p in scores.items():
                plot_reliability_diagram(y, p, sample_weight=w, n_bins=n_bins, strategy=strategy,
                                         label=plain_text(name), ax=ax, outcome=outcome)  # fmt: skip
        buf = io.BytesIO()
        fig.savefig(buf, format=_plot_format(path), dpi=120, bbox_inches="tight")
    finally:
        plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


EVALUATE = Command(
    "evaluate",
    "print calibration and ranking metrics of score columns",
    "Compute log loss, Brier score, ROC-AUC, PR-AUC, ECE, ECCE (with its sigma scale and p-value) and PCOC\n"
    "for each score column; F-RCE with --field; the multicalibration error (MCE) over segments of the\n"
    "feature columns given with --segments, and the worst segments followed across every score column\n"
    "(near-duplicates grouped unless --all-segments, p-values Holm-adjusted); --categorical\n"
    "declares integer-coded segment columns categorical; --ci adds bootstrap confidence intervals.\n"
    "With --outcome regression (a continuous label): MSE, MAE, mean prediction and outcome, ECCE and its\n"
    "p-value, the regression MCE with --segments, and a diagram of mean outcome against mean prediction with --plot.\n"
    "With --score-cols (one probability column per class, k classes): log loss, Brier score, accuracy, top-label\n"
    "and classwise ECE; with --segments, the classwise MCE of each class (and the worst) and the top-label MCE.\n\n"
    "example: mcal evaluate test.csv --score-col p --score-col p_calibrated --label-col y --plot diagram.png\n"
    "         mcal evaluate test.csv --score-col p --label-col y --segments age,job,region --categorical region\n"
    "         mcal evaluate 'scores/*.parquet' --score-col p --label-col y --scheduler tcp://host:8786\n"
    "         mcal evaluate test.csv --score-cols p_ant,p_bee,p_cat --label-col y --segments age,region",
    _configure,
    _run,
)

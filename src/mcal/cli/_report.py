"""``mcal report``: one self-contained HTML file with the metrics and figures of every score column."""

from __future__ import annotations

from mcal.cli import _auto, _multiclass
from mcal.cli._common import HTML_ENDINGS, check_output, column, labels_scores_weights, read_data, score_values
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
from mcal.cli._per_value import per_value_tables
from mcal.cli._segments import segment_features, segments_of


def _configure(parser) -> None:
    add_data_arguments(parser, score_required=True, multiple_scores=True, classes=True)
    add_evaluation_arguments(
        parser, n_bins_help="equal-width bins of the ECE and the diagrams (default 10)", segments_help="feature "
        "columns to generate segments from: adds MCE and the worst segments" + SEGMENTS_SYNTAX + " (binary labels)",
    )  # fmt: skip
    parser.add_argument("--field", metavar="COL", help="field (context) column: adds F-RCE and PCOC per field value")
    parser.add_argument("--title", metavar="TEXT", help="title of the report (default: Calibration report)")
    _auto.add_compare_argument(parser)
    parser.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="HTML file to write")
    parser.add_argument("--quiet", action="store_true", help="no progress bar (it is shown only on a terminal anyway)")


def _run(args) -> int:
    from mcal.report import make_report

    check_output(args.output, "-o/--output", inputs=[("DATA", args.data)], endings=HTML_ENDINGS)
    _auto.check_compare(args)
    if args.score_cols is not None:
        return _multiclass.report(args)
    check_unique_scores(args.score_col)
    check_ci(args)
    check_regression_options(args)
    if args.outcome == "regression" and (args.strategy != "uniform" or args.all_segments):
        raise CLIError("--strategy quantile and --all-segments apply to binary labels in the report; got one with "
                       "--outcome regression")  # fmt: skip
    df = read_data(args)
    y, _, w = labels_scores_weights(df, label_col=args.label_col, score_col=None, weight_col=args.weight_col,
                                    pos_label=args.pos_label, outcome=args.outcome)  # fmt: skip
    scores = {name: score_values(df, name, args.outcome) for name in args.score_col}
    field = column(df, args.field, "--field") if args.field else None
    segments = segments_of(df, args)  # as `mcal evaluate --segments` generates them
    comparison = None
    if args.compare_methods:
        comparison = _auto.compare(df, y, w, segment_features(df, args), args)
    per_value = None
    if segments is not None:
        per_value = per_value_tables(y, scores, segment_features(df, args), w, args)
    description = f"{args.data}, label column {args.label_col!r}" + (
        f", weight column {args.weight_col!r}" if w is not None else ""
    )
    out = make_report(
        y,
        scores,
        path=args.output,
        segments=segments,
        field=field,
        sample_weight=w,
        title=args.title,
        description=description,
        n_bins=args.n_bins,
        progress=False if args.quiet else None,
        confidence=0.95 if args.ci is None else args.ci,
        n_resamples=0 if args.ci is None else args.n_resamples or N_RESAMPLES,
        outcome=args.outcome,
        method_comparison=comparison,
        per_value=per_value,
        **({} if args.outcome == "regression" else {"strategy": args.strategy,
                                                    "max_overlap": None if args.all_segments else 0.8}),
    )  # fmt: skip
    print(f"wrote {out}")
    return 0


REPORT = Command(
    "report",
    "write a self-contained HTML calibration report of score columns",
    "Write one HTML file (figures embedded, no network needed) comparing score columns side by side: the core\n"
    "metrics, reliability diagrams with 95% Wilson intervals per bin over the score histogram, the cumulative\n"
    "differences behind ECCE; MCE and the worst segments with --segments (--categorical declares\n"
    "integer-coded segment columns categorical); PCOC and F-RCE per field value with --field. With\n"
    "--outcome regression (a continuous label): MSE, MAE, ECCE, mean outcome against mean prediction per\n"
    "bin, and the regression MCE with --segments. With --score-cols (one probability column per class, k\n"
    "classes): the metrics of k classes, top-label and per-class (one-vs-rest) reliability diagrams, and with\n"
    "--segments the classwise MCE of every class and the worst segments of the worst class.\n\n"
    "example: mcal report test.csv --label-col y --score-col p --score-col p_calibrated --segments age,country\n"
    "         -o report.html\n"
    "         mcal report test.csv --label-col y --score-cols p_ant,p_bee,p_cat --segments age -o report.html",
    _configure,
    _run,
)

"""``mcal evaluate``: every core metric for each score column, as a table or JSON, and a reliability diagram."""

from __future__ import annotations

import json
import math

from mcal._persistence import atomic_write_bytes
from mcal.cli._common import Command, add_data_arguments, column, labels_scores_weights, read_table
from mcal.metrics import calibration_summary


def _configure(parser) -> None:
    add_data_arguments(parser, score_required=True, multiple_scores=True)
    parser.add_argument("--field", metavar="COL", help="field column: adds F-RCE (field-level relative calibration error)")
    parser.add_argument("--n-bins", type=int, default=10, metavar="N", help="equal-width bins of the ECE (default 10)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--plot", metavar="OUT.png", help="write a reliability diagram of every score column")


def _json_safe(value: float) -> float | None:
    return None if isinstance(value, float) and math.isnan(value) else value


def _run(args) -> int:
    df = read_table(args.data, sep=args.sep)
    y, _, w = labels_scores_weights(df, label_col=args.label_col, score_col=None, weight_col=args.weight_col, pos_label=args.pos_label)
    scores = {name: column(df, name, "--score-col").to_numpy() for name in args.score_col}
    field = column(df, args.field, "--field").to_numpy() if args.field else None
    table = calibration_summary(y, scores, sample_weight=w, field=field, n_bins=args.n_bins)
    if args.plot:
        _plot(y, scores, w, args.plot)
    if args.json:
        out = {
            "n_samples": int(len(df)),
            "total_weight": float(w.sum()) if w is not None else float(len(df)),
            "metrics": {name: {k: _json_safe(float(v)) for k, v in row.items()} for name, row in table.iterrows()},
        }
        print(json.dumps(out, indent=2, allow_nan=False))
    else:
        print(f"{len(df)} rows{'' if w is None else f', total weight {w.sum():.6g}'}, label {args.label_col!r}")
        print(table.to_string(float_format=lambda v: f"{v:.6f}"))
    return 0


def _plot(y, scores, w, path) -> None:
    import io

    from mcal._optional import import_optional
    from mcal.plotting import plot_reliability_diagram

    plt = import_optional("matplotlib.pyplot")
    fig, ax = plt.subplots(figsize=(6, 6))
    try:
        for name, p in scores.items():
            plot_reliability_diagram(y, p, sample_weight=w, label=name, ax=ax)
        buf = io.BytesIO()
        fig.savefig(buf, format=str(path).rsplit(".", 1)[-1].lower() if "." in str(path) else "png", dpi=120)
    finally:
        plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())


EVALUATE = Command(
    "evaluate", "print calibration and ranking metrics of score columns",
    "Compute log loss, Brier score, ROC-AUC, PR-AUC, ECE, ECCE (with its sigma scale and p-value) and PCOC\n"
    "for each score column; F-RCE with --field.\n\n"
    "example: mcal evaluate test.csv --score-col p --score-col p_calibrated --label-col y --plot diagram.png",
    _configure, _run,
)

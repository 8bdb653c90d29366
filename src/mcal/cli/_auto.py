"""The method comparison of the command line: ``mcal fit --method auto``, ``mcal evaluate --compare-methods`` and
``mcal report --compare-methods``, all by :func:`mcal.select_calibrator`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcal._registry import COMPLEXITY_ORDER
from mcal.cli._common import feature_frame, labels_scores_weights, read_data, score_values
from mcal.cli._layout import terminal_width, wrap
from mcal.cli._options import CLIError, named_as_options, split_names

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import pandas as pd

    from mcal.selection import CalibratorSelection

#: The ``--method`` of ``mcal fit`` that compares the candidates and keeps the chosen one.
AUTO = "auto"


def add_candidates_argument(parser, needs: str) -> None:
    """``--candidates``: the methods compared (default: those of :func:`mcal.select_calibrator`)."""
    parser.add_argument(
        "--candidates", metavar="A,B,C", help=f"with {needs}: the methods compared, among "
        f"{', '.join(COMPLEXITY_ORDER)} (default: identity, temperature, platt, beta, histogram and isotonic; "
        "per-field-isotonic with --field; mcgrad with features)",
    )  # fmt: skip


def add_compare_argument(parser) -> None:
    """``--compare-methods`` and ``--candidates`` of ``mcal evaluate`` and ``mcal report``."""
    parser.add_argument(
        "--compare-methods", action="store_true", help="also cross-fit the calibration methods on the data (one "
        "--score-col; the --segments columns as features, --field as the field) on 5 shared folds and compare "
        "their held-out log loss and MCE: the table of `mcal fit --method auto`",
    )  # fmt: skip
    add_candidates_argument(parser, "--compare-methods")


def _candidates(args) -> list[str] | None:
    names = split_names(getattr(args, "candidates", None), "--candidates")
    return names or None


def select(y, p, w, X, field, args, random_state: int) -> CalibratorSelection:
    """:func:`mcal.select_calibrator` with the command line's candidates; its ValueErrors name the option."""
    from mcal.selection import select_calibrator

    with named_as_options({"candidates": "--candidates"}):
        return select_calibrator(p, y, X=X, field=field, candidates=_candidates(args), sample_weight=w,
                                 random_state=random_state)  # fmt: skip


def print_comparison(selection: CalibratorSelection, n_rows: int) -> None:
    """The comparison table, no wider than the terminal (80 characters when the output is not one), as the rest of
    the command line's output."""
    width = terminal_width()
    print("\n" + wrap(f"methods compared on {n_rows} rows, {int(selection.folds.max()) + 1} shared folds (held-out "
                      "log loss, paired SE against the best; MCE of the held-out predictions):", width))  # fmt: skip
    print(selection.summary(width=width))


def fit(args, features: list[str], random_state: int) -> int:
    """``mcal fit --method auto``: compare the candidates, save the chosen one refitted on all rows, with the
    comparison in the model file's metadata."""
    from mcal._persistence import save

    for option, value in (("--param", args.param), ("--device", args.device)):
        if value:
            raise CLIError(f"{option} applies to one method; got {option} with --method auto (choose with "
                           "--candidates, then set parameters in a fit of the chosen method)")  # fmt: skip
    if args.scheduler is not None or args.dask_workers is not None:
        raise CLIError("--method auto needs the data in memory: it is not available with --scheduler or "
                       "--dask-workers")  # fmt: skip
    df = read_data(args, text_columns=[args.field] if args.field else [])
    y, p, w = labels_scores_weights(df, label_col=args.label_col, score_col=args.score_col,
                                    weight_col=args.weight_col, pos_label=args.pos_label)  # fmt: skip
    X = feature_frame(df, features, args.field)
    selection = select(y, p, w, X, args.field, args, random_state)
    print_comparison(selection, len(df))
    model = selection.calibrator
    metadata = {"method": selection.chosen, "method_requested": AUTO, "selection": selection.to_dict(),
                "score_col": args.score_col, "features": features, "field": args.field}  # fmt: skip
    save(model, args.output, metadata=metadata)
    print(f"wrote {args.output} ({type(model).__name__}, method {selection.chosen!r}, fitted on {len(df)} rows; "
          "the comparison is in its metadata)")  # fmt: skip
    return 0


def check_compare(args) -> None:
    """Refuse ``--candidates`` without ``--compare-methods``, and ``--compare-methods`` with several score columns
    or another outcome than binary labels."""
    if not args.compare_methods:
        if args.candidates is not None:
            raise CLIError("--candidates needs --compare-methods (the comparison it sets)")
        return
    if args.score_cols is not None:
        raise CLIError("--compare-methods calibrates one score column (--score-col); got --score-cols")
    if len(args.score_col) != 1:
        raise CLIError(f"--compare-methods calibrates one score column; got {len(args.score_col)}: {args.score_col}")
    if getattr(args, "outcome", "classification") != "classification":
        raise CLIError("--compare-methods applies to binary labels; got --outcome regression")


def compare(df: pd.DataFrame, y, w, X, args) -> CalibratorSelection:
    """The comparison of ``--compare-methods`` on the one ``--score-col`` of ``df``."""
    p = score_values(df, args.score_col[0])
    field = args.field if args.field else None
    if field is not None:
        import pandas as pd

        X = pd.concat([X, df[[field]]], axis=1) if X is not None and field not in X.columns else (
            df[[field]] if X is None else X)  # fmt: skip
    return select(y, p, w, X, field, args, 0)

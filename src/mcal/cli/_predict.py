"""``mcal predict``: a model file applied to a table, written with the calibrated column added."""

from __future__ import annotations

from mcal.cli import _multiclass
from mcal.cli._common import check_table_output, read_data, score_values, write_table
from mcal.cli._estimator import check_device_option, check_features_left_out, feature_input
from mcal.cli._options import CLIError, Command, add_csv_arguments, split_names


def _configure(parser) -> None:
    parser.add_argument("model", metavar="MODEL", help="model file written by `mcal fit` (or mcal.save)")
    parser.add_argument("data", metavar="DATA", help="CSV or Parquet file with the score column (and features)")
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="output file: .csv or .csv.gz (comma-separated), .tsv (tab-separated), .parquet or .pq",
    )
    scores = parser.add_mutually_exclusive_group()
    scores.add_argument("--score-col", metavar="COL", help="score column (default: the one used at fit time)")
    scores.add_argument("--score-cols", metavar="A,B,C", help="a model for k classes: its probability columns, one "
                        "per class in the order of fit (default: those used at fit time); writes <column>_calibrated "
                        "for each")  # fmt: skip
    parser.add_argument(
        "--output-col", metavar="COL", help="name of the added column (default: <score-col>_calibrated)"
    )
    parser.add_argument("--features", metavar="A,B,C",
                        help="only for a model fitted in Python on an array (no column names): the columns of DATA "
                             "that hold its features, in the order of the array's columns")  # fmt: skip
    add_csv_arguments(parser)
    parser.add_argument(
        "--compile",
        action="store_true",
        help="MCGrad only: compile the model's LightGBM rounds with lleaves before predicting "
        "(faster on large tables; needs `pip install 'mcal[compiled]'`)",
    )
    parser.add_argument("--device", metavar="DEV",
                        help="MCNet with inference='exact' only: torch device of the network pass, cpu (default, "
                             "wherever the model was trained), cuda or cuda:N")  # fmt: skip


def _run(args) -> int:
    from mcal import MCGrad, MCNet
    from mcal._persistence import load
    from mcal.multiclass import MulticlassCalibrator

    check_table_output(args.output, "-o/--output", inputs=[("MODEL", args.model), ("DATA", args.data)])
    given = split_names(args.features, "--features")
    model, meta = load(args.model, return_metadata=True)
    if isinstance(model, MulticlassCalibrator):
        refuse = [o for o, v in (("--compile", args.compile), ("--device", args.device)) if v]
        if refuse:
            raise CLIError(f"{refuse[0]} applies to binary MCGrad and MCNet models; {args.model} holds a "
                           f"{type(model).__name__} for {model.n_classes_} classes")  # fmt: skip
        return _multiclass.predict(args, model, meta, given)
    if args.score_cols is not None:
        raise CLIError(f"--score-cols applies to a model for k classes; {args.model} holds a binary "
                       f"{type(model).__name__}: name its score column with --score-col")  # fmt: skip
    check_features_left_out(model, given, model.uses_features)
    if args.compile:
        if not isinstance(model, MCGrad):
            raise CLIError(f"--compile applies to MCGrad models only; {args.model} holds a {type(model).__name__}")
        model.compile()
    options = {}
    if args.device is not None:
        if not (isinstance(model, MCNet) and model.inference == "exact"):
            held = (
                f"an MCNet with inference={model.inference!r}"
                if isinstance(model, MCNet)
                else f"a {type(model).__name__}"
            )
            raise CLIError(f"--device applies to MCNet models with inference='exact' only; {args.model} holds {held}")
        check_device_option(args.device)
        options["device"] = args.device
    score_col = args.score_col or meta.get("score_col")
    if not score_col:
        raise CLIError("--score-col is required: the model file does not record one")
    field = meta.get("field") if "features" in meta else getattr(model, "field", None)
    df = read_data(args, text_columns=[field] if isinstance(field, str) else [])  # read as at fit time
    p = score_values(df, score_col, model.outcome)
    out_col = args.output_col or f"{score_col}_calibrated"
    if out_col in df.columns:
        raise CLIError(f"--output-col {out_col!r} is already a column of DATA; choose another name")
    if model.uses_features:
        df[out_col] = model.predict(p, X=feature_input(model, meta, df, given), **options)
    else:
        df[out_col] = model.predict(p)
    write_table(df, args.output)
    print(f"wrote {args.output} with column {out_col!r} ({len(df)} rows)")
    return 0


PREDICT = Command(
    "predict",
    "add calibrated probabilities to a table",
    "Apply a saved model to a table and write it with a calibrated column added.\n\n"
    "example: mcal predict model.json test.parquet -o test_calibrated.parquet\n"
    "A model for k classes (fit with --score-cols) writes one column <column>_calibrated per class.\n"
    "MCGrad models predict faster with --compile (lleaves, the `compiled` extra), same values to 1e-12.",
    _configure,
    _run,
)

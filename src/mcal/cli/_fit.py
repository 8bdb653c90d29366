"""``mcal fit`` and ``mcal predict``."""

from __future__ import annotations

import inspect
import json

import pandas as pd

from mcal import MCGrad
from mcal._persistence import load, save
from mcal._registry import METHODS, get_method
from mcal._validation import check_y_prob
from mcal.cli import _dask
from mcal.cli._common import (
    CLIError,
    Command,
    add_data_arguments,
    check_output,
    column,
    labels_scores_weights,
    read_table,
    split_names,
    write_table,
)


def _parse_param(text: str) -> tuple[str, object]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise CLIError(f"--param must look like NAME=VALUE; got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def build_estimator(
    method: str,
    *,
    field: str | None,
    params: list[str],
    random_state: int | None,
    progress: bool | None = False,
    features: list[str] | None = None,
):
    """Instantiate a registered method with the command line's settings (``--field``, ``--param``, seed).

    ``--param calibrator=NAME`` gives :class:`~mcal.PerFieldCalibrator` an unfitted instance of the registered
    method NAME (e.g. ``platt``). ``--features`` of a field-aware method go to its auxiliary network (``auxiliary_features``) where it has
    one; a field-aware method without one reads only its field, so features given to it are an error rather
    than silently unused.

    Methods with a long loop (MCGrad rounds, MCNet epochs) take a ``progress`` parameter (see
    :func:`mcal._progress.progress`); it is set to ``progress`` unless ``--param progress=...`` sets it.
    """
    cls = get_method(method)
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
    kwargs = dict(_parse_param(p) for p in params)
    unknown = set(kwargs) - accepted
    if unknown:
        raise CLIError(f"--param {sorted(unknown)} not accepted by {method}; its parameters are {sorted(accepted)}")
    if isinstance(kwargs.get("calibrator"), str):  # per-field calibration of any registered univariate method
        name = kwargs["calibrator"]
        if name not in METHODS:
            raise CLIError(f"--param calibrator must name a method (e.g. platt, sir); got {name!r}")
        kwargs["calibrator"] = get_method(name)()
    if field is not None:
        if "field" not in accepted:
            raise CLIError(f"--field is not used by method {method!r}; methods with a field: see `mcal fit --help`")
        kwargs["field"] = field
    elif "field" in accepted and kwargs.get("field") is None:
        raise CLIError(f"method {method!r} needs --field COL, the field (context) column; got no --field")
    if features and "field" in accepted:
        if "auxiliary_features" not in accepted:
            raise CLIError(f"method {method!r} reads only its --field column; drop --features")
        kwargs.setdefault("auxiliary_features", list(features))
    if random_state is not None and "random_state" in accepted:
        kwargs["random_state"] = random_state
    if "progress" in accepted:
        kwargs.setdefault("progress", progress)
    return cls(**kwargs)


def feature_frame(df: pd.DataFrame, features: list[str], field: str | None) -> pd.DataFrame | None:
    """The X passed to feature-aware methods: the named feature columns plus the field column."""
    names = list(features) + ([field] if field is not None and field not in features else [])
    if not names:
        return None
    for name in names:
        column(df, name, "--features" if name in features else "--field")
    return df[names]


def _configure_fit(parser) -> None:
    add_data_arguments(parser, score_required=True)
    parser.add_argument("--method", required=True, choices=sorted(METHODS), metavar="NAME",
                        help="calibration method: " + ", ".join(sorted(METHODS)))
    parser.add_argument("--features", metavar="A,B,C", help="feature columns, for methods that use features (e.g. mcgrad)")
    parser.add_argument("--field", metavar="COL", help="field (context) column, for field-aware methods (e.g. mcnet)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="set a method parameter (value parsed as JSON when possible); repeatable")
    parser.add_argument("--random-state", type=int, metavar="N", help="seed, for methods that use randomness")
    parser.add_argument("-o", "--output", required=True, metavar="MODEL.json", help="model file to write")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar for methods with rounds or epochs (shown only on a terminal anyway)")
    _dask.add_arguments(parser, step_timeout=True)


def _run_fit(args) -> int:
    check_output(args.output, "-o/--output")
    features = split_names(args.features)
    for option, names in (("--features", features), ("--field", [args.field] if args.field else [])):
        if args.label_col in names:
            raise CLIError(f"{option} must not name the label column (--label-col); got {args.label_col!r}, "
                           "which the model would learn from and which new data does not have")
    if _dask.requested(args):
        model = build_estimator(args.method, field=args.field, params=args.param, random_state=args.random_state)
        return _dask.fit(args, model, features)
    if args.dask_timeout is not None:
        raise CLIError("--dask-timeout needs --scheduler or --dask-workers (it limits the steps on a Dask cluster)")
    df = read_table(args.data, sep=args.sep)
    y, p, w = labels_scores_weights(
        df, label_col=args.label_col, score_col=args.score_col, weight_col=args.weight_col, pos_label=args.pos_label
    )
    model = build_estimator(args.method, field=args.field, params=args.param, random_state=args.random_state,
                            progress=False if args.quiet else None, features=features)
    X = feature_frame(df, features, args.field)
    if X is not None and not model.uses_features:
        raise CLIError(f"method {args.method!r} uses only the scores; drop --features")
    if model.uses_features and X is None and "field" not in model.get_params():
        raise CLIError(f"method {args.method!r} needs feature columns: pass --features A,B,C")
    if model.uses_features:
        model.fit(p, y, X=X, sample_weight=w)
    else:
        model.fit(p, y, sample_weight=w)
    metadata = {"method": args.method, "score_col": args.score_col, "features": features, "field": args.field}
    save(model, args.output, metadata=metadata)
    print(f"wrote {args.output} ({type(model).__name__} fitted on {len(df)} rows)")
    return 0


def _configure_predict(parser) -> None:
    parser.add_argument("model", metavar="MODEL", help="model file written by `mcal fit` (or mcal.save)")
    parser.add_argument("data", metavar="DATA", help="CSV or Parquet file with the score column (and features)")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="output file, CSV or Parquet by extension")
    parser.add_argument("--score-col", metavar="COL", help="score column (default: the one used at fit time)")
    parser.add_argument("--output-col", metavar="COL", help="name of the added column (default: <score-col>_calibrated)")
    parser.add_argument("--sep", metavar="SEP", help="CSV field separator (default: detected)")
    parser.add_argument("--compile", action="store_true",
                        help="MCGrad only: compile the model's LightGBM rounds with lleaves before predicting "
                             "(faster on large tables; needs `pip install 'mcal[compiled]'`)")


def _run_predict(args) -> int:
    check_output(args.output, "-o/--output")
    model, meta = load(args.model, return_metadata=True)
    if args.compile:
        if not isinstance(model, MCGrad):
            raise CLIError(f"--compile applies to MCGrad models only; {args.model} holds a {type(model).__name__}")
        model.compile()
    score_col = args.score_col or meta.get("score_col")
    if not score_col:
        raise CLIError("--score-col is required: the model file does not record one")
    df = read_table(args.data, sep=args.sep)
    p = check_y_prob(column(df, score_col, "--score-col").to_numpy(), f"score column {score_col!r}")
    out_col = args.output_col or f"{score_col}_calibrated"
    if out_col in df.columns:
        raise CLIError(f"--output-col {out_col!r} is already a column of DATA; choose another name")
    if model.uses_features:
        features, field = list(meta.get("features") or []), meta.get("field")
        if "features" not in meta:  # saved by mcal.save from Python: the column names the model saw at fit
            features = list(getattr(model, "feature_names_in_", None) or [])
        for name in [*features, *([field] if field else [])]:
            column(df, name, "the model was fitted with --features/--field; its column")
        X = feature_frame(df, features, field)
        df[out_col] = model.predict(p, X=X)
    else:
        df[out_col] = model.predict(p)
    write_table(df, args.output)
    print(f"wrote {args.output} with column {out_col!r} ({len(df)} rows)")
    return 0


FIT = Command(
    "fit", "fit a calibrator and save it as a model file",
    "Fit a calibration method on a table of scores and labels and write a JSON model file.\n\n"
    "example: mcal fit train.csv --score-col p --label-col y --method isotonic -o model.json\n"
    "on a cluster: mcal fit 'data/*.parquet' --score-col p --label-col y --method mcgrad --features a,b \\\n"
    "                --scheduler tcp://host:8786 -o model.json   (or --dask-workers 4 for a local cluster)",
    _configure_fit, _run_fit,
)
PREDICT = Command(
    "predict", "add calibrated probabilities to a table",
    "Apply a saved model to a table and write it with a calibrated column added.\n\n"
    "example: mcal predict model.json test.parquet -o test_calibrated.parquet\n"
    "MCGrad models predict faster with --compile (lleaves, the `compiled` extra), same values to 1e-12.",
    _configure_predict, _run_predict,
)

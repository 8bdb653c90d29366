"""``mcal fit`` and ``mcal predict``."""

from __future__ import annotations

import inspect
import json
import warnings
from typing import TYPE_CHECKING, Any

from mcal._optional import import_optional
from mcal._registry import METHODS, get_method
from mcal.cli import _auto, _dask, _multiclass
from mcal.cli._common import (
    CLIError,
    Command,
    add_csv_arguments,
    add_data_arguments,
    check_count,
    check_output,
    check_table_output,
    column,
    labels_scores_weights,
    read_data,
    repeated,
    score_values,
    split_names,
    write_table,
)

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import pandas as pd


#: Seed of ``mcal fit`` without ``--random-state``: fits are reproducible by default (issue 19).
DEFAULT_RANDOM_STATE = 0
#: Features listed by name in the summary ``mcal fit`` prints.
_N_TOP_FEATURES = 5

#: Method parameters that an option of ``mcal fit`` sets, so ``--param`` must not: the model file records the
#: columns of --field and --features for ``mcal predict``, --random-state is the one seed, and --device is checked
#: before any data is read.
_OWN_OPTION = {
    "random_state": "--random-state N",
    "field": "--field COL",
    "auxiliary_features": "--features A,B,C",
    "device": "--device DEV",
    "n_jobs": "--n-jobs N",
}


def _parse_param(text: str) -> tuple[str, object]:
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise CLIError(f"--param must look like NAME=VALUE; got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def _parse_params(params: list[str]) -> dict[str, object]:
    """``--param`` settings by name; a name set twice, or one with its own option, is an error."""
    pairs = [_parse_param(p) for p in params]
    names = [name for name, _ in pairs]
    twice = repeated(names)
    if twice:
        raise CLIError(f"--param must set each parameter once; got {twice} more than once")
    for text, name in zip(params, names, strict=False):
        if name in _OWN_OPTION:
            raise CLIError(f"--param must not set {name}, which has its own option {_OWN_OPTION[name]}; "
                           f"got --param {text}")  # fmt: skip
    return dict(pairs)


def _methods_with(parameter: str) -> list[str]:
    """The registered methods whose constructor takes ``parameter`` (``device``: MCNet; ``n_jobs``: LightGBM's)."""
    return [name for name in sorted(METHODS) if parameter in inspect.signature(get_method(name).__init__).parameters]


def check_device_option(device: str) -> None:
    """Refuse a ``--device`` that is not 'cpu', 'cuda' or 'cuda:N', or that torch cannot use on this machine, with
    a message naming the option (a ValueError, reported as ``mcal: error: --device must ...``)."""
    from mcal.mcnet import torch_device

    torch_device(import_optional("torch"), "--device", device)


def field_setting(method: str, cls: type[Any], field: str | None) -> dict[str, str]:
    """``{"field": field}`` for a method (named ``method``, of class ``cls``) that takes ``--field``, or ``{}``.

    Raises
    ------
    CLIError
        On ``--field`` for a method without one, or no ``--field`` for a method that needs it.
    """
    accepted = inspect.signature(cls.__init__).parameters
    if field is not None:
        if "field" not in accepted:
            raise CLIError(f"--field is not used by method {method!r}; methods with a field: see `mcal fit --help`")
        return {"field": field}
    if "field" in accepted and getattr(cls, "requires_features", False):  # MCNet's field is optional
        raise CLIError(f"method {method!r} needs --field COL, the field (context) column; got no --field")
    return {}


def build_estimator(
    method: str,
    *,
    field: str | None,
    params: list[str],
    random_state: int | None,
    quiet: bool = False,
    features: list[str] | None = None,
    device: str | None = None,
    n_jobs: int | None = None,
):
    """Instantiate a registered method with the command line's settings (``--field``, ``--param``, seed, device,
    threads).

    ``--param calibrator=NAME`` gives :class:`~mcal.PerFieldCalibrator` an unfitted instance of the registered
    method NAME (e.g. ``platt``). ``--features`` of a field-aware method go to its auxiliary network (``auxiliary_features``) where it has
    one; a field-aware method without one reads only its field, so features given to it are an error rather
    than silently unused. ``--device`` is the training device of a method with a ``device`` parameter (MCNet),
    checked here, before any data is read; other methods train on the CPU and refuse it. ``--param`` may name
    each parameter once, and none of ``random_state``, ``field``, ``auxiliary_features``, ``device`` and
    ``n_jobs``, which their own options set. ``--n-jobs`` is the ``n_jobs`` (LightGBM threads) of a method that
    has one; others refuse it.

    Methods with a long loop (MCGrad rounds, MCNet epochs) take a ``progress`` parameter (see
    :func:`mcal._progress.progress`): False with ``quiet`` (``--quiet``, which ``--param progress=...`` must not
    contradict), else ``--param progress=...`` or None (a bar on a terminal).
    """
    cls = get_method(method)
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
    kwargs = _parse_params(params)
    unknown = set(kwargs) - accepted
    if unknown:
        raise CLIError(f"--param {sorted(unknown)} not accepted by {method}; its parameters are {sorted(accepted)}")
    if isinstance(kwargs.get("calibrator"), str):  # per-field calibration of any registered univariate method
        name = kwargs["calibrator"]
        if name not in METHODS:
            raise CLIError(f"--param calibrator must name a method (e.g. platt, sir); got {name!r}")
        kwargs["calibrator"] = get_method(name)()
    kwargs.update(field_setting(method, cls, field))
    if features and "field" in accepted:
        if "auxiliary_features" not in accepted:
            raise CLIError(f"method {method!r} reads only its --field column; drop --features")
        kwargs["auxiliary_features"] = list(features)
    if random_state is not None and "random_state" in accepted:
        kwargs["random_state"] = random_state
    if device is not None:
        if "device" not in accepted:
            raise CLIError(f"--device is not used by method {method!r}, which trains on the CPU; methods trained on "
                           f"a chosen device: {', '.join(_methods_with('device'))}")  # fmt: skip
        check_device_option(device)
        kwargs["device"] = device
    kwargs.update(threads_setting(method, accepted, n_jobs))
    if "progress" in accepted:
        if quiet and "progress" in kwargs:
            raise CLIError(f"--param progress must be left out with --quiet, which sets progress=false; "
                           f"got --param progress={json.dumps(kwargs['progress'])} and --quiet")  # fmt: skip
        kwargs.setdefault("progress", False if quiet else None)
    return cls(**kwargs)


def _soft_methods() -> list[str]:
    return [
        name
        for name in sorted(METHODS)
        if get_method(name).accepts_soft_labels and get_method(name).outcome == "classification"
    ]


def _check_soft_labels(df: pd.DataFrame, args, model) -> None:
    """Refuse soft labels (all in [0, 1], some strictly between) for a method that takes only 0/1, naming the
    methods that take them (other bad labels are reported by the label check, as for every method)."""
    import numpy as np

    if model.accepts_soft_labels or args.pos_label is not None:
        return
    raw = column(df, args.label_col, "--label-col").to_numpy()
    if raw.dtype.kind not in "fiu":
        return
    values = raw.astype(np.float64)
    soft = (values > 0) & (values < 1)
    if soft.any() and np.all((values >= 0) & (values <= 1)):
        raise CLIError(
            f"label column {args.label_col!r} must hold 0/1 labels for method {args.method!r}; got {int(soft.sum())} "
            f"soft label(s) strictly between 0 and 1, such as {values[soft][0]:g}; methods that accept soft labels: "
            f"{', '.join(_soft_methods())}"
        )


def feature_frame(df: pd.DataFrame, features: list[str], field: str | None) -> pd.DataFrame | None:
    """The X passed to feature-aware methods: the named feature columns plus the field column."""
    names = list(features) + ([field] if field is not None and field not in features else [])
    if not names:
        return None
    for name in names:
        column(df, name, "--features" if name in features else "--field")
    return df[names]


def _configure_fit(parser) -> None:
    add_data_arguments(parser, score_required=True, soft_labels=True, classes=True)
    parser.add_argument(
        "--method",
        required=True,
        choices=sorted(set(METHODS) | set(_multiclass.method_names()) | {_auto.AUTO}),
        metavar="NAME",
        help="calibration method: "
        + ", ".join(sorted(METHODS))
        + "; or auto (compare the methods of --candidates on 5 shared folds, print the table, keep the simplest "
        "within one standard error of the best)"
        + "; with --score-cols (k classes): "
        + ", ".join(_multiclass.MULTICLASS_METHODS)
        + ", or ovr-NAME (one-vs-rest around the binary method NAME, "
        "e.g. ovr-isotonic, its --param settings going to NAME)",
    )
    parser.add_argument("--features", metavar="A,B,C",
                        help="feature columns, for methods that use features (e.g. mcgrad, hkrr); mcgrad and mcnet "
                             "also fit without, on the score alone")  # fmt: skip
    parser.add_argument("--field", metavar="COL", help="field (context) column, for field-aware methods (e.g. mcnet)")
    _auto.add_candidates_argument(parser, "--method auto")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                        help="set a method parameter (value parsed as JSON when possible); repeatable, once per "
                             "NAME; random_state, field, auxiliary_features and device are set by --random-state, "
                             "--field, --features and --device")  # fmt: skip
    parser.add_argument("--random-state", type=int, metavar="N", help=f"seed, for methods that use randomness "
                        f"(default {DEFAULT_RANDOM_STATE}, so that two runs give the same model; recorded in the "
                        "model file)")  # fmt: skip
    parser.add_argument("--device", metavar="DEV",
                        help="torch device to train on, for methods with one (mcnet): cpu (default), cuda or cuda:N; "
                             "the model predicts on any machine, by default on the CPU")  # fmt: skip
    parser.add_argument("--n-jobs", type=int, metavar="N",
                        help="LightGBM threads of the methods that have them (mcgrad, dfmc, ...): N >= 1, or -1 for "
                             "every core; default: one per 10,000 rows, at most the cores that other processes "
                             "leave free, so that a busy machine does not slow the fit many times over")  # fmt: skip
    parser.add_argument("-o", "--output", required=True, metavar="MODEL.json", help="model file to write")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar for methods with rounds or epochs (shown only on a terminal anyway)",
    )
    _dask.add_arguments(parser, step_timeout=True)


def _check_n_jobs(args) -> None:
    """Refuse ``--n-jobs`` of 0, twice (also as ``--param n_jobs``), or where it would not reach the fit."""
    if args.n_jobs == 0:
        raise CLIError("--n-jobs must be an integer >= 1, or a negative one counting back from the cores (-1: all); "
                       "got 0")  # fmt: skip
    if any(text.partition("=")[0].strip() == "n_jobs" for text in args.param):
        raise CLIError("--param n_jobs is set by --n-jobs N; give it once")
    if args.method == _auto.AUTO or _dask.requested(args):
        raise CLIError("--n-jobs applies to one method fitted here; not with --method auto, --scheduler or "
                       "--dask-workers")  # fmt: skip


def threads_setting(method: str, accepted: set[str], n_jobs: int | None) -> dict[str, int]:
    """``{"n_jobs": n_jobs}`` for a method whose parameters (``accepted``) have it, ``{}`` without ``--n-jobs``.

    Raises
    ------
    CLIError
        If ``--n-jobs`` is given for a method without ``n_jobs``.
    """
    if n_jobs is None:
        return {}
    if "n_jobs" not in accepted:
        raise CLIError(f"--n-jobs is not used by method {method!r}; methods with threads to set: "
                       f"{', '.join(_methods_with('n_jobs'))}")  # fmt: skip
    return {"n_jobs": n_jobs}


def _run_fit(args) -> int:
    from mcal._persistence import save

    check_count(args.random_state, "--random-state", 0)
    check_output(args.output, "-o/--output", inputs=[("DATA", args.data)])
    features = split_names(args.features, "--features")
    for option, names in (("--features", features), ("--field", [args.field] if args.field else [])):
        if args.label_col in names:
            raise CLIError(
                f"{option} must not name the label column (--label-col); got {args.label_col!r}, "
                "which the model would learn from and which new data does not have"
            )
    random_state = DEFAULT_RANDOM_STATE if args.random_state is None else args.random_state
    if args.n_jobs is not None:
        _check_n_jobs(args)
    if args.score_cols is not None:
        return _multiclass.fit(args, features, random_state)
    if args.method == _auto.AUTO:
        return _auto.fit(args, features, random_state)
    if args.candidates is not None:
        raise CLIError(f"--candidates needs --method auto (the comparison it sets); got --method {args.method}")
    if args.method not in METHODS:
        raise CLIError(f"--method {args.method} is a method for k classes: it needs --score-cols A,B,C (one "
                       "probability column per class) instead of --score-col")  # fmt: skip
    model = build_estimator(
        args.method,
        field=args.field,
        params=args.param,
        random_state=random_state,
        quiet=args.quiet,
        features=features,
        device=args.device,
        n_jobs=args.n_jobs,
    )
    if _dask.requested(args):
        return _dask.fit(args, model, features)
    if args.dask_timeout is not None:
        raise CLIError("--dask-timeout needs --scheduler or --dask-workers (it limits the steps on a Dask cluster)")
    df = read_data(args, text_columns=[args.field] if args.field else [])  # a field's values are labels, not numbers
    if model.outcome == "classification":  # the regression methods take any real outcome
        _check_soft_labels(df, args, model)
    y, p, w = labels_scores_weights(
        df,
        label_col=args.label_col,
        score_col=args.score_col,
        weight_col=args.weight_col,
        pos_label=args.pos_label,
        allow_soft=model.accepts_soft_labels,
        outcome=model.outcome,
    )
    assert p is not None  # fit reads a score column
    if p.size and p.min() == p.max():
        from mcal import CalibrationWarning

        warnings.warn(f"score column {args.score_col!r} is constant ({p[0]:g} on every row): the calibrator sees no "
                      "score variation, so its map away from that score is arbitrary", CalibrationWarning, stacklevel=2)  # fmt: skip
    X = feature_frame(df, features, args.field)
    if X is not None and not model.uses_features:
        raise CLIError(f"method {args.method!r} uses only the scores; drop --features")
    if X is None and model.requires_features:  # MCGrad and MCNet fit on the scores alone
        raise CLIError(f"method {args.method!r} needs feature columns: pass --features A,B,C")
    if model.uses_features:
        model.fit(p, y, X=X, sample_weight=w)
    else:
        model.fit(p, y, sample_weight=w)
    metadata = {"method": args.method, "score_col": args.score_col, "features": features, "field": args.field}
    save(model, args.output, metadata=metadata)
    print(f"wrote {args.output} ({type(model).__name__} fitted on {len(df)} rows)")
    for line in fit_summary(model, seeded=args.random_state is not None):
        print(f"  {line}")
    return 0


def fit_summary(model, *, seeded: bool) -> list[str]:
    """What a fit chose, in a few lines: the seed, rounds or epochs and why, validation loss, top features."""
    lines = []
    if "random_state" in model.get_params():
        origin = "" if seeded else " (the default; --random-state N for another)"
        lines.append(f"random_state {model.random_state}{origin}, recorded in the model file")
    losses = getattr(model, "validation_losses_", None)
    if losses is not None:  # MCGrad
        lines.append(f"rounds: {model.n_rounds_}; {_rounds_why(model)}")
        top = model.feature_importance().head(_N_TOP_FEATURES)
        if model.n_rounds_ and top.iloc[0] > 0:
            lines.append("top features by split gain: " + ", ".join(f"{k} {v:.4g}" for k, v in top.items() if v > 0))
    curve = getattr(model, "validation_loss_curve_", None)
    if curve is not None:  # MCNet
        held_out = (f"; held-out loss {curve[0]:.6f} at the warm start, {curve.min():.6f} at the best step"
                    if curve.size else "")  # fmt: skip
        lines.append(f"epochs: {model.n_epochs_}, weights kept from epoch {model.best_epoch_} (step "
                     f"{model.best_step_} of {model.n_steps_}){held_out}")  # fmt: skip
    return lines


def _rounds_why(model) -> str:
    """Why MCGrad kept its rounds: the early-stopping metric (and log loss) on the validation rows, before and
    after them."""
    losses, n = model.validation_losses_, model.n_rounds_
    if not losses.size:
        return "early stopping off"
    loss = f"log loss {losses[0]:.6f} before, {losses[n]:.6f} after"
    evaluated = f"({losses.size - 1} round{'s' if losses.size != 2 else ''} evaluated)"
    metric = model.early_stopping_metric  # from the CLI a name: "log_loss" or "mce"
    if metric == "log_loss":
        return f"early stopping chose it: validation {loss} {evaluated}"
    scores = model.validation_scores_
    return (f"early stopping on the {metric} chose it: validation {metric} {scores[0]:.4f} before, "
            f"{scores[n]:.4f} after; {loss} {evaluated}")  # fmt: skip


def _configure_predict(parser) -> None:
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


def _named_columns(model, meta: dict) -> tuple[list[str], str] | None:
    """The columns of DATA a model reads, by name, and how it came by them: recorded by ``mcal fit``, or kept by
    the model from the DataFrame it was fitted on in Python. None for a model fitted on an array."""
    if "features" in meta:
        features, field = list(meta["features"] or []), meta.get("field")
        return features + (
            [field] if field and field not in features else []
        ), "the model was fitted with --features/--field; its column"
    names = model.feature_columns()
    return None if names is None else (names, "the model was fitted on a DataFrame with the column")


def _feature_input(model, meta: dict, df: pd.DataFrame, given: list[str]):
    """The X that ``model.predict`` takes from DATA: the named columns as a DataFrame, or for a model fitted on an
    array, the columns of ``--features`` as an array, in their order."""
    named = _named_columns(model, meta)
    if named is not None:
        names, origin = named
        if given:
            raise CLIError(f"--features must be left out: the model reads the columns {names[:10]} of DATA by name; "
                           f"got {given}")  # fmt: skip
        for name in names:
            column(df, name, origin)
        return df[names] if names else None
    if not given:
        raise CLIError(
            "--features must name the model's feature columns of DATA, in the order of the array it was fitted on: "
            "the model has no feature names (it was fitted in Python on an array without column names); got no "
            "--features. Alternatively fit it on a pandas DataFrame (or with `mcal fit`) to record the names"
        )
    # the columns of an array, unless its features are segments generated from them (HKRR, DFMC groups="generated")
    n_features = getattr(model, "n_features_in_", None) if getattr(model, "segments_", None) is None else None
    if n_features is not None and len(given) != n_features:
        raise CLIError(f"--features must name the model's {n_features} feature column(s), in the order of the "
                       f"array it was fitted on; got {len(given)}: {given}")  # fmt: skip
    for name in given:
        column(df, name, "--features")
    return df[given].to_numpy()


def _run_predict(args) -> int:
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
    if given and not model.uses_features:
        raise CLIError(f"--features must be left out: the model, a {type(model).__name__}, uses only the scores; "
                       f"got {given}")  # fmt: skip
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
        df[out_col] = model.predict(p, X=_feature_input(model, meta, df, given), **options)
    else:
        df[out_col] = model.predict(p)
    write_table(df, args.output)
    print(f"wrote {args.output} with column {out_col!r} ({len(df)} rows)")
    return 0


FIT = Command(
    "fit",
    "fit a calibrator and save it as a model file",
    "Fit a calibration method on a table of scores and labels and write a JSON model file.\n\n"
    "example: mcal fit train.csv --score-col p --label-col y --method isotonic -o model.json\n"
    "k classes: mcal fit train.csv --score-cols p_ant,p_bee,p_cat --label-col y --method temperature -o model.json\n"
    "on a cluster: mcal fit 'data/*.parquet' --score-col p --label-col y --method mcgrad --features a,b \\\n"
    "                --scheduler tcp://host:8786 -o model.json   (or --dask-workers 4 for a local cluster)",
    _configure_fit,
    _run_fit,
)
PREDICT = Command(
    "predict",
    "add calibrated probabilities to a table",
    "Apply a saved model to a table and write it with a calibrated column added.\n\n"
    "example: mcal predict model.json test.parquet -o test_calibrated.parquet\n"
    "A model for k classes (fit with --score-cols) writes one column <column>_calibrated per class.\n"
    "MCGrad models predict faster with --compile (lleaves, the `compiled` extra), same values to 1e-12.",
    _configure_predict,
    _run_predict,
)

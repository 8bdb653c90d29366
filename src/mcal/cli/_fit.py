"""``mcal fit``: a calibration method fitted on a table of scores and labels, saved as a model file."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from mcal._registry import METHODS, MULTICLASS_METHODS, get_method, multiclass_method_names
from mcal.cli import _auto, _dask, _multiclass
from mcal.cli._common import MODEL_ENDINGS, check_output, column, feature_frame, labels_scores_weights, read_data
from mcal.cli._estimator import build_estimator, parameter_options
from mcal.cli._options import (
    NON_NEGATIVE_INT,
    CLIError,
    Command,
    add_data_arguments,
    named_as_options,
    split_names,
)

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import pandas as pd


#: Seed of ``mcal fit`` without ``--random-state``: fits are reproducible by default (issue 19).
DEFAULT_RANDOM_STATE = 0
#: Features listed by name in the summary ``mcal fit`` prints.
_N_TOP_FEATURES = 5


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


def _configure(parser) -> None:
    add_data_arguments(parser, score_required=True, soft_labels=True, classes=True)
    parser.add_argument(
        "--method",
        required=True,
        choices=sorted(set(METHODS) | set(multiclass_method_names()) | {_auto.AUTO}),
        metavar="NAME",
        help="calibration method: "
        + ", ".join(sorted(METHODS))
        + "; or auto (compare the methods of --candidates on 5 shared folds, print the table, keep the simplest "
        "within one standard error of the best)"
        + "; with --score-cols (k classes): "
        + ", ".join(MULTICLASS_METHODS)
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
    parser.add_argument("--random-state", type=NON_NEGATIVE_INT, metavar="N", help=f"seed, for methods that use randomness "
                        f"(default {DEFAULT_RANDOM_STATE}, so that two runs with the same --n-jobs give the same "
                        "model; recorded in the model file)")  # fmt: skip
    parser.add_argument("--device", metavar="DEV",
                        help="torch device to train on, for methods with one (mcnet): cpu (default), cuda or cuda:N; "
                             "the model predicts on any machine, by default on the CPU")  # fmt: skip
    parser.add_argument("--n-jobs", type=int, metavar="N",
                        help="LightGBM threads of the methods that have them (mcgrad, dfmc, ...): N >= 1, or -1 for "
                             "every core; default: one per 10,000 rows, at most the cores that other processes "
                             "leave free, so that a busy machine does not slow the fit many times over; the model "
                             "can depend on the thread count, so give N for runs that repeat")  # fmt: skip
    parser.add_argument("-o", "--output", required=True, metavar="MODEL.json", help="model file to write")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar for methods with rounds or epochs (shown only on a terminal anyway)",
    )
    _dask.add_arguments(parser, step_timeout=True)


def _check_n_jobs(args) -> None:
    """Refuse ``--n-jobs`` twice (also as ``--param n_jobs``), or where it would not reach the fit (its value is
    the fitted method's to check)."""
    if any(text.partition("=")[0].strip() == "n_jobs" for text in args.param):
        raise CLIError("--param n_jobs is set by --n-jobs N; give it once")
    if args.method == _auto.AUTO or _dask.requested(args):
        raise CLIError("--n-jobs applies to one method fitted here; not with --method auto, --scheduler or "
                       "--dask-workers")  # fmt: skip


def _run(args) -> int:
    check_output(args.output, "-o/--output", inputs=[("DATA", args.data)], endings=MODEL_ENDINGS)
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
    if args.method == _auto.AUTO and args.score_cols is not None:
        raise CLIError(f"--method auto compares the methods of one score column (--score-col); got --score-cols "
                       f"{args.score_cols} (k classes): name one of {', '.join(multiclass_method_names())} with "
                       "--score-cols, or compare the methods on one column with --score-col")  # fmt: skip
    if args.method == _auto.AUTO:
        return _auto.fit(args, features, random_state)
    if args.candidates is not None:
        raise CLIError(f"--candidates needs --method auto (the comparison it sets); got --method {args.method}")
    if args.score_cols is not None:
        return _multiclass.fit(args, features, random_state)
    if args.method not in METHODS:
        raise CLIError(f"--method {args.method} is a method for k classes: it needs --score-cols A,B,C (one "
                       "probability column per class) instead of --score-col")  # fmt: skip
    return _fit_binary(args, features, random_state)


def _fit_binary(args, features: list[str], random_state: int) -> int:
    """``mcal fit --score-col``: fit one registered method (on a Dask cluster with ``--scheduler`` or
    ``--dask-workers``) and save it."""
    from mcal._persistence import save

    model = build_estimator(args.method, field=args.field, params=args.param, random_state=random_state,
                            quiet=args.quiet, features=features, device=args.device, n_jobs=args.n_jobs)  # fmt: skip
    if _dask.requested(args):
        with named_as_options(parameter_options(args.param)):
            return _dask.fit(args, model, features)
    if args.dask_timeout is not None:
        raise CLIError("--dask-timeout needs --scheduler or --dask-workers (it limits the steps on a Dask cluster)")
    df = read_data(args, text_columns=[args.field] if args.field else [])  # a field's values are labels, not numbers
    if model.outcome == "classification":  # the regression methods take any real outcome
        _check_soft_labels(df, args, model)
    y, p, w = labels_scores_weights(df, label_col=args.label_col, score_col=args.score_col,
                                    weight_col=args.weight_col, pos_label=args.pos_label,
                                    allow_soft=model.accepts_soft_labels, outcome=model.outcome)  # fmt: skip
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
    with named_as_options(parameter_options(args.param)):
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


FIT = Command(
    "fit",
    "fit a calibrator and save it as a model file",
    "Fit a calibration method on a table of scores and labels and write a JSON model file.\n\n"
    "example: mcal fit train.csv --score-col p --label-col y --method isotonic -o model.json\n"
    "k classes: mcal fit train.csv --score-cols p_ant,p_bee,p_cat --label-col y --method temperature -o model.json\n"
    "on a cluster: mcal fit 'data/*.parquet' --score-col p --label-col y --method mcgrad --features a,b \\\n"
    "                --scheduler tcp://host:8786 -o model.json   (or --dask-workers 4 for a local cluster)",
    _configure,
    _run,
)

"""The command line for k classes: one probability column per class, given with ``--score-cols``.

``mcal fit``, ``predict``, ``evaluate`` and ``report`` come here when ``--score-cols`` is given (or the model is
one of :mod:`mcal.multiclass`); the binary path with ``--score-col`` is untouched.
"""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

from mcal._registry import get_multiclass_method, multiclass_method_names
from mcal.cli._common import column, feature_frame, read_data, weight_values, write_table
from mcal.cli._estimator import (
    check_features_left_out,
    feature_input,
    field_setting,
    parameter_options,
    parse_params,
    threads_setting,
)
from mcal.cli._layout import metrics_text, terminal_width, wrap
from mcal.cli._options import CLIError, check_ci, named_as_options, split_names
from mcal.cli._per_value import class_per_value_tables, per_value_json, print_per_value
from mcal.cli._segments import segment_features, segments_of

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import numpy as np
    import pandas as pd


def score_groups(values: list[str] | None, df: pd.DataFrame) -> list[list[str]]:
    """The column lists of each ``--score-cols`` option: each of at least 2 columns, all of the same length, no
    column twice. A single name that is not a column of ``df`` is a prefix: the columns of ``df`` that start with
    it, in file order."""
    groups = []
    for value in values or []:
        names = split_names(value, "--score-cols")
        prefix = len(names) == 1 and names[0] not in df.columns
        if prefix:
            names = [c for c in df.columns if isinstance(c, str) and c.startswith(names[0])]
        if len(names) < 2:
            found = f", the start of {len(names)} column{'' if len(names) == 1 else 's'}: {names}" if prefix else ""
            raise CLIError(f"--score-cols must name at least 2 columns (one per class) or a prefix of at least 2 "
                           f"columns of DATA; got {value!r}{found}")  # fmt: skip
        groups.append(names)
    if len({len(g) for g in groups}) > 1:
        raise CLIError(f"--score-cols must name the same number of columns (classes) each time; got "
                       f"{[len(g) for g in groups]} in {[','.join(g) for g in groups]}")  # fmt: skip
    every = [name for g in groups for name in g]
    twice = sorted({n for n in every if every.count(n) > 1})
    if twice:
        raise CLIError(f"--score-cols must name each column once; got {twice} more than once")
    return groups


def _text(value: Any) -> str:
    """A label as text, integer-valued floats without their ``.0`` (the label 1.0 names the column ``p_1``)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def class_codes(labels: pd.Series, label_col: str, columns: list[str]) -> tuple[np.ndarray, list[Any]]:
    """The column of each row's class, and the class of each column (None: no label names it), by the rule of
    :data:`mcal.cli._options.SCORE_COLS_HELP`.

    Raises
    ------
    CLIError
        On missing labels, or labels that the rule does not map one-to-one onto the columns.
    """
    import numpy as np

    values = labels.to_numpy()
    missing = labels.isna().to_numpy()
    if missing.any():
        raise CLIError(f"label column {label_col!r} must not contain missing values; got {int(missing.sum())}")
    k = len(columns)
    if values.dtype.kind in "biuf" and np.all(np.mod(values, 1) == 0):
        values = values.astype(np.int64)
        if values.min() >= 0 and values.max() < k:
            return values.astype(np.intp), list(range(k))
    if values.dtype.kind not in "biuf":  # text (or text mixed with numbers): compared as text
        values = values.astype(str)
    classes = np.unique(values)
    names = [_text(c) for c in classes.tolist()]
    owner = [max((n for n in names if col.endswith(n)), key=len, default=None) for col in columns]
    got = f"got labels {names[:10]}{' ...' if len(names) > 10 else ''} and the columns {columns}"
    rule = (f"label column {label_col!r} must hold integers 0..{k - 1} (a column's position) or class names that "
            f"end one column's name each, or {k} class names none of which ends one")  # fmt: skip
    if all(o is None for o in owner):
        if len(classes) != k:
            raise CLIError(f"{rule}; {got}: {len(classes)} class names for {k} columns")
        return np.searchsorted(classes, values).astype(np.intp), classes.tolist()
    unmatched = [n for n in names if owner.count(n) != 1]
    if unmatched:
        raise CLIError(f"{rule}; {got}: {unmatched[:10]} end no column's name (or several)")
    column_of = np.array([owner.index(n) for n in names], dtype=np.intp)
    by_column = {j: c for c, j in zip(classes.tolist(), column_of.tolist(), strict=True)}
    return column_of[np.searchsorted(classes, values)], [by_column.get(j) for j in range(k)]


def score_matrix(df: pd.DataFrame, columns: list[str], logits: bool = False) -> np.ndarray:
    """The validated (n, k) probability matrix of ``columns`` (logits for a model with ``input="logit"``)."""
    from mcal._validation import check_class_scores

    for name in columns:
        column(df, name, "--score-cols")
    return check_class_scores(df[columns].to_numpy(), f"score columns {columns}", logits=logits)


def refuse(args, options: tuple[str, ...]) -> None:
    """Refuse the options of binary scores (given, i.e. not None, False or empty) with ``--score-cols``."""
    for option in options:
        value = getattr(args, option.lstrip("-").replace("-", "_"), None)
        if value not in (None, False, [], "classification"):
            raise CLIError(f"{option} applies to a single score column (--score-col), not to --score-cols; got "
                           f"{option} {value!r}")  # fmt: skip


def labels_and_matrices(args, df: pd.DataFrame, groups: list[list[str]], logits: bool = False):
    """Label codes, class of each column, the matrix of each group by name (its columns comma-joined), weights."""
    probs = {",".join(g): score_matrix(df, g, logits) for g in groups}
    y, classes = class_codes(column(df, args.label_col, "--label-col"), args.label_col, groups[0])
    return y, classes, probs, weight_values(df, args.weight_col)


def class_mapping(classes: list[Any], columns: list[str]) -> str:
    """``class -> column`` pairs, as printed after fit and evaluate."""
    return ", ".join(f"{'(absent)' if c is None else c} -> {col}" for c, col in zip(classes, columns, strict=True))


# ----------------------------------------------------------------------------------------------- fit, predict


def build_estimator(
    method: str, params: list[str], random_state: int, field: str | None = None, n_jobs: int | None = None
):
    """The unfitted calibrator of a ``--method`` name of :func:`mcal._registry.multiclass_method_names` with
    ``--param`` settings (for ``ovr-NAME``: the binary method's parameters, and its ``--field``) and ``--n-jobs``."""
    kwargs = parse_params(params)
    wrapper, binary = get_multiclass_method(method)
    cls = wrapper if binary is None else binary
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
    unknown = sorted(set(kwargs) - accepted)
    if unknown:
        raise CLIError(f"--param {unknown} not accepted by {method}; its parameters are {sorted(accepted)}")
    if "random_state" in accepted:
        kwargs["random_state"] = random_state
    kwargs.update(threads_setting(method, accepted, n_jobs))
    if binary is not None:
        kwargs.update(field_setting(method, cls, field))
        return wrapper(cls(**kwargs))
    if field is not None:
        raise CLIError(f"--field applies to a single score column (--score-col), not to --score-cols; got --field "
                       f"{field!r}")  # fmt: skip
    return cls(**kwargs)


def reads_features(model) -> bool:
    """Whether a multiclass model reads ``X``: one-vs-rest only where its binary method does."""
    from mcal.multiclass import OneVsRestCalibrator

    if isinstance(model, OneVsRestCalibrator):  # the calibrators it fitted, or the one it clones (set by fit here)
        binary = getattr(model, "calibrators_", [model.calibrator])[0]
        return binary is not None and bool(binary.uses_features)
    return bool(model.uses_features)


def fit(args, features: list[str], random_state: int) -> int:
    """``mcal fit --score-cols``: fit a calibrator of :mod:`mcal.multiclass` and save it with its columns."""
    from mcal._persistence import save

    refuse(args, ("--pos-label", "--device", "--scheduler", "--dask-workers", "--dask-timeout"))
    names = multiclass_method_names()
    if args.method not in names:
        raise CLIError(f"--method must be one of {', '.join(names)} with --score-cols (k classes); got "
                       f"{args.method!r}, a method for one score column")  # fmt: skip
    model = build_estimator(args.method, args.param, random_state, args.field, args.n_jobs)
    df = read_data(args, text_columns=[args.field] if args.field else [])  # a field's values are labels
    (columns,) = score_groups([args.score_cols], df)
    y, classes, probs, w = labels_and_matrices(args, df, [columns], model.input == "logit")
    X = feature_frame(df, features, args.field)
    if X is not None and not reads_features(model):
        raise CLIError(f"method {args.method!r} uses only the scores; drop --features")
    with named_as_options(parameter_options(args.param)):
        model.fit(probs[",".join(columns)], y, X=X, sample_weight=w)
    metadata = {"method": args.method, "score_cols": columns, "classes": classes, "features": features,
                "field": args.field}  # fmt: skip
    save(model, args.output, metadata=metadata)
    print(f"wrote {args.output} ({type(model).__name__} fitted on {len(df)} rows, {len(columns)} classes)")
    print(f"  classes: {class_mapping(classes, columns)}")
    return 0


def predict(args, model, meta: dict, given: list[str]) -> int:
    """``mcal predict`` of a model for k classes: one column ``<score col>_calibrated`` per class."""
    if args.score_col is not None or args.output_col is not None:
        option = "--score-col" if args.score_col is not None else "--output-col"
        raise CLIError(f"{option} applies to a binary model; {args.model} holds a {type(model).__name__} for "
                       f"{model.n_classes_} classes: name its columns with --score-cols (it writes "
                       "<column>_calibrated for each)")  # fmt: skip
    check_features_left_out(model, given, reads_features(model))
    field = meta.get("field")
    df = read_data(args, text_columns=[field] if isinstance(field, str) else [])  # read as at fit time
    columns = score_groups([args.score_cols], df)[0] if args.score_cols else list(meta.get("score_cols") or [])
    if len(columns) != model.n_classes_:
        raise CLIError(f"--score-cols must name the model's {model.n_classes_} class columns; got "
                       f"{len(columns)}: {columns}")  # fmt: skip
    P = score_matrix(df, columns, model.input == "logit")
    out = [f"{name}_calibrated" for name in columns]
    taken = [name for name in out if name in df.columns]
    if taken:
        raise CLIError(f"DATA already has the column(s) {taken} that predict would write; rename them")
    X = feature_input(model, meta, df, given) if reads_features(model) else None
    Q = model.predict(P, X=X)
    for j, name in enumerate(out):
        df[name] = Q[:, j]
    write_table(df, args.output)
    print(f"wrote {args.output} with columns {out} ({len(df)} rows)")
    return 0


# ----------------------------------------------------------------------------------------------- evaluate


def segment_results(y, probs: dict, w, segments, classes: list[Any]) -> dict[str, Any]:
    """Classwise MCE (per class, worst class) and top-label MCE of each matrix, classes by their names."""
    from mcal.metrics import classwise_mce, top_label_mce

    results = {}
    for name, P in probs.items():
        cw = classwise_mce(y, P, segments=segments, sample_weight=w)
        per_class = {_class_name(classes, j): r for j, r in cw.per_class.items()}
        results[name] = {"classwise": per_class, "worst_class": _class_name(classes, cw.worst_class),
                         "top_label": top_label_mce(y, P, segments=segments, sample_weight=w)}  # fmt: skip
    return results


def _class_name(classes: list[Any], j: int) -> str:
    return f"column {j}" if classes[j] is None else _text(classes[j])


def evaluate(args) -> int:
    """``mcal evaluate --score-cols``: log loss, Brier, accuracy, top-label and classwise ECE of each group; with
    ``--segments``, the classwise MCE (worst class and per class) and the top-label MCE."""
    from mcal.metrics import multiclass_summary

    check_ci(args)
    refuse(args, ("--pos-label", "--field", "--plot", "--ci", "--fail-if", "--outcome", "--all-segments",
                  "--scheduler", "--dask-workers"))  # fmt: skip
    df = read_data(args)
    groups = score_groups(args.score_cols, df)
    y, classes, probs, w = labels_and_matrices(args, df, groups)
    table = multiclass_summary(y, probs, sample_weight=w, n_bins=args.n_bins, strategy=args.strategy)
    segments = segments_of(df, args)
    results = {} if segments is None else segment_results(y, probs, w, segments, classes)
    names = [_class_name(classes, j) for j in range(len(classes))]
    per_value = {} if segments is None else class_per_value_tables(y, probs, names, segment_features(df, args), w,
                                                                   args)  # fmt: skip
    for name, r in results.items():
        table.loc[name, "classwise_mce_sigma"] = r["classwise"][r["worst_class"]].mce_sigma
        table.loc[name, "top_label_mce_sigma"] = r["top_label"].mce_sigma
    if args.json:
        out: dict[str, Any] = {"n_samples": len(df), "classes": dict(zip(groups[0], classes, strict=True)),
                               "metrics": {n: {k: _finite(v) for k, v in row.items()} for n, row in table.iterrows()}}  # fmt: skip
        if results:
            out["mce"] = {name: {"worst_class": r["worst_class"], "top_label_mce_sigma": _finite(r["top_label"].mce_sigma),
                                 "classwise_mce_sigma": {c: _finite(m.mce_sigma) for c, m in r["classwise"].items()}}
                          for name, r in results.items()}  # fmt: skip
        if per_value:
            out["per_value"] = per_value_json(per_value)
        print(json.dumps(out, indent=2, allow_nan=False))
        return 0
    width = terminal_width()
    print(wrap(f"{len(df)} rows, label {args.label_col!r}, {len(classes)} classes: "
               f"{class_mapping(classes, groups[0])}", width, "    "))  # fmt: skip
    print(metrics_text(table, table, width))  # a row per metric, a column per set of score columns
    if results:
        _print_mce(results, args.segments, segments.n_segments, width)
    if per_value:
        print_per_value(per_value, "one class against the rest, ")
    return 0


def _finite(value: float) -> float | None:
    import math

    value = float(value)
    return value if math.isfinite(value) else None


def _print_mce(results: dict, names: str, n_segments: int, width: int) -> None:
    import pandas as pd

    print("\n" + wrap(f"classwise MCE (ECCE / sigma of the worst segment, per class) over {n_segments} segments of "
                      f"{names}:", width))  # fmt: skip
    per_class = pd.DataFrame({name: {c: m.mce_sigma for c, m in r["classwise"].items()} for name, r in results.items()})
    print(per_class.to_string(float_format=lambda v: f"{v:.4f}", line_width=width))
    for name, r in results.items():
        worst = r["classwise"][r["worst_class"]]
        print(wrap(f"{name}: worst class {r['worst_class']} (MCE {worst.mce_sigma:.4f} sigma); top-label MCE "
                   f"{r['top_label'].mce_sigma:.4f} sigma", width, "    "))  # fmt: skip


def report(args) -> int:
    """``mcal report --score-cols``: :func:`mcal.report.make_multiclass_report` of each group of columns."""
    from mcal.report import make_multiclass_report

    check_ci(args)
    refuse(args, ("--pos-label", "--field", "--ci", "--outcome", "--all-segments"))
    df = read_data(args)
    groups = score_groups(args.score_cols, df)
    y, classes, probs, w = labels_and_matrices(args, df, groups)
    segments = segments_of(df, args)
    names = [_class_name(classes, j) for j in range(len(classes))]
    per_value = None if segments is None else class_per_value_tables(y, probs, names, segment_features(df, args),
                                                                     w, args)  # fmt: skip
    description = f"{args.data}, label column {args.label_col!r}, classes {class_mapping(classes, groups[0])}" + (
        f", weight column {args.weight_col!r}" if w is not None else ""
    )
    out = make_multiclass_report(
        y, probs, path=args.output, segments=segments, sample_weight=w, title=args.title, per_value=per_value,
        description=description, n_bins=args.n_bins, strategy=args.strategy,
        class_names=[f"column {col}" if c is None else _text(c) for c, col in zip(classes, groups[0], strict=True)],
    )  # fmt: skip
    print(f"wrote {out}")
    return 0

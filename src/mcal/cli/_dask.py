"""The ``--scheduler`` / ``--dask-workers`` options of ``mcal fit``, ``mcal evaluate`` and ``mcal monitor``: the
same command on a Dask cluster, reading partitioned Parquet (a folder or a glob) through :mod:`mcal.dask`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcal.cli._options import POSITIVE_INT, CLIError, real
from mcal.cli._segments import categorical_columns, segment_columns, segments_of

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import pandas as pd


def add_arguments(parser, *, step_timeout: bool = False) -> None:
    """Add ``--scheduler ADDRESS`` and ``--dask-workers N`` (and ``--dask-timeout SECONDS`` with ``step_timeout``)."""
    group = parser.add_argument_group(
        "distributed (Dask)",
        "run on a Dask cluster; DATA is then Parquet: a folder, a file or a glob like 'd/*.parquet'",
    )
    where = group.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="address of a running Dask scheduler (tcp://host:8786)")
    where.add_argument(
        "--dask-workers", type=POSITIVE_INT, metavar="N", help="start a local Dask cluster of N worker processes"
    )
    if step_timeout:
        group.add_argument(
            "--dask-timeout", type=real("a positive finite number of seconds", lambda v: v > 0), metavar="SECONDS",
            help="stop with an error when one distributed step (a booster fit, a reduction) takes longer "
            "(default: no limit; a worker lost during a booster fit stops the fit at once either way)",
        )  # fmt: skip


def requested(args) -> bool:
    """Whether the command runs on a Dask cluster."""
    return args.scheduler is not None or args.dask_workers is not None


def _session(args) -> Any:
    """The cluster of ``--scheduler`` / ``--dask-workers``, once DATA has been checked (so that a wrong path
    fails at once, before a cluster starts or a scheduler is waited for)."""
    from mcal._shared.parquet import check_parquet_path
    from mcal.dask import connect

    if args.na_values is not None:
        raise CLIError(f"--na-values must be left out on a Dask cluster, which reads Parquet; got {args.na_values!r}")
    if getattr(args, "decimal", None) is not None:
        raise CLIError(f"--decimal must be left out on a Dask cluster, which reads Parquet; got {args.decimal!r}")
    if "://" not in args.data:
        check_parquet_path(args.data)
    return connect(args.scheduler, n_workers=args.dask_workers)


def _column(frame: Any, name: str, option: str) -> Any:
    if name not in frame.columns:
        shown = ", ".join(map(str, list(frame.columns)[:20]))
        raise CLIError(f"{option} {name!r} is not a column of DATA; columns are: {shown}")
    return frame[name]


def _labels(frame: Any, name: str, pos_label: str | None) -> Any:
    """The label column, as ``label == --pos-label`` where one is given (checked to be one of two labels)."""
    import pandas as pd

    labels = _column(frame, name, "--label-col")
    if pos_label is None:
        return labels
    target: Any
    if pd.api.types.is_numeric_dtype(labels.dtype):
        try:
            positive = float(pos_label)
        except ValueError as exc:
            raise CLIError(f"--pos-label {pos_label!r} is not a value of the numeric column {name!r}") from exc
        text, target = labels, positive
    else:
        text, target = labels.astype(str), pos_label
    values = sorted(text.dropna().unique().compute().tolist())  # the distinct labels: a few values per partition
    if len(values) != 2 or target not in values:
        raise CLIError(
            f"--pos-label must be one of the two labels of label column {name!r} {values[:10]}; got {pos_label!r}"
        )
    return text == target


def fit(args, model: Any, features: list[str]) -> int:
    """``mcal fit`` on a cluster: MCGrad and RegressionMCGrad only (the methods built for data of this size)."""
    from mcal import save
    from mcal.dask import DaskMCGrad, DaskRegressionMCGrad, WorkerLostError, read_parquet

    dask_class = {"mcgrad": DaskMCGrad, "regression-mcgrad": DaskRegressionMCGrad}.get(args.method)
    if dask_class is None:
        raise CLIError(
            f"--scheduler and --dask-workers fit --method mcgrad or regression-mcgrad only; got {args.method!r}"
        )
    if dask_class is DaskRegressionMCGrad and args.pos_label is not None:
        raise CLIError(f"--pos-label applies to binary labels; got --pos-label {args.pos_label!r} with {args.method}")
    with _session(args) as client:
        frame = read_parquet(args.data)
        y = _labels(frame, args.label_col, args.pos_label)
        p = _column(frame, args.score_col, "--score-col")
        w = None if args.weight_col is None else _column(frame, args.weight_col, "--weight-col")
        for name in features:
            _column(frame, name, "--features")
        model = dask_class(client=client, timeout=args.dask_timeout, **model.get_params())
        try:
            model.fit(p, y, X=frame[features] if features else None, sample_weight=w)  # no features: the score alone
        except WorkerLostError as exc:
            raise CLIError(str(exc)) from exc
        n_partitions = frame.npartitions
    metadata = {"method": args.method, "score_col": args.score_col, "features": features, "field": None}
    save(model.to_local(), args.output, metadata=metadata)
    name = type(model.to_local()).__name__
    print(f"wrote {args.output} ({name} fitted with Dask on {n_partitions} partitions, {model.n_rounds_} rounds)")
    return 0


def evaluate(args) -> tuple[pd.DataFrame, int, float | None, dict[str, Any], Any, dict[str, Any]]:
    """``mcal evaluate`` on a cluster: the metrics table, the row count, the total weight (or None), the MCE
    results by score column, the segments and the per-value tables by score column (with ``--segments``, generated
    from its columns gathered as a pandas frame; else ``{}``, None and ``{}``)."""
    from mcal.dask import read_parquet
    from mcal.dask.metrics import calibration_summary, mce, per_value_table, regression_summary

    if args.plot:
        raise CLIError("--plot needs the data in memory; drop it with --scheduler or --dask-workers")
    with _session(args):
        frame = read_parquet(args.data)
        y = _labels(frame, args.label_col, args.pos_label)
        scores = {name: _column(frame, name, "--score-col") for name in args.score_col}
        w = None if args.weight_col is None else _column(frame, args.weight_col, "--weight-col")
        field = None if args.field is None else _column(frame, args.field, "--field")
        if args.outcome == "regression":
            table = regression_summary(y, scores, sample_weight=w)
        else:
            table = calibration_summary(y, scores, sample_weight=w, field=field, n_bins=args.n_bins)
        names = segment_columns(args)[0]
        for name in names:
            _column(frame, name, "--segments")
        gathered = frame[names].compute() if names else None
        segments = segments_of(gathered, args)
        results = {
            name: mce(y, p, X=frame[names], segments=segments, sample_weight=w, outcome=args.outcome)
            for name, p in scores.items()
        } if segments is not None else {}  # fmt: skip
        per_value = {} if gathered is None else {
            name: per_value_table(y, p, X=frame[names], sample_weight=w, outcome=args.outcome,
                                  categorical_features=categorical_columns(gathered, args),
                                  max_values_per_feature=segment_columns(args)[1])
            for name, p in scores.items()
        }  # fmt: skip
        n_rows = int(frame.shape[0].compute())
        total = None if w is None else float(w.sum().compute())
    return table, n_rows, total, results, segments, per_value


def monitor(args, window_of: Any) -> tuple[Any, tuple[Any, Any, Any, pd.DataFrame] | None]:
    """``mcal monitor`` on a cluster: the :class:`mcal.monitor.MonitorResult` (segments from the segment feature
    columns gathered as a pandas frame; the window length from ``window_of``, given whether the time column is
    numeric) and, with ``--segments``, the latest window's labels, scores, weights and segment
    columns gathered in memory (one window, for its per-value table), else None."""
    import dask
    import pandas as pd

    from mcal._monitoring.windows import window_starts
    from mcal.dask import monitor, read_parquet

    with _session(args):
        frame = read_parquet(args.data)
        y = _labels(frame, args.label_col, args.pos_label)
        p = _column(frame, args.score_col, "--score-col")
        times = _column(frame, args.time_col, "--time-col")
        w = None if args.weight_col is None else _column(frame, args.weight_col, "--weight-col")
        names = segment_columns(args)[0]
        for name in names:
            _column(frame, name, "--segments")
        segments = segments_of(frame[names].compute(), args) if names else segments_of(None, args)
        window = window_of(args, pd.api.types.is_numeric_dtype(times.dtype))
        result = monitor(y, p, times, window=window, X=frame[names] if names else None, segments=segments,
                         sample_weight=w, alpha=args.alpha, n_resamples=args.n_resamples)  # fmt: skip
        if not names:
            return result, None
        last = result.table["window_start"].max()
        in_last = times.map_partitions(lambda t: pd.Series(window_starts(t, window) == last, index=t.index),
                                       meta=(args.time_col, bool))  # fmt: skip
        y_last, p_last, w_last, X_last = dask.compute(y[in_last], p[in_last], None if w is None else w[in_last],
                                                      frame[names][in_last])  # fmt: skip
        return result, (y_last.to_numpy(), p_last.to_numpy(), None if w_last is None else w_last.to_numpy(), X_last)

"""``mcal monitor``: calibration per time window, the drift alarm, an HTML page and per-window ``--fail-if`` gates."""

from __future__ import annotations

import json
import math

from mcal.cli import _dask, _gates
from mcal.cli._common import HTML_ENDINGS, check_output, column, labels_scores_weights, read_data
from mcal.cli._layout import terminal_width
from mcal.cli._options import (
    OPEN_UNIT,
    SEGMENTS_SYNTAX,
    CLIError,
    Command,
    add_data_arguments,
    add_segments_arguments,
    named_as_options,
)
from mcal.cli._per_value import per_value_tables, print_per_value
from mcal.cli._segments import segment_features, segments_of


def _configure(parser) -> None:
    add_data_arguments(parser, score_required=True)
    parser.add_argument(
        "--time-col", required=True, metavar="COL",
        help="column of times: datetimes, dates as ISO 8601 text (any precision), or numbers",
    )  # fmt: skip
    parser.add_argument(
        "--window", default="1D", metavar="LENGTH", help="window length: '1D', '6h', '15min', ... for datetimes, "
        "a number for numeric times (default 1D); windows start at multiples of it from the Unix epoch (0); windows "
        "without rows are left out",
    )  # fmt: skip
    add_segments_arguments(
        parser, "feature columns to generate segments from: adds the multicalibration error (MCE) of each window, "
        "on segments generated once from all rows" + SEGMENTS_SYNTAX + ", in the latest window (also on the -o page)",
    )  # fmt: skip
    parser.add_argument("--alpha", type=OPEN_UNIT, default=0.05, metavar="A",
                        help="level of the drift alarm (default 0.05: it fires at e-value >= 20)")  # fmt: skip
    parser.add_argument("--n-resamples", type=int, default=200, metavar="N", help="bootstrap resamples of each "
                        "window's intervals of ECCE in sigma and the MCE (default 200; 0: none)")  # fmt: skip
    parser.add_argument("--title", metavar="TEXT", help="title of the HTML page (default: Calibration monitor)")
    parser.add_argument("-o", "--output", metavar="MONITOR.html", help="write a self-contained HTML page")
    parser.add_argument("--json", action="store_true", help="print the per-window table as JSON instead of text")
    _dask.add_arguments(parser)
    _gates.MONITOR.add_argument(parser, "window")


def _window_length(args, numeric: bool):
    """``--window`` as :func:`mcal.monitor.monitor` takes it: a number for numeric times, else the text, which must
    have a unit (pandas reads a bare number as nanoseconds)."""
    try:
        number = float(args.window)
    except ValueError:
        number = None
    if numeric and number is None:
        raise CLIError(f"--window must be a number for the numeric time column {args.time_col!r}; got {args.window!r}")
    if not numeric and number is not None:
        raise CLIError(f"--window must be a pandas offset such as 1D or 6h (a length with a unit) for the datetime "
                       f"time column {args.time_col!r}; got {args.window!r}")  # fmt: skip
    return number if numeric else args.window


def _run(args) -> int:
    from mcal.monitor import monitor_report

    check_output(args.output, "-o/--output", inputs=[("DATA", args.data)], endings=HTML_ENDINGS)
    _gates.MONITOR.check_options(args.fail_if, args)
    with named_as_options({"n_resamples": "--n-resamples"}):  # the library's rule: 0, or at least 2
        result, last = _dask.monitor(args, _window_length) if _dask.requested(args) else _windows(args)
    per_value = None
    if last is not None:  # the latest window's per-value table, from its rows in memory either way
        y_last, p_last, w_last, X_last = last
        per_value = per_value_tables(y_last, {args.score_col: p_last}, segment_features(X_last, args), w_last, args)
    if args.output:
        description = f"{args.data}, score column {args.score_col!r}, label column {args.label_col!r}"
        written = monitor_report(result, args.output, title=args.title, description=description, per_value=per_value)
    if args.json:
        _print_json(result, per_value)
    else:
        _print_table(result, args)
        if per_value is not None:
            print_per_value(per_value, "in the latest window, ")
        if args.output:
            print(f"wrote {written}")
    records = result.table.to_dict("records")
    rows = ((f"window {start}", row) for start, row in zip(result.table["window_start"], records, strict=False))
    return _gates.MONITOR.report(args.fail_if, rows)


def _windows(args):
    """:func:`mcal.monitor.monitor` of DATA read into memory, and with ``--segments`` the latest window's labels,
    scores, weights and rows (for its per-value table), else None."""
    import pandas as pd

    from mcal._monitoring.windows import parse_times, window_starts
    from mcal.monitor import monitor

    df = read_data(args)
    y, p, w = labels_scores_weights(df, label_col=args.label_col, score_col=args.score_col,
                                    weight_col=args.weight_col, pos_label=args.pos_label)  # fmt: skip
    assert p is not None  # monitor reads a score column
    times = parse_times(column(df, args.time_col, "--time-col"), name=f"--time-col {args.time_col!r}")
    window = _window_length(args, pd.api.types.is_numeric_dtype(times.dtype))
    X = segment_features(df, args)
    result = monitor(y, p, times, window=window, X=X, segments=segments_of(df, args),
                     sample_weight=w, alpha=args.alpha, n_resamples=args.n_resamples)  # fmt: skip
    if X is None:
        return result, None
    starts = window_starts(times, window)
    in_last = starts == starts.max()
    return result, (y[in_last], p[in_last], None if w is None else w[in_last], df[in_last])


def _print_table(result, args) -> None:
    print(f"{int(result.table['n_samples'].sum())} rows in {len(result.table)} windows of {result.window}, "
          f"score {args.score_col!r}, label {args.label_col!r}")  # fmt: skip
    print(result.summary(width=terminal_width()))


def _print_json(result, per_value) -> None:
    """The result as JSON: window starts as ISO text, non-finite numbers (an undefined metric, an e-value beyond
    the float range) as null; ``alarm`` says whether the alarm had fired by each window; with ``--segments``,
    ``per_value`` holds the per-value table of the latest window."""
    table = result.table.assign(window_start=result.table["window_start"].map(_json_time))
    records = [{k: _json_value(v) for k, v in row.items()} for row in table.to_dict("records")]
    out = {
        "n_samples": int(result.table["n_samples"].sum()), "window": result.window, "alpha": result.alpha,
        "alarm": result.alarm, "alarm_window": None if result.alarm_window is None else _json_time(result.alarm_window),
        "windows": records,
    }  # fmt: skip
    if per_value is not None:
        table = next(iter(per_value.values()))
        out["per_value"] = {"window_start": records[-1]["window_start"],
                            "min_samples_per_value": table.min_samples_per_value,
                            "n_left_out": {k: int(v) for k, v in table.n_left_out.items()},
                            "rows": [{k: _json_value(v) for k, v in row.items()}
                                     for row in table.table.to_dict("records")]}  # fmt: skip
    print(json.dumps(out, indent=2, allow_nan=False))


def _json_time(value):
    import numpy as np
    import pandas as pd

    return pd.Timestamp(value).isoformat() if isinstance(value, (pd.Timestamp, np.datetime64)) else float(value)


def _json_value(value):
    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, str):
        return value
    return float(value) if math.isfinite(value) else None


MONITOR = Command(
    "monitor",
    "calibration per time window, with an anytime-valid drift alarm",
    "Split the rows into time windows (--time-col, --window) and compute per window the log loss and PCOC\n"
    "with 95% intervals, ECCE in sigma and, with --segments, the multicalibration error (MCE), both with 95%\n"
    "bootstrap intervals (--n-resamples). An e-process tests whether the scores stay calibrated and raises the\n"
    "drift alarm when it reaches 1/alpha; its false-alarm rate is at most alpha however many windows are looked\n"
    "at. -o writes an HTML page with a time series per metric; --fail-if exits 1 when a condition holds in any\n"
    "window, and bad input exits 2. Windows without rows are left out (the e-process skips them). The MCE\n"
    "p-value (mce_pvalue, in --json and on the page) is the worst segment's, not adjusted for the number of\n"
    "segments; mce_pvalue_adjusted is it Holm-adjusted for the window's segments.\n\n"
    "example: mcal monitor scores.parquet --score-col p --label-col y --time-col t --window 1D -o monitor.html\n"
    "         mcal monitor scores/ --score-col p --label-col y --time-col t --fail-if 'ecce_sigma > 3'\n"
    "         mcal monitor 'scores/*.parquet' --score-col p --label-col y --time-col t --scheduler tcp://host:8786",
    _configure,
    _run,
)

"""Calibration over time: metrics per time window with intervals, an anytime-valid drift alarm, an HTML page.

- :func:`monitor`: per window (a day, an hour, ...) the log loss and PCOC with intervals, ECCE in sigma and, with
  segments, the MCE; and an e-process that raises an alarm when the stream stops being calibrated, valid however
  often it is looked at.
- :func:`monitor_report`: a self-contained HTML page of a :class:`MonitorResult`, one time series per metric.
- :func:`parse_times`: times as the monitor reads them (numbers, datetimes, ISO 8601 text).
- :func:`summarize_window`, :func:`monitor_result` and :func:`window_starts`: the pieces ``mcal.dask`` reuses to
  compute the same result on a cluster.
"""

from mcal.monitor._html import monitor_report
from mcal.monitor._windows import (
    LOG_LR_COLUMNS,
    MONITOR_CONSTRAINTS,
    MonitorResult,
    monitor,
    monitor_result,
    parse_times,
    summarize_window,
    summary_columns,
    window_starts,
)

__all__ = [
    "LOG_LR_COLUMNS",
    "MONITOR_CONSTRAINTS",
    "MonitorResult",
    "monitor",
    "monitor_report",
    "monitor_result",
    "parse_times",
    "summarize_window",
    "summary_columns",
    "window_starts",
]

"""Calibration over time: metrics per time window with intervals, an anytime-valid drift alarm, an HTML page.

- :func:`monitor`: per window (a day, an hour, ...) the log loss and PCOC with intervals, ECCE in sigma and, with
  segments, the MCE; and an e-process that raises an alarm when the stream stops being calibrated, valid however
  often it is looked at.
- :func:`monitor_report`: a self-contained HTML page of a :class:`MonitorResult`, one time series per metric.

The pieces that ``mcal.dask.monitor`` reuses to compute the same result on a cluster (the time windows, the summary
of one window) are private to mcal since 0.2; their former names here resolve until 0.3 with a warning.
"""

from mcal._monitoring.windows import MonitorResult
from mcal._shared.moved import moved_names
from mcal.monitor._html import monitor_report
from mcal.monitor._monitor import monitor

__all__ = ["MonitorResult", "monitor", "monitor_report"]

#: The names of mcal 0.1 that moved into mcal._monitoring.windows, deprecated until 0.3.
_MOVED = (
    "LOG_LR_COLUMNS",
    "MONITOR_CONSTRAINTS",
    "monitor_result",
    "parse_times",
    "summarize_window",
    "summary_columns",
    "window_starts",
)
__getattr__ = moved_names("mcal.monitor", {name: f"mcal._monitoring.windows.{name}" for name in _MOVED})

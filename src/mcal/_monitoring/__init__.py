"""The building blocks of calibration monitoring that :mod:`mcal.monitor` and :mod:`mcal.dask` share, private to
mcal: times and windows (``parse_times``, ``window_starts``), the summary of one window and the result of all
(``summarize_window``, ``monitor_result``, :class:`~mcal.monitor.MonitorResult`), the parameter rules, and the
e-process of the drift alarm (``eprocess``). A layer of its own, between the families (:mod:`mcal.monitor`) and
:mod:`mcal.metrics`, whose public functions it calls.
"""

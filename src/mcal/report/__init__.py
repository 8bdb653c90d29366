"""One self-contained HTML calibration report: metrics tables and figures for several score columns side by side.

The report is a single file with every figure embedded (SVG, as base64 data URIs) and its CSS inline, so it opens
offline in any browser. Figures are drawn from binned or thinned summaries (:func:`mcal.metrics.reliability_intervals`,
:func:`mcal.metrics.cumulative_curve`), never from raw points, so the file stays small however many rows there are.
Numbers come from :mod:`mcal.metrics`; this package only lays them out, and :mod:`mcal.plotting` draws.
:func:`findings_table` and :func:`format_pvalue` give the same segment findings as text, for ``mcal evaluate``.
"""

from mcal.report._build import make_report
from mcal.report._findings import PVALUE_FLOOR, findings_note, findings_table, format_pvalue, p_equals

__all__ = ["PVALUE_FLOOR", "findings_note", "findings_table", "format_pvalue", "make_report", "p_equals"]

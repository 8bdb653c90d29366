"""One self-contained HTML calibration report: metrics tables and figures for several score columns side by side.

The report is a single file with every figure embedded (SVG, as base64 data URIs) and its CSS inline, so it opens
offline in any browser. Figures are drawn from binned or thinned summaries (:func:`mcal.metrics.reliability_intervals`,
:func:`mcal.metrics.cumulative_curve`), never from raw points, so the file stays small however many rows there are.
Numbers come from :mod:`mcal.metrics`; this package only lays them out, and :mod:`mcal.plotting` draws.
:func:`findings_table`, :func:`format_pvalue` and :func:`format_pvalue_columns` give the same findings as text
(``mcal evaluate``, ``mcal demo``). :func:`make_multiclass_report` is the report of probabilities for k classes.
"""

from mcal.report._build import make_report
from mcal.report._findings import (
    PVALUE_FLOOR,
    findings_note,
    findings_table,
    format_pvalue,
    format_pvalue_columns,
    p_equals,
)
from mcal.report._multiclass import make_multiclass_report

__all__ = [
    "PVALUE_FLOOR",
    "findings_note",
    "findings_table",
    "format_pvalue",
    "format_pvalue_columns",
    "make_multiclass_report",
    "make_report",
    "p_equals",
]

"""One self-contained HTML calibration report: metrics tables and figures for several score columns side by side.

The report is a single file with every figure embedded (SVG, as base64 data URIs) and its CSS inline, so it opens
offline in any browser. Figures are drawn from binned or thinned summaries (:func:`mcal.metrics.reliability_intervals`,
:func:`mcal.metrics.cumulative_curve`), never from raw points, so the file stays small however many rows there are.
Numbers come from :mod:`mcal.metrics`; this package only lays them out, and :mod:`mcal.plotting` draws.
:func:`findings_table`, :func:`format_pvalue` and :func:`format_pvalue_columns` give the same findings as text
(``mcal evaluate``, ``mcal demo``). :func:`make_multiclass_report` is the report of probabilities for k classes.

The pieces that the command line shares with the report (the p-value floor, the ``p = ...`` text, the note under
the findings table) are private to mcal since 0.2; their former names here resolve until 0.3 with a warning.
"""

from mcal._shared.moved import moved_names
from mcal.report._build import make_report
from mcal.report._findings import findings_table, format_pvalue, format_pvalue_columns
from mcal.report._multiclass import make_multiclass_report

__all__ = [
    "findings_table",
    "format_pvalue",
    "format_pvalue_columns",
    "make_multiclass_report",
    "make_report",
]

__getattr__ = moved_names(
    "mcal.report",
    {
        "PVALUE_FLOOR": "mcal._shared.brownian.PVALUE_FLOOR",
        "findings_note": "mcal._shared.text.findings_note",
        "p_equals": "mcal._shared.text.p_equals",
    },
)

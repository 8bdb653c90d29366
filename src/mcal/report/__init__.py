"""One self-contained HTML calibration report: metrics tables and figures for several score columns side by side.

The report is a single file with every figure embedded (SVG, as base64 data URIs) and its CSS inline, so it opens
offline in any browser. Figures are drawn from binned or thinned summaries (:func:`mcal.metrics.reliability_intervals`,
:func:`mcal.metrics.cumulative_curve`), never from raw points, so the file stays small however many rows there are.
Numbers come from :mod:`mcal.metrics`; this package only lays them out, and :mod:`mcal.plotting` draws.
"""

from mcal.report._build import make_report

__all__ = ["make_report"]

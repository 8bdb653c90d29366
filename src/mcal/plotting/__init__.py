"""Figures for calibration. Numbers come from :mod:`mcal.metrics`; this package only draws.

matplotlib is imported inside each function; no function changes global style (rcParams). The figures: binned
reliability diagrams and the score histogram (``_reliability``), the cumulative differences behind ECCE
(``_cumulative``), segment errors and the worst segments' curves (``_segments``), and MCGrad's learning curve
(``_learning``).
"""

from mcal.plotting._cumulative import plot_cumulative_differences
from mcal.plotting._learning import plot_learning_curve
from mcal.plotting._reliability import plot_calibration, plot_reliability_diagram, plot_score_histogram
from mcal.plotting._segments import plot_segment_errors, plot_worst_segment_curves

__all__ = [
    "plot_calibration",
    "plot_cumulative_differences",
    "plot_learning_curve",
    "plot_reliability_diagram",
    "plot_score_histogram",
    "plot_segment_errors",
    "plot_worst_segment_curves",
]

# plain_text moved to mcal._shared.text: mcal.cli still imports it from here, so it resolves without a warning (and
# outside __all__, undocumented) until the CLI imports it from its new home; then it gets its deprecation release
from mcal._shared.text import plain_text  # noqa: F401

"""Figures for calibration. Numbers come from :mod:`mcal.metrics`; this package only draws.

matplotlib is imported inside each function; no function changes global style (rcParams). The figures: binned
reliability diagrams and the score histogram (``_reliability``), the cumulative differences behind ECCE
(``_cumulative``), segment errors and the worst segments' curves (``_segments``), and MCGrad's learning curve
(``_learning``).
"""

from mcal._shared.moved import moved_names
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

#: plain_text moved into mcal._shared.text in mcal 0.2; its former name here resolves until 0.3 with a warning.
__getattr__ = moved_names("mcal.plotting", {"plain_text": "mcal._shared.text.plain_text"})

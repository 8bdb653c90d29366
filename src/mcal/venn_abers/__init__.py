"""Venn-Abers predictors: calibrated probabilities with an interval, from isotonic regression (Vovk et al. 2015).

:class:`~mcal.VennAbers` is the calibrator; the pure functions beside it compute its fit from the data.
"""

from mcal.venn_abers._core import csd_points, merge_bounds, venn_abers_bounds, venn_abers_fits
from mcal.venn_abers._estimator import VennAbers

__all__ = ["VennAbers", "csd_points", "merge_bounds", "venn_abers_bounds", "venn_abers_fits"]

"""Choosing a calibration method: every candidate cross-fitted on the same folds and compared on held-out rows.

:func:`mcal.select_calibrator` returns a :class:`CalibratorSelection`: the comparison table (held-out log loss with
paired standard errors against the best, the multicalibration error) and the chosen method, the simplest within
the noise of the best, refitted on all rows. ``mcal fit --method auto`` and ``mcal evaluate --compare-methods``
print its table.
"""

from mcal._registry import COMPLEXITY_ORDER
from mcal.selection._result import CalibratorSelection
from mcal.selection._select import select_calibrator

__all__ = ["COMPLEXITY_ORDER", "CalibratorSelection", "select_calibrator"]

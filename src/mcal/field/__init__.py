"""Field-aware calibration: NeuCalib, AdaCalib and per-field calibration.

A *field* is one categorical context column (country, ad source) held in ``X``; ``field=`` names it.
"""

from mcal.field._calibrators import AdaCalib, NeuCalib
from mcal.field._per_field import PerFieldCalibrator

__all__ = ["AdaCalib", "NeuCalib", "PerFieldCalibrator"]

"""Calibration and multicalibration for k classes.

Every calibrator takes an (n_samples, k) matrix of probabilities (rows summing to 1) or, with ``input="logit"``,
logits, and labels ``0 .. k - 1`` or k class names; ``predict`` returns an (n_samples, k) probability matrix.
The metrics for k classes live in :mod:`mcal.metrics` (``multiclass_log_loss``, ``top_label_ece``,
``classwise_ece``, ``classwise_mce``, ...).
"""

from mcal.multiclass._base import MulticlassCalibrator
from mcal.multiclass._mcgrad import MulticlassMCGrad
from mcal.multiclass._ovr import OneVsRestCalibrator
from mcal.multiclass._scaling import DirichletCalibration, MatrixScaling, MulticlassTemperatureScaling, VectorScaling

#: ``mcal.multiclass.MCGrad`` and ``mcal.multiclass.TemperatureScaling``: the names within this package.
MCGrad = MulticlassMCGrad
TemperatureScaling = MulticlassTemperatureScaling

__all__ = [
    "DirichletCalibration",
    "MCGrad",
    "MatrixScaling",
    "MulticlassCalibrator",
    "MulticlassMCGrad",
    "MulticlassTemperatureScaling",
    "OneVsRestCalibrator",
    "TemperatureScaling",
    "VectorScaling",
]

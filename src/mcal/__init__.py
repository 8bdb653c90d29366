"""mcal: post-hoc calibration and multicalibration of classifier probabilities.

Every calibrator follows one interface: ``fit(y_prob, y, *, X=None, sample_weight=None)`` and
``predict(y_prob, *, X=None)``, returning calibrated P(y=1). Model files are versioned JSON
(:func:`save`, :func:`load`), never pickle.
"""

from typing import TYPE_CHECKING

from mcal._optional import lazy_attributes
from mcal._version import __version__

# Imported on first use (``mcal.MCGrad``, ``from mcal import MCGrad``), so that ``import mcal`` and ``mcal --help``
# load neither scikit-learn, pandas nor scipy.
_ATTRIBUTES = {
    "DFMC": "mcal.groups",
    "EPS": "mcal._validation",
    "HKRR": "mcal.groups",
    "AdaCalib": "mcal.field",
    "BaseCalibrator": "mcal._base",
    "BetaCalibration": "mcal.parametric",
    "CalibratedClassifier": "mcal.classifier",
    "CalibrationWarning": "mcal._validation",
    "GammaScaling": "mcal.parametric",
    "GaussianScaling": "mcal.parametric",
    "HistogramBinning": "mcal.nonparametric",
    "IdentityCalibration": "mcal.parametric",
    "IsotonicCalibration": "mcal.nonparametric",
    "MCGrad": "mcal.mcgrad",
    "MCNet": "mcal.mcnet",
    "NeuCalib": "mcal.field",
    "PerFieldCalibrator": "mcal.field",
    "PlattScaling": "mcal.parametric",
    "RegressionMCGrad": "mcal.regression",
    "SmoothedIsotonic": "mcal.nonparametric",
    "TemperatureScaling": "mcal.parametric",
    "VennAbers": "mcal.venn_abers",
    "load": "mcal._persistence",
    "metrics": "mcal.metrics",
    "regression": "mcal.regression",
    "save": "mcal._persistence",
    "select_calibrator": "mcal.selection",
    "segments": "mcal.segments",
    "tune_mcgrad": "mcal.mcgrad",
}
# The public subpackages, also imported on first use (``mcal.multiclass.MCGrad`` after ``import mcal``); not in
# ``__all__`` beside the three above, which ``from mcal import *`` has always given.
_ATTRIBUTES |= {
    name: f"mcal.{name}"
    for name in ("dask", "datasets", "field", "groups", "mcgrad", "mcnet", "monitor", "multiclass", "plotting",
                 "report", "selection", "venn_abers")
}  # fmt: skip
__all__ = [
    "DFMC",
    "EPS",
    "HKRR",
    "AdaCalib",
    "BaseCalibrator",
    "BetaCalibration",
    "CalibratedClassifier",
    "CalibrationWarning",
    "GammaScaling",
    "GaussianScaling",
    "HistogramBinning",
    "IdentityCalibration",
    "IsotonicCalibration",
    "MCGrad",
    "MCNet",
    "NeuCalib",
    "PerFieldCalibrator",
    "PlattScaling",
    "RegressionMCGrad",
    "SmoothedIsotonic",
    "TemperatureScaling",
    "VennAbers",
    "__version__",
    "load",
    "metrics",
    "regression",
    "save",
    "segments",
    "select_calibrator",
    "tune_mcgrad",
]
__getattr__, __dir__ = lazy_attributes(__name__, _ATTRIBUTES)

if TYPE_CHECKING:
    from mcal import metrics, regression, segments
    from mcal._base import BaseCalibrator
    from mcal._persistence import load, save
    from mcal._validation import EPS, CalibrationWarning
    from mcal.classifier import CalibratedClassifier
    from mcal.field import AdaCalib, NeuCalib, PerFieldCalibrator
    from mcal.groups import DFMC, HKRR
    from mcal.mcgrad import MCGrad, tune_mcgrad
    from mcal.mcnet import MCNet
    from mcal.nonparametric import HistogramBinning, IsotonicCalibration, SmoothedIsotonic
    from mcal.parametric import (
        BetaCalibration,
        GammaScaling,
        GaussianScaling,
        IdentityCalibration,
        PlattScaling,
        TemperatureScaling,
    )
    from mcal.regression import RegressionMCGrad
    from mcal.selection import select_calibrator
    from mcal.venn_abers import VennAbers

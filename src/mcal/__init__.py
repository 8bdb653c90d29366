"""mcal: post-hoc calibration and multicalibration of classifier probabilities.

Every calibrator follows one interface: ``fit(y_prob, y, *, X=None, sample_weight=None)`` and
``predict(y_prob, *, X=None)``, returning calibrated P(y=1). Model files are versioned JSON
(:func:`save`, :func:`load`), never pickle.
"""

from mcal import metrics, regression, segments
from mcal._base import BaseCalibrator
from mcal._persistence import load, save
from mcal._validation import EPS, CalibrationWarning
from mcal._version import __version__
from mcal.classifier import CalibratedClassifier
from mcal.field import AdaCalib, NeuCalib, PerFieldCalibrator
from mcal.groups import DFMC, HKRR
from mcal.mcgrad import MCGrad
from mcal.mcnet import MCNet
from mcal.nonparametric import HistogramBinning, IsotonicCalibration, SmoothedIsotonic
from mcal.parametric import BetaCalibration, GammaScaling, GaussianScaling, PlattScaling, TemperatureScaling
from mcal.regression import RegressionMCGrad
from mcal.venn_abers import VennAbers

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
]

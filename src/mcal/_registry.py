"""Names of the calibration methods, for the command line, the demo, and the model-file whitelist.

Entries are import paths, resolved lazily, so that listing methods imports no optional dependency, and so that
the registry imports no module of mcal: the model-file codec, below every family, reads it. The classes it returns
are :class:`mcal.BaseCalibrator` subclasses (or of :data:`ESTIMATOR_WRAPPERS`), typed ``Any`` for that reason. A
feature module adds its method here with one line.
"""

from __future__ import annotations

import importlib
from typing import Any

#: method name (as in ``mcal fit --method NAME``) -> "module:ClassName"
METHODS: dict[str, str] = {
    "identity": "mcal.parametric:IdentityCalibration",
    "platt": "mcal.parametric:PlattScaling",
    "temperature": "mcal.parametric:TemperatureScaling",
    "beta": "mcal.parametric:BetaCalibration",
    "isotonic": "mcal.nonparametric:IsotonicCalibration",
    "histogram": "mcal.nonparametric:HistogramBinning",
    "mcgrad": "mcal.mcgrad:MCGrad",
    "mcnet": "mcal.mcnet:MCNet",
    "gaussian": "mcal.parametric:GaussianScaling",
    "gamma": "mcal.parametric:GammaScaling",
    "sir": "mcal.nonparametric:SmoothedIsotonic",
    "neucalib": "mcal.field:NeuCalib",
    "adacalib": "mcal.field:AdaCalib",
    "per-field-isotonic": "mcal.field:PerFieldCalibrator",
    "hkrr": "mcal.groups:HKRR",
    "dfmc": "mcal.groups:DFMC",
    "venn-abers": "mcal.venn_abers:VennAbers",
    "regression-mcgrad": "mcal.regression:RegressionMCGrad",
    "regression-isotonic": "mcal.regression:IsotonicRecalibration",
    "regression-linear": "mcal.regression:LinearRecalibration",
}

#: Every method name the ``candidates`` of :func:`mcal.select_calibrator` may hold, simplest first: the order in which the one-standard-error rule
#: prefers them. Fewer fitted numbers come first (identity 0, temperature 1, Platt 2, beta 3, Gaussian and Gamma
#: 3, a histogram of 20 bins, isotonic regression with as many steps as the data supports), then one map per field
#: value, then the methods that read features.
COMPLEXITY_ORDER: tuple[str, ...] = (
    "identity", "temperature", "platt", "beta", "gaussian", "gamma", "histogram", "isotonic", "sir", "venn-abers",
    "per-field-isotonic", "adacalib", "neucalib", "hkrr", "dfmc", "mcgrad", "mcnet",
)  # fmt: skip

#: Calibrators for k classes (:mod:`mcal.multiclass`): loadable from model files; the command line does not take
#: a score matrix yet, so they are kept apart from :data:`METHODS`.
MULTICLASS_METHODS: dict[str, str] = {
    "multiclass-temperature": "mcal.multiclass:MulticlassTemperatureScaling",
    "vector-scaling": "mcal.multiclass:VectorScaling",
    "matrix-scaling": "mcal.multiclass:MatrixScaling",
    "dirichlet": "mcal.multiclass:DirichletCalibration",
    "one-vs-rest": "mcal.multiclass:OneVsRestCalibrator",
    "multiclass-mcgrad": "mcal.multiclass:MulticlassMCGrad",
}

#: Models whose files hold their calibrators but not the scikit-learn estimators around them, which the caller
#: attaches when loading (``mcal.load(path, estimators=...)``): class name -> "module:ClassName".
ESTIMATOR_WRAPPERS: dict[str, str] = {
    "CalibratedClassifier": "mcal.classifier:CalibratedClassifier",
}


def wrapper_by_name(class_name: object) -> Any:
    """The class of :data:`ESTIMATOR_WRAPPERS` named ``class_name``, or None if it names none."""
    target = ESTIMATOR_WRAPPERS.get(class_name) if isinstance(class_name, str) else None
    return None if target is None else _resolve(target)


def method_outcome(name: str) -> str:
    """What the method of :data:`METHODS` named ``name`` calibrates, read from its module path without importing
    it: "regression" (``mcal.regression``) or "classification" (binary).

    Raises
    ------
    KeyError
        If no method has that name.
    """
    module = METHODS[name].partition(":")[0]
    return "regression" if module == "mcal.regression" or module.startswith("mcal.regression.") else "classification"


def _resolve(target: str) -> type[Any]:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def get_method(name: str) -> type[Any]:
    """Return the calibrator class registered under ``name``.

    Raises
    ------
    ValueError
        If no method has that name; the message lists the valid names.
    """
    if name not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}; got {name!r}")
    return _resolve(METHODS[name])


def class_by_name(class_name: str) -> type[Any]:
    """Return the calibrator class with ``__name__ == class_name`` among the registered ones.

    This is the whitelist used when loading model files: no other class can be instantiated.

    Raises
    ------
    ValueError
        If the class is not a registered mcal calibrator.
    """
    for target in [*METHODS.values(), *MULTICLASS_METHODS.values()]:
        if target.rpartition(":")[2] == class_name:
            return _resolve(target)
    raise ValueError(f"model class must be a registered mcal calibrator; got {class_name!r}")

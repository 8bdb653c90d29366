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

#: Calibrators for k classes (:mod:`mcal.multiclass`), by their name in ``mcal fit --score-cols ... --method NAME``;
#: kept apart from :data:`METHODS`, whose calibrators take one score column.
MULTICLASS_METHODS: dict[str, str] = {
    "temperature": "mcal.multiclass:MulticlassTemperatureScaling",
    "vector": "mcal.multiclass:VectorScaling",
    "matrix": "mcal.multiclass:MatrixScaling",
    "dirichlet": "mcal.multiclass:DirichletCalibration",
    "mcgrad": "mcal.multiclass:MulticlassMCGrad",
}
#: One-vs-rest for k classes around the binary method NAME of :data:`METHODS`: the method ``ovr-NAME``.
ONE_VS_REST = ("ovr-", "mcal.multiclass:OneVsRestCalibrator")

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


def multiclass_method_names() -> list[str]:
    """The method names for k classes: those of :data:`MULTICLASS_METHODS`, then ``ovr-NAME`` for every binary
    method NAME of :data:`METHODS` (one-vs-rest around it)."""
    binary = [f"{ONE_VS_REST[0]}{name}" for name in sorted(METHODS) if method_outcome(name) == "classification"]
    return sorted(MULTICLASS_METHODS) + binary


def get_multiclass_method(name: str) -> tuple[type[Any], type[Any] | None]:
    """The calibrator class for k classes of a name of :func:`multiclass_method_names`, and for ``ovr-NAME`` the
    binary method's class that it wraps (else None).

    Raises
    ------
    ValueError
        If no method for k classes has that name; the message lists the valid names.
    """
    if name not in multiclass_method_names():
        raise ValueError(f"method must be one of {multiclass_method_names()}; got {name!r}")
    if name in MULTICLASS_METHODS:
        return _resolve(MULTICLASS_METHODS[name]), None
    return _resolve(ONE_VS_REST[1]), get_method(name.removeprefix(ONE_VS_REST[0]))


def class_by_name(class_name: str) -> type[Any]:
    """Return the calibrator class with ``__name__ == class_name`` among the registered ones.

    This is the whitelist used when loading model files: no other class can be instantiated.

    Raises
    ------
    ValueError
        If the class is not a registered mcal calibrator.
    """
    for target in [*METHODS.values(), *MULTICLASS_METHODS.values(), ONE_VS_REST[1]]:
        if target.rpartition(":")[2] == class_name:
            return _resolve(target)
    raise ValueError(f"model class must be a registered mcal calibrator; got {class_name!r}")

"""The calibration methods of the paper benchmarks, looked up in the ``mcal`` namespace at run time.

Benchmark scripts only. A method whose class is not (yet) in this build of mcal, or whose class does not accept
the parameters listed here, is reported as "not available in this run" with the reason, never left out. Any
method registered in ``mcal._registry.METHODS`` that no explicit entry covers is added with its defaults, so that
new calibrators show up in the tables as they land.
"""

from __future__ import annotations

import inspect
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import mcal
from mcal import _registry

#: LightGBM / torch threads of every method (the machine is shared).
N_JOBS = 1
#: MCGrad's seed in the authors' runs (the library default there), for every data split.
MCGRAD_SEED = 42
#: HKRR's four specifications (Hansen et al. 2024): lambda = 0.1 (10 score buckets) and these alphas.
HKRR_ALPHAS = (0.1, 0.05, 0.025, 0.0125)


def limit_threads() -> None:
    """One thread for torch and for BLAS in the methods (the machine is shared); LightGBM gets ``n_jobs``."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(N_JOBS)


class Unavailable(Exception):
    """The method cannot run in this build; the message says why."""


@dataclass(frozen=True)
class Method:
    """One row of a results table.

    Attributes
    ----------
    name : str
        Row label (the paper's row name where there is one).
    cls : str
        Attribute of the ``mcal`` namespace holding the calibrator class.
    params : dict
        Constructor parameters. The value ``FIELD`` is replaced by the dataset's field column name.
    inputs : {"score", "features", "groups", "field", "field+features"}
        What ``X`` the method receives: nothing, the dataset's raw features, one binary column per prespecified
        group, the field column alone, or the field column beside the base model's encoded (numeric) features,
        which ``auxiliary_features="all"`` hands to an auxiliary network.
    paper : str or None
        Row of the paper's tables this row is compared with.
    seeded : {"fixed", "run", None}
        Pass ``random_state``: MCGrad's fixed seed 42, the run's seed index, or nothing.
    nested : tuple of (str, dict) or None
        For wrappers: the class name and parameters of the calibrator passed as first argument.
    """

    name: str
    cls: str
    params: dict = field(default_factory=dict)
    inputs: str = "score"
    paper: str | None = None
    seeded: str | None = None
    nested: tuple | None = None


FIELD = "<field>"
#: Prefix of the encoded feature columns given to auxiliary networks (keeps them apart from the field column).
_AUX_PREFIX = "x:"
_ES = {"max_rounds": 10, "early_stopping": "kfold", "n_folds": 5, "n_jobs": N_JOBS}

#: Section 4 of the protocol: the rows of Tables 5 and 6, in the paper's order, then every other calibrator.
MCGRAD_PAPER_METHODS = (
    Method("MCGrad_msh_20", "MCGrad", {**_ES, "min_sum_hessian_in_leaf": 20.0}, "features", "MCGrad_msh_20", "fixed"),
    Method("MCGrad", "MCGrad", {**_ES, "min_sum_hessian_in_leaf": 1e-3}, "features", "MCGrad", "fixed"),
    Method("MCGrad_group_features", "MCGrad", {**_ES, "max_rounds": 30}, "groups", "MCGrad_group_features", "fixed"),
    Method("MCGrad_no_unshrink", "MCGrad", {**_ES, "rescale": False}, "features", "MCGrad_no_unshrink", "fixed"),
    Method(
        "MCGrad_one_round",
        "MCGrad",
        {"max_rounds": 1, "early_stopping": None, "n_jobs": N_JOBS},
        "features",
        "MCGrad_one_round",
        "fixed",
    ),
    # The authors' DFMC: MCGrad's machinery on the group indicators, one round, no rescaling, depth-2 trees.
    Method(
        "DFMC_protocol",
        "MCGrad",
        {
            "max_rounds": 1,
            "early_stopping": None,
            "rescale": False,
            "learning_rate": 0.1,
            "max_leaves": 31,
            "n_estimators": 100,
            "max_depth": 2,
            "min_child_samples": 20,
            "l2_regularization": 0.0,
            "min_gain_to_split": 0.0,
            "n_jobs": N_JOBS,
        },
        "groups",
        "DFMC",
        "fixed",
    ),
    Method("DFMC", "DFMC", {"n_jobs": N_JOBS}, "groups", "DFMC", "fixed"),
    *(Method(f"HKRR_alpha={a}", "HKRR", {"lam": 0.1, "alpha": a}, "groups", None, "run") for a in HKRR_ALPHAS),
    Method("Isotonic", "IsotonicCalibration", {}, "score", "Isotonic"),
    Method("Platt", "PlattScaling"),
    Method("Temperature", "TemperatureScaling"),
    Method("Beta", "BetaCalibration"),
    Method("HistogramBinning", "HistogramBinning"),
    Method("SIR", "SmoothedIsotonic"),
    Method("GaussianScaling", "GaussianScaling"),
    Method("GammaScaling", "GammaScaling"),
    Method("MCNet-None", "MCNet", {}, "score", None, "run"),
    Method(
        "PerField-Isotonic", "PerFieldCalibrator", {"field": FIELD}, "field", None, None, ("IsotonicCalibration", {})
    ),
)

#: MCNet paper, Table 1: its calibrators in its order, plus MCGrad on the field and the features.
MCNET_TABLE1 = (
    Method("Histogram Binning", "HistogramBinning", {"n_bins": 20}),
    Method("Isotonic Regression", "IsotonicCalibration"),
    Method("Platt Scaling", "PlattScaling"),
    Method("Gaussian Scaling", "GaussianScaling"),
    Method("Gamma Scaling", "GammaScaling"),
    Method("SIR", "SmoothedIsotonic"),
    Method("NeuCalib", "NeuCalib", {"field": FIELD}, "field", None, "run"),
    Method("AdaCalib", "AdaCalib", {"field": FIELD}, "field", None, "run"),
    Method("MCNet-None", "MCNet", {}, "score", None, "run"),
    Method("MCNet-Field", "MCNet", {"field": FIELD}, "field", None, "run"),
    Method("MCGrad", "MCGrad", {"n_jobs": N_JOBS}, "features", None, "fixed"),
)

#: MCNet paper, Table 2: the auxiliary network (a 2-layer MLP on the features, added in logit space).
MCNET_TABLE2 = (
    Method("NeuCalib-Aux", "NeuCalib", {"field": FIELD, "auxiliary_features": "all"}, "field+features", None, "run"),
    Method("AdaCalib-Aux", "AdaCalib", {"field": FIELD, "auxiliary_features": "all"}, "field+features", None, "run"),
    Method("MCNet-None-Aux", "MCNet", {"auxiliary_features": "all"}, "field+features", None, "run"),
    Method("MCNet-Field-Aux", "MCNet", {"field": FIELD, "auxiliary_features": "all"}, "field+features", None, "run"),
)

#: MCNet paper, Table 3: the field-balance regularizer off / on (alpha of eq. 13).
MCNET_BALANCE_ALPHA = 1.0
MCNET_TABLE3 = tuple(
    Method(f"{name} {tag}", cls, {**params, **extra}, inputs, None, "run")
    for name, cls, params, inputs in (
        ("MCNet-None", "MCNet", {"balance_field": FIELD}, "field"),
        ("MCNet-Field", "MCNet", {"field": FIELD, "balance_field": FIELD}, "field"),
        ("NeuCalib", "NeuCalib", {"field": FIELD}, "field"),
        ("AdaCalib", "AdaCalib", {"field": FIELD}, "field"),
    )
    for tag, extra in (("L_b off", {"alpha": 0.0}), ("L_b on", {"alpha": MCNET_BALANCE_ALPHA}))
)


def with_registered(methods: tuple[Method, ...]) -> tuple[Method, ...]:
    """``methods`` plus every method of ``mcal._registry.METHODS`` whose class none of them uses (defaults)."""
    used = {m.cls for m in methods} | {m.nested[0] for m in methods if m.nested}
    extra = []
    for _key, target in _registry.METHODS.items():
        cls = target.rpartition(":")[2]
        if cls not in used:
            used.add(cls)
            try:
                params = inspect.signature(_registry._resolve(target)).parameters
            except (ImportError, AttributeError):
                params = {}  # build() reports the class as missing
            seeded = "run" if "random_state" in params else None
            if "field" in params:  # field-aware calibrators get the dataset's field column
                extra.append(Method(f"{cls} [registry: field]", cls, {"field": FIELD}, "field", None, seeded))
            elif "groups" in params:  # group-based ones get the prespecified groups as indicator columns
                extra.append(Method(f"{cls} [registry: groups]", cls, {}, "groups", None, seeded))
            else:
                extra.append(Method(f"{cls} [registry: defaults]", cls, {}, "auto", None, seeded))
    return methods + tuple(extra)


def _class(name: str) -> type:
    cls = getattr(mcal, name, None)
    if cls is None:
        raise Unavailable(f"mcal.{name} is not in this build of mcal")
    return cls


#: ``--smoke`` (the test suite's tiny run): caps on training length, applied where a class has the parameter.
SMOKE_CAPS = {"max_epochs": 2, "max_iter": 30}
_smoke = False


def set_smoke(enabled: bool) -> None:
    """Cap training length (numbers become meaningless; only the code paths are exercised)."""
    global _smoke
    _smoke = bool(enabled)


def build(method: Method, ds, run_seed: int):
    """Instantiate ``method`` for dataset ``ds``.

    Raises
    ------
    Unavailable
        If the class is missing, the dataset has no field where one is needed, or the class rejects a parameter.
    """
    inputs = method.inputs
    if "field" in inputs and ds.field is None:
        raise Unavailable(f"{ds.name} has no field column")
    cls = _class(method.cls)
    if inputs == "auto" and getattr(cls, "uses_features", False):
        raise Unavailable(f"registered feature-aware method mcal.{method.cls} has no benchmark adapter yet")
    params = {k: (ds.field if v == FIELD else v) for k, v in method.params.items()}
    if params.get("auxiliary_features") == "all":
        params["auxiliary_features"] = tuple(_AUX_PREFIX + c for c in ds.X.columns)
    if method.seeded == "fixed":
        params["random_state"] = MCGRAD_SEED
    elif method.seeded == "run":
        params["random_state"] = run_seed
    accepted = inspect.signature(cls).parameters
    if "progress" in accepted:
        params["progress"] = False  # one line per fit in the benchmark log, no progress bars
    if _smoke:
        params.update({k: v for k, v in SMOKE_CAPS.items() if k in accepted})
    args = ()
    if method.nested is not None:
        args = (_class(method.nested[0])(**method.nested[1]),)
    try:
        return cls(*args, **params)
    except TypeError as exc:
        raise Unavailable(f"mcal.{method.cls} does not take these parameters ({exc})") from exc


def inputs_for(method: Method, ds) -> pd.DataFrame | None:
    """The ``X`` that ``method`` receives on dataset split ``ds``."""
    if method.inputs in ("score", "auto"):
        return None
    if method.inputs == "features":
        return ds.frame
    if method.inputs == "groups":
        return ds.group_frame()
    if method.inputs == "field":
        return ds.frame[[ds.field]]
    # "field+features": the field column and the base model's (numeric, encoded) features for an auxiliary network
    return pd.concat([ds.frame[[ds.field]], ds.X.add_prefix(_AUX_PREFIX)], axis=1)


def fit_predict(method: Method, ds_fit, y_fit, p_fit, targets: dict, run_seed: int):
    """Fit on (``p_fit``, ``y_fit``, features of ``ds_fit``); predict each ``targets[name] = (ds, p)``.

    Returns
    -------
    predictions : dict of name to ndarray
    info : dict
        ``fit_s`` (seconds); ``n_rounds`` (MCGrad), ``n_epochs`` and ``best_epoch`` (MCNet) where present.

    Raises
    ------
    Unavailable
        As :func:`build`, or when ``fit`` raises a ``ValueError``/``TypeError`` (with its message).
    """
    est = build(method, ds_fit, run_seed)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcal.CalibrationWarning)
        try:
            est.fit(p_fit, y_fit, X=inputs_for(method, ds_fit)) if method.inputs != "score" else est.fit(p_fit, y_fit)
        except (TypeError, ValueError) as exc:
            raise Unavailable(f"fit failed: {type(exc).__name__}: {exc}") from exc
        fit_s = time.perf_counter() - start
        preds = {}
        for name, (ds, p) in targets.items():
            X = inputs_for(method, ds)
            preds[name] = np.asarray(est.predict(p, X=X) if X is not None else est.predict(p), dtype=float)
    info = {"fit_s": fit_s}
    for attr in ("n_rounds_", "n_epochs_", "best_epoch_"):  # training diagnostics, where the method has them
        if hasattr(est, attr):
            info[attr.rstrip("_")] = int(getattr(est, attr))
    return preds, info

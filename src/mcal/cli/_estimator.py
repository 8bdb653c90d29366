"""The calibrator that ``mcal fit`` builds from its options (``--method``, ``--param``, ``--field``, ``--features``,
``--device``, ``--n-jobs``), and the feature columns of DATA that a model reads when it predicts."""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

from mcal._optional import import_optional
from mcal._registry import METHODS, get_method
from mcal.cli._common import column
from mcal.cli._options import CLIError, repeated

if TYPE_CHECKING:  # imported where used: ``mcal --help`` reads none of them
    import pandas as pd

#: Method parameters that an option of ``mcal fit`` sets, so ``--param`` must not: the model file records the
#: columns of --field and --features for ``mcal predict``, --random-state is the one seed, and --device is checked
#: before any data is read.
_OWN_OPTION = {
    "random_state": "--random-state N",
    "field": "--field COL",
    "auxiliary_features": "--features A,B,C",
    "device": "--device DEV",
    "n_jobs": "--n-jobs N",
}


def parse_param(text: str) -> tuple[str, object]:
    """One ``--param NAME=VALUE``: the name and the value, parsed as JSON where it is JSON, else the text."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise CLIError(f"--param must look like NAME=VALUE; got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key, value


def parse_params(params: list[str]) -> dict[str, object]:
    """``--param`` settings by name; a name set twice, or one with its own option, is an error."""
    pairs = [parse_param(p) for p in params]
    names = [name for name, _ in pairs]
    twice = repeated(names)
    if twice:
        raise CLIError(f"--param must set each parameter once; got {twice} more than once")
    for text, name in zip(params, names, strict=False):
        if name in _OWN_OPTION:
            raise CLIError(f"--param must not set {name}, which has its own option {_OWN_OPTION[name]}; "
                           f"got --param {text}")  # fmt: skip
    return dict(pairs)


def parameter_options(params: list[str]) -> dict[str, str]:
    """The option that sets each parameter of a calibrator built here (``--n-jobs`` for ``n_jobs``, ``--param
    NAME`` for a name of ``params``), by which :func:`mcal.cli._options.named_as_options` re-words the library's
    errors about them."""
    names = [text.partition("=")[0] for text in params]
    return {name: option.partition(" ")[0] for name, option in _OWN_OPTION.items()} | {
        name: f"--param {name}" for name in names
    }


def _methods_with(parameter: str) -> list[str]:
    """The registered methods whose constructor takes ``parameter`` (``device``: MCNet; ``n_jobs``: LightGBM's)."""
    return [name for name in sorted(METHODS) if parameter in inspect.signature(get_method(name).__init__).parameters]


def check_device_option(device: str) -> None:
    """Refuse a ``--device`` that is not 'cpu', 'cuda' or 'cuda:N', or that torch cannot use on this machine, with
    a message naming the option (a ValueError, reported as ``mcal: error: --device must ...``)."""
    from mcal._torch import torch_device

    torch_device(import_optional("torch"), "--device", device)


def field_setting(method: str, cls: type[Any], field: str | None) -> dict[str, str]:
    """``{"field": field}`` for a method (named ``method``, of class ``cls``) that takes ``--field``, or ``{}``.

    Raises
    ------
    CLIError
        On ``--field`` for a method without one, or no ``--field`` for a method that needs it.
    """
    accepted = inspect.signature(cls.__init__).parameters
    if field is not None:
        if "field" not in accepted:
            raise CLIError(f"--field is not used by method {method!r}; methods with a field: see `mcal fit --help`")
        return {"field": field}
    if "field" in accepted and getattr(cls, "requires_features", False):  # MCNet's field is optional
        raise CLIError(f"method {method!r} needs --field COL, the field (context) column; got no --field")
    return {}


def build_estimator(
    method: str,
    *,
    field: str | None,
    params: list[str],
    random_state: int | None,
    quiet: bool = False,
    features: list[str] | None = None,
    device: str | None = None,
    n_jobs: int | None = None,
):
    """Instantiate a registered method with the command line's settings (``--field``, ``--param``, seed, device,
    threads).

    ``--param calibrator=NAME`` gives :class:`~mcal.PerFieldCalibrator` an unfitted instance of the registered
    method NAME (e.g. ``platt``). ``--features`` of a field-aware method go to its auxiliary network (``auxiliary_features``) where it has
    one; a field-aware method without one reads only its field, so features given to it are an error rather
    than silently unused. ``--device`` is the training device of a method with a ``device`` parameter (MCNet),
    checked here, before any data is read; other methods train on the CPU and refuse it. ``--param`` may name
    each parameter once, and none of ``random_state``, ``field``, ``auxiliary_features``, ``device`` and
    ``n_jobs``, which their own options set. ``--n-jobs`` is the ``n_jobs`` (LightGBM threads) of a method that
    has one; others refuse it.

    Methods with a long loop (MCGrad rounds, MCNet epochs) take a ``progress`` parameter (see
    :func:`mcal._progress.progress`): False with ``quiet`` (``--quiet``, which ``--param progress=...`` must not
    contradict), else ``--param progress=...`` or None (a bar on a terminal).
    """
    cls = get_method(method)
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
    kwargs = parse_params(params)
    unknown = set(kwargs) - accepted
    if unknown:
        raise CLIError(f"--param {sorted(unknown)} not accepted by {method}; its parameters are {sorted(accepted)}")
    if isinstance(kwargs.get("calibrator"), str):  # per-field calibration of any registered univariate method
        name = kwargs["calibrator"]
        if name not in METHODS:
            raise CLIError(f"--param calibrator must name a method (e.g. platt, sir); got {name!r}")
        kwargs["calibrator"] = get_method(name)()
    kwargs.update(field_setting(method, cls, field))
    if features and "field" in accepted:
        if "auxiliary_features" not in accepted:
            raise CLIError(f"method {method!r} reads only its --field column; drop --features")
        kwargs["auxiliary_features"] = list(features)
    if random_state is not None and "random_state" in accepted:
        kwargs["random_state"] = random_state
    if device is not None:
        if "device" not in accepted:
            raise CLIError(f"--device is not used by method {method!r}, which trains on the CPU; methods trained on "
                           f"a chosen device: {', '.join(_methods_with('device'))}")  # fmt: skip
        check_device_option(device)
        kwargs["device"] = device
    kwargs.update(threads_setting(method, accepted, n_jobs))
    if "progress" in accepted:
        if quiet and "progress" in kwargs:
            raise CLIError(f"--param progress must be left out with --quiet, which sets progress=false; "
                           f"got --param progress={json.dumps(kwargs['progress'])} and --quiet")  # fmt: skip
        kwargs.setdefault("progress", False if quiet else None)
    return cls(**kwargs)


def threads_setting(method: str, accepted: set[str], n_jobs: int | None) -> dict[str, int]:
    """``{"n_jobs": n_jobs}`` for a method whose parameters (``accepted``) have it, ``{}`` without ``--n-jobs``.

    Raises
    ------
    CLIError
        If ``--n-jobs`` is given for a method without ``n_jobs``.
    """
    if n_jobs is None:
        return {}
    if "n_jobs" not in accepted:
        raise CLIError(f"--n-jobs is not used by method {method!r}; methods with threads to set: "
                       f"{', '.join(_methods_with('n_jobs'))}")  # fmt: skip
    return {"n_jobs": n_jobs}


def check_features_left_out(model, given: list[str], reads: bool) -> None:
    """Refuse ``--features`` (``given``) for a model that reads no features (``reads`` is False)."""
    if given and not reads:
        raise CLIError(f"--features must be left out: the model, a {type(model).__name__}, uses only the scores; "
                       f"got {given}")  # fmt: skip


def _named_columns(model, meta: dict) -> tuple[list[str], str] | None:
    """The columns of DATA a model reads, by name, and how it came by them: recorded by ``mcal fit``, or kept by
    the model from the DataFrame it was fitted on in Python. None for a model fitted on an array."""
    if "features" in meta:
        features, field = list(meta["features"] or []), meta.get("field")
        return features + (
            [field] if field and field not in features else []
        ), "the model was fitted with --features/--field; its column"
    names = model.feature_columns()
    return None if names is None else (names, "the model was fitted on a DataFrame with the column")


def feature_input(model, meta: dict, df: pd.DataFrame, given: list[str]):
    """The X that ``model.predict`` takes from DATA: the named columns as a DataFrame, or for a model fitted on an
    array, the columns of ``--features`` as an array, in their order."""
    named = _named_columns(model, meta)
    if named is not None:
        names, origin = named
        if given:
            raise CLIError(f"--features must be left out: the model reads the columns {names[:10]} of DATA by name; "
                           f"got {given}")  # fmt: skip
        for name in names:
            column(df, name, origin)
        return df[names] if names else None
    if not given:
        raise CLIError(
            "--features must name the model's feature columns of DATA, in the order of the array it was fitted on: "
            "the model has no feature names (it was fitted in Python on an array without column names); got no "
            "--features. Alternatively fit it on a pandas DataFrame (or with `mcal fit`) to record the names"
        )
    # the columns of an array, unless its features are segments generated from them (HKRR, DFMC groups="generated")
    n_features = getattr(model, "n_features_in_", None) if getattr(model, "segments_", None) is None else None
    if n_features is not None and len(given) != n_features:
        raise CLIError(f"--features must name the model's {n_features} feature column(s), in the order of the "
                       f"array it was fitted on; got {len(given)}: {given}")  # fmt: skip
    for name in given:
        column(df, name, "--features")
    return df[given].to_numpy()

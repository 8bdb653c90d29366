"""The JSON encoding of a calibrator: its class name, parameters and fitted state, arrays exactly (floats through
``repr``), nested calibrators by registered class name only.

A calibrator takes part through the hooks of :class:`Storable` (which :class:`mcal.BaseCalibrator` provides); the
codec checks what a model file may hold before any hook sees it: known parameters that meet their rules
(``_parameter_constraints``), every fitted attribute and no other, each meeting its rule (``_state_constraints``,
:mod:`mcal._persistence.state`), arrays of allowed dtypes and finite values.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from mcal._persistence.state import check_state
from mcal._registry import class_by_name


@runtime_checkable
class Storable(Protocol):
    """What the codec needs of a calibrator (:class:`mcal.BaseCalibrator` provides each of these hooks)."""

    #: The fitted attributes a model file holds, each encoded with :func:`encode_value`.
    _state_attrs: ClassVar[tuple[str, ...]]
    #: The keys of :meth:`_extra_state`.
    _extra_state_keys: ClassVar[tuple[str, ...]]
    #: The rule of each fitted attribute (:mod:`mcal._persistence.state`), checked before the hooks see the state.
    _state_constraints: ClassVar[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]: ...

    def get_params(self, deep: bool = True) -> dict[str, Any]: ...

    def _validate_params(self) -> None: ...

    def __sklearn_is_fitted__(self) -> bool: ...

    def _extra_state(self) -> dict[str, Any]: ...

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None: ...

    def _validate_state(self) -> None: ...

    def _get_tensors(self) -> dict[str, NDArray]: ...


S = TypeVar("S", bound=Storable)

_ALLOWED_DTYPES = ("float64", "float32", "int64", "int32", "bool", "str")


def encode_array(arr: NDArray) -> dict[str, Any]:
    """Encode an ndarray as a JSON-safe dict; floats round-trip exactly through ``repr``.

    Unicode string arrays (e.g. column names given as ``np.array(["a", "b"])``) are stored with dtype ``"str"``, and
    so are object arrays of strings only (``df.columns.values``).
    """
    arr = np.asarray(arr)
    if arr.dtype == object and all(isinstance(v, str) for v in arr.ravel()):
        arr = arr.astype(str)
    dtype = "str" if arr.dtype.kind == "U" else arr.dtype.name
    if dtype not in _ALLOWED_DTYPES:
        raise TypeError(f"cannot serialize an array of dtype {arr.dtype}")
    return {"__ndarray__": arr.ravel().tolist(), "dtype": dtype, "shape": list(arr.shape)}


def decode_array(obj: Any, name: str) -> NDArray:
    """Decode :func:`encode_array` output, validating dtype, shape and finiteness.

    Raises
    ------
    ValueError
        If ``obj`` is not a well-formed encoded array.
    """
    if not isinstance(obj, dict) or set(obj) != {"__ndarray__", "dtype", "shape"}:
        raise ValueError(f"model file field {name!r} must be an encoded array; got {type(obj).__name__}")
    if obj["dtype"] not in _ALLOWED_DTYPES:
        raise ValueError(f"model file field {name!r} has dtype {obj['dtype']!r}; allowed: {_ALLOWED_DTYPES}")
    shape = obj["shape"]
    if not (isinstance(shape, list) and all(isinstance(s, int) and s >= 0 for s in shape)):
        raise ValueError(f"model file field {name!r} has an invalid shape {shape!r}")
    data = obj["__ndarray__"]
    size = math.prod(shape)  # Python integers: a forged dimension of 2**64 does not overflow
    if not isinstance(data, list) or len(data) != size:
        raise ValueError(f"model file field {name!r} must hold {size} values matching shape {shape}")
    if obj["dtype"] == "str" and not all(isinstance(v, str) for v in data):
        raise ValueError(f"model file field {name!r} must hold strings (dtype 'str')")
    try:
        arr = np.asarray(data, dtype=obj["dtype"]).reshape(shape)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"model file field {name!r} holds values that are not {obj['dtype']}: {exc}") from exc
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"model file field {name!r} must hold finite values")
    return arr


def encode_value(value: Any) -> Any:
    """Encode a parameter or state value (scalars, lists, dicts, arrays, nested calibrators) for JSON.

    Tuples, sets and pandas Index or Series values become lists (sets in a fixed order).
    """
    if isinstance(value, np.ndarray):
        return encode_array(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [encode_value(v) for v in value]
    if isinstance(value, (pd.Index, pd.Series)):  # e.g. categorical_features=df.columns[:3]: stored as a list
        return [encode_value(v) for v in value.tolist()]
    if isinstance(value, (set, frozenset)):  # stored as a list in a fixed order, whatever the hash seed
        return [encode_value(v) for v in sorted(value, key=lambda v: (type(v).__name__, str(v)))]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("cannot serialize a dict with non-string keys")
        return {k: encode_value(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Storable):
        return {"__calibrator__": value.to_dict()}
    raise TypeError(f"cannot serialize a value of type {type(value).__name__}")


def _encode_param(name: str, value: Any) -> Any:
    try:
        return encode_value(value)
    except TypeError as exc:
        raise TypeError(
            f"parameter {name} must be storable in a model file (None, bool, numbers, strings, lists, dicts with "
            f"string keys, or arrays of numbers, bools or strings); {exc}"
        ) from exc


def decode_value(value: Any, name: str) -> Any:
    """Inverse of :func:`encode_value`; nested calibrators are rebuilt through the registry whitelist."""
    if isinstance(value, dict):
        if "__ndarray__" in value:
            return decode_array(value, name)
        if "__calibrator__" in value:
            return calibrator_from_dict(value["__calibrator__"])
        return {k: decode_value(v, f"{name}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [decode_value(v, f"{name}[{i}]") for i, v in enumerate(value)]
    return value


def encode_model(model: Storable) -> dict[str, Any]:
    """Return a JSON-safe dict of ``model``'s class name, parameters and fitted state (:meth:`BaseCalibrator.to_dict
    <mcal.BaseCalibrator.to_dict>`).

    Raises
    ------
    ValueError
        If a parameter is invalid (set with ``set_params`` after fit): :func:`decode_model` would refuse it.
    TypeError
        If a parameter holds a value that a model file cannot store.
    """
    try:
        model._validate_params()
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{type(model).__name__} holds an invalid parameter, which a model file cannot load: {exc}"
        ) from exc
    state = None
    if model.__sklearn_is_fitted__():
        state = {k: encode_value(getattr(model, k)) for k in model._state_attrs}
        state.update(model._extra_state())
    return {
        "class": type(model).__name__,
        "params": {k: _encode_param(k, v) for k, v in model.get_params(deep=False).items()},
        "state": state,
    }


def decode_model(cls: type[S], data: Any, tensors: dict[str, NDArray] | None) -> S:
    """Rebuild a ``cls`` from :func:`encode_model` output and the weights ``tensors`` (:meth:`BaseCalibrator.from_dict
    <mcal.BaseCalibrator.from_dict>`).

    Raises
    ------
    ValueError
        If the dict is for another class, its parameters or state are malformed or hold entries that
        :func:`encode_model` does not write.
    """
    if not isinstance(data, dict) or data.get("class") != cls.__name__:
        got = data.get("class") if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"model data must describe a {cls.__name__}; got {got!r}")
    params = data.get("params")
    if not isinstance(params, dict):
        raise ValueError("model data must hold a 'params' dict")
    valid = set(cls().get_params(deep=False))
    unknown = set(params) - valid
    if unknown:
        raise ValueError(f"model data has unknown parameters for {cls.__name__}: {sorted(unknown)}")
    obj = cls(**{k: decode_value(v, f"params.{k}") for k, v in params.items()})
    try:
        obj._validate_params()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"model data holds invalid parameters for {cls.__name__}: {exc}") from exc
    state = data.get("state")
    if state is not None:
        _decode_state(obj, state, tensors or {})
    elif tensors:
        raise ValueError("model data has weights but no fitted state")
    return obj


def _decode_state(obj: Storable, state: Any, tensors: dict[str, NDArray]) -> None:
    """Set the fitted attributes of ``obj`` from the model data's ``state``, then let its hooks check them."""
    if not isinstance(state, dict):
        raise ValueError("model data 'state' must be a dict or null")
    missing = [k for k in obj._state_attrs if k not in state]
    if missing:
        raise ValueError(f"model data 'state' lacks fitted attributes {missing}")
    for k in obj._state_attrs:
        setattr(obj, k, decode_value(state[k], f"state.{k}"))
    check_state(obj)
    obj._restore_extra_state(state, tensors)
    obj._validate_state()
    unknown = set(state) - set(obj._state_attrs) - set(obj._extra_state_keys)
    if unknown:
        raise ValueError(f"model data 'state' has entries that {type(obj).__name__} does not write: {sorted(unknown)}")


def calibrator_from_dict(data: Any, tensors: dict | None = None) -> Any:
    """Rebuild a calibrator from ``to_dict`` output, allowing only registered mcal classes.

    Raises
    ------
    ValueError
        If ``data`` names no class, a class that is not a registered mcal calibrator, or is malformed (see
        :meth:`mcal.BaseCalibrator.from_dict`).
    """
    if not isinstance(data, dict) or not isinstance(data.get("class"), str):
        raise ValueError("model data must be a dict with a 'class' name")
    return class_by_name(data["class"]).from_dict(data, tensors=tensors)

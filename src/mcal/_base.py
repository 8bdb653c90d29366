"""The base class of every calibrator, and the JSON encoding of its parameters and fitted state."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from mcal._constraints import check_params
from mcal._features.table import as_frame
from mcal._validation import (
    FIT_SWAP,
    as_output,
    check_both_classes,
    check_consistent,
    check_sample_weight,
    check_X_type,
    check_y_prob,
    check_y_true,
    looks_swapped,
    swap_hint,
    warn,
)

if sys.version_info >= (3, 11):
    from typing import Self
else:  # pragma: no cover
    from typing_extensions import Self

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


def check_state_array(name: str, value: Any, kinds: str, what: str, ndim: int | None = None) -> None:
    """Raise ``ValueError`` unless the decoded state field ``name`` is an array of dtype kind in ``kinds`` (and
    ``ndim`` dimensions when given): a model file may hold a number, a list or another dtype there.

    ``what`` names the kinds in the message, e.g. ``"numbers"``.
    """
    if not isinstance(value, np.ndarray) or value.dtype.kind not in kinds or (ndim is not None and value.ndim != ndim):
        shape = f"shape {getattr(value, 'shape', ())}, "
        rule, got = ("an array", "") if ndim is None else (f"a {ndim}-D array", shape)
        got = f"{got}dtype {value.dtype}" if isinstance(value, np.ndarray) else type(value).__name__
        raise ValueError(f"model data field state.{name} must be {rule} of {what}; got {got}")


def encode_value(value: Any) -> Any:
    """Encode a parameter or state value (scalars, lists, dicts, arrays, nested calibrators) for JSON.

    Tuples, sets and pandas Index or Series values become lists (sets in a fixed order).
    """
    if isinstance(value, BaseCalibrator):
        return {"__calibrator__": value.to_dict()}
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
            from mcal._persistence.files import calibrator_from_dict

            return calibrator_from_dict(value["__calibrator__"])
        return {k: decode_value(v, f"{name}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [decode_value(v, f"{name}[{i}]") for i, v in enumerate(value)]
    return value


class BaseCalibrator(BaseEstimator):
    """Base class: a learned map from a probability (and optionally features) to a calibrated probability.

    Subclasses implement ``_fit(y_prob, y, sample_weight, X)`` and ``_predict(y_prob, X)`` on validated
    float64 arrays, and list their fitted attributes in ``_state_attrs``. The public :meth:`fit` and
    :meth:`predict` do all validation, once.

    Attributes
    ----------
    uses_features : bool
        Class attribute; ``True`` for calibrators that read ``X`` (MCGrad, MCNet, field-aware methods).
    requires_features : bool
        Class attribute; ``True`` for calibrators whose fit needs ``X`` (a field column, group indicators);
        ``False`` where ``fit(y_prob, y)`` without ``X`` fits on the scores alone (MCGrad, MCNet without a field).
    """

    uses_features: ClassVar[bool] = False
    requires_features: ClassVar[bool] = False
    #: Soft labels in [0, 1] are accepted by methods that fit a log loss and set this to True.
    accepts_soft_labels: ClassVar[bool] = False
    #: "classification" (probabilities of binary labels) or "regression" (real predictions of real outcomes).
    outcome: ClassVar[str] = "classification"
    #: Names of fitted attributes saved by :meth:`to_dict`; the first one is checked by ``check_is_fitted``.
    _state_attrs: ClassVar[tuple[str, ...]] = ()
    #: Keys of :meth:`_extra_state`, read on load without serializing the state again to learn them.
    _extra_state_keys: ClassVar[tuple[str, ...]] = ()
    #: The rule of each parameter of ``__init__``, checked once by :meth:`fit` (and when a model is saved or
    #: loaded): an :class:`~mcal._constraints.Interval`, :class:`~mcal._constraints.StrOptions`, None, "boolean",
    #: "random_state", "no_validation", a function ``check(name, value)``, or a list of which one must hold.
    _parameter_constraints: ClassVar[dict[str, Any]] = {}

    # -- public API -------------------------------------------------------------------------------------
    def fit(
        self,
        y_prob: ArrayLike,
        y: ArrayLike,
        *,
        X: Any = None,
        sample_weight: ArrayLike | None = None,
    ) -> Self:
        """Fit the calibration map.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples,)
            Uncalibrated probabilities of the positive class, in [0, 1].
        y : array-like of shape (n_samples,)
            Binary labels, 0/1 or bool; calibrators with ``accepts_soft_labels = True`` (MCGrad) also take
            soft labels in [0, 1].
        X : array-like or DataFrame of shape (n_samples, n_features), default=None
            Features; only for calibrators with ``uses_features = True``.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; weight k is equivalent to k copies of the row.

        Returns
        -------
        self : object
            The fitted calibrator.

        Raises
        ------
        ValueError
            If a parameter breaks its rule (see the class's Parameters); on NaN, infinite or out-of-range scores,
            non-binary labels, a single class, mismatched lengths, empty input, negative or all-zero weights, or
            ``X`` given to a univariate calibrator. When ``y_prob`` holds only 0 and 1 and ``y`` holds
            probabilities, the message asks whether the two were passed in the wrong order.
        TypeError
            If a parameter has the wrong type (see the class's Parameters), ``y_prob``, ``y`` or ``sample_weight``
            is not array-like (None, a string, or a scalar weight) or holds complex numbers, or ``X`` is not a table
            (a string, a dict, a sparse matrix or an iterator).

        Warns
        -----
        CalibrationWarning
            If the calibrator takes soft labels and ``y_prob`` holds only 0 and 1 while ``y`` holds probabilities:
            the two look passed in the wrong order.
        """
        self._validate_params()
        with swap_hint(y, y_prob, FIT_SWAP):
            p = check_y_prob(y_prob)
            yy = check_y_true(y, "y", allow_soft=self.accepts_soft_labels)
        if self.accepts_soft_labels and looks_swapped(yy, p):  # soft labels: nothing raised
            warn(f"y_prob holds only 0 and 1 while y holds probabilities; {FIT_SWAP}")
        check_consistent(y_prob=p, y=yy)
        w = check_sample_weight(sample_weight, p.shape[0])
        check_both_classes(yy, w)
        X = self._check_X(X, p.shape[0], fitting=True)
        self._fit(p, yy, w, X)
        return self

    def predict(self, y_prob: ArrayLike, *, X: Any = None) -> NDArray[np.floating]:
        """Return calibrated probabilities.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples,)
            Uncalibrated probabilities in [0, 1].
        X : array-like or DataFrame of shape (n_samples, n_features), default=None
            Features, for calibrators with ``uses_features = True``.

        Returns
        -------
        y_calibrated : ndarray of shape (n_samples,)
            Calibrated P(y=1), float32 if ``y_prob`` is float32, else float64.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        ValueError
            On invalid scores or features.
        TypeError
            If ``y_prob`` is not array-like (None or a string) or holds complex numbers, or ``X`` is not a table (a
            string, a dict, a sparse matrix or an iterator).
        """
        return self._checked_predict(y_prob, X, self._predict)

    def _checked_predict(
        self, y_prob: ArrayLike, X: Any, predict: Callable[[NDArray[np.float64], Any], NDArray[np.float64]]
    ) -> NDArray[np.floating]:
        """:meth:`predict`'s checks and output dtype around ``predict(y_prob, X)`` (``_predict``, or for a
        subclass whose ``predict`` takes an option, ``_predict`` with that option bound)."""
        self._check_fitted()
        p = check_y_prob(y_prob)
        X = self._check_X(X, p.shape[0], fitting=False)
        return as_output(predict(p, X), y_prob)

    # -- hooks ------------------------------------------------------------------------------------------
    def _validate_params(self) -> None:
        """Check the parameters against :attr:`_parameter_constraints`, then :meth:`_check_param_relations`:
        ``TypeError`` for a wrong type and ``ValueError`` for a wrong value, naming the parameter."""
        check_params(self._parameter_constraints, self)
        self._check_param_relations()

    def _check_param_relations(self) -> None:
        """Raise ``ValueError`` for parameters that each meet their rule but contradict each other."""

    def _fit(
        self,
        y_prob: NDArray[np.float64],
        y: NDArray[np.float64] | NDArray[np.intp],
        sample_weight: NDArray[np.float64],
        X: Any,
    ) -> None:
        """Learn from clean inputs; ``y`` holds float64 outcomes, or class codes for the multiclass calibrators."""
        raise NotImplementedError

    def _predict(self, y_prob: NDArray[np.float64], X: Any) -> NDArray[np.float64]:
        raise NotImplementedError

    def _check_X(self, X: Any, n_samples: int, *, fitting: bool) -> Any:
        if not self.uses_features:
            if X is not None:
                raise ValueError(
                    f"X must be None for {type(self).__name__}, which uses only the scores "
                    f"(uses_features=False); got {type(X).__name__}"
                )
            return None
        if X is None:
            return None
        X = as_frame(X)  # a polars or pyarrow table as a pandas DataFrame, with its column names
        check_X_type(X)
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        if n != n_samples:
            score = "y_pred" if self.outcome == "regression" else "y_prob"
            raise ValueError(f"X must have {n_samples} rows (the length of {score}); got {n}")
        return X

    def feature_columns(self) -> list[Any] | None:
        """The columns of ``X`` that :meth:`predict` reads, by the names kept from the table it was fitted on.

        Returns
        -------
        columns : list of str, or None
            ``[]`` for a calibrator that reads no column (a univariate one, MCGrad or MCNet fitted on the score
            alone); None for one fitted on an array, whose columns have no names (the command line and
            :func:`mcal.dask.predict` then cannot check the columns of ``X`` by name).

        Raises
        ------
        NotFittedError
            If the calibrator is not fitted.
        """
        self._check_fitted()
        return self._feature_columns()

    def _feature_columns(self) -> list[Any] | None:
        """:meth:`feature_columns` of a fitted calibrator; each family that reads ``X`` says which columns it reads."""
        return [] if not self.uses_features else None

    def _check_X_columns(self, X: Any) -> None:
        """Raise the ``ValueError`` :meth:`predict` raises for the columns of the DataFrame ``X`` (possibly without
        rows), without predicting; :func:`mcal.dask.predict` checks a dask frame's metadata with it. None here: a
        calibrator that selects its columns by name accepts others (missing ones are refused when read)."""

    def _check_fitted(self) -> None:
        if not self._state_attrs:
            raise NotImplementedError(f"{type(self).__name__} must declare _state_attrs")
        if not hasattr(self, self._state_attrs[0]):  # sklearn's check (and its message) only when it fails
            check_is_fitted(self, self._state_attrs[0])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.one_d_array = True
        tags.input_tags.two_d_array = False
        return tags

    # -- serialization ----------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict of the class name, parameters and fitted state.

        Returns
        -------
        data : dict
            ``{"class": str, "params": dict, "state": dict or None}``; arrays are encoded exactly.

        Raises
        ------
        ValueError
            If a parameter is invalid (set with ``set_params`` after fit): :meth:`from_dict` would refuse it.
        TypeError
            If a parameter holds a value that a model file cannot store (e.g. an object other than None, bool,
            numbers, strings, lists, dicts with string keys, or arrays of numbers, bools or strings).
        """
        try:
            self._validate_params()
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{type(self).__name__} holds an invalid parameter, which a model file cannot load: {exc}"
            ) from exc
        state = None
        if self.__sklearn_is_fitted__():
            state = {k: encode_value(getattr(self, k)) for k in self._state_attrs}
            state.update(self._extra_state())
        return {
            "class": type(self).__name__,
            "params": {k: _encode_param(k, v) for k, v in self.get_params(deep=False).items()},
            "state": state,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], tensors: dict[str, NDArray] | None = None) -> Self:
        """Rebuild a calibrator from :meth:`to_dict` output.

        Parameters
        ----------
        data : dict
            As returned by :meth:`to_dict`.
        tensors : dict of str to ndarray, default=None
            Network weights read from the model's safetensors file (MCNet and other torch models).

        Returns
        -------
        calibrator : BaseCalibrator

        Raises
        ------
        ValueError
            If the dict is for another class, its parameters or state are malformed or hold entries that
            :meth:`to_dict` does not write, or it is nested deeper than Python's recursion limit lets it be decoded.
        """
        try:
            return cls._from_dict(data, tensors)
        except RecursionError as exc:
            raise ValueError(
                f"model data must be nested no deeper than Python's recursion limit "
                f"({sys.getrecursionlimit()}) lets mcal decode, as to_dict writes it; got data nested "
                "too deeply"
            ) from exc

    @classmethod
    def _from_dict(cls, data: dict[str, Any], tensors: dict[str, NDArray] | None) -> Self:
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
            if not isinstance(state, dict):
                raise ValueError("model data 'state' must be a dict or null")
            missing = [k for k in obj._state_attrs if k not in state]
            if missing:
                raise ValueError(f"model data 'state' lacks fitted attributes {missing}")
            for k in obj._state_attrs:
                setattr(obj, k, decode_value(state[k], f"state.{k}"))
            obj._restore_extra_state(state, tensors or {})
            obj._validate_state()
            unknown = set(state) - set(obj._state_attrs) - set(obj._extra_state_keys)
            if unknown:
                raise ValueError(
                    f"model data 'state' has entries that {cls.__name__} does not write: {sorted(unknown)}"
                )
        elif tensors:
            raise ValueError("model data has weights but no fitted state")
        return obj

    def __sklearn_is_fitted__(self) -> bool:
        return bool(self._state_attrs) and all(hasattr(self, k) for k in self._state_attrs)

    def _extra_state(self) -> dict[str, Any]:
        """Extra JSON-safe state beyond ``_state_attrs`` (e.g. LightGBM model text)."""
        return {}

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        if tensors:
            raise ValueError(f"{type(self).__name__} model files carry no weights file")

    def _get_tensors(self) -> dict[str, NDArray]:
        """Network weights to store in a safetensors file beside the JSON (empty for non-network models)."""
        return {}

    def _validate_state(self) -> None:
        """Check the restored state; by default every fitted attribute is a finite number or an array.

        Subclasses with richer state override this and raise ``ValueError`` naming the field.
        """
        for k in self._state_attrs:
            v = getattr(self, k)
            if isinstance(v, np.ndarray):
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                raise ValueError(f"model data field state.{k} must be a finite number; got {v!r}")

"""The base class of every calibrator: the checked ``fit`` and ``predict`` around its hooks, and the hooks through
which the model-file codec (:mod:`mcal._persistence.codec`) stores and restores it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from mcal._constraints import check_params
from mcal._features.table import as_frame
from mcal._persistence.codec import decode_model, encode_model
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


@dataclass(frozen=True)
class FitInputs:
    """The inputs of a fit after their checks: float64 scores, outcomes (or class codes) and weights, and the
    attributes that the checks learned (a k-class calibrator's ``classes_``), set once the fit succeeded."""

    scores: NDArray[np.float64]
    y: NDArray[Any]
    sample_weight: NDArray[np.float64]
    learned: dict[str, Any] = field(default_factory=dict)


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
    #: The rule of each fitted attribute of ``_state_attrs``, checked when a model file is read, before the hooks see
    #: the state: a rule of :mod:`mcal._persistence.state` (``Number``, ``Array``, ...). Rules that relate fields, and
    #: the checks of fields the table does not name, go in :meth:`_validate_state`.
    _state_constraints: ClassVar[dict[str, Any]] = {}
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
        return self._fit_checked(y_prob, y, X, sample_weight)

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

    # -- the one template of fit and predict ------------------------------------------------------------
    def _fit_checked(self, scores: ArrayLike, y: ArrayLike, X: Any, sample_weight: Any, **options: Any) -> Self:
        """:meth:`fit`'s template, for every family: the parameters, then the inputs (:meth:`_check_fit_inputs`),
        then ``X``, then ``_fit(scores, y, sample_weight, X, **options)`` on the clean arrays, then the attributes
        that the input checks learned. ``options`` are the family's own fit arguments (MCGrad's ``eval_set``)."""
        self._validate_params()
        inputs = self._check_fit_inputs(scores, y, sample_weight)
        X = self._check_X(X, inputs.scores.shape[0], fitting=True)
        self._fit(inputs.scores, inputs.y, inputs.sample_weight, X, **options)
        for name, value in inputs.learned.items():
            setattr(self, name, value)
        return self

    def _checked_predict(
        self, scores: ArrayLike, X: Any, predict: Callable[[NDArray[np.float64], Any], NDArray[np.float64]]
    ) -> NDArray[np.floating]:
        """:meth:`predict`'s template: the scores (:meth:`_check_predict_scores`), ``X`` and the output dtype around
        ``predict(scores, X)`` (``_predict``, or for a subclass whose ``predict`` takes an option, ``_predict`` with
        that option bound)."""
        self._check_fitted()
        p = self._check_predict_scores(scores)
        X = self._check_X(X, p.shape[0], fitting=False)
        return as_output(predict(p, X), scores)

    def _check_fit_inputs(self, y_prob: ArrayLike, y: ArrayLike, sample_weight: Any) -> FitInputs:
        """The scores, labels and weights of :meth:`fit`, checked (probabilities and binary or soft labels here; the
        regression and k-class families check their own)."""
        with swap_hint(y, y_prob, FIT_SWAP):
            p = check_y_prob(y_prob)
            yy = check_y_true(y, "y", allow_soft=self.accepts_soft_labels)
        if self.accepts_soft_labels and looks_swapped(yy, p):  # soft labels: nothing raised
            warn(f"y_prob holds only 0 and 1 while y holds probabilities; {FIT_SWAP}")
        check_consistent(y_prob=p, y=yy)
        w = check_sample_weight(sample_weight, p.shape[0])
        check_both_classes(yy, w)
        return FitInputs(p, yy, w)

    def _check_predict_scores(self, y_prob: ArrayLike) -> NDArray[np.float64]:
        """The scores of :meth:`predict`, checked (probabilities here)."""
        return check_y_prob(y_prob)

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
        return encode_model(self)

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
        """:meth:`from_dict` without its handling of deep nesting; a subclass that reads the model data of an earlier
        mcal upgrades or refuses it here, before the codec decodes it."""
        return decode_model(cls, data, tensors)

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
        """Raise ``ValueError``, naming the fields, for restored fitted attributes that each meet their rule in
        :attr:`_state_constraints` (which the codec checks first) but contradict each other, or that the table does
        not name and break their rule."""

"""Per-field calibration: any univariate calibrator fitted on each field value, with a global fallback.

A *field* is one categorical context column (country, ad source) held in ``X``; ``field=`` names it. A field
value gets its own calibrator only when it has at least ``min_samples_per_field`` rows at fit time; rarer values
and values unseen at fit time use the calibrator fitted on all rows (the fallback slot of
:mod:`mcal._features.field_slots`), as NeuCalib and AdaCalib (:mod:`mcal.field._calibrators`) do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone

from mcal._base import BaseCalibrator
from mcal._constraints import POSITIVE_INT
from mcal._features.field_inputs import named_columns
from mcal._features.field_slots import FieldSlots, check_field_param, check_field_slots
from mcal._features.fields import check_field_values
from mcal._persistence.state import Each
from mcal._validation import check_y_prob, output_dtype, warn
from mcal.nonparametric import IsotonicCalibration


def check_field(name: str, field: Any) -> None:
    """The rule of a ``field`` parameter: a column name (non-empty str) or index (int)."""
    check_field_param(field, name)


#: The parameter constraints of the field column, shared by the field-aware calibrators.
FIELD_CONSTRAINTS = {"field": check_field, "min_samples_per_field": POSITIVE_INT}
#: The fitted-state rules of the field values and their slots, shared by the field-aware calibrators (whether the
#: two agree is checked by :meth:`FieldSlots.validate <mcal._features.field_slots.FieldSlots.validate>`).
FIELD_STATE = {"field_values_": check_field_values, "field_slots_": check_field_slots}


def _check_univariate(name: str, calibrator: Any) -> None:
    """The rule of ``calibrator``: None or a univariate mcal calibrator."""
    if calibrator is not None and not isinstance(calibrator, BaseCalibrator):
        raise TypeError(f"{name} must be an mcal calibrator or None; got {type(calibrator).__name__}")
    if calibrator is not None and calibrator.uses_features:
        raise ValueError(f"{name} must be univariate (uses_features=False); got {type(calibrator).__name__}")


def _check_fitted_univariate(name: str, calibrator: Any) -> None:
    """The fitted-state rule of a per-field calibrator: a fitted univariate mcal calibrator."""
    if not isinstance(calibrator, BaseCalibrator) or calibrator.uses_features or not calibrator.__sklearn_is_fitted__():
        got = type(calibrator).__name__
        got = f"an unfitted {got}" if isinstance(calibrator, BaseCalibrator) and not calibrator.uses_features else got
        raise ValueError(f"{name} must be a fitted univariate mcal calibrator; got {got}")


class PerFieldCalibrator(BaseCalibrator):
    """Any univariate calibrator fitted separately on each field value, with a global fallback.

    Parameters
    ----------
    calibrator : BaseCalibrator or None, default=None
        An unfitted univariate mcal calibrator (``uses_features = False``) to clone per field value;
        :class:`~mcal.IsotonicCalibration` when None.
    field : str or int, default=None
        The field column of ``X`` (a non-empty name, or index for an array). Required.
    min_samples_per_field : int >= 1, default=100
        A field value gets its own calibrator when it has at least this many rows of positive weight at fit
        time, and both classes.

    Attributes
    ----------
    field_values_ : list of str, then None
        Field values seen at fit time, sorted, then None for the missing level if a value was missing.
    field_slots_ : ndarray of shape (n_values,)
        Index into ``field_calibrators_`` of each value; -1 for values that use the global calibrator.
    field_calibrators_ : list of BaseCalibrator
        One fitted clone per field value with enough rows.
    global_calibrator_ : BaseCalibrator
        A clone fitted on all rows: used for rare values, values with a single class, and unseen values.

    Raises
    ------
    ValueError
        From :meth:`fit`: a parameter breaks its rule (see Parameters), ``X=None`` or an ``X`` without the field
        column, or invalid scores, labels or weights (as
        :meth:`BaseCalibrator.fit <mcal.BaseCalibrator.fit>`), and what the nested calibrator's fit raises;
        from :meth:`predict`: ``X=None`` or an ``X`` without the field column.
    TypeError
        From :meth:`fit`: a parameter has the wrong type (see Parameters; ``field`` is required), or an input is
        not array-like.

    Notes
    -----
    The field-level calibration that AdaCalib (Wei et al. 2022) and per-segment calibrators approximate,
    without sharing anything between fields. Rare values fall back to the global calibrator rather than
    being fitted on a handful of rows (documented, not an error); a value with enough rows but a single
    class falls back too, with a :class:`~mcal.CalibrationWarning`; unseen values at predict time fall back
    with one warning counting them. Missing field values (NaN, None, NA) are a field value of their own, listed
    last in ``field_values_`` as None. Sample weights go to every nested fit, so they are honoured exactly
    when the nested calibrator honours them. Monotone in the score within each field value whenever the
    nested calibrator is.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from mcal import PlattScaling
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"country": rng.choice(["de", "fr", "it"], 600, p=[0.49, 0.49, 0.02])})
    >>> p = rng.uniform(0.05, 0.95, 600)
    >>> y = rng.random(600) < p
    >>> cal = PerFieldCalibrator(PlattScaling(), field="country").fit(p, y, X=X)
    >>> cal.field_values_, cal.field_slots_.tolist()   # "it" has too few rows: global calibrator
    (['de', 'fr', 'it'], [0, 1, -1])
    """

    uses_features: ClassVar[bool] = True
    requires_features: ClassVar[bool] = True  # the field column
    _state_attrs: ClassVar[tuple[str, ...]] = (
        "field_values_",
        "field_slots_",
        "field_calibrators_",
        "global_calibrator_",
    )
    _state_constraints: ClassVar[dict[str, Any]] = {
        **FIELD_STATE,
        "field_calibrators_": Each(_check_fitted_univariate),
        "global_calibrator_": _check_fitted_univariate,
    }
    _parameter_constraints: ClassVar[dict[str, Any]] = {**FIELD_CONSTRAINTS, "calibrator": _check_univariate}

    def __init__(
        self,
        calibrator: BaseCalibrator | None = None,
        *,
        field: str | int | None = None,
        min_samples_per_field: int = 100,
    ) -> None:
        self.calibrator = calibrator
        self.field = field
        self.min_samples_per_field = min_samples_per_field

    def _template(self) -> BaseCalibrator:
        return IsotonicCalibration() if self.calibrator is None else self.calibrator

    def _check_X(self, X, n_samples, *, fitting):
        if X is None:
            raise ValueError(f"X must hold the field column {self.field!r} for PerFieldCalibrator; got None")
        return super()._check_X(X, n_samples, fitting=fitting)

    def _fit(self, y_prob, y, sample_weight, X) -> None:
        def both_classes(rows: NDArray[np.bool_]) -> bool:
            return (
                float(np.dot(sample_weight[rows], y[rows])) > 0 and float(np.dot(sample_weight[rows], 1 - y[rows])) > 0
            )

        n_min = int(self.min_samples_per_field)
        assert self.field is not None  # the parameter constraints refuse None
        slots, row_slots = FieldSlots.fit(X, self.field, sample_weight, n_min, eligible=both_classes)
        assert slots.counts is not None  # set by FieldSlots.fit
        values = slots.vocabulary.to_list()
        single = [v for v, k, c in zip(values, slots.slot_of_value, slots.counts, strict=False) if k < 0 and c >= n_min]
        if single:
            warn(
                f"{len(single)} field value(s) have enough rows but a single class (e.g. {single[:3]}); "
                "they use the global calibrator"
            )
        self.global_calibrator_ = clone(self._template()).fit(y_prob, y, sample_weight=sample_weight)
        self.field_calibrators_ = [
            clone(self._template()).fit(y_prob[rows], y[rows], sample_weight=sample_weight[rows])
            for rows in (row_slots == k for k in range(slots.n_slots))
        ]
        self.field_values_ = values
        self.field_slots_ = slots.slot_of_value

    def _feature_columns(self) -> list[Any] | None:
        """The field, by name (see :meth:`mcal.BaseCalibrator.feature_columns`)."""
        return named_columns(self.field, None)

    def _predict(self, y_prob, X) -> NDArray[np.float64]:
        return self._per_slot(y_prob, X, lambda cal, p: (cal.predict(p),))[0]

    def predict_interval(self, y_prob: ArrayLike, *, X: Any) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
        """Return the interval ``(low, high)`` of the nested calibrator of each row's field value.

        For a nested :class:`~mcal.VennAbers` this is the Mondrian (per field value) Venn-Abers pair ``(p0, p1)``.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples,)
            Uncalibrated probabilities in [0, 1].
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features holding the field column.

        Returns
        -------
        low, high : ndarray of shape (n_samples,)
            float32 if ``y_prob`` is float32, else float64.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        TypeError
            If the nested calibrator has no ``predict_interval`` (only :class:`~mcal.VennAbers` has one), or an
            input is not array-like.
        ValueError
            On invalid scores, or ``X=None`` or an ``X`` without the field column.
        """
        self._check_fitted()
        if not hasattr(self.global_calibrator_, "predict_interval"):
            raise TypeError(
                "predict_interval needs a nested calibrator with intervals, such as VennAbers; got "
                f"{type(self.global_calibrator_).__name__}"
            )
        p = check_y_prob(y_prob)
        X = self._check_X(X, p.shape[0], fitting=False)
        low, high = self._per_slot(p, X, lambda cal, q: cal.predict_interval(q))
        dtype = output_dtype(y_prob)
        return low.astype(dtype, copy=False), high.astype(dtype, copy=False)

    def _per_slot(
        self, y_prob: NDArray[np.float64], X: Any, method: Callable[[BaseCalibrator, NDArray], tuple[NDArray, ...]]
    ) -> tuple[NDArray[np.float64], ...]:
        """The arrays ``method(calibrator, scores)`` returns, each row's from its field value's calibrator."""
        slots = FieldSlots(self.field_values_, self.field_slots_)
        assert self.field is not None  # the parameter constraints refuse None
        row_slots = slots.transform(X, self.field, y_prob.shape[0])
        out: tuple[NDArray[np.float64], ...] = ()
        for k, cal in enumerate([*self.field_calibrators_, self.global_calibrator_]):
            rows = row_slots == k
            if rows.any():
                values = method(cal, y_prob[rows])
                out = out or tuple(np.empty_like(y_prob) for _ in values)
                for target, value in zip(out, values, strict=False):
                    target[rows] = value
        return out

    def _validate_state(self) -> None:
        FieldSlots.validate(self.field_values_, self.field_slots_)
        cals = self.field_calibrators_
        n_slots = int(np.max(self.field_slots_, initial=-1)) + 1
        if len(cals) != n_slots:
            raise ValueError(
                f"model data field state.field_calibrators_ must hold one calibrator per slot of state.field_slots_ "
                f"({n_slots}); got {len(cals)}"
            )

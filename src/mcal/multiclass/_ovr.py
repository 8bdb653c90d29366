"""One-vs-rest: any binary mcal calibrator per class, with the class probabilities renormalized."""

from __future__ import annotations

import inspect
import warnings
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.base import clone

from mcal._base import BaseCalibrator
from mcal._constraints import StrOptions
from mcal._persistence import nested_state, nested_tensors, restore_nested
from mcal._registry import METHODS, get_method, method_outcome
from mcal.multiclass._base import MulticlassCalibrator

#: The FutureWarning of the string form, deprecated in mcal 0.2 and removed in 0.3.
METHOD_DEPRECATED = (
    "OneVsRestCalibrator(method=..., method_params=...) is deprecated since mcal 0.2 and will be removed in 0.3; "
    "pass the binary calibrator itself, e.g. OneVsRestCalibrator(mcal.PlattScaling()) for method='platt', or "
    "OneVsRestCalibrator(mcal.MCGrad(**method_params)) for method='mcgrad'"
)


def _check_binary(name: str, calibrator: Any) -> None:
    """The rule of ``calibrator``: None or a binary mcal calibrator (probabilities of two classes)."""
    if calibrator is None:
        return
    if not isinstance(calibrator, BaseCalibrator):
        raise TypeError(f"{name} must be a binary mcal calibrator or None; got {type(calibrator).__name__}")
    if calibrator.outcome != "classification":
        raise ValueError(f"{name} must be a binary calibrator (outcome 'classification'); got "
                         f"{type(calibrator).__name__} (outcome {calibrator.outcome!r})")  # fmt: skip


def _check_method_params(name: str, params: Any) -> None:
    """The rule of ``method_params``: None or a dict (of the binary calibrator's parameters, which it judges)."""
    if params is not None and not isinstance(params, dict):
        raise TypeError(f"{name} must be a dict or None; got {type(params).__name__}")


class OneVsRestCalibrator(MulticlassCalibrator):
    """One-vs-rest calibration (Zadrozny and Elkan 2002): a binary calibrator per class, then renormalization.

    Class j's calibrator maps ``p_j`` to ``P(y = j)``, fitted on the labels ``1[y = j]``; the k calibrated
    probabilities of a row are divided by their sum. A row whose k calibrated probabilities are all 0 keeps
    its input probabilities.

    Parameters
    ----------
    calibrator : BaseCalibrator or None, default=None
        An unfitted binary mcal calibrator (e.g. :class:`mcal.MCGrad`, :class:`mcal.PlattScaling`), cloned for each
        class; feature-aware ones (``uses_features = True``) receive ``X``, the others ignore it. None:
        :class:`mcal.IsotonicCalibration`, or the class that ``method`` names.
    method : str or None, default=None
        Deprecated since 0.2 (warns ``FutureWarning`` in :meth:`fit`; removed in 0.3): a binary method of
        ``mcal fit --method`` (e.g. "isotonic", "platt", "mcgrad"), instead of ``calibrator``.
    method_params : dict or None, default=None
        Deprecated with ``method``: keyword arguments of that method's class.
    input : {"probability", "logit"}, default="probability"
        What ``y_prob`` holds (logits pass through a softmax first).

    Attributes
    ----------
    calibrators_ : list of BaseCalibrator
        The fitted binary calibrator of each class, in column order.
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int

    Raises
    ------
    ValueError
        From :meth:`fit`: ``calibrator`` of :mod:`mcal.multiclass` or :mod:`mcal.regression`, ``method`` that is
        not a binary method, ``calibrator`` and ``method`` both given, ``method_params`` without ``method``, a class
        whose calibrator cannot be fitted (the message names its column), or invalid scores, labels or weights.
    TypeError
        From :meth:`fit`: ``calibrator`` that is not an mcal calibrator, or ``method_params`` that is not a dict or
        holds a parameter that the method's class does not take.

    Notes
    -----
    *Changed in 0.2*: the binary calibrator is passed as an instance, as :class:`mcal.CalibratedClassifier` and
    :class:`mcal.PerFieldCalibrator` take theirs; ``method="mcgrad", method_params={...}`` becomes
    ``calibrator=mcal.MCGrad(...)``. Model files written with ``method`` still load (and predict without a warning).

    References
    ----------
    .. [1] Zadrozny and Elkan, "Transforming classifier scores into accurate multiclass probability estimates",
       KDD 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from mcal import PlattScaling
    >>> p = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.5, 0.4, 0.1]] * 3)
    >>> cal = OneVsRestCalibrator(PlattScaling()).fit(p, [0, 1, 2, 1] * 3)
    >>> np.allclose(cal.predict(p).sum(axis=1), 1.0)
    True
    """

    uses_features: ClassVar[bool] = True
    _state_attrs: ClassVar[tuple[str, ...]] = ("classes_", "n_classes_")
    _extra_state_keys: ClassVar[tuple[str, ...]] = ("calibrators",)
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **MulticlassCalibrator._parameter_constraints,
        "calibrator": _check_binary,
        "method": [None, StrOptions(*(name for name in METHODS if method_outcome(name) == "classification"))],
        "method_params": _check_method_params,
    }

    def __init__(
        self,
        calibrator: BaseCalibrator | None = None,
        *,
        method: str | None = None,
        method_params: dict[str, Any] | None = None,
        input: str = "probability",
    ) -> None:
        self.calibrator = calibrator
        self.method = method
        self.method_params = method_params
        self.input = input

    def _check_param_relations(self) -> None:
        if self.calibrator is not None and self.method is not None:
            raise ValueError(f"calibrator and method must not both be given (method is deprecated: pass calibrator "
                             f"only); got {type(self.calibrator).__name__} and {self.method!r}")  # fmt: skip
        if self.method is None and self.method_params is not None:
            raise ValueError("method_params must be None without method (set the parameters on calibrator); got "
                             f"{sorted(self.method_params)}")  # fmt: skip

    def _template(self) -> BaseCalibrator:
        """The unfitted binary calibrator that each class gets a clone of."""
        if self.calibrator is not None:
            return self.calibrator
        if self.method is None:
            return get_method("isotonic")()
        cls = get_method(self.method)
        unknown = sorted(set(self.method_params or {}) - set(inspect.signature(cls.__init__).parameters))
        if unknown:
            raise TypeError(f"method_params must hold parameters of {self.method} ({cls.__name__}); got {unknown}")
        return cls(**(self.method_params or {}))

    def _fit(self, z, y, sample_weight, X) -> None:
        if self.method is not None:
            warnings.warn(METHOD_DEPRECATED, FutureWarning, stacklevel=3)
        template = self._template()
        p = np.exp(z)
        calibrators = []
        for j in range(z.shape[1]):
            cal = clone(template)
            try:
                cal.fit(p[:, j], (y == j).astype(np.float64), X=X if cal.uses_features else None,
                        sample_weight=sample_weight)  # fmt: skip
            except ValueError as exc:
                raise ValueError(
                    f"the {type(cal).__name__} calibrator of class column {j} could not be fitted: {exc}"
                ) from exc
            calibrators.append(cal)
        self.calibrators_ = calibrators

    def _predict(self, z, X) -> NDArray[np.float64]:
        p = np.exp(z)
        q = np.column_stack([cal.predict(p[:, j], X=X if cal.uses_features else None)
                             for j, cal in enumerate(self.calibrators_)])  # fmt: skip
        total = q.sum(axis=1, keepdims=True)
        empty = total[:, 0] <= 0.0
        q[empty], total[empty] = p[empty], p[empty].sum(axis=1, keepdims=True)
        return q / total

    def _extra_state(self) -> dict[str, Any]:
        return {"calibrators": nested_state(self.calibrators_)}

    def _get_tensors(self) -> dict[str, NDArray]:
        return nested_tensors(self.calibrators_)

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        expected = type(self._template()).__name__
        self.calibrators_ = restore_nested(state.get("calibrators"), tensors, "state.calibrators", expected=expected,
                                           count=self.n_classes_)  # fmt: skip

    def _validate_state(self) -> None:
        if self.classes_.shape != (self.n_classes_,):
            raise ValueError(f"model data field state.classes_ must have shape ({self.n_classes_},)")

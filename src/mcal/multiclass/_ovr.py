"""One-vs-rest: any binary mcal calibrator per class, with the class probabilities renormalized."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from mcal._constraints import StrOptions
from mcal._registry import METHODS, class_by_name, get_method, method_outcome
from mcal.multiclass._base import MulticlassCalibrator


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
    method : str, default="isotonic"
        A binary method of ``mcal fit --method`` (e.g. "isotonic", "platt", "beta", "histogram", "venn-abers",
        "mcgrad"); feature-aware ones receive ``X``, the others ignore it.
    method_params : dict or None, default=None
        Keyword arguments of that method's class.
    input : {"probability", "logit"}, default="probability"
        What ``y_prob`` holds (logits pass through a softmax first).

    Attributes
    ----------
    calibrators_ : list of BaseCalibrator
        The fitted binary calibrator of each class, in column order.
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int

    References
    ----------
    .. [1] Zadrozny and Elkan, "Transforming classifier scores into accurate multiclass probability estimates",
       KDD 2002.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.5, 0.4, 0.1]] * 3)
    >>> cal = OneVsRestCalibrator(method="platt").fit(p, [0, 1, 2, 1] * 3)
    >>> np.allclose(cal.predict(p).sum(axis=1), 1.0)
    True
    """

    uses_features: ClassVar[bool] = True
    _state_attrs: ClassVar[tuple[str, ...]] = ("classes_", "n_classes_")
    _extra_state_keys: ClassVar[tuple[str, ...]] = ("calibrators",)
    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **MulticlassCalibrator._parameter_constraints,
        "method": StrOptions(*(name for name in METHODS if method_outcome(name) == "classification")),
        "method_params": _check_method_params,
    }

    def __init__(self, *, method: str = "isotonic", method_params: dict[str, Any] | None = None,
                 input: str = "probability") -> None:  # fmt: skip
        self.method = method
        self.method_params = method_params
        self.input = input

    def _fit(self, z, y, sample_weight, X) -> None:
        cls = get_method(self.method)
        unknown = sorted(set(self.method_params or {}) - set(inspect.signature(cls.__init__).parameters))
        if unknown:
            raise TypeError(f"method_params must hold parameters of {self.method} ({cls.__name__}); got {unknown}")
        p = np.exp(z)
        calibrators = []
        for j in range(z.shape[1]):
            cal = cls(**(self.method_params or {}))
            try:
                cal.fit(p[:, j], (y == j).astype(np.float64), X=X if cls.uses_features else None,
                        sample_weight=sample_weight)  # fmt: skip
            except ValueError as exc:
                raise ValueError(
                    f"the {self.method} calibrator of class column {j} could not be fitted: {exc}"
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
        return {"calibrators": [cal.to_dict() for cal in self.calibrators_]}

    def _get_tensors(self) -> dict[str, NDArray]:
        return {f"{j}/{k}": v for j, cal in enumerate(self.calibrators_) for k, v in cal._get_tensors().items()}

    def _restore_extra_state(self, state: dict[str, Any], tensors: dict[str, NDArray]) -> None:
        data = state.get("calibrators")
        if not isinstance(data, list) or len(data) != self.n_classes_:
            raise ValueError(f"model data field state.calibrators must list {self.n_classes_} calibrators")
        expected = get_method(self.method).__name__
        calibrators = []
        for j, entry in enumerate(data):
            if not isinstance(entry, dict) or entry.get("class") != expected:
                raise ValueError(f"model data field state.calibrators[{j}] must describe a {expected}")
            own = {k.partition("/")[2]: v for k, v in tensors.items() if k.partition("/")[0] == str(j)}
            calibrators.append(class_by_name(expected).from_dict(entry, tensors=own))
        self.calibrators_ = calibrators

    def _validate_state(self) -> None:
        super()._validate_state()
        if self.classes_.shape != (self.n_classes_,):
            raise ValueError(f"model data field state.classes_ must have shape ({self.n_classes_},)")

"""The input rules of calibrators for k classes: ``fit(y_prob, y, ...)`` on an (n, k) matrix, ``predict`` to one."""

from __future__ import annotations

import numbers
import sys
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import log_softmax

from mcal._base import BaseCalibrator, FitInputs
from mcal._constraints import Interval, StrOptions
from mcal._persistence.state import Array
from mcal._validation import (
    FIT_SWAP,
    check_class_labels,
    check_class_scores,
    check_consistent,
    check_sample_weight,
    swap_hint,
)

if sys.version_info >= (3, 11):
    from typing import Self
else:  # pragma: no cover
    from typing_extensions import Self

#: Probabilities are clipped to this before their log is taken (a row may hold exact zeros).
PROB_FLOOR = 1e-12
#: The kinds of score matrix a multiclass calibrator takes.
INPUTS = ("probability", "logit")


class MulticlassCalibrator(BaseCalibrator):
    """Base of the calibrators for k classes: a learned map from an (n, k) score matrix to (n, k) probabilities.

    ``fit`` validates the scores (probabilities whose rows sum to 1, or logits with ``input="logit"``), the labels
    (integers ``0 .. k - 1`` or exactly k class names, sorted order = columns) and the weights once, and hands
    subclasses the log-probabilities ``z`` (or the logits as given, where ``_raw_logits``), the label codes and the
    weights through ``_fit(z, codes, sample_weight, X)``; ``_predict(z, X)`` returns probabilities.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class of each column.
    n_classes_ : int
        Number of classes k.
    """

    #: The rules of the classes, which every k-class calibrator's state holds (subclasses add theirs).
    _state_constraints: ClassVar[dict[str, Any]] = {
        "classes_": Array(None, "class labels"),
        "n_classes_": Interval(numbers.Integral, 2, None),
    }
    _parameter_constraints: ClassVar[dict[str, Any]] = {"input": StrOptions(*INPUTS)}

    outcome: ClassVar[str] = "multiclass"
    #: Whether ``_fit``/``_predict`` see logits as given (``input="logit"``) rather than their log-softmax: maps
    #: that are not invariant to adding a constant to a row (vector and matrix scaling) act on the logits given.
    _raw_logits: ClassVar[bool] = False

    def fit(self, y_prob: ArrayLike, y: ArrayLike, *, X: Any = None, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the calibration map.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples, n_classes)
            Probabilities (rows summing to 1) or, with ``input="logit"``, logits; ``n_classes >= 2``.
        y : array-like of shape (n_samples,)
            Labels: integers ``0 .. n_classes - 1`` naming the column, or exactly ``n_classes`` class names.
        X : array-like or DataFrame of shape (n_samples, n_features), default=None
            Features; only for calibrators that read them (:class:`~mcal.multiclass.MulticlassMCGrad`).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, not all zero; weight k is equivalent to k copies of the row.

        Returns
        -------
        self : object
            The fitted calibrator.

        Raises
        ------
        ValueError
            On scores that are not an (n, k >= 2) matrix of finite numbers (probabilities: in [0, 1] with rows
            summing to 1, and no column that is 0 on every row), labels that are not classes or of one class only
            (among the rows of positive weight), mismatched lengths, invalid weights, a parameter that
            breaks its rule, or ``X`` given to a calibrator that reads no features. When ``y_prob`` is 1-D and
            ``y`` 2-D, the message asks whether the two were passed in the wrong order.
        TypeError
            If an input is not array-like or a parameter has the wrong type.
        """
        return self._fit_checked(y_prob, y, X, sample_weight)

    def _check_fit_inputs(self, y_prob: ArrayLike, y: ArrayLike, sample_weight: Any) -> FitInputs:
        """The (n, k) scores as log-probabilities, the labels as codes (``classes_`` learned), and the weights."""
        with swap_hint(y, y_prob, FIT_SWAP):
            z = self._log_scores(y_prob)
        if self.input == "probability":
            never = np.flatnonzero(z.max(axis=0) <= np.log(PROB_FLOOR))
            if never.size:
                raise ValueError(
                    f"y_prob must give every class a positive probability on some row; got column(s) "
                    f"{never[:5].tolist()} at 0 on every row (a class the model never predicts cannot be calibrated "
                    "from its scores; drop the column or pass logits with input='logit')"
                )
        codes, classes = check_class_labels(y, z.shape[1], "y")
        check_consistent(y_prob=z, y=codes)
        w = check_sample_weight(sample_weight, z.shape[0])
        seen = np.unique(codes[w > 0])
        if seen.size < 2:  # the likelihood would push every probability to that class, T or a bias to its bound
            raise ValueError(f"y must contain at least two classes (with positive weight); got only class "
                             f"{classes[seen[0]].item()!r} of the {z.shape[1]}")  # fmt: skip
        return FitInputs(z, codes, w, {"classes_": classes, "n_classes_": int(z.shape[1])})

    def predict(self, y_prob: ArrayLike, *, X: Any = None) -> NDArray[np.floating]:
        """Return calibrated class probabilities.

        Parameters
        ----------
        y_prob : array-like of shape (n_samples, n_classes)
            Scores of the kind and number of columns seen at fit.
        X : array-like or DataFrame of shape (n_samples, n_features), default=None
            Features, as at fit.

        Returns
        -------
        y_calibrated : ndarray of shape (n_samples, n_classes)
            Probabilities, rows summing to 1; float32 if ``y_prob`` is float32, else float64.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        ValueError
            On invalid scores, a different number of columns than at fit, or invalid features.
        """
        return self._checked_predict(y_prob, X, self._predict)

    def _check_predict_scores(self, y_prob: ArrayLike) -> NDArray[np.float64]:
        """The (n, k) scores as log-probabilities (or logits), with the k columns seen at fit."""
        z = self._log_scores(y_prob)
        if z.shape[1] != self.n_classes_:
            raise ValueError(f"y_prob must have {self.n_classes_} columns (one per class, as at fit); got {z.shape[1]}")
        return z

    def _log_scores(self, y_prob: ArrayLike) -> NDArray[np.float64]:
        """Log-probabilities of the scores (``log`` of probabilities floored at :data:`PROB_FLOOR`, ``log_softmax``
        of logits), or the logits as given where ``_raw_logits``."""
        s = check_class_scores(y_prob, logits=self.input == "logit")
        if self.input == "logit":
            return s if self._raw_logits else log_softmax(s, axis=1)
        return np.log(np.maximum(s, PROB_FLOOR))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.one_d_array = False
        tags.input_tags.two_d_array = True
        return tags

"""A scikit-learn classifier whose probabilities pass through an mcal calibrator."""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import train_test_split
from sklearn.utils import get_tags
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from mcal._base import BaseCalibrator
from mcal._constraints import Interval, check_params
from mcal._features.table import is_table, take_rows
from mcal._validation import as_1d, check_sample_weight


def _check_classifier(name: str, estimator: Any) -> None:
    if not hasattr(estimator, "predict_proba"):  # None included
        raise TypeError(f"{name} must be a classifier with predict_proba; got {type(estimator).__name__}")


def _check_calibrator(name: str, calibrator: Any) -> None:
    if not isinstance(calibrator, BaseCalibrator):
        raise TypeError(f"{name} must be an mcal calibrator or None; got {type(calibrator).__name__}")


class CalibratedClassifier(ClassifierMixin, BaseEstimator):
    """A binary classifier followed by a calibrator, usable anywhere scikit-learn expects a classifier.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None
        The base model (required: None raises in :meth:`fit`). Cloned and fitted on part of the data unless
        ``prefit=True``.
    calibrator : BaseCalibrator or None, default=None
        Any mcal calibrator (cloned); :class:`mcal.IsotonicCalibration` when None. Feature-aware calibrators
        (``uses_features = True``) receive the same ``X`` as the estimator.
    prefit : bool, default=False
        If True, ``estimator`` is already fitted and all of the data passed to :meth:`fit` calibrates it.
    calibration_fraction : float in (0, 1), default=0.3
        Fraction of the rows held out (stratified by label) to fit the calibrator when ``prefit=False``.
    random_state : int or None, default=None
        Seed of the split.

    Attributes
    ----------
    estimator_ : classifier
        The fitted base model.
    calibrator_ : BaseCalibrator
        The fitted calibrator.
    classes_ : ndarray of shape (2,)
        The two class labels, sorted; the second is the positive class.
    n_features_in_ : int
        Number of features seen by the base model's ``fit`` (copied from ``estimator_``, when it has it).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names seen by the base model's ``fit``, when ``X`` was a DataFrame with string column names.

    Raises
    ------
    ValueError
        From :meth:`fit`: ``calibration_fraction`` outside (0, 1), ``y`` that is None, complex, missing-valued or
        not of exactly two classes, or a prefit ``estimator`` fitted on other labels.
    TypeError
        From :meth:`fit`: ``estimator`` without ``predict_proba``, ``calibrator`` that is not an mcal calibrator or
        None, ``prefit`` that is not a bool, ``calibration_fraction`` that is not a real number, or sparse ``X``
        with a calibrator that uses features.

    See Also
    --------
    sklearn.calibration.CalibratedClassifierCV : scikit-learn's own, with cross-validated calibration.

    Notes
    -----
    With ``prefit=False`` the rows are split once (stratified by label, seeded by ``random_state``): the base model
    is fitted on one part and the calibrator on the other, and each row's ``sample_weight`` travels with it. A
    weight of k is therefore not the same as k copies of the row: the weighted row lands wholly on one side of the
    split, while its copies are split independently (and the split sizes follow the row count). With
    ``prefit=True`` nothing is split, and an integer weight k gives exactly the model of k copies.

    :meth:`predict` is ``classes_[argmax(predict_proba(X))]``: a calibrated probability of exactly 0.5 predicts
    ``classes_[0]``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    >>> clf = CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)
    >>> clf.classes_.tolist(), clf.predict(X[:2]).shape
    ([0, 1], (2,))
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "estimator": _check_classifier,
        "calibrator": [None, _check_calibrator],
        "prefit": "boolean",
        "calibration_fraction": Interval(numbers.Real, 0, 1, closed="neither", rule="in (0, 1)"),
        "random_state": "no_validation",  # scikit-learn's train_test_split judges it
    }

    def __init__(
        self,
        estimator: Any = None,
        calibrator: BaseCalibrator | None = None,
        *,
        prefit: bool = False,
        calibration_fraction: float = 0.3,
        random_state: int | None = None,
    ) -> None:
        self.estimator = estimator
        self.calibrator = calibrator
        self.prefit = prefit
        self.calibration_fraction = calibration_fraction
        self.random_state = random_state

    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None) -> CalibratedClassifier:
        """Fit the base model (unless prefit) and the calibrator on held-out rows.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features of the base model.
        y : array-like of shape (n_samples,)
            Labels with exactly two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the base model's and the calibrator's ``fit``.

        Returns
        -------
        self : CalibratedClassifier

        Raises
        ------
        ValueError
            If ``y`` is None, holds complex numbers, missing or infinite values, or does not have exactly two classes
            (scikit-learn's "Only binary classification is supported." for a multiclass or continuous target),
            ``X`` and ``y`` differ in length, ``sample_weight`` is invalid or leaves positive weight on one class
            only in the calibration split (or, with ``prefit=True``, in all rows), a parameter breaks its rule (see
            Parameters), or a prefit estimator was not fitted on the labels of ``y``.
        TypeError
            If a parameter has the wrong type (see Parameters), ``y`` or ``sample_weight`` is not array-like (a
            string, or a scalar weight), or ``X`` is sparse and the calibrator uses features.

        Warns
        -----
        DataConversionWarning
            If ``y`` is a column vector of shape (n_samples, 1), as scikit-learn's classifiers warn; it is raveled.
        """
        check_params(self._parameter_constraints, self)
        from mcal.nonparametric import IsotonicCalibration

        cal = clone(self.calibrator) if self.calibrator is not None else IsotonicCalibration()
        X_features = _calibrator_X(cal, X)
        y_arr = _labels(y, type(self).__name__)
        if pd.isna(y_arr).any():
            raise ValueError(f"y must not contain missing values; got {int(pd.isna(y_arr).sum())}")
        if y_arr.dtype.kind == "f" and np.isinf(y_arr).any():  # before type_of_target, which casts them to int
            raise ValueError(f"y must not contain infinite values; got {int(np.isinf(y_arr).sum())}")
        check_consistent_length(X, y_arr)
        self.classes_ = np.unique(y_arr)
        if self.classes_.size != 2:
            k, kind = self.classes_.size, type_of_target(y_arr)
            shown = "continuous values" if kind == "continuous" else f"{k} class{'es' if k > 1 else ''}"
            sklearn_says = (
                ""
                if kind == "binary"
                # scikit-learn's sentence, which its tooling matches
                else (f" Only binary classification is supported. The type of the target is {kind}.")
            )
            raise ValueError(
                f"y must have exactly two classes (binary classification only); got {shown}: "
                f"{self.classes_[:5].tolist()}.{sklearn_says}"
            )
        y01 = (y_arr == self.classes_[1]).astype(np.float64)
        w = None if sample_weight is None else check_sample_weight(sample_weight, y01.size)
        idx = np.arange(y01.size)
        if self.prefit:
            check_is_fitted(self.estimator)
            self.estimator_, cal_idx = self.estimator, idx
            if not set(self.classes_.tolist()) <= set(np.asarray(self.estimator_.classes_).tolist()):
                raise ValueError(
                    f"y must hold only the classes the prefit estimator was fitted on "
                    f"{np.asarray(self.estimator_.classes_).tolist()}; got {self.classes_.tolist()}"
                )
        else:
            fit_idx, cal_idx = train_test_split(
                idx, test_size=self.calibration_fraction, stratify=y01, random_state=self.random_state
            )
            kwargs = {} if w is None else {"sample_weight": w[fit_idx]}
            self.estimator_ = clone(self.estimator).fit(take_rows(X, fit_idx), y_arr[fit_idx], **kwargs)
        if w is not None:
            self._check_weighted_classes(y01[cal_idx], w[cal_idx])
        cal.fit(
            self._positive_proba(take_rows(X, cal_idx)),
            y01[cal_idx],
            X=None if X_features is None else take_rows(X_features, cal_idx),
            sample_weight=None if w is None else w[cal_idx],
        )
        self.calibrator_ = cal
        for name in ("n_features_in_", "feature_names_in_"):  # those of an earlier fit are not kept
            if hasattr(self.estimator_, name):
                setattr(self, name, getattr(self.estimator_, name))
            else:
                self.__dict__.pop(name, None)
        return self

    def _check_weighted_classes(self, y01: NDArray[np.float64], w: NDArray[np.float64]) -> None:
        """Refuse calibration rows whose positive weight is on one class only (``y`` itself has both), which the
        calibrator would report as labels with a single class."""
        positive = [int(np.count_nonzero((y01 == k) & (w > 0))) for k in (0.0, 1.0)]
        if all(positive):
            return
        split = (f"the calibration split (calibration_fraction={self.calibration_fraction!r}, "
                 f"random_state={self.random_state!r})" if not self.prefit else "the rows (prefit=True)")  # fmt: skip
        counts = "; ".join(f"class {c!r}: {int(np.count_nonzero(y01 == k))} rows, {n} with positive weight"
                           for c, k, n in zip(self.classes_.tolist(), (0.0, 1.0), positive, strict=False))  # fmt: skip
        raise ValueError(
            f"sample_weight must leave positive weight on both classes in {split} for the calibrator; "
            f"got positive weight on one class only ({counts})"
        )

    def _positive_proba(self, X: Any) -> NDArray[np.float64]:
        proba = self.estimator_.predict_proba(X)
        col = list(self.estimator_.classes_).index(self.classes_[1])
        return np.asarray(proba[:, col], dtype=np.float64)

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """Calibrated class probabilities.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``; the second is the calibrated P(y = classes_[1]).

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        """
        check_is_fitted(self, "calibrator_")
        q = self.calibrator_.predict(self._positive_proba(X), X=_calibrator_X(self.calibrator_, X))
        return np.column_stack([1.0 - q, q])

    def predict(self, X: Any) -> NDArray:
        """Predicted class: the most probable under :meth:`predict_proba`, ``classes_[0]`` at a tie (exactly 0.5).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        """
        check_is_fitted(self, "calibrator_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        if self.estimator is not None:  # what X may hold is what the base model (and a feature calibrator) accept
            base = get_tags(self.estimator).input_tags
            dense_only = self.calibrator is not None and self.calibrator.uses_features
            tags.input_tags.sparse = base.sparse and not dense_only
            tags.input_tags.allow_nan = base.allow_nan and not dense_only
        return tags


def _labels(y: ArrayLike, owner: str) -> NDArray:
    """``y`` as a 1-D array, raising and warning with the phrases that scikit-learn's tooling matches."""
    if y is None:
        raise ValueError(
            f"y must be array-like of shape (n_samples,); got None ({owner} requires y to be passed, "
            f"but the target y is None)"
        )
    if isinstance(y, (str, bytes)):
        return as_1d(y, "y")  # raises its TypeError
    arr = y if isinstance(y, (pd.Series, pd.DataFrame)) else np.asarray(y)
    if arr.ndim == 2:  # a column vector: DataConversionWarning and ravel, as scikit-learn does
        arr = column_or_1d(arr, warn=True)
    if np.iscomplexobj(arr):
        raise ValueError(f"y must hold real numbers; got dtype {arr.dtype} (Complex data not supported)")
    return as_1d(arr, "y")


def _calibrator_X(calibrator: BaseCalibrator, X: Any) -> Any:
    """The ``X`` a calibrator receives: None unless it uses features, which must then be a DataFrame or an array."""
    if not calibrator.uses_features:
        return None
    if scipy.sparse.issparse(X):
        raise TypeError(
            f"X must be dense (a DataFrame or an array) for {type(calibrator).__name__}, a calibrator "
            f"that uses features; got sparse {type(X).__name__}; pass X.toarray()"
        )
    return X if is_table(X) else np.asarray(X)

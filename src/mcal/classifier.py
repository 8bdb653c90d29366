"""A scikit-learn classifier whose probabilities pass through an mcal calibrator."""

from __future__ import annotations

import numbers
import re
import warnings
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.utils import get_tags
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from mcal._base import BaseCalibrator
from mcal._constraints import Interval, check_params
from mcal._features.table import collect, is_table, take_rows
from mcal._persistence import nested_state, nested_tensors, restore_nested
from mcal._persistence.codec import decode_value, encode_value
from mcal._validation import CalibrationWarning, as_1d, check_sample_weight, warn


def _check_classifier(name: str, estimator: Any) -> None:
    if not hasattr(estimator, "predict_proba"):  # None included
        raise TypeError(f"{name} must be a classifier with predict_proba; got {type(estimator).__name__}")


def _check_calibrator(name: str, calibrator: Any) -> None:
    if not isinstance(calibrator, BaseCalibrator):
        raise TypeError(f"{name} must be an mcal calibrator or None; got {type(calibrator).__name__}")


class CalibratedClassifier(ClassifierMixin, BaseEstimator):
    """A classifier followed by a calibrator, usable anywhere scikit-learn expects a classifier.

    Binary labels go through a binary calibrator (one probability per row); labels of k > 2 classes (or any labels
    with a calibrator of :mod:`mcal.multiclass`) go through a calibrator of the k-column probability matrix.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``, default=None
        The base model (required: None raises in :meth:`fit`). Cloned and fitted on part of the data unless
        ``prefit=True``.
    calibrator : BaseCalibrator or None, default=None
        Any mcal calibrator (cloned); binary ones take two classes only, those of :mod:`mcal.multiclass` any
        number. When None: :class:`mcal.IsotonicCalibration` for two classes, and for more
        :class:`mcal.multiclass.MulticlassTemperatureScaling`, which fits one parameter (it cannot over-fit a small
        calibration fold), keeps every row's most probable class (accuracy unchanged) and is scikit-learn's
        ``CalibratedClassifierCV(method="temperature")``. Feature-aware calibrators (``uses_features = True``)
        receive the same ``X`` as the estimator.
    prefit : bool, default=False
        If True, ``estimator`` is already fitted and all of the data passed to :meth:`fit` calibrates it.
    cv : int >= 2 or None, default=5
        Cross-fitting when ``prefit=False``: the rows are cut into ``cv`` stratified folds, and each fold's
        calibration rows are scored by a base model fitted on the other folds. None: one stratified split instead,
        ``calibration_fraction`` of the rows calibrating a base model fitted on the rest.
    ensemble : bool, default=True
        With ``cv``: True keeps the ``cv`` (base model, calibrator) pairs and averages their calibrated
        probabilities, as scikit-learn's ``CalibratedClassifierCV(ensemble=True)``; False fits one calibrator on
        the out-of-fold scores and the base model on all rows (``ensemble=False`` there). Why these defaults:
        ``benchmarks/results/calibrated_classifier.md``.
    calibration_fraction : float in (0, 1), default=0.3
        Fraction of the rows held out (stratified by label) to fit the calibrator when ``cv=None``.
    random_state : int or None, default=None
        Seed of the folds (shuffled) or of the split.

    Attributes
    ----------
    estimators_ : list of classifier
        The fitted base models: ``cv`` of them with ``ensemble=True``, else one.
    calibrators_ : list of BaseCalibrator
        The fitted calibrator of each base model in ``estimators_``.
    estimator_ : classifier
        ``estimators_[0]``; the only base model unless ``ensemble=True``.
    calibrator_ : BaseCalibrator
        ``calibrators_[0]``.
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted (scikit-learn's order, the columns of :meth:`predict_proba`); with two classes
        the second is the positive class.
    n_features_in_ : int
        Number of features seen by the base model's ``fit`` (copied from ``estimator_``, when it has it).
    feature_names_in_ : ndarray of shape (n_features,)
        Column names seen by the base model's ``fit``, when ``X`` was a DataFrame with string column names.

    Raises
    ------
    ValueError
        From :meth:`fit`: ``calibration_fraction`` outside (0, 1), ``cv`` below 2 or fewer than 2 rows of a class
        with ``cv``, ``y`` that is None, complex, missing-valued, continuous or of one class, ``y`` of more than two
        classes with a binary calibrator, or a prefit ``estimator`` fitted on other labels.
    TypeError
        From :meth:`fit`: ``estimator`` without ``predict_proba``, ``calibrator`` that is not an mcal calibrator or
        None, ``prefit`` or ``ensemble`` that is not a bool, ``cv`` that is not an integer or None, ``calibration_fraction`` that is not a real number, or sparse ``X``
        with a calibrator that uses features.

    See Also
    --------
    sklearn.calibration.CalibratedClassifierCV : scikit-learn's own, with cross-validated calibration.

    Notes
    -----
    With ``prefit=False`` no row calibrates a base model that was fitted on it: the calibrator learns how the base
    model errs on rows it has not seen. Cross-fitting (``cv``) uses every row for both, where the single split
    (``cv=None``) gives the base model only ``1 - calibration_fraction`` of them, which is why the split
    can lose more log loss than calibration wins back. Each row's ``sample_weight`` travels with it: a weight of k
    is therefore not the same as k copies of the row, which folds and splits separate. With ``prefit=True``
    nothing is split, and an integer weight k gives exactly the model of k copies. A prefit estimator with a
    calibrator for k classes keeps the estimator's classes, some of which ``y`` may lack.

    :meth:`predict` is ``classes_[argmax(predict_proba(X))]``: a calibrated probability of exactly 0.5 predicts
    ``classes_[0]``.

    Model files: ``mcal.save(clf, path)`` writes one JSON file (no pickle) of the parameters, the classes and every
    fitted calibrator, whose average :meth:`predict_proba` takes, but not the base estimators, scikit-learn models
    that JSON cannot hold: keep ``estimators_`` in a format of their own (e.g. skops) and give them back,
    ``mcal.load(path, estimators=clf.estimators_)``, one per calibrator in the order of ``estimators_`` (``cv``
    of them with ``ensemble=True``). The loaded classifier predicts as the saved one; :meth:`from_dict` refuses
    estimators of another number, class, classes or features than those saved, but cannot tell two fitted
    models of one class apart (keep their order).

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
    >>> import mcal, tempfile, pathlib
    >>> path = mcal.save(clf, pathlib.Path(tempfile.mkdtemp()) / "clf.json")  # the 5 calibrators and their average
    >>> back = mcal.load(path, estimators=clf.estimators_)  # around the 5 fitted base models
    >>> np.array_equal(back.predict_proba(X), clf.predict_proba(X))
    True
    """

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        "estimator": _check_classifier,
        "calibrator": [None, _check_calibrator],
        "prefit": "boolean",
        "cv": [None, Interval(numbers.Integral, 2, None, closed="left")],
        "ensemble": "boolean",
        "calibration_fraction": Interval(numbers.Real, 0, 1, closed="neither", rule="in (0, 1)"),
        "random_state": "no_validation",  # scikit-learn's train_test_split judges it
    }

    def __init__(
        self,
        estimator: Any = None,
        calibrator: BaseCalibrator | None = None,
        *,
        prefit: bool = False,
        cv: int | None = 5,
        ensemble: bool = True,
        calibration_fraction: float = 0.3,
        random_state: int | None = None,
    ) -> None:
        self.estimator = estimator
        self.calibrator = calibrator
        self.prefit = prefit
        self.cv = cv
        self.ensemble = ensemble
        self.calibration_fraction = calibration_fraction
        self.random_state = random_state

    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None) -> CalibratedClassifier:
        """Fit the base model (unless prefit) and the calibrator on held-out rows.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features of the base model.
        y : array-like of shape (n_samples,)
            Class labels, at least two classes (exactly two with a binary calibrator).
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the base model's and the calibrator's ``fit``.

        Returns
        -------
        self : CalibratedClassifier

        Raises
        ------
        ValueError
            If ``y`` is None, holds complex numbers, missing or infinite values, is continuous or of one class, or
            has more than two classes with a binary calibrator (scikit-learn's "Only binary classification is
            supported."),
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
        X = collect(X)  # a lazy frame's rows: the base model and the calibrator read them all
        y_arr = _labels(y, type(self).__name__)
        if pd.isna(y_arr).any():
            raise ValueError(f"y must not contain missing values; got {int(pd.isna(y_arr).sum())}")
        if y_arr.dtype.kind == "f" and np.isinf(y_arr).any():  # before type_of_target, which casts them to int
            raise ValueError(f"y must not contain infinite values; got {int(np.isinf(y_arr).sum())}")
        check_consistent_length(X, y_arr)
        self.classes_ = np.unique(y_arr)
        cal = self._calibrator(y_arr)
        X_features = _calibrator_X(cal, X)
        codes = np.searchsorted(self.classes_, y_arr)
        w = None if sample_weight is None else check_sample_weight(sample_weight, codes.size)
        idx = np.arange(codes.size)
        if self.prefit:
            check_is_fitted(self.estimator)
            if not set(self.classes_.tolist()) <= set(np.asarray(self.estimator.classes_).tolist()):
                raise ValueError(
                    f"y must hold only the classes the prefit estimator was fitted on "
                    f"{np.asarray(self.estimator.classes_).tolist()}; got {self.classes_.tolist()}"
                )
            if self._multiclass:  # the calibrator reads every column the estimator gives, some classes maybe unseen
                self.classes_ = np.unique(np.asarray(self.estimator.classes_))
                codes = np.searchsorted(self.classes_, y_arr)
            pairs = [(self.estimator, idx, None)]
        elif self.cv is None:
            fit_idx, cal_idx = train_test_split(
                idx, test_size=self.calibration_fraction, stratify=codes, random_state=self.random_state
            )
            pairs = [(self._fit_base(X, y_arr, w, fit_idx), cal_idx, None)]
        else:
            pairs = self._cross_fit(X, y_arr, codes, w)
        estimators, calibrators = [], []
        for base, cal_idx, scores in pairs:
            if w is not None and not self._multiclass:
                self._check_weighted_classes(codes[cal_idx].astype(np.float64), w[cal_idx])
            fitted = clone(cal).fit(
                self._scores(base, take_rows(X, cal_idx)) if scores is None else scores,
                codes[cal_idx] if self._multiclass else codes[cal_idx].astype(np.float64),
                X=None if X_features is None else take_rows(X_features, cal_idx),
                sample_weight=None if w is None else w[cal_idx],
            )
            estimators.append(base)
            calibrators.append(fitted)
        self._set_fitted(estimators, calibrators)
        return self

    def _set_fitted(self, estimators: list[Any], calibrators: list[BaseCalibrator]) -> None:
        """Set the fitted attributes of the (base model, calibrator) pairs, after a fit or a model file."""
        self.estimators_, self.calibrators_ = estimators, calibrators
        self.estimator_, self.calibrator_ = estimators[0], calibrators[0]
        for name in _FEATURE_ATTRS:  # those of an earlier fit are not kept
            if hasattr(self.estimator_, name):
                setattr(self, name, getattr(self.estimator_, name))
            else:
                self.__dict__.pop(name, None)

    def _calibrator(self, y: NDArray) -> BaseCalibrator:
        """The unfitted calibrator for the classes of ``y`` (set in ``classes_``), and whether it takes the k-column
        score matrix (``_multiclass``): a multiclass calibrator, or the default for more than two classes (of
        ``y``, or of a prefit estimator)."""
        from mcal.multiclass import MulticlassTemperatureScaling
        from mcal.nonparametric import IsotonicCalibration

        k, kind = self.classes_.size, type_of_target(y)
        if k < 2 or (k > 2 and kind == "continuous"):  # two values are two classes, whatever they are
            shown = "continuous values" if k > 2 else f"{k} class"
            raise ValueError(f"y must have at least two classes of labels; got {shown}: {self.classes_[:5].tolist()}")
        known = len(getattr(self.estimator, "classes_", ())) if self.prefit else 0  # a prefit model's classes
        default = IsotonicCalibration() if max(k, known) == 2 else MulticlassTemperatureScaling()
        cal = clone(self.calibrator) if self.calibrator is not None else default
        self._multiclass = _takes_classes(cal)
        if k > 2 and not self._multiclass:
            raise ValueError(  # ends with scikit-learn's sentence, which its tooling matches
                f"y must have exactly two classes for the binary calibrator {type(cal).__name__} (pass a calibrator "
                f"of mcal.multiclass, or None, for more); got {k} classes: {self.classes_[:5].tolist()}. Only binary "
                f"classification is supported. The type of the target is {kind}."
            )
        return cal

    def _scores(self, estimator: Any, X: Any) -> NDArray[np.float64]:
        """What the calibrator reads: P(y = classes_[1]), or with a multiclass calibrator the columns of every
        class of ``classes_``, in that order."""
        proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
        known = np.asarray(estimator.classes_).tolist()
        unknown = [c for c in self.classes_.tolist() if c not in known]
        if unknown:  # a frozen or already-fitted base model that never saw a class of y
            raise ValueError(f"y must hold only classes the estimator predicts {known}; got {unknown[:5]}")
        columns = [known.index(c) for c in self.classes_]
        return proba[:, columns] if self._multiclass else proba[:, columns[1]]

    def _fit_base(self, X: Any, y: NDArray, w: NDArray | None, rows: NDArray[np.intp]) -> Any:
        kwargs = {} if w is None else {"sample_weight": w[rows]}
        return clone(self.estimator).fit(take_rows(X, rows), y[rows], **kwargs)

    def _cross_fit(self, X: Any, y: NDArray, codes: NDArray, w: NDArray | None) -> list[tuple[Any, NDArray, Any]]:
        """(base model, calibration rows, their scores or None) of each fold, or the one pair of out-of-fold scores
        and a base model fitted on all rows (``ensemble=False``)."""
        rarer = int(np.bincount(codes, minlength=self.classes_.size).min())
        assert self.cv is not None  # cv=None takes the single split of _fit_split, not cross-fitting
        n_folds = min(self.cv, rarer)
        if n_folds < 2:
            raise ValueError(f"cv needs at least 2 rows of each class (one per fold); got {rarer} of the rarest class")
        if n_folds < self.cv:
            warn(f"cv={self.cv} exceeds the {rarer} rows of the rarest class; cross-fitting on {n_folds} folds, so "
                 "that every fold holds every class")  # fmt: skip
        folds = StratifiedKFold(n_folds, shuffle=True, random_state=self.random_state).split(
            np.zeros(codes.size), codes
        )
        pairs = [(self._fit_base(X, y, w, fit_idx), cal_idx, None) for fit_idx, cal_idx in folds]
        if self.ensemble:
            return pairs
        scores = np.empty((codes.size, self.classes_.size) if self._multiclass else codes.size)
        for base, cal_idx, _ in pairs:
            scores[cal_idx] = self._scores(base, take_rows(X, cal_idx))
        return [(self._fit_base(X, y, w, np.arange(codes.size)), np.arange(codes.size), scores)]

    def _check_weighted_classes(self, y01: NDArray[np.float64], w: NDArray[np.float64]) -> None:
        """Refuse calibration rows whose positive weight is on one class only (``y`` itself has both), which the
        calibrator would report as labels with a single class."""
        positive = [int(np.count_nonzero((y01 == k) & (w > 0))) for k in (0.0, 1.0)]
        if all(positive):
            return
        if self.prefit:
            split = "the rows (prefit=True)"
        elif self.cv is None:
            split = (f"the calibration split (calibration_fraction={self.calibration_fraction!r}, "
                     f"random_state={self.random_state!r})")  # fmt: skip
        else:
            split = f"a calibration fold (cv={self.cv!r}, random_state={self.random_state!r})"
        counts = "; ".join(f"class {c!r}: {int(np.count_nonzero(y01 == k))} rows, {n} with positive weight"
                           for c, k, n in zip(self.classes_.tolist(), (0.0, 1.0), positive, strict=False))  # fmt: skip
        raise ValueError(
            f"sample_weight must leave positive weight on both classes in {split} for the calibrator; "
            f"got positive weight on one class only ({counts})"
        )

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """Calibrated class probabilities.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features, as taken by the base estimator.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``, rows summing to 1; with two classes and a binary calibrator the
            second is the calibrated P(y = classes_[1]).

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        """
        check_is_fitted(self, "calibrators_")
        X = collect(X)
        with warnings.catch_warnings(record=True) as caught:  # each cross-fitted calibrator warns alike: once
            warnings.simplefilter("always")
            q = np.mean([cal.predict(self._scores(base, X), X=_calibrator_X(cal, X))
                         for base, cal in zip(self.estimators_, self.calibrators_, strict=True)], axis=0)  # fmt: skip
        _warn_once(caught, len(self.calibrators_))
        return q if self._multiclass else np.column_stack([1.0 - q, q])

    def predict(self, X: Any) -> NDArray:
        """Predicted class: the most probable under :meth:`predict_proba`, ``classes_[0]`` at a tie (exactly 0.5).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features, as taken by the base estimator.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        """
        check_is_fitted(self, "calibrators_")
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    # -- model files ---------------------------------------------------------------------------------------------
    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "calibrators_")

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dict of the parameters but ``estimator``, the classes and the fitted calibrators.

        What :func:`mcal.save` writes; the base estimators are not in it (their class names are, for the checks of
        :meth:`from_dict`).

        Returns
        -------
        data : dict
            ``{"class": "CalibratedClassifier", "params": dict, "state": dict}``.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit`.
        TypeError
            If a parameter cannot be stored in a model file (e.g. a ``random_state`` that is not an integer).
        """
        check_is_fitted(self, "calibrators_")
        params = {}
        for name, value in self.get_params(deep=False).items():
            try:
                params[name] = encode_value(value) if name != "estimator" else None
            except TypeError as exc:
                raise TypeError(f"parameter {name} must be storable in a model file (None, bool, numbers, "
                                f"strings or an mcal calibrator); {exc}") from exc  # fmt: skip
        del params["estimator"]  # the caller's own model, given back to load
        state = {
            "classes_": encode_value(self.classes_),
            "calibrators": nested_state(self.calibrators_),
            "estimator_types": [type(e).__name__ for e in self.estimators_],
        }
        state.update({name: encode_value(getattr(self, name)) for name in _FEATURE_ATTRS if hasattr(self, name)})
        return {"class": type(self).__name__, "params": params, "state": state}

    def _get_tensors(self) -> dict[str, NDArray]:
        """The network weights of the calibrators (MCNet's), for the safetensors file beside the JSON."""
        return nested_tensors(self.calibrators_)

    @classmethod
    def from_dict(cls, data: dict[str, Any], tensors: dict[str, NDArray] | None = None, *,
                  estimators: Any) -> CalibratedClassifier:  # fmt: skip
        """Rebuild a fitted classifier from :meth:`to_dict` output around its fitted base estimators.

        Parameters
        ----------
        data : dict
            As returned by :meth:`to_dict`.
        tensors : dict of str to ndarray, default=None
            The weights of network calibrators, as :func:`mcal.load` reads them.
        estimators : classifier or list of classifiers
            The fitted base estimators, ``estimators_`` at save, in that order: one per calibrator (a single one
            may be passed alone). The first becomes the ``estimator`` parameter.

        Returns
        -------
        model : CalibratedClassifier
            Predicting as the classifier saved, when given its estimators.

        Raises
        ------
        TypeError
            If an entry of ``estimators`` has no ``predict_proba``.
        NotFittedError
            If an entry of ``estimators`` is not fitted.
        ValueError
            If ``data`` is malformed, or ``estimators`` do not match it: another number than the calibrators, or an
            estimator of another class, other classes or other features (count or names) than the one saved.
        """
        estimators = cls._check_estimators(estimators)
        if not isinstance(data, dict) or data.get("class") != cls.__name__:
            got = data.get("class") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"model data must describe a {cls.__name__}; got {got!r}")
        params, state = data.get("params"), data.get("state")
        if not isinstance(params, dict) or not isinstance(state, dict):
            raise ValueError("model data must hold a 'params' dict and a 'state' dict (a fitted CalibratedClassifier)")
        unknown = sorted(set(params) - (set(cls().get_params(deep=False)) - {"estimator"}))
        unknown += sorted(set(state) - {"classes_", "calibrators", "estimator_types", *_FEATURE_ATTRS})
        if unknown:
            raise ValueError(f"model data has entries that {cls.__name__}.to_dict does not write: {unknown}")
        model = cls(estimators[0], **{k: decode_value(v, f"params.{k}") for k, v in params.items()})
        try:
            check_params(cls._parameter_constraints, model)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"model data holds invalid parameters for {cls.__name__}: {exc}") from exc
        expected = None if model.calibrator is None else type(model.calibrator).__name__
        calibrators = restore_nested(state.get("calibrators"), tensors or {}, "state.calibrators", expected=expected)
        model.classes_ = decode_value(state.get("classes_"), "state.classes_")
        model._multiclass = _takes_classes(calibrators[0])
        model._check_saved(calibrators)
        model._check_attached(estimators, len(calibrators), state)
        model._set_fitted(estimators, calibrators)
        return model

    @staticmethod
    def _check_estimators(estimators: Any) -> list[Any]:
        """``estimators`` as a non-empty list of fitted classifiers with ``predict_proba`` (see :meth:`from_dict`)."""
        listed = list(estimators) if isinstance(estimators, (list, tuple)) else [estimators]
        if not listed:
            raise TypeError("estimators must hold the fitted base estimator(s) of the model file; got an empty list")
        for i, estimator in enumerate(listed):
            _check_classifier(f"estimators[{i}]", estimator)
            try:
                check_is_fitted(estimator)
            except NotFittedError as exc:
                raise NotFittedError(f"estimators[{i}] must be fitted (the base estimator the model file's calibrator "
                                     f"was fitted on); got an unfitted {type(estimator).__name__}") from exc  # fmt: skip
        return listed

    def _check_saved(self, calibrators: list[BaseCalibrator]) -> None:
        """Raise ``ValueError`` unless the restored classes and calibrators are those a fit gives."""
        k = self.classes_.size if isinstance(self.classes_, np.ndarray) and self.classes_.ndim == 1 else 0
        if k < 2 or np.unique(self.classes_).size != k:
            raise ValueError("model data field state.classes_ must be a 1-D array of at least 2 distinct classes")
        if (not self._multiclass and k != 2) or any(getattr(c, "n_classes_", k) != k for c in calibrators):
            raise ValueError(f"model data field state.calibrators must calibrate the {k} classes of state.classes_")
        folds = self.cv if self.ensemble and self.cv is not None and not self.prefit else 1
        if not (min(folds, 2) <= len(calibrators) <= folds):  # cross-fitting may use fewer folds than cv
            rule = "1 calibrator" if folds == 1 else f"2 to {folds} calibrators (one per fold)"
            raise ValueError(f"model data field state.calibrators must hold {rule}; got {len(calibrators)}")

    def _check_attached(self, estimators: list[Any], n: int, state: dict[str, Any]) -> None:
        """Raise ``ValueError`` unless ``estimators`` match the ``n`` estimators saved: number, class, classes,
        features."""
        types = state.get("estimator_types")
        if not isinstance(types, list) or len(types) != n or not all(isinstance(t, str) for t in types):
            raise ValueError(f"model data field state.estimator_types must name the class of each of {n} estimators")
        if len(estimators) != n:
            raise ValueError(f"estimators must hold the {n} fitted base estimator(s) of the model file, one per "
                             f"calibrator (estimators_ at save, in that order); got {len(estimators)}")  # fmt: skip
        saved = {name: decode_value(state[name], f"state.{name}") for name in _FEATURE_ATTRS if name in state}
        for i, (estimator, kind) in enumerate(zip(estimators, types, strict=True)):
            if type(estimator).__name__ != kind:
                raise ValueError(f"estimators[{i}] must be a {kind}, as estimators_[{i}] was at save; got "
                                 f"{type(estimator).__name__}")  # fmt: skip
            known = np.asarray(estimator.classes_).tolist()
            if not set(self.classes_.tolist()) <= set(known):
                raise ValueError(f"estimators[{i}] must predict the classes {self.classes_.tolist()} of the model "
                                 f"file; got {known}")  # fmt: skip
            for name, value in saved.items():
                if not np.array_equal(np.asarray(getattr(estimator, name, value)), np.asarray(value)):
                    raise ValueError(f"estimators[{i}] must have the {name} of the model file, {_shown(value)}; "
                                     f"got {_shown(getattr(estimator, name))}")  # fmt: skip

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the default calibrator and those of mcal.multiclass take k classes; a binary calibrator takes two
        tags.classifier_tags.multi_class = self.calibrator is None or _takes_classes(self.calibrator)
        if self.estimator is not None:  # what X may hold is what the base model (and a feature calibrator) accept
            base = get_tags(self.estimator).input_tags
            dense_only = self.calibrator is not None and self.calibrator.uses_features
            tags.input_tags.sparse = base.sparse and not dense_only
            tags.input_tags.allow_nan = base.allow_nan and not dense_only
        return tags


#: The fitted attributes copied from the (first) base estimator, and checked against it when loaded.
_FEATURE_ATTRS = ("n_features_in_", "feature_names_in_")


def _shown(value: Any) -> str:
    return str(np.asarray(value).tolist())[:200]


def _takes_classes(calibrator: Any) -> bool:
    from mcal.multiclass import MulticlassCalibrator

    return isinstance(calibrator, MulticlassCalibrator)


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


def _warn_once(caught: list[warnings.WarningMessage], n_calibrators: int) -> None:
    """Issue again the warnings ``caught`` while ``n_calibrators`` cross-fitted calibrators predicted, each kind
    once: warnings that differ only in their counts and quoted values (the unseen categories of each calibrator's
    fold) are one kind, issued as the first calibrator's with a note of how many warned."""
    kinds: dict[tuple[type, str], list[warnings.WarningMessage]] = {}
    for k, record in enumerate(caught):
        template = re.sub(r"\d[\d,.]*|'[^']*'", "", str(record.message)) if n_calibrators > 1 else str(k)
        kinds.setdefault((record.category, template), []).append(record)
    for (category, _), records in kinds.items():
        message = str(records[0].message)
        if len(records) > 1:
            message += (f" (warned by {len(records)} of the {n_calibrators} cross-fitted calibrators, each fitted "
                        "on its own fold; the counts are the first's)")  # fmt: skip
        if category is CalibrationWarning:
            warn(message)
        else:
            warnings.warn(message, category, stacklevel=3)

"""CalibratedClassifier: a scikit-learn classifier with an mcal calibrator on top."""

import importlib.util
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from scipy.special import expit
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import DataConversionWarning, NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

from mcal import (
    HKRR,
    CalibratedClassifier,
    CalibrationWarning,
    HistogramBinning,
    IsotonicCalibration,
    MCGrad,
    PlattScaling,
)
from mcal.metrics import log_loss

#: Small instances covering each path of the wrapper: a sparse-capable base with the default isotonic calibrator,
#: a dense-only base with Platt scaling, a NaN-accepting base (allow_nan forwarded), and, where lightgbm is
#: installed, a calibrator that uses the features (dense only).
_CHECKED = [
    CalibratedClassifier(LogisticRegression()),
    CalibratedClassifier(GaussianNB(), PlattScaling()),
    CalibratedClassifier(DecisionTreeClassifier(max_depth=3, random_state=0), HistogramBinning(n_bins=5)),
]
if importlib.util.find_spec("lightgbm") is not None:
    _CHECKED.append(
        CalibratedClassifier(
            LogisticRegression(),
            MCGrad(max_rounds=2, n_estimators=3, min_child_samples=2, early_stopping=None, n_jobs=1),
        )
    )

_HOLDOUT_WEIGHTS = (
    "prefit=False cuts the rows at random into folds (or a split) that fit the base model and folds that fit the "
    "calibrator: a row of weight k lands wholly in one fold, while its k copies are spread independently (and the "
    "fold sizes follow the row count), so weight k is not k copies; with prefit=True it is "
    "(test_prefit_sample_weight_k_equals_k_copies)"
)


def _expected_failed_checks(estimator):
    if estimator.prefit:
        return {}
    return {
        "check_sample_weight_equivalence_on_dense_data": _HOLDOUT_WEIGHTS,
        "check_sample_weight_equivalence_on_sparse_data": _HOLDOUT_WEIGHTS,
    }


@pytest.fixture
def data(rng):
    X = rng.normal(size=(4000, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=4000) > 0, "yes", "no")
    return X, y


def test_calibration_improves_an_overconfident_model(data):
    X, y = data
    X_cal = np.hstack([X, X, X])  # naive Bayes on repeated features is over-confident
    Xtr, Xte, ytr, yte = X_cal[:3000], X_cal[3000:], y[:3000], y[3000:]
    raw = GaussianNB().fit(Xtr, ytr).predict_proba(Xte)[:, 1]
    clf = CalibratedClassifier(GaussianNB(), PlattScaling(), random_state=0).fit(Xtr, ytr)
    cal = clf.predict_proba(Xte)[:, 1]
    y01 = (yte == "yes").astype(float)
    assert log_loss(y01, cal) < log_loss(y01, raw) - 0.02


def test_probabilities_sum_to_one_and_classes_are_the_labels(data):
    X, y = data
    clf = CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y)
    proba = clf.predict_proba(X[:50])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert clf.classes_.tolist() == ["no", "yes"]
    assert set(clf.predict(X[:50])) <= {"no", "yes"}


def test_prefit_uses_the_given_model_unchanged(data):
    X, y = data
    base = LogisticRegression().fit(X[:2000], y[:2000])
    clf = CalibratedClassifier(base, prefit=True).fit(X[2000:], y[2000:])
    assert clf.estimator_ is base


def test_works_inside_cross_validation(data):
    X, y = data
    scores = cross_val_score(
        CalibratedClassifier(LogisticRegression(), random_state=0), X, y, cv=3, scoring="neg_log_loss"
    )
    assert np.all(scores > -0.7)


def test_bad_arguments_raise(data):
    X, y = data
    with pytest.raises(ValueError, match="two classes"):
        CalibratedClassifier(LogisticRegression(), PlattScaling()).fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="calibration_fraction"):
        CalibratedClassifier(LogisticRegression(), calibration_fraction=1.5).fit(X, y)
    with pytest.raises(NotFittedError):
        CalibratedClassifier(LogisticRegression()).predict_proba(X)


def test_n_features_in_and_feature_names_in_are_the_base_models(data):
    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    clf = CalibratedClassifier(LogisticRegression(), random_state=0).fit(frame, y)
    assert clf.n_features_in_ == 4
    assert clf.feature_names_in_.tolist() == ["a", "b", "c", "d"]


def test_predict_before_fit_raises_not_fitted_error(data):
    X, _ = data
    with pytest.raises(NotFittedError):
        CalibratedClassifier(LogisticRegression()).predict(X)


def test_x_and_y_of_different_lengths_raise_instead_of_dropping_rows(data):
    X, y = data
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[4000, 3999\]"):
        CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y[:-1])


def test_sample_weight_of_the_wrong_length_raises_naming_it(data):
    X, y = data
    with pytest.raises(ValueError, match=r"sample_weight must have length 4000 \(n_samples\); got 5"):
        CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y, sample_weight=np.ones(5))


def test_missing_labels_raise_instead_of_becoming_a_class(data):
    X, y = data
    y = y.astype(object)
    y[:3] = None
    with pytest.raises(ValueError, match="y must not contain missing values; got 3"):
        CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y)


def test_infinite_labels_raise_without_a_cast_warning(data):
    X, y = data
    y = (y == y[0]).astype(float)
    y[:2] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # type_of_target warned 'invalid value encountered in cast' first
        with pytest.raises(ValueError, match="y must not contain infinite values; got 2"):
            CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y)


def test_continuous_labels_raise_naming_them_continuous(data):
    X, _ = data
    with pytest.raises(ValueError, match="two classes .*got continuous values"):
        CalibratedClassifier(LogisticRegression()).fit(X, np.linspace(0.0, 1.0, len(X)))


def test_prefit_estimator_fitted_on_other_labels_raises_naming_them(data):
    X, y = data
    base = LogisticRegression().fit(X, np.where(y == "yes", 1, 0))
    with pytest.raises(ValueError, match=r"classes the prefit estimator was fitted on \[0, 1\]; got \['no', 'yes'\]"):
        CalibratedClassifier(base, prefit=True).fit(X, y)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        # the estimator and calibrator of a wrong kind were a ValueError; a prefit that is not a bool ("no") was
        # taken as True
        ({"estimator": object()}, "estimator must be a classifier with predict_proba; got object$"),
        ({"estimator": None}, "estimator must be a classifier with predict_proba; got NoneType$"),
        ({"calibrator": "isotonic"}, "calibrator must be an mcal calibrator or None; got str$"),
        ({"prefit": "no"}, "prefit must be True or False; got 'no' of type str$"),
        ({"prefit": 0}, "prefit must be True or False; got 0 of type int$"),
    ],
)
def test_arguments_of_a_bad_type_raise_a_type_error_naming_them(data, params, match):
    X, y = data
    with pytest.raises(TypeError, match=match):
        CalibratedClassifier(**{"estimator": LogisticRegression(), **params}).fit(X, y)


def test_calibration_fraction_that_is_not_a_number_raises_a_type_error(data):
    X, y = data
    with pytest.raises(TypeError, match=r"calibration_fraction must be in \(0, 1\); got '0.3'"):
        CalibratedClassifier(LogisticRegression(), calibration_fraction="0.3").fit(X, y)


def test_sparse_features_reach_a_base_model_that_accepts_them(data):
    X, y = data
    dense = CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y).predict_proba(X[:20])
    for sparse in (scipy.sparse.csr_matrix(X), scipy.sparse.coo_array(X)):
        clf = CalibratedClassifier(LogisticRegression(), random_state=0).fit(sparse, y)
        np.testing.assert_allclose(clf.predict_proba(scipy.sparse.csr_matrix(X[:20])), dense, rtol=1e-10)


def test_tags_declare_multiclass_with_a_multiclass_calibrator_and_the_base_models_sparse_support():
    assert get_tags(CalibratedClassifier(LogisticRegression())).classifier_tags.multi_class is True
    assert get_tags(CalibratedClassifier(LogisticRegression(), PlattScaling())).classifier_tags.multi_class is False
    assert get_tags(CalibratedClassifier(LogisticRegression())).input_tags.sparse is True
    assert get_tags(CalibratedClassifier(GaussianNB())).input_tags.sparse is False


def test_tags_allow_nan_and_sparse_only_where_the_base_model_and_a_feature_calibrator_accept_them():
    assert get_tags(CalibratedClassifier(DecisionTreeClassifier())).input_tags.allow_nan is True
    assert get_tags(CalibratedClassifier(LogisticRegression())).input_tags.allow_nan is False
    with_features = get_tags(CalibratedClassifier(DecisionTreeClassifier(), HKRR())).input_tags
    assert with_features.allow_nan is False and with_features.sparse is False


def test_nested_calibrator_parameters_are_set_and_the_given_calibrator_stays_unfitted(data):
    X, y = data
    template = CalibratedClassifier(LogisticRegression(), HistogramBinning(), random_state=0)
    clf = clone(template).set_params(calibrator__n_bins=3).fit(X, y)
    assert clf.calibrator_.bin_values_.size == 3
    assert template.calibrator.n_bins == 20 and not hasattr(clf.calibrator, "bin_values_")


def test_prefit_sample_weight_k_equals_k_copies(data):
    X, y = data
    base = LogisticRegression().fit(X[:2000], y[:2000])
    Xc, yc = X[2000:], y[2000:]
    k = np.random.default_rng(3).integers(0, 4, len(yc))
    weighted = CalibratedClassifier(base, prefit=True).fit(Xc, yc, sample_weight=k.astype(float))
    rep = np.repeat(np.arange(len(yc)), k)
    copies = CalibratedClassifier(base, prefit=True).fit(Xc[rep], yc[rep])
    np.testing.assert_allclose(weighted.predict_proba(X[:200]), copies.predict_proba(X[:200]), atol=1e-12)


@parametrize_with_checks(_CHECKED, expected_failed_checks=_expected_failed_checks, xfail_strict=True)
def test_scikit_learn_estimator_checks_pass_except_the_declared_holdout_weight_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # lightgbm's and scikit-learn's deprecation notices
        check(estimator)


def test_holdout_sample_weights_travel_with_their_rows_of_the_seeded_stratified_split(data):
    X, y = data
    w = np.random.default_rng(3).integers(0, 4, len(y)).astype(float)
    clf = CalibratedClassifier(
        LogisticRegression(), HistogramBinning(n_bins=8), cv=None, calibration_fraction=0.25, random_state=7
    ).fit(X, y, sample_weight=w)
    y01 = (y == "yes").astype(float)
    fit, cal = train_test_split(np.arange(len(y)), test_size=0.25, stratify=y01, random_state=7)
    base = LogisticRegression().fit(X[fit], y[fit], sample_weight=w[fit])
    binning = HistogramBinning(n_bins=8).fit(base.predict_proba(X[cal])[:, 1], y01[cal], sample_weight=w[cal])
    np.testing.assert_array_equal(clf.predict_proba(X[:300])[:, 1], binning.predict(base.predict_proba(X[:300])[:, 1]))


def test_y_none_raises_a_value_error_with_scikit_learns_phrase(data):
    X, _ = data
    with pytest.raises(
        ValueError,
        match=r"y must be array-like .*got None \(CalibratedClassifier requires y to be "
        r"passed, but the target y is None\)",
    ):
        CalibratedClassifier(LogisticRegression()).fit(X, None)


def test_complex_labels_raise_a_value_error_saying_complex_data_not_supported(data):
    X, y = data
    with pytest.raises(
        ValueError,
        match=r"y must hold real numbers; got dtype complex128 \(Complex data not "
        r"supported\)",
    ):
        CalibratedClassifier(LogisticRegression()).fit(X, (y == "yes") + 1j)


def test_column_vector_y_warns_data_conversion_and_fits_as_the_1d_labels(data):
    X, y = data
    flat = CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y)
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed when a 1d array was expected"):
        column = CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y[:, None])
    np.testing.assert_array_equal(column.predict_proba(X[:100]), flat.predict_proba(X[:100]))


def test_multiclass_labels_with_a_binary_calibrator_raise_with_scikit_learns_binary_only_sentence(data):
    X, _ = data
    with pytest.raises(
        ValueError,
        match=r"got 3 classes: \[0, 1, 2\]\. Only binary classification is supported\. "
        r"The type of the target is multiclass\.",
    ):
        CalibratedClassifier(LogisticRegression(), PlattScaling()).fit(X, np.arange(len(X)) % 3)


def test_predict_is_the_argmax_of_predict_proba_and_a_tie_at_one_half_predicts_the_first_class(data):
    X, y = data
    balanced = np.where(np.arange(len(y)) % 2 == 0, "yes", "no")  # one bin of a 50% rate: every probability 0.5
    clf = CalibratedClassifier(LogisticRegression(), HistogramBinning(n_bins=1), random_state=0).fit(X, balanced)
    proba = clf.predict_proba(X[:50])
    assert np.all(proba == 0.5)
    assert clf.predict(X[:50]).tolist() == ["no"] * 50
    fitted = CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y)
    np.testing.assert_array_equal(fitted.predict(X), fitted.classes_[np.argmax(fitted.predict_proba(X), axis=1)])


def test_sparse_X_with_a_calibrator_that_uses_features_raises_before_fitting_naming_sparse(data):
    X, y = data
    groups = scipy.sparse.csr_matrix(X > 0)
    with pytest.raises(
        TypeError,
        match=r"X must be dense .* for HKRR, a calibrator that uses features; got sparse "
        r"csr_matrix; pass X.toarray\(\)",
    ):
        CalibratedClassifier(LogisticRegression(), HKRR()).fit(groups, y)


def test_zero_weights_leaving_one_class_in_the_calibration_split_raise_naming_the_split(data):
    X, y = data
    X, y = X[:200], y[:200]
    idx = np.arange(y.size)
    _, cal_idx = train_test_split(idx, test_size=0.25, stratify=(y == "yes"), random_state=3)  # the wrapper's split
    w = np.ones(y.size)
    w[cal_idx[y[cal_idx] == "no"]] = 0.0  # y has both classes; the calibration rows weigh only "yes"
    n_no, n_yes = int(np.sum(y[cal_idx] == "no")), int(np.sum(y[cal_idx] == "yes"))
    clf = CalibratedClassifier(LogisticRegression(), cv=None, calibration_fraction=0.25, random_state=3)
    with pytest.raises(ValueError, match=(
            r"sample_weight must leave positive weight on both classes in the calibration split "
            r"\(calibration_fraction=0.25, random_state=3\) for the calibrator; got positive weight on one class "
            rf"only \(class 'no': {n_no} rows, 0 with positive weight; class 'yes': {n_yes} rows, {n_yes} with "
            r"positive weight\)")):  # fmt: skip
        clf.fit(X, y, sample_weight=w)
    w[cal_idx[y[cal_idx] == "no"][0]] = 1.0  # one positive weight on each class is enough
    assert clf.fit(X, y, sample_weight=w).calibrator_ is not None


def test_prefit_zero_weights_leaving_one_class_raise_naming_the_rows(data):
    X, y = data
    model = LogisticRegression().fit(X, y)
    w = (y == "yes").astype(float)
    with pytest.raises(ValueError, match=r"positive weight on both classes in the rows \(prefit=True\)"):
        CalibratedClassifier(model, prefit=True).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("ensemble", [True, False])
def test_cross_fitting_matches_scikit_learn_on_the_same_folds(data, ensemble):
    # GaussianNB has no decision_function, so scikit-learn calibrates predict_proba as we do
    X, y = data
    ours = CalibratedClassifier(GaussianNB(), IsotonicCalibration(extremes="empirical"), cv=4, ensemble=ensemble,
                                random_state=5).fit(X, y)  # fmt: skip
    folds = StratifiedKFold(4, shuffle=True, random_state=5)
    theirs = CalibratedClassifierCV(GaussianNB(), method="isotonic", cv=folds, ensemble=ensemble).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X[:500]), theirs.predict_proba(X[:500]), atol=1e-12)
    assert len(ours.estimators_) == (4 if ensemble else 1) == len(ours.calibrators_)


def test_cross_fitting_beats_the_single_split_on_held_out_log_loss(rng):
    # a well-specified logistic model loses more from fitting on 70% of the rows than a split calibrator gains
    X = rng.normal(size=(6000, 8))
    y = (rng.random(6000) < expit(X @ rng.normal(size=8))).astype(int)
    test = slice(3000, None)
    losses = {
        cv: log_loss(y[test], CalibratedClassifier(LogisticRegression(), cv=cv, random_state=0)
                     .fit(X[:3000], y[:3000]).predict_proba(X[test])[:, 1])
        for cv in (None, 5)
    }  # fmt: skip
    assert losses[5] < losses[None]


def test_cv_larger_than_the_rarer_class_warns_and_uses_fewer_folds(data):
    X, y = data
    y = np.where(np.arange(len(y)) < 3, "yes", "no")
    with pytest.warns(CalibrationWarning, match="cv=5 exceeds the 3 rows of the rarest class"):
        clf = CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y)
    assert len(clf.calibrators_) == 3
    with pytest.raises(ValueError, match="cv needs at least 2 rows of each class"):
        CalibratedClassifier(LogisticRegression()).fit(X, np.where(np.arange(len(y)) < 1, "yes", "no"))
    with pytest.raises(ValueError, match=r"cv must be an integer >= 2.*; got 1"):
        CalibratedClassifier(LogisticRegression(), cv=1).fit(X, y)


def test_unseen_categories_warn_once_for_every_cross_fitted_calibrator():
    # issue 32: "16 categorical value(s) unseen" came once per fold from a cross-fitted CalibratedClassifier
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    n = 900
    X = pd.DataFrame({"x": rng.normal(size=n), "job": pd.Categorical(rng.choice(["admin", "tech"], n))})
    y = (rng.uniform(size=n) < expit(X["x"] + (X["job"] == "tech"))).astype(int)
    clf = CalibratedClassifier(HistGradientBoostingClassifier(max_iter=10, categorical_features="from_dtype"),
                               MCGrad(random_state=0), cv=3, ensemble=True).fit(X, y)  # fmt: skip
    new = X.head(6).assign(job=pd.Categorical(["chef", "pilot", "chef", "admin", "tech", "admin"]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proba = clf.predict_proba(new)
    messages = [str(w.message) for w in caught if issubclass(w.category, CalibrationWarning)]
    assert len(messages) == 1, messages
    assert messages[0].startswith("X has 2 categorical value(s) unseen at fit (column 'job': 2 value(s) in 3 row(s)")
    assert "warned by 3 of the 3 cross-fitted calibrators" in messages[0]
    assert caught[0].filename == __file__  # pointing at the caller, not into mcal
    assert proba.shape == (6, 2)

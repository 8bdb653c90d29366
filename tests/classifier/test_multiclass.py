"""CalibratedClassifier on labels of k > 2 classes: the multiclass calibrators of mcal.multiclass."""

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.tree import DecisionTreeClassifier

from mcal import CalibratedClassifier, PlattScaling, TemperatureScaling
from mcal.multiclass import MulticlassTemperatureScaling, OneVsRestCalibrator, VectorScaling


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 4))
    logits = X[:, :3] * np.array([2.0, -1.5, 1.0]) + rng.gumbel(size=(1500, 3))
    names = np.array(["cat", "cow", "ant"])  # sorted: ant, cat, cow
    return X, names[logits.argmax(axis=1)]


def test_classes_are_sorted_and_rows_lie_on_the_simplex(data):
    X, y = data
    clf = CalibratedClassifier(DecisionTreeClassifier(max_depth=4, random_state=0), random_state=0).fit(X, y)
    proba = clf.predict_proba(X[:200])
    assert clf.classes_.tolist() == ["ant", "cat", "cow"]
    assert proba.shape == (200, 3) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert np.array_equal(clf.predict(X[:200]), clf.classes_[proba.argmax(axis=1)])


def test_default_calibrator_for_k_classes_is_temperature_scaling(data):
    X, y = data
    clf = CalibratedClassifier(LogisticRegression(), random_state=0).fit(X, y)
    assert all(isinstance(cal, MulticlassTemperatureScaling) for cal in clf.calibrators_)
    assert len(clf.calibrators_) == 5


@pytest.mark.parametrize("ensemble", [True, False])
@pytest.mark.slow
def test_temperature_scaling_agrees_with_scikit_learn_on_the_same_folds(data, ensemble):
    """scikit-learn 1.8+ ``CalibratedClassifierCV(method="temperature")`` fits the same one-parameter map on the
    same out-of-fold scores (the same seeded StratifiedKFold); both optimize the same log loss."""
    X, y = data
    base = MLPClassifier(hidden_layer_sizes=(32,), max_iter=300, random_state=0)  # over-confident
    ours = CalibratedClassifier(base, cv=5, ensemble=ensemble, random_state=0).fit(X, y)
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    theirs = CalibratedClassifierCV(base, method="temperature", cv=folds, ensemble=ensemble).fit(X, y)
    assert ours.classes_.tolist() == theirs.classes_.tolist()
    np.testing.assert_allclose(ours.predict_proba(X[:300]), theirs.predict_proba(X[:300]), atol=1e-7)


def test_prefit_temperature_scaling_agrees_with_scikit_learn_frozen_estimator(data):
    X, y = data
    base = MLPClassifier(hidden_layer_sizes=(32,), max_iter=300, random_state=0).fit(X[:700], y[:700])
    ours = CalibratedClassifier(base, prefit=True).fit(X[700:], y[700:])
    theirs = CalibratedClassifierCV(FrozenEstimator(base), method="temperature").fit(X[700:], y[700:])
    np.testing.assert_allclose(ours.predict_proba(X[:300]), theirs.predict_proba(X[:300]), atol=1e-7)
    assert ours.calibrator_.temperature_ > 1.0  # the MLP is over-confident on rows it has not seen


def test_temperature_scaling_keeps_the_predicted_class(data):
    X, y = data
    base = LogisticRegression().fit(X[:700], y[:700])
    clf = CalibratedClassifier(base, prefit=True).fit(X[700:], y[700:])
    np.testing.assert_array_equal(clf.predict(X), base.predict(X))


def test_calibration_lowers_the_log_loss_of_an_over_fitted_model(data):
    from mcal.metrics import multiclass_log_loss

    X, y = data
    base = DecisionTreeClassifier(min_samples_leaf=3, random_state=0).fit(X[:700], y[:700])
    clf = CalibratedClassifier(base, prefit=True).fit(X[700:1100], y[700:1100])
    codes = np.searchsorted(clf.classes_, y[1100:])
    before = multiclass_log_loss(codes, base.predict_proba(X[1100:]))  # exact zeros: clipped at machine epsilon
    after = multiclass_log_loss(codes, clf.predict_proba(X[1100:]))
    assert after < before


def test_any_multiclass_calibrator_and_one_vs_rest(data):
    X, y = data
    for cal in (VectorScaling(), OneVsRestCalibrator(PlattScaling())):
        proba = CalibratedClassifier(LogisticRegression(), cal, cv=3, random_state=0).fit(X, y).predict_proba(X[:50])
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)


def test_a_binary_calibrator_with_k_classes_raises_naming_it(data):
    X, y = data
    with pytest.raises(
        ValueError,
        match=r"exactly two classes for the binary calibrator PlattScaling .*got 3 "
        r"classes: \['ant', 'cat', 'cow'\]\. Only binary classification",
    ):
        CalibratedClassifier(LogisticRegression(), PlattScaling()).fit(X, y)


def test_binary_labels_through_the_multiclass_path_equal_the_binary_temperature_scaling():
    """With two classes, softmax(log p / T) is the binary temperature scaling of the logit."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(800, 2))
    y = (X[:, 0] * 3 + rng.logistic(size=800) > 0).astype(int)
    base = LogisticRegression(C=100).fit(X[:300], y[:300])
    two = CalibratedClassifier(base, MulticlassTemperatureScaling(), prefit=True).fit(X[300:], y[300:])
    one = CalibratedClassifier(base, TemperatureScaling(), prefit=True).fit(X[300:], y[300:])
    np.testing.assert_allclose(two.predict_proba(X[:100]), one.predict_proba(X[:100]), atol=1e-4)


def test_prefit_weight_k_equals_k_copies(data):
    X, y = data
    base = LogisticRegression().fit(X[:700], y[:700])
    k = np.random.default_rng(3).integers(0, 4, 800)
    weighted = CalibratedClassifier(base, VectorScaling(), prefit=True).fit(X[700:], y[700:], sample_weight=k * 1.0)
    rep = 700 + np.repeat(np.arange(800), k)
    copies = CalibratedClassifier(base, VectorScaling(), prefit=True).fit(X[rep], y[rep])
    np.testing.assert_allclose(weighted.predict_proba(X[:100]), copies.predict_proba(X[:100]), atol=1e-6)


def test_prefit_estimator_keeps_a_class_the_calibration_rows_lack(data):
    X, y = data
    base = LogisticRegression().fit(X, y)
    keep = y[700:] != "cow"
    clf = CalibratedClassifier(base, prefit=True).fit(X[700:][keep], y[700:][keep])
    assert clf.classes_.tolist() == ["ant", "cat", "cow"] and clf.predict_proba(X[:5]).shape == (5, 3)


def test_a_frozen_estimator_without_a_class_of_y_raises_naming_it(data):
    X, y = data
    base = LogisticRegression().fit(X[:700], y[:700])
    y_cal = y[700:].copy()
    y_cal[:20] = "dog"
    clf = CalibratedClassifier(FrozenEstimator(base), MulticlassTemperatureScaling())
    with pytest.raises(ValueError, match=r"y must hold only classes the estimator predicts \['ant', 'cat', 'cow'\]; "
                       r"got \['dog'\]"):  # fmt: skip
        clf.fit(X[700:], y_cal)

"""CalibratedClassifier: a scikit-learn classifier with an mcal calibrator on top."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.naive_bayes import GaussianNB

from mcal import CalibratedClassifier, PlattScaling
from mcal.metrics import log_loss


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
    scores = cross_val_score(CalibratedClassifier(LogisticRegression(), random_state=0), X, y, cv=3, scoring="neg_log_loss")
    assert np.all(scores > -0.7)


def test_bad_arguments_raise(data):
    X, y = data
    with pytest.raises(ValueError, match="predict_proba"):
        CalibratedClassifier(object()).fit(X, y)
    with pytest.raises(ValueError, match="two classes"):
        CalibratedClassifier(LogisticRegression()).fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="calibration_fraction"):
        CalibratedClassifier(LogisticRegression(), calibration_fraction=1.5).fit(X, y)
    with pytest.raises(NotFittedError):
        CalibratedClassifier(LogisticRegression()).predict_proba(X)

"""VennAbers: the paper's one-pass fit against its definition and against the venn-abers package, validity on
calibrated data, weights, model files and bad input."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.isotonic import IsotonicRegression

import mcal
from mcal import PerFieldCalibrator, VennAbers
from mcal.metrics import ece


def _isotonic_with(p, y, w, score, label):
    """The definition: isotonic regression (ties pooled) of the labels with the test point (score, label) added
    with weight 1, evaluated at the test point; one fit per test point."""
    iso = IsotonicRegression().fit(np.append(p, score), np.append(y, label), sample_weight=np.append(w, 1.0))
    return float(iso.predict([score])[0])


def _data(rng, n, *, decimals=None):
    p = rng.uniform(0.0, 1.0, n)
    p = p if decimals is None else np.round(p, decimals)  # rounding makes ties
    return p, (rng.uniform(size=n) < p).astype(float)


@pytest.mark.parametrize("decimals", [None, 1, 2])
def test_bounds_equal_one_isotonic_fit_per_test_point(rng, decimals):
    p, y = _data(rng, 60, decimals=decimals)
    w = rng.integers(1, 4, p.size).astype(float)
    model = VennAbers().fit(p, y, sample_weight=w)
    # calibration scores (ties), scores between them, and scores below and above all of them
    tests = np.concatenate([p[:20], rng.uniform(0, 1, 20), [0.0, 1.0, p.min() / 2, (p.max() + 1) / 2]])
    p0, p1 = model.predict_interval(tests)
    np.testing.assert_allclose(p0, [_isotonic_with(p, y, w, s, 0) for s in tests], rtol=0, atol=1e-12)
    np.testing.assert_allclose(p1, [_isotonic_with(p, y, w, s, 1) for s in tests], rtol=0, atol=1e-12)


def test_hand_computed_pair_and_merge():
    # calibration labels 0, 1, 0, 1 at scores 0.1..0.4; a test point at 0.25 with label 0 gives the sequence
    # 0, 1, [0], 0, 1, pooled 0 | 1/3 | 1; with label 1: 0 | 2/3 | 1. Merged: (2/3) / (1 - 1/3 + 2/3) = 1/2.
    model = VennAbers().fit(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 1, 0, 1]))
    p0, p1 = model.predict_interval(np.array([0.25, 0.05, 0.5]))
    np.testing.assert_allclose(p0, [1 / 3, 0.0, 0.5], atol=1e-15)  # below every score p0 = 0; above, 0, 1, 0, 1, [0]
    np.testing.assert_allclose(p1, [2 / 3, 0.5, 1.0], atol=1e-15)  # [1], 0, 1, 0, 1: [1, 0] pools to 1/2
    np.testing.assert_allclose(model.predict(np.array([0.25])), [0.5], atol=1e-15)
    p0, p1 = model.predict_interval(np.linspace(0, 1, 11))
    np.testing.assert_array_equal(model.predict(np.linspace(0, 1, 11)), p1 / (1 - p0 + p1))


def test_agrees_with_the_venn_abers_package_ivap(rng):
    va = pytest.importorskip("venn_abers", reason="the venn-abers package (pip install venn-abers) is not installed")
    for decimals in (None, 2):
        p, y = _data(rng, 3000, decimals=decimals)
        tests = np.concatenate([rng.uniform(0, 1, 2000), p[:200], [0.0, 1.0]])
        reference = va.VennAbers().fit(np.column_stack([1 - p, p]), y)
        merged, pair = reference.predict_proba(np.column_stack([1 - tests, tests]))
        model = VennAbers().fit(p, y)
        p0, p1 = model.predict_interval(tests)
        np.testing.assert_allclose(p0, pair[:, 0], rtol=0, atol=1e-9)
        np.testing.assert_allclose(p1, pair[:, 1], rtol=0, atol=1e-9)
        np.testing.assert_allclose(model.predict(tests), merged[:, 1], rtol=0, atol=1e-9)


class _ScoreAsProbability(ClassifierMixin, BaseEstimator):
    """A "classifier" whose probability of class 1 is its single feature: venn-abers' CVAP on given scores
    (an estimator, since venn-abers 1.5.4 clones it)."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        s = np.asarray(X)[:, 0]
        return np.column_stack([1 - s, s])


def test_agrees_with_the_venn_abers_package_cvap(rng):
    va = pytest.importorskip("venn_abers", reason="the venn-abers package (pip install venn-abers) is not installed")
    p, y = _data(rng, 2000)
    tests = rng.uniform(0, 1, 1000)
    reference = va.VennAbersCV(_ScoreAsProbability(), inductive=False, n_splits=5, random_state=7, shuffle=True)
    reference.fit(p[:, None], y)
    merged, stacked = reference.predict_proba(tests[:, None], p0_p1_output=True)
    p0_folds, p1_folds = stacked[:, :5], stacked[:, 5:]
    model = VennAbers(n_splits=5, random_state=7).fit(p, y)
    p0, p1 = model.predict_interval(tests)
    np.testing.assert_allclose(model.predict(tests), merged[:, 1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(p0, p0_folds.min(axis=1), rtol=0, atol=1e-9)  # the envelope of the folds' pairs
    np.testing.assert_allclose(p1, p1_folds.max(axis=1), rtol=0, atol=1e-9)
    assert np.all(p0 <= model.predict(tests)) and np.all(model.predict(tests) <= p1)


def test_calibrated_data_stays_calibrated(rng):
    p_cal, y_cal = _data(rng, 5000)
    p_test, y_test = _data(rng, 50_000)
    model = VennAbers().fit(p_cal, y_cal)
    assert ece(y_test, model.predict(p_test), n_bins=10) < 0.02  # 5000 calibration rows: isotonic noise ~0.01


def test_the_probability_of_the_true_label_is_calibrated(rng):
    """Validity (Vovk and Petej 2014, Theorem 1): with p_Y the one of (p0, p1) of the true label, E[Y | p_Y] = p_Y
    over calibration sets and test points; so the label frequency lies within [mean p0, mean p1]."""
    chosen, labels, low, high = [], [], [], []
    for _ in range(3000):  # one test point per calibration set: the test points are independent
        p_cal, y_cal = _data(rng, 30)
        if y_cal.min() == y_cal.max():
            continue
        p_test, y_test = _data(rng, 1)
        p0, p1 = VennAbers().fit(p_cal, y_cal).predict_interval(p_test)
        chosen.append(np.where(y_test == 1, p1, p0))
        labels.append(y_test)
        low.append(p0)
        high.append(p1)
    p_y, y, p0, p1 = map(np.concatenate, (chosen, labels, low, high))
    assert p0.mean() < y.mean() < p1.mean()
    bins = np.minimum((p_y * 5).astype(int), 4)
    for b in range(5):
        rows = bins == b
        se = np.sqrt(np.mean(p_y[rows] * (1 - p_y[rows])) / rows.sum())
        assert abs(y[rows].mean() - p_y[rows].mean()) < 3 * se + 1e-3, b


def test_miscalibrated_scores_are_calibrated(miscalibrated):
    p, y = miscalibrated
    model = VennAbers().fit(p[:10_000], y[:10_000])
    assert ece(y[10_000:], p[10_000:]) > 0.1
    assert ece(y[10_000:], model.predict(p[10_000:])) < 0.02


def test_intervals_are_ordered_monotone_and_narrow_with_more_data(rng):
    widths = []
    for n in (200, 20_000):
        p, y = _data(rng, n)
        model = VennAbers().fit(p, y)
        s = np.linspace(0, 1, 501)
        p0, p1 = model.predict_interval(s)
        merged = model.predict(s)
        assert np.all(p0 <= merged) and np.all(merged <= p1)
        assert np.all(np.diff(p0) >= 0) and np.all(np.diff(p1) >= 0)
        widths.append(float(np.mean(p1 - p0)))
    assert widths[1] < widths[0] / 10


def test_weight_k_equals_k_copies(rng):
    p, y = _data(rng, 300, decimals=2)
    k = rng.integers(0, 4, p.size)
    k[:2] = [1, 2]
    y[:2] = [0, 1]
    tests = rng.uniform(0, 1, 200)
    weighted = VennAbers().fit(p, y, sample_weight=k.astype(float))
    copies = VennAbers().fit(np.repeat(p, k), np.repeat(y, k))
    for got, expected in zip(weighted.predict_interval(tests), copies.predict_interval(tests), strict=False):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_cvap_folds_are_reproducible_and_differ_from_ivap(rng):
    p, y = _data(rng, 1000)
    tests = rng.uniform(0, 1, 100)
    a = VennAbers(n_splits=3, random_state=0).fit(p, y).predict(tests)
    b = VennAbers(n_splits=3, random_state=0).fit(p, y).predict(tests)
    np.testing.assert_array_equal(a, b)
    assert np.max(np.abs(a - VennAbers().fit(p, y).predict(tests))) > 1e-3


@pytest.mark.parametrize("n_splits", [None, 4])
def test_save_load_reproduces_predictions_exactly(rng, tmp_path, n_splits):
    p, y = _data(rng, 800)
    model = VennAbers(n_splits=n_splits, random_state=3).fit(p, y)
    loaded = mcal.load(mcal.save(model, tmp_path / "va.json"))
    tests = rng.uniform(0, 1, 500)
    np.testing.assert_array_equal(loaded.predict(tests), model.predict(tests))
    for got, expected in zip(loaded.predict_interval(tests), model.predict_interval(tests), strict=False):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda s: s["f0_"].pop(), "f0_ must hold 1 arrays"),
        (lambda s: s["calibration_scores_"][0]["__ndarray__"].reverse(), "strictly increasing"),
        (lambda s: s["f1_"][0]["__ndarray__"].__setitem__(0, 1.0), "non-decreasing probabilities"),
    ],
)
def test_load_refuses_a_malformed_state(rng, tmp_path, rewrite_model, edit, match):
    p, y = _data(rng, 100)
    path = mcal.save(VennAbers().fit(p, y), tmp_path / "va.json")
    rewrite_model(path, lambda doc: edit(doc["model"]["state"]))
    with pytest.raises(ValueError, match=match):
        mcal.load(path)


def test_mondrian_per_field_equals_one_venn_abers_per_field_value(rng):
    p, y = _data(rng, 3000)
    field = rng.choice(["a", "b", "c"], p.size, p=[0.5, 0.49, 0.01])
    X = pd.DataFrame({"f": field})
    model = PerFieldCalibrator(VennAbers(), field="f").fit(p, y, X=X)
    low, high = model.predict_interval(p, X=X)
    for value in ("a", "b"):
        rows = field == value
        own = VennAbers().fit(p[rows], y[rows])
        np.testing.assert_array_equal(low[rows], own.predict_interval(p[rows])[0])
        np.testing.assert_array_equal(high[rows], own.predict_interval(p[rows])[1])
    rare = field == "c"  # too few rows: the global predictor
    np.testing.assert_array_equal(high[rare], VennAbers().fit(p, y).predict_interval(p[rare])[1])


def test_per_field_interval_needs_a_calibrator_with_intervals(rng):
    p, y = _data(rng, 400)
    X = pd.DataFrame({"f": np.zeros(p.size)})
    with pytest.raises(TypeError, match="predict_interval needs a nested calibrator with intervals"):
        PerFieldCalibrator(field="f").fit(p, y, X=X).predict_interval(p, X=X)


def test_float32_in_float32_out(rng):
    p, y = _data(rng, 200)
    model = VennAbers().fit(p, y)
    p0, p1 = model.predict_interval(p.astype(np.float32))
    assert p0.dtype == p1.dtype == model.predict(p.astype(np.float32)).dtype == np.float32


def test_unfitted_use_raises():
    with pytest.raises(NotFittedError):
        VennAbers().predict_interval([0.5])


@pytest.mark.parametrize(
    ("kwargs", "fit", "error", "match"),
    [
        ({}, {"y_prob": [0.1, np.nan, 0.3]}, ValueError, "y_prob"),
        ({}, {"y_prob": [0.1, 1.5, 0.3]}, ValueError, "y_prob"),
        ({}, {"y": [1, 1, 1]}, ValueError, "both classes"),
        ({}, {"y": [0, 2, 1]}, ValueError, "y"),
        ({}, {"y_prob": [[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]}, ValueError, "y_prob"),
        ({}, {"y_prob": [0.1, 0.2]}, ValueError, "same number of samples"),
        ({"n_splits": 1}, {}, ValueError, "n_splits must be None or an integer >= 2; got 1"),
        ({"n_splits": 2.0}, {}, TypeError, "n_splits must be None or an integer >= 2"),
        ({"n_splits": 3}, {}, ValueError, "n_splits must be at most the number of rows .* of either class, 1; got 3"),
        ({"random_state": -1}, {}, ValueError, "random_state"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs, fit, error, match):
    args = {"y_prob": [0.1, 0.2, 0.3], "y": [0, 1, 1]} | fit
    with pytest.raises(error, match=match):
        VennAbers(**kwargs).fit(args["y_prob"], args["y"])


def test_bad_scores_at_predict_time_raise(rng):
    model = VennAbers().fit(*_data(rng, 50))
    with pytest.raises(ValueError, match="y_prob"):
        model.predict_interval([0.2, np.inf])
    with pytest.raises(ValueError, match="X must be None"):
        model.fit([0.1, 0.9], [0, 1], X=np.zeros((2, 1)))


def test_command_line_fit_gives_the_python_model(rng, tmp_path):
    from mcal.cli import main

    p, y = _data(rng, 300)
    table = tmp_path / "t.csv"
    pd.DataFrame({"p": p, "y": y.astype(int)}).to_csv(table, index=False)
    path = tmp_path / "va.json"
    assert (
        main(
            [
                "fit",
                str(table),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                "venn-abers",
                "--param",
                "n_splits=3",
                "--random-state",
                "0",
                "--quiet",
                "-o",
                str(path),
            ]
        )
        == 0
    )
    expected = VennAbers(n_splits=3, random_state=0).fit(p, y).predict(p)
    np.testing.assert_allclose(mcal.load(path).predict(p), expected, rtol=0, atol=1e-15)


def test_pickle_round_trip_and_inputs_not_mutated(rng):
    import pickle

    p, y = _data(rng, 300)
    w = rng.uniform(0.5, 2, p.size)
    copies = p.copy(), y.copy(), w.copy()
    model = VennAbers(n_splits=2, random_state=0).fit(p, y, sample_weight=w)
    for before, after in zip(copies, (p, y, w), strict=False):
        np.testing.assert_array_equal(before, after)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(p), model.predict(p))


def test_works_as_the_calibrator_of_a_calibrated_classifier(rng):
    from sklearn.linear_model import LogisticRegression

    X = rng.normal(size=(600, 3))
    y = (rng.uniform(size=600) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    clf = mcal.CalibratedClassifier(LogisticRegression(), VennAbers()).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (600, 2) and np.allclose(proba.sum(axis=1), 1)

"""A fitted CalibratedClassifier in one model file: its calibrators and their average, around the caller's own
fitted base estimators, which the file does not hold."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

import mcal
from mcal import CalibratedClassifier, IsotonicCalibration, MCGrad, PlattScaling
from mcal.multiclass import VectorScaling

#: Same machine, same arrays: the loaded calibrators repeat the saved ones' floating work, but LightGBM and BLAS
#: may pick other kernels for another call, so the comparison allows the project's cross-route tolerance.
RTOL = 1e-12


def _data(n_classes, n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.digitize(X[:, 0] + rng.normal(size=n), [-0.5, 0.5][: n_classes - 1])
    return X, y


_MCGRAD = {"n_estimators": 5, "max_rounds": 2, "early_stopping": None, "random_state": 0, "n_jobs": 1}
CASES = {
    "cv5-ensemble": (2, {}),
    "cv5-one-calibrator": (2, {"ensemble": False}),
    "split": (2, {"cv": None}),
    "mcgrad-ensemble": (2, {"calibrator": MCGrad(**_MCGRAD)}),
    "platt-cv3": (2, {"calibrator": PlattScaling(), "cv": 3}),
    "three-classes": (3, {}),
    "three-classes-vector": (3, {"calibrator": VectorScaling()}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_fitted_classifier_reloads_around_its_estimators_and_predicts_as_before(case, tmp_path):
    n_classes, params = CASES[case]
    X, y = _data(n_classes)
    clf = CalibratedClassifier(LogisticRegression(), random_state=0, **params).fit(X, y)
    path = mcal.save(clf, tmp_path / "clf.json")
    assert [p.name for p in tmp_path.iterdir()] == ["clf.json"]  # one file: no calibrator files beside it
    loaded = mcal.load(path, estimators=clf.estimators_)
    assert type(loaded) is CalibratedClassifier and len(loaded.calibrators_) == len(clf.calibrators_)
    assert [type(c) for c in loaded.calibrators_] == [type(c) for c in clf.calibrators_]
    np.testing.assert_allclose(loaded.predict_proba(X), clf.predict_proba(X), rtol=RTOL, atol=0)
    np.testing.assert_array_equal(loaded.predict(X), clf.predict(X))
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    assert loaded.n_features_in_ == 3
    saved = {k: v for k, v in clf.get_params(deep=False).items() if k not in ("estimator", "calibrator")}
    assert {k: v for k, v in loaded.get_params(deep=False).items() if k in saved} == saved
    assert repr(loaded.calibrator) == repr(clf.calibrator)


def test_the_file_holds_one_calibrator_per_fold_and_no_estimator(tmp_path):
    X, y = _data(2)
    clf = CalibratedClassifier(GaussianNB(), random_state=0).fit(X, y)
    doc = json.loads(mcal.save(clf, tmp_path / "clf.json").read_text())
    model = doc["model"]
    assert model["class"] == "CalibratedClassifier" and "estimator" not in model["params"]
    assert model["params"]["cv"] == 5 and model["params"]["ensemble"] is True
    assert [c["class"] for c in model["state"]["calibrators"]] == ["IsotonicCalibration"] * 5
    assert model["state"]["estimator_types"] == ["GaussianNB"] * 5


def test_a_prefit_classifier_with_named_features_takes_its_one_estimator_alone(tmp_path):
    X, y = _data(2)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    base = LogisticRegression().fit(frame, y)
    clf = CalibratedClassifier(base, PlattScaling(), prefit=True).fit(frame, y)
    loaded = mcal.load(mcal.save(clf, tmp_path / "clf.json"), estimators=base)
    assert loaded.estimator is base and loaded.estimators_ == [base]
    assert list(loaded.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_allclose(loaded.predict_proba(frame), clf.predict_proba(frame), rtol=RTOL, atol=0)
    renamed = LogisticRegression().fit(frame.rename(columns={"c": "z"}), y)
    with pytest.raises(ValueError, match=r"estimators\[0\] must have the feature_names_in_ of the model file, "
                                         r"\['a', 'b', 'c'\]; got \['a', 'b', 'z'\]"):  # fmt: skip
        mcal.load(tmp_path / "clf.json", estimators=renamed)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X, y = _data(2)
    clf = CalibratedClassifier(LogisticRegression(), cv=3, random_state=0).fit(X, y)
    return clf, mcal.save(clf, tmp_path_factory.mktemp("clf") / "clf.json"), X, y


def test_loading_without_the_estimators_says_how_many_to_give(saved):
    _, path, _, _ = saved
    with pytest.raises(TypeError, match=r"estimators must be given to load .*clf.json: the file holds a "
                                        r"CalibratedClassifier's 3 calibrator\(s\) but not the fitted estimator\(s\)"
                                        r".*mcal\.load\(path, estimators=\[\.\.\.\]\)"):  # fmt: skip
        mcal.load(path)


@pytest.mark.parametrize(
    ("estimators", "error", "message"),
    [
        (lambda c, X, y: c.estimators_[:2], ValueError,
         r"estimators must hold the 3 fitted base estimator\(s\) of the model file, one per calibrator .*; got 2"),
        (lambda c, X, y: [*c.estimators_[:2], GaussianNB().fit(X, y)], ValueError,
         r"estimators\[2\] must be a LogisticRegression, as estimators_\[2\] was at save; got GaussianNB"),
        (lambda c, X, y: [LogisticRegression().fit(X[:, :2], y)] * 3, ValueError,
         r"estimators\[0\] must have the n_features_in_ of the model file, 3; got 2"),
        (lambda c, X, y: [LogisticRegression().fit(X, y + 1)] * 3, ValueError,
         r"estimators\[0\] must predict the classes \[0, 1\] of the model file; got \[1, 2\]"),
        (lambda c, X, y: [LogisticRegression()] * 3, NotFittedError,
         r"estimators\[0\] must be fitted .*; got an unfitted LogisticRegression"),
        (lambda c, X, y: [IsotonicCalibration()] * 3, TypeError,
         r"estimators\[0\] must be a classifier with predict_proba; got IsotonicCalibration"),
        (lambda c, X, y: [], TypeError, "estimators must hold the fitted base estimator"),
    ],
    ids=["too-few", "another-class", "other-features", "other-classes", "unfitted", "not-a-classifier", "empty"],
)  # fmt: skip
def test_loading_refuses_estimators_that_are_not_those_saved(saved, estimators, error, message):
    clf, path, X, y = saved
    with pytest.raises(error, match=message):
        mcal.load(path, estimators=estimators(clf, X, y))


def test_a_calibrator_file_refuses_estimators_and_an_unfitted_classifier_is_not_saved(saved, tmp_path):
    clf = saved[0]
    path = mcal.save(clf.calibrators_[0], tmp_path / "cal.json")
    with pytest.raises(TypeError, match=r"estimators must be None for .*cal.json, the file of a 'IsotonicCalibration'"):
        mcal.load(path, estimators=clf.estimators_)
    with pytest.raises(NotFittedError):
        mcal.save(CalibratedClassifier(LogisticRegression()), tmp_path / "unfitted.json")
    assert not (tmp_path / "unfitted.json").exists()
    with pytest.raises(TypeError, match="model must be an mcal calibrator or a CalibratedClassifier .*; got "
                                        "LogisticRegression"):  # fmt: skip
        mcal.save(clf.estimators_[0], tmp_path / "base.json")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m["state"]["calibrators"].append(m["state"]["calibrators"][0]),
         r"state.calibrators must hold 2 to 3 calibrators \(one per fold\); got 4"),
        (lambda m: m["state"]["calibrators"][1].update({"class": "PlattScaling"}),
         r"state.calibrators\[1\] must describe a IsotonicCalibration"),
        (lambda m: m["state"].update({"classes_": m["state"]["classes_"] | {"__ndarray__": [0, 1, 2], "shape": [3]}}),
         r"state.calibrators must calibrate the 3 classes of state.classes_"),
        (lambda m: m["params"].update({"estimator": None}), r"entries that CalibratedClassifier.to_dict does not "
                                                            r"write: \['estimator'\]"),
        (lambda m: m["params"].update({"cv": 1}), "invalid parameters for CalibratedClassifier: cv must be"),
        (lambda m: m["state"].update({"estimator_types": ["LogisticRegression"]}),
         "state.estimator_types must name the class of each of 3 estimators"),
    ],
    ids=["extra-calibrator", "mixed-classes", "classes", "estimator-param", "cv", "estimator-types"],
)  # fmt: skip
def test_a_malformed_classifier_entry_is_refused_naming_the_field(saved, edit, message):
    clf, _, _, _ = saved
    data = json.loads(json.dumps(clf.to_dict()))
    edit(data)
    with pytest.raises(ValueError, match=message):
        CalibratedClassifier.from_dict(data, estimators=clf.estimators_)


@pytest.mark.usefixtures("one_torch_thread")
def test_network_calibrators_keep_their_weights_in_one_file_beside_the_json(tmp_path):
    pytest.importorskip("torch")
    X, y = _data(2)
    X[:, 2] = np.random.default_rng(1).integers(0, 3, X.shape[0])  # the field
    cal = mcal.MCNet(field=2, n_bins=4, hidden_sizes=(8,), embedding_dim=2, n_nodes=10, max_epochs=2, batch_size=256,
                     random_state=0)  # fmt: skip
    clf = CalibratedClassifier(LogisticRegression(), cal, cv=2, random_state=0).fit(X, y)
    path = mcal.save(clf, tmp_path / "clf.json")
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".safetensors"]  # both folds' weights in one
    loaded = mcal.load(path, estimators=clf.estimators_)
    np.testing.assert_allclose(loaded.predict_proba(X), clf.predict_proba(X), rtol=RTOL, atol=0)

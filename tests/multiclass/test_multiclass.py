"""Calibrators for k classes (mcal.multiclass): invariants, agreement with scikit-learn, model files, bad input."""

import re
import warnings

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.base import clone

import mcal
from mcal._registry import MULTICLASS_METHODS, ONE_VS_REST, class_by_name
from mcal.mcgrad.engine import Part, rescale_factor
from mcal.multiclass import (
    DirichletCalibration,
    MatrixScaling,
    MCGrad,
    MulticlassMCGrad,
    MulticlassTemperatureScaling,
    OneVsRestCalibrator,
    TemperatureScaling,
    VectorScaling,
)
from mcal.multiclass import _mcgrad as multiclass_mcgrad
from mcal.multiclass._mcgrad import SoftmaxEngine, class_rescale_factors

#: Rounds small enough for weights to equal copies: LightGBM bins by row counts, so one bin per value.
TINY_MCGRAD = {"early_stopping": None, "max_rounds": 2, "n_estimators": 5, "max_leaves": 2, "min_child_samples": 0,
               "lightgbm_params": {"min_data_in_bin": 1, "max_bin": 1023}}  # fmt: skip
FAST_MCGRAD = {"n_estimators": 20, "learning_rate": 0.1, "min_child_samples": 20, "random_state": 0}


def _draw(n, k, seed, *, sharpen=1.0, bias=0.0):
    """Labels drawn from softmax(logits) (+ ``bias`` on class 1 where feature 0 is 1); scores softmax(sharpen * logits)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 3, n), rng.normal(size=n)]).astype(float)
    logits = rng.normal(size=(n, k)) * 1.5
    true = logits.copy()
    true[X[:, 0] == 1, 1] += bias
    p_true = softmax(true, axis=1)
    y = (p_true.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    return softmax(sharpen * logits, axis=1), y, X


def _all(k=3):
    return [
        MulticlassTemperatureScaling(),
        VectorScaling(),
        MatrixScaling(),
        DirichletCalibration(),
        OneVsRestCalibrator(mcal.PlattScaling()),
        MulticlassMCGrad(**FAST_MCGRAD),
        MulticlassMCGrad(**FAST_MCGRAD, rescale="per_class", rescale_input=True),
    ]


def _fx(cal, X):
    return {"X": X} if isinstance(cal, MulticlassMCGrad) else {}


def test_package_names():
    assert MCGrad is MulticlassMCGrad and TemperatureScaling is MulticlassTemperatureScaling


@pytest.mark.parametrize("cal", _all(), ids=lambda c: type(c).__name__)
def test_predictions_lie_on_the_simplex_and_survive_a_model_file(cal, tmp_path):
    p, y, X = _draw(1500, 3, 0, sharpen=2.0)
    q = cal.fit(p, y, **_fx(cal, X)).predict(p, **_fx(cal, X))
    assert q.shape == p.shape
    assert np.all(q >= 0) and np.all(q <= 1)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
    mcal.save(cal, tmp_path / "m.json")
    np.testing.assert_array_equal(mcal.load(tmp_path / "m.json").predict(p, **_fx(cal, X)), q)


def test_float32_scores_give_float32_probabilities():
    p, y, _ = _draw(500, 3, 1)
    q = MulticlassTemperatureScaling().fit(p, y).predict(p.astype(np.float32))
    assert q.dtype == np.float32


def test_temperature_is_one_on_calibrated_scores_and_recovers_a_sharpening():
    p, y, _ = _draw(40000, 4, 2)
    assert MulticlassTemperatureScaling().fit(p, y).temperature_ == pytest.approx(1.0, abs=0.04)
    p2, y2, _ = _draw(40000, 4, 3, sharpen=2.0)  # scores = softmax(2 z): temperature 2 undoes it
    assert MulticlassTemperatureScaling().fit(p2, y2).temperature_ == pytest.approx(2.0, rel=0.05)


def test_temperature_one_is_the_identity():
    p, y, _ = _draw(300, 3, 4)
    cal = MulticlassTemperatureScaling().fit(p, y)
    cal.coef_ = np.eye(3)
    np.testing.assert_allclose(cal.predict(p), p, atol=1e-12)


def test_temperature_agrees_with_scikit_learn():
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] + rng.normal(size=3000) > 0).astype(int) + (X[:, 1] > 0.5)
    model = LogisticRegression(C=100).fit(X[:1000] * 3, y[:1000])
    ref = CalibratedClassifierCV(FrozenEstimator(model), method="temperature").fit(X[1000:], y[1000:])
    ours = MulticlassTemperatureScaling().fit(model.predict_proba(X[1000:]), y[1000:])
    np.testing.assert_allclose(ours.predict(model.predict_proba(X[1000:])), ref.predict_proba(X[1000:]), atol=1e-7)
    logit = MulticlassTemperatureScaling(input="logit").fit(model.decision_function(X[1000:]), y[1000:])
    assert logit.temperature_ == pytest.approx(ours.temperature_, rel=1e-6)


def test_binary_data_through_the_multiclass_path_equals_the_binary_calibrator():
    rng = np.random.default_rng(6)
    p1 = rng.uniform(0.02, 0.98, 2000)
    y = (rng.random(2000) < p1**1.5).astype(int)
    P = np.column_stack([1 - p1, p1])
    multi = MulticlassTemperatureScaling().fit(P, y).predict(P)[:, 1]
    binary = mcal.TemperatureScaling().fit(p1, y).predict(p1)
    np.testing.assert_allclose(multi, binary, atol=1e-6)
    ovr = OneVsRestCalibrator(mcal.IsotonicCalibration()).fit(P, y).predict(P)[:, 1]
    np.testing.assert_allclose(ovr, mcal.IsotonicCalibration().fit(p1, y).predict(p1), atol=1e-12)


@pytest.mark.parametrize(
    "cal",
    [
        MulticlassTemperatureScaling(),
        VectorScaling(),
        DirichletCalibration(),
        OneVsRestCalibrator(mcal.IsotonicCalibration()),
        # with the input temperature, a split of round 2 nearly ties on these rows and the two fits pick different
        # ones (probabilities 0.01 apart); the per-class variant covers rescale_input
        MulticlassMCGrad(**TINY_MCGRAD, rescale_input=False),
        MulticlassMCGrad(**TINY_MCGRAD, rescale="per_class", rescale_input=True),
    ],
    ids=lambda c: type(c).__name__ + ("_per_class" if getattr(c, "rescale", None) == "per_class" else ""),
)
def test_weight_k_equals_k_copies(cal):
    # weights from 1 (LightGBM bins by row counts, and a row of weight 0 still counts) and fewer rows than bins
    p, y, X = _draw(300, 3, 7, sharpen=1.5)
    w = np.random.default_rng(8).integers(1, 4, 300)
    rows = np.repeat(np.arange(300), w)
    a = cal.fit(p, y, sample_weight=w, **_fx(cal, X)).predict(p, **_fx(cal, X))
    b = cal.fit(p[rows], y[rows], **_fx(cal, X[rows])).predict(p, **_fx(cal, X))
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_class_names_name_the_columns_in_sorted_order():
    p, y, _ = _draw(800, 3, 9, sharpen=2.0)
    names = np.array(["cat", "dog", "emu"])
    by_name = MulticlassTemperatureScaling().fit(p, names[y])
    assert by_name.classes_.tolist() == ["cat", "dog", "emu"]
    np.testing.assert_allclose(by_name.predict(p), MulticlassTemperatureScaling().fit(p, y).predict(p))


def test_vector_and_dirichlet_fit_at_least_as_well_as_temperature():
    p, y, _ = _draw(5000, 3, 10, sharpen=2.0)
    nll = {}
    for cal in (
        MulticlassTemperatureScaling(),
        VectorScaling(),
        DirichletCalibration(reg_off_diagonal=0, reg_intercept=0),
    ):
        q = cal.fit(p, y).predict(p)
        nll[type(cal).__name__] = -np.mean(np.log(q[np.arange(y.size), y]))
    assert nll["VectorScaling"] <= nll["MulticlassTemperatureScaling"] + 1e-9
    assert nll["DirichletCalibration"] <= nll["VectorScaling"] + 1e-9


def test_regularization_pulls_the_matrix_towards_its_diagonal():
    p, y, _ = _draw(3000, 3, 11, sharpen=1.5)
    off = 1 - np.eye(3)
    free = np.abs(MatrixScaling(reg_off_diagonal=0).fit(p, y).coef_ * off).sum()
    held = np.abs(MatrixScaling(reg_off_diagonal=100).fit(p, y).coef_ * off).sum()
    assert held < 0.2 * free


def test_mcgrad_removes_a_planted_class_bias_in_one_segment():
    p, y, X = _draw(30000, 3, 12, bias=1.0)
    seg = X[:, 0] == 1
    q = MulticlassMCGrad(random_state=0).fit(p[:20000], y[:20000], X=X[:20000]).predict(p[20000:], X=X[20000:])
    yt, st, pt = y[20000:], seg[20000:], p[20000:]
    before = abs(pt[st, 1].mean() - (yt[st] == 1).mean())
    after = abs(q[st, 1].mean() - (yt[st] == 1).mean())
    se = np.sqrt(q[st, 1].mean() * (1 - q[st, 1].mean()) / st.sum())
    assert before > 10 * se  # the planted bias is large
    assert after < 3 * se  # and gone, within sampling noise


class _PredictingEngine(SoftmaxEngine):
    """The rounds as first written: every round bins all columns again and predicts its training rows."""

    def fit_round(self, part, valid=None):
        import lightgbm as lgb

        k = part.F.shape[1]
        X = part.X if part.rows is None else part.X[part.rows]
        X[:, -k:] = part.F
        data = lgb.Dataset(X, label=part.y, init_score=part.F, categorical_feature=self.categorical, params=self.params)
        booster = lgb.train(self.params, data, num_boost_round=self.n_estimators)
        z_valid = None if valid is None else valid.F + self.predict_raw(booster, valid)
        return booster, part.F + self.predict_raw(booster, Part(X, None, None, part.F)), z_valid


@pytest.mark.parametrize("rescale", [True, "per_class"])
def test_mcgrad_rounds_read_from_lightgbm_equal_the_rounds_predicted_again(rescale, monkeypatch):
    # features binned once and training logits read from LightGBM's softmax output: the same model (the
    # early-stopping rounds differ a little: their features are binned on all rows, as in binary MCGrad)
    p, y, X = _draw(3000, 3, 15, sharpen=2.0, bias=1.0)
    fits = []
    for engine in (SoftmaxEngine, _PredictingEngine):
        monkeypatch.setattr(multiclass_mcgrad, "SoftmaxEngine", engine)
        kwargs = {**FAST_MCGRAD, "rescale": rescale, "rescale_input": True}
        fits.append(MulticlassMCGrad(**kwargs, max_rounds=3, early_stopping=None).fit(p, y, X=X))
    fast, slow = fits
    np.testing.assert_allclose(fast.rescale_factors_, slow.rescale_factors_, rtol=1e-10)
    np.testing.assert_allclose(fast.predict(p, X=X), slow.predict(p, X=X), rtol=0, atol=1e-12)


def test_class_rescale_factors_recover_planted_factors():
    rng = np.random.default_rng(16)
    z = rng.normal(size=(40000, 3)) * 1.5
    theta = np.array([2.0, 0.5, 1.0])
    p = softmax(theta * z, axis=1)
    y = (p.cumsum(axis=1) < rng.random(z.shape[0])[:, None]).sum(axis=1)
    found = class_rescale_factors(None, y, z, np.ones(y.size))
    np.testing.assert_allclose(found, theta, atol=0.06)
    scalar = rescale_factor(SoftmaxEngine({}, 1, []), y, z, np.ones(y.size))
    nll = [-np.log(softmax(t * z, axis=1)[np.arange(y.size), y]).mean() for t in (found, scalar)]
    assert nll[0] < nll[1]  # a factor per class fits at least as well as one factor


def test_mcgrad_without_rounds_returns_the_scores():
    p, y, X = _draw(500, 3, 13)
    q = MulticlassMCGrad(max_rounds=0).fit(p, y, X=X).predict(p, X=X)
    np.testing.assert_allclose(q, p, atol=1e-12)


def test_mcgrad_model_file_refuses_a_booster_of_another_class_count(tmp_path):
    p, y, X = _draw(600, 3, 14)
    cal = MulticlassMCGrad(**FAST_MCGRAD, early_stopping=None, max_rounds=1).fit(p, y, X=X)
    data = cal.to_dict()
    data["state"]["boosters"][0] = data["state"]["boosters"][0].replace("num_class=3", "num_class=4", 1)
    with pytest.raises(ValueError, match=r"num_class= holds 3 \(one output per class\)"):
        MulticlassMCGrad.from_dict(data)


@pytest.mark.parametrize(
    ("y_prob", "y", "kwargs", "message"),
    [
        ([[0.5, 0.6], [0.5, 0.5]], [0, 1], {}, r"y_prob rows must sum to 1 \(within 0.0001\); got 1 row"),
        ([[np.nan, 1.0], [0.5, 0.5]], [0, 1], {}, r"y_prob must be finite .* first in row 0"),
        ([[1.0], [1.0]], [0, 0], {}, "y_prob must have at least 2 columns"),
        ([0.2, 0.8], [0, 1], {}, r"y_prob must be 2-D of shape \(n_samples, n_classes\); got shape \(2,\)"),
        ([[1.0, 0.0], [1.0, 0.0]], [0, 1], {}, r"column\(s\) \[1\] at 0 on every row"),
        ([[0.5, 0.5]] * 3, [0, 1, 5], {}, r"y must hold integer labels 0..1 or exactly 2 class names"),
        ([[0.5, 0.5]] * 3, ["a", "b", "c"], {}, r"exactly 2 class names .*; got 3 distinct labels \['a', 'b', 'c'\]"),
        ([[0.5, 0.5], [0.5, 0.5]], [0, 1], {"input": "odds"}, "input must be 'probability' or 'logit'; got 'odds'"),
        ([[0.5, 0.5], [0.5, 0.5]], [0], {}, "inputs must have the same number of samples"),
        ([[1.2, -0.2], [0.5, 0.5]], [0, 1], {}, r"y_prob must lie in \[0, 1\]; got 1.2 at row 0, column 0"),
    ],
)
def test_bad_input_gets_a_clear_error(y_prob, y, kwargs, message):
    with pytest.raises(ValueError, match=message):
        MulticlassTemperatureScaling(**kwargs).fit(np.asarray(y_prob), y)


@pytest.mark.parametrize("cal", _all(), ids=lambda c: type(c).__name__)
def test_labels_of_one_class_are_refused_naming_y_and_that_class(cal):
    # fitted on them, temperature scaling ran to its bound T = 1e4 (uniform probabilities) and the maps with a
    # bias put all mass on the one class, silently
    p, y, X = _draw(300, 3, 14)
    names = np.array(["a", "b", "c"])[y]
    with pytest.raises(ValueError, match=r"y must contain at least two classes \(with positive weight\); got only "
                       r"class 1 of the 3"):  # fmt: skip
        clone(cal).fit(p, np.ones(300, dtype=int), **_fx(cal, X))
    with pytest.raises(ValueError, match=r"got only class 'c' of the 3"):  # the other classes weigh nothing
        clone(cal).fit(p, names, sample_weight=(names == "c").astype(float), **_fx(cal, X))


def test_predict_refuses_another_number_of_columns():
    p, y, _ = _draw(300, 3, 15)
    cal = DirichletCalibration().fit(p, y)
    with pytest.raises(ValueError, match="y_prob must have 3 columns .one per class, as at fit.; got 4"):
        cal.predict(np.full((2, 4), 0.25))


def test_one_vs_rest_fits_a_clone_of_its_calibrator_per_class_and_renormalizes():
    P, y, X = _draw(600, 3, 16)
    template = mcal.MCGrad(n_estimators=5, max_rounds=2, early_stopping=None, random_state=0, n_jobs=1)
    cal = OneVsRestCalibrator(template).fit(P, y, X=X)
    assert not template.__sklearn_is_fitted__()  # cloned, never fitted itself
    assert [type(c) for c in cal.calibrators_] == [mcal.MCGrad] * 3
    assert all(c is not template for c in cal.calibrators_)
    by_hand = np.column_stack(
        [clone(template).fit(P[:, j], (y == j).astype(float), X=X).predict(P[:, j], X=X) for j in range(3)]
    )
    np.testing.assert_allclose(cal.predict(P, X=X), by_hand / by_hand.sum(axis=1, keepdims=True), rtol=0, atol=1e-12)


def test_one_vs_rest_by_method_name_is_deprecated_and_fits_the_same_calibrators():
    P, y, _ = _draw(400, 3, 16)
    with pytest.warns(FutureWarning, match=r"OneVsRestCalibrator\(mcal.PlattScaling\(\)\) for method='platt'"):
        old = OneVsRestCalibrator(method="platt").fit(P, y)
    np.testing.assert_array_equal(old.predict(P), OneVsRestCalibrator(mcal.PlattScaling()).fit(P, y).predict(P))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the default, isotonic, is no deprecated use
        default = OneVsRestCalibrator().fit(P, y)
    assert [type(c) for c in default.calibrators_] == [mcal.IsotonicCalibration] * 3


@pytest.mark.parametrize(
    ("params", "error", "message"),
    [
        ({"calibrator": MulticlassTemperatureScaling()}, ValueError,
         r"calibrator must be a binary calibrator \(outcome 'classification'\); got MulticlassTemperatureScaling"),
        ({"calibrator": mcal.RegressionMCGrad()}, ValueError, r"got RegressionMCGrad \(outcome 'regression'\)"),
        ({"calibrator": "platt"}, TypeError, "calibrator must be a binary mcal calibrator or None; got str"),
        ({"calibrator": mcal.PlattScaling(), "method": "platt"}, ValueError,
         "calibrator and method must not both be given"),
        ({"method_params": {"foo": 1}}, ValueError, r"method_params must be None without method"),
        ({"method": "dirichlet"}, ValueError, r"method must be .*'platt', .*; got"),
        ({"method": "regression-linear"}, ValueError, r"method must be .*'platt', .*; got"),
        ({"method": "platt", "method_params": {"foo": 1}}, TypeError,
         r"method_params must hold parameters of platt \(PlattScaling\); got \['foo'\]"),
    ],
    ids=["multiclass", "regression", "string", "both", "params-alone", "dirichlet", "regression-name", "unknown"],
)  # fmt: skip
def test_one_vs_rest_refuses_a_calibrator_that_is_not_binary(params, error, message):
    P, y, _ = _draw(300, 3, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(error, match=message):
            OneVsRestCalibrator(**params).fit(P, y)


def test_one_vs_rest_names_the_class_it_could_not_fit():
    p, y, _ = _draw(300, 3, 17)
    y = np.where(y == 2, 0, y)  # class 2 never occurs
    with pytest.raises(ValueError, match="PlattScaling calibrator of class column 2 could not be fitted"):
        OneVsRestCalibrator(mcal.PlattScaling()).fit(p, y)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("form", ["instance", "method"])
def test_one_vs_rest_model_files_round_trip_in_either_form(form, tmp_path):
    P, y, X = _draw(400, 3, 18)
    mcgrad = {"n_estimators": 5, "max_rounds": 2, "early_stopping": None, "random_state": 0, "n_jobs": 1}
    if form == "instance":
        cal = OneVsRestCalibrator(mcal.MCGrad(**mcgrad)).fit(P, y, X=X)
    else:
        cal = OneVsRestCalibrator(method="mcgrad", method_params=mcgrad).fit(P, y, X=X)
    mcal.save(cal, tmp_path / "ovr.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # loading and predicting is no deprecated use
        loaded = mcal.load(tmp_path / "ovr.json")
        np.testing.assert_array_equal(loaded.predict(P, X=X), cal.predict(P, X=X))
    assert repr(loaded.get_params(deep=False)) == repr(cal.get_params(deep=False))


@pytest.mark.parametrize("target", [*MULTICLASS_METHODS.values(), ONE_VS_REST[1]])
def test_every_multiclass_calibrator_asks_whether_y_prob_and_y_were_swapped(target):
    P, y = _draw(150, 3, 0)[:2]
    with pytest.raises(ValueError, match=re.escape("got shape (150,); did you pass y_prob and y in the wrong order? "
                                                   "fit takes (y_prob, y)")):  # fmt: skip
        class_by_name(target.partition(":")[2])().fit(y, P)


@pytest.mark.parametrize("metric", [mcal.metrics.multiclass_log_loss, mcal.metrics.top_label_ece])
def test_multiclass_metrics_ask_whether_y_true_and_y_prob_were_swapped(metric):
    P, y = _draw(150, 3, 0)[:2]
    with pytest.raises(ValueError, match=re.escape("did you pass y_true and y_prob in the wrong order?")):
        metric(P, y)

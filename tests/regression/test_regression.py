"""Tests of mcal.regression: RegressionMCGrad (squared error, Poisson, Tweedie) and univariate recalibration."""

import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar
from sklearn.exceptions import NotFittedError

pytest.importorskip("lightgbm")

import mcal
from mcal._registry import class_by_name, get_method
from mcal.mcgrad.engine import LocalEngine, SquaredError, TweedieLoss, rescale_factor
from mcal.regression import IsotonicRecalibration, LinearRecalibration, RegressionMCGrad
from tests.mcgrad import test_estimator as test_mcgrad

FAST = test_mcgrad.FAST
EXACT = test_mcgrad.EXACT
SHIFT = np.array([-1.0, 0.0, 0.6])


def segment_data(n, seed, shift=SHIFT, noise=1.0):
    """Three segments whose predictions are off by a known additive bias; one numeric feature the base uses."""
    rng = np.random.default_rng(seed)
    segment = rng.integers(0, 3, n)
    x = rng.normal(size=n)
    y_pred = 2.0 + x
    y = y_pred + shift[segment] + rng.normal(scale=noise, size=n)
    X = pd.DataFrame({"segment": pd.Categorical(np.array(["a", "b", "c"])[segment]), "x": x})
    return X, y_pred, y


def count_data(n, seed):
    rng = np.random.default_rng(seed)
    X, _y_pred, _ = segment_data(n, seed)
    mean = np.exp(0.3 * X["x"].to_numpy())
    factor = np.array([0.5, 1.0, 1.8])[X["segment"].cat.codes.to_numpy()]
    return X, mean, rng.poisson(mean * factor).astype(float)


@pytest.fixture(scope="module")
def data():
    return segment_data(6000, seed=1), segment_data(6000, seed=2)


@pytest.fixture(scope="module")
def fitted(data):
    (X, p, y), _ = data
    return RegressionMCGrad(**FAST).fit(p, y, X=X)


@pytest.mark.filterwarnings("error::UserWarning")
@pytest.mark.parametrize("with_features", [True, False], ids=["X", "no-X"])
def test_a_column_slice_of_predictions_fits_as_its_copy_without_warnings(with_features):
    # the identity link hands LightGBM the checked y_pred, a view of the caller's column: its init score must be
    # made contiguous by mcal, not by LightGBM with a warning about sliced data
    X, y_pred, y = segment_data(600, seed=3)
    X = X if with_features else None
    block = np.zeros((y_pred.size, 2))
    block[:, 1] = y_pred
    params = {**FAST, "early_stopping": None, "max_rounds": 2}
    model = RegressionMCGrad(**params).fit(block[:, 1], y, X=X)
    reference = RegressionMCGrad(**params).fit(y_pred, y, X=X)
    np.testing.assert_array_equal(model.predict(block[:, 1], X=X), reference.predict(y_pred, X=X))


# -- the algorithm -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["squared_error", "poisson", "tweedie"])
def test_zero_rounds_is_the_identity(loss):
    X, p, y = count_data(800, seed=3)
    model = RegressionMCGrad(**{**FAST, "max_rounds": 0}, loss=loss).fit(p, y, X=X)
    assert model.n_rounds_ == 0
    np.testing.assert_array_equal(model.predict(p, X=X), p)


def test_squared_error_rescaling_factor_equals_a_brute_force_minimum():
    rng = np.random.default_rng(4)
    z, w = rng.normal(size=500) * 3, rng.uniform(0.1, 2.0, 500)
    y = 0.8 * z + rng.normal(size=500)
    theta = rescale_factor(LocalEngine({}, 1, [], SquaredError()), y, z, w)
    grid = np.linspace(theta - 0.01, theta + 0.01, 20001)  # steps of 1e-6 around it
    losses = ((y[None, :] - grid[:, None] * z[None, :]) ** 2 * w).sum(axis=1)
    assert abs(grid[np.argmin(losses)] - theta) <= 1e-6
    assert theta == pytest.approx(np.dot(w, z * y) / np.dot(w, z * z), rel=1e-12)  # the closed form


@pytest.mark.parametrize("power", [1.0, 1.5])
def test_tweedie_rescaling_factor_equals_the_minimum_of_the_negative_log_likelihood(power):
    rng = np.random.default_rng(5)
    z, w = rng.normal(size=500), rng.uniform(0.1, 2.0, 500)
    y = rng.poisson(np.exp(1.3 * z)).astype(float)
    loss = TweedieLoss(power)
    theta = rescale_factor(LocalEngine({}, 1, [], loss), y, z, w)

    def nll(t):
        a = t * z
        if power == 1.0:
            return np.dot(w, np.exp(a) - y * a)
        return np.dot(w, np.exp((2 - power) * a) / (2 - power) - y * np.exp((1 - power) * a) / (1 - power))

    best = minimize_scalar(nll, bounds=(0.01, 10.0), method="bounded", options={"xatol": 1e-10}).x
    assert theta == pytest.approx(best, abs=1e-6)


def test_integer_weight_equals_that_many_copies():
    rng = np.random.default_rng(8)
    n = 400
    X = rng.normal(size=(n, 2))
    p = rng.normal(size=n)
    y = p + X[:, 0] + rng.normal(size=n)
    k = rng.integers(1, 4, n)
    weighted = RegressionMCGrad(**EXACT).fit(p, y, X=X, sample_weight=k)
    copies = RegressionMCGrad(**EXACT).fit(np.repeat(p, k), np.repeat(y, k), X=np.repeat(X, k, axis=0))
    # Sums accumulate in another order (LightGBM's histograms in float32 gradients): equal to about 1e-9 of the
    # outcomes' scale of 1, hence an absolute tolerance for the predictions near 0.
    np.testing.assert_allclose(weighted.predict(p, X=X), copies.predict(p, X=X), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(weighted.rescale_factors_, copies.rescale_factors_, rtol=1e-7)


def test_a_planted_segment_bias_is_removed_on_held_out_data(data, fitted):
    # Held out, a segment's mean residual of calibrated predictions has standard error noise / sqrt(rows), about
    # 1 / sqrt(2000) = 0.022; four of them (0.09) bound it at 99.99 % per segment, while the planted biases are
    # -1.0, 0 and 0.6 (what the input leaves, up to that noise).
    _, (Xt, pt, yt) = data
    out = fitted.predict(pt, X=Xt)
    codes = Xt["segment"].cat.codes.to_numpy()
    before = np.array([(yt - pt)[codes == s].mean() for s in range(3)])
    after = np.array([(yt - out)[codes == s].mean() for s in range(3)])
    bound = 4.0 / np.sqrt(np.bincount(codes).min())
    np.testing.assert_allclose(before, SHIFT, atol=bound)
    assert np.all(np.abs(after) < bound), after
    assert mcal.metrics.mse(yt, out) < mcal.metrics.mse(yt, pt) - 0.2


def test_poisson_removes_a_multiplicative_segment_bias_and_keeps_predictions_positive():
    X, p, y = count_data(6000, seed=6)
    Xt, pt, yt = count_data(6000, seed=7)
    model = RegressionMCGrad(**{**FAST, "max_leaves": 5, "n_estimators": 50}, loss="poisson").fit(p, y, X=X)
    out = model.predict(pt, X=Xt)
    assert out.min() > 0
    codes = Xt["segment"].cat.codes.to_numpy()
    counts = np.array([yt[codes == s].sum() for s in range(3)])
    ratio = counts / np.array([out[codes == s].sum() for s in range(3)])
    # a segment's observed / predicted count has a relative standard error of about 1 / sqrt(its count); four of
    # them bound it, where the planted factors were 0.5, 1 and 1.8 (and the input's ratios are those)
    assert np.all(np.abs(ratio - 1.0) < 4.0 / np.sqrt(counts)), ratio


def test_validation_losses_are_the_mean_squared_error(data):
    (X, p, y), _ = data
    model = RegressionMCGrad(**{**FAST, "max_rounds": 3, "patience": 3}).fit(p, y, X=X)
    # index 0 is the input on the holdout rows: its MSE lies near the planted bias's mean square plus the noise
    assert model.validation_losses_[0] == pytest.approx(1.0 + np.mean(SHIFT**2), rel=0.1)
    assert model.validation_losses_[model.n_rounds_] == model.validation_losses_.min()


# -- model files -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["squared_error", "poisson", "tweedie"])
def test_save_and_load_reproduce_predictions_exactly(loss, tmp_path):
    X, p, y = count_data(2000, seed=9)
    model = RegressionMCGrad(**FAST, loss=loss, tweedie_power=1.3).fit(p, y, X=X)
    loaded = mcal.load(mcal.save(model, tmp_path / "m.json"))
    assert type(loaded) is RegressionMCGrad and loaded.loss == loss and loaded.n_rounds_ == model.n_rounds_ > 0
    np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))


@pytest.mark.parametrize("model", [IsotonicRecalibration(), LinearRecalibration()])
def test_univariate_models_round_trip_through_model_files(model, data, tmp_path):
    (_, p, y), _ = data
    model.fit(p, y)
    np.testing.assert_array_equal(mcal.load(mcal.save(model, tmp_path / "m.json")).predict(p), model.predict(p))


def test_a_model_file_of_one_loss_does_not_load_as_another(tmp_path):
    X, p, y = count_data(1000, seed=9)
    data = RegressionMCGrad(**FAST, loss="poisson").fit(p, y, X=X).to_dict()
    data["params"]["loss"] = "squared_error"
    with pytest.raises(ValueError, match="header line objective= holds 'regression'; got 'poisson'"):
        RegressionMCGrad.from_dict(data)


def test_methods_are_registered_for_the_command_line_and_model_files():
    assert get_method("regression-mcgrad") is RegressionMCGrad is class_by_name("RegressionMCGrad")
    assert get_method("regression-isotonic") is IsotonicRecalibration
    assert get_method("regression-linear") is LinearRecalibration
    assert mcal.RegressionMCGrad is RegressionMCGrad


# -- bad input: MCGrad's lists, and the rules of real outcomes ---------------------------------------------
def _cases(test):
    return next(m for m in test.pytestmark if m.name == "parametrize").args[1]


@pytest.mark.parametrize("param, value, match", _cases(test_mcgrad.test_bad_parameters_raise_value_error_naming_them))
def test_bad_parameters_raise_value_error_naming_them_as_mcgrad_does(param, value, match):
    with pytest.raises(ValueError, match=match):
        RegressionMCGrad(**{**FAST, param: value}).fit(np.array([0.2, 0.8]), np.array([0.0, 1.0]), X=np.zeros((2, 1)))


@pytest.mark.parametrize(
    "param, value, rule", _cases(test_mcgrad.test_parameters_of_a_bad_type_raise_type_error_naming_them)
)
def test_parameters_of_a_bad_type_raise_type_error_naming_them_as_mcgrad_does(param, value, rule):
    with pytest.raises(TypeError, match=rf"^{param} must be {rule}; got {re.escape(repr(value))}"):
        RegressionMCGrad(**{**FAST, param: value}).fit(np.array([0.2, 0.8]), np.array([0.0, 1.0]), X=np.zeros((2, 1)))


@pytest.mark.parametrize(
    "param, value, error, match",
    [
        ("loss", "huber", ValueError, "loss must be 'squared_error', 'poisson' or 'tweedie'; got 'huber'"),
        ("loss", None, TypeError, "loss must be 'squared_error', 'poisson' or 'tweedie'; got None"),
        ("tweedie_power", 2.0, ValueError, r"tweedie_power must be a number in \[1, 2\); got 2.0"),
        ("tweedie_power", "1.5", TypeError, r"tweedie_power must be a number in \[1, 2\); got '1.5'"),
        (
            "lightgbm_params",
            {"tweedie_variance_power": 1.2},
            ValueError,
            "must not set 'tweedie_variance_power', which RegressionMCGrad controls; use the argument tweedie_power=",
        ),
    ],
)
def test_bad_loss_parameters_raise_naming_them(param, value, error, match):
    with pytest.raises(error, match=match):
        RegressionMCGrad(**{**FAST, param: value}).fit(np.array([0.2, 0.8]), np.array([0.0, 1.0]))


@pytest.mark.parametrize(
    "y_pred, y, weight, loss, error, match",
    [
        (
            [0.2, np.nan, 0.5, 0.6],
            [0, 1, 0, 1],
            None,
            "squared_error",
            ValueError,
            r"y_pred must be finite \(no NaN or infinity\); got 1 value\(s\): .*nan.* at index 1",
        ),
        ([0.2, np.inf, 0.5, 0.6], [0, 1, 0, 1], None, "squared_error", ValueError, "y_pred must be finite"),
        ([0.2, 0.3, 0.5, 0.6], [0, -np.inf, 0, 1], None, "squared_error", ValueError, "y must be finite"),
        ([0.2, 0.3, 0.5, 0.6], [0, np.nan, 0, 1], None, "squared_error", ValueError, "y must be finite"),
        (
            [0.2, 0.3, 0.5, 0.6],
            [0, 1, 0, 1],
            [0, 0, 0, 0],
            "squared_error",
            ValueError,
            "sample_weight must have a positive sum",
        ),
        (
            [0.2, 0.3, 0.5, 0.6],
            [0, 1, 0, 1],
            [1, -1, 1, 1],
            "squared_error",
            ValueError,
            "sample_weight must be non-negative",
        ),
        (
            [0.2, 0.3, 0.5, 0.6],
            [3, 3, 3, 3],
            None,
            "squared_error",
            ValueError,
            "y must hold at least two distinct values with positive weight; got only 3.0",
        ),
        (
            [0.2, 0.3, 0.5, 0.6],
            [1, 2, 3, 4],
            [0, 0, 1, 0],
            "squared_error",
            ValueError,
            "y must hold at least two distinct values with positive weight; got only 3.0",
        ),
        (
            [0.2, 0.3, 0.5],
            [0, 1, 0, 1],
            None,
            "squared_error",
            ValueError,
            "inputs must have the same number of samples; got y_pred has 3, y has 4",
        ),
        ([0.2, 0.3, 0.5, 0.6], ["a", "b", "a", "b"], None, "squared_error", ValueError, "y must be numeric"),
        ([0.2, 0.3, 0.5, 0.6], [0, 1j, 0, 1], None, "squared_error", TypeError, "y must hold real numbers"),
        (None, [0, 1, 0, 1], None, "squared_error", TypeError, "y_pred must be array-like"),
        ([[0.2, 0.3], [0.5, 0.6]], [0, 1], None, "squared_error", ValueError, "y_pred must be 1-D.*keyword X="),
        ([0.2, 0.0, 0.5, 0.6], [0, 1, 0, 1], None, "poisson", ValueError, "y_pred must be greater than 0; got 1 value"),
        ([0.2, 0.3, 0.5, 0.6], [0, -1, 0, 1], None, "tweedie", ValueError, "y must be at least 0; got 1 value"),
    ],
)
def test_bad_training_data_raise(y_pred, y, weight, loss, error, match):
    with pytest.raises(error, match=match):
        RegressionMCGrad(**FAST, loss=loss).fit(y_pred, y, sample_weight=weight)


@pytest.mark.parametrize("weight", [1e-300, 1e300])
def test_weights_outside_lightgbm_float32_range_raise(data, weight):
    (X, p, y), _ = data
    with pytest.raises(ValueError, match=r"sample_weight must have its positive weights in \[1.175e-38, 3.403e\+38\]"):
        RegressionMCGrad(**FAST).fit(p, y, X=X, sample_weight=np.full(p.size, weight))


@pytest.mark.parametrize("make_X, match", _cases(test_mcgrad.test_wrong_features_at_predict_raise))
def test_wrong_features_at_predict_raise_as_for_mcgrad(fitted, data, make_X, match):
    _, (Xt, pt, _) = data
    with pytest.raises(ValueError, match=match):
        fitted.predict(pt, X=make_X(Xt))


def test_non_finite_predictions_at_predict_raise(fitted, data):
    _, (Xt, pt, _) = data
    bad = pt.copy()
    bad[3] = np.nan
    with pytest.raises(
        ValueError, match=r"y_pred must be finite \(no NaN or infinity\); got 1 value\(s\): .*nan.* at index 3"
    ):
        fitted.predict(bad, X=Xt)


@pytest.mark.parametrize(
    "make_X, match",
    [
        (lambda X: X.assign(x=np.r_[np.inf, X["x"].to_numpy()[1:]]), "must not hold infinite values; got 1"),
        (lambda X: X.iloc[:-1], r"X must have 6000 rows \(the length of y_pred\); got 5999"),
        (lambda X: X.assign(when=pd.Timestamp("2024-01-01")), "X column 'when' must be converted to numbers"),
        (lambda X: X.assign(v=np.full(len(X), 1j)), "X column 'v' must"),
    ],
)
def test_bad_features_at_fit_raise_as_for_mcgrad(data, make_X, match):
    (X, p, y), _ = data
    with pytest.raises((ValueError, TypeError), match=match):
        RegressionMCGrad(**FAST).fit(p, y, X=make_X(X))


def test_bad_weights_raise_naming_them():
    p, y = np.array([0.2, 0.3, 0.5, 0.6]), np.array([0.0, 1.0, 2.0, 3.0])
    for weight, match in (([1, np.nan, 1, 1], "sample_weight must be finite"), ([1, 1, 1], "sample_weight"),
                          ([1, np.inf, 1, 1], "sample_weight must be finite")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            RegressionMCGrad(**FAST).fit(p, y, sample_weight=weight)


def test_predictions_at_predict_follow_the_rules_of_fit(data):
    (X, p, y), (Xt, pt, _) = data
    model = RegressionMCGrad(**{**FAST, "loss": "poisson", "early_stopping": None, "max_rounds": 1})
    model.fit(np.exp(p / 4), np.abs(y), X=X)
    with pytest.raises(ValueError, match=r"y_pred must be greater than 0; got 1 value\(s\): .* at index 2"):
        model.predict(np.r_[1.0, 2.0, -1.0, np.ones(len(Xt) - 3)], X=Xt)
    with pytest.raises(ValueError, match=r"y_pred must be finite .* at index 0"):
        model.predict(np.r_[np.inf, np.ones(len(Xt) - 1)], X=Xt)
    plain = RegressionMCGrad(**{**FAST, "early_stopping": None, "max_rounds": 1}).fit(p, y)
    with pytest.raises(ValueError, match="must have 0 column"):  # fitted without features
        plain.predict(pt, X=np.zeros((len(pt), 1)))


def test_tiny_data_raises_for_kfold_early_stopping_naming_the_rows_needed():
    # (holdout needs 2 rows, which two distinct outcomes always give)
    X, p = np.array([[0.0], [1.0], [2.0]]), np.array([0.3, 0.6, 0.4])
    with pytest.raises(ValueError, match=r"at least 5 rows in all for early_stopping='kfold'; got \[3\]"):
        RegressionMCGrad(**{**FAST, "early_stopping": "kfold"}).fit(p, np.array([1.5, 2.5, 0.5]), X=X)
    model = RegressionMCGrad(**{**FAST, "early_stopping": None, "max_rounds": 1}).fit(p, np.array([1.5, 2.5, 0.5]), X=X)
    assert np.all(np.isfinite(model.predict(p, X=X)))


@pytest.mark.parametrize("seed, kind", [(24, "training"), (0, "validation")])  # 24: the first seed whose split does it
def test_an_early_stopping_part_without_positive_weight_raises_before_lightgbm(seed, kind):
    rng = np.random.default_rng(0)
    n = 600
    w = np.zeros(n)
    w[[0, 1]] = 1.0  # two rows carry weight: the holdout split leaves one part without (which one, by seed)
    with pytest.raises(ValueError, match=f"the {kind} part of the split drawn with random_state={seed} has none"):
        RegressionMCGrad(**{**FAST, "random_state": seed}).fit(
            np.full(n, 2.0), rng.normal(size=n), X=rng.normal(size=(n, 1)), sample_weight=w
        )


def test_unseen_category_at_predict_warns_and_acts_as_missing(fitted, data):
    _, (Xt, pt, _) = data
    X_new, X_missing = Xt.iloc[:3].copy(), Xt.iloc[:3].copy()
    X_new["segment"] = pd.Categorical(["zz", "zz", "a"])
    X_missing["segment"] = pd.Categorical([None, None, "a"])
    with pytest.warns(
        mcal.CalibrationWarning,
        match=r"X has 1 categorical value\(s\) unseen at fit \(column .segment.: 1 value\(s\) in 2 row",
    ):
        out = fitted.predict(pt[:3], X=X_new)
    np.testing.assert_array_equal(out, fitted.predict(pt[:3], X=X_missing))


def test_predict_before_fit_raises():
    with pytest.raises(NotFittedError):
        RegressionMCGrad().predict(np.array([0.5]), X=np.zeros((1, 1)))


def test_univariate_recalibration_refuses_features():
    with pytest.raises(ValueError, match="X must be None for LinearRecalibration"):
        LinearRecalibration().fit([1.0, 2.0], [1.0, 3.0], X=np.zeros((2, 1)))


# -- univariate recalibration -----------------------------------------------------------------------------
def test_isotonic_recalibration_pools_adjacent_violators_by_hand():
    # outcomes 10, 30, 20, 40 at predictions 1..4: the violators 30, 20 pool to 25; weights 1, 1, 3, 1 pool to
    # (30 + 60) / 4 = 22.5; outside the fitted range the end values
    model = IsotonicRecalibration().fit([1.0, 2.0, 3.0, 4.0], [10.0, 30.0, 20.0, 40.0], sample_weight=[1, 1, 3, 1])
    np.testing.assert_allclose(model.predict([0.0, 2.0, 3.0, 4.0, 9.0]), [10.0, 22.5, 22.5, 40.0, 40.0])
    assert IsotonicRecalibration().fit([1.0, 2.0], [-5.0, 7.5]).predict([1.0, 2.0]).tolist() == [-5.0, 7.5]


def test_linear_recalibration_by_hand_and_weight_k_equals_k_copies():
    model = LinearRecalibration().fit([0.0, 1.0, 2.0], [1.0, 1.0, 4.0], sample_weight=[1, 1, 2])
    # weighted means 1.25 and 2.5; slope = sum w dp dy / sum w dp^2 = (1.875 + 0.375 + 2.25) / (1.5625 + 0.0625 + 1.125)
    assert model.slope_ == pytest.approx(4.5 / 2.75, rel=1e-12)
    assert model.intercept_ == pytest.approx(2.5 - 4.5 / 2.75 * 1.25, rel=1e-12)
    copies = LinearRecalibration().fit([0.0, 1.0, 2.0, 2.0], [1.0, 1.0, 4.0, 4.0])
    assert (copies.slope_, copies.intercept_) == pytest.approx((model.slope_, model.intercept_), rel=1e-12)


def test_linear_recalibration_zeroes_the_mean_residual_and_is_the_identity_on_calibrated_predictions():
    rng = np.random.default_rng(12)
    p = rng.normal(size=20000)
    y = p + rng.normal(size=20000)
    model = LinearRecalibration().fit(p, y)
    assert abs(model.slope_ - 1.0) < 0.03 and abs(model.intercept_) < 0.03
    biased = LinearRecalibration().fit(2 * p + 1, y)
    assert abs(np.mean(y - biased.predict(2 * p + 1))) < 1e-12

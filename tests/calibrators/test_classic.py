"""Classic calibrators: invariants, agreement with scikit-learn, edge cases and bad input."""

import pickle
import re
import warnings

import numpy as np
import pytest
import scipy.sparse
from scipy.optimize import brentq
from scipy.special import expit, logit
from sklearn.exceptions import NotFittedError
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

import mcal
from mcal import BetaCalibration, HistogramBinning, IsotonicCalibration, PlattScaling, TemperatureScaling
from mcal._registry import METHODS, get_method, method_outcome
from mcal.metrics import log_loss, roc_auc

ALL = [PlattScaling, TemperatureScaling, BetaCalibration, IsotonicCalibration, HistogramBinning]
STRICT = [PlattScaling, TemperatureScaling, BetaCalibration]
GRID = np.linspace(0.0, 1.0, 2001)


@pytest.mark.parametrize("cls", [PlattScaling, TemperatureScaling, BetaCalibration, IsotonicCalibration])
def test_output_is_monotone_in_the_score(cls, miscalibrated):
    # histogram binning promises no monotonicity (its bin rates are noisy), so it is not listed
    p, y = miscalibrated
    out = cls().fit(p, y).predict(GRID)
    assert np.all(np.diff(out) >= 0)
    assert np.all((out >= 0) & (out <= 1))


def test_histogram_binning_is_constant_within_each_bin(miscalibrated):
    p, y = miscalibrated
    cal = HistogramBinning().fit(p, y)
    out = cal.predict(GRID)
    assert np.unique(out).size <= cal.bin_values_.size == 20


@pytest.mark.parametrize("cls", STRICT)
def test_strictly_monotone_maps_leave_auc_unchanged(cls, miscalibrated):
    p, y = miscalibrated
    q = cls().fit(p, y).predict(p)
    assert roc_auc(y, q) == pytest.approx(roc_auc(y, p), abs=1e-12)


@pytest.mark.parametrize("cls", [PlattScaling, TemperatureScaling, BetaCalibration, IsotonicCalibration])
def test_calibration_set_log_loss_is_no_worse_than_identity(cls, miscalibrated):
    # each family contains the identity (isotonic: PAV minimises every Bregman loss among monotone maps)
    p, y = miscalibrated
    assert log_loss(y, cls().fit(p, y).predict(p)) <= log_loss(y, p) + 1e-12


@pytest.mark.parametrize("cls", ALL)
def test_held_out_log_loss_improves_on_miscalibrated_scores(cls, miscalibrated, rng):
    p, y = miscalibrated
    q = cls().fit(p[:10_000], y[:10_000]).predict(p[10_000:])
    assert log_loss(y[10_000:], q) < log_loss(y[10_000:], p[10_000:]) - 0.01


@pytest.mark.parametrize("cls", ALL)
def test_permutation_invariance(cls, miscalibrated, rng):
    p, y = miscalibrated
    perm = rng.permutation(p.size)
    a = cls().fit(p, y).predict(GRID)
    b = cls().fit(p[perm], y[perm]).predict(GRID)
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("cls", ALL)
def test_weight_k_equals_k_copies(cls, rng):
    p = rng.uniform(0.01, 0.99, 800)
    y = (rng.uniform(size=800) < p**1.3).astype(float)
    k = rng.integers(0, 4, 800)
    rep = np.repeat(np.arange(800), k)
    a = cls().fit(p, y, sample_weight=k.astype(float)).predict(GRID)
    b = cls().fit(p[rep], y[rep]).predict(GRID)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


EVERY = [*ALL, mcal.GaussianScaling, mcal.GammaScaling, mcal.SmoothedIsotonic]


@pytest.mark.parametrize("cls", EVERY)
def test_multiplying_every_weight_by_a_constant_changes_nothing(cls, rng):
    p = rng.uniform(0.01, 0.99, 800)
    y = (rng.uniform(size=800) < p**1.3).astype(float)
    w = rng.uniform(0.0, 3.0, 800)
    # the Jeffreys estimate of pure blocks counts weight as rows (weight k is k copies), so it is not scale-free
    params = {"extremes": "empirical"} if "extremes" in cls().get_params() else {}
    a = cls(**params).fit(p, y, sample_weight=w).predict(GRID)
    for scale in (1e-6, 1e6):
        scaled = cls(**params).fit(p, y, sample_weight=w * scale).predict(GRID)
        np.testing.assert_allclose(scaled, a, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("cls", [mcal.GaussianScaling, mcal.GammaScaling])
def test_gaussian_and_gamma_are_invariant_to_row_order(cls, miscalibrated, rng):
    p, y = miscalibrated
    perm = rng.permutation(p.size)
    np.testing.assert_allclose(
        cls().fit(p[perm], y[perm]).predict(GRID), cls().fit(p, y).predict(GRID), rtol=1e-6, atol=1e-9
    )


@pytest.mark.parametrize(
    "cls, tol",
    [
        (PlattScaling, 0.01),
        (TemperatureScaling, 0.01),
        (BetaCalibration, 0.01),
        (mcal.GaussianScaling, 0.01),
        (mcal.GammaScaling, 0.01),
        (IsotonicCalibration, 0.05),
        (HistogramBinning, 0.05),
        (mcal.SmoothedIsotonic, 0.05),
    ],
)
def test_map_is_near_the_identity_on_calibrated_data(cls, tol, rng):
    # parametric families contain the identity; binned ones are within a bin's noise of it
    p = rng.uniform(0.02, 0.98, 100_000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    grid = np.linspace(0.05, 0.95, 181)
    assert np.max(np.abs(cls().fit(p, y).predict(grid) - grid)) < tol


def test_platt_is_near_identity_on_calibrated_data(rng):
    p = rng.uniform(0.01, 0.99, 200_000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    cal = PlattScaling().fit(p, y)
    assert cal.slope_ == pytest.approx(1.0, abs=0.02)
    assert cal.intercept_ == pytest.approx(0.0, abs=0.02)


def test_platt_recovers_the_generating_map(miscalibrated):
    p, y = miscalibrated
    cal = PlattScaling().fit(p, y)
    assert cal.slope_ == pytest.approx(0.5, abs=0.03)
    assert cal.intercept_ == pytest.approx(0.3, abs=0.05)


def test_platt_agrees_with_unpenalised_sklearn_logistic_regression(miscalibrated):
    p, y = miscalibrated
    lr = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(logit(p)[:, None], y)
    cal = PlattScaling().fit(p, y)
    assert cal.slope_ == pytest.approx(lr.coef_[0, 0], rel=1e-5)
    assert cal.intercept_ == pytest.approx(lr.intercept_[0], abs=1e-5)


def test_platt_on_four_points_solves_the_score_equation():
    # logits +-log(4), +-log(3/7) are symmetric and the labels alternate: the optimum has b = 0 and a solving
    # sum_i z_i (y_i - expit(a z_i)) = 0, found here by root bracketing (a = 1.10179034...)
    p, y = np.array([0.2, 0.4, 0.6, 0.8]), np.array([0.0, 1.0, 0.0, 1.0])
    z = logit(p)
    a = brentq(lambda a: np.sum(z * (y - expit(a * z))), 0.1, 5.0, xtol=1e-14)
    cal = PlattScaling().fit(p, y)
    assert cal.slope_ == pytest.approx(a, rel=1e-6)
    assert cal.intercept_ == pytest.approx(0.0, abs=1e-8)


def test_weighted_platt_agrees_with_weighted_sklearn_logistic_regression(miscalibrated, rng):
    p, y = miscalibrated
    w = rng.uniform(0.0, 3.0, p.size)
    lr = LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000).fit(logit(p)[:, None], y, sample_weight=w)
    cal = PlattScaling().fit(p, y, sample_weight=w)
    assert cal.slope_ == pytest.approx(lr.coef_[0, 0], rel=1e-5)
    assert cal.intercept_ == pytest.approx(lr.intercept_[0], abs=1e-5)


def test_temperature_solves_the_score_equation_of_the_inverse_temperature(miscalibrated):
    # the optimum of the one-parameter model expit(t z) solves sum_i z_i (y_i - expit(t z_i)) = 0
    p, y = miscalibrated
    z = logit(p)
    t = brentq(lambda t: np.sum(z * (y - expit(t * z))), 0.01, 5.0, xtol=1e-14)
    assert 1.0 / TemperatureScaling().fit(p, y).temperature_ == pytest.approx(t, rel=1e-6)


@pytest.mark.parametrize(
    "abc", [(0.6, 1.4, 0.2), (-0.3, 1.0, 0.0), (1.2, -0.4, 0.1)], ids=["both-positive", "a-dropped", "b-dropped"]
)
def test_beta_agrees_with_the_authors_betacal_package(rng, abc):
    # betacal 1.1.0 (Kull et al.) fits an almost unpenalised sklearn logistic regression and refits without a
    # feature whose coefficient is negative; its lbfgs stops at tol 1e-4, so mcal (the exact constrained
    # optimum) agrees to ~1e-4 and is never worse in log loss
    betacal = pytest.importorskip("betacal", minversion="1.1.0")
    a, b, c = abc
    p = rng.uniform(0.001, 0.999, 20_000)
    y = (rng.random(p.size) < expit(a * np.log(p) - b * np.log1p(-p) + c)).astype(float)
    with warnings.catch_warnings():  # betacal calls warnings.filterwarnings("ignore"): keep it local
        ref = betacal.BetaCalibration("abm").fit(p, y)
    cal = BetaCalibration().fit(p, y)
    np.testing.assert_allclose([cal.a_, cal.b_], ref.calibrator_.map_[:2], atol=2e-3)
    np.testing.assert_allclose(cal.predict(GRID[1:-1]), ref.predict(GRID[1:-1]), atol=5e-4)
    assert log_loss(y, cal.predict(p)) <= log_loss(y, ref.predict(p)) + 1e-12


def test_isotonic_pools_ties_and_violators_as_computed_by_hand():
    # tie at 0.2 -> (0 + 1)/2 with weight 2; 1 (w 1) > 0.5 (w 2) pools to 2/3 (w 3); 0 at 0.3 (w 2) pools to
    # (2 + 0)/5 = 0.4; 1 at 0.4 stays. Knots where the value changes: 0.1, 0.3 at 0.4 and 0.4 at 1.
    p = np.array([0.1, 0.2, 0.2, 0.3, 0.4])
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    cal = IsotonicCalibration(extremes="empirical").fit(p, y, sample_weight=np.array([1.0, 1.0, 1.0, 2.0, 1.0]))
    np.testing.assert_allclose(
        cal.predict(np.array([0.0, 0.1, 0.2, 0.3, 0.35, 0.4, 1.0])),
        [0.4, 0.4, 0.4, 0.4, 0.7, 1.0, 1.0],
        rtol=0,
        atol=1e-15,
    )


def test_temperature_recovers_inverse_slope(rng):
    p = rng.uniform(0.01, 0.99, 100_000)
    y = (rng.uniform(size=p.size) < expit(logit(p) / 2.0)).astype(float)
    assert TemperatureScaling().fit(p, y).temperature_ == pytest.approx(2.0, rel=0.05)


def test_beta_contains_the_identity(rng):
    p = rng.uniform(0.01, 0.99, 200_000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    cal = BetaCalibration().fit(p, y)
    assert (cal.a_, cal.b_, cal.c_) == pytest.approx((1.0, 1.0, 0.0), abs=0.03)


def test_isotonic_agrees_with_sklearn(miscalibrated):
    p, y = miscalibrated
    ref = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(p, y)
    cal = IsotonicCalibration(extremes="empirical").fit(p, y)
    np.testing.assert_allclose(cal.predict(GRID), ref.predict(GRID), atol=1e-12)


def test_histogram_binning_hand_computed():
    p = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    y = np.array([0, 0, 1, 0, 1, 1])
    cal = HistogramBinning(n_bins=3, extremes="empirical").fit(p, y)
    np.testing.assert_allclose(cal.bin_edges_, [0.2, 0.4])
    np.testing.assert_allclose(cal.predict(np.array([0.0, 0.2, 0.25, 0.4, 0.45, 1.0])), [0, 0, 0.5, 0.5, 1, 1])


def test_isotonic_end_blocks_of_one_class_take_the_jeffreys_estimate():
    # blocks: {0.1, 0.2} all negative (n = 2) -> 0.5 / 3; {0.3, 0.4} at 1/2; {0.5, 0.6, 0.7} all positive (n = 3,
    # weight 2 on one row -> 4) -> 4.5 / 5
    p = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    y = np.array([0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0])
    cal = IsotonicCalibration().fit(p, y, sample_weight=np.array([1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0]))
    np.testing.assert_allclose(cal.predict(np.array([0.0, 0.1, 0.2, 0.35, 0.5, 1.0])),
                               [0.5 / 3, 0.5 / 3, 0.5 / 3, 0.5, 4.5 / 5, 4.5 / 5], rtol=0, atol=1e-15)  # fmt: skip


def test_isotonic_jeffreys_ends_stay_monotone_and_keep_log_loss_finite(rng):
    # a lone positive above a long run of negatives: its block of one row would be 1, and a 3/4 stays above 0.4
    p = rng.uniform(0, 1, 500)
    y = (rng.random(500) < p).astype(float)
    cal = IsotonicCalibration().fit(p, y)
    out = cal.predict(np.linspace(0, 1, 1001))
    assert np.all(np.diff(out) >= 0) and out.min() > 0 and out.max() < 1
    flipped = 1.0 - y  # the worst case for the extremes: every end block meets the other class at test time
    assert np.isfinite(log_loss(flipped, cal.predict(p)))
    empirical = IsotonicCalibration(extremes="empirical").fit(p, y)
    inner = (empirical.y_thresholds_ > 0) & (empirical.y_thresholds_ < 1)  # only the pure end blocks change
    np.testing.assert_array_equal(cal.y_thresholds_[inner], empirical.y_thresholds_[inner])
    assert not inner.all()


def test_histogram_binning_pure_bins_take_the_jeffreys_estimate():
    cal = HistogramBinning(n_bins=3).fit(np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), np.array([0, 0, 1, 0, 1, 1]))
    np.testing.assert_allclose(cal.bin_values_, [0.5 / 3, 0.5, 2.5 / 3])


def test_histogram_binning_weighted_rates_hand_computed():
    # W = 8, the median level 4 is first reached at 0.2 (cumulative 3, 4, 5, 8): bins {0.1, 0.2} and {0.3, 0.4}
    cal = HistogramBinning(n_bins=2).fit(
        np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 1, 0, 1]), sample_weight=np.array([3.0, 1.0, 1.0, 3.0])
    )
    np.testing.assert_allclose(cal.bin_edges_, [0.2])
    np.testing.assert_allclose(cal.bin_values_, [1 / 4, 3 / 4])


def test_histogram_binning_with_as_many_bins_as_scores_gives_each_score_its_own_bin():
    # the levels k / 100 * 100 rounded up (0.07 * 100 = 7.000000000000001) and skipped a score: 96 bins
    p = np.arange(100) / 100
    y = (np.arange(100) % 2).astype(float)
    cal = HistogramBinning(n_bins=100, extremes="empirical").fit(p, y)
    np.testing.assert_array_equal(cal.bin_edges_, p[:-1])
    np.testing.assert_array_equal(cal.predict(p), y)


def test_histogram_binning_with_more_bins_than_memory_holds_gives_each_score_its_own_bin():
    # one level per bin was materialised: n_bins = 10**12 asked numpy for 8 TB
    p = np.arange(100) / 100
    y = (np.arange(100) % 2).astype(float)
    np.testing.assert_array_equal(HistogramBinning(n_bins=10**12, extremes="empirical").fit(p, y).predict(p), y)


def test_histogram_binning_with_tied_scores_merges_bins():
    cal = HistogramBinning(n_bins=4).fit(np.array([0.3] * 6 + [0.7] * 2), np.array([0, 1, 0, 1, 0, 1, 1, 1]))
    np.testing.assert_allclose(cal.bin_values_, [0.5, 2.5 / 3])  # the pure bin of 2 rows: (2 + 1/2) / (2 + 1)


@pytest.mark.parametrize("cls", ALL)
def test_scores_of_exactly_zero_and_one_give_finite_probabilities(cls, miscalibrated):
    p, y = miscalibrated
    p = p.copy()
    p[:50], p[50:100] = 0.0, 1.0
    out = cls().fit(p, y).predict(np.array([0.0, 1.0]))
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("cls", ALL)
def test_float32_in_float32_out(cls, miscalibrated):
    p, y = miscalibrated
    out = cls().fit(p, y).predict(p[:10].astype(np.float32))
    assert out.dtype == np.float32


@pytest.mark.parametrize("cls", ALL)
def test_fit_returns_self_and_does_not_mutate_inputs(cls, miscalibrated):
    p, y = miscalibrated
    p0, y0 = p.copy(), y.copy()
    cal = cls()
    assert cal.fit(p, y) is cal
    np.testing.assert_array_equal(p, p0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("cls", ALL)
def test_predict_before_fit_raises(cls):
    with pytest.raises(NotFittedError):
        cls().predict([0.5])


@pytest.mark.parametrize("cls", ALL)
def test_pickle_round_trip(cls, miscalibrated):
    p, y = miscalibrated
    cal = cls().fit(p, y)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(cal)).predict(GRID), cal.predict(GRID))


@pytest.mark.parametrize("cls", ALL)
def test_single_class_raises(cls):
    with pytest.raises(ValueError, match="both classes"):
        cls().fit([0.2, 0.4, 0.6], [1, 1, 1])


@pytest.mark.parametrize("cls", ALL)
def test_features_given_to_univariate_calibrator_raise(cls):
    with pytest.raises(ValueError, match="X must be None"):
        cls().fit([0.2, 0.4], [0, 1], X=np.ones((2, 1)))


@pytest.mark.parametrize("cls", ALL)
def test_two_dimensional_scores_raise_with_hint(cls):
    with pytest.raises(ValueError, match="X="):
        cls().fit(np.ones((4, 2)) * 0.5, [0, 1, 0, 1])


@pytest.mark.parametrize(
    "y_prob, y, w, match",
    [
        ([0.2, np.nan], [0, 1], None, "finite"),
        ([0.2, 1.5], [0, 1], None, r"\[0, 1\]"),
        ([0.2, 0.4], [0, 3], None, "binary"),
        ([0.2, 0.4], ["a", "b"], None, "0/1 or bool"),
        (
            [0.2, 0.4, 0.5],
            [True, None, False],
            None,
            r"y must not contain missing values; got 1 missing value\(s\), "
            "the first at index 1",
        ),
        ([0.2, 0.4, 0.5], [0, 1], None, "same number"),
        ([], [], None, "empty"),
        ([0.2, 0.4], [0, 1], [1, -1], "non-negative"),
        ([0.2, 0.4], [0, 1], [0, 0], "positive sum"),
    ],
)
def test_bad_fit_input_raises(y_prob, y, w, match):
    for cls in ALL:
        with pytest.raises(ValueError, match=match):
            cls().fit(y_prob, y, sample_weight=w)


@pytest.mark.parametrize("which", ["y_prob", "y", "sample_weight"])
def test_complex_inputs_raise_instead_of_dropping_their_imaginary_part(which):
    # numpy cast them to float with only a ComplexWarning
    data = {"y_prob": np.array([0.2, 0.4, 0.6, 0.8]), "y": np.array([0, 1, 0, 1]), "sample_weight": np.ones(4)}
    data[which] = data[which] + 0j
    for cls in ALL:
        with pytest.raises(TypeError, match=f"{which} must hold real numbers; got dtype complex128"):
            cls().fit(data["y_prob"], data["y"], sample_weight=data["sample_weight"])


def test_out_of_range_scores_at_predict_raise(miscalibrated):
    p, y = miscalibrated
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        PlattScaling().fit(p, y).predict([1.5])


def test_bad_n_bins_raises():
    with pytest.raises(ValueError, match="n_bins"):
        HistogramBinning(n_bins=0).fit([0.2, 0.4], [0, 1])


@pytest.mark.parametrize(
    "make",
    [
        mcal.MCGrad,
        mcal.DFMC,
        mcal.HKRR,
        mcal.MCNet,
        lambda: mcal.PerFieldCalibrator(field="a"),
        lambda: mcal.NeuCalib(field="a"),
        lambda: mcal.AdaCalib(field="a"),
    ],
)
@pytest.mark.parametrize(
    "X, shown",
    [
        ({"a": [1, 2, 1, 2]}, r"dict; pandas.DataFrame\(X\) makes a frame of a dict of columns"),  # len() counted keys
        ("abcd", "str$"),  # len() counted characters
        (scipy.sparse.csr_matrix(np.ones((4, 1))), r"csr_matrix; pass X.toarray\(\) or a DataFrame"),
        (iter(np.ones((4, 1))), r"iterator; pass list\(X\) or numpy.asarray\(X\)"),
    ],
)
def test_x_that_is_not_a_table_raises_naming_its_type(make, X, shown):
    with pytest.raises(TypeError, match=rf"X must be a DataFrame or a 2-D array-like; got {shown}"):
        make().fit([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1], X=X)


def _reloaded(cal, field, value):
    """``cal`` saved and read back with one state field replaced by ``value`` (already in model-file form)."""
    data = cal.to_dict()
    data["state"][field] = value
    return type(cal).from_dict(data)


def _encoded(values, dtype="float64", shape=None):
    return {"__ndarray__": values, "dtype": dtype, "shape": [len(values)] if shape is None else shape}


@pytest.mark.parametrize(
    "cls, field, value, rule",
    [
        (PlattScaling, "slope_", -0.5, ">= 0"),
        (TemperatureScaling, "temperature_", 0.0, "> 0"),
        (TemperatureScaling, "temperature_", -2.0, "> 0"),
        (BetaCalibration, "a_", -1.0, ">= 0"),
        (BetaCalibration, "b_", -1.0, ">= 0"),
    ],
)
def test_model_file_whose_parameters_make_the_map_decreasing_is_rejected(miscalibrated, cls, field, value, rule):
    # a negative Platt slope loaded and predicted a decreasing map; temperature 0 predicted NaN at p = 0.5
    p, y = miscalibrated
    with pytest.raises(ValueError, match=rf"state.{field} must be {rule} \(a non-decreasing map\); got {value}"):
        _reloaded(cls().fit(p, y), field, value)


@pytest.mark.parametrize(
    "cls, field",
    [
        (PlattScaling, "slope_"),
        (TemperatureScaling, "temperature_"),
        (BetaCalibration, "c_"),
        (mcal.GaussianScaling, "score_min_"),
    ],
)
def test_model_file_with_an_array_where_a_number_belongs_is_rejected(miscalibrated, cls, field):
    # a one-element array was broadcast silently, a longer one failed at predict
    p, y = miscalibrated
    with pytest.raises(ValueError, match=rf"state.{field} must be a finite number; got an array"):
        _reloaded(cls().fit(p, y), field, _encoded([1.0]))


@pytest.mark.parametrize(
    "cls, field",
    [
        (IsotonicCalibration, "X_thresholds_"),
        (IsotonicCalibration, "y_thresholds_"),
        (HistogramBinning, "bin_edges_"),
        (HistogramBinning, "bin_values_"),
        (mcal.SmoothedIsotonic, "knots_x_"),
    ],
)
@pytest.mark.parametrize(
    "value, got",
    [
        (0.5, "float"),
        ([0.1, 0.2], "list"),
        (_encoded(["a", "b"], "str"), r"shape \(2,\), dtype <U1"),
        (_encoded([False, True], "bool"), r"shape \(2,\), dtype bool"),
        (_encoded([0.1, 0.2], shape=[1, 2]), r"shape \(1, 2\), dtype float64"),
    ],
)
def test_model_file_with_a_non_vector_where_an_array_belongs_is_rejected(miscalibrated, cls, field, value, got):
    # a number or a list raised AttributeError, which mcal.load let through
    p, y = miscalibrated
    with pytest.raises(ValueError, match=rf"state.{field} must be a 1-D array of numbers; got {got}"):
        _reloaded(cls().fit(p, y), field, value)


def test_model_file_whose_sir_knots_stop_short_of_the_anchors_is_rejected(miscalibrated):
    # np.interp would hold the end values flat beyond them: the map would no longer be strictly increasing
    p, y = miscalibrated
    cal = mcal.SmoothedIsotonic().fit(p, y)
    data = cal.to_dict()
    data["state"]["knots_x_"] = _encoded([0.2, 0.8])
    data["state"]["knots_y_"] = _encoded([0.3, 0.6])
    with pytest.raises(ValueError, match="state.knots_x_ must run from 0 to 1 .*got 0.2 to 0.8"):
        mcal.SmoothedIsotonic.from_dict(data)


def test_histogram_binning_keeps_no_bin_above_a_heavy_largest_score():
    # W = 12, levels 4 and 8: both quantiles are the heavy last score 0.9, the largest; an edge there would leave
    # the bin above it empty (0/0), so the rows form one bin with rate 11/12.
    model = HistogramBinning(n_bins=3).fit(np.array([0.1, 0.2, 0.9]), np.array([0.0, 1.0, 1.0]),
                                           sample_weight=np.array([1.0, 1.0, 10.0]))  # fmt: skip
    assert model.bin_edges_.size == 0
    np.testing.assert_allclose(model.bin_values_, [11.0 / 12.0], rtol=1e-15)


def test_platt_slope_stops_at_zero_on_anti_correlated_scores():
    # Labels that fall as the score rises: the slope is held at 0, and the intercept-only logistic fit is the
    # log-odds of the weighted positive rate.
    p = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    y = np.array([1.0, 1.0, 0.0, 1.0, 0.0])
    w = np.array([1.0, 2.0, 1.0, 1.0, 3.0])
    model = PlattScaling().fit(p, y, sample_weight=w)
    assert model.slope_ == 0.0
    np.testing.assert_allclose(model.predict(p), np.full(5, 4.0 / 8.0), atol=1e-7)


# -- the caller's arrays -------------------------------------------------------------------------------------------


def test_checked_float64_inputs_are_read_only_views_of_the_callers_arrays(rng):
    from mcal._validation import check_sample_weight, check_y_prob, check_y_true

    p, y, w = rng.uniform(size=50), (rng.uniform(size=50) < 0.5).astype(float), rng.uniform(size=50)
    for check, arr in (
        (check_y_prob, p),
        (lambda a: check_y_true(a, "y"), y),
        (lambda a: check_sample_weight(a, 50), w),
    ):
        out = check(arr)
        assert np.shares_memory(out, arr) and not out.flags.writeable
        assert arr.flags.writeable  # the caller's array itself is left writeable
    converted = check_y_prob(p.astype(np.float32))
    assert converted.dtype == np.float64 and not converted.flags.writeable


def test_unit_weights_hold_one_number_for_every_row():
    from mcal._validation import check_sample_weight

    w = check_sample_weight(None, 10**9)  # 8 GB if each row had its own
    assert w.shape == (10**9,) and w.strides == (0,) and w[123_456_789] == 1.0 and not w.flags.writeable


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_registered_method_leaves_the_callers_arrays_as_they_were(name, weighted, fit_registered, small_data):
    # the checks hand the methods the caller's own float64 arrays (read-only views), not copies
    p, y, field = (a.copy() for a in small_data)
    w = np.random.default_rng(1).uniform(0.5, 2.0, p.size) if weighted else None
    before = [a.copy() for a in (p, y, w) if a is not None]
    model, _, X = fit_registered(name, data=(p, y, field), sample_weight=w)
    out = model.predict(p) if X is None else model.predict(p, X=X)
    for now, then in zip((p, y, w), before, strict=False):
        np.testing.assert_array_equal(now, then)
        assert now.flags.writeable
    assert out.flags.writeable and not np.shares_memory(out, p)  # the caller's own new array


@pytest.mark.parametrize(
    "make",
    [lambda: mcal.MCGrad(max_rounds=0), lambda: mcal.RegressionMCGrad(max_rounds=0)],
    ids=["mcgrad", "regression"],
)
def test_a_model_of_no_rounds_returns_a_new_writeable_array(make, rng):
    # no rounds is the identity: the checked input (a read-only view of the caller's array) must not come back
    p = rng.uniform(0.05, 0.95, 300)
    y = (rng.uniform(size=300) < p).astype(float)
    out = make().fit(p, y).predict(p)
    np.testing.assert_array_equal(out, p)
    assert out.flags.writeable and not np.shares_memory(out, p)
    out[0] = 2.0
    assert p[0] < 1.0


def _strided(a, how):
    """``a``'s values in a float64 view that is not C-contiguous: reversed twice (negative stride) or a column."""
    if how == "negative-stride":
        return np.array(a[::-1], dtype=np.float64)[::-1]
    block = np.zeros((a.size, 3))
    block[:, 1] = a
    return block[:, 1]


@pytest.mark.filterwarnings("error::UserWarning")
@pytest.mark.parametrize("how", ["negative-stride", "column"])
@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_registered_method_takes_strided_float64_inputs(name, how, fit_registered, small_data):
    # the checked inputs are views of the caller's arrays, so torch and LightGBM see their strides: the fits must
    # neither fail nor warn on them, and give what contiguous copies give
    p, y, field = small_data
    w = np.random.default_rng(1).uniform(0.5, 2.0, p.size)
    model, _, X = fit_registered(name, data=(p, y, field), sample_weight=w)
    views = [_strided(a, how) for a in (p, y, w)]
    strided, _, _ = fit_registered(name, data=(views[0], views[1], field), sample_weight=views[2])
    kwargs = {} if X is None else {"X": X}
    np.testing.assert_allclose(strided.predict(views[0], **kwargs), model.predict(p, **kwargs), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", sorted(n for n in METHODS if method_outcome(n) == "classification"))
def test_every_registered_method_asks_whether_y_prob_and_y_were_swapped(name, fit_registered, small_data):
    # fit(y, y_prob): the labels pass as scores in [0, 1], and the probabilities fail as labels (or, as soft
    # labels, pass, so that only a warning can tell)
    p, y, field = small_data
    hint = "did you pass y_prob and y in the wrong order? fit takes (y_prob, y)"
    if get_method(name).accepts_soft_labels:
        with pytest.warns(mcal.CalibrationWarning, match=re.escape(hint)):
            fit_registered(name, data=(y, p, field))
    else:
        with pytest.raises(ValueError, match=r"y must be binary .*" + re.escape(hint)):
            fit_registered(name, data=(y, p, field))


def test_labels_that_are_wrong_without_a_swap_get_no_hint(small_data):
    p, y, _ = small_data
    with pytest.raises(ValueError, match="y must be binary") as info:
        PlattScaling().fit(p, np.where(y == 1, 2.0, 0.0))  # labels 0/2: not probabilities
    assert "wrong order" not in str(info.value)
    with pytest.raises(ValueError, match="y must be binary") as info:
        PlattScaling().fit(np.clip(p, 0.01, 0.99), p)  # probabilities as labels, but the scores are no labels
    assert "wrong order" not in str(info.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mcal.MCGrad(max_rounds=0, early_stopping=None).fit(p, p)  # soft labels, in their place

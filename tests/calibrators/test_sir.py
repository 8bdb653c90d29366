"""Tests of smoothed isotonic regression (SIR, Deng et al. 2020)."""

import numpy as np
import pytest
from scipy.special import expit, logit

from mcal import IsotonicCalibration, SmoothedIsotonic, load, save
from mcal.metrics import ece, log_loss, roc_auc


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def miscalibrated(rng, n):
    """Under-confident scores: the true probability is expit(2 logit(p)) for a score p ~ U(0.02, 0.98)."""
    p = rng.uniform(0.02, 0.98, n)
    truth = expit(2.0 * logit(p))
    return p, (rng.random(n) < truth).astype(float), truth


def test_knots_match_a_hand_computed_example_with_a_pooled_violator():
    # 4 bins of width 0.25. Bin rates: [0, 0.25] 1/2 (mid 0.15), (0.25, 0.5] 0/2 (mid 0.35) -> violator,
    # pooled with the first: rate 1/4 at mid 0.25; (0.5, 0.75] 1/2 at mid 0.6; (0.75, 1] 2/2 at mid 0.9
    # -> a rate of 1 repeats the anchor (1, 1) and is dropped.
    p = np.array([0.1, 0.2, 0.3, 0.4, 0.55, 0.65, 0.85, 0.95])
    y = np.array([0, 1, 0, 0, 0, 1, 1, 1])
    cal = SmoothedIsotonic(n_bins=4, strategy="uniform").fit(p, y)
    assert np.allclose(cal.knots_x_, [0.0, 0.25, 0.6, 1.0])
    assert np.allclose(cal.knots_y_, [0.0, 0.25, 0.5, 1.0])
    assert np.allclose(cal.predict(np.array([0.125, 0.425, 0.8])), [0.125, 0.375, 0.75])


def test_map_is_continuous_and_strictly_increasing_even_with_single_class_end_bins(rng):
    p = rng.uniform(0, 1, 3_000)
    y = (rng.random(3_000) < p).astype(float)
    y[p < 0.1], y[p > 0.9] = 0.0, 1.0  # the first bins have no positives, the last no negatives
    cal = SmoothedIsotonic().fit(p, y)
    assert np.all(np.diff(cal.knots_x_) > 0) and np.all(np.diff(cal.knots_y_) > 0)
    grid = np.linspace(0.0, 1.0, 100_001)
    values = cal.predict(grid)
    assert np.all(np.diff(values) > 0)
    slopes = np.diff(cal.knots_y_) / np.diff(cal.knots_x_)
    # Lipschitz with the largest segment slope: no jump anywhere
    assert np.max(np.abs(np.diff(values))) <= slopes.max() * (grid[1] - grid[0]) * (1 + 1e-9)


def test_sir_beats_the_identity_on_held_out_data(rng):
    p, y, _ = miscalibrated(rng, 20_000)
    pt, yt, truth = miscalibrated(rng, 20_000)
    q = SmoothedIsotonic().fit(p, y).predict(pt)
    # identity: log loss 0.46 and ECE 0.10; 20 linear pieces approximate the S-shaped truth closely
    assert log_loss(yt, q) < log_loss(yt, truth) + 0.005 < log_loss(yt, pt)
    assert ece(yt, q) < 0.02 < ece(yt, pt)


def test_roc_auc_is_unchanged_unlike_isotonic_regression(rng):
    p, y, _ = miscalibrated(rng, 5_000)
    assert roc_auc(y, SmoothedIsotonic().fit(p, y).predict(p)) == pytest.approx(roc_auc(y, p), abs=1e-12)
    assert roc_auc(y, IsotonicCalibration().fit(p, y).predict(p)) != pytest.approx(roc_auc(y, p), abs=1e-6)


def test_integer_weights_equal_duplicated_rows(rng):
    p, y, _ = miscalibrated(rng, 2_000)
    w = rng.integers(0, 4, p.size)
    weighted = SmoothedIsotonic().fit(p, y, sample_weight=w)
    copied = SmoothedIsotonic().fit(np.repeat(p, w), np.repeat(y, w))
    assert np.allclose(weighted.knots_x_, copied.knots_x_, rtol=0, atol=1e-12)
    assert np.allclose(weighted.knots_y_, copied.knots_y_, rtol=0, atol=1e-12)


def test_fit_is_invariant_to_row_order(rng):
    p, y, _ = miscalibrated(rng, 2_000)
    order = rng.permutation(p.size)
    a, b = SmoothedIsotonic().fit(p, y), SmoothedIsotonic().fit(p[order], y[order])
    assert np.allclose(a.knots_x_, b.knots_x_, rtol=0, atol=1e-12) and np.allclose(
        a.knots_y_, b.knots_y_, rtol=0, atol=1e-12
    )


def test_save_load_round_trip_is_exact(rng, tmp_path):
    p, y, _ = miscalibrated(rng, 2_000)
    cal = SmoothedIsotonic(n_bins=7).fit(p, y)
    save(cal, tmp_path / "sir.json")
    again = load(tmp_path / "sir.json")
    assert np.array_equal(again.predict(p), cal.predict(p)) and again.n_bins == 7


def test_load_rejects_knots_that_do_not_increase(rng):
    p, y, _ = miscalibrated(rng, 500)
    data = SmoothedIsotonic().fit(p, y).to_dict()
    values = data["state"]["knots_y_"]["__ndarray__"]
    values[1] = values[2]
    with pytest.raises(ValueError, match="knots_y_ must be a strictly increasing"):
        SmoothedIsotonic.from_dict(data)


@pytest.mark.parametrize(("n_bins", "error"), [(0, ValueError), (-3, ValueError), (2.5, TypeError), (True, TypeError)])
def test_bad_n_bins_raises(n_bins, error):
    with pytest.raises(error, match="n_bins must be a positive integer"):
        SmoothedIsotonic(n_bins=n_bins).fit([0.2, 0.7], [0, 1])


def test_scores_out_of_range_raise():
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\]"):
        SmoothedIsotonic().fit([0.2, 1.7], [0, 1])


def test_saturated_scores_pooled_with_lower_bins_are_mapped_to_the_anchor(rng):
    # documented consequence of the (1, 1) anchor: rows at exactly 1 with a positive rate of 0.2 are pooled
    # with the bins below (rates near 0.9) and the map still sends a score of 1 to 1
    p = np.r_[rng.uniform(0.85, 0.95, 500), np.ones(100)]
    y = np.r_[(rng.random(500) < 0.9).astype(float), np.tile([1.0, 0.0, 0.0, 0.0, 0.0], 20)]
    cal = SmoothedIsotonic(strategy="uniform").fit(p, y)
    assert cal.knots_x_[-1] == 1.0 and cal.knots_y_[-1] == 1.0 and cal.knots_x_[-2] < 0.95
    assert cal.predict(np.array([1.0])).tolist() == [1.0]
    # while the same rows alone in their block keep their rate
    alone = SmoothedIsotonic(strategy="uniform").fit(
        np.r_[rng.uniform(0.05, 0.15, 500), np.ones(100)], np.r_[np.zeros(450), np.ones(50), y[500:]]
    )
    assert alone.predict(np.array([1.0])).tolist() == [0.2]


def test_a_score_on_a_bin_edge_falls_in_the_bin_it_closes():
    # vote fractions j / 6 with n_bins=6: the edges came from np.linspace, whose 5 * (1/6) = 0.8333333333333333
    # lies below the score 5/6 = 0.8333333333333334, which joined the bin of the score 1
    p = np.repeat(np.arange(1, 7) / 6, 10)
    y = np.concatenate([np.r_[np.ones(j), np.zeros(10 - j)] for j in range(1, 7)])
    cal = SmoothedIsotonic(n_bins=6, strategy="uniform").fit(p, y)
    np.testing.assert_allclose(cal.knots_x_, np.arange(7) / 6, rtol=0, atol=1e-15)
    np.testing.assert_allclose(cal.knots_y_, np.r_[0.0, np.arange(1, 7) / 10], rtol=0, atol=1e-15)


def test_more_bins_than_memory_holds_give_the_knots_of_one_score_per_bin():
    # one array entry per bin was allocated: n_bins = 10**12 asked numpy for terabytes
    p = np.repeat(np.arange(1, 100) / 100, 3)
    y = (np.random.default_rng(0).random(p.size) < p).astype(float)
    huge = SmoothedIsotonic(n_bins=10**12, strategy="uniform").fit(p, y)
    fine = SmoothedIsotonic(n_bins=1000, strategy="uniform").fit(p, y)
    np.testing.assert_array_equal(huge.knots_x_, fine.knots_x_)
    np.testing.assert_array_equal(huge.knots_y_, fine.knots_y_)


def test_pooled_knot_sits_at_the_weight_averaged_bin_midpoint():
    # bins (0, .5], (.5, 1]: rates 1 (weight 2, midpoint .2) and .75 (weight 4, midpoint .7) violate the order and
    # pool to 5/6 at (2 * .2 + 4 * .7) / 6
    model = SmoothedIsotonic(n_bins=2, strategy="uniform").fit(
        np.array([0.1, 0.3, 0.6, 0.8]), np.array([1.0, 1.0, 0.0, 1.0]), sample_weight=np.array([1.0, 1.0, 1.0, 3.0])
    )
    np.testing.assert_allclose(model.knots_x_, [0.0, 3.2 / 6.0, 1.0], rtol=1e-14)
    np.testing.assert_allclose(model.knots_y_, [0.0, 5.0 / 6.0, 1.0], rtol=1e-14)


def test_a_score_on_a_bin_edge_belongs_to_the_bin_below_it():
    # 0.14 * 100 rounds to 14.000000000000002; 0.14 closes the bin (0.13, 0.14] that also holds 0.135
    model = SmoothedIsotonic(n_bins=100, strategy="uniform").fit(
        np.array([0.135, 0.14, 0.5]), np.array([0.0, 1.0, 1.0])
    )
    np.testing.assert_allclose(model.knots_x_, [0.0, 0.1375, 1.0], rtol=1e-14)
    np.testing.assert_allclose(model.knots_y_, [0.0, 0.5, 1.0], rtol=1e-14)


def over_confident(rng, n, sharpness=4.0):
    """True log-odds z ~ N(-1, 1.5^2); the base model reports expit(sharpness * z) (log loss about 0.87)."""
    z = rng.normal(-1.0, 1.5, n)
    return expit(sharpness * z), (rng.random(n) < expit(z)).astype(float)


@pytest.mark.parametrize("sharpness", [3.0, 4.0, 5.0])
def test_sir_is_close_to_isotonic_on_an_over_confident_base_model(rng, sharpness):
    # equal-width bins put the outer knots at the middle of the two outer bins, which hold most of the rows, and
    # the segments to the anchors (0, 0) and (1, 1) pulled every row beyond them toward 0 or 1: held-out log loss
    # 0.55 / 0.65 / 0.78 against isotonic's 0.48 for the three sharpnesses
    p, y = over_confident(rng, 40_000, sharpness)
    pt, yt = over_confident(rng, 40_000, sharpness)
    iso = log_loss(yt, IsotonicCalibration().fit(p, y).predict(pt))
    sir = SmoothedIsotonic().fit(p, y)
    assert log_loss(yt, pt) > 0.7
    assert log_loss(yt, sir.predict(pt)) < iso + 0.01
    assert roc_auc(yt, sir.predict(pt)) == pytest.approx(roc_auc(yt, pt), abs=1e-12)  # still strictly increasing


def test_uniform_bins_leave_most_over_confident_rows_on_the_anchor_segments(rng):
    # the cause above, kept as a choice (strategy="uniform"): the reference code's bins on [0, 1]
    p, y = over_confident(rng, 40_000)
    sir = SmoothedIsotonic(strategy="uniform").fit(p, y)
    beyond = (p < sir.knots_x_[1]) | (p > sir.knots_x_[-2])
    assert beyond.mean() > 0.4
    quantile = SmoothedIsotonic().fit(p, y)
    assert ((p < quantile.knots_x_[1]) | (p > quantile.knots_x_[-2])).mean() < 0.1  # the outer bins, pooled


def test_quantile_knots_match_a_hand_computed_example():
    # n_bins=2 on 6 equal-weight scores: the median edge is the third score, 0.3; bins {0.1, 0.2, 0.3} (rate 1/3,
    # midpoint 0.2) and {0.7, 0.8, 0.9} (rate 2/3, midpoint 0.8); uniform bins would split at 0.5 the same way
    p = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    y = np.array([0, 1, 0, 1, 0, 1])
    cal = SmoothedIsotonic(n_bins=2).fit(p, y)
    np.testing.assert_allclose(cal.knots_x_, [0.0, 0.2, 0.8, 1.0], rtol=1e-14)
    np.testing.assert_allclose(cal.knots_y_, [0.0, 1 / 3, 2 / 3, 1.0], rtol=1e-14)
    # scores all below 0.5: uniform bins see one bin, quantile bins two
    q = np.array([0.1, 0.2, 0.3, 0.35, 0.4, 0.45])
    assert SmoothedIsotonic(n_bins=2, strategy="uniform").fit(q, y).knots_x_.size == 3
    np.testing.assert_allclose(SmoothedIsotonic(n_bins=2).fit(q, y).knots_x_, [0.0, 0.2, 0.4, 1.0], rtol=1e-14)


@pytest.mark.parametrize(("strategy", "error"), [("equal", ValueError), (None, TypeError)])
def test_bad_strategy_raises(strategy, error):
    with pytest.raises(error, match="strategy must be 'uniform' or 'quantile'"):
        SmoothedIsotonic(strategy=strategy).fit([0.2, 0.7], [0, 1])

"""What the calibration figures draw: Wilson intervals per reliability bin and the thinned cumulative curve."""

import re

import numpy as np
import pytest
from scipy.stats import binomtest

from mcal.metrics import (
    cumulative_curve,
    ecce,
    ecce_std,
    reliability_curve,
    reliability_intervals,
    wilson_interval,
)


def test_wilson_interval_hand_computed():
    # 8 of 10, 95%: centre (0.8 + z^2/20) / (1 + z^2/10), z = 1.959964 -> [0.49016, 0.94332]
    lo, hi = wilson_interval(0.8, 10, 0.95)
    assert lo == pytest.approx(0.490162, abs=1e-6)
    assert hi == pytest.approx(0.943318, abs=1e-6)


@pytest.mark.parametrize("k,n", [(0, 5), (1, 7), (13, 40), (40, 40), (250, 1000)])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.999])
def test_wilson_interval_agrees_with_scipy(k, n, confidence):
    ref = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    lo, hi = wilson_interval(k / n, n, confidence)
    assert lo == pytest.approx(ref.low, abs=1e-12)
    assert hi == pytest.approx(ref.high, abs=1e-12)


def test_wilson_interval_is_nan_for_an_empty_bin_and_stays_in_unit_interval():
    lo, hi = wilson_interval(np.array([np.nan, 0.0, 1.0]), np.array([0.0, 3.0, 3.0]))
    assert np.isnan(lo[0]) and np.isnan(hi[0])
    assert lo[1] == 0.0 and hi[2] == 1.0
    assert 0.0 < hi[1] < 1.0 and 0.0 < lo[2] < 1.0


def test_reliability_intervals_cover_the_diagonal_at_the_nominal_rate(rng):
    """On calibrated-by-construction data each bin's interval holds its mean score about 95% of the time."""
    covered = []
    for _ in range(60):
        p = rng.uniform(size=3000)
        y = (rng.uniform(size=p.size) < p).astype(float)
        iv = reliability_intervals(y, p, n_bins=10)
        covered.append(iv.covers(iv.curve.mean_predicted))
    rate = np.mean(covered)  # 600 bins; 95% coverage has sd ~0.009
    assert 0.92 <= rate <= 0.98


def test_calibrated_sample_lies_within_its_intervals_and_a_shifted_one_does_not(rng):
    p = rng.uniform(0.02, 0.98, 20_000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    calibrated = reliability_intervals(y, p, n_bins=10, confidence=0.999)
    assert calibrated.covers(calibrated.curve.mean_predicted).all()
    shifted = reliability_intervals(y, np.clip(p + 0.08, 0, 1), n_bins=10, confidence=0.999)
    assert not shifted.covers(shifted.curve.mean_predicted)[2:8].any()


def test_reliability_intervals_contain_the_observed_frequency_and_match_the_curve(rng):
    p = rng.uniform(size=500)
    y = (rng.uniform(size=p.size) < p).astype(float)
    iv = reliability_intervals(y, p, n_bins=7, strategy="quantile")
    ref = reliability_curve(y, p, n_bins=7, strategy="quantile")
    np.testing.assert_array_equal(iv.curve.fraction_positive, ref.fraction_positive)
    np.testing.assert_array_equal(iv.effective_count, ref.count)
    assert iv.covers(iv.curve.fraction_positive).all()


def test_reliability_intervals_use_the_kish_effective_size_under_weights(rng):
    p = rng.uniform(size=400)
    y = (rng.uniform(size=p.size) < p).astype(float)
    w = rng.uniform(0.2, 3.0, p.size)
    iv = reliability_intervals(y, p, sample_weight=w, n_bins=4)
    b = np.minimum((p * 4).astype(int), 3)
    expected = np.array([w[b == k].sum() ** 2 / (w[b == k] ** 2).sum() for k in range(4)])
    np.testing.assert_allclose(iv.effective_count, expected, rtol=1e-12)
    scaled = reliability_intervals(y, p, sample_weight=10 * w, n_bins=4)
    np.testing.assert_allclose(scaled.lower, iv.lower, rtol=1e-12)
    np.testing.assert_allclose(scaled.upper, iv.upper, rtol=1e-12)


def test_unit_weights_give_the_unweighted_intervals(rng):
    p = rng.uniform(size=300)
    y = (rng.uniform(size=p.size) < p).astype(float)
    a = reliability_intervals(y, p)
    b = reliability_intervals(y, p, sample_weight=np.ones(p.size))
    np.testing.assert_allclose(a.lower, b.lower, rtol=1e-12)
    np.testing.assert_allclose(a.upper, b.upper, rtol=1e-12)


def test_empty_bins_have_nan_intervals_and_are_not_covered():
    iv = reliability_intervals([0, 1, 1], [0.05, 0.91, 0.95], n_bins=10)
    assert np.isnan(iv.lower[1:9]).all() and np.isnan(iv.upper[1:9]).all()
    assert not iv.covers(0.5)[1:9].any()


@pytest.mark.parametrize(
    ("confidence", "error"),
    [(0, ValueError), (1, ValueError), (1.5, ValueError), (-0.1, ValueError), (True, TypeError), ("0.9", TypeError)],
)
def test_bad_confidence_is_rejected(confidence, error):
    with pytest.raises(error, match="confidence must be a number in \\(0, 1\\)"):
        reliability_intervals([0, 1], [0.2, 0.8], confidence=confidence)


def test_cumulative_curve_hand_computed_with_ties_and_weights():
    # scores 0.2 (x2, tie block), 0.6, 0.9; w = 1, 1, 2, 1 -> W = 5
    y, p, w = [1, 0, 0, 1], [0.2, 0.2, 0.6, 0.9], [1, 1, 2, 1]
    c = cumulative_curve(y, p, sample_weight=w)
    np.testing.assert_allclose(c.fraction, [0.0, 0.4, 0.8, 1.0])
    # block 0.2: (0.8 - 0.2)/5 = 0.12; then -2*0.6/5 = -0.24 -> -0.12; then +0.1/5 -> -0.10
    np.testing.assert_allclose(c.difference, [0.0, 0.12, -0.12, -0.10])
    np.testing.assert_allclose(c.score, [0.2, 0.2, 0.6, 0.9])
    assert c.n_distinct == 3
    assert c.sigma == pytest.approx(ecce_std(y, p, sample_weight=w))


@pytest.mark.parametrize("max_points", [4, 7, 100, 2000])
def test_thinned_cumulative_curve_keeps_the_ecce_range_and_the_ends(rng, max_points):
    p = rng.uniform(size=50_000)
    y = (rng.uniform(size=p.size) < np.clip(p + 0.05 * np.sin(12 * p), 0, 1)).astype(float)
    full = cumulative_curve(y, p, max_points=10**6)
    c = cumulative_curve(y, p, max_points=max_points)
    assert c.fraction.size <= max_points
    assert c.difference.max() - c.difference.min() == pytest.approx(ecce(y, p), rel=1e-12)
    assert (c.fraction[0], c.difference[0]) == (0.0, 0.0)
    assert c.fraction[-1] == 1.0 and c.difference[-1] == full.difference[-1]
    assert np.all(np.diff(c.fraction) > 0)
    # every kept point lies on the full walk
    idx = np.searchsorted(full.fraction, c.fraction)
    np.testing.assert_array_equal(full.difference[idx], c.difference)


@pytest.mark.parametrize(
    ("max_points", "error"), [(3, ValueError), (0, ValueError), (2.5, TypeError), (True, TypeError), ("10", TypeError)]
)
def test_bad_max_points_is_a_value_or_type_error(max_points, error):
    # a float, bool or string max_points was a ValueError; STYLE.md: TypeError for a bad type
    with pytest.raises(error, match=rf"^max_points must be an integer >= 4; got {re.escape(repr(max_points))}"):
        cumulative_curve([0, 1], [0.2, 0.8], max_points=max_points)


def test_curves_reject_nan_scores():
    with pytest.raises(ValueError, match="y_prob must be finite"):
        cumulative_curve([0, 1], [np.nan, 0.5])
    with pytest.raises(ValueError, match="y_prob must be finite"):
        reliability_intervals([0, 1], [np.nan, 0.5])


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((1.2, 10), ValueError, r"fraction must hold proportions in \[0, 1\]; got values from 1.2 to 1.2"),
        ((np.array([0.5, -0.1]), 10), ValueError, r"fraction must hold proportions in \[0, 1\]; got values from -0.1"),
        ((0.5, -3), ValueError, "n must hold non-negative sample sizes; got -3.0"),
        ((0.5, 10, "0.9"), TypeError, "confidence must be a number in \\(0, 1\\); got '0.9' of type str"),
        ((0.5, 10, 1.0), ValueError, "confidence must be a number in \\(0, 1\\); got 1.0"),
    ],
)
def test_wilson_interval_refuses_impossible_inputs(args, error, match):
    # a proportion of 1.2 or a negative size gave bounds silently (clipped into [0, 1] or NaN)
    with pytest.raises(error, match=match):
        wilson_interval(*args)


def test_wilson_interval_takes_a_numpy_float_confidence():
    lo, hi = wilson_interval(0.8, 10, np.float32(0.95))  # was refused as not a number
    np.testing.assert_allclose([lo, hi], wilson_interval(0.8, 10, float(np.float32(0.95))), rtol=1e-12)

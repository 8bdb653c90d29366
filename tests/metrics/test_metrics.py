"""Core metrics: hand-computed references (ties, weights, empty bins), invariants and independent checks."""

import re
import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.calibration import calibration_curve
from sklearn.metrics import average_precision_score, roc_auc_score

from mcal._binning import quantile_bin_ids, uniform_bin_ids, weighted_quantiles
from mcal._shared.brownian import brownian_range_sf
from mcal.metrics import (
    brier_score,
    calibration_summary,
    ecce,
    ecce_pvalue,
    ecce_sigma,
    ecce_std,
    ece,
    f_rce,
    log_loss,
    mce,
    pcoc,
    pr_auc,
    reliability_curve,
    roc_auc,
)

Y = np.array([1, 0, 0, 0, 1, 1])
P = np.array([0.2, 0.2, 0.6, 0.6, 0.9, 0.05])
W = np.array([1.0, 1.0, 2.0, 1.0, 0.5, 3.0])


def test_ece_hand_computed_with_weights():
    # bins of width 0.5: bin 0 = {0.2, 0.2, 0.05}, bin 1 = {0.6, 0.6, 0.9}
    # bin 0: sum w(y-p) = 1*0.8 + 1*(-0.2) + 3*0.95 = 3.45 ; bin 1: 2*(-0.6) + 1*(-0.6) + 0.5*0.1 = -1.75
    assert ece(Y, P, sample_weight=W, n_bins=2) == pytest.approx((3.45 + 1.75) / 8.5, abs=1e-15)


def test_ece_quantile_bins_hand_computed():
    # unweighted, 2 quantile bins: median edge = 0.2 (inverted CDF: the 3rd of 6 sorted scores), bins
    # [0.05, 0.2] and (0.2, 0.9], 3 rows each
    # bin 0 = {0.05, 0.2, 0.2}: 0.95 + 0.8 - 0.2 = 1.55 ; bin 1 = {0.6, 0.6, 0.9}: -0.6 - 0.6 + 0.1 = -1.1
    assert ece(Y, P, n_bins=2, strategy="quantile") == pytest.approx((1.55 + 1.1) / 6, abs=1e-15)


@pytest.mark.parametrize("n_bins", [2, 4, 8])
def test_quantile_bins_of_distinct_scores_hold_equal_counts(n_bins):
    p = np.arange(1, 9) / 10
    c = reliability_curve(np.arange(8) % 2, p, n_bins=n_bins, strategy="quantile")
    assert c.count.tolist() == [8 // n_bins] * n_bins


def test_quantile_reliability_curve_agrees_with_sklearn_calibration_curve(rng):
    # 500 distinct scores in 10 bins: 50 rows each, however level * n rounds (0.3 * 500 = 150.00000000000003)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    c = reliability_curve(y, p, n_bins=10, strategy="quantile")
    frac, mean = calibration_curve(y, p, n_bins=10, strategy="quantile")
    assert c.count.tolist() == [50] * 10
    np.testing.assert_allclose(c.fraction_positive, frac, rtol=1e-12)
    np.testing.assert_allclose(c.mean_predicted, mean, rtol=1e-12)


def test_quantile_edges_compare_levels_exactly_not_within_a_tolerance():
    # the cumulative weight of the first row, 0.5 - 1e-14, is below the median level 0.5: the median is the second
    # score and both rows share the first bin (levels lowered by 1e-12 put the edge on the first row)
    c = reliability_curve([0, 1], [0.3, 0.6], sample_weight=[0.5 - 1e-14, 0.5 + 1e-14], n_bins=2, strategy="quantile")
    assert c.bin_edges.tolist() == [0.3, 0.6, 0.6] and c.count.tolist() == [2, 0]


def test_weighted_quantiles_of_integer_weights_reach_each_level_exactly():
    # 500 unit weights: the level 3 / 10 is reached at the 150th sorted value (0.3 * 500 rounds above 150)
    edges = weighted_quantiles(np.arange(500.0), np.ones(500), 10)
    assert edges.tolist() == [0.0] + [50.0 * k - 1 for k in range(1, 11)]


@pytest.mark.parametrize(("n", "n_bins"), [(500, 10), (600, 12), (300, 3), (1000, 8)])
def test_quantile_ece_agrees_with_sklearn_calibration_curve(rng, n, n_bins):
    # comparable where every bin holds n / n_bins distinct scores: sklearn's interpolated percentiles then fall
    # between the same two scores as the inverted-CDF edges, and ACE = mean over bins of |frequency - mean score|
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p**1.5).astype(int)
    frac, mean = calibration_curve(y, p, n_bins=n_bins, strategy="quantile")
    assert frac.size == n_bins
    assert ece(y, p, n_bins=n_bins, strategy="quantile") == pytest.approx(np.mean(np.abs(frac - mean)), rel=1e-12)


@pytest.mark.parametrize("n", [*list(range(1, 60)), 97, 1000, 1024, 10**6 + 3])
def test_uniform_bin_ids_equal_searchsorted_on_linspace_edges(rng, n):
    edges = np.linspace(0.0, 1.0, n + 1)
    p = np.clip(np.concatenate([rng.uniform(size=50), edges, np.nextafter(edges, 2), np.nextafter(edges, -1)]), 0, 1)
    np.testing.assert_array_equal(uniform_bin_ids(p, n), np.searchsorted(edges[1:-1], p, side="right"))


@pytest.mark.parametrize("n_bins", [1, 2, 7, 100, 999])
def test_quantile_bin_ids_equal_searchsorted_on_the_quantile_edges(rng, n_bins):
    p = np.round(rng.uniform(size=300), 2)  # ties
    w = rng.integers(0, 4, 300).astype(float)
    edges = weighted_quantiles(p, w, n_bins)
    np.testing.assert_array_equal(quantile_bin_ids(p, w, n_bins), np.searchsorted(edges[1:-1], p, side="left"))


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_with_a_trillion_bins_puts_each_distinct_score_in_its_own_bin(strategy):
    # bins {0.2}: 1 - 0.2 - 0.2 = 0.6 and {0.7}: 1 - 0.7 = 0.3; 10**12 bins once allocated 8 TB of bin sums
    assert ece([1, 0, 1], [0.2, 0.2, 0.7], n_bins=10**12, strategy=strategy) == pytest.approx(0.3, abs=1e-15)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_over_occupied_bins_equals_ece_from_the_full_reliability_curve(rng, strategy):
    # more bins than rows takes the occupied-bins path; the reliability curve counts every bin
    p, w = rng.uniform(size=200), rng.uniform(0, 2, 200)
    y = (rng.uniform(size=200) < p).astype(int)
    c = reliability_curve(y, p, sample_weight=w, n_bins=5000, strategy=strategy)
    full = np.nansum(c.weight * np.abs(c.fraction_positive - c.mean_predicted)) / w.sum()
    assert ece(y, p, sample_weight=w, n_bins=5000, strategy=strategy) == pytest.approx(full, rel=1e-12)


def test_ece_is_zero_when_every_bin_is_calibrated():
    assert ece([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]) == 0.0


def test_reliability_curve_keeps_empty_bins():
    c = reliability_curve(Y, P, n_bins=4)
    assert c.count.tolist() == [3, 0, 2, 1]
    assert c.empty.tolist() == [False, True, False, False]
    assert np.isnan(c.mean_predicted[1]) and np.isnan(c.fraction_positive[1])
    assert c.mean_predicted[0] == pytest.approx(0.15)
    assert c.fraction_positive[0] == pytest.approx(2 / 3)


def test_score_one_falls_in_last_uniform_bin():
    c = reliability_curve([1, 0], [1.0, 0.0], n_bins=10)
    assert c.count[-1] == 1 and c.count[0] == 1


def test_ecce_hand_computed_with_tie_blocks():
    y, p, w = np.array([1, 0, 0, 0]), np.array([0.2, 0.2, 0.6, 0.6]), np.array([1.0, 1.0, 2.0, 1.0])
    # tie blocks: p=0.2 sums 0.8 - 0.2 = 0.6 -> C = 0.12 ; p=0.6 sums -1.2 - 0.6 -> C = -0.24 ; range with C0 = 0
    assert ecce(y, p, sample_weight=w) == pytest.approx(0.36, abs=1e-15)
    assert ecce_std(y, p, sample_weight=w) == pytest.approx(np.sqrt(0.16 + 0.16 + 4 * 0.24 + 0.24) / 5, abs=1e-15)


def test_ecce_sigma_is_ecce_in_units_of_ecce_std_hand_computed():
    # the tie-block example above: ECCE 0.36, sigma sqrt(1.52) / 5
    y, p, w = np.array([1, 0, 0, 0]), np.array([0.2, 0.2, 0.6, 0.6]), np.array([1.0, 1.0, 2.0, 1.0])
    with pytest.warns(FutureWarning, match="returned sigma before, which is now ecce_std"):
        value = ecce_sigma(y, p, sample_weight=w)
    assert value == pytest.approx(0.36 / (np.sqrt(1.52) / 5), rel=1e-14)
    # four rows: ECCE 0.175, sigma sqrt(0.09 + 0.21 + 0.24 + 0.09) / 4
    with pytest.warns(FutureWarning):
        assert ecce_sigma([0, 1, 0, 1], [0.1, 0.3, 0.6, 0.9]) == pytest.approx(0.175 / (np.sqrt(0.63) / 4), rel=1e-14)
    # sigma 0 (scores 0 and 1): 0 when calibrated, inf when not, as mce's table
    with pytest.warns(FutureWarning):
        assert ecce_sigma([0, 1], [0.0, 1.0]) == 0.0 and ecce_sigma([1, 0], [0.0, 1.0]) == np.inf


def test_ecce_sigma_has_one_meaning_across_the_api(rng):
    # mce's table column, its global value, the summary column and the p-value's statistic
    p = rng.uniform(0.05, 0.95, 400)
    y = (rng.uniform(size=400) < np.clip(p + 0.1, 0, 1)).astype(float)
    with pytest.warns(FutureWarning):
        value = ecce_sigma(y, p)
    result = mce(y, p)  # no segments: the one segment is all rows
    assert value == pytest.approx(result.global_ecce_sigma, rel=1e-12)
    assert value == pytest.approx(result.table["ecce_sigma"].iloc[0], rel=1e-12)
    assert value == pytest.approx(calibration_summary(y, {"p": p}).loc["p", "ecce_sigma_scale"], rel=1e-12)
    assert value == pytest.approx(ecce(y, p) / ecce_std(y, p), rel=1e-12)


def test_ecce_std_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ecce_std([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]) == 0.25


def test_ecce_does_not_depend_on_order_within_ties():
    y, p = np.array([1, 0, 1, 0, 0]), np.array([0.3, 0.3, 0.3, 0.7, 0.7])
    perm = np.array([1, 0, 4, 2, 3])
    assert ecce(y, p) == ecce(y[perm], p[perm])


def test_brownian_range_series_matches_reference_thresholds():
    # the MCGrad reference's thresholds: 2.4977 sigma <-> p = 0.05 and 4.7081 sigma <-> p = 1e-5
    assert brownian_range_sf(2.4977)[0] == pytest.approx(0.05, rel=1e-3)
    assert brownian_range_sf(4.7081)[0] == pytest.approx(1e-5, rel=1e-3)


def test_brownian_range_tail_of_huge_ranges_is_zero_without_the_series():
    # the series needs about 4x terms: ECCE/sigma of 1e8 (a near-zero sigma) once asked for 1.25 TiB
    assert brownian_range_sf(np.array([8.0, 19.99, 20.0, 1e8, np.inf])).tolist() == pytest.approx(
        [brownian_range_sf(8.0)[0], 0.0, 0.0, 0.0, 0.0]
    )
    assert 0.0 < brownian_range_sf(8.0)[0] < 1e-14  # the last value above the 1e-15 floor


def test_brownian_range_series_agrees_with_simulated_range(rng):
    # independent derivation: simulate Brownian motion on a fine grid; the discrete range is slightly smaller,
    # so the simulated tail is a lower bound within the discretisation error (about 0.58 * 2 / sqrt(n_steps))
    n_paths, n_steps = 4000, 2000
    walk = np.cumsum(rng.standard_normal((n_paths, n_steps)), axis=1) / np.sqrt(n_steps)
    walk = np.concatenate([np.zeros((n_paths, 1)), walk], axis=1)
    r = walk.max(axis=1) - walk.min(axis=1)
    for x in (1.5, 2.0, 2.5):
        assert np.mean(r > x) == pytest.approx(brownian_range_sf(x)[0], abs=0.035)


def test_ecce_pvalue_is_roughly_uniform_on_calibrated_data(rng):
    pvals = []
    for _ in range(300):
        p = rng.uniform(0.05, 0.95, 1000)
        y = (rng.uniform(size=p.size) < p).astype(float)
        pvals.append(ecce_pvalue(y, p))
    pvals = np.array(pvals)
    assert 0.02 <= np.mean(pvals < 0.1) <= 0.18
    assert 0.35 <= np.mean(pvals < 0.5) <= 0.65


def test_ecce_detects_shifted_scores(rng):
    p = rng.uniform(0.05, 0.95, 5000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    assert ecce_pvalue(y, np.clip(p + 0.05, 0, 1)) < 1e-6


def test_pcoc_and_f_rce_hand_computed_with_weights():
    y, p = np.array([1, 0, 0, 1, 0]), np.array([0.5, 0.5, 0.2, 0.4, 0.1])
    w = np.array([2.0, 1.0, 1.0, 1.0, 1.0])
    field = np.array(["a", "a", "b", "b", "c"])
    assert pcoc(y, p, sample_weight=w) == pytest.approx((1.0 + 0.5 + 0.2 + 0.4 + 0.1) / 3.0)
    # a: N=3, |2*0.5 - 0.5| / (2*(1+e) + 1*e) ; b: N=2, |(-0.2) + 0.6| / (1 + 2e) ; c: N=1, 0.1 / e
    e = 0.01
    expected = (3 * 0.5 / (2 + 3 * e) + 2 * 0.4 / (1 + 2 * e) + 1 * 0.1 / e) / 6
    assert f_rce(y, p, field=field, sample_weight=w) == pytest.approx(expected, rel=1e-12)


def test_f_rce_is_zero_when_each_field_is_calibrated_in_the_large():
    assert f_rce([1, 0, 1, 0], [0.5, 0.5, 0.9, 0.1], field=[1, 1, 2, 2]) == pytest.approx(0.0)


def test_weighted_metrics_equal_duplicated_rows(rng):
    p = rng.uniform(0, 1, 300)
    y = (rng.uniform(size=300) < p).astype(float)
    k = rng.integers(0, 4, 300)
    k[0] = 1
    field = rng.integers(0, 3, 300)
    rep = np.repeat(np.arange(300), k)
    for fn in (log_loss, brier_score, roc_auc, pr_auc, ece, ecce, ecce_std, pcoc):
        a = fn(y, p, sample_weight=k.astype(float))
        b = fn(y[rep], p[rep])
        if fn is ecce_std:  # sigma uses sum w^2 p(1-p): weights are not frequency weights there
            b = np.sqrt(np.sum(k**2 * p * (1 - p))) / k.sum()
        assert a == pytest.approx(b, rel=1e-10), fn.__name__
    assert f_rce(y, p, field=field, sample_weight=k.astype(float)) == pytest.approx(
        f_rce(y[rep], p[rep], field=field[rep])
    )


def test_metrics_are_permutation_invariant(rng):
    p = rng.uniform(0, 1, 500)
    y = (rng.uniform(size=500) < p).astype(float)
    perm = rng.permutation(500)
    for fn in (log_loss, brier_score, roc_auc, pr_auc, ece, ecce, ecce_std, ecce_pvalue, pcoc):
        assert fn(y, p) == pytest.approx(fn(y[perm], p[perm]), rel=1e-12)


def test_rank_metrics_agree_with_sklearn(rng):
    p = rng.uniform(0, 1, 400)
    y = (rng.uniform(size=400) < p).astype(float)
    w = rng.uniform(0, 2, 400)
    assert roc_auc(y, p, sample_weight=w) == roc_auc_score(y, p, sample_weight=w)
    assert pr_auc(y, p, sample_weight=w) == average_precision_score(y, p, sample_weight=w)


def test_log_loss_is_finite_for_scores_of_zero_and_one():
    assert np.isfinite(log_loss([0, 1, 1], [0.0, 1.0, 0.0]))


def test_brier_hand_computed():
    assert brier_score([1, 0], [0.8, 0.4], sample_weight=[1, 3]) == pytest.approx((0.04 + 3 * 0.16) / 4)


def test_auc_unchanged_by_strictly_monotone_map(rng):
    p = rng.uniform(0.01, 0.99, 1000)
    y = (rng.uniform(size=1000) < p).astype(float)
    assert roc_auc(y, expit(3 * np.log(p / (1 - p)) + 1)) == pytest.approx(roc_auc(y, p), abs=1e-12)


@pytest.mark.parametrize(
    "y_true, y_prob, match",
    [
        ([0, 1], [0.5, np.nan], "finite"),
        ([0, 1], [0.5, np.inf], "finite"),
        ([0, 1], [0.5, 1.2], r"\[0, 1\]"),
        ([0, 2], [0.5, 0.5], "binary"),
        (["no", "yes"], [0.5, 0.5], "0/1 or bool"),
        ([0, 1, 1], [0.5, 0.5], "same number of samples"),
        ([], [], "empty"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_message(y_true, y_prob, match):
    for fn in (ece, ecce, log_loss, pcoc):
        with pytest.raises(ValueError, match=match):
            fn(y_true, y_prob)


@pytest.mark.parametrize(
    "w, match", [([1, -1], "non-negative"), ([0, 0], "positive sum"), ([1], "length 2"), ([1, np.nan], "finite")]
)
def test_bad_weights_are_rejected(w, match):
    with pytest.raises(ValueError, match=match):
        ece([0, 1], [0.2, 0.8], sample_weight=w)


def test_auc_with_one_class_raises():
    with pytest.raises(ValueError, match="both classes"):
        roc_auc([1, 1], [0.2, 0.3])


def test_pcoc_without_positives_raises():
    with pytest.raises(ValueError, match="positive label"):
        pcoc([0, 0], [0.2, 0.3])


@pytest.mark.parametrize(
    ("epsilon", "error"),
    [
        ("0.1", TypeError),
        (None, TypeError),
        (True, TypeError),
        (-0.1, ValueError),
        (np.nan, ValueError),
        (np.inf, ValueError),
    ],
)
def test_f_rce_rejects_an_epsilon_that_is_not_a_non_negative_finite_number(epsilon, error):
    # strings and None reached numpy's isfinite (a TypeError about ufunc casting); True counted as 1
    with pytest.raises(error, match=rf"epsilon must be a non-negative finite number; got {re.escape(repr(epsilon))}"):
        f_rce([0, 1], [0.2, 0.3], field=["a", "b"], epsilon=epsilon)


@pytest.mark.parametrize(("n_bins", "error"), [(0, ValueError), ("3", TypeError), (2.0, TypeError), (True, TypeError)])
def test_n_bins_of_a_bad_value_or_type_is_a_value_or_type_error(n_bins, error):
    # a string, float or bool n_bins was a ValueError; STYLE.md: TypeError for a bad type
    with pytest.raises(error, match=rf"n_bins must be a positive integer; got {re.escape(repr(n_bins))}"):
        ece([0, 1], [0.2, 0.3], n_bins=n_bins)


@pytest.mark.parametrize(
    ("strategy", "error"),
    [("kmeans", ValueError), ("Uniform", ValueError), (None, TypeError), (0, TypeError), (["uniform"], TypeError)],
)
@pytest.mark.parametrize("metric", [ece, reliability_curve])
def test_bad_strategy_is_a_value_or_type_error(metric, strategy, error):
    # a strategy that is not a string was a ValueError
    with pytest.raises(error, match=rf"^strategy must be 'uniform' or 'quantile'; got {re.escape(repr(strategy))}"):
        metric([0, 1], [0.2, 0.3], strategy=strategy)


def test_calibration_summary_rows_match_single_metrics(rng):
    p = rng.uniform(0, 1, 300)
    y = (rng.uniform(size=300) < p).astype(float)
    t = calibration_summary(y, {"a": p, "b": p**2}, field=rng.integers(0, 2, 300))
    assert list(t.index) == ["a", "b"]
    assert t.loc["b", "ece"] == ece(y, p**2)
    assert t.loc["a", "ecce_sigma_scale"] == pytest.approx(ecce(y, p) / ecce_std(y, p))
    assert "f_rce" in t.columns


@pytest.mark.parametrize("p, expected", [([0.0, 1.0, 0.0, 1.0], 0.0), ([1.0, 1.0, 0.0, 1.0], np.inf)])
def test_summary_sigma_scale_with_certain_scores_is_zero_or_infinite_as_its_pvalue_says(p, expected):
    # every score 0 or 1: sigma = 0; all right -> ECCE 0, p-value 1; one wrong -> ECCE 1/4, p-value 0
    row = calibration_summary([0, 1, 0, 1], {"m": p}).loc["m"]
    assert row["ecce_sigma_scale"] == expected
    assert row["ecce_pvalue"] == (1.0 if expected == 0 else 0.0)


@pytest.mark.parametrize("y_probs", [[0.2, 0.8], ([0.2, 0.8],), np.array([0.2, 0.8])], ids=["list", "tuple", "array"])
def test_calibration_summary_of_scores_not_given_by_name_is_a_type_error(y_probs):
    # a list raised AttributeError ('list' object has no attribute 'items'), an array numpy's ambiguous truth value
    with pytest.raises(
        TypeError, match=r"y_probs must be a mapping of names to score arrays.*; got (list|tuple|ndarray)"
    ):
        calibration_summary([0, 1], y_probs)


def test_quantile_reliability_curve_ignores_rows_of_zero_weight_below_every_score():
    # The first edge is the smallest score of positive weight: a zero-weight row below it changes nothing.
    p, y, w = np.array([0.3, 0.5, 0.6, 0.9]), np.array([0.0, 1.0, 0.0, 1.0]), np.array([1.0, 2.0, 1.0, 2.0])
    got = reliability_curve(np.r_[1.0, y], np.r_[0.05, p], sample_weight=np.r_[0.0, w], n_bins=2, strategy="quantile")
    want = reliability_curve(y, p, sample_weight=w, n_bins=2, strategy="quantile")
    np.testing.assert_array_equal(got.bin_edges, [0.3, 0.5, 0.9])
    np.testing.assert_array_equal(got.bin_edges, want.bin_edges)


@pytest.mark.parametrize("metric", [ece, ecce, log_loss, brier_score, mce, pcoc, reliability_curve])
def test_metrics_ask_whether_y_true_and_y_prob_were_swapped(metric, rng):
    p = rng.uniform(0.05, 0.95, 300)
    y = (rng.uniform(size=300) < p).astype(int)
    hint = "did you pass y_true and y_prob in the wrong order? metrics take (y_true, y_prob)"
    with pytest.raises(ValueError, match=r"y_true must be binary .*" + re.escape(hint)):
        metric(p, y)
    with pytest.raises(ValueError, match=r"y_true must be binary") as info:
        metric(np.where(y == 1, 2, 0), p)  # wrong labels, not swapped
    assert "wrong order" not in str(info.value)

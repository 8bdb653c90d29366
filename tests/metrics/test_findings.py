"""Tests of the segment findings: direction and rates, Holm-adjusted p-values, near-duplicate grouping."""

import numpy as np
import pandas as pd
import pytest

from mcal.metrics import holm, mce, worst_segments
from mcal.segments import from_labels, from_masks


def _holm_by_definition(p):
    """Holm (1979) step by step: reject in order while p_(j) <= alpha / (m - j + 1); the adjusted p-value of a
    test is the smallest alpha at which it is rejected, found here by bisection over alpha."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p, kind="stable")

    def rejected(alpha):
        out = np.zeros(p.size, bool)
        for j, i in enumerate(order):
            if p[i] > alpha / (p.size - j):
                break
            out[i] = True
        return out

    adjusted = np.ones(p.size)
    for alpha in np.linspace(0, 1, 20001)[::-1]:
        adjusted[rejected(alpha)] = alpha
    return adjusted


def test_holm_matches_the_step_down_definition(rng):
    p = np.concatenate([rng.uniform(0, 0.02, 6), rng.uniform(0, 1, 6)])
    np.testing.assert_allclose(holm(p), _holm_by_definition(p), atol=1e-4)


def test_holm_hand_values_and_nan_is_no_test():
    # m = 3: sorted .01, .03, .04 -> 3 * .01 = .03, 2 * .03 = .06, 1 * .04 = .04 -> cummax .06
    np.testing.assert_allclose(holm([0.04, 0.01, np.nan, 0.03]), [0.06, 0.03, np.nan, 0.06])


def test_table_gives_direction_and_rates_by_hand():
    # segment a: scores .2 .4 .6, labels 1 1 0 -> mean score .4, observed 2/3: under-predicted
    # segment b: scores .5 .7 .9, labels 0 0 1 -> mean score .7, observed 1/3: over-predicted
    y = np.array([1, 1, 0, 0, 0, 1])
    p = np.array([0.2, 0.4, 0.6, 0.5, 0.7, 0.9])
    table = mce(y, p, segments=from_labels(["a"] * 3 + ["b"] * 3, name="g")).table.set_index("description")
    assert table.loc["g=a", "mean_prediction"] == pytest.approx(0.4)
    assert table.loc["g=a", "mean_outcome"] == pytest.approx(2 / 3)
    assert table.loc["g=b", "mean_prediction"] == pytest.approx(0.7)
    assert table.loc["g=b", "mean_outcome"] == pytest.approx(1 / 3)
    assert table["direction"].to_dict() == {"g=a": "under", "g=b": "over"}


def test_table_adjusts_pvalues_over_the_segments(rng):
    n = 2000
    labels = rng.choice(list("abcdefgh"), n)
    p = rng.uniform(0.1, 0.9, n)
    y = (rng.random(n) < np.where(labels == "a", p + 0.08, p)).astype(int)
    result = mce(y, p, segments=from_labels(labels))
    np.testing.assert_allclose(result.table["pvalue_adjusted"], holm(result.table["pvalue"]))
    assert result.pvalue_adjusted == pytest.approx(min(1.0, 8 * result.pvalue))


def test_weighted_means_in_the_table(rng):
    y = np.array([1, 0, 1, 0])
    p = np.array([0.2, 0.4, 0.6, 0.8])
    w = np.array([3.0, 1.0, 1.0, 1.0])
    table = mce(y, p, segments=from_labels(["a", "a", "b", "b"], name="g"), sample_weight=w).table.set_index(
        "description"
    )
    assert table.loc["g=a", "mean_prediction"] == pytest.approx((0.6 + 0.4) / 4)
    assert table.loc["g=a", "mean_outcome"] == pytest.approx(3 / 4)


def _duplicated_case(rng):
    """Segment "bad" is under-predicted; "bad-child" holds 90% of its rows and "bad-parent" adds 10% more, both
    near-duplicates; "other" is a distinct, over-predicted segment."""
    n = 4000
    p = rng.uniform(0.2, 0.6, n)
    bad = np.arange(n) < 1000
    other = (np.arange(n) >= 2000) & (np.arange(n) < 2600)
    y = (rng.random(n) < np.where(bad, p + 0.25, np.where(other, p - 0.15, p))).astype(int)
    child = bad & (np.arange(n) < 900)
    parent = np.arange(n) < 1100
    masks = np.column_stack([bad, child, parent, other, np.arange(n) % 2 == 0])
    return y, p, from_masks(masks, names=["bad", "bad-child", "bad-parent", "other", "even"])


def test_near_duplicates_are_grouped_and_can_be_listed(rng):
    y, p, segs = _duplicated_case(rng)
    result = mce(y, p, segments=segs)
    assert set(result.table["description"].head(3)) == {"bad", "bad-child", "bad-parent"}
    grouped = worst_segments({"model": result}, segs, n_worst=3)
    assert grouped["description"].tolist()[:2] == [result.worst_segment, "other"]
    assert grouped["n_similar"].iloc[0] == 2
    assert grouped["direction"].tolist()[:2] == ["under", "over"]
    everything = worst_segments({"model": result}, segs, n_worst=3, max_overlap=None)
    assert set(everything["description"]) == {"bad", "bad-child", "bad-parent"}


def test_opposite_directions_are_not_grouped():
    # the child is over-predicted inside an under-predicted parent: a finding of its own
    y = np.array([1] * 8 + [0] * 2 + [0] * 10)
    p = np.full(20, 0.5)
    parent = np.arange(20) < 10
    child = (np.arange(20) >= 8) & (np.arange(20) < 10)
    segs = from_masks(np.column_stack([parent, child]), names=["parent", "child"])
    table = worst_segments({"m": mce(y, p, segments=segs)}, segs, max_overlap=0.5)
    assert table["description"].tolist() == ["parent", "child"]


def test_later_columns_follow_the_first_columns_segments(rng):
    n = 3000
    labels = rng.choice(list("abcd"), n)
    p = rng.uniform(0.2, 0.8, n)
    y = (rng.random(n) < np.where(labels == "a", p + 0.2, p)).astype(int)
    fixed = np.where(labels == "a", p + 0.2, p)
    broken = np.where(labels == "c", np.clip(p + 0.2, 0, 1), fixed)
    segs = from_labels(labels)
    results = {"base": mce(y, p, segments=segs), "calibrated": mce(y, broken, segments=segs)}
    table = worst_segments(results, segs, n_worst=1)
    assert table.groupby("rank")["description"].first().tolist() == ["group=a", "group=c"]
    assert table.groupby("rank")["listed_for"].first().tolist() == ["base", "calibrated"]
    rows = table.set_index(["description", "score"])
    # the calibrated column fixed "a" and broke "c"
    assert rows.loc[("group=a", "calibrated"), "ecce_sigma"] < 3 < rows.loc[("group=a", "base"), "ecce_sigma"]
    assert rows.loc[("group=c", "calibrated"), "direction"] == "over"
    assert len(table) == 4 and set(table["score"]) == {"base", "calibrated"}


def test_worst_segments_rejects_bad_input(rng):
    y, p, segs = _duplicated_case(rng)
    result = mce(y, p, segments=segs)
    with pytest.raises(ValueError, match="max_overlap must be in"):
        worst_segments({"m": result}, segs, max_overlap=1.5)
    with pytest.raises(ValueError, match="results must hold at least one"):
        worst_segments({}, segs)
    with pytest.raises(TypeError, match="results must be a mapping"):
        worst_segments(result, segs)
    with pytest.raises(ValueError, match=r"results\['m'\] must be computed on segments"):
        worst_segments({"m": result}, from_labels(np.zeros(len(y))))
    assert isinstance(worst_segments({"m": result}, segs), pd.DataFrame)

"""Tests of mcal.metrics.smece and max_group_smece (smooth ECE, Blasiok and Nakkiran 2024)."""

import numpy as np
import pytest

from mcal.metrics import max_group_smece, smece
from mcal.metrics._smooth import _smece_at
from mcal.segments import from_labels, from_masks

relplot = pytest.importorskip("relplot")


def _sample(rng, n, power=1.0):
    p = rng.uniform(0, 1, n)
    return (rng.random(n) < p**power).astype(float), p


@pytest.mark.parametrize(("n", "power"), [(4, 1.0), (60, 1.0), (2000, 1.0), (2000, 2.0), (20000, 0.7)])
def test_agrees_with_relplot_smece(rng, n, power):
    y, p = _sample(rng, n, power)
    assert smece(y, p) == pytest.approx(relplot.smECE(p, y), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("bandwidth", [0.005, 0.05, 0.3])
def test_fixed_bandwidth_agrees_with_relplot_smece_sigma(rng, bandwidth):
    y, p = _sample(rng, 1000, 1.5)
    got = _smece_at(y, p, np.ones_like(p), bandwidth)
    assert got == pytest.approx(relplot.smECE_sigma(p, y, bandwidth), rel=1e-12)


def test_integer_weight_equals_duplicated_rows(rng):
    y, p = _sample(rng, 300, 1.3)
    k = rng.integers(1, 4, 300)
    rep = np.repeat(np.arange(300), k)
    assert smece(y, p, sample_weight=k) == pytest.approx(smece(y[rep], p[rep]), rel=1e-12)


def test_row_order_does_not_change_smece(rng):
    y, p = _sample(rng, 500, 1.3)
    perm = rng.permutation(500)
    assert smece(y[perm], p[perm]) == pytest.approx(smece(y, p), rel=1e-12)


def test_calibrated_sample_is_small_and_shifted_scores_are_detected(rng):
    y, p = _sample(rng, 20000)
    assert smece(y, p) < 0.02
    assert smece(y, np.clip(p + 0.1, 0, 1)) > 0.08


def test_max_group_smece_is_the_largest_group_value(rng):
    y, p = _sample(rng, 900, 1.2)
    labels = rng.choice(["a", "b", "c"], 900)
    per_group = [smece(y[labels == g], p[labels == g]) for g in "abc"]
    assert max_group_smece(y, p, segments=from_labels(labels)) == pytest.approx(max(per_group), rel=1e-12)


def test_max_group_smece_on_the_whole_table_is_smece(rng):
    y, p = _sample(rng, 400)
    assert max_group_smece(y, p, segments=np.ones((400, 1), dtype=bool)) == pytest.approx(smece(y, p))


def test_max_group_smece_skips_groups_without_weight(rng):
    y, p = _sample(rng, 100)
    w = np.ones(100)
    w[:20] = 0
    masks = np.zeros((100, 2), dtype=bool)
    masks[:20, 0] = masks[20:, 1] = True
    expected = smece(y[20:], p[20:])
    assert max_group_smece(y, p, segments=masks, sample_weight=w) == pytest.approx(expected, rel=1e-12)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="y_prob must be finite"):
        smece([0, 1], [0.2, np.nan])
    with pytest.raises(ValueError, match="y_true must be binary"):
        smece([0, 3], [0.2, 0.3])
    with pytest.raises(ValueError, match="cover 2 rows"):
        max_group_smece([0, 1], [0.2, 0.3], segments=from_labels(["a", "b", "c"]))
    with pytest.raises(ValueError, match="positive total sample weight"):
        max_group_smece([0, 1], [0.2, 0.3], segments=from_masks([False, False]))

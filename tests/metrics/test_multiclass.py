"""Metrics for k classes: values by hand, reductions to the binary metrics, agreement with scikit-learn/torchmetrics."""

import numpy as np
import pandas as pd
import pytest

import mcal.metrics as M

P = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6], [0.5, 0.4, 0.1]])
Y = np.array([0, 2, 2, 1])


def test_log_loss_and_brier_by_hand():
    expected = -(np.log(0.7) + np.log(0.3) + np.log(0.6) + np.log(0.4)) / 4
    assert M.multiclass_log_loss(Y, P) == pytest.approx(expected, rel=1e-12)
    brier = ((0.3**2 + 0.2**2 + 0.1**2) + (0.1**2 + 0.6**2 + 0.7**2) + (0.2**2 + 0.2**2 + 0.4**2)
             + (0.5**2 + 0.6**2 + 0.1**2)) / 4  # fmt: skip
    assert M.multiclass_brier_score(Y, P) == pytest.approx(brier, rel=1e-12)
    w = np.array([1.0, 0.0, 2.0, 1.0])
    assert M.multiclass_log_loss(Y, P, sample_weight=w) == pytest.approx(
        -(np.log(0.7) + 2 * np.log(0.6) + np.log(0.4)) / 4, rel=1e-12
    )


def test_top_label_by_hand():
    correct, confidence = M.top_label(Y, P)
    np.testing.assert_array_equal(correct, [1, 0, 1, 0])
    np.testing.assert_allclose(confidence, [0.7, 0.6, 0.6, 0.5], rtol=1e-15)  # rows are renormalized
    # two bins of width 0.5: [0.5, 1.0) holds all four rows: |mean conf 0.6 - accuracy 0.5| = 0.1
    assert M.top_label_ece(Y, P, n_bins=2) == pytest.approx(0.1, abs=1e-12)


def test_classwise_ece_is_the_mean_of_the_binary_eces():
    expected = np.mean([M.ece(j == Y, P[:, j], n_bins=5) for j in range(3)])
    assert M.classwise_ece(Y, P, n_bins=5) == pytest.approx(expected, rel=1e-12)
    assert M.classwise_ecce(Y, P) == pytest.approx(np.mean([M.ecce(j == Y, P[:, j]) for j in range(3)]), rel=1e-12)


def test_agreement_with_scikit_learn():
    from sklearn.metrics import brier_score_loss, log_loss

    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 2, 3, 4], size=500)
    y = rng.integers(0, 4, 500)
    w = rng.random(500)
    assert M.multiclass_log_loss(y, p, sample_weight=w) == pytest.approx(log_loss(y, p, sample_weight=w), rel=1e-12)
    assert M.multiclass_brier_score(y, p, sample_weight=w) == pytest.approx(
        brier_score_loss(y, p, sample_weight=w), rel=1e-12
    )


def test_top_label_ece_agrees_with_torchmetrics():
    torch = pytest.importorskip("torch")
    tm = pytest.importorskip("torchmetrics.functional.classification", reason="torchmetrics is not installed")
    rng = np.random.default_rng(1)
    p = rng.dirichlet([0.5, 0.5, 0.5], size=3000)
    y = rng.integers(0, 3, 3000)
    ref = tm.multiclass_calibration_error(torch.tensor(p), torch.tensor(y), num_classes=3, n_bins=15, norm="l1")
    assert M.top_label_ece(y, p) == pytest.approx(float(ref), abs=1e-6)  # torchmetrics sums in float32


def test_classwise_mce_reports_the_worst_class():
    rng = np.random.default_rng(2)
    n = 6000
    seg = rng.integers(0, 2, n)
    p = rng.dirichlet([2, 2, 2], size=n)
    true = p.copy()
    true[seg == 1, 2] *= 2.0  # class 2 under-predicted in segment 1
    true /= true.sum(axis=1, keepdims=True)
    y = (true.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    res = M.classwise_mce(y, p, X=seg.reshape(-1, 1).astype(str))
    assert res.worst_class == 2
    assert res.mce_sigma == res.per_class[2].mce_sigma > 5
    assert set(res.per_class) == {0, 1, 2}
    names = np.array(["a", "b", "c"])[y]
    assert M.classwise_mce(names, p, X=seg.reshape(-1, 1).astype(str)).worst_class == "c"
    assert M.top_label_mce(y, p, X=seg.reshape(-1, 1).astype(str)).mce_sigma >= 0


@pytest.mark.parametrize(
    ("y", "p", "message"),
    [
        ([0, 1, 3], [[0.5, 0.5]] * 3, "y_true must hold integer labels 0..1 or exactly 2 class names"),
        ([0, 1], [[0.5, 0.6], [0.5, 0.5]], "y_prob rows must sum to 1"),
        ([0, None], [[0.5, 0.5], [0.5, 0.5]], "y_true must not contain missing values"),
    ],
)
def test_bad_input(y, p, message):
    with pytest.raises(ValueError, match=message):
        M.multiclass_log_loss(np.array(y, dtype=object) if None in y else y, p)


def test_summary_refuses_matrices_of_different_class_counts():
    p3 = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])
    p4 = np.array([[0.6, 0.2, 0.1, 0.1], [0.2, 0.5, 0.2, 0.1]])
    with pytest.raises(ValueError, match=r"y_probs must all have 3 columns .*; got 4 in 'b'"):
        M.multiclass_summary([0, 1], {"a": p3, "b": p4})


def test_row_sum_error_shows_a_plain_number():
    with pytest.raises(ValueError, match=r"the first row 0 sums to 0\.9 \(") as info:
        M.multiclass_log_loss([0, 1], [[0.5, 0.4], [0.5, 0.5]])
    assert "np.float64" not in str(info.value)


def test_classwise_mce_summary_leads_with_the_worst_class_and_its_segment():
    # issue #32 item 5: a result reads by class and segment names; class "ant" over-predicted in country FR only
    rng = np.random.default_rng(0)
    n = 3000
    X = pd.DataFrame({"country": rng.choice(["FR", "DE", "US"], n), "x": rng.normal(size=n)})
    P = rng.dirichlet([2, 2, 2], n)
    y = np.array(["ant", "bee", "cat"])[(rng.uniform(size=(n, 1)) > P.cumsum(axis=1)).sum(axis=1)]
    biased = P.copy()
    biased[(X["country"] == "FR").to_numpy(), 0] *= 1.6
    biased /= biased.sum(axis=1, keepdims=True)
    res = M.classwise_mce(y, biased, X=X)
    text = res.summary(n_worst=3, width=80)
    lines = text.splitlines()
    assert res.worst_class == "ant" and lines[0].startswith(f"Class-wise MCE {res.mce_sigma:.3g} sigma")
    assert lines[0].endswith("worst in class ant of 3")
    ranked = [line.split() for line in lines[2:5]]
    assert ranked[0][0] == "ant" and ranked[0][-1] == "country=FR"
    sigmas = [float(row[1]) for row in ranked]
    assert sigmas == sorted(sigmas, reverse=True)  # worst class first
    assert {row[0] for row in ranked} == {"ant", "bee", "cat"}
    assert text.endswith(res.per_class["ant"].summary(3, 80)) and str(res) == res.summary()
    assert max(len(line) for line in lines[:5]) <= 80

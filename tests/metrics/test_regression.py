"""Metrics of real outcomes: ECCE, its scale and p-value, MCE with outcome="regression"; MSE, MAE, reliability."""

import numpy as np
import pandas as pd
import pytest

from mcal.metrics import cumulative_curve, ecce, ecce_pvalue, ecce_std, mae, mce, mse, reliability_curve
from mcal.segments import from_masks, generate_segments

R = {"outcome": "regression"}


def test_ecce_of_real_outcomes_by_hand():
    # sorted by prediction: residuals 1, 2, 0 -> walk /3: 1/3, 1, 1 -> range from C_0 = 0: 1
    assert ecce([1.0, 3.0, 2.0], [0.0, 1.0, 2.0], **R) == pytest.approx(1.0, abs=1e-15)
    # weights 1, 2, 1 of total 4: walk 1/4, 5/4, 5/4 -> 5/4; rows in another order give the same
    assert ecce([2.0, 1.0, 3.0], [2.0, 0.0, 1.0], sample_weight=[1, 1, 2], **R) == pytest.approx(1.25, abs=1e-15)


def test_ecce_sigma_of_real_outcomes_is_the_successive_difference_estimate_by_hand():
    # residuals 1, 2, 0 in prediction order, unit weights: (1 * 2)^2 + (2 * 2)^2 = 20 over 4 * 3 * (1 + 1 + 2) = 48
    assert ecce_std([1.0, 3.0, 2.0], [0.0, 1.0, 2.0], **R) == pytest.approx(np.sqrt(20 / 48), rel=1e-15)
    # weights 1, 2, 1: (1 * 3)^2 + (2 * 3)^2 = 45 over 4 * 4 * (1 + 1 + 2 * 2) = 96
    assert ecce_std([1.0, 3.0, 2.0], [0.0, 1.0, 2.0], sample_weight=[1, 2, 1], **R) == pytest.approx(
        np.sqrt(45 / 96), rel=1e-15
    )
    assert ecce_std([5.0], [1.0], **R) == 0.0  # one row: no difference


def test_cumulative_curve_of_real_outcomes_by_hand():
    # residuals 1, 2, 0 in prediction order: walk from C_0 = 0 is 0, 1/3, 1, 1; sigma as in the test above
    curve = cumulative_curve([1.0, 3.0, 2.0], [0.0, 1.0, 2.0], **R)
    np.testing.assert_allclose(curve.difference, [0.0, 1 / 3, 1.0, 1.0], rtol=0, atol=1e-15)
    assert curve.fraction.tolist() == pytest.approx([0.0, 1 / 3, 2 / 3, 1.0])
    assert curve.score.tolist() == [0.0, 0.0, 1.0, 2.0]
    assert curve.sigma == pytest.approx(np.sqrt(20 / 48), rel=1e-15)
    with pytest.raises(ValueError, match="y_true must be binary"):  # the default is still binary labels
        cumulative_curve([1.0, 3.0, 2.0], [0.0, 1.0, 2.0])


def test_ecce_pvalue_tells_calibrated_from_shifted_real_predictions(rng):
    p = rng.normal(size=5000) * 10
    y = p + rng.normal(size=5000) * 3
    assert ecce_pvalue(y, p, **R) > 0.05
    assert ecce_pvalue(y, p + 0.5, **R) < 1e-6


def test_mce_on_one_segment_equals_the_global_ecce_over_its_sigma(rng):
    p, y = rng.normal(size=300), rng.normal(size=300)
    result = mce(y, p, **R)
    assert result.mce_sigma == pytest.approx(ecce(y, p, **R) / ecce_std(y, p, **R), rel=1e-12)
    assert result.sigma == pytest.approx(ecce_std(y, p, **R), rel=1e-15)
    assert np.isnan(result.mce_relative) and np.isnan(result.minority_prevalence) and np.isnan(result.mde_relative)


def test_mce_segment_sigma_uses_only_the_segment_rows_in_prediction_order():
    # segment a: rows 0, 2 (predictions 0, 2; residuals 1, 0): sigma^2 = (1 * 2)^2 / (4 * 2 * 2) = 1/4
    masks = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=bool)
    result = mce([1.0, 3.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.5], segments=from_masks(masks, names=["a", "b"]), **R)
    table = result.table.set_index("description")
    assert table.loc["a", "sigma"] == pytest.approx(0.5, rel=1e-15)
    assert table.loc["b", "sigma"] == pytest.approx(np.sqrt((2 * 2.5) ** 2 / 16), rel=1e-15)


@pytest.mark.filterwarnings("ignore")  # the reference's own pandas deprecations and divisions by zero
@pytest.mark.parametrize("weights", [False, True])
def test_regression_mce_agrees_with_mcgrad(rng, weights):
    reference = pytest.importorskip(
        "mcgrad.metrics",
        reason="mcgrad 0.1.5 (the bench dependency group) is not installed: no reference to agree with",
    )
    n = 2000
    df = pd.DataFrame({"a": rng.choice(["x", "y", "z"], n), "b": rng.normal(size=n), "p": rng.normal(size=n) * 3})
    df["y"] = df["p"] + 0.4 * (df["a"] == "x") + rng.normal(size=n)
    df["w"] = rng.choice([0.5, 1.0, 2.0], n) if weights else 1.0
    ref = reference.MulticalibrationError(
        df,
        label_column="y",
        score_column="p",
        weight_column="w" if weights else None,
        categorical_segment_columns=["a"],
        numerical_segment_columns=["b"],
        precision_dtype="float64",
        outcome_type="regression",
    )
    segs = generate_segments(df[["a", "b"]])
    ours = mce(df["y"], df["p"], segments=segs, sample_weight=df["w"] if weights else None, **R)
    for got, key in [
        (ours.mce_sigma, "mce_sigma"),
        (ours.mce_absolute, "mce"),
        (ours.pvalue, "mce_pvalue"),
        (ours.mde, "mde"),
        (ours.global_ecce, "global_ecce"),
        (ours.global_ecce_sigma, "global_ecce_sigma"),
    ]:
        assert got == pytest.approx(float(getattr(ref, key)), rel=1e-9), key
    assert ours.n_segments == ref.total_number_segments
    np.testing.assert_allclose(np.sort(ours.table["ecce_sigma"]), np.sort(ref.segments_ecce_sigma), rtol=1e-9)


def test_mse_and_mae_by_hand():
    y, p, w = [1.0, 2.0, 4.0], [1.0, 3.0, 2.0], [1.0, 1.0, 2.0]
    assert mse(y, p) == pytest.approx(5 / 3, rel=1e-15)
    assert mae(y, p) == pytest.approx(1.0, rel=1e-15)
    assert mse(y, p, sample_weight=w) == pytest.approx(9 / 4, rel=1e-15)
    assert mae(y, p, sample_weight=w) == pytest.approx(5 / 4, rel=1e-15)


def test_reliability_table_of_real_predictions_by_hand():
    # uniform bins on the prediction range [0, 10]: [0, 5) holds 0, 2 (outcomes 1, 3), [5, 10] holds 6, 10
    curve = reliability_curve([1.0, 3.0, 5.0, 13.0], [0.0, 2.0, 6.0, 10.0], n_bins=2, **R)
    np.testing.assert_allclose(curve.bin_edges, [0.0, 5.0, 10.0])
    np.testing.assert_allclose(curve.mean_predicted, [1.0, 8.0])
    np.testing.assert_allclose(curve.mean_outcome, [2.0, 9.0])
    quantile = reliability_curve([1.0, 3.0, 5.0, 13.0], [0.0, 2.0, 6.0, 10.0], n_bins=4, strategy="quantile", **R)
    np.testing.assert_allclose(quantile.mean_outcome, [1.0, 3.0, 5.0, 13.0])
    constant = reliability_curve([1.0, 3.0], [2.0, 2.0], n_bins=3, **R)
    assert constant.count.tolist() == [2, 0, 0] and constant.mean_outcome[0] == 2.0


@pytest.mark.parametrize(
    "y_true, y_pred, kwargs, error, match",
    [
        ([1.0, np.nan], [0.0, 1.0], R, ValueError, r"y_true must be finite \(no NaN or infinity\)"),
        ([1.0, 2.0], [0.0, np.inf], R, ValueError, r"y_prob must be finite \(no NaN or infinity\)"),
        (
            [1.0, 2.0],
            [0.0, 1.0],
            {"outcome": "continuous"},
            ValueError,
            "outcome must be 'classification' or 'regression'; got 'continuous'",
        ),
        ([1.0, 2.0], [0.0, 1.0], {"outcome": None}, TypeError, "outcome must be 'classification' or 'regression'"),
        ([1.0, 2.5], [0.0, 1.0], {}, ValueError, r"y_true must be binary \(0 or 1\)"),
    ],
)
def test_bad_inputs_raise_naming_the_argument(y_true, y_pred, kwargs, error, match):
    with pytest.raises(error, match=match):
        ecce(y_true, y_pred, **kwargs)


def test_mse_refuses_non_finite_values():
    with pytest.raises(ValueError, match="y_true must be finite"):
        mse([1.0, np.nan], [1.0, 2.0])

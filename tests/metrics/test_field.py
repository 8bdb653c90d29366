"""Tests of mcal.metrics.field_pcoc (MCNet paper, eq. 3 per field and Table 3)."""

import numpy as np
import pandas as pd
import pytest

from mcal import CalibrationWarning
from mcal.metrics import field_pcoc, pcoc


@pytest.mark.parametrize(
    ("values", "paper_std_percent"),
    [
        ([0.997, 0.915, 0.942, 0.930], 3.56),  # MCNet-None
        ([1.007, 0.938, 0.966, 0.956], 2.93),  # MCNet-None with L_balance
        ([0.867, 0.878, 0.828, 0.837], 2.36),  # MCNet-Field
        ([0.855, 0.803, 0.822, 0.798], 2.59),  # NeuCalib
        ([0.894, 0.934, 0.877, 0.934], 2.83),  # AdaCalib
    ],
)
def test_reproduces_the_std_of_mcnet_table3(values, paper_std_percent):
    # the paper prints field PCOCs to 3 decimals, so its STD is matched to within that rounding (ddof=1);
    # the population std (ddof=0) would be about 0.4 points lower on every row
    # each field: one positive scored 0.5 and one negative scored v - 0.5, so its PCOC is v
    y = [1, 0] * 4
    p = [q for v in values for q in (0.5, v - 0.5)]
    result = field_pcoc(y, p, field=np.repeat([0, 1, 2, 3], 2))
    np.testing.assert_allclose(result.per_field, values)
    assert abs(result.std * 100 - paper_std_percent) < 0.06


def test_each_field_value_is_the_pcoc_of_its_rows(rng):
    n = 500
    field = rng.choice(["de", "fr", "us"], n)
    p = rng.uniform(0.05, 0.6, n)
    y = (rng.random(n) < p).astype(int)
    w = rng.uniform(0.5, 2, n)
    result = field_pcoc(y, p, field=field, sample_weight=w)
    for value in ["de", "fr", "us"]:
        rows = field == value
        assert result.per_field[value] == pytest.approx(pcoc(y[rows], p[rows], sample_weight=w[rows]))
    assert result.pcoc == pytest.approx(pcoc(y, p, sample_weight=w))
    assert result.per_field.index.tolist() == ["de", "fr", "us"]


def test_integer_weight_equals_duplicated_rows(rng):
    n = 200
    field = rng.choice([1, 2, 3], n)
    p = rng.uniform(0.05, 0.6, n)
    y = (rng.random(n) < p).astype(int)
    k = rng.integers(1, 4, n)
    rep = np.repeat(np.arange(n), k)
    a = field_pcoc(y, p, field=field, sample_weight=k)
    b = field_pcoc(y[rep], p[rep], field=field[rep])
    pd.testing.assert_series_equal(a.per_field, b.per_field)
    assert a.std == pytest.approx(b.std)


def test_field_without_positives_is_nan_and_left_out_of_the_std():
    with pytest.warns(CalibrationWarning, match="without a positive label"):
        result = field_pcoc([1, 0, 1, 0, 0], [0.5, 0.5, 0.8, 0.2, 0.3], field=["a", "a", "b", "b", "c"])
    assert np.isnan(result.per_field["c"])
    assert result.std == pytest.approx(np.std([1.0, 1.0], ddof=1))


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="same number of samples"):
        field_pcoc([0, 1], [0.2, 0.3], field=["a", "b", "c"])
    with pytest.raises(ValueError, match="positive label"):
        field_pcoc([0, 0], [0.2, 0.3], field=["a", "b"])

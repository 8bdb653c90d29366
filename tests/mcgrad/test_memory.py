"""MCGrad's memory-saving paths give the same model as the plain ones: features binned from row blocks (LightGBM
samples them one row at a time), and the rescaling summed over blocks of rows."""

import warnings

import numpy as np
import pandas as pd
import pytest

import mcal
import mcal.mcgrad._estimator as estimator
import mcal.mcgrad._splits as splits
import mcal.mcgrad.engine as engine
from mcal._features.encoder import FeatureEncoder
from tests.across_machines import assert_close_across_machines


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"c": rng.choice(["a", "b", "c", "d"], size=n), "x0": rng.normal(size=n),
                      "x1": np.round(rng.normal(size=n), 1)})  # fmt: skip
    X.loc[rng.random(n) < 0.05, "x0"] = np.nan
    logit = 0.8 * X["x0"].fillna(0).to_numpy() + (X["c"] == "b").to_numpy() - 0.5
    p = 1 / (1 + np.exp(-0.5 * logit))
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    return p, y, X


def _fit(p, y, X, **kwargs):
    model = mcal.MCGrad(max_rounds=3, n_estimators=10, random_state=0, n_jobs=1, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mcal.CalibrationWarning)  # "a larger max_rounds may fit better"
        return model.fit(p, y, X=X)


#: The columns of ``Booster.trees_to_dataframe`` computed from sums of gradients (the others describe the splits).
_SUMS = ["split_gain", "value", "weight"]


@pytest.mark.parametrize("early_stopping", ["holdout", "kfold", None])
def test_blocks_give_the_model_of_the_whole_matrix(monkeypatch, early_stopping):
    p, y, X = _data()
    plain = _fit(p, y, X, early_stopping=early_stopping)
    # every fit binned from row blocks of 97 rows, and the rescaling sums taken 50 rows at a time
    monkeypatch.setattr(estimator, "_BIN_BLOCKS_FROM_ROWS", 0)
    monkeypatch.setattr(splits, "_BLOCK_ROWS", 97)
    monkeypatch.setattr(engine, "_BLOCK", 50)
    blocked = _fit(p, y, X, early_stopping=early_stopping)
    assert blocked.n_rounds_ == plain.n_rounds_ > 0
    # the same splits (thresholds come from the binned values, exactly); leaf values, losses and predictions follow
    # sums over other blocks, which may round differently in the last bit (numpy's vector loops and their tails)
    for ours, theirs in zip(blocked.boosters_, plain.boosters_, strict=True):
        ours, theirs = ours.trees_to_dataframe(), theirs.trees_to_dataframe()
        pd.testing.assert_frame_equal(ours.drop(columns=_SUMS), theirs.drop(columns=_SUMS), check_exact=True)
        assert_close_across_machines(ours["value"], theirs["value"])
    assert_close_across_machines(blocked.validation_losses_, plain.validation_losses_)
    assert_close_across_machines(blocked.predict(p, X=X), plain.predict(p, X=X))


def test_feature_blocks_read_rows_and_slices_as_the_encoder(monkeypatch):
    X = _data(500)[2]
    encoder = FeatureEncoder("from_dtype").fit(X)
    whole = encoder.transform(X)
    monkeypatch.setattr(splits, "_BLOCK_ROWS", 64)
    blocks = splits.FeatureBlocks(encoder, X, len(X))
    assert len(blocks) == 500
    np.testing.assert_array_equal(blocks[130:330], whole[130:330])
    np.testing.assert_array_equal(np.array([blocks[i] for i in (3, 70, 71, 499)]), whole[[3, 70, 71, 499]])
    listed = X.to_numpy().tolist()
    encoder = FeatureEncoder([0]).fit(listed)
    rows = splits.FeatureBlocks(encoder, listed, len(X))  # no shape: one block
    assert rows.batch_size == 500
    np.testing.assert_array_equal(rows[499], encoder.transform(listed)[499])


def test_sorted_subset_is_lightgbms_subset():
    lgb = pytest.importorskip("lightgbm")
    from mcal._lightgbm import sorted_subset

    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(2000, 3)), (rng.random(2000) < 0.4).astype(float)
    params = {"objective": "binary", "verbose": -1, "num_threads": 1, "seed": 0}
    binned = lgb.Dataset(X, label=y, params=params).construct()
    rows = np.flatnonzero(rng.random(2000) < 0.6)
    ours, theirs = sorted_subset(binned, rows), binned.subset(rows).construct()
    assert ours.num_data() == rows.size
    np.testing.assert_array_equal(ours.get_label(), y[rows])
    text = [lgb.train(params, d, num_boost_round=3).model_to_string() for d in (ours, theirs)]
    assert text[0] == text[1]

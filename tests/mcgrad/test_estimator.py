"""Tests of MCGrad (Tax et al., 2026): the round loop, the rescaling step, early stopping, features, model files."""

import json
import re
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit
from sklearn.exceptions import NotFittedError

from tests.across_machines import assert_close_across_machines

pytest.importorskip("lightgbm")

import mcal
from mcal import DFMC, CalibrationWarning, MCGrad
from mcal.mcgrad.engine import LOGIT_CLIP, THETA_BOUNDS, LocalEngine, rescale_factor

# Small, fast boosters for tests; the paper's defaults are exercised by the benchmark.
FAST = dict(n_estimators=20, learning_rate=0.2, min_child_samples=20, max_rounds=5, n_jobs=1, random_state=0)


def log_loss(y, p):
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def segment_data(n, seed, shift=(-0.8, 0.0, 0.8)):
    """Three segments whose base scores are off by a known logit shift; one numeric noise feature."""
    rng = np.random.default_rng(seed)
    segment = rng.integers(0, 3, n)
    x = rng.normal(size=n)
    base_logit = rng.normal(-0.3, 1.0, size=n)
    true_logit = base_logit + np.asarray(shift)[segment]
    y = (rng.random(n) < expit(true_logit)).astype(float)
    X = pd.DataFrame({"segment": pd.Categorical(np.array(["a", "b", "c"])[segment]), "x": x})
    return X, expit(base_logit), y


@pytest.fixture(scope="module")
def segments():
    return segment_data(6000, seed=1), segment_data(7500, seed=2)


@pytest.fixture(scope="module")
def fitted(segments):
    (X, p, y), _ = segments
    return MCGrad(**FAST).fit(p, y, X=X)


# Exact-equivalence fits: one row per bin, no row floor, and stumps (LightGBM 4.7 itself grows different
# trees for weight k and for k copies of a row beyond a tree's first split).
EXACT = {
    **FAST,
    "early_stopping": None,
    "max_rounds": 2,
    "min_child_samples": 0,
    "max_leaves": 2,
    "n_estimators": 5,
    "lightgbm_params": {"min_data_in_bin": 1, "max_bin": 1023},
}


def segment_errors(X, p, y):
    return np.array([abs(y[m].mean() - p[m].mean()) for m in (X["segment"] == s for s in "abc")])


# -- the algorithm ---------------------------------------------------------------------------------------
def test_zero_rounds_is_the_identity_even_for_scores_of_zero_and_one(segments):
    (X, p, y), _ = segments
    p = p.copy()
    p[:2] = [0.0, 1.0]
    model = MCGrad(**{**FAST, "max_rounds": 0}).fit(p, y, X=X)
    assert model.n_rounds_ == 0 and model.boosters_ == []
    np.testing.assert_array_equal(model.predict(p, X=X), p)


def test_zero_max_rounds_evaluates_no_validation_loss_even_with_early_stopping(segments):
    (X, p, y), _ = segments
    assert MCGrad(**{**FAST, "max_rounds": 0, "early_stopping": "holdout"}).fit(p, y, X=X).validation_losses_.size == 0


def test_planted_segment_miscalibration_is_removed_on_held_out_data(segments, fitted):
    # The base is off by about 0.15 in probability in segments a and c. On 2,500 held-out rows per segment
    # a segment mean has a binomial standard error of at most sqrt(0.25 / 2500) = 0.01, so a fitted model
    # that removed the shift leaves errors within about 3 standard errors: bound 0.03.
    _, (Xt, pt, yt) = segments
    before = segment_errors(Xt, pt, yt)
    after = segment_errors(Xt, fitted.predict(pt, X=Xt), yt)
    assert before[[0, 2]].min() > 0.1
    assert after.max() < 0.03
    assert log_loss(yt, fitted.predict(pt, X=Xt)) < log_loss(yt, pt) - 0.01


def test_calibrated_data_gives_few_rounds_and_small_changes():
    # Scores calibrated by construction and features unrelated to the label: early stopping should stop
    # at once or after a round that barely moves the scores (well under the 0.02 a real shift would need).
    X, p, y = segment_data(6000, seed=3, shift=(0.0, 0.0, 0.0))
    model = MCGrad(**FAST).fit(p, y, X=X)
    assert model.n_rounds_ <= 1
    assert np.abs(model.predict(p, X=X) - p).mean() < 0.01


@pytest.mark.parametrize("early_stopping", ["holdout", "kfold"])
def test_validation_loss_of_the_chosen_round_is_the_minimum_and_not_above_the_input(segments, early_stopping):
    (X, p, y), _ = segments
    model = MCGrad(**{**FAST, "early_stopping": early_stopping, "n_folds": 3, "patience": 1}).fit(p, y, X=X)
    losses = model.validation_losses_
    assert losses[model.n_rounds_] == losses.min() <= losses[0]
    assert losses[model.n_rounds_] < losses[0]  # the planted shift is learnable


def test_a_first_round_that_overfits_gives_zero_rounds_and_the_input_back():
    # Pure-noise labels, calibrated scores and an aggressive booster: round 1 can only overfit.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 5))
    p = np.full(400, 0.5)
    y = (rng.random(400) < 0.5).astype(float)
    model = MCGrad(**{**FAST, "learning_rate": 1.0, "min_child_samples": 2, "max_leaves": 31}).fit(p, y, X=X)
    assert model.n_rounds_ == 0
    assert model.validation_losses_[1] > model.validation_losses_[0]
    np.testing.assert_array_equal(model.predict(p, X=X), p)


def test_patience_evaluates_that_many_rounds_past_the_best(segments):
    (X, p, y), _ = segments
    model = MCGrad(**{**FAST, "max_rounds": 8, "patience": 2}).fit(p, y, X=X)
    evaluated = model.validation_losses_.size - 1
    assert evaluated == min(8, model.n_rounds_ + 3)


def test_rescale_false_keeps_every_factor_at_one(segments):
    (X, p, y), _ = segments
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 2, "rescale": False}).fit(p, y, X=X)
    np.testing.assert_array_equal(model.rescale_factors_, [1.0, 1.0])


def test_without_early_stopping_exactly_max_rounds_are_fitted(segments):
    (X, p, y), _ = segments
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 3}).fit(p, y, X=X)
    assert model.n_rounds_ == 3 and len(model.boosters_) == 3 and model.validation_losses_.size == 0


def test_reaching_max_rounds_warns(segments):
    (X, p, y), _ = segments
    with pytest.warns(CalibrationWarning, match="early stopping chose max_rounds=1"):
        MCGrad(**{**FAST, "max_rounds": 1}).fit(p, y, X=X)


def test_feature_importance_is_the_gain_summed_over_all_rounds(segments):
    (X, p, y), _ = segments
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 2}).fit(p, y, X=X)
    per_round = [b.feature_importance(importance_type="gain") for b in model.boosters_]
    np.testing.assert_allclose(model.feature_importances_, per_round[0] + per_round[1])
    assert model.feature_importances_.shape == (3,)
    assert model.feature_importances_[0] == model.feature_importances_.max()  # the segment carries the shift


def test_without_features_mcgrad_recalibrates_the_score_alone():
    rng = np.random.default_rng(5)
    true = rng.normal(size=5000)
    y = (rng.random(5000) < expit(true)).astype(float)
    p = expit(2.5 * true)  # over-confident
    model = MCGrad(**FAST).fit(p, y)
    assert model.n_features_in_ == 0 and model.n_rounds_ >= 1
    assert log_loss(y, model.predict(p)) < log_loss(y, p) - 0.02


def test_a_soft_label_equals_a_positive_and_a_negative_row_weighted_by_it():
    # The cross-entropy of a soft label s has the gradient and Hessian of a label-1 row of weight s plus a
    # label-0 row of weight 1 - s, so both fits agree (bins and row floors as for weights; sums accumulate
    # in another order, hence the tolerance).
    rng = np.random.default_rng(12)
    n = 400
    X = rng.normal(size=(n, 1))
    p = expit(rng.normal(size=n))
    soft = expit(logit(p) + X[:, 0])
    fitted_soft = MCGrad(**EXACT).fit(p, soft, X=X)
    split = MCGrad(**EXACT).fit(
        np.tile(p, 2), np.repeat([1.0, 0.0], n), X=np.tile(X, (2, 1)), sample_weight=np.concatenate([soft, 1 - soft])
    )
    np.testing.assert_allclose(fitted_soft.predict(p, X=X), split.predict(p, X=X), rtol=1e-7)


def test_extreme_scores_and_separable_labels_give_finite_probabilities():
    # Scores at 0 and 1 and labels that the feature separates push the logits far out, where the fit
    # re-predicts rows instead of inverting LightGBM's probabilities.
    rng = np.random.default_rng(14)
    x = rng.normal(size=2000)
    y = (x > 0).astype(float)
    p = np.where(rng.random(2000) < 0.5, 0.0, 1.0)
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 3, "learning_rate": 1.0}).fit(p, y, X=x[:, None])
    pred = model.predict(p, X=x[:, None])
    assert np.all(np.isfinite(pred)) and np.all((pred >= 0) & (pred <= 1))
    assert log_loss(y, pred) < 0.05


@pytest.mark.parametrize("early_stopping", ["holdout", "kfold"])
@pytest.mark.parametrize("as_array", [False, True])
def test_rows_predicted_again_from_x_give_the_same_model(monkeypatch, segments, early_stopping, as_array):
    # Where LightGBM's training probabilities cannot be inverted exactly, the fit encodes those rows of X
    # again and predicts them. Sending every row down that path (training parts, validation parts, refit)
    # must give the model that the inverted probabilities give.
    from mcal.mcgrad.losses import LogLoss

    (X, p, y), _ = segments
    X = X.assign(segment=X["segment"].cat.codes.astype(float)).to_numpy() if as_array else X
    params = {
        **FAST,
        "early_stopping": early_stopping,
        "n_folds": 3,
        "categorical_features": [0] if as_array else "from_dtype",
    }
    expected = MCGrad(**params).fit(p, y, X=X)
    monkeypatch.setattr(LogLoss, "exact_below", -np.inf)
    again = MCGrad(**params).fit(p, y, X=X)
    assert again.n_rounds_ == expected.n_rounds_ > 0
    np.testing.assert_allclose(again.validation_losses_, expected.validation_losses_, rtol=1e-9)
    np.testing.assert_allclose(again.predict(p, X=X), expected.predict(p, X=X), rtol=1e-7)


# -- rescaling -------------------------------------------------------------------------------------------
def grid_objective(theta, y, z, w):
    a = np.outer(theta, np.clip(z, -LOGIT_CLIP, LOGIT_CLIP))
    return (w * (np.logaddexp(0.0, a) - y * a)).sum(axis=1)


@pytest.mark.parametrize("scale", [0.7, 1.0, 1.6])
@pytest.mark.slow
def test_rescale_factor_matches_a_brute_force_grid_minimum(scale):
    rng = np.random.default_rng(6)
    z = rng.normal(0, 3, 3000)
    y = (rng.random(3000) < expit(scale * z)).astype(float)
    w = rng.uniform(0.2, 2.0, 3000)
    theta = rescale_factor(LocalEngine({}, 1, []), y, z, w)
    coarse = np.arange(0.2, 3.0, 1e-3)
    best = coarse[np.argmin(grid_objective(coarse, y, z, w))]
    fine = np.arange(best - 2e-3, best + 2e-3, 1e-6)
    best = fine[np.argmin(grid_objective(fine, y, z, w))]
    assert abs(theta - best) < 2e-6
    assert grid_objective(np.array([theta]), y, z, w)[0] <= grid_objective(np.array([best]), y, z, w).min() + 1e-9


def test_rescale_factor_stays_in_its_bounds_and_is_one_on_a_flat_objective():
    rng = np.random.default_rng(7)
    z = rng.normal(0, 2, 500)
    engine = LocalEngine({}, 1, [])
    y_against = (z < 0).astype(float)  # the logit points the wrong way: the minimum is at the lower bound
    assert rescale_factor(engine, y_against, z, np.ones(500)) == THETA_BOUNDS[0]
    y_sharp = (z > 0).astype(float)  # separable: the loss keeps falling up to the upper bound
    assert rescale_factor(engine, y_sharp, z, np.ones(500)) == THETA_BOUNDS[1]
    assert rescale_factor(engine, y_sharp, np.zeros(500), np.ones(500)) == 1.0


@pytest.mark.parametrize("scale", [0.5, 2.5])
def test_rescale_factor_agrees_with_the_reference_unshrink_factor_on_logits_beyond_the_clip(scale):
    # mcgrad 0.1.5 minimises the same weighted log loss of theta * clip(z, -10, 10) by a bounded scalar search.
    reference = pytest.importorskip("mcgrad.methods").MCGrad
    rng = np.random.default_rng(8)
    z = rng.normal(0, 6, 3000)  # about 10% of the logits beyond the clip at 10
    y = (rng.random(3000) < expit(scale * z)).astype(float)
    w = rng.uniform(0.2, 2.0, 3000)
    theta = rescale_factor(LocalEngine({}, 1, []), y, z, w)
    assert theta == pytest.approx(reference._compute_unshrink_factor(y, z, w), rel=1e-4)


class _ShiftEngine(LocalEngine):
    """Every round's booster adds 1 to every logit (optionally with scripted validation losses)."""

    def __init__(self, losses=None):
        super().__init__({}, 1, [])
        self.losses = None if losses is None else list(losses)

    def fit_round(self, part, valid=None):
        return "booster", part.F + 1.0, None if valid is None else valid.F + 1.0

    def log_loss_sum(self, y, F, w):
        return super().log_loss_sum(y, F, w) if self.losses is None else (self.losses.pop(0), 1.0)


def test_validation_logits_take_the_rescaled_round_of_the_training_part():
    from sklearn.metrics import log_loss as sk_log_loss

    from mcal.mcgrad.engine import Part, Stopping, boost_rounds

    rng = np.random.default_rng(9)
    F_train, F_valid = rng.normal(0, 2, 800), rng.normal(0, 2, 300)
    y_train = (rng.random(800) < expit(0.4 * (F_train + 1.0))).astype(float)
    y_valid = (rng.random(300) < expit(0.4 * (F_valid + 1.0))).astype(float)
    w_train, w_valid = rng.uniform(0.5, 2.0, 800), rng.uniform(0.5, 2.0, 300)
    engine = _ShiftEngine()
    theta = rescale_factor(engine, y_train, F_train + 1.0, w_train)
    assert abs(theta - 1.0) > 0.3  # the round is far from its rescaled value
    path = boost_rounds(
        engine,
        [Part(None, y_train, w_train, F_train.copy())],
        [Part(None, y_valid, w_valid, F_valid.copy())],
        Stopping(max_rounds=1),
    )
    want = sk_log_loss(y_valid, expit(theta * (F_valid + 1.0)), sample_weight=w_valid)
    assert path.losses[1] == pytest.approx(want, rel=1e-12)


def test_a_round_that_only_ties_the_best_validation_loss_is_not_the_best_round():
    from mcal.mcgrad.engine import Part, Rescaling, Stopping, boost_rounds

    engine = _ShiftEngine(losses=[1.0, 0.8, 0.8, 0.9, 0.85, 0.95, 0.97, 0.99])
    part = Part(None, np.array([0.0, 1.0]), np.ones(2), np.zeros(2))
    path = boost_rounds(
        engine,
        [part],
        [Part(None, np.array([0.0, 1.0]), np.ones(2), np.zeros(2))],
        Stopping(max_rounds=8, patience=2),
        Rescaling(rescale=False),
    )
    assert path.best_round == 1
    assert path.losses == [1.0, 0.8, 0.8, 0.9, 0.85]  # three rounds past the best, then stop


# -- weights, determinism, formats -----------------------------------------------------------------------
def test_integer_weight_equals_that_many_copies():
    # Fewer rows than LightGBM bins (so every distinct value gets its own bin, whatever its count) and no
    # row floor (LightGBM counts rows, estimated from Hessians, for min_child_samples).
    rng = np.random.default_rng(8)
    n = 400
    X = rng.normal(size=(n, 2))
    p = expit(rng.normal(size=n))
    y = (rng.random(n) < expit(logit(p) + X[:, 0])).astype(float)
    k = rng.integers(1, 4, n)
    weighted = MCGrad(**EXACT).fit(p, y, X=X, sample_weight=k)
    copies = MCGrad(**EXACT).fit(np.repeat(p, k), np.repeat(y, k), X=np.repeat(X, k, axis=0))
    # Sums accumulate in another order, hence a relative tolerance rather than equality.
    np.testing.assert_allclose(weighted.predict(p, X=X), copies.predict(p, X=X), rtol=1e-7)
    np.testing.assert_allclose(weighted.rescale_factors_, copies.rescale_factors_, rtol=1e-7)


def test_fit_and_predict_are_deterministic_under_random_state(segments):
    (X, p, y), _ = segments
    a, b = (MCGrad(**FAST).fit(p, y, X=X) for _ in range(2))
    np.testing.assert_array_equal(a.predict(p, X=X), b.predict(p, X=X))
    np.testing.assert_array_equal(a.validation_losses_, b.validation_losses_)
    c = MCGrad(**{**FAST, "random_state": 1}).fit(p, y, X=X)
    assert not np.array_equal(a.validation_losses_, c.validation_losses_)  # another holdout split


def test_column_wise_histograms_of_large_data_give_the_same_model(fitted, segments, monkeypatch):
    # the histogram layout follows the row count (_COL_WISE_FROM_ROWS); either layout must grow the same trees
    import mcal.mcgrad._estimator

    (X, p, y), (Xt, pt, _) = segments
    monkeypatch.setattr(mcal.mcgrad._estimator, "_COL_WISE_FROM_ROWS", 1)
    col_wise = MCGrad(**FAST).fit(p, y, X=X)
    assert (
        col_wise._lightgbm_params(0, len(p))["force_col_wise"] and fitted._lightgbm_params(0, len(p))["force_col_wise"]
    )
    monkeypatch.undo()
    assert fitted._lightgbm_params(0, len(p))["force_row_wise"]
    # the two layouts sum the histograms in another order: equal to the last bits, on any machine
    assert_close_across_machines(col_wise.validation_losses_, fitted.validation_losses_)
    assert_close_across_machines(col_wise.predict(pt, X=Xt), fitted.predict(pt, X=Xt))


def test_one_row_predictions_equal_the_same_rows_in_a_batch(fitted, segments):
    # One-row calls take LightGBM's single-row C path; batches take Booster.predict.
    _, (Xt, pt, _) = segments
    batch = fitted.predict(pt[:20], X=Xt.iloc[:20])
    single = [fitted.predict(pt[i : i + 1], X=Xt.iloc[i : i + 1])[0] for i in range(20)]
    np.testing.assert_array_equal(single, batch)


def test_one_row_predict_falls_back_to_booster_predict_on_an_untested_lightgbm(fitted, segments, monkeypatch, tmp_path):
    # The single-row C path uses LightGBM's private handles; on a major version it was not tested with it is
    # not used, and Booster.predict gives the same values.
    import lightgbm

    from mcal._lightgbm.single_row import SingleRowPredictor

    _, (Xt, pt, _) = segments
    assert SingleRowPredictor.create(fitted.boosters_, fitted.n_features_in_ + 1) is not None
    expected = [fitted.predict(pt[i : i + 1], X=Xt.iloc[i : i + 1])[0] for i in range(10)]
    monkeypatch.setattr(lightgbm, "__version__", "5.0.0")
    model = mcal.load(mcal.save(fitted, tmp_path / "m.json"))  # no single-row predictor built yet
    assert SingleRowPredictor.create(model.boosters_, model.n_features_in_ + 1) is None
    np.testing.assert_array_equal([model.predict(pt[i : i + 1], X=Xt.iloc[i : i + 1])[0] for i in range(10)], expected)
    assert model._single_row is None


def test_pickle_round_trip_after_a_one_row_predict(fitted, segments):
    import pickle

    _, (Xt, pt, _) = segments
    fitted.predict(pt[:1], X=Xt.iloc[:1])
    clone = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(clone.predict(pt[:50], X=Xt.iloc[:50]), fitted.predict(pt[:50], X=Xt.iloc[:50]))
    np.testing.assert_array_equal(clone.predict(pt[:1], X=Xt.iloc[:1]), fitted.predict(pt[:1], X=Xt.iloc[:1]))


def test_string_features_in_an_object_array_are_categorical():
    X, p, y = segment_data(4000, seed=13)
    as_array = np.column_stack([X["segment"].astype(str).to_numpy(dtype=object), X["x"].to_numpy(dtype=object)])
    model = MCGrad(**FAST).fit(p, y, X=as_array)
    assert model.encoder_.categorical_ == [True, False]
    as_frame = X.assign(segment=X["segment"].astype(str))
    reference = MCGrad(**FAST).fit(p, y, X=as_frame)
    np.testing.assert_array_equal(model.predict(p, X=as_array), reference.predict(p, X=as_frame))


def test_float32_scores_give_float32_output(fitted, segments):
    (X, p, _), _ = segments
    out = fitted.predict(p.astype(np.float32), X=X)
    assert out.dtype == np.float32


def test_dataframe_and_array_features_give_the_same_model():
    rng = np.random.default_rng(9)
    A = rng.normal(size=(3000, 2))
    p = expit(rng.normal(size=3000))
    y = (rng.random(3000) < expit(logit(p) + A[:, 0])).astype(float)
    frame = pd.DataFrame(A, columns=["u", "v"])
    m1 = MCGrad(**FAST).fit(p, y, X=A)
    m2 = MCGrad(**FAST).fit(p, y, X=frame)
    np.testing.assert_array_equal(m1.predict(p, X=A), m2.predict(p, X=frame))


def test_inputs_are_not_mutated(segments):
    (X, p, y), _ = segments
    X0, p0, y0 = X.copy(), p.copy(), y.copy()
    MCGrad(**FAST).fit(p, y, X=X).predict(p, X=X)
    pd.testing.assert_frame_equal(X, X0)
    np.testing.assert_array_equal(p, p0)
    np.testing.assert_array_equal(y, y0)


# -- model files -------------------------------------------------------------------------------------------
def test_save_and_load_reproduce_predictions_exactly(fitted, segments, tmp_path):
    _, (Xt, pt, _) = segments
    path = mcal.save(fitted, tmp_path / "mcgrad.json")
    loaded = mcal.load(path)
    np.testing.assert_array_equal(loaded.predict(pt, X=Xt), fitted.predict(pt, X=Xt))
    assert loaded.n_rounds_ == fitted.n_rounds_ and loaded.get_params() == fitted.get_params()
    np.testing.assert_array_equal(loaded.rescale_factors_, fitted.rescale_factors_)
    np.testing.assert_array_equal(loaded.validation_losses_, fitted.validation_losses_)
    np.testing.assert_array_equal(loaded.feature_importances_, fitted.feature_importances_)
    assert loaded.feature_names_in_ == ["segment", "x"]


def test_categorical_features_given_as_an_array_of_names_round_trip_through_a_model_file(segments, tmp_path):
    # a documented form of the parameter that fitted but could not be saved ("cannot serialize ... <U7")
    (X, p, y), (Xt, pt, _) = segments
    model = MCGrad(**{**FAST, "categorical_features": np.array(["segment"])}).fit(p, y, X=X)
    loaded = mcal.load(mcal.save(model, tmp_path / "m.json"))
    np.testing.assert_array_equal(loaded.categorical_features, ["segment"])
    np.testing.assert_array_equal(loaded.predict(pt, X=Xt), model.predict(pt, X=Xt))


def test_a_parameter_that_cannot_be_saved_is_named():
    from mcal._persistence.codec import _encode_param

    with pytest.raises(TypeError, match="parameter categorical_features must be storable in a model file.*type object"):
        _encode_param("categorical_features", object())


def test_the_model_file_is_json_with_lightgbm_text_and_no_pickle(fitted, tmp_path):
    doc = json.loads(mcal.save(fitted, tmp_path / "m.json").read_text())
    state = doc["model"]["state"]
    assert len(state["boosters"]) == fitted.n_rounds_
    assert all(text.startswith("tree\n") for text in state["boosters"])
    assert state["encoder"]["categories"][0] == ["a", "b", "c"]


def _corrupt(fitted, change):
    data = json.loads(json.dumps(fitted.to_dict()))
    change(data["state"])
    return data


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda s: s["boosters"].pop(), "must hold n_rounds_"),
        (
            lambda s: s["boosters"].__setitem__(0, "not a model"),
            r"boosters\[0\] must be LightGBM model text \(from 'tree'.*got 'not a model'",
        ),
        (lambda s: s.__setitem__("boosters", "text"), "must be a list of LightGBM model strings"),
        (
            lambda s: s["rescale_factors_"]["__ndarray__"].__setitem__(0, 99.0),
            "rescale_factors_ must hold n_rounds_=.* values in",
        ),
        (lambda s: s.__setitem__("n_rounds_", -1), "n_rounds_ must be an integer >= 0; got -1"),
        (lambda s: s["feature_importances_"].update(__ndarray__=[1.0], shape=[1]), "must have shape"),
        (
            lambda s: s["encoder"].update(
                n_features=3,
                categorical=[True, False, False],
                feature_names=None,
                categories=[["a", "b", "c"], None, None],
            ),
            "must use 4 features",
        ),
        (lambda s: s.pop("encoder"), "encoder' must be a dict"),
        # an encoder edited to the other kind of column: the trees then read numbers as codes, or codes as numbers
        (
            lambda s: s["encoder"].update(categorical=[False, False], categories=[None, None]),
            r"boosters\[0\] must treat feature 0 as numerical, as the encoder does; .* gives it as categorical",
        ),
        (
            lambda s: s["encoder"].update(categorical=[True, True], categories=[["a", "b", "c"], ["0", "1"]]),
            r"boosters\[0\] must treat feature 1 as categorical, as the encoder does; .* gives it as numerical",
        ),
    ],
)
def test_loading_rejects_malformed_state(fitted, change, match):
    with pytest.raises(ValueError, match=match):
        MCGrad.from_dict(_corrupt(fitted, change))


def _edit_first_tree(old, new):
    """A change of the first booster's first tree (LightGBM 4 model text), as a hand edit of a model file."""

    def change(state):
        text = state["boosters"][0]
        start = text.index("Tree=0\n")
        assert old in text[start : text.index("Tree=1\n")]
        state["boosters"][0] = text[:start] + text[start:].replace(old, new, 1)

    return change


@pytest.mark.parametrize(
    "change, match",
    [
        # a line of another length: the header's tree_sizes no longer matched and LightGBM aborted the process
        (
            _edit_first_tree("leaf_value=", "leaf_value=0 "),
            r"boosters\[0\] has a malformed tree 0: leaf_value must hold 5",
        ),
        (_edit_first_tree("leaf_value=-0.1", "leaf_value=nan"), "leaf_value must hold finite numbers"),
        (
            _edit_first_tree("is_linear=0", "is_linear 0"),
            r"line 'is_linear 0' in tree 0",
        ),  # LightGBM read past the text
        (_edit_first_tree("shrinkage=", "foo=1\nshrinkage="), "unknown or repeated line 'foo=1'"),
        (_edit_first_tree("num_cat=2", "num_cat=3"), "cat_boundaries must hold 4 value"),
        (
            _edit_first_tree("split_feature=0 0 2 2", "split_feature=0 0 2 9"),
            r"split_feature must hold integers in \[0, 2\]",
        ),
        # a child index out of range (predict read out of bounds) and a loop (predict never returned)
        (_edit_first_tree("left_child=-1 2 -2 -3", "left_child=-1 20 -2 -3"), "must form a binary tree"),
        (_edit_first_tree("left_child=-1 2 -2 -3", "left_child=-1 2 1 -3"), "must form a binary tree"),
        (_edit_first_tree("threshold=0 1", "threshold=0 7"), "must index one of num_cat=2 category sets"),
        (
            lambda s: s.__setitem__(
                "boosters", [s["boosters"][0].replace("num_class=1", "num_class=3", 1), *s["boosters"][1:]]
            ),
            r"header line num_class= holds 1 \(a single-output model\); got '3'",
        ),
        (
            lambda s: s["boosters"].__setitem__(0, s["boosters"][0].split("\nend of trees")[0].rstrip("\n")),
            "must end each tree with an empty line",
        ),  # cut after a tree's last line: LightGBM read past the text
    ],
)
def test_loading_rejects_malformed_lightgbm_text_without_crashing(fitted, change, match):
    with pytest.raises(ValueError, match=match):
        MCGrad.from_dict(_corrupt(fitted, change))


def test_a_tree_edited_to_another_length_still_loads(fitted, segments, tmp_path):
    # LightGBM parses the trees of a text with tree_sizes in parallel at those offsets, and aborted the process
    # when a tree's length had changed; the checked trees are parsed one by one instead.
    _, (Xt, pt, _) = segments
    model = MCGrad.from_dict(_corrupt(fitted, _edit_first_tree("shrinkage=0.2", "shrinkage=0.200")))
    np.testing.assert_array_equal(model.predict(pt, X=Xt), fitted.predict(pt, X=Xt))


@pytest.mark.parametrize(
    "kwargs",
    [{"lightgbm_params": {"linear_tree": True}}, {"min_gain_to_split": 1e300}],
    ids=["linear trees", "one-leaf trees"],
)
def test_save_and_load_of_linear_and_one_leaf_trees(segments, tmp_path, kwargs):
    (X, p, y), (Xt, pt, _) = segments
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 2, **kwargs}).fit(p, y, X=X)
    loaded = mcal.load(mcal.save(model, tmp_path / "m.json"))
    np.testing.assert_array_equal(loaded.predict(pt, X=Xt), model.predict(pt, X=Xt))


def test_command_line_fit_and_predict_with_feature_columns(tmp_path):
    from mcal.cli import main

    X, p, y = segment_data(4000, seed=15)
    table = X.assign(segment=X["segment"].astype(str), p=p, y=y.astype(int))
    table.to_csv(tmp_path / "train.csv", index=False)
    model = tmp_path / "model.json"
    assert (
        main(
            [
                "fit",
                str(tmp_path / "train.csv"),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                "mcgrad",
                "--features",
                "segment,x",
                "--param",
                "min_child_samples=20",
                "--n-jobs",
                "1",
                "--random-state",
                "0",
                "-o",
                str(model),
            ]
        )
        == 0
    )
    assert main(["predict", str(model), str(tmp_path / "train.csv"), "-o", str(tmp_path / "out.csv")]) == 0
    out = pd.read_csv(tmp_path / "out.csv")
    loaded = mcal.load(model)
    assert loaded.feature_names_in_ == ["segment", "x"] and loaded.n_rounds_ >= 1
    np.testing.assert_allclose(out["p_calibrated"], loaded.predict(out["p"].to_numpy(), X=out[["segment", "x"]]))
    assert segment_errors(out, out["p_calibrated"].to_numpy(), y).max() < 0.03


def test_command_line_predicts_with_a_model_saved_from_python_by_its_feature_names(fitted, segments, tmp_path):
    # `mcal predict` found no feature columns in the metadata and failed with "X must hold the 2 feature(s)"
    from mcal.cli import main

    _, (Xt, pt, _) = segments
    Xt.assign(p=pt).to_csv(tmp_path / "new.csv", index=False)
    mcal.save(fitted, tmp_path / "model.json")
    assert (
        main(
            [
                "predict",
                str(tmp_path / "model.json"),
                str(tmp_path / "new.csv"),
                "--score-col",
                "p",
                "-o",
                str(tmp_path / "out.csv"),
            ]
        )
        == 0
    )
    out = pd.read_csv(tmp_path / "out.csv")
    np.testing.assert_allclose(out["p_calibrated"], fitted.predict(pt, X=Xt), rtol=0, atol=1e-12)


def test_command_line_reports_lightgbm_params_that_lightgbm_rejects_and_writes_nothing(tmp_path, capsys):
    # LightGBM's own error escaped the command line as a traceback
    from mcal.cli import main

    X, p, y = segment_data(500, seed=16)
    X.assign(p=p, y=y.astype(int)).to_csv(tmp_path / "train.csv", index=False)
    model = tmp_path / "model.json"
    assert (
        main(
            [
                "fit",
                str(tmp_path / "train.csv"),
                "--score-col",
                "p",
                "--label-col",
                "y",
                "--method",
                "mcgrad",
                "--features",
                "segment,x",
                "--n-jobs",
                "1",
                "--param",
                'lightgbm_params={"max_bin": 1}',
                "-o",
                str(model),
            ]
        )
        == 2
    )
    assert (
        "mcal: error: lightgbm_params['max_bin'] must be a value that LightGBM accepts; got 1, which LightGBM "
        "rejected: Check failed: (max_bin) > (1)\n"
    ) in capsys.readouterr().err
    assert not model.exists()


# -- bad input ---------------------------------------------------------------------------------------------
def test_unseen_category_at_predict_warns_once_and_acts_as_missing(fitted, segments):
    _, (Xt, pt, _) = segments
    X_new = Xt.iloc[:3].copy()
    X_new["segment"] = pd.Categorical(["zz", "zz", "a"])
    X_missing = Xt.iloc[:3].copy()
    X_missing["segment"] = pd.Categorical([None, None, "a"])
    with pytest.warns(
        CalibrationWarning,
        match=r"X has 1 categorical value\(s\) unseen at fit \(column .segment.: 1 value\(s\) in 2 row",
    ) as record:
        out = fitted.predict(pt[:3], X=X_new)
    assert len(record) == 1
    np.testing.assert_array_equal(out, fitted.predict(pt[:3], X=X_missing))


@pytest.mark.parametrize(
    "make_X, match",
    [
        (lambda X: X[["x"]], r"missing \['segment'\]"),
        (lambda X: X[["x", "segment"]], "in another order"),
        (lambda X: X.assign(extra=1.0), r"unexpected \['extra'\]"),
        (lambda X: X.to_numpy(), "must be a DataFrame with the columns seen at fit"),
        (lambda X: None, r"X must hold the 2 feature\(s\) seen at fit; got None"),
    ],
)
def test_wrong_features_at_predict_raise(fitted, segments, make_X, match):
    _, (Xt, pt, _) = segments
    with pytest.raises(ValueError, match=match):
        fitted.predict(pt, X=make_X(Xt))


def test_features_at_predict_for_a_model_fit_without_them_raise():
    rng = np.random.default_rng(10)
    p = rng.uniform(0.1, 0.9, 500)
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 1}).fit(p, (rng.random(500) < p) * 1.0)
    with pytest.raises(ValueError, match="must have 0 column"):
        model.predict(p, X=np.zeros((500, 1)))


@pytest.mark.parametrize(
    "y_prob, y, weight, match",
    [
        ([0.2, np.nan, 0.5, 0.6], [0, 1, 0, 1], None, "y_prob must be finite"),
        ([0.2, 1.5, 0.5, 0.6], [0, 1, 0, 1], None, r"y_prob must lie in \[0, 1\]"),
        ([0.2, 0.3, 0.5, 0.6], [0, 1, 0, 1], [0, 0, 0, 0], "sample_weight must have a positive sum"),
        ([0.2, 0.3, 0.5, 0.6], [1, 1, 1, 1], None, "y must contain both classes"),
        ([0.2, 0.3, 0.5, 0.6], [0, 1.5, 0, 1], None, r"y must lie in \[0, 1\]"),
    ],
)
def test_bad_training_data_raise(y_prob, y, weight, match):
    X = np.zeros((4, 1))
    with pytest.raises(ValueError, match=match):
        MCGrad(**FAST).fit(np.array(y_prob), np.array(y), X=X, sample_weight=weight)


@pytest.mark.parametrize("weight", [1e-300, 1e300])
def test_weights_outside_lightgbm_float32_range_raise(segments, weight):
    # LightGBM turned them into 0 ("sum of weights is zero") or into infinity (a model fitted on inf weights)
    (X, p, y), _ = segments
    with pytest.raises(
        ValueError,
        match=r"sample_weight must have its positive weights in \[1.175e-38, 3.403e\+38\], "
        r"LightGBM's float32 range; got weights from 1e[-+]300 to 1e[-+]300",
    ):
        MCGrad(**FAST).fit(p, y, X=X, sample_weight=np.full(p.size, weight))


def test_out_of_range_scores_at_predict_raise(fitted, segments):
    _, (Xt, pt, _) = segments
    bad = pt.copy()
    bad[0] = -0.1
    with pytest.raises(ValueError, match=r"y_prob must lie in \[0, 1\]"):
        fitted.predict(bad, X=Xt)


def test_tiny_data_raises_for_early_stopping_and_fits_with_fixed_rounds():
    X = np.array([[0.0], [1.0], [2.0]])
    p, y = np.array([0.3, 0.6, 0.4]), np.array([0.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"at least 2 rows of each class for early_stopping='holdout'; got \[1, 2\]"):
        MCGrad(**FAST).fit(p, y, X=X)
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 1}).fit(p, y, X=X)
    assert np.all(np.isfinite(model.predict(p, X=X)))


@pytest.mark.parametrize("fraction, rows", [(1e-6, "test_size = 1"), (0.999999, "train set will be empty")])
def test_a_validation_fraction_that_leaves_a_side_empty_names_it(segments, fraction, rows):
    (X, p, y), _ = segments
    with pytest.raises(
        ValueError, match=rf"early_stopping='holdout' with validation_fraction={fraction} of 6000 rows: .*{rows}"
    ):
        MCGrad(**{**FAST, "validation_fraction": fraction}).fit(p, y, X=X)


def test_kfold_needs_n_folds_rows_of_each_class():
    rng = np.random.default_rng(11)
    y = np.array([1.0] * 3 + [0.0] * 50)
    with pytest.raises(ValueError, match="at least 5 rows of each class for early_stopping='kfold'"):
        MCGrad(**{**FAST, "early_stopping": "kfold"}).fit(rng.uniform(size=53), y, X=np.zeros((53, 1)))


def test_predict_before_fit_raises():
    with pytest.raises(NotFittedError):
        MCGrad().predict(np.array([0.5]), X=np.zeros((1, 1)))


@pytest.mark.parametrize(
    "param, value, match",
    [
        ("max_rounds", -1, "max_rounds must be an integer >= 0"),
        ("patience", -1, "patience must be an integer >= 0; got -1$"),
        ("n_folds", 1, "n_folds must be an integer >= 2"),
        ("n_estimators", 0, "n_estimators must be an integer >= 1"),
        ("max_leaves", 1, "max_leaves must be an integer >= 2"),
        ("min_child_samples", -1, "min_child_samples must be an integer >= 0"),
        ("early_stopping", "auto", "early_stopping must be 'holdout', 'kfold' or None"),
        ("validation_fraction", 1.0, r"validation_fraction must be a number in \(0, 1\)"),
        ("validation_fraction", Fraction(3, 2), r"validation_fraction must be a number in \(0, 1\); got Fraction"),
        ("learning_rate", 0.0, "learning_rate must be a finite number > 0"),
        ("l2_regularization", -1.0, "l2_regularization must be a finite number >= 0"),
        ("min_sum_hessian_in_leaf", np.nan, "min_sum_hessian_in_leaf must be a finite number >= 0"),
        (
            "n_jobs",
            0,
            r"n_jobs must be None, an integer >= 1, or a negative integer counting back from the cores "
            r"\(-1: all\); got 0",
        ),
        ("random_state", -1, "random_state must be None or a non-negative integer; got -1$"),
        ("lightgbm_params", {"num_leaves": 7}, "must not set 'num_leaves'.*use the argument max_leaves="),
        ("lightgbm_params", {"nthread": 2}, "must not set 'nthread'.*use the argument n_jobs="),
        ("lightgbm_params", {"objective": "binary"}, "must not set 'objective'.*cannot be changed"),
        # options of LightGBM's binary objective, silently ignored by the cross-entropy one
        ("lightgbm_params", {"is_unbalance": True}, "must not set 'is_unbalance', which LightGBM ignores under"),
        ("lightgbm_params", {"scale_pos_weight": 3.0}, "must not set 'scale_pos_weight'.*sample_weight"),
        (
            "lightgbm_params",
            {"pos_bagging_fraction": 0.5},
            "must not set 'pos_bagging_fraction', which LightGBM ignores",
        ),
        # LightGBM ignores names it does not know (its warning is silenced by verbosity=-1)
        (
            "lightgbm_params",
            {"max_bn": 63},
            r"got 'max_bn', which LightGBM does not know and would ignore "
            r"\(did you mean 'max_bin'",
        ),
        ("lightgbm_params", {"zzqq": 1}, r"got 'zzqq', which LightGBM does not know and would ignore$"),
        # aliases of reserved names, from LightGBM's own table (they changed the model past the reservation)
        ("lightgbm_params", {"bagging_fraction_seed": 1}, "must not set 'bagging_fraction_seed'.*random_state="),
        ("lightgbm_params", {"data_seed": 1}, "must not set 'data_seed'.*random_state="),
        # names LightGBM knows that are not training parameters (files, tasks, prediction)
        ("lightgbm_params", {"task": "predict"}, "must hold training parameters; got 'task'"),
        ("lightgbm_params", {"forcedsplits_filename": "x.json"}, "must hold training parameters; got 'forcedsplits"),
        ("lightgbm_params", {"predict_raw_score": True}, "must hold training parameters; got 'predict_raw_score'"),
        # LightGBM read max_bin=2**32+15 as 15 (mcal hands it on as a float, which LightGBM refuses for an int32
        # parameter); a string with a space set a second parameter
        (
            "lightgbm_params",
            {"max_bin": 2**32 + 15},
            r"lightgbm_params\['max_bin'\] must be a value that LightGBM accepts; got 4294967311, which LightGBM "
            r"rejected: Parameter max_bin should be of type int",
        ),
        ("lightgbm_params", {"max_bin": "63 num_iterations=3"}, "must be a string without whitespace or '='"),
        # a NaN reached LightGBM's JSON reader; an inf fitted a model that could not be saved
        (
            "lightgbm_params",
            {"max_delta_step": np.nan},
            r"lightgbm_params\['max_delta_step'\] must hold finite numbers",
        ),
        ("lightgbm_params", {"lambda_l1": np.inf}, r"lightgbm_params\['lambda_l1'\] must hold finite numbers; got inf"),
        # LightGBM checks it against one Dataset's columns; the score column is binned apart
        (
            "lightgbm_params",
            {"max_bin_by_feature": [63, 63, 63]},
            "must not set 'max_bin_by_feature', which MCGrad cannot pass on.*use max_bin",
        ),
        # LightGBM reads these as int32: larger values wrapped around (min_child_samples=2**40 became 0),
        # hung (n_estimators); num_leaves is capped at 131072
        (
            "min_child_samples",
            2**40,
            r"min_child_samples must be an integer >= 0 and <= 2147483647 \(LightGBM's int32\)",
        ),
        ("n_estimators", 2**40, r"n_estimators must be an integer >= 1 and <= 2147483647"),
        (
            "max_depth",
            2**40,
            r"max_depth must be an integer >= -2147483647 and <= 2147483647 \(LightGBM's int32; "
            r"<= 0 for no limit\); got 1099511627776",
        ),
        ("max_leaves", 131073, "max_leaves must be an integer >= 2 and <= 131072; got 131073"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(param, value, match):
    with pytest.raises(ValueError, match=match):
        MCGrad(**{**FAST, param: value}).fit(np.array([0.2, 0.8]), np.array([0, 1]), X=np.zeros((2, 1)))


@pytest.mark.parametrize(
    "param, value, rule",
    [
        # each of these was a ValueError; bools are not integers, and integral floats are not integers either
        ("max_rounds", 2.0, "an integer >= 0"),
        ("max_rounds", True, "an integer >= 0"),
        ("patience", 1.5, "an integer >= 0"),
        ("n_folds", "5", "an integer >= 2"),
        ("n_estimators", 20.0, r"an integer >= 1 and <= 2147483647 \(LightGBM's int32\)"),
        ("max_leaves", np.float64(5), "an integer >= 2 and <= 131072"),
        ("min_child_samples", None, r"an integer >= 0 and <= 2147483647 \(LightGBM's int32\)"),
        ("max_depth", 2.5, r"an integer >= -2147483647 and <= 2147483647 \(LightGBM's int32; <= 0 for no limit\)"),
        ("max_depth", False, r"an integer >= -2147483647 and <= 2147483647 \(LightGBM's int32; <= 0 for no limit\)"),
        ("n_jobs", 2.0, r"None, an integer >= 1, or a negative integer counting back from the cores \(-1: all\)"),
        ("n_jobs", True, r"None, an integer >= 1, or a negative integer counting back from the cores \(-1: all\)"),
        ("random_state", "seed", "None or a non-negative integer"),
        ("random_state", 1.0, "None or a non-negative integer"),
        ("rescale", "yes", "True or False"),
        ("rescale", 1, "True or False"),
        ("progress", 1, r"True, False or None \(automatic\)"),
        ("progress", "yes", r"True, False or None \(automatic\)"),
        ("early_stopping", True, "'holdout', 'kfold' or None"),
        ("early_stopping", 5, "'holdout', 'kfold' or None"),
        # these already were TypeErrors (check_real)
        ("validation_fraction", "0.2", r"a number in \(0, 1\)"),
        ("learning_rate", True, "a finite number > 0"),
        ("l2_regularization", None, "a finite number >= 0"),
        ("min_gain_to_split", "0", "a finite number >= 0"),
        ("min_sum_hessian_in_leaf", [1e-3], "a finite number >= 0"),
    ],
)
def test_parameters_of_a_bad_type_raise_type_error_naming_them(param, value, rule):
    with pytest.raises(TypeError, match=rf"^{param} must be {rule}; got {re.escape(repr(value))}"):
        MCGrad(**{**FAST, param: value}).fit(np.array([0.2, 0.8]), np.array([0, 1]), X=np.zeros((2, 1)))


def test_integral_numpy_parameters_are_accepted_as_integers():
    # numpy integers are integers (a grid search hands them over), numpy bools are bools
    p, y, X = np.array([0.2, 0.8] * 20), np.array([0, 1] * 20), np.zeros((40, 1))
    model = MCGrad(
        **{
            **FAST,
            "max_rounds": np.int64(1),
            "n_estimators": np.int32(2),
            "max_leaves": np.int64(3),
            "n_jobs": np.int64(1),
            "random_state": np.int64(0),
            "rescale": np.bool_(True),
            "early_stopping": None,
        }
    ).fit(p, y, X=X)
    assert model.n_rounds_ == 1


@pytest.mark.parametrize(
    "n_jobs, threads", [(None, 0), (3, 3), (-1, 4), (-2, 3), (-4, 1), (-5, 1), (-16, 1), (5, 4), (10**10, 4)]
)
def test_n_jobs_follows_scikit_learn_negative_values_counting_back_from_the_cores(monkeypatch, n_jobs, threads):
    # joblib's rule, n_cpus + 1 + n_jobs and at least 1 (a model saved with -16 on a server loads on a laptop),
    # here on 4 cores; more than the cores are the cores (LightGBM crashed on
    # n_jobs=100000 and aborted on 10**10); None leaves LightGBM its default (0)
    monkeypatch.setattr("mcal._lightgbm._cores", lambda: 4)
    assert MCGrad(n_jobs=n_jobs)._lightgbm_params(0)["num_threads"] == threads
    assert DFMC(n_jobs=n_jobs)._params()["num_threads"] == threads


@pytest.mark.parametrize("n_rows, threads", [(None, 0), (10, 1), (19_999, 1), (20_000, 2), (30_000, 3), (10**9, 4)])
def test_default_n_jobs_fits_with_one_thread_per_10k_rows_up_to_the_cores(monkeypatch, n_rows, threads):
    # None: 1 thread below 20k rows, then one per 10k rows, capped at the 4 cores (all free: load 0); without rows
    # LightGBM's 0
    monkeypatch.setattr("mcal._lightgbm._cores", lambda: 4)
    monkeypatch.setattr("mcal._lightgbm.others_running", lambda: 0)
    assert MCGrad()._lightgbm_params(0, n_rows)["num_threads"] == threads
    assert DFMC()._params(n_rows)["num_threads"] == threads
    assert MCGrad(n_jobs=3)._lightgbm_params(0, n_rows)["num_threads"] == 3  # an explicit n_jobs is kept


@pytest.mark.parametrize("n_jobs, n_rows, threads", [(None, 2, 1), (None, 19_999, 1), (None, 30_000, 3), (2, 2, 2)])
def test_predict_threads_are_one_per_10k_rows_by_default(monkeypatch, segments, n_jobs, n_rows, threads):
    # the threads each booster's predict gets, seen by a stand-in for Booster.predict on a fitted model
    monkeypatch.setattr("mcal._lightgbm._cores", lambda: 4)
    monkeypatch.setattr("mcal._lightgbm.others_running", lambda: 0)
    (X, p, y), _ = segments
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 1}).fit(p, y, X=X)
    model.set_params(n_jobs=n_jobs)
    seen = []
    monkeypatch.setattr(
        type(model.boosters_[0]),
        "predict",
        lambda self, data, **kw: seen.append(kw["num_threads"]) or np.zeros(data.shape[0]),
    )
    rows = np.resize(np.arange(len(p)), n_rows)
    model.predict(p[rows], X=X.iloc[rows] if hasattr(X, "iloc") else X[rows])
    assert seen == [threads]


@pytest.mark.parametrize(
    "value, match",
    [
        ([("max_bin", 63)], "must be a dict or None"),
        (
            {"max_bin": object()},
            r"must be a bool, number or string, a list \(tuple or 1-D numpy array\) "
            r"of them, or a list of such",
        ),
        ({"max_bin": None}, r"lightgbm_params\['max_bin'\] must be a bool, number or string.*; got None"),
        ({"interaction_constraints": [[[0]]]}, "must be a bool, number or string"),
        ({1: 2}, "lightgbm_params keys must be strings; got 1"),
    ],
)
def test_bad_lightgbm_params_types_raise_type_error(value, match):
    with pytest.raises(TypeError, match=match):
        MCGrad(lightgbm_params=value).fit(np.array([0.2, 0.8]), np.array([0, 1]), X=np.zeros((2, 1)))


_MONOTONE_RULE = (
    r"lightgbm_params\['(monotone_constraints|mc|monotonic_cst)'\] must hold 3 values in "
    r"\{-1, 0, 1\}.* categorical columns \['segment'\]; got"
)


@pytest.mark.parametrize(
    "params, match",
    [
        # LightGBM 4.7 aborted the process on a monotone constraint on a categorical column
        ({"monotone_constraints": [1, 0, 0]}, _MONOTONE_RULE),
        ({"mc": "1,0,0"}, _MONOTONE_RULE),
        ({"monotone_constraints": [0, 1]}, _MONOTONE_RULE),
        ({"monotonic_cst": [0, 2, 0]}, _MONOTONE_RULE),
    ],
    ids=["monotone on a categorical column", "monotone alias as text", "monotone one short", "monotone not a sign"],
)
def test_lightgbm_params_checked_at_fit_raise_value_error_naming_them(segments, params, match):
    (X, p, y), _ = segments
    with pytest.raises(ValueError, match=match):
        MCGrad(**{**FAST, "lightgbm_params": params}).fit(p, y, X=X)


def test_monotone_constraint_on_the_score_makes_each_round_increasing_in_it(segments):
    (X, p, y), _ = segments
    model = MCGrad(
        **{**FAST, "early_stopping": None, "max_rounds": 1, "lightgbm_params": {"monotone_constraints": [0, 0, 1]}}
    ).fit(p, y, X=X)
    rows = np.repeat(model.encoder_.transform(X.iloc[:50], n_extra_columns=1), 30, axis=0)
    rows[:, -1] = np.tile(np.linspace(-4, 4, 30), 50)
    raw = model.boosters_[0].predict(rows, raw_score=True).reshape(50, 30)
    assert np.all(np.diff(raw, axis=1) >= 0)


def test_numpy_scalars_in_lightgbm_params_reach_the_boosters(segments):
    # np.float64 was accepted and np.int64 rejected as "not a scalar"
    (X, p, y), _ = segments
    model = MCGrad(
        **{
            **FAST,
            "early_stopping": None,
            "max_rounds": 1,
            "lightgbm_params": {"max_bin": np.int64(15), "linear_tree": np.bool_(True)},
        }
    ).fit(p, y, X=X)
    text = model.boosters_[0].model_to_string()
    assert "[max_bin: 15]" in text and "[linear_tree: 1]" in text


def test_interaction_constraints_as_a_list_of_lists_reach_the_boosters(segments):
    (X, p, y), _ = segments
    model = MCGrad(
        **{
            **FAST,
            "early_stopping": None,
            "max_rounds": 1,
            "lightgbm_params": {"interaction_constraints": [[0], [1, 2]]},
        }
    ).fit(p, y, X=X)
    assert "[interaction_constraints: [0],[1,2]]" in model.boosters_[0].model_to_string()


def test_extra_lightgbm_params_reach_the_boosters(segments):
    (X, p, y), _ = segments
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 1, "lightgbm_params": {"max_bin": 15}}).fit(
        p, y, X=X
    )
    assert "[max_bin: 15]" in model.boosters_[0].model_to_string()


def test_progress_bar_counts_every_round_fitted(segments, monkeypatch):
    # one update per round, in early stopping and in the refit: validation rounds + chosen rounds
    import mcal.mcgrad.engine as engine

    bars = []

    class Bar:
        def __init__(self):
            self.n = 0

        def update(self, n=1, **postfix):
            self.n += n

    class Ctx:
        def __init__(self, total, desc, *, enabled=None, unit="step"):
            assert enabled is True and unit == "round"
            self.bar = Bar()
            bars.append((desc, self.bar))

        def __enter__(self):
            return self.bar

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(engine, "progress", Ctx)
    (X, p, y), _ = segments
    est = MCGrad(**FAST, progress=True).fit(p, y, X=X)
    assert [d for d, _ in bars] == ["MCGrad early stopping", "MCGrad refit"]
    assert bars[0][1].n == len(est.validation_losses_) - 1
    assert bars[1][1].n == est.n_rounds_


@pytest.mark.parametrize("seed, kind", [(0, "training"), (1, "validation")])
def test_an_early_stopping_part_without_positive_weight_raises_before_lightgbm(seed, kind):
    # weight on two rows only: the holdout split leaves one part without weight (which part depends on the seed);
    # LightGBM raised "sum of weights is zero" on a training part, and a validation part's loss was 0/0
    rng = np.random.default_rng(0)
    n = 600
    X = rng.normal(size=(n, 1))
    y = (rng.random(n) < 0.5).astype(float)
    w = np.zeros(n)
    w[[np.flatnonzero(y == 1)[0], np.flatnonzero(y == 0)[0]]] = 1.0
    with pytest.raises(
        ValueError,
        match=f"positive weight in every early-stopping part; the {kind} part of the split "
        f"drawn with random_state={seed} has none",
    ):
        MCGrad(**{**FAST, "random_state": seed}).fit(np.full(n, 0.5), y, X=X, sample_weight=w)


def test_warnings_point_at_the_callers_line_not_into_mcal(segments):
    # a fixed stack level pointed at the decorator around MCGrad._fit_rounds, inside mcal
    (X, p, y), _ = segments
    with pytest.warns(CalibrationWarning, match="early stopping chose max_rounds=1") as record:
        MCGrad(**{**FAST, "max_rounds": 1}).fit(p, y, X=X)
    assert record[0].filename == __file__


@pytest.mark.parametrize(
    "declared",
    [pd.Index(["c"]), pd.Series(["c"]), {"c"}, np.array(["c"], dtype=object)],
    ids=["index", "series", "set", "object-array"],
)
def test_categorical_features_given_as_an_index_series_or_set_save_and_load(tmp_path, declared):
    # df.columns[...] is the natural way to name columns; it fitted, then mcal.save could not serialize it
    rng = np.random.default_rng(0)
    n = 3000
    X = pd.DataFrame({"c": rng.integers(0, 4, n), "x": rng.normal(size=n)})
    p = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < np.clip(p + 0.1 * (X["c"] == 2), 0, 1)).astype(float)
    model = MCGrad(categorical_features=declared, n_jobs=1, early_stopping=None, max_rounds=1, random_state=0)
    model.fit(p, y, X=X)
    loaded = mcal.load(mcal.save(model, tmp_path / "m.json"))
    assert loaded.categorical_features == ["c"] and list(loaded.encoder_.categorical_) == [True, False]
    np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))


@pytest.mark.parametrize("validate", [True, False], ids=["early-stopping", "refit"])
def test_rounds_that_make_the_logits_non_finite_raise_naming_the_divergence(validate):
    # a round whose F + h_t overflows (a diverging boosting) must not end in a NaN validation loss that the model
    # file cannot hold, nor in a refit predicting 0 or NaN
    from mcal.mcgrad.engine import Part, boost_rounds

    class Diverging(LocalEngine):
        def fit_round(self, part, valid=None):
            return None, np.full(part.y.shape[0], np.inf), None if valid is None else np.full(valid.y.shape[0], np.inf)

    rng = np.random.default_rng(0)
    y = (rng.random(50) < 0.5).astype(float)
    part = lambda: Part(np.zeros((50, 1)), y, np.ones(50), np.zeros(50))
    engine = Diverging({}, 1, [])
    with pytest.raises(
        ValueError,
        match=r"must keep the scores finite; got a (validation|training) loss of (inf|nan) "
        r"after round 1: the boosting diverged",
    ):
        boost_rounds(engine, [part()], [part()] if validate else None, max_rounds=2, patience=0, rescale=False)


def test_a_column_of_date_objects_is_refused_unless_declared_categorical_then_a_level_per_date(tmp_path):
    # it was silently categorical, one level per timestamp, while a datetime64 column was refused even if declared
    import datetime

    X, p, y = segment_data(2000, seed=14)
    first = datetime.datetime(2024, 1, 1)
    days = pd.Series([first + datetime.timedelta(days=int(c)) for c in X["segment"].cat.codes], dtype=object)
    with pytest.raises(
        TypeError,
        match=r"X column 'day' must be converted to numbers \(e\.g\. .*\) or declared in "
        r"categorical_features; got dtype object holding datetime values",
    ):
        MCGrad(**FAST).fit(p, y, X=X[["x"]].assign(day=days))
    as_text = X[["x"]].assign(day=days.astype(str))
    expected = MCGrad(**FAST).fit(p, y, X=as_text).predict(p, X=as_text)
    by_date = MCGrad(**FAST, categorical_features=["day"]).fit(p, y, X=X[["x"]].assign(day=days))
    np.testing.assert_array_equal(by_date.predict(p, X=X[["x"]].assign(day=days)), expected)
    as_datetime64 = X[["x"]].assign(day=pd.to_datetime(days))  # the same dates, by the same text
    np.testing.assert_array_equal(by_date.predict(p, X=as_datetime64), expected)


def _rounds_against_predictions(monkeypatch):
    """Record, for each round MCGrad fits, (the logits it keeps, the booster's predictions) on the training rows and
    on the validation rows."""
    from mcal.mcgrad.engine import Part

    compared, original = {"train": [], "valid": []}, LocalEngine.fit_round

    def checked(self, part, valid=None):
        booster, z, z_valid = original(self, part, valid)
        rows = np.arange(part.y.shape[0]) if part.rows is None else part.rows
        compared["train"].append((z, part.F + self.predict_raw(booster, Part(part.X, None, None, part.F, rows=rows))))
        if valid is not None:
            compared["valid"].append((z_valid, valid.F + self.predict_raw(booster, valid)))
        return booster, z, z_valid

    monkeypatch.setattr(LocalEngine, "fit_round", checked)
    return compared


@pytest.mark.parametrize("early_stopping", ["holdout", "kfold"])
@pytest.mark.parametrize("with_features", [True, False], ids=["features", "score-only"])
def test_validation_scores_read_from_lightgbm_equal_the_boosters_predictions(
    monkeypatch, early_stopping, with_features
):
    # the validation rows' F + h_t come from LightGBM's scores of a validation Dataset binned with the round's bins;
    # they must be what the booster predicts from the raw features: missing values, categories, far logits included
    rng = np.random.default_rng(3)
    n = 3000
    X = pd.DataFrame({"c": rng.choice(["a", "b", "c"], n), "x": rng.normal(size=n)})
    X.loc[rng.random(n) < 0.1, "x"] = np.nan
    p = expit(rng.normal(0, 3, n) + (X["c"] == "b").to_numpy())
    p[:40] = np.where(rng.random(40) < 0.5, 1e-12, 1 - 1e-12)  # logits beyond what expit and logit recover
    y = (rng.random(n) < p).astype(float)
    compared = _rounds_against_predictions(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        MCGrad(**{**FAST, "max_rounds": 3, "early_stopping": early_stopping}).fit(p, y, X=X if with_features else None)
    assert len(compared["valid"]) >= (5 if early_stopping == "kfold" else 1)
    for read, predicted in compared["valid"] + compared["train"]:
        assert np.abs(predicted).max() > 16  # the far rows are among them
        np.testing.assert_allclose(read, predicted, rtol=0, atol=1e-9)


def test_rounds_of_linear_trees_are_the_boosters_predictions(monkeypatch):
    # LightGBM's own scores of the rows of linear trees differ from its predictions (by 1e-2 here): the rounds'
    # logits, training and validation alike, must be what predict computes
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 2))
    p = expit(X[:, 0])
    y = (rng.random(4000) < expit(1.5 * X[:, 0] - X[:, 1])).astype(float)
    compared = _rounds_against_predictions(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CalibrationWarning)
        MCGrad(**{**FAST, "max_rounds": 2, "lightgbm_params": {"linear_tree": True}}).fit(p, y, X=X)
    assert compared["valid"] and len(compared["train"]) >= 2
    for read, predicted in compared["valid"] + compared["train"]:
        np.testing.assert_allclose(read, predicted, rtol=0, atol=1e-12)

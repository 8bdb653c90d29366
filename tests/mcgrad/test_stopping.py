"""Tests of MCGrad's standard-error early-stopping rule (``min_gain_se``): a round is kept only if its validation
gain exceeds that many standard errors of the gain."""

import numpy as np
import pytest

pytest.importorskip("lightgbm")

import mcal
from mcal import MCGrad, RegressionMCGrad
from mcal.mcgrad.engine import LocalEngine, Part, Rescaling, SquaredError, Stopping, boost_rounds
from mcal.mcgrad.losses import LOG_LOSS, gain_exceeds, gain_sums
from tests.mcgrad.test_estimator import FAST, segment_data


def test_the_gain_and_its_standard_error_by_hand():
    # Squared error, best round at 1, new round at [0, 0, 0, 1.5]: per-row gains [1, 1, 1, -1.25],
    # mean 0.4375, standard error sqrt(3 * 0.5625^2 + 1.6875^2) / 4 = 0.48714: z = 0.8981.
    y, best, new = np.zeros(4), np.ones(4), np.array([0.0, 0.0, 0.0, 1.5])
    sums = gain_sums(SquaredError(), y, best, new, np.ones(4))
    np.testing.assert_allclose(sums, [4.0, 1.75, 4.0, 1.75, 3 + 1.5625])
    assert gain_exceeds([sums], 0.89) and not gain_exceeds([sums], 0.90)
    # Weights read as sampling weights: scaling them all changes nothing.
    assert not gain_exceeds([gain_sums(SquaredError(), y, best, new, np.full(4, 7.0))], 0.90)


def test_the_weighted_gain_rule_matches_the_formula_and_pools_parts(rng):
    y = (rng.random(300) < 0.4).astype(float)
    best, new, w = rng.normal(size=300), rng.normal(size=300), rng.uniform(0.1, 3.0, 300)
    g = LOG_LOSS.loss(y, best) - LOG_LOSS.loss(y, new)
    gain = np.sum(w * g) / w.sum()
    z = gain / (np.sqrt(np.sum(w**2 * (g - gain) ** 2)) / w.sum())
    halves = [gain_sums(LOG_LOSS, y[s], best[s], new[s], w[s]) for s in (slice(0, 120), slice(120, None))]
    whole = gain_sums(LOG_LOSS, y, best, new, w)
    np.testing.assert_allclose(np.sum(halves, axis=0), whole, rtol=1e-12)
    for k in (z - 1e-9, z + 1e-9):  # z of either sign: the rule is gain > k * se
        assert gain_exceeds(halves, k) == (z > k)


class _ScriptedEngine(LocalEngine):
    """Rounds that leave the training part alone and move the validation scores by scripted amounts."""

    def __init__(self, moves):
        super().__init__({}, 1, [], SquaredError())
        self.moves = list(moves)

    def fit_round(self, part, valid=None):
        return "booster", part.F.copy(), None if valid is None else valid.F + self.moves.pop(0)


def _scripted_parts():
    train = [Part(None, np.zeros(3), np.ones(3), np.zeros(3))]
    return train, [Part(None, np.zeros(100), np.ones(100), np.ones(100))]


def _scripted_path(min_gain_se, patience=0, max_rounds=3):
    # Validation labels 0, scores 1. Round 1 moves every row to 0.5 (a gain of 0.75 on each row); round 2 is
    # noise: 62 rows to 0 (gain 0.25), 38 rows to 0.8 (gain -0.39), a mean gain of +0.0068 with a standard
    # error of 0.031 (z = 0.22); round 3 moves every row to 0.45 (a gain of 0.0475 over round 1 on each row).
    noise = np.where(np.arange(100) < 62, -0.5, 0.3)
    engine = _ScriptedEngine([np.full(100, -0.5), noise, np.full(100, -0.05 - noise)])
    stopping = Stopping(max_rounds, patience, min_gain_se=min_gain_se)
    return boost_rounds(engine, *_scripted_parts(), stopping, Rescaling(rescale=False))


def test_a_noise_round_is_rejected_and_a_real_gain_is_kept():
    plain, ruled = _scripted_path(0.0, max_rounds=2), _scripted_path(1.0, max_rounds=2)
    assert plain.losses[2] < plain.losses[1]  # the noise round does lower the mean loss
    assert plain.best_round == 2
    assert ruled.best_round == 1  # round 1 kept (z infinite), round 2 rejected
    assert _scripted_path(1.0).losses == plain.losses  # and patience 0 stops there


def test_the_keywords_of_mcal_0_1_give_the_same_rounds_with_a_deprecation_warning():
    noise = np.where(np.arange(100) < 62, -0.5, 0.3)
    moves = [np.full(100, -0.5), noise, np.full(100, -0.05 - noise)]
    new = _scripted_path(1.0, patience=1)
    with pytest.warns(
        DeprecationWarning, match=r"boost_rounds\(max_rounds=.* pass stopping=mcal.mcgrad.engine.Stopping"
    ):
        old = boost_rounds(
            _ScriptedEngine(moves), *_scripted_parts(), max_rounds=3, patience=1, rescale=False, min_gain_se=1.0
        )
    assert (old.losses, old.scores, old.best_round) == (new.losses, new.scores, new.best_round)
    assert new.best_round == 3  # the rule and the patience reached the engine both ways


@pytest.mark.parametrize(
    "stopping, old, message",
    [
        (None, {}, "must be given stopping"),
        (Stopping(3), {"patience": 1}, "not both"),
        (None, {"patience": 1}, "must be given max_rounds"),
        (Stopping(3), {"max_round": 3}, "unexpected keyword"),
    ],
)
def test_boost_rounds_refuses_a_missing_doubled_or_unknown_stopping_argument(stopping, old, message):
    with pytest.raises(TypeError, match=message):
        boost_rounds(_ScriptedEngine([]), *_scripted_parts(), stopping, **old)


def test_after_a_rejected_round_the_next_is_judged_against_the_best_round():
    ruled = _scripted_path(1.0, patience=1)
    # Round 3 (every row at 0.45) gains 0.0475 on every row over round 1, the best: kept.
    assert ruled.best_round == 3
    assert ruled.losses[3] == pytest.approx(0.45**2)


def test_on_calibrated_scores_the_rule_takes_no_noise_round():
    # Scores calibrated by construction (no shift), features unrelated to the label; seed chosen so that the
    # plain rule keeps a noise round on the holdout rows.
    X, p, y = segment_data(4000, seed=11, shift=(0.0, 0.0, 0.0))
    params = {**FAST, "max_rounds": 10, "random_state": 2}
    plain = MCGrad(**params, min_gain_se=0.0).fit(p, y, X=X)
    ruled = MCGrad(**params, min_gain_se=1.0).fit(p, y, X=X)
    assert plain.n_rounds_ >= 1
    assert ruled.n_rounds_ == 0
    np.testing.assert_array_equal(ruled.predict(p, X=X), p)


@pytest.mark.parametrize("early_stopping", ["holdout", "kfold"])
def test_a_planted_shift_is_still_learned_under_the_rule(early_stopping):
    X, p, y = segment_data(5000, seed=3)
    model = MCGrad(**FAST, min_gain_se=1.0, early_stopping=early_stopping, n_folds=3).fit(p, y, X=X)
    assert model.n_rounds_ >= 1
    pred = model.predict(p, X=X)
    for level, shift in zip("abc", (-0.8, 0.0, 0.8), strict=True):  # the mean logit gap is removed in each segment
        rows = (X["segment"] == level).to_numpy()
        assert abs(pred[rows].mean() - y[rows].mean()) < 0.02, (level, shift)


def test_the_rule_applies_to_an_eval_set_and_to_regression():
    X, p, y = segment_data(4000, seed=11, shift=(0.0, 0.0, 0.0))
    Xv, pv, yv = segment_data(2000, seed=12, shift=(0.0, 0.0, 0.0))
    params = {**FAST, "max_rounds": 10, "learning_rate": 0.5}
    plain = MCGrad(**params).fit(p, y, X=X, eval_set=(pv, yv, Xv))
    ruled = MCGrad(**params, min_gain_se=1.0).fit(p, y, X=X, eval_set=(pv, yv, Xv))
    assert ruled.n_rounds_ <= plain.n_rounds_
    losses = ruled.validation_losses_
    assert ruled.n_rounds_ < plain.n_rounds_ or np.all(losses[1 : ruled.n_rounds_ + 1] < losses[: ruled.n_rounds_])
    assert RegressionMCGrad().get_params()["min_gain_se"] == MCGrad().get_params()["min_gain_se"]


@pytest.mark.parametrize(("value", "error"), [(-0.5, ValueError), ("1", TypeError), (np.inf, ValueError)])
def test_a_bad_min_gain_se_raises_naming_it(value, error):
    X, p, y = segment_data(500, seed=1)
    with pytest.raises(error, match="min_gain_se"):
        MCGrad(**FAST, min_gain_se=value).fit(p, y, X=X)


def test_a_model_file_without_min_gain_se_loads_and_predicts_the_same(tmp_path):
    X, p, y = segment_data(2000, seed=5)
    model = MCGrad(**FAST).fit(p, y, X=X)
    data = model.to_dict()
    del data["params"]["min_gain_se"]  # as written before the parameter existed
    loaded = MCGrad.from_dict(data)
    assert loaded.min_gain_se == MCGrad().min_gain_se
    np.testing.assert_array_equal(loaded.predict(p, X=X), model.predict(p, X=X))
    mcal.save(loaded, tmp_path / "m.json")
    np.testing.assert_array_equal(mcal.load(tmp_path / "m.json").predict(p, X=X), model.predict(p, X=X))


@pytest.mark.slow  # a Dask cluster
def test_the_dask_engine_gives_the_local_gain_sums(client, rng):
    da = pytest.importorskip("dask.array")
    from mcal.dask._engine import DaskEngine

    y = (rng.random(1000) < 0.3).astype(float)
    best, new, w = rng.normal(size=1000), rng.normal(size=1000), rng.uniform(0.5, 2.0, 1000)
    engine = DaskEngine(client, {}, 1, [], None)
    got = engine.gain_sums(*(da.from_array(a, chunks=300) for a in (y, best, new, w)))
    np.testing.assert_allclose(got, LocalEngine({}, 1, []).gain_sums(y, best, new, w), rtol=1e-12)

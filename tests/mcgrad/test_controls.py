"""Tests of MCGrad's training controls: eval_set, early_stopping_metric, staged_predict, max_time."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

pytest.importorskip("lightgbm")

import mcal
from mcal import CalibrationWarning, MCGrad
from mcal.mcgrad import _controls, engine
from mcal.metrics import ecce, log_loss, mce
from tests.mcgrad.test_estimator import FAST, segment_data


@pytest.fixture(scope="module")
def data():
    return segment_data(5000, seed=3), segment_data(3000, seed=4), segment_data(3000, seed=5)


def test_staged_predictions_equal_fits_with_that_many_rounds(data):
    (X, p, y), (Xv, pv, _), _ = data
    full = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 3}).fit(p, y, X=X)
    staged = list(full.staged_predict(pv, X=Xv))
    assert len(staged) == 3
    for t, stage in enumerate(staged, start=1):
        fewer = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": t}).fit(p, y, X=X)
        np.testing.assert_array_equal(stage, fewer.predict(pv, X=Xv))
    assert not np.array_equal(staged[0], staged[-1])


def test_staged_predict_keeps_float32_and_yields_nothing_for_zero_rounds(data):
    (X, p, y), (Xv, pv, _), _ = data
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 2}).fit(p, y, X=X)
    assert all(s.dtype == np.float32 for s in model.staged_predict(pv.astype(np.float32), X=Xv))
    identity = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 0}).fit(p, y, X=X)
    assert list(identity.staged_predict(pv, X=Xv)) == []


def test_staged_predict_checks_its_inputs_when_called(data):
    (X, p, y), _, _ = data
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 1}).fit(p, y, X=X)
    with pytest.raises(ValueError, match="y_prob"):
        model.staged_predict(p + 2.0, X=X)


def test_eval_set_losses_are_the_log_loss_of_the_staged_predictions_on_it(data):
    (X, p, y), (Xv, pv, yv), _ = data
    model = MCGrad(**{**FAST, "max_rounds": 4, "patience": 4}).fit(p, y, X=X, eval_set=(pv, yv, Xv))
    # No refit: the kept rounds are those evaluated on the eval set, so each staged prediction's loss is recorded.
    expected = [log_loss(yv, pv)] + [log_loss(yv, s) for s in model.staged_predict(pv, X=Xv)]
    np.testing.assert_allclose(model.validation_losses_[: model.n_rounds_ + 1], expected, rtol=1e-9)
    assert model.n_rounds_ == int(np.argmin(model.validation_losses_))
    np.testing.assert_array_equal(model.validation_scores_, model.validation_losses_)


def test_another_eval_set_changes_the_rounds_chosen(data):
    (X, p, y), (Xv, pv, yv), _ = data
    params = {**FAST, "max_rounds": 6}
    own = MCGrad(**params).fit(p, y, X=X, eval_set=(pv, yv, Xv))
    # A validation set whose labels were drawn from the base scores prefers the input: no round.
    flipped = (np.random.default_rng(0).random(pv.size) < pv).astype(float)
    other = MCGrad(**params).fit(p, y, X=X, eval_set=(pv, flipped, Xv))
    assert own.n_rounds_ >= 1 and other.n_rounds_ == 0, (own.validation_losses_, other.validation_losses_)
    assert other.validation_losses_[0] == pytest.approx(log_loss(flipped, pv))


def test_eval_set_weights_enter_the_validation_loss(data):
    (X, p, y), (Xv, pv, yv), _ = data
    w = np.where(Xv["segment"] == "a", 3.0, 1.0)
    model = MCGrad(**{**FAST, "max_rounds": 1}).fit(p, y, X=X, eval_set=(pv, yv, Xv, w))
    assert model.validation_losses_[0] == pytest.approx(log_loss(yv, pv, sample_weight=w))


def test_eval_set_without_early_stopping_records_every_round(data):
    (X, p, y), (Xv, pv, yv), _ = data
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 3}).fit(p, y, X=X, eval_set=(pv, yv, Xv))
    assert model.n_rounds_ == 3 and model.validation_losses_.size == 4


@pytest.mark.parametrize("early_stopping", ["holdout", "kfold"])
def test_a_callable_metric_is_called_with_the_validation_rows(data, early_stopping):
    (X, p, y), _, _ = data
    calls = []

    def metric(y_true, y_prob, X_val, sample_weight):
        calls.append((y_true, y_prob, X_val, sample_weight))
        return float(np.mean(np.abs(y_true - y_prob)))  # a metric other than the log loss

    model = MCGrad(**{**FAST, "early_stopping": early_stopping, "early_stopping_metric": metric}).fit(
        p, y, X=X, sample_weight=np.full(y.size, 2.0)
    )
    n_val = round(0.2 * y.size) if early_stopping == "holdout" else y.size  # k-fold: pooled out of fold
    assert len(calls) == model.validation_scores_.size
    y_true, y_prob, X_val, w = calls[0]
    assert y_true.shape == y_prob.shape == w.shape == (n_val,) and X_val.shape == (n_val, 2)
    np.testing.assert_array_equal(w, 2.0)
    # The rows are the user's: labels and features of the same rows, the first call's scores are the input.
    rows = X.index.get_indexer(X_val.index)
    np.testing.assert_array_equal(y_true, y[rows])
    np.testing.assert_allclose(y_prob, p[rows], rtol=1e-12)
    np.testing.assert_allclose(model.validation_scores_[0], np.mean(np.abs(y[rows] - p[rows])))
    assert model.n_rounds_ == int(np.argmin(model.validation_scores_))


def test_the_mce_metric_scores_mce_sigma_on_segments_of_the_validation_features(data):
    (X, p, y), (Xv, pv, yv), _ = data
    model = MCGrad(**{**FAST, "early_stopping_metric": "mce"}).fit(p, y, X=X, eval_set=(pv, yv, Xv))
    assert model.validation_scores_[0] == pytest.approx(mce(yv, pv, X=Xv).mce_sigma, rel=1e-9)
    assert model.n_rounds_ == int(np.argmin(model.validation_scores_)) >= 1
    assert model.validation_scores_[model.n_rounds_] < model.validation_scores_[0] / 2  # planted shifts removed


def test_the_mce_metric_without_features_warns_once_and_scores_ecce_sigma_of_all_rows(data):
    from mcal.metrics import ecce_std

    (_, p, y), (_, pv, yv), _ = data
    with pytest.warns(CalibrationWarning) as record:
        model = MCGrad(**{**FAST, "early_stopping_metric": "mce"}).fit(p, y, eval_set=(pv, yv, None))
    messages = [str(w.message) for w in record if "early_stopping_metric='mce'" in str(w.message)]
    assert len(messages) == 1 and "got X=None" in messages[0] and "ECCE / sigma of all validation rows" in messages[0]
    expected = ecce(yv, pv) / ecce_std(yv, pv)
    assert model.validation_scores_[0] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(
    "value, error, match",
    [
        (np.nan, ValueError, "finite"),
        ("0.3", TypeError, "real number"),
    ],
)
def test_a_metric_that_returns_no_finite_number_raises(data, value, error, match):
    (X, p, y), _, _ = data
    with pytest.raises(error, match=f"early_stopping_metric must return a {match}"):
        MCGrad(**{**FAST, "early_stopping_metric": lambda *a: value}).fit(p, y, X=X)


class Clock:
    """A clock that advances one second each time it is read."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


class JumpingClock:
    """A clock that reads 0 until its ``at``-th read, and 100 from then on; counts its reads."""

    def __init__(self, at):
        self.at, self.reads = at, 0

    def __call__(self):
        self.reads += 1
        return 0.0 if self.reads < self.at else 100.0


@pytest.mark.parametrize(("early_stopping", "reads"), [("holdout", 24), (None, 23)])
def test_max_time_interrupts_a_round_between_its_trees_and_drops_it(data, monkeypatch, early_stopping, reads):
    (X, p, y), (Xv, pv, _), _ = data
    # read once at the start (and, with early stopping, once more as the pass starts), after each of a round's first
    # 19 trees and after the round: the 23rd read is in round 2 (before the fix the clock was read after whole rounds
    # only: 5 rounds, no warning). The clock is then past max_time: the refit reads it after its first tree and
    # stops there, keeping no round (before the refit was bounded, it fitted the round chosen).
    clock = JumpingClock(at=23)
    monkeypatch.setattr(_controls, "clock", clock)
    params = {**FAST, "max_rounds": 5, "patience": 10, "early_stopping": early_stopping, "max_time": 10.0}
    with pytest.warns(CalibrationWarning, match=r"max_time=10.0 s ran out after 1 round\(s\)"):
        model = MCGrad(**params).fit(p, y, X=X)
    assert clock.reads == reads  # no tree after the read past the limit: the round stopped there
    if early_stopping is None:  # the interrupted round is dropped: the model is the 1-round model
        one = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 1}).fit(p, y, X=X)
        assert model.n_rounds_ == 1
        np.testing.assert_allclose(model.predict(pv, X=Xv), one.predict(pv, X=Xv), rtol=0, atol=1e-12)
    else:
        assert model.validation_losses_.size == 2  # the input and round 1
        assert int(np.argmin(model.validation_losses_)) == 1 and model.n_rounds_ == 0
        np.testing.assert_allclose(model.predict(pv, X=Xv), pv, rtol=1e-12)


def test_max_time_interrupting_round_one_keeps_the_input_unchanged(data, monkeypatch):
    (X, p, y), (Xv, pv, _), _ = data
    monkeypatch.setattr(_controls, "clock", JumpingClock(at=3))
    params = {**FAST, "early_stopping": None, "max_time": 10.0}
    with pytest.warns(
        CalibrationWarning,
        match=r"ran out after 0 round\(s\); kept 0 round\(s\) \(a model of 0 rounds returns the input scores unchanged\)$",
    ):
        model = MCGrad(**params).fit(p, y, X=X)
    assert model.n_rounds_ == 0 and model.input_factor_ == 1.0
    np.testing.assert_allclose(model.predict(pv, X=Xv), pv, rtol=1e-12)


@pytest.mark.parametrize(("early_stopping", "max_time", "fitted"), [("holdout", 8.5, 4), (None, 2.5, 3)])
def test_max_time_stops_the_rounds_and_keeps_the_best_so_far(data, monkeypatch, early_stopping, max_time, fitted):
    (X, p, y), _, _ = data
    monkeypatch.setattr(_controls, "clock", Clock())
    monkeypatch.setattr(engine, "_clock_check", lambda out_of_time: lambda env: None)  # whole rounds only here
    # Read at the start and after each round: without early stopping, rounds 1 and 2 end at seconds 1 and 2 of the
    # budget of 2.5 s, and round 3 at 3. With it, the pass starts at second 2 with 4/9 of the 7.5 s left (3.33 s):
    # it ends after round 4 (second 6), and the refit of at most 4 rounds reads the clock at seconds 7, 8 and 9,
    # within 1 + 8.5 s (before the refit was bounded, the pass had all 8.5 s: 8 rounds).
    params = {**FAST, "max_rounds": 10, "patience": 10, "early_stopping": early_stopping, "max_time": max_time}
    with pytest.warns(
        CalibrationWarning, match=rf"max_time={max_time} s ran out after {fitted} round\(s\)( of early stopping)?; kept"
    ):
        model = MCGrad(**params).fit(p, y, X=X)
    if early_stopping is None:
        assert model.n_rounds_ == 3 and model.validation_losses_.size == 0
    else:
        assert model.validation_losses_.size == 5  # the input and four rounds
        assert model.n_rounds_ == int(np.argmin(model.validation_losses_))


class WorkClock:
    """A clock that only LightGBM's trees advance, each by its rows / 8,000 s (exact in binary); reads are free."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def charge_trees(monkeypatch, clock):
    """Make every LightGBM tree advance ``clock``, before the clock check of ``max_time`` reads it."""
    import lightgbm

    train = lightgbm.train

    def tick(env):
        clock.now += env.model.train_set.num_data() / 8000

    tick.order = -1000  # LightGBM runs callbacks by their order: the tick first

    def timed_train(*args, callbacks=None, **kwargs):
        return train(*args, callbacks=[tick, *(callbacks or [])], **kwargs)

    monkeypatch.setattr(lightgbm, "train", timed_train)


@pytest.mark.parametrize(("early_stopping", "max_time"), [("holdout", 100.0), ("kfold", 300.0)])
def test_max_time_bounds_the_whole_fit_with_the_refit(data, monkeypatch, early_stopping, max_time):
    (X, p, y), _, _ = data
    clock = WorkClock()
    monkeypatch.setattr(_controls, "clock", clock)
    charge_trees(monkeypatch, clock)
    # A round of 20 trees takes 10 s on a part of 4,000 rows and 12.5 s on all 5,000. The pass gets 4/9 of 100 s
    # (holdout) or 4/5 of 300 s (k-fold): 4 rounds, the 5th cut; the rest (55.5 s, 60 s) holds the refit of the
    # (at most 4) rounds chosen. Before the change the pass ran to max_time and the refit ran after it unbounded.
    params = {**FAST, "learning_rate": 0.02, "max_rounds": 30, "patience": 30, "early_stopping": early_stopping}
    with pytest.warns(
        CalibrationWarning,
        match=r"ran out after 4 round\(s\) of early stopping; kept [34] round\(s\), the number best on the validation",
    ):
        model = MCGrad(**params, max_time=max_time).fit(p, y, X=X)
    assert clock.now <= max_time
    assert model.validation_losses_.size == 5  # the input and four rounds
    assert model.n_rounds_ == int(np.argmin(model.validation_losses_)) >= 3  # the refit had the time for all


def test_max_time_cuts_the_refit_and_drops_its_interrupted_round(data, monkeypatch):
    (X, p, y), (Xv, pv, _), _ = data
    clock = WorkClock()
    monkeypatch.setattr(_controls, "clock", clock)
    monkeypatch.setattr(_controls, "pass_share", lambda model: 0.8)  # the pass takes more than its rows' share
    charge_trees(monkeypatch, clock)
    # The pass gets 46.4 s of 58 (round 5 cut after its 13th tree, at 46.5 s); the refit has 11.5 s: one round of
    # 12.5 s does not fit, so it is cut after its 19th tree and dropped. Before the change it ran all chosen rounds.
    params = {**FAST, "max_rounds": 30, "patience": 30, "max_time": 58.0}
    with pytest.warns(
        CalibrationWarning,
        match=r"after 4 round\(s\) of early stopping, and the refit on all rows after 0; kept 0 round\(s\) \(a model of 0 rounds returns the input scores unchanged\)$",
    ):
        model = MCGrad(**params).fit(p, y, X=X)
    assert clock.now == 46.5 + 19 * 0.625
    assert model.n_rounds_ == 0 and model.input_factor_ == 1.0
    np.testing.assert_allclose(model.predict(pv, X=Xv), pv, rtol=1e-12)


def test_without_max_time_the_clock_is_not_read_after_the_rounds(data, monkeypatch):
    (X, p, y), _, _ = data
    clock = Clock()
    monkeypatch.setattr(_controls, "clock", clock)
    MCGrad(**{**FAST, "max_rounds": 3}).fit(p, y, X=X)
    assert clock.now == 1.0  # read once at the start of fit


def test_new_controls_and_metric_values_survive_a_model_file(data, tmp_path):
    (X, p, y), (Xv, pv, yv), _ = data
    model = MCGrad(**{**FAST, "early_stopping_metric": "mce", "max_time": 100.0}).fit(p, y, X=X, eval_set=(pv, yv, Xv))
    mcal.save(model, tmp_path / "m.json")
    loaded = mcal.load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.validation_scores_, model.validation_scores_)
    assert loaded.max_time == 100.0 and loaded.early_stopping_metric == "mce"
    np.testing.assert_array_equal(loaded.predict(pv, X=Xv), model.predict(pv, X=Xv))


def test_a_model_file_without_metric_values_reads_the_losses_as_scores(data):
    (X, p, y), _, _ = data
    data_dict = MCGrad(**FAST).fit(p, y, X=X).to_dict()
    del data_dict["state"]["validation_scores"]
    loaded = MCGrad.from_dict(data_dict)
    np.testing.assert_array_equal(loaded.validation_scores_, loaded.validation_losses_)


@pytest.mark.parametrize(
    "eval_set, error, match",
    [
        ([1, 2], ValueError, "eval_set must be a tuple .* got 2 entries"),
        ("abc", TypeError, "eval_set must be a tuple"),
        (lambda pv, yv, Xv: (pv + 1, yv, Xv), ValueError, "y_prob_val"),
        (lambda pv, yv, Xv: (pv, yv[:-1], Xv), ValueError, "y_val has"),
        (lambda pv, yv, Xv: (pv, yv, None), ValueError, "X_val must be given"),
        (lambda pv, yv, Xv: (pv, yv, Xv.drop(columns="x")), ValueError, "column"),
        (lambda pv, yv, Xv: (pv, yv, Xv, -np.ones(pv.size)), ValueError, "sample_weight_val must be non-negative"),
        (lambda pv, yv, Xv: (pv, np.zeros(pv.size), Xv), ValueError, "y_val must contain both classes"),
    ],
)
def test_bad_eval_sets_raise_naming_the_entry(data, eval_set, error, match):
    (X, p, y), (Xv, pv, yv), _ = data
    eval_set = eval_set(pv, yv, Xv) if callable(eval_set) else eval_set
    with pytest.raises(error, match=match):
        MCGrad(**FAST).fit(p, y, X=X, eval_set=eval_set)


@pytest.mark.parametrize(
    "param, value, error, match",
    [
        ("early_stopping_metric", "auc", ValueError, "early_stopping_metric must be 'log_loss' or 'mce'"),
        ("early_stopping_metric", 3, TypeError, "early_stopping_metric must be 'log_loss', 'mce' or a callable"),
        ("max_time", 0.0, ValueError, "max_time must be a positive number"),
        ("max_time", "1", TypeError, "max_time must be a positive number"),
    ],
)
def test_bad_controls_raise_naming_them(data, param, value, error, match):
    (X, p, y), _, _ = data
    with pytest.raises(error, match=match):
        MCGrad(**{**FAST, param: value}).fit(p, y, X=X)


def test_the_score_alone_takes_an_eval_set_without_features():
    rng = np.random.default_rng(0)
    p = expit(rng.normal(0, 2, 4000))
    y = (rng.random(4000) < expit(0.5 * np.log(p / (1 - p)))).astype(float)  # over-confident scores
    model = MCGrad(**FAST).fit(p[:3000], y[:3000], eval_set=(p[3000:], y[3000:], None))
    assert model.n_rounds_ >= 1
    assert log_loss(y[3000:], model.predict(p[3000:])) < log_loss(y[3000:], p[3000:])


def test_the_learning_curve_draws_each_rounds_loss_and_metric(data):
    from matplotlib.figure import Figure

    from mcal.plotting import plot_learning_curve

    (X, p, y), (Xv, pv, yv), _ = data
    model = MCGrad(**{**FAST, "early_stopping_metric": "mce"}).fit(p, y, X=X, eval_set=(pv, yv, Xv))
    ax = Figure().add_subplot()
    assert plot_learning_curve(model, ax=ax) is ax
    loss_line = ax.get_lines()[0]
    np.testing.assert_array_equal(loss_line.get_ydata(), model.validation_losses_)
    np.testing.assert_array_equal(ax.get_lines()[1].get_xdata(), [model.n_rounds_, model.n_rounds_])
    (twin,) = [a for a in ax.figure.axes if a is not ax]
    np.testing.assert_array_equal(twin.get_lines()[0].get_ydata(), model.validation_scores_)
    with pytest.raises(ValueError, match="model must be a fitted MCGrad with validation values.*got MCGrad with none"):
        plot_learning_curve(MCGrad(**{**FAST, "early_stopping": None}).fit(p, y, X=X))
    with pytest.raises(ValueError, match="got MCGrad not fitted"):
        plot_learning_curve(MCGrad())
    with pytest.raises(ValueError, match=r"got PlattScaling \(not an MCGrad\)"):
        plot_learning_curve(mcal.PlattScaling().fit(p, y))  # fitted, but no rounds to draw


# -- tune_mcgrad -------------------------------------------------------------------------------------------------
SPACE = {"learning_rate": [0.05, 0.2, 0.5], "max_leaves": [2, 5, 8], "n_estimators": [10, 20]}
FIXED = {"min_child_samples": 20, "max_rounds": 3, "n_jobs": 1}


@pytest.fixture(scope="module")
def tuned():
    X, p, y = segment_data(9000, seed=6)
    kwargs = dict(X=X, n_trials=5, param_distributions=SPACE, mcgrad_params=FIXED, random_state=0)
    return (X, p, y), kwargs, mcal.tune_mcgrad(p, y, **kwargs)


def test_tune_mcgrad_halves_the_candidates_and_returns_the_best_of_the_last_rung(tuned):
    (X, p, y), _, result = tuned
    trials = result.trials
    # 9,000 rows hold out 1,800; 7,200 training rows allow one rung below all of them (2,400 rows, >= 1,000).
    assert trials.groupby("rung")["candidate"].nunique().tolist() == [5, 2]
    assert trials.groupby("rung")["n_rows"].unique().map(list).tolist() == [[2400], [7200]]
    first = trials[trials["rung"] == 0].sort_values("log_loss")
    last = trials[trials["rung"] == 1]
    assert sorted(last["candidate"]) == sorted(first["candidate"][:2])  # the best third, rounded up
    best = last.sort_values("log_loss").iloc[0]
    assert result.best_params == {k: best[k] for k in SPACE}
    assert first[first["candidate"] == 0][list(SPACE)].to_dict("records")[0] == {
        k: MCGrad().get_params()[k] for k in SPACE
    }  # candidate 0 is the defaults
    refit = MCGrad(**FIXED, **result.best_params, random_state=0).fit(p, y, X=X)
    np.testing.assert_array_equal(result.model.predict(p, X=X), refit.predict(p, X=X))


@pytest.mark.slow
def test_tune_mcgrad_is_reproducible_under_random_state(tuned):
    (_, p, y), kwargs, result = tuned
    again = mcal.tune_mcgrad(p, y, **kwargs)
    pd.testing.assert_frame_equal(
        again.trials.drop(columns="fit_s"), result.trials.drop(columns="fit_s"), check_exact=True
    )
    other = mcal.tune_mcgrad(p, y, **{**kwargs, "random_state": 1})
    assert not other.trials.drop(columns="fit_s").equals(result.trials.drop(columns="fit_s"))


def test_tune_mcgrad_scores_on_rows_it_never_trains_on(tuned, monkeypatch):
    (_, p, y), kwargs, _ = tuned
    seen = []
    fit = MCGrad.fit

    def spy(self, y_prob, y, *, X=None, sample_weight=None, eval_set=None):
        seen.append(set(X.index))
        return fit(self, y_prob, y, X=X, sample_weight=sample_weight, eval_set=eval_set)

    monkeypatch.setattr(MCGrad, "fit", spy)
    mcal.tune_mcgrad(p, y, **{**kwargs, "n_trials": 2})
    trained = set().union(*seen[:-1])  # the last fit is the refit on all rows
    assert len(trained) == 7200 and len(seen[-1]) == 9000


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_trials": 0}, ValueError, "n_trials must be a positive integer"),
        ({"factor": 1}, ValueError, "factor must be an integer >= 2"),
        ({"validation_fraction": 1.0}, ValueError, "validation_fraction must be a number in"),
        ({"mcgrad_params": {"learning_rate": 0.1}}, ValueError, r"mcgrad_params must not set .*learning_rate"),
        ({"param_distributions": {"max_leaves": [2.5]}}, TypeError, "max_leaves"),
        (
            {"param_distributions": {"nonsense": [1, 2]}},
            ValueError,
            r"param_distributions must name MCGrad parameters; got unknown \['nonsense'\]",
        ),
        ({"mcgrad_params": {"n_job": 1}}, ValueError, r"mcgrad_params must name MCGrad parameters; got .*'n_job'"),
        ({"mcgrad_params": {"random_state": 1}}, ValueError, "mcgrad_params must not set random_state"),
        ({"param_distributions": [SPACE]}, TypeError, "param_distributions must be a dict .*; got list"),
    ],
)
def test_tune_mcgrad_rejects_bad_arguments_naming_them(kwargs, error, match):
    X, p, y = segment_data(3000, seed=7)
    with pytest.raises(error, match=match):
        mcal.tune_mcgrad(p, y, X=X, **{"param_distributions": SPACE, "n_trials": 2, **kwargs})


# -- rescale_input -----------------------------------------------------------------------------------------------
def overconfident(n, seed):
    """Scores whose logit is three times the true one: most below 0.01 or above 0.99."""
    rng = np.random.default_rng(seed)
    true_logit = rng.normal(0.0, 2.5, n)
    y = (rng.random(n) < expit(true_logit)).astype(float)
    return expit(3.0 * true_logit), y


def test_the_input_factor_minimises_the_log_loss_of_the_rescaled_clipped_logit():
    from scipy.optimize import minimize_scalar
    from scipy.special import logit

    p, y = overconfident(4000, 0)
    model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": 1}).fit(p, y)
    z = np.clip(logit(np.clip(p, mcal.EPS, 1 - mcal.EPS)), -10, 10)
    best = minimize_scalar(
        lambda t: log_loss(y, expit(t * z)), bounds=(0.01, 3), method="bounded", options={"xatol": 1e-9}
    )
    assert model.input_factor_ == pytest.approx(best.x, abs=1e-6)
    assert 0.2 < model.input_factor_ < 0.5  # the scores are three times too confident


def test_without_rescale_input_the_input_factor_is_one_and_the_rounds_start_from_the_input(data):
    (X, p, y), _, _ = data
    params = {**FAST, "early_stopping": None, "max_rounds": 2}
    plain = MCGrad(**params, rescale_input=False).fit(p, y, X=X)
    no_rescale = MCGrad(**params, rescale=False).fit(p, y, X=X)
    assert plain.input_factor_ == no_rescale.input_factor_ == 1.0
    assert MCGrad(**params).fit(p, y, X=X).input_factor_ != 1.0


def test_an_old_model_file_without_input_factor_predicts_from_the_input(data):
    (X, p, y), (Xv, pv, _), _ = data
    model = MCGrad(**FAST, rescale_input=False).fit(p, y, X=X)
    stored = model.to_dict()
    del stored["state"]["input_factor"]
    np.testing.assert_array_equal(MCGrad.from_dict(stored).predict(pv, X=Xv), model.predict(pv, X=Xv))
    with pytest.raises(ValueError, match="state.input_factor must be a number in"):
        MCGrad.from_dict({**model.to_dict(), "state": {**model.to_dict()["state"], "input_factor": -1.0}})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_on_over_confident_scores_mcgrad_is_no_worse_than_temperature_scaling(seed):
    p, y = overconfident(12000, seed)
    rng = np.random.default_rng(seed)
    field = pd.DataFrame({"field": pd.Categorical(rng.choice(list("abcd"), p.size))})  # unrelated to the labels
    fit, test = slice(0, 6000), slice(6000, None)
    params = {**FAST, "max_rounds": 20, "learning_rate": 0.05}
    with_step = MCGrad(**params).fit(p[fit], y[fit], X=field[fit])
    without = MCGrad(**params, rescale_input=False).fit(p[fit], y[fit], X=field[fit])
    temperature = mcal.TemperatureScaling().fit(p[fit], y[fit])
    held = {
        name: log_loss(y[test], model.predict(p[test], X=field[test]))
        for name, model in (("with", with_step), ("without", without))
    }
    reference = log_loss(y[test], temperature.predict(p[test]))
    assert held["with"] <= reference + 0.002
    assert held["without"] > held["with"]

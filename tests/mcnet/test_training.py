"""MCNet's training with its defaults: it leaves the Platt warm start, and the step schedule behaves as documented."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit
from sklearn.linear_model import LogisticRegression

from mcal import MCNet

torch = pytest.importorskip("torch")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def field_log(seed, n):
    """3 fields whose true maps are powers of the score (0.5, 1, 2): non-linear in the logit, one per field."""
    rng = np.random.default_rng(seed)
    f = rng.integers(0, 3, n)
    s = rng.normal(-0.8, 1.3, n)
    truth = expit(s) ** np.array([0.5, 1.0, 2.0])[f]
    return expit(s), rng.binomial(1, truth), pd.DataFrame({"f": f})


def log_loss(y, q):
    return float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)))


@pytest.mark.slow
def test_early_stopping_leaves_the_warm_start_and_beats_it_on_held_out_log_loss():
    # The warm start is Platt's slope with one intercept per field; the true maps bend differently per field,
    # so a trained MCNet-Field must do better on new rows, also when a holdout stops it early. (With earlier
    # defaults, 10 epochs and patience 2, the fit kept its warm start.)
    p, y, X = field_log(0, 8000)
    pt, yt, Xt = field_log(1, 50_000)
    model = MCNet(field="f", random_state=0, validation_fraction=0.1).fit(p, y, X=X)
    assert model.best_step_ > 0 and model.best_epoch_ > 0
    assert model.validation_loss_curve_.min() < model.validation_loss_curve_[0]

    def design(q, frame):
        return np.column_stack([logit(q), np.eye(3)[frame["f"].to_numpy()]])

    warm = LogisticRegression(C=1e6, fit_intercept=False).fit(design(p, X), y)  # the warm start's family
    warm_loss = log_loss(yt, warm.predict_proba(design(pt, Xt))[:, 1])
    assert log_loss(yt, model.predict(pt, X=Xt)) < warm_loss - 0.002


def test_a_fit_runs_at_least_min_steps_and_at_most_the_budget():
    p, y, X = field_log(2, 3000)
    model = MCNet(
        field="f",
        hidden_sizes=(8,),
        n_nodes=10,
        learning_rate=0.05,
        min_steps=200,
        patience=25,
        max_steps=400,
        random_state=0,
        validation_fraction=0.1,
        integral="quadrature",
    ).fit(p, y, X=X)
    assert 200 <= model.n_steps_ <= 400
    short = MCNet(field="f", hidden_sizes=(8,), n_nodes=10, max_epochs=3, random_state=0, integral="quadrature",
                  validation_fraction=0.1).fit(p, y, X=X)  # fmt: skip
    assert short.n_steps_ == 3 * 2  # 2,700 training rows in batches of 2,048: 2 steps a pass, budget 6 steps


def test_the_learning_rate_warms_up_then_falls_along_a_cosine():
    from mcal.mcnet._training import FINAL_LR_FACTOR, Schedule

    s = Schedule.build(
        100_000, 10_000, learning_rate=1.0, batch_size=100, max_epochs=1000, max_steps=2000, min_steps=500, patience=500
    )
    assert (s.budget, s.warmup, s.interval) == (2000, 100, 100)  # 10,000 held-out rows: 100 batches a reading
    factors = np.array([s.factor(k) for k in range(s.budget)])
    np.testing.assert_allclose(factors[:100], np.arange(1, 101) / 100)
    assert np.all(np.diff(factors[100:]) <= 0) and factors[-1] == pytest.approx(FINAL_LR_FACTOR, abs=1e-5)
    small = Schedule.build(
        4500, 500, learning_rate=1.0, batch_size=2048, max_epochs=1000, max_steps=3000, min_steps=500, patience=500
    )
    assert (small.steps_per_epoch, small.budget, small.interval) == (3, 3000, 25)  # 1,000 passes of 3 steps


def test_no_network_pass_holds_more_rows_than_a_batch_whatever_the_data_size(monkeypatch):
    # memory is rows x quadrature nodes x width per pass: training streams mini-batches, the held-out loss and
    # prediction go EVAL_CHUNK rows at a time, and the bin-edge integrals need (K - 1)(C + 1) rows
    import mcal.mcnet._network as network
    import mcal.mcnet._training as training

    sizes = []
    real = network.integrate_rows

    def counting(torch_, P, geometry, upper, bins, offset, **kw):
        sizes.append(bins.shape[0])
        return real(torch_, P, geometry, upper, bins, offset, **kw)

    monkeypatch.setattr(training, "integrate_rows", counting)
    monkeypatch.setattr(network, "integrate_rows", counting)
    p, y, X = field_log(3, 12_000)
    model = MCNet(field="f", n_bins=5, hidden_sizes=(4,), n_nodes=5, batch_size=512, max_steps=30, min_steps=0,
                  random_state=0, integral="quadrature", inference="exact", validation_fraction=0.1)  # fmt: skip
    model.fit(p, y, X=X)
    model.predict(p, X=X)
    bound = max(512, training.EVAL_CHUNK, (5 - 1) * (3 + 1))
    assert max(sizes) == bound and len(sizes) > 12_000 // training.EVAL_CHUNK


# -- the bin-count choice (n_bins="auto") ------------------------------------------------------------------------
def test_the_choice_keeps_the_fewest_bins_within_one_paired_standard_error_of_the_lowest_loss():
    from mcal.mcnet._fitting import choose_bin_count

    counts = np.array([1, 3, 5])
    w = np.ones(4)
    # mean losses 0.50, 0.4725, 0.47; 3 bins minus 5 bins, row by row: 0.01, -0.01, 0.02, -0.01 (mean 0.0025,
    # SE sqrt(sum((d - 0.0025)^2)) / 4 = 0.0065): within; 1 bin minus 5 bins: 0.03 on every row (SE 0): not
    losses = np.array([[0.53, 0.43, 0.53, 0.51], [0.51, 0.39, 0.52, 0.47], [0.50, 0.40, 0.50, 0.48]])
    assert choose_bin_count(counts, losses, w) == 3
    losses[1] = losses[2] + 0.01  # 3 bins worse than 5 on every row: no noise to hide it
    assert choose_bin_count(counts, losses, w) == 5
    losses[0] = losses[2] + np.array([0.1, -0.1, 0.1, -0.1])  # 1 bin equal on average, noisy: kept
    assert choose_bin_count(counts, losses, w) == 1
    # weights count: 3 bins lose on the last two rows (unweighted, by 0.205 with SE 0.10: 5 bins are chosen); with
    # those rows at weight 0 the two tie exactly
    losses = np.array([[0.6, 0.6, 0.6, 0.6], [0.51, 0.39, 0.90, 0.90], [0.51, 0.39, 0.50, 0.48]])
    assert choose_bin_count(counts, losses, w) == 5
    assert choose_bin_count(counts, losses, np.array([1.0, 1.0, 0.0, 0.0])) == 3


def kinked_log(seed, n, step):
    """3 fields with per-field Platt maps, logit a_c s + b_c, plus ``step`` times sigmoid(8 s) in every field (a
    steep rise around s = 0)."""
    rng = np.random.default_rng(seed)
    f = rng.integers(0, 3, n)
    s = rng.normal(0.0, 1.5, n)
    true_logit = np.array([0.6, 1.0, 1.4])[f] * s + np.array([-0.5, 0.3, 0.0])[f] + step * expit(8.0 * s)
    return expit(s), rng.binomial(1, expit(true_logit)), pd.DataFrame({"f": f})


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "step", "chosen"), [(2, 0.0, {1}), (0, 3.0, {2, 4})])
def test_auto_chooses_one_bin_where_the_map_needs_none_and_more_where_it_rises_steeply(seed, step, chosen):
    # the per-field Platt map is the warm start's family: one bin represents it; the steep rise needs a finer bin
    # (measured on seeds 0-2 of each log: 1 bin chosen twice of three without the rise, 2 or 4 bins always with it)
    p, y, X = kinked_log(seed, 8000, step)
    model = MCNet(field="f", n_bins="auto", random_state=0).fit(p, y, X=X)
    assert model.n_bins_ in chosen and model.bin_edges_.size == model.n_bins_ + 1
    assert list(model.bin_count_losses_) == ["1", "2", "4"]


@pytest.mark.slow
def test_auto_holds_out_calibration_rows_and_trains_the_chosen_count_on_every_row(monkeypatch):
    import mcal.mcnet._fitting as fitting

    seen = []
    real_fit, real_losses = fitting.fit_weights, fitting.held_out_losses

    def fit_weights(*args, train_rows, **kw):
        seen.append(("train", train_rows))
        return real_fit(*args, train_rows=train_rows, **kw)

    def held_out_losses(torch_, P, spec, geometry, data, rows):
        seen.append(("held", rows))
        return real_losses(torch_, P, spec, geometry, data, rows)

    monkeypatch.setattr(fitting, "fit_weights", fit_weights)
    monkeypatch.setattr("mcal.mcnet._estimator.fit_weights", fit_weights)
    monkeypatch.setattr(fitting, "held_out_losses", held_out_losses)
    p, y, X = kinked_log(1, 4000, 3.0)
    model = MCNet(field="f", n_bins="auto", max_steps=50, random_state=0).fit(p, y, X=X)
    held = [r for kind, r in seen if kind == "held"]
    trained = [r for kind, r in seen if kind == "train"]
    assert len(held) == 3 and len(trained) == 4  # three candidates, then the chosen count on every row
    assert held[0].size == round(fitting.CHOICE_HOLDOUT * 4000) and all(np.array_equal(h, held[0]) for h in held)
    for part in trained[:3]:  # the candidates train on the rest of the calibration rows, never on the held-out ones
        assert np.intersect1d(part, held[0]).size == 0 and part.size + held[0].size == 4000
    np.testing.assert_array_equal(trained[3], np.arange(4000))
    # the refit is the fit of the chosen count: the same model as that n_bins with the same seed
    fixed = MCNet(field="f", n_bins=model.n_bins_, max_steps=50, random_state=0).fit(p, y, X=X)
    np.testing.assert_allclose(model.predict(p, X=X), fixed.predict(p, X=X), rtol=0, atol=1e-6)
    assert fixed.bin_count_losses_ == {}


@pytest.mark.slow
def test_auto_is_reproducible_with_a_seed():
    p, y, X = kinked_log(2, 3000, 3.0)
    a, b = (MCNet(field="f", n_bins="auto", max_steps=60, random_state=3).fit(p, y, X=X) for _ in range(2))
    assert a.n_bins_ == b.n_bins_
    np.testing.assert_allclose(list(a.bin_count_losses_.values()), list(b.bin_count_losses_.values()), atol=1e-6)
    np.testing.assert_allclose(a.predict(p, X=X), b.predict(p, X=X), rtol=0, atol=1e-6)


def test_auto_needs_rows_to_hold_out():
    with pytest.raises(
        ValueError,
        match=r"^n_bins='auto' \(it holds out 25% of the rows\) must leave at least one "
        r"row in each part; got 0 held-out row\(s\) of 2 \(use an integer n_bins",
    ):
        MCNet(n_bins="auto").fit(np.array([0.3, 0.7]), np.array([0, 1]))

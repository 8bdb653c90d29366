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

"""Tests of MCNet's data-parallel fit (``n_processes``, torch.distributed with gloo on the CPU)."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

pytest.importorskip("torch")

from mcal import MCNet

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # torch.distributed processes: slow

# A miscalibration that Platt scaling with per-field intercepts (the warm start) cannot fix, so the trained
# weights, not the warm start, are kept; a high step size so that a few epochs move them.
SMALL = dict(n_bins=4, hidden_sizes=(8,), embedding_dim=4, batch_size=256, learning_rate=1e-2, random_state=0,
             field="f", n_threads=1)  # fmt: skip


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 4000
    p = rng.uniform(0.02, 0.98, n)
    field = rng.choice(["a", "b", "c"], n)
    y = rng.binomial(1, expit(2 * np.sin(2 * logit(p)) + 0.5 * (field == "a")))
    return p, y, pd.DataFrame({"f": field})


def test_two_processes_fit_the_single_process_model_to_float32_rounding(data):
    """Each batch split in two, gradients summed: the same steps, so the same model (measured: 2e-8)."""
    p, y, X = data
    kw = dict(SMALL, validation_fraction=0.2, max_epochs=6)
    single = MCNet(**kw).fit(p, y, X=X)
    double = MCNet(**kw, n_processes=2).fit(p, y, X=X)
    assert single.best_epoch_ >= 3  # trained weights, not the warm start, are compared
    assert double.best_epoch_ == single.best_epoch_ and double.n_epochs_ == single.n_epochs_
    np.testing.assert_allclose(double.loss_curve_, single.loss_curve_, rtol=0, atol=1e-6)
    np.testing.assert_allclose(double.validation_loss_curve_, single.validation_loss_curve_, rtol=0, atol=1e-6)
    q = np.linspace(0.01, 0.99, 300)
    Xq = pd.DataFrame({"f": np.resize(["a", "b", "c"], 300)})
    assert np.abs(double.predict(q, X=Xq) - single.predict(q, X=Xq)).max() < 1e-5


def test_n_processes_is_validated():
    p, y = np.array([0.2, 0.8] * 50), np.array([0, 1] * 50)
    with pytest.raises(ValueError, match="n_processes must be a positive integer"):
        MCNet(n_processes=0).fit(p, y)
    with pytest.raises(ValueError, match="without the field-balance penalty"):
        MCNet(n_processes=2, alpha=0.5, field=0).fit(p, y, X=np.c_[np.arange(100) % 2])

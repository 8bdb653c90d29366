"""MCGrad.cross_fit: early stopping across given folds, held-out predictions, and the refit on all rows."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from sklearn.exceptions import NotFittedError

pytest.importorskip("lightgbm")

from mcal import MCGrad

FAST = dict(n_estimators=20, learning_rate=0.2, min_child_samples=20, max_rounds=6, n_jobs=1, random_state=0)


def _data(n=3000, seed=0):
    """Segments whose base scores are off by a logit shift; categorical features only, so that LightGBM's bins of
    the features are the same on any subset of the rows."""
    rng = np.random.default_rng(seed)
    segment = rng.integers(0, 3, n)
    base = rng.normal(-0.3, 1.0, n)
    y = (rng.random(n) < expit(base + np.array([-0.8, 0.0, 0.8])[segment])).astype(int)
    X = pd.DataFrame({"segment": pd.Categorical(np.array(["a", "b", "c"])[segment]), "c": rng.choice(["u", "v"], n)})
    return X, expit(base), y, rng.integers(0, 4, n)


def _fold_fits(X, p, y, folds, rounds):
    """Each fold's rows predicted by an independent fit of ``rounds`` rounds on the other folds."""
    held_out = np.empty(p.size)
    for k in range(folds.max() + 1):
        tr, te = folds != k, folds == k
        model = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": rounds}).fit(p[tr], y[tr], X=X[tr])
        held_out[te] = model.predict(p[te], X=X[te])
    return held_out


def _log_loss(y, p):
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))


def test_the_held_out_predictions_are_those_of_each_fold_fitted_alone_at_the_pooled_best_round():
    X, p, y, folds = _data()
    model = MCGrad(**FAST, patience=10)
    result = model.cross_fit(p, y, folds, X=X)
    assert 0 < result.n_rounds < FAST["max_rounds"]
    np.testing.assert_allclose(result.held_out, _fold_fits(X, p, y, folds, result.n_rounds), rtol=0, atol=1e-12)
    pooled = [_log_loss(y, _fold_fits(X, p, y, folds, t)) for t in range(1, FAST["max_rounds"] + 1)]
    # the curve of the pooled held-out loss, and its minimum the count (patience 10: every round is seen)
    np.testing.assert_allclose(result.validation_losses[1:], pooled, rtol=1e-9)
    assert result.n_rounds == 1 + int(np.argmin(pooled))
    with pytest.raises(NotFittedError):
        model.predict(p, X=X)  # the model itself stays unfitted


def test_the_refit_is_the_direct_fit_of_the_chosen_rounds_on_all_rows():
    X, p, y, folds = _data(seed=1)
    result = MCGrad(**FAST).cross_fit(p, y, folds, X=X)
    refit = result.refit()
    direct = MCGrad(**{**FAST, "early_stopping": None, "max_rounds": result.n_rounds}).fit(p, y, X=X)
    assert refit.n_rounds_ == result.n_rounds and refit.early_stopping is None
    np.testing.assert_allclose(refit.predict(p, X=X), direct.predict(p, X=X), rtol=0, atol=1e-12)


def test_with_numerical_features_binned_on_all_rows_the_folds_gain_as_much_as_when_fitted_alone():
    X, p, y, folds = _data(seed=2)
    X["x"] = np.random.default_rng(2).normal(size=p.size)
    result = MCGrad(**FAST, patience=10).cross_fit(p, y, folds, X=X)
    own = _fold_fits(X, p, y, folds, result.n_rounds)  # each binned on its own rows: other bin boundaries of x
    gain, own_gain = _log_loss(y, p) - _log_loss(y, result.held_out), _log_loss(y, p) - _log_loss(y, own)
    assert own_gain > 0.02 and gain == pytest.approx(own_gain, rel=0.1)


def test_bad_folds_and_no_early_stopping_are_refused():
    X, p, y, folds = _data(n=400)
    with pytest.raises(ValueError, match=r"folds must be integers of shape \(400,\); got float64"):
        MCGrad(**FAST).cross_fit(p, y, folds.astype(float), X=X)
    with pytest.raises(ValueError, match=r"folds must number the folds 0 .. k - 1, each present"):
        MCGrad(**FAST).cross_fit(p, y, np.where(folds == 1, 2, folds), X=X)
    with pytest.raises(ValueError, match=r"folds must number .* with k >= 2; got values \[0\]"):
        MCGrad(**FAST).cross_fit(p, y, np.zeros(400, dtype=int), X=X)
    with pytest.raises(ValueError, match="early_stopping must be 'holdout' or 'kfold' to cross-fit"):
        MCGrad(**{**FAST, "early_stopping": None}).cross_fit(p, y, folds, X=X)

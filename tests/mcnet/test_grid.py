"""MCNet's grid integral (the default): the map it trains is the map it predicts, monotone for every field, close to
the per-row quadrature of the same weights; the default fit trains on every row and leaves its warm start."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

import mcal
from mcal import MCNet

torch = pytest.importorskip("torch")

from mcal.mcnet._grid import GRID_POINTS, evaluate_grid, grid_spacing, roughness  # noqa: E402
from mcal.mcnet._inputs import warm_start  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

#: Largest difference, in logit units, allowed between the grid map and the 50-node quadrature of the same weights
#: inside the calibration scores' range: the trapezoid of f1's piecewise-linear interpolant over 64 cells a bin
#: (measured: at most 5e-4 on this log at 1, 3 and 20 bins with PyTorch's default draw of f1's score weights, 2.0e-3
#: at 20 bins with the 8x wider draw of the grid integral: a wigglier f1 within a narrow bin).
GRID_VS_QUADRATURE = 3e-3


def click_log(seed, n, n_fields=3):
    """Scores with a known, non-linear, field-dependent, monotone calibration map."""
    rng = np.random.default_rng(seed)
    f = rng.integers(0, n_fields, n)
    s = rng.normal(-1.5, 1.0, n)
    true_logit = np.array([0.6, 1.0, 1.4])[f] * s + np.array([-0.5, 0.4, -0.1])[f] + 0.4 * np.sin(1.5 * s)
    return expit(s), rng.binomial(1, expit(true_logit)), pd.DataFrame({"f": f}), expit(true_logit)


@pytest.fixture(scope="module")
def log_data():
    return click_log(0, 4000)


@pytest.mark.slow
def test_default_fit_trains_on_every_row_the_whole_budget_and_beats_the_warm_start():
    p, y, X, _ = click_log(0, 5000)
    model = MCNet(field="f", random_state=0).fit(p, y, X=X)
    assert model.validation_loss_curve_.size == 0  # no rows held out
    assert model.n_steps_ == model.best_step_ == 500  # the budget, annealed to its end
    assert model.n_epochs_ == 500  # full batch: a step is a pass over every row
    # closer to the true map than the warm start (per-field Platt with one slope) on fresh rows of the same log
    p2, _, X2, truth = click_log(1, 20000)
    x = logit(p)
    slope, intercepts = warm_start(x, y.astype(float), np.ones(p.size), X["f"].to_numpy() + 1, 4)
    start = expit(slope * logit(p2) + intercepts[X2["f"].to_numpy() + 1])
    fitted = model.predict(p2, X=X2)
    assert np.mean((fitted - truth) ** 2) < 0.5 * np.mean((start - truth) ** 2)


@pytest.mark.parametrize("n_bins", [1, 2, 3, 7, 20])
@pytest.mark.parametrize("bin_joins", ["continuous", "raised"])
@pytest.mark.slow
def test_grid_map_is_monotone_in_the_score_for_every_field_at_every_bin_count(log_data, n_bins, bin_joins):
    p, y, X, _ = log_data
    model = MCNet(field="f", n_bins=n_bins, bin_joins=bin_joins, learning_rate=0.05, max_steps=150, random_state=0)
    model.fit(p, y, X=X)
    scores = np.linspace(0.0, 1.0, 20001)
    for c in [0, 1, 2, "unseen"]:
        with np.testing.suppress_warnings() as sup:
            sup.filter(mcal.CalibrationWarning)
            out = model.predict(scores, X=pd.DataFrame({"f": np.full(scores.size, c, dtype=object)}))
        assert np.all(np.diff(out) >= 0.0)
        # strictly increasing in logit units wherever the output is not clipped
        inner = logit(out[(out > 1e-6) & (out < 1 - 1e-6)])
        assert np.all(np.diff(inner) > 0.0)


@pytest.mark.parametrize("n_bins", [1, 3, 20])
@pytest.mark.slow
def test_grid_map_equals_the_quadrature_of_the_same_weights_within_the_stated_tolerance(log_data, n_bins):
    p, y, X, _ = log_data
    model = MCNet(field="f", n_bins=n_bins, n_nodes=50, max_steps=200, random_state=0).fit(p, y, X=X)
    grid = np.linspace(*model.score_range_, 4001)
    for c in range(3):
        Xc = pd.DataFrame({"f": np.full(grid.size, c)})
        trained = logit(model.set_params(inference="compiled").predict(expit(grid), X=Xc))
        quadrature = logit(model.set_params(inference="exact").predict(expit(grid), X=Xc))
        gap = np.abs(trained - quadrature).max()
        assert 0.0 < gap < GRID_VS_QUADRATURE  # close, and not the same computation


def test_predict_uses_the_map_training_optimised(log_data):
    # the training loss at the fitted weights equals the log loss of predict's output on the same rows
    from mcal.mcnet._training import Data, objective

    p, y, X, _ = log_data
    model = MCNet(field="f", max_steps=50, random_state=0).fit(p, y, X=X)
    x = logit(p)
    P = {k: v.detach().double() for k, v in model.module_.items()}
    bins = np.searchsorted(model.bin_edges_[1:-1], x, side="left")
    contexts = X["f"].to_numpy() + 1
    data = Data.on_device(torch, "cpu", x, y.astype(float), np.ones(p.size), bins, contexts, None, 0, None)
    data.x, data.y, data.w = data.x.double(), data.y.double(), data.w.double()
    geometry = {k: torch.as_tensor(v, dtype=torch.float64) for k, v in model._geometry().items()}
    spec = dataclasses.replace(model._spec(model._architecture()), smoothness=0.0)  # the log loss term alone
    with torch.no_grad():
        loss = float(objective(torch, P, spec, geometry, data, np.arange(p.size), contexts))
    pred = model.predict(p, X=X)
    assert loss == pytest.approx(mcal.metrics.log_loss(y, pred), rel=1e-9)


def test_evaluate_grid_integrates_a_linear_integrand_exactly_and_extends_linearly():
    # f1(s) = 2 + 0.5 s on the grid of one bin over [-1, 3]: the trapezoid of a linear interpolant is exact,
    # F(s) = 2 (s + 1) + 0.25 (s^2 - 1); outside the grid the map continues with the end slope
    lower, step = (
        torch.tensor([-1.0], dtype=torch.float64),
        torch.tensor([4.0 / (GRID_POINTS - 1)], dtype=torch.float64),
    )
    g = lower + step * torch.arange(GRID_POINTS, dtype=torch.float64)
    slopes = (2.0 + 0.5 * g)[None, None, :]
    values = (2.0 * (g + 1.0) + 0.25 * (g**2 - 1.0))[None, None, :] + 0.7  # + a bias term
    x = torch.tensor([-1.0, -0.3, 0.01, 1.234, 2.999, 3.0, 3.5, -2.0], dtype=torch.float64)
    zeros = torch.zeros(x.shape, dtype=torch.long)
    out = evaluate_grid(torch, values, slopes, lower, step, x, zeros, zeros).numpy()
    xs = x.numpy()
    inside = 2.0 * (xs + 1.0) + 0.25 * (xs**2 - 1.0) + 0.7
    expected = np.where(
        xs > 3.0, 8.0 + 2.0 + 0.7 + 3.5 * (xs - 3.0), np.where(xs < -1.0, 0.7 + 1.5 * (xs + 1.0), inside)
    )
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-12)


def test_grid_spans_each_bins_data_range():
    geometry = {"anchor": np.array([-3.0, 0.5]), "half_width": np.array([1.75, 0.05])}
    lower, step = grid_spacing(geometry)
    np.testing.assert_allclose(lower + step * (GRID_POINTS - 1), [0.5, 0.6])


def test_quadrature_models_keep_training_and_predicting_as_before(log_data):
    # integral="quadrature": the per-row Clenshaw-Curtis of Algorithm 1, mini-batches of 2,048 rows
    p, y, X, _ = log_data
    model = MCNet(field="f", integral="quadrature", max_steps=20, random_state=0, inference="exact").fit(p, y, X=X)
    assert model.n_steps_ == 20 and model.n_epochs_ == 10  # 4,000 rows: 2 steps a pass
    compiled = model.set_params(inference="compiled").predict(p, X=X)
    exact = model.set_params(inference="exact").predict(p, X=X)
    assert np.abs(compiled - exact).max() < 1e-4


def test_roughness_sums_squared_log_slope_differences_along_each_grid_and_averages_the_grids():
    slopes = torch.tensor([[[1.0, np.e, 1.0], [2.0, 2.0, 2.0]], [[1.0, 1.0, np.e**2], [3.0, 3.0, 3.0]]])
    # grids: (0, 1, -1) -> 2, constant -> 0, (0, 2) -> 4, constant -> 0; mean over the four grids 1.5
    assert float(roughness(torch, slopes)) == pytest.approx(1.5, rel=1e-6)
    assert float(roughness(torch, torch.full((3, 4, GRID_POINTS), 0.7))) == 0.0


def logit_bend(model, X_field):
    """Summed squared second differences of the fitted logit map on a dense score grid, per field, summed."""
    s = np.linspace(-3.5, 0.5, 400)
    return sum(
        np.sum(np.diff(logit(model.predict(expit(s), X=pd.DataFrame({"f": np.full(s.size, f)}))), 2) ** 2)
        for f in X_field
    )


@pytest.mark.parametrize("integral", ["grid", "quadrature"])
def test_smoothness_straightens_the_map_within_a_bin_and_keeps_it_monotone_for_every_field(log_data, integral):
    # one bin: the penalty reads f1 along each bin's grid, so a bend at a bin edge is not its business
    p, y, X, _ = log_data
    small = dict(field="f", n_bins=1, hidden_sizes=(8, 8), embedding_dim=4, n_nodes=10, max_steps=60, random_state=0,
                 integral=integral)  # fmt: skip
    free, smooth = (MCNet(**small, smoothness=w).fit(p, y, X=X) for w in (0.0, 10.0))
    assert logit_bend(smooth, range(3)) < 0.1 * logit_bend(free, range(3))  # measured: 2.5e-4 (grid), 0.023 of it
    s = np.linspace(-6, 4, 2001)
    for f in range(3):
        assert np.all(np.diff(smooth.predict(expit(s), X=pd.DataFrame({"f": np.full(s.size, f)}))) >= 0)

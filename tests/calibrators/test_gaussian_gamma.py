"""Tests of Gaussian and Gamma scaling (Kweon, Kang and Yu, AAAI 2022)."""

import numpy as np
import pytest
from scipy.special import expit

from mcal import CalibrationWarning, GammaScaling, GaussianScaling, PlattScaling, load, save
from mcal.metrics import ece, log_loss, roc_auc


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def gaussian_data(rng, n, *, pi=0.3, mu=(-1.0, 1.0), sd=(1.0, 0.9)):
    """Logit scores with Gaussian class-conditionals; returns probabilities, labels, true (a, b, c)."""
    y = (rng.random(n) < pi).astype(float)
    s = np.where(y == 1, rng.normal(mu[1], sd[1], n), rng.normal(mu[0], sd[0], n))
    a = 1 / (2 * sd[0] ** 2) - 1 / (2 * sd[1] ** 2)
    b = mu[1] / sd[1] ** 2 - mu[0] / sd[0] ** 2
    c = np.log(pi * sd[0] / ((1 - pi) * sd[1])) - mu[1] ** 2 / (2 * sd[1] ** 2) + mu[0] ** 2 / (2 * sd[0] ** 2)
    return expit(s), y, (a, b, c)


def miscalibrated(rng, n):
    """Over-confident scores: the true probability is expit(0.5 s + 0.3) for a score expit(s)."""
    s = rng.normal(-0.5, 2.0, n)
    y = (rng.random(n) < expit(0.5 * s + 0.3)).astype(float)
    return expit(s), y, expit(0.5 * s + 0.3)


def test_gaussian_scaling_recovers_the_analytic_coefficients_of_gaussian_class_conditionals(rng):
    # Unequal variances: a = 1/2 - 1/(2 * 0.81) = -0.117, b = 1/0.81 + 1 = 2.235, c = log(0.3/(0.7*0.9)) - ...
    p, y, (a, b, c) = gaussian_data(rng, 200_000)
    cal = GaussianScaling().fit(p, y)
    # Over 20 seeds the fitted coefficients have standard deviations 0.010, 0.012, 0.007 at this n; the
    # bounds are 4 of those. A logit-linear (Platt) fit would miss a by 0.117.
    assert abs(cal.a_ - a) < 0.04
    assert abs(cal.b_ - b) < 0.05
    assert abs(cal.c_ - c) < 0.03
    grid = np.linspace(-3.0, 3.0, 61)
    true = expit(a * grid**2 + b * grid + c)
    assert np.max(np.abs(cal.predict(expit(grid)) - true)) < 0.01


def test_gaussian_monotone_constraint_is_inactive_when_the_true_map_is_increasing(rng):
    p, y, _ = gaussian_data(rng, 20_000)
    free = GaussianScaling(monotone=False).fit(p, y)
    constrained = GaussianScaling().fit(p, y)
    assert (constrained.a_, constrained.b_, constrained.c_) == (free.a_, free.b_, free.c_)


def test_gaussian_monotone_constraint_keeps_the_map_non_decreasing_where_the_free_fit_is_not(rng):
    p, y, _ = gaussian_data(rng, 20_000, sd=(1.0, 2.0))  # a > 0: the free quadratic turns down on the left
    grid = expit(np.linspace(-12.0, 12.0, 2001))
    free = GaussianScaling(monotone=False).fit(p, y)
    assert np.any(np.diff(free.predict(grid)) < 0)
    cal = GaussianScaling().fit(p, y)
    assert np.all(np.diff(cal.predict(grid)) >= 0)
    assert min(2 * cal.a_ * cal.score_min_ + cal.b_, 2 * cal.a_ * cal.score_max_ + cal.b_) >= -1e-9


def test_gamma_monotonicity_condition_holds_at_both_ends_of_the_range(rng):
    # Official condition (postech-di-lab/METIS): a / u + b >= 0 at u = shift and u = s_max - s0.
    p, y, _ = gaussian_data(rng, 20_000, sd=(1.0, 2.0))
    free = GammaScaling(monotone=False).fit(p, y)
    cal = GammaScaling(shift=0.5).fit(p, y)
    u_max = cal.score_max_ - (cal.score_min_ - 0.5)
    assert min(cal.a_ / 0.5 + cal.b_, cal.a_ / u_max + cal.b_) >= -1e-9
    u_max_free = free.score_max_ - (free.score_min_ - 1.0)
    assert min(free.a_ / 1.0 + free.b_, free.a_ / u_max_free + free.b_) < 0  # the constraint was needed
    grid = expit(np.linspace(-16.0, 16.0, 3001))
    assert np.all(np.diff(cal.predict(grid)) >= 0)


def test_gamma_scaling_is_close_to_the_true_posterior_under_gamma_class_conditionals(rng):
    # u | y ~ Gamma(2 + y, 1): the true log-odds are log(u) + log(P(y=1)/P(y=0)) - log(Gamma(3)/Gamma(2)).
    def draw(n):
        y = (rng.random(n) < 0.4).astype(float)
        u = rng.gamma(2.0 + y, 1.0)
        return expit(u - 3.0), y, expit(np.log(u) + np.log(0.4 / 0.6) - np.log(2.0))

    p, y, _ = draw(50_000)
    pt, yt, truth = draw(50_000)
    cal = GammaScaling().fit(p, y)
    # the oracle's log loss is the floor; 0.002 is about 3 standard errors of the difference at this n
    assert log_loss(yt, cal.predict(pt)) - log_loss(yt, truth) < 0.002
    assert log_loss(yt, cal.predict(pt)) < log_loss(yt, pt) - 0.05


@pytest.mark.parametrize("method", [GaussianScaling(), GammaScaling()], ids=["gaussian", "gamma"])
def test_scaling_beats_the_identity_on_held_out_miscalibrated_scores(rng, method):
    p, y, _ = miscalibrated(rng, 20_000)
    pt, yt, truth = miscalibrated(rng, 20_000)
    q = method.fit(p, y).predict(pt)
    # identity: log loss 0.60, ECE 0.13 on this data; the fitted maps get within 0.003 and 0.02 of the oracle
    assert log_loss(yt, q) < log_loss(yt, truth) + 0.003 < log_loss(yt, pt)
    assert ece(yt, q) < 0.02 < ece(yt, pt)


@pytest.mark.parametrize("cls", [GaussianScaling, GammaScaling])
def test_strictly_increasing_fit_leaves_roc_auc_unchanged(rng, cls):
    p, y, _ = miscalibrated(rng, 5_000)
    q = cls().fit(p, y).predict(p)
    assert roc_auc(y, q) == pytest.approx(roc_auc(y, p), abs=1e-12)


@pytest.mark.parametrize("cls", [GaussianScaling, GammaScaling])
def test_integer_weights_equal_duplicated_rows(rng, cls):
    p, y, _ = miscalibrated(rng, 3_000)
    w = rng.integers(0, 4, p.size)
    weighted = cls().fit(p, y, sample_weight=w)
    copied = cls().fit(np.repeat(p, w), np.repeat(y, w))
    assert np.allclose([weighted.a_, weighted.b_, weighted.c_], [copied.a_, copied.b_, copied.c_], atol=1e-6)


@pytest.mark.parametrize("cls", [GaussianScaling, GammaScaling])
def test_map_is_continuous_at_the_ends_of_the_calibration_range(rng, cls):
    p, y, _ = miscalibrated(rng, 3_000)
    cal = cls().fit(p, y)
    for end in (cal.score_min_, cal.score_max_):
        inside, outside = cal.predict(expit(np.array([end, end + 1e-6 * np.sign(end)])))
        assert abs(inside - outside) < 1e-5
    assert np.all(np.isfinite(cal.predict(np.array([0.0, 1.0]))))


@pytest.mark.parametrize("cls", [GaussianScaling, GammaScaling])
def test_save_load_round_trip_is_exact(rng, tmp_path, cls):
    p, y, _ = miscalibrated(rng, 2_000)
    cal = cls().fit(p, y)
    save(cal, tmp_path / "m.json")
    again = load(tmp_path / "m.json")
    assert np.array_equal(again.predict(p), cal.predict(p))
    assert again.get_params() == cal.get_params()


def test_load_rejects_an_inverted_score_range(rng, tmp_path):
    p, y, _ = miscalibrated(rng, 1_000)
    data = GaussianScaling().fit(p, y).to_dict()
    data["state"]["score_min_"], data["state"]["score_max_"] = 3.0, -3.0
    with pytest.raises(ValueError, match="score_min_"):
        GaussianScaling.from_dict(data)


@pytest.mark.parametrize("cls", [GaussianScaling, GammaScaling])
def test_load_rejects_coefficients_that_break_the_promised_monotonicity(rng, cls):
    p, y, _ = miscalibrated(rng, 2_000)
    data = cls().fit(p, y).to_dict()
    data["state"]["b_"] = -5.0  # decreasing at both ends of the range for either family
    with pytest.raises(ValueError, match="must give a non-decreasing map \\(monotone=True\\)"):
        cls.from_dict(data)
    data["params"]["monotone"] = False  # without the promise the same coefficients are a valid model
    assert np.all(np.diff(cls.from_dict(data).predict(np.linspace(0.05, 0.95, 20))) < 0)


@pytest.mark.parametrize(
    ("params", "error", "match"),
    [
        ({"shift": 0.0}, ValueError, "shift must be a positive finite number; got 0.0"),
        ({"shift": np.inf}, ValueError, "shift must be a positive finite number"),
        ({"shift": True}, TypeError, "shift must be a positive finite number; got True of type bool"),
        ({"shift": "1"}, TypeError, "shift must be a positive finite number; got '1' of type str"),
        ({"shift": 1e300}, ValueError, "shift must be at most 100 logit units .*; got 1e\\+300"),  # was a flat fit
        ({"shift": 100.5}, ValueError, "shift must be at most 100 logit units"),
        ({"monotone": "yes"}, TypeError, "monotone must be True or False; got 'yes' of type str"),
        ({"monotone": 1}, TypeError, "monotone must be True or False; got 1 of type int"),
    ],
)
def test_bad_parameters_raise_clear_errors(params, error, match):
    with pytest.raises(error, match=match):
        GammaScaling(**params).fit([0.2, 0.7], [0, 1])


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="X must be None"):
        GaussianScaling().fit([0.2, 0.7], [0, 1], X=np.ones((2, 1)))
    with pytest.raises(ValueError, match="y_prob must be finite"):
        GaussianScaling().fit([0.2, np.nan], [0, 1])
    with pytest.raises(ValueError, match="both classes"):
        GammaScaling().fit([0.2, 0.7], [1, 1])


def test_gamma_shift_at_its_bound_fits_as_well_as_platt_scaling(rng):
    # log(u) is nearly linear over the logits at shift = 100: the family holds Platt's map, and the fit finds it
    # (from shift = 300 the fit stalled near the identity: log loss 0.718 against Platt's 0.647)
    y = rng.integers(0, 2, 2000)
    p = expit(rng.gamma(2.0 + y, 1.0) - 3.0)
    platt = log_loss(y, PlattScaling().fit(p, y).predict(p))
    assert log_loss(y, GammaScaling(shift=100.0).fit(p, y).predict(p)) < platt + 1e-3


def test_logistic_map_with_a_non_finite_loss_raises_instead_of_returning_its_start():
    from mcal.parametric import fit_logistic_map

    Z = np.array([[np.inf, 1.0], [0.0, 1.0], [1.0, 1.0]])  # inf * 0 at the start makes the loss NaN
    with pytest.raises(ValueError, match="the logistic calibration loss must be finite; got nan"):
        fit_logistic_map(Z, np.array([1.0, 0.0, 1.0]), np.ones(3), lower=np.full(2, -np.inf), x0=np.zeros(2))


def test_solver_tolerance_violations_are_moved_inside_the_monotonicity_constraints():
    from mcal.parametric import _into_constraints

    A = np.array([[-13.0, 1.0, 0.0], [13.0, 1.0, 0.0]])  # 2a*s + b >= 0 at s = -6.5 and s = 6.5
    theta = np.array([0.08, 1.04 - 1e-12, 0.3])  # the first condition misses by about 1e-12
    fixed = _into_constraints(theta, A)
    assert np.all(A @ fixed >= 1e-10 * (1 - 1e-6))
    assert np.max(np.abs(fixed - theta)) < 1e-9


def test_gamma_shift_below_the_rounding_of_the_smallest_logit_still_fits(rng):
    # s - (s_min - 1e-20) rounded to 0 at s_min: log(0) made the loss NaN, the fit returned its starting point
    # (the identity) and predicted NaN below the calibration range
    p, y, _ = miscalibrated(rng, 5000)
    cal = GammaScaling(shift=1e-20).fit(p, y)
    assert np.all(np.isfinite(cal.predict(np.linspace(0.0, 1.0, 101))))
    assert log_loss(y, cal.predict(p)) < log_loss(y, p) - 0.05


@pytest.mark.parametrize("cls", [GaussianScaling, GammaScaling])
def test_beyond_the_calibration_range_the_logit_map_continues_along_its_end_tangent(cls):
    from scipy.special import logit

    rng = np.random.default_rng(4)
    p = rng.uniform(0.2, 0.8, 2000)
    y = (rng.random(2000) < expit(1.6 * logit(p) ** 3 + 0.3)).astype(float)
    model = cls().fit(p, y)
    hi = model.score_max_
    z = logit(model.predict(expit(np.array([hi, hi + 1.0, hi + 2.0]))))
    d1, d2 = model._derivatives(np.array([hi]))
    slope = float(model.a_ * d1[0] + model.b_ * d2[0])
    assert abs(model.a_) > 1e-3  # a curved map, so a flat or a quadratic continuation would differ
    np.testing.assert_allclose(np.diff(z), [slope, slope], rtol=1e-7)


def _one_iteration(monkeypatch):
    """Cap every scipy optimiser call of mcal.parametric at one iteration, so that it reports failure."""
    from scipy.optimize import minimize

    from mcal import parametric

    def limited(*args, options, **kwargs):
        return minimize(*args, options={**options, "maxiter": 1}, **kwargs)

    monkeypatch.setattr(parametric, "minimize", limited)


@pytest.mark.parametrize("cls", [PlattScaling, GaussianScaling, GammaScaling])
def test_an_optimiser_that_stops_short_warns_with_scipys_message(rng, monkeypatch, cls):
    # L-BFGS-B's failure with a finite loss was silent: the parameters where it stopped were the fit
    p, y, _ = miscalibrated(rng, 500)
    _one_iteration(monkeypatch)
    with pytest.warns(
        CalibrationWarning,
        match=r"^the logistic calibration fit did not converge: L-BFGS-B stopped "
        r"after 1 iteration\(s\) with 'STOP: TOTAL NO. OF ITERATIONS REACHED "
        r"LIMIT'; its parameters there are returned$",
    ):
        cal = cls().fit(p, y)
    assert np.all(np.isfinite(cal.predict(p)))


def test_the_constrained_optimiser_that_stops_short_warns_with_scipys_message(rng, monkeypatch):
    from scipy.optimize import minimize

    from mcal import parametric

    # a > 0: the free quadratic turns down on the left, so that SLSQP runs; it alone is capped
    p, y, _ = gaussian_data(rng, 2000, sd=(1.0, 2.0))

    def slsqp_limited(*args, method, options, **kwargs):
        capped = {**options, "maxiter": 1} if method == "SLSQP" else options
        return minimize(*args, method=method, options=capped, **kwargs)

    monkeypatch.setattr(parametric, "minimize", slsqp_limited)
    with pytest.warns(
        CalibrationWarning,
        match=r"^the constrained logistic calibration fit did not converge: SLSQP "
        r"stopped after 1 iteration\(s\) with 'Iteration limit reached'",
    ):
        GaussianScaling().fit(p, y)


def test_an_unconverged_free_fit_that_the_constrained_fit_replaces_does_not_warn(rng, monkeypatch):
    import warnings

    from scipy.optimize import minimize

    from mcal import parametric

    # L-BFGS-B alone is capped; its point breaks the monotonicity constraints, so SLSQP fits (and converges):
    # the free fit's warning was given although its parameters were not returned
    p, y, _ = gaussian_data(rng, 2000, sd=(1.0, 2.0))
    methods = []

    def lbfgs_limited(*args, method, options, **kwargs):
        methods.append(method)
        capped = {**options, "maxiter": 1} if method == "L-BFGS-B" else options
        return minimize(*args, method=method, options=capped, **kwargs)

    monkeypatch.setattr(parametric, "minimize", lbfgs_limited)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CalibrationWarning)
        GaussianScaling().fit(p, y)
    assert methods == ["L-BFGS-B", "SLSQP"]

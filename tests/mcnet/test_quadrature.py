"""Clenshaw-Curtis quadrature (MCNet paper, Appendix A.2): reference weights, exactness, convergence."""

import numpy as np
import pytest
from numpy.polynomial import chebyshev, polynomial
from scipy.special import expit

from mcal.mcnet import clenshaw_curtis
from mcal.mcnet._quadrature import integrate


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_five_point_weights_match_hand_computed_values():
    # N = 4: w_0 = w_4 = 1/(N^2 - 1) = 1/15, w_1 = w_3 = 8/15, w_2 = 12/15 (Trefethen, "Spectral Methods in MATLAB", clencurt)
    nodes, weights = clenshaw_curtis(5)
    np.testing.assert_allclose(nodes, [1.0, np.sqrt(0.5), 0.0, -np.sqrt(0.5), -1.0], atol=1e-15)
    np.testing.assert_allclose(weights, np.array([1, 8, 12, 8, 1]) / 15, rtol=1e-14)


def test_two_point_rule_is_the_trapezoid():
    nodes, weights = clenshaw_curtis(2)
    np.testing.assert_allclose(nodes, [1.0, -1.0])
    np.testing.assert_allclose(weights, [1.0, 1.0])


@pytest.mark.parametrize("n_nodes", [2, 3, 7, 20, 50, 51, 100])
def test_weights_are_positive_and_sum_to_the_interval_length(n_nodes):
    _, weights = clenshaw_curtis(n_nodes)
    assert np.all(weights > 0)
    assert weights.sum() == pytest.approx(2.0, abs=1e-13)


@pytest.mark.parametrize("n_nodes", [2, 3, 4, 5, 10, 11, 50, 51])
def test_exact_on_polynomials_up_to_the_rule_degree(rng, n_nodes):
    n = n_nodes - 1
    degree = n + 1 if n % 2 == 0 else n  # odd terms of degree N + 1 vanish by symmetry when N is even
    coef = rng.normal(size=degree + 1)
    exact = sum(c * (1 - (-1) ** (k + 1)) / (k + 1) for k, c in enumerate(coef))
    nodes, weights = clenshaw_curtis(n_nodes)
    assert weights @ polynomial.polyval(nodes, coef) == pytest.approx(exact, abs=1e-12 * np.abs(coef).sum())


@pytest.mark.parametrize("n_nodes", [4, 5, 50, 51])
def test_not_exact_one_even_degree_beyond(n_nodes):
    n = n_nodes - 1
    m = n + 1 if n % 2 else n + 2  # the first even Chebyshev degree the rule cannot integrate
    nodes, weights = clenshaw_curtis(n_nodes)
    coef = np.zeros(m + 1)
    coef[m] = 1.0
    assert abs(weights @ chebyshev.chebval(nodes, coef) - 2.0 / (1.0 - m * m)) > 1e-6


@pytest.mark.parametrize(
    ("func", "lower", "upper", "exact"),
    [
        (np.exp, -1.0, 2.0, np.exp(2.0) - np.exp(-1.0)),
        (lambda t: np.cos(3 * t), 0.0, 2.5, np.sin(7.5) / 3),
        (lambda t: expit(4 * t), -3.0, 1.0, (np.log1p(np.exp(4.0)) - np.log1p(np.exp(-12.0))) / 4),
        (lambda t: 1.0 / (2.0 + t), 0.0, 4.0, np.log(3.0)),
    ],
)
def test_smooth_functions_to_1e8_with_50_nodes(func, lower, upper, exact):
    got = integrate(func, np.array([lower]), np.array([upper]), 50)[0]
    assert got == pytest.approx(exact, abs=1e-8)


def test_reversed_bounds_negate_the_integral():
    a, b = np.array([0.3, -2.0]), np.array([1.7, 0.5])
    np.testing.assert_allclose(integrate(np.exp, b, a, 30), -integrate(np.exp, a, b, 30), rtol=1e-14)


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, True, "3", None])
def test_bad_n_nodes_raises(bad):
    with pytest.raises(ValueError, match="n_nodes must be an integer >= 2"):
        clenshaw_curtis(bad)


@pytest.mark.parametrize("n_nodes", [4, 5, 50, 51])
def test_weights_are_the_interpolatory_weights_solved_from_chebyshev_moments(n_nodes):
    # an independent construction: the unique weights that integrate T_0..T_N exactly at the nodes,
    # from the moments int_{-1}^{1} T_k = 2 / (1 - k^2) for even k and 0 for odd k
    nodes, weights = clenshaw_curtis(n_nodes)
    n = n_nodes - 1
    vander = chebyshev.chebvander(nodes, n).T  # (N + 1 polynomials, N + 1 nodes)
    moments = np.zeros(n + 1)
    moments[::2] = 2.0 / (1.0 - np.arange(0, n + 1, 2) ** 2)
    np.testing.assert_allclose(weights, np.linalg.solve(vander, moments), rtol=0, atol=1e-13)


@pytest.mark.parametrize(("lower", "upper"), [(-2.0, 3.0), (0.5, -1.5), (-1e-3, 2e-3)])
def test_integrate_matches_scipy_quad_on_a_smooth_function(lower, upper):
    from scipy.integrate import quad

    def func(t):
        return np.exp(np.sin(3.0 * t)) / (1.0 + t * t)

    reference, _ = quad(func, lower, upper, epsabs=1e-13, epsrel=1e-13)
    assert integrate(func, np.array([lower]), np.array([upper]), 50)[0] == pytest.approx(reference, abs=1e-9)

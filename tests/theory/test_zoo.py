"""Exact curves of the zoo (theory.zoo) against closed forms, independent quadrature and Monte Carlo.

References computed for this project: the Laplace curve 1 - e^{(eps - a)/2} (Dwork & Roth 2014,
Theorem 3.6, worked out), the law of a difference of two Laplace variables for report-noisy-max on
two queries, and the law of SVT on one query; NoisyHist2's true eps = 1/eps0 (Bichsel et al. 2021,
DP-Sniper, Table 2). Monte Carlo checks: 4 standard errors, fixed seeds.
"""

import math

import numpy as np
import pytest
from scipy import integrate, optimize

from ndis import theory
from ndis.theory import zoo


def _hockey_stick_quad(p, p_prime, eps, points):
    """integral of (p - e^eps p')_+ by scipy quad (independent reference), split at the given kinks
    and at the sign changes of p - e^eps p' on a grid of [-100, 100]."""
    g = lambda x: p(x) - math.exp(eps) * p_prime(x)
    grid = np.linspace(-100.0, 100.0, 40_001)
    values = np.array([g(x) for x in grid])
    roots = [optimize.brentq(g, grid[j], grid[j + 1], xtol=1e-15)
             for j in np.flatnonzero(np.sign(values[1:]) != np.sign(values[:-1])) if values[j] != 0]
    edges = [-np.inf, *sorted([*points, *roots]), np.inf]
    f = lambda x: max(0.0, g(x))
    return sum(integrate.quad(f, a, b, epsabs=1e-13, epsrel=1e-11, limit=400)[0] for a, b in zip(edges[:-1], edges[1:]))


def _laplace_pdf(x, m, b):
    return math.exp(-abs(x - m) / b) / (2 * b)


@pytest.mark.parametrize("eps0", [0.1, 0.5, 1.0, 2.0])
def test_laplace_one_coordinate_closed_form(eps0):
    eps = np.linspace(-3.0, 3.0, 61)
    got = theory.laplace_delta(eps, [1.0, 0.0], [2.0, 0.0], 1.0 / eps0)
    want = np.where(eps >= eps0, 0.0, np.where(eps <= -eps0, -np.expm1(eps), -np.expm1((eps - eps0) / 2)))
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    for e in (-0.5 * eps0, 0.0, 0.7 * eps0):
        reference = _hockey_stick_quad(lambda x: _laplace_pdf(x, 0, 1 / eps0), lambda x: _laplace_pdf(x, 1, 1 / eps0), e, [0, 1])
        assert theory.laplace_delta(e, [0.0], [1.0], 1 / eps0) == pytest.approx(reference, rel=1e-9, abs=1e-13)


def test_laplace_two_coordinates_match_a_double_integral():
    b, shift = 0.8, np.array([1.0, 0.5])
    for eps in (0.0, 0.4, 1.0, 1.6):
        def f(y, x):
            log_ratio = (abs(x - shift[0]) + abs(y - shift[1]) - abs(x) - abs(y)) / b
            return _laplace_pdf(x, 0, b) * _laplace_pdf(y, 0, b) * max(0.0, -math.expm1(eps - log_ratio))
        pieces = [(-40, 0), (0, 0.5), (0.5, 1.0), (1.0, 40)]
        reference = sum(integrate.dblquad(f, xa, xb, ya, yb, epsabs=1e-12, epsrel=1e-10)[0]
                        for xa, xb in pieces for ya, yb in pieces)
        assert theory.laplace_delta(eps, [0.0, 0.0], shift, b) == pytest.approx(reference, rel=1e-7, abs=1e-11)


def test_laplace_several_coordinates_match_monte_carlo():
    """delta = E_P[(1 - e^{eps - L})_+] with the exact privacy loss L, 400,000 draws."""
    b, q, q_prime = 0.5, np.zeros(4), np.array([1.0, -1.0, 0.5, 0.25])
    x = np.random.default_rng(11).laplace(0.0, b, (400_000, 4))
    loss = (np.abs(x - q_prime) - np.abs(x - q)).sum(axis=1) / b
    for eps in (0.0, 1.0, 2.5, 4.0):
        terms = np.maximum(0.0, -np.expm1(eps - loss))
        se = terms.std() / np.sqrt(terms.size)
        assert abs(theory.laplace_delta(eps, q, q_prime, b) - terms.mean()) <= 4 * se + 1e-12
    assert theory.laplace_delta(theory.laplace_epsilon(q, q_prime, b), q, q_prime, b) == 0.0
    assert theory.laplace_delta(theory.laplace_epsilon(q, q_prime, b) - 1e-3, q, q_prime, b) > 0.0


def test_noisy_hist2_true_epsilon_is_one_over_eps0():
    """DP-Sniper (Bichsel et al. 2021, Table 2): NoisyHist2 at eps0 = 0.1 has true eps 10."""
    q, q_prime = np.ones(5), np.r_[2.0, np.ones(4)]
    assert theory.laplace_epsilon(q, q_prime, 0.1) == pytest.approx(10.0, rel=1e-14)
    assert theory.laplace_delta(10.0, q, q_prime, 0.1) == 0.0 and theory.laplace_delta(9.9, q, q_prime, 0.1) > 0


def test_gaussian_shift_reuses_the_analytic_gaussian():
    q, q_prime = np.zeros(3), np.array([0.3, -0.4, 0.0])
    assert theory.gaussian_shift_delta(0.5, q, q_prime, 0.25) == theory.gaussian_delta(0.5, 0.5 / 0.25)


@pytest.mark.parametrize("d", [0.0, 0.3, 1.0, 4.0])
@pytest.mark.parametrize("b", [0.5, 2.0])
def test_noisy_max_index_on_two_queries(d, b):
    """Laplace: q1 - q2 + Z1 - Z2 > 0 with P(Z1 - Z2 > t) = e^{-t/b}(1 + t/(2b))/2; exponential:
    Z1 - Z2 ~ Lap(b), so P = 1 - e^{-d/b}/2."""
    lap = zoo.noisy_max_index_probabilities([d, 0.0], b, "laplace")
    assert lap[0] == pytest.approx(1 - 0.5 * math.exp(-d / b) * (1 + d / (2 * b)), rel=1e-11)
    expo = zoo.noisy_max_index_probabilities([d, 0.0], b, "exponential")
    assert expo[0] == pytest.approx(1 - 0.5 * math.exp(-d / b), rel=1e-11)
    assert lap.sum() == pytest.approx(1.0, abs=1e-12) and expo.sum() == pytest.approx(1.0, abs=1e-12)


def test_noisy_max_value_delta_matches_quadrature_and_monte_carlo():
    b, q, q_prime = 4.0, np.ones(3), np.array([2.0, 0.0, 0.0])

    def density(v, x):
        cdf = [0.5 * math.exp((x - m) / b) if x < m else 1 - 0.5 * math.exp(-(x - m) / b) for m in v]
        return sum(_laplace_pdf(x, m, b) * math.prod(cdf[:i] + cdf[i + 1:]) for i, m in enumerate(v))

    draws = np.max(q + np.random.default_rng(3).laplace(0, b, (200_000, 3)), axis=1)
    loss = zoo.noisy_max_value_log_ratio(draws, q, q_prime, b, "laplace")
    for eps in (0.0, 0.1, 0.3):
        exact = zoo.noisy_max_value_delta(eps, q, q_prime, b)
        reference = _hockey_stick_quad(lambda x: density(q, x), lambda x: density(q_prime, x), eps, [0.0, 1.0, 2.0])
        assert exact == pytest.approx(reference, rel=1e-10, abs=1e-13)
        terms = np.maximum(0.0, -np.expm1(eps - loss))
        assert abs(exact - terms.mean()) <= 4 * terms.std() / np.sqrt(terms.size) + 1e-12


def test_noisy_max_value_epsilon_known_values():
    """Laplace, every answer up by 1: ln p/p' tends to k/b as x -> -inf (its supremum) and the
    reverse ratio to 1/b as x -> +inf;
    exponential: infinite when the max of q lies below that of q', or ties fewer answers."""
    b, k = 4.0, 5
    assert zoo.noisy_max_value_epsilon(np.ones(k), 2 * np.ones(k), b) == pytest.approx(k / b, rel=1e-9)
    assert zoo.noisy_max_value_epsilon(2 * np.ones(k), np.ones(k), b) == pytest.approx(1 / b, rel=1e-9)
    assert zoo.noisy_max_value_epsilon(np.ones(k), 2 * np.ones(k), b, "exponential") == math.inf
    assert zoo.noisy_max_value_epsilon(np.r_[0.0, np.ones(k - 1)], np.ones(k), b, "exponential") == math.inf
    finite = zoo.noisy_max_value_epsilon(np.r_[2.0, np.ones(k - 1)], np.ones(k), b, "exponential")
    assert math.isfinite(finite)
    assert zoo.noisy_max_value_delta(finite + 1e-6, np.r_[2.0, np.ones(k - 1)], np.ones(k), b, "exponential") < 1e-12


@pytest.mark.parametrize("t", [-1.0, 0.0, 0.7])
def test_svt_on_one_query(t):
    """P(q + nu >= T + rho) = P(nu - rho >= T - q); for t = T - q >= 0 this is
    (b2^2 e^{-t/b2} - b1^2 e^{-t/b1}) / (2 (b2^2 - b1^2)), and symmetric below."""
    b1, b2 = 2.0, 3.0
    tail = lambda s: (b2**2 * math.exp(-s / b2) - b1**2 * math.exp(-s / b1)) / (2 * (b2**2 - b1**2))
    want = tail(t) if t >= 0 else 1 - tail(-t)
    outcomes, P = zoo.svt_probabilities([0.0], t, b1, b2, 1)
    assert outcomes == [(1,), (0,)] and P[0] == pytest.approx(want, rel=1e-11)


def test_svt_without_query_noise_is_an_interval_of_the_threshold_noise():
    b1, F = 2.0, lambda z: 0.5 * math.exp(z / 2.0) if z < 0 else 1 - 0.5 * math.exp(-z / 2.0)
    outcomes, P = zoo.svt_probabilities([1.0, 0.0], 0.5, b1, 0.0, None)
    law = dict(zip(outcomes, P))
    assert law[(1, 1)] == pytest.approx(F(-0.5), rel=1e-12)
    assert law[(1, 0)] == pytest.approx(F(0.5) - F(-0.5), rel=1e-12)
    assert law[(0, 0)] == pytest.approx(1 - F(0.5), rel=1e-12) and law[(0, 1)] == 0.0


def test_svt_outcomes_and_probabilities_sum_to_one():
    assert zoo.svt_outcomes(3, 1) == [(1, -1, -1), (0, 1, -1), (0, 0, 1), (0, 0, 0)]
    assert len(zoo.svt_outcomes(4, None)) == 16 and len(zoo.svt_outcomes(4, 2)) == 11
    for cutoff in (1, 2, None):
        assert zoo.svt_probabilities([1.0, 0.0, 2.0, 1.0], 1.0, 1.0, 2.0, cutoff)[1].sum() == pytest.approx(1.0, abs=1e-12)


def test_discrete_delta_and_epsilon():
    P, Q = np.array([0.5, 0.5 - 1e-13, 1e-13]), np.array([0.5, 0.5, 0.0])
    assert zoo.discrete_delta(0.0, P, Q) == pytest.approx(1e-13, rel=1e-9)
    assert zoo.discrete_epsilon(P, Q) == math.inf and zoo.discrete_epsilon(Q, P) == pytest.approx(math.log(0.5 / (0.5 - 1e-13)))
    tiny = zoo.discrete_delta(1e-3, np.array([0.6, 0.4]), np.array([0.6 * math.exp(-1.001e-3), 0.4 * math.exp(5)]))
    assert tiny == pytest.approx(0.6 * -math.expm1(-1e-6), rel=1e-8)
    np.testing.assert_array_equal(zoo.discrete_delta([0.0, 50.0], Q, Q), [0.0, 0.0])


def test_inputs_are_checked():
    with pytest.raises(ValueError, match="same length"):
        theory.laplace_delta(0.0, [0.0, 1.0], [0.0], 1.0)
    with pytest.raises(ValueError, match="noise must be"):
        zoo.noisy_max_index_probabilities([0.0, 1.0], 1.0, "gumbel")
    with pytest.raises(ValueError, match="at most 8"):
        theory.laplace_delta(0.0, np.zeros(9), np.ones(9), 1.0)

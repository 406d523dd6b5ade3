"""theory.renyi: closed-form Rényi divergences of Gaussian pairs against mpmath integration, the ALS and
RP pairs, the hockey-stick identity used for other profiles, and zCDP."""

import numpy as np
import pytest

from ndis import theory
from ndis.theory.quadratic_loss import QuadraticLoss
from ndis.theory.renyi import _profile_divergence
from tests.theory.references import renyi_gaussian_mp, renyi_subsampled_gaussian_mp

ORDERS = (1.5, 2.0, 8.0, 32.0)


def _pair(p, seed, top=0.025):
    """A random pair whose generalised eigenvalues a_j lie in [-0.5, top] (finite up to alpha = 1 + 1/top)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(p, p))
    cov2 = A @ A.T / p + np.eye(p)
    L = np.linalg.cholesky(cov2)
    U, _ = np.linalg.qr(rng.normal(size=(p, p)))
    a = np.append(rng.uniform(-0.5, top, p - 1), top) if p > 1 else np.array([top])
    cov1 = L @ U @ np.diag(1.0 + a) @ U.T @ L.T
    return theory.GaussianPair(rng.normal(size=p), cov1, rng.normal(size=p), cov2)


@pytest.mark.parametrize("p", [1, 2, 12])
def test_gaussian_pairs_match_mpmath_integration(p):
    # acceptance: 1e-10 relative, both directions (the reverse pair has a_j' = -a_j / (1 + a_j) in
    # [-0.025, 1], so only alpha < 2 stays finite there: the others must be +inf, as mpmath says)
    pair = _pair(p, seed=p)
    for direction, (m1, c1, m2, c2) in (("forward", (pair.law1.mean, pair.law1.cov, pair.law2.mean, pair.law2.cov)),
                                        ("reverse", (pair.law2.mean, pair.law2.cov, pair.law1.mean, pair.law1.cov))):
        ours = theory.renyi_divergence(pair, np.array(ORDERS), direction)
        for alpha, value in zip(ORDERS, ours):
            reference = renyi_gaussian_mp(m1, c1, m2, c2, alpha)
            if reference == np.inf:
                assert value == np.inf, (p, direction, alpha)
            else:
                assert abs(value / float(reference) - 1) <= 1e-10, (p, direction, alpha, value, reference)


def test_divergence_is_infinite_exactly_where_the_mixture_covariance_is_not_positive_definite():
    pair = _pair(2, seed=5, top=0.1)      # largest a_j = 0.1: finite iff 1 - (alpha - 1) 0.1 > 0, alpha < 11
    values = theory.renyi_divergence(pair, np.array([10.9, 11.1]), "forward")
    assert np.isfinite(values[0]) and values[1] == np.inf
    mixture = lambda a: a * pair.law2.cov + (1 - a) * pair.law1.cov
    assert np.linalg.eigvalsh(mixture(10.9)).min() > 0 > np.linalg.eigvalsh(mixture(11.1)).min()


def test_the_analytic_gaussian_and_the_kl_limit():
    # D_alpha = alpha mu^2 / 2 for N(mu, 1) vs N(0, 1); alpha = 1 is the KL divergence
    pair = theory.GaussianPair([0.7], [[1.0]], [0.0], [[1.0]])
    assert np.allclose(theory.renyi_divergence(pair, np.array(ORDERS)), np.array(ORDERS) * 0.49 / 2, rtol=1e-14)
    other = theory.GaussianPair([0.3], [[2.0]], [0.0], [[1.0]])
    kl = 0.5 * (2.0 + 0.09 - 1.0 - np.log(2.0))         # KL(N(0.3, 2) || N(0, 1))
    assert theory.renyi_divergence(other, 1.0, "forward") == pytest.approx(kl, rel=1e-14)
    assert theory.renyi_divergence(other, 1.0 + 1e-9, "forward") == pytest.approx(kl, rel=1e-8)


def test_the_hockey_stick_identity_reproduces_the_closed_forms():
    # the route of non-Gaussian profiles, checked where both exist (the integrals' own tolerance is 1e-11);
    # an order whose integrand has not decayed by eps = 2^10 is reported divergent (never below the truth):
    # here alpha = 32, close to where the forward pair diverges (alpha = 41)
    for pair in (_pair(3, seed=7), theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]])):
        for profile in (pair, pair.reverse()):
            closed = theory.renyi_divergence(profile, np.array(ORDERS), "forward")
            numeric = _profile_divergence(profile, np.array(ORDERS))
            finite = np.isfinite(closed) & np.isfinite(numeric)
            assert np.allclose(numeric[finite], closed[finite], rtol=1e-10, atol=0)
            assert np.all(numeric >= closed * (1 - 1e-10)) and np.all(finite[:3] == np.isfinite(closed[:3]))


def test_subsampled_gaussian_both_directions_against_mpmath():
    # no closed form: the hockey-stick identity on the exact subsampled curve (tolerance 1e-11 in the
    # logarithm of each integral; asserted 1e-9 relative in D_alpha)
    sub = theory.poisson_subsample(theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]]), 0.01)
    for direction in ("forward", "reverse"):
        ours = theory.renyi_divergence(sub, np.array([1.5, 2.0, 8.0]), direction)
        for alpha, value in zip((1.5, 2.0, 8.0), ours):
            reference = float(renyi_subsampled_gaussian_mp(1.0, 0.01, alpha, direction))
            assert abs(value / reference - 1) <= 1e-9, (direction, alpha, value, reference)


def test_als_pair_is_the_gaussian_pair_of_its_laws_and_its_cgf():
    # als_pair's loss, its explicit laws (the docstring's derivation) and K(alpha - 1) / (alpha - 1) of
    # the loss's own cumulant generating function agree
    l, e, r, p = 0.01, 0.004, 300, 4
    l1, q1 = 1 - l, 1 - l - e
    laws = theory.GaussianPair(np.append(np.zeros(p - 1), np.sqrt(r * l * e / q1)),
                               np.diag([l1 / q1] * (p - 1) + [l1**2 / q1]), np.zeros(p), np.eye(p))
    pair = theory.als_pair(l, e, r, p)
    eps = np.linspace(-0.5, 3.0, 8)
    for direction in ("forward", "reverse"):
        assert np.allclose(pair.log_delta(eps, direction), theory.als_log_delta(eps, l, e, r, p, direction), rtol=1e-13)
        assert np.allclose(laws.log_delta(eps, direction), theory.als_log_delta(eps, l, e, r, p, direction), rtol=1e-8)
        ours = theory.renyi_divergence(pair, np.array(ORDERS), direction)
        assert np.allclose(ours, theory.renyi_divergence(laws, np.array(ORDERS), direction), rtol=1e-8)
        loss = pair._oriented(direction).loss
        for alpha, value in zip(ORDERS, ours):
            if np.isfinite(value):
                k0 = loss.cgf_derivatives(np.array([alpha - 1.0]))[0][0]
                assert value == pytest.approx(k0 / (alpha - 1.0), rel=1e-10)


def test_rp_pair_closed_form():
    # forward: r copies of N(0, s1 = 1) vs N(0, s2 = 1 - l), and per copy
    # D_alpha(N(0, s1) || N(0, s2)) = ln(s2/s1)/2 + ln(s2 / (alpha s2 + (1 - alpha) s1)) / (2 (alpha - 1))
    l, r = 0.2, 5
    s1, s2 = 1.0, 1.0 - l
    exact = lambda a: r * (0.5 * np.log(s2 / s1) + np.log(s2 / (a * s2 + (1 - a) * s1)) / (2 * (a - 1)))
    for alpha in (1.5, 2.0, 4.0):
        assert theory.renyi_divergence(theory.rp_pair(l, r), alpha, "forward") == pytest.approx(exact(alpha), rel=1e-12)
    assert theory.renyi_divergence(theory.rp_pair(l, r), 6.0, "forward") == np.inf     # a = l/(1-l) = 0.25: alpha >= 5


def test_products_add_and_spectra_take_the_worst_row():
    a, b = _pair(2, seed=11), _pair(3, seed=12)
    both = theory.compose(a, b, b)
    for direction in ("forward", "reverse"):
        expected = (theory.renyi_divergence(a, np.array(ORDERS), direction)
                    + 2 * theory.renyi_divergence(b, np.array(ORDERS), direction))
        assert np.allclose(theory.renyi_divergence(both, np.array(ORDERS), direction), expected, rtol=1e-12)
    D = np.random.default_rng(0).normal(size=(200, 3))
    spectrum = theory.spectrum("als", D, [0.5], r=50, rows=[3, 17, 40])
    rows = [theory.renyi_divergence(pair, 2.0) for _, pair in spectrum.pairs()]
    assert theory.renyi_divergence(spectrum, 2.0) == pytest.approx(max(rows), rel=1e-15)


def test_zcdp():
    gauss = theory.GaussianPair([0.8], [[1.0]], [0.0], [[1.0]])
    assert theory.zcdp_rho(gauss) == pytest.approx(0.32, rel=1e-12)
    pair = _pair(2, seed=5, top=0.1)
    assert theory.zcdp_rho(pair) == np.inf                                   # covariances differ
    truncated = theory.zcdp_rho(pair, "forward", max_order=8.0)
    grid = np.linspace(1.0001, 8.0, 4000)
    assert truncated == pytest.approx(np.max(theory.renyi_divergence(pair, grid, "forward") / grid), rel=1e-6)
    with pytest.raises(TypeError, match="Gaussian pairs"):
        theory.zcdp_rho(theory.poisson_subsample(gauss, 0.1))


def test_clear_errors():
    with pytest.raises(ValueError, match="alpha must be > 0"):
        theory.renyi_divergence(theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]]), 0.0)
    with pytest.raises(TypeError, match="privacy profile"):
        theory.renyi_divergence(QuadraticLoss.build([[0.1]], 1.0, 0.0, 0.0), 2.0)

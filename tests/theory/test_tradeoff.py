"""theory.tradeoff: the f-DP view of exact curves against trade-off functions known in closed form."""

import numpy as np
import pytest
from scipy import stats

from ndis import theory


def test_gaussian_mechanism_is_mu_gdp():
    # Dong, Roth & Su 2022: G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu); the golden-section refinement
    # locates each supremum to ~1e-8 in eps, a ~1e-15 error in beta (asserted 1e-10)
    mu = 1.3
    alpha, beta = theory.tradeoff(theory.GaussianPair([mu], [[1.0]], [0.0], [[1.0]]))
    exact = stats.norm.cdf(stats.norm.isf(alpha) - mu)
    assert np.max(np.abs(exact - beta)) < 1e-10


def test_an_asymmetric_pair_both_orders():
    # P = N(0, 2), Q = N(0, 1). forward, T(Q, P) (the audit's convention: type I = Q(S), type II = 1 - P(S)):
    # Neyman-Pearson rejects Q on |x| > t. reverse, T(P, Q): rejects P on |x| < t.
    pair = theory.GaussianPair([0.0], [[2.0]], [0.0], [[1.0]])
    t = np.linspace(0.05, 6.0, 40)
    forward_alpha, forward_beta = 2 * stats.norm.sf(t), 1 - 2 * stats.norm.sf(t / np.sqrt(2))
    reverse_alpha, reverse_beta = 2 * stats.norm.cdf(t / np.sqrt(2)) - 1, 2 * stats.norm.sf(t)
    for direction, a, b in (("forward", forward_alpha, forward_beta), ("reverse", reverse_alpha, reverse_beta)):
        _, beta = theory.tradeoff(pair, a, direction)
        assert np.max(np.abs(b - beta)) < 1e-10, direction
    # "max": Dong, Roth & Su's Proposition 2.12 for the larger curve, below both orders' functions
    shifted = theory.compose(theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]]), theory.poisson_subsample(
        theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]]), 0.5))
    curves = [theory.tradeoff(shifted, forward_alpha, d)[1] for d in ("max", "forward", "reverse")]
    assert np.all(curves[0] <= np.minimum(curves[1], curves[2]) + 1e-12)


def test_accepts_spectra_and_checks_input():
    D = np.random.default_rng(0).normal(size=(100, 3))
    spectrum = theory.spectrum("rp", D, [0.5], r=5)
    alpha, beta = theory.tradeoff(spectrum, [0.0, 0.1, 1.0])
    assert beta[-1] == 0.0 and 0 <= beta[1] <= 0.9 and beta[0] <= 1.0
    with pytest.raises(ValueError, match=r"type I errors must lie in \[0, 1\]"):
        theory.tradeoff(spectrum, [1.5])
    with pytest.raises(TypeError, match="privacy profile"):
        theory.tradeoff([0.1, 0.2])

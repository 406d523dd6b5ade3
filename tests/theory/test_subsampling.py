"""theory.subsampling: Poisson-subsampled profiles against dp_accounting's own subsampled Gaussian, both
neighbour directions, and the 1000-step DP-SGD accounting against dp_accounting's PLD accountant and
Opacus's RDP accountant."""

import numpy as np
import pytest

from ndis import theory
from tests.theory.references import gaussian_delta_mp

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.pld import pld_privacy_accountant, privacy_loss_mechanism  # noqa: E402

GAUSS = theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]])     # sensitivity 1, sigma 1


def test_directions_match_dp_accountings_subsampled_gaussian():
    # REMOVE = forward = (q P + (1 - q) Q || Q), ADD = reverse = (Q || q P + (1 - q) Q); dp_accounting's
    # closed forms subtract two normal tails, so agreement is to ~1e-9 relative where delta >= 1e-8
    q = 0.01
    sub = theory.poisson_subsample(GAUSS, q)
    eps = np.linspace(-0.02, 4.0, 400)
    for ours, adjacency in (("forward", "REMOVE"), ("reverse", "ADD")):
        theirs = privacy_loss_mechanism.GaussianPrivacyLoss(
            1.0, sampling_prob=q, adjacency_type=getattr(privacy_loss_mechanism.AdjacencyType, adjacency))
        reference = np.asarray(theirs.get_delta_for_epsilon(eps))
        value = sub.delta(eps, ours)
        big = reference >= 1e-8
        assert np.allclose(value[big], reference[big], rtol=1e-9, atol=0)
        assert np.all(value[~big] <= 1e-8 * (1 + 1e-9))


def test_remove_side_is_q_times_the_base_curve_at_the_mapped_eps():
    # Balle, Barthe & Gaboardi's identity, against mpmath values of the base Gaussian curve
    q, eps = 0.05, 0.7
    inner = np.log1p((np.exp(eps) - 1) / q)
    sub = theory.poisson_subsample(GAUSS, q)
    assert sub.delta(eps) == pytest.approx(q * float(gaussian_delta_mp(inner, 1.0)), rel=1e-12)
    # below eps = ln(1 - q) the curve is 1 - e^eps exactly; the ADD side is 0 from -ln(1 - q) on
    low = np.log1p(-q) - 0.01
    assert sub.delta(low) == pytest.approx(-np.expm1(low), rel=1e-15)
    assert sub.delta(-np.log1p(-q) + 1e-9, "reverse") == 0.0


def test_q_one_is_the_base_curve():
    pair = theory.GaussianPair([0.5, 0.0], np.diag([1.0, 1.3]), [0.0, 0.0], np.eye(2))
    eps = np.linspace(-1, 3, 9)
    sub = theory.poisson_subsample(pair, 1.0)
    for direction in ("forward", "reverse"):
        assert np.allclose(sub.log_delta(eps, direction), pair.log_delta(eps, direction), rtol=1e-13)


def test_dp_sgd_accounting_against_dp_accounting_and_opacus():
    # acceptance: q = 0.01, sigma = 1, 1000 steps. Both PLDs are pessimistic on the grid 1e-4; ours
    # states eps_error = 1000 x 1e-4 = 0.1 as its worst case; measured they agree to ~1e-6 (asserted 1e-4)
    steps, q = 1000, 0.01
    ours = theory.compose(*[theory.poisson_subsample(GAUSS, q)] * steps)
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(1.0)), steps)
    for delta in (1e-5, 1e-8):
        mine, theirs = ours.epsilon(delta, "max"), accountant.get_epsilon(delta)
        assert abs(mine - theirs) <= min(1e-4, ours.eps_error)
    opacus = pytest.importorskip("opacus.accountants")
    rdp = opacus.RDPAccountant()
    rdp.history = [(1.0, q, steps)]
    assert rdp.get_epsilon(1e-5) >= ours.epsilon(1e-5, "max")      # RDP is looser


def test_clear_errors():
    with pytest.raises(ValueError, match=r"q must lie in \(0, 1\]"):
        theory.poisson_subsample(GAUSS, 0.0)
    with pytest.raises(TypeError, match="privacy profile"):
        theory.poisson_subsample(np.ones(3), 0.5)


def _mixture_delta(eps, gamma, mu, direction):
    """delta of (gamma N(mu, 1) + (1 - gamma) N(0, 1) || N(0, 1)) (forward) or the reverse pair, by
    adaptive quadrature of the hockey-stick integrand (independent of the closed forms)."""
    from scipy import integrate, stats

    def mixture(x):
        return gamma * stats.norm.pdf(x, mu) + (1 - gamma) * stats.norm.pdf(x)

    p, q = (mixture, stats.norm.pdf) if direction == "forward" else (stats.norm.pdf, mixture)
    value, _ = integrate.quad(lambda x: max(p(x) - np.exp(eps) * q(x), 0.0), -40, 40, points=[0.0, mu],
                              epsabs=1e-14, epsrel=1e-11, limit=500)
    return value


def test_without_replacement_bounds_both_directions_and_is_attained():
    # m of n rows without replacement, a sum of values in [0, 1] plus N(0, 1): D = (1, 0, ..., 0) and
    # D' = (0, ..., 0) give gamma N(1, 1) + (1 - gamma) N(0, 1) against N(0, 1). The bound must hold in
    # both directions and is attained by the forward one (tolerance: the quadrature's 1e-11 relative)
    m, n = 3, 40
    sub = theory.subsample_without_replacement(GAUSS, m, n)
    for eps in (0.0, 0.05, 0.2, 0.5, 1.0):
        forward, reverse = (_mixture_delta(eps, m / n, 1.0, d) for d in ("forward", "reverse"))
        assert sub.delta(eps, "forward") == pytest.approx(forward, rel=1e-8)
        assert reverse <= sub.delta(eps, "reverse") * (1 + 1e-8)
    assert sub.delta(0.5, "reverse") > 1.5 * _mixture_delta(0.5, m / n, 1.0, "reverse")   # a bound, not exact


def test_without_replacement_of_every_row_is_the_base_and_composes():
    pair = theory.GaussianPair([0.5, 0.0], np.diag([1.0, 1.3]), [0.0, 0.0], np.eye(2))
    eps = np.linspace(-1, 3, 9)
    whole = theory.subsample_without_replacement(pair, 7, 7)
    for direction in ("forward", "reverse"):
        assert np.allclose(whole.log_delta(eps, direction), pair.log_delta(eps, direction), rtol=1e-13)
    # 100 steps composed through PLDs: pessimistic, so never below 100 copies' exact curve at gamma = 1
    steps = theory.compose(*[theory.subsample_without_replacement(GAUSS, 10, 1000)] * 100)
    poisson = theory.compose(*[theory.poisson_subsample(GAUSS, 0.01)] * 100)
    assert steps.epsilon(1e-5, "max") >= poisson.epsilon(1e-5, "forward") - steps.eps_error


def test_without_replacement_errors():
    for m, n in ((0, 10), (11, 10), (2.5, 10), (True, 10)):
        with pytest.raises(ValueError, match="integers 0 < m <= n"):
            theory.subsample_without_replacement(GAUSS, m, n)
    with pytest.raises(TypeError, match="subsample_without_replacement takes a privacy profile"):
        theory.subsample_without_replacement(np.ones(3), 1, 2)

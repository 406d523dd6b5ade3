"""The analytic Gaussian mechanism against 100-digit mpmath references (issue 2 acceptance, item 1)."""

import math

import mpmath as mp
import numpy as np
import pytest

from ndis.theory.gaussian import (
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_log_delta,
    gaussian_mu,
    gaussian_sigma,
)
from tests.theory.references import (
    LOG_TINY,
    gaussian_delta_mp,
    relative_error,
    relative_error_delta,
)

# Acceptance: relative error <= 1e-9 for every delta >= 1e-300, and <= 1e-9 relative in ln delta below.
RTOL = 1e-9
SIGMAS = (0.5, 1.0, 4.8448, 30.0)


@pytest.mark.parametrize("sigma", SIGMAS)
def test_gaussian_delta_matches_mpmath(sigma):
    mu = 1.0 / sigma
    eps = np.linspace(0.0, 30.0, 121)
    delta = gaussian_delta(eps, mu)
    log_delta = gaussian_log_delta(eps, mu)
    worst = 0.0
    for e, d, ld in zip(eps, delta, log_delta):
        ref = gaussian_delta_mp(e, mu)
        if ref >= 1e-300:
            err = relative_error_delta(d, ref)          # the float delta itself
        else:
            assert d == 0.0 or d < 1e-290               # underflowed in float, as it must
            err = relative_error(ld, ref)               # compared in log space
        worst = max(worst, err)
        assert err <= RTOL, (sigma, e, d, ld, ref)
    assert worst < RTOL


@pytest.mark.parametrize("sigma, eps", [(30.0, 30.0), (30.0, 12.0), (100.0, 30.0), (4.8448, 30.0), (1.0, 200.0)])
def test_gaussian_log_delta_where_delta_underflows(sigma, eps):
    # sigma = 30, eps = 30: delta ~ 10^-176000, far below the smallest double
    ref = gaussian_delta_mp(eps, 1.0 / sigma, dps=150)
    assert mp.log(ref) < LOG_TINY
    assert gaussian_delta(eps, 1.0 / sigma) == 0.0
    assert relative_error(gaussian_log_delta(eps, 1.0 / sigma), ref) <= RTOL


def test_reference_gaussian_self_check():
    # The reference subtraction is exact: 100 and 150 digits agree to 1e-40 relative at the
    # points with the worst cancellation (small mu, large eps: the two terms agree to ~1 - mu^2/eps).
    for sigma, eps in [(30.0, 30.0), (100.0, 30.0), (30.0, 0.5)]:
        a, b = gaussian_delta_mp(eps, 1 / sigma, dps=100), gaussian_delta_mp(eps, 1 / sigma, dps=150)
        assert abs(a / b - 1) < 1e-40


@pytest.mark.parametrize("mu", [0.05, 0.5, 2.0, 10.0])
def test_gaussian_negative_eps(mu):
    eps = -np.array([0.01, 0.3, 1.0, 3.0, 10.0])
    for e, d in zip(eps, gaussian_delta(eps, mu)):
        assert relative_error_delta(d, gaussian_delta_mp(e, mu)) <= RTOL
        # delta(eps) >= 1 - e^eps for eps < 0 (equality up to rounding when mu is small)
        assert (1 - math.exp(e)) * (1 - 1e-14) <= d <= 1


def test_gaussian_broadcasting_and_scalars():
    assert isinstance(gaussian_delta(1.0, 1.0), float)
    grid = gaussian_delta(np.array([[0.0, 1.0], [2.0, 3.0]]), 1.0)
    assert grid.shape == (2, 2)
    mus = gaussian_delta(1.0, np.array([0.5, 1.0, 2.0]))
    assert mus.shape == (3,) and np.all(np.diff(mus) > 0)      # increasing in mu (Lu et al. 2023, NDIS, Proposition 6)
    assert gaussian_delta(1.0, 0.0) == 0.0                      # mu = 0: identical outputs
    assert gaussian_delta(0.0, 0.0) == 0.0


# -- golden values of the analytic and classic calibrations -------------------------------------------

@pytest.mark.parametrize("eps, mu, golden", [(1.0, 1.0, 1.2693673751e-01), (1.0, 0.25, 2.9242721049e-06)])
def test_gaussian_golden_values(eps, mu, golden):
    # 11 significant digits printed: half a unit in the last place is <= 4e-11 relative
    assert gaussian_delta(eps, mu) == pytest.approx(golden, rel=5e-11)


def test_gaussian_calibration_golden():
    # c*(1, 1e-5) = 0.26805112 (8 digits printed)
    assert gaussian_mu(1.0, 1e-5) == pytest.approx(0.26805112, abs=5e-9)
    assert gaussian_sigma(1.0, 1e-5, sensitivity=2.0) == pytest.approx(2.0 / 0.26805112, rel=5e-8)
    # the classic calibration at (1, 1e-5) has exact delta 4.1e-8 (243x smaller) and the
    # analytic sigma is 23% smaller than the classic one
    classic = classic_gaussian_sigma(1.0, 1e-5)
    assert classic == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=1e-15)
    exact = gaussian_delta(1.0, 1.0 / classic)
    assert exact == pytest.approx(4.1e-8, abs=0.05e-8)
    assert 1e-5 / exact == pytest.approx(243, abs=1)
    assert 1 - gaussian_sigma(1.0, 1e-5) / classic == pytest.approx(0.23, abs=0.005)


@pytest.mark.parametrize("eps, delta", [(0.0, 0.3), (1.0, 1e-5), (0.5, 3.055e-6), (5.0, 1e-100), (20.0, 1e-300)])
def test_gaussian_mu_round_trip(eps, delta):
    mu = gaussian_mu(eps, delta)
    assert gaussian_delta_mp(eps, mu) == pytest.approx(delta, rel=1e-9)


@pytest.mark.parametrize(
    "call",
    [
        lambda: gaussian_delta(1.0, -0.5),
        lambda: gaussian_delta(float("nan"), 1.0),
        lambda: gaussian_delta(1.0, float("nan")),
        lambda: gaussian_log_delta(np.array([1.0, np.inf]), 1.0),
        lambda: gaussian_mu(1.0, 0.0),
        lambda: gaussian_mu(1.0, 1.0),
        lambda: gaussian_mu(1.0, 1.5),
        lambda: gaussian_mu(-1.0, 1e-5),
        lambda: gaussian_sigma(1.0, 1e-5, sensitivity=0.0),
        lambda: classic_gaussian_sigma(1.0, -1e-5),
        lambda: classic_gaussian_sigma(0.0, 1e-5),
    ],
)
def test_gaussian_invalid_inputs(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.slow
def test_gaussian_dense_sweep_matches_mpmath():
    # the full-resolution version of test_gaussian_delta_matches_mpmath: more sigmas, eps step 0.05
    eps = np.linspace(0.0, 30.0, 601)
    for sigma in (0.2, 0.5, 1.0, 2.0, 4.8448, 10.0, 30.0, 100.0):
        mu = 1.0 / sigma
        for e, ld in zip(eps, gaussian_log_delta(eps, mu)):
            assert relative_error(ld, gaussian_delta_mp(e, mu)) <= RTOL, (sigma, e)


# -- the closed-form evaluation: every branch at 1e-12, and the inversion in eps ----------------------

@pytest.mark.parametrize("mu", [1e-8, 1e-4, 0.01, 0.1, 0.999, 1.0, 1.001, 2.0, 20.0])
def test_gaussian_branches_within_1e_12(mu):
    # a = eps/mu - mu/2 crosses the series threshold 10 and mu the quadrature threshold 1; small mu
    # with large eps is the cancelling case of the two-term formula
    eps = np.concatenate([[0.0, 1e-9, -1e-9, -0.3], mu * np.array([9.0, 9.99, 10.0, 10.01, 10.5 + mu / 2]), [3.0, 12.0]])
    for e, ld in zip(eps, gaussian_log_delta(eps, mu)):
        ref = gaussian_delta_mp(e, mu, dps=150)
        assert relative_error(ld, ref) <= 1e-12, (mu, e, ld)


@pytest.mark.parametrize("delta", [0.3, 1e-5, 1e-12, 1e-100, 1e-300])
@pytest.mark.parametrize("mu", [0.01, 0.3, 2.0, 10.0])
def test_gaussian_epsilon_round_trip(delta, mu):
    eps = gaussian_epsilon(delta, mu)
    if gaussian_delta(0.0, mu) <= delta:
        assert eps == 0.0
    else:
        assert gaussian_delta_mp(eps, mu) == pytest.approx(delta, rel=1e-12)
    both = gaussian_epsilon(np.array([delta, delta]), np.array([mu, 2 * mu]))
    assert both.shape == (2,) and both[0] == eps and both[1] >= eps


def test_gaussian_epsilon_edges():
    assert gaussian_epsilon(1e-5, 0.0) == 0.0                    # identical outputs
    for bad in (0.0, 1.0, float("nan")):
        with pytest.raises(ValueError):
            gaussian_epsilon(bad, 1.0)
    with pytest.raises(ValueError):
        gaussian_epsilon(1e-5, -1.0)

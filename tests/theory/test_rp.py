"""Gaussian random projection (RP / RLC) against mpmath incomplete-gamma references (issue 2, items 1, 3, 5)."""

import math

import numpy as np
import pytest

from ndis.experiments.datasets import flights
from ndis.theory.rp import rp_delta, rp_leverage_threshold, rp_log_delta, rp_sigma
from tests.theory.references import (
    relative_error,
    relative_error_delta,
    rlc_erf_delta_mp,
    rp_delta_mp,
)

RTOL = 1e-9     # acceptance: relative error of delta (>= 1e-300) or of ln delta (below)
LEVERAGES = (0.01, 0.3, 0.9)
COPIES = (1, 10, 300)
EPS = np.linspace(-1.0, 10.0, 45)


def reverse_supremum(leverage, r):
    """The reverse privacy loss is bounded: delta_rev = 0 exactly for eps >= -(r/2) ln(1 - l)."""
    return -0.5 * r * math.log1p(-leverage)


@pytest.mark.parametrize("direction", ["forward", "reverse"])
@pytest.mark.parametrize("r", COPIES)
@pytest.mark.parametrize("leverage", LEVERAGES)
def test_rp_matches_incomplete_gamma(leverage, r, direction):
    delta = rp_delta(EPS, leverage, r, direction)
    log_delta = rp_log_delta(EPS, leverage, r, direction)
    for e, d, ld in zip(EPS, delta, log_delta):
        ref = rp_delta_mp(e, leverage, r, direction)
        err = relative_error_delta(d, ref) if ref >= 1e-300 or ref == 0 else relative_error(ld, ref)
        assert err <= RTOL, (leverage, r, direction, e, d, ld, ref)
        assert 0.0 <= d <= 1.0


@pytest.mark.parametrize("leverage", [1e-4, 0.01, 0.3, 0.9, 0.999])
def test_rlc_matches_erf_form(leverage):
    # r = 1 against Lu et al. (2023, OLS-RP), Lemma 10 (erf), an oracle that does not use the incomplete gamma
    eps = np.linspace(0.0, 6.0, 13)
    for direction in ("forward", "reverse"):
        for e, ld in zip(eps, rp_log_delta(eps, leverage, 1, direction)):
            assert relative_error(ld, rlc_erf_delta_mp(e, leverage, direction)) <= RTOL


@pytest.mark.parametrize("leverage, r, eps", [(0.01, 1, 10.0), (0.01, 10, 10.0), (0.01, 300, 12.0), (0.3, 1, 400.0), (1e-3, 1, 3.0), (1e-3, 300, 30.0)])
def test_rp_log_delta_deep_forward_tail(leverage, r, eps):
    ref = rp_delta_mp(eps, leverage, r, "forward", dps=120)
    assert ref < 1e-300
    assert rp_delta(eps, leverage, r, "forward") == 0.0
    assert relative_error(rp_log_delta(eps, leverage, r, "forward"), ref) <= RTOL


@pytest.mark.parametrize("leverage, r", [(0.01, 300), (0.3, 10), (0.9, 1), (0.9, 300)])
def test_rp_reverse_near_and_beyond_its_supremum(leverage, r):
    top = reverse_supremum(leverage, r)
    # just below the supremum delta is tiny but positive and still accurate (1e-4 relative distance
    # keeps the conditioning |d ln delta / d eps| * ulp(eps) below 1e-11 relative)
    for gap in (1e-1, 1e-2, 1e-4):
        e = top * (1 - gap)
        ref = rp_delta_mp(e, leverage, r, "reverse", dps=120)
        assert ref > 0
        assert relative_error(rp_log_delta(e, leverage, r, "reverse"), ref) <= RTOL
    # at and beyond it the answer is exactly 0 (not a tiny rounding residue)
    beyond = np.array([top, top * (1 + 1e-12), top + 0.1, top * 2, top + 50])
    assert np.all(rp_delta(beyond, leverage, r, "reverse") == 0.0)
    assert np.all(rp_log_delta(beyond, leverage, r, "reverse") == -np.inf)


def test_reference_rp_self_check():
    # the mpmath reference subtraction is exact: 100 vs 150 digits at the worst-cancelling points
    for leverage, r, e, direction in [(0.01, 300, 10.0, "forward"), (0.01, 1, 10.0, "forward"),
                                      (0.01, 300, 1.4, "reverse"), (0.9, 1, 1.1, "reverse")]:
        a = rp_delta_mp(e, leverage, r, direction, dps=100)
        b = rp_delta_mp(e, leverage, r, direction, dps=150)
        assert abs(a / b - 1) < 1e-40


def test_rp_properties_on_a_grid():
    eps = np.linspace(0.0, 5.0, 21)
    levs = np.linspace(0.02, 0.98, 25)
    for r in (1, 7, 100):
        forward = np.array([rp_delta(eps, l, r, "forward") for l in levs])
        reverse = np.array([rp_delta(eps, l, r, "reverse") for l in levs])
        # forward >= reverse (rounding-level slack), equal at eps = 0 (both are TV)
        assert np.all(reverse <= forward * (1 + 1e-12) + 1e-300)
        assert np.allclose(forward[:, 0], reverse[:, 0], rtol=1e-11, atol=0)
        # "max" is the larger of the two
        assert np.allclose(np.array([rp_delta(eps, l, r) for l in levs]), np.maximum(forward, reverse), rtol=1e-15, atol=0)
        # forward increasing in l (Lu et al. 2023, NDIS, Proposition 3), every curve non-increasing in eps, values in [0, 1]
        # (strictly where F < 1 - 1e-12; where it has saturated at 1, up to rounding)
        steps = np.diff(forward, axis=0)
        assert np.all(steps[forward[1:] < 1 - 1e-12] > 0) and np.all(steps >= -1e-14)
        # (saturated values 1 - tiny may wiggle by a few ulps: relative slack 1e-14)
        for curve in (forward, reverse):
            assert np.all(np.diff(curve, axis=1) <= 1e-14 * curve[:, 1:])
        assert np.all((forward >= 0) & (forward <= 1))


# -- golden values and the published M_RP calibration ------------------------------------------------

@pytest.mark.parametrize(
    "eps, leverage, r, direction, golden",
    [
        (0.0, 0.3, 1, "forward", 8.6076941258e-02),
        (0.0, 0.3, 1, "reverse", 8.6076941258e-02),
        (0.5, 0.3, 1, "forward", 2.0045003581e-02),
        (0.5, 0.3, 1, "reverse", 0.0),
        (1.0, 0.1, 10, "forward", 2.8160113116e-04),
        (0.1, 0.1, 10, "forward", 5.8785549833e-02),
        (0.1, 0.1, 10, "reverse", 4.7421869595e-02),
        (2.0, 0.05, 50, "forward", 1.9555073454e-09),
    ],
)
def test_rp_golden_values(eps, leverage, r, direction, golden):
    # 11 significant digits printed: half a unit in the last place <= 6e-11 relative
    value = rp_delta(eps, leverage, r, direction)
    if golden == 0.0:
        assert value == 0.0
    else:
        assert value == pytest.approx(golden, rel=6e-11)


@pytest.mark.parametrize(
    "eps, delta, r, golden",
    [
        (1.0, 1e-5, 1, 0.12136603),
        (1.0, 1e-5, 10, 0.07236284),
        (1.0, 1 / 2809, 300, 0.026136965),
        (1.0, 1 / 327346, 1200, 0.0096510068),
        (1.0, 1 / 515345, 3000, 0.0060829282),
        (1.0, 1 / 515345, 20000, 0.0024109231),
    ],
)
def test_leverage_threshold_golden(eps, delta, r, golden):
    lstar = rp_leverage_threshold(eps, delta, r)
    assert lstar == pytest.approx(golden, rel=6e-8)             # 8 significant digits printed
    assert rp_delta(eps, lstar, r, "forward") == pytest.approx(delta, rel=1e-9)


def test_rp_sigma_flights_published_constant():
    # Lu et al. (2023, NDIS), M_RP (Fig. 3) on Flight: r = 1200, eps = 1, delta = 1/n, C = max row norm = 0.0732081
    D = flights()
    n = D.shape[0]
    assert n == 327346
    C = float(np.max(np.linalg.norm(D, axis=1)))
    assert C == pytest.approx(0.0732081, abs=5e-8)
    assert round(rp_sigma(1.0, 1.0 / n, 1200, C), 4) == 0.7452
    assert round(rp_sigma(1.0, 1.0 / n, 1200, C, tight=True), 4) == 0.7416      # the tighter valid choice


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: rp_delta(1.0, 1.0, 10), "leverage"),
        (lambda: rp_delta(1.0, 1.5, 10), "leverage"),
        (lambda: rp_delta(1.0, -0.1, 10), "leverage"),
        (lambda: rp_delta(1.0, 0.3, 0), "r must"),
        (lambda: rp_delta(1.0, 0.3, 2.5), "r must"),
        (lambda: rp_delta(1.0, 0.3, 10, "sideways"), "direction"),
        (lambda: rp_delta(float("nan"), 0.3, 10), "NaN"),
        (lambda: rp_delta(1.0, float("nan"), 10), "NaN"),
        (lambda: rp_leverage_threshold(1.0, 0.0, 10), "delta"),
        (lambda: rp_leverage_threshold(1.0, 1.0, 10), "delta"),
        (lambda: rp_leverage_threshold(-1.0, 1e-5, 10), "eps"),
        (lambda: rp_sigma(1.0, 1e-5, 10, C=0.0), "C"),
    ],
)
def test_rp_invalid_inputs(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.slow
def test_rp_dense_sweep_matches_incomplete_gamma():
    # the full-resolution version of test_rp_matches_incomplete_gamma
    eps = np.linspace(-1.0, 10.0, 111)
    for leverage in (1e-3, 0.01, 0.1, 0.3, 0.5, 0.9, 0.99):
        for r in (1, 2, 10, 50, 300, 1200):
            for direction in ("forward", "reverse"):
                top = reverse_supremum(leverage, r)
                grid = eps if direction == "forward" else eps[np.abs(eps - top) > 1e-4 * top]
                for e, ld in zip(grid, rp_log_delta(grid, leverage, r, direction)):
                    ref = rp_delta_mp(e, leverage, r, direction)
                    assert relative_error(ld, ref) <= RTOL, (leverage, r, direction, e, ld, ref)

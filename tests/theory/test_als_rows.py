"""`als_log_delta` at every row of a dataset: typical rows of tiny leverage and residual share (the
loss is then nearly Gaussian with tiny weights, and the saddle sits within a fraction of a unit of
the branch point z_max ~ 1e5..1e9) against the independent mpmath reference `als_delta_mp`; no
non-finite value and no fallback warning over the whole parameter range; the reverse direction's
-inf is the true zero of a bounded loss."""

import math
import time
import warnings

import mpmath as mp
import numpy as np
import pytest

from ndis.experiments.datasets import flights
from ndis.theory.als import als_log_delta
from tests.theory.references import als_delta_mp, relative_error, relative_error_mp

RTOL = 1e-9

# flights rows (r = 1200, p = 2) that gave NaN, fallback warnings or took ~1 minute before the gap
# to z_max was carried separately: 167314 and 278440 (typical rows), 242039 (l ~ e: nearly normal
# second term with a huge drift), and a synthetic row of very small residual share
HARD_ROWS = [
    (3.26248387899673e-06, 4.74198488482169e-06, 1200, 2),
    (3.3548522897852693e-06, 6.801662562384344e-06, 1200, 2),
    (3.2246329e-06, 3.22429425e-06, 1200, 2),
    (3.0698240023942816e-05, 9.48798353959263e-10, 15350, 3),
]


def reverse_supremum(l, e, r, p):
    """ess sup of the reverse loss when Dl = e - l (1 - l) > 0 (both weights negative):
    offset + linear / (4 |weight|) = r l e / (2 L1^2) - K0 + r l e Q1 / (2 L1^2 Dl) (NDIS, Theorem 4)."""
    with mp.workdps(40):
        l, e, r, p = mp.mpf(float(l)), mp.mpf(float(e)), mp.mpf(float(r)), mp.mpf(float(p))
        l1, q1 = 1 - l, 1 - l - e
        dl = l1**2 - q1
        k0 = p / 2 * mp.log(q1 / l1) - mp.log(l1) / 2
        return float(r * l * e / (2 * l1**2) - k0 + r * l * e * q1 / (2 * l1**2 * dl))


@pytest.mark.parametrize("l, e, r, p", HARD_ROWS)
@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_hard_rows_match_the_mpmath_reference(l, e, r, p, direction):
    eps = [0.003, 1.9] if direction == "forward" else [0.0, 0.003]
    values = als_log_delta(np.array(eps), l, e, r, p, direction)
    for x, value in zip(eps, values):
        ref = als_delta_mp(x, l, e, r, p, direction)
        assert relative_error(value, ref) <= RTOL, (x, value, ref)


@pytest.mark.parametrize("l, e, r, p", HARD_ROWS[::2])
@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_reference_als_self_check(l, e, r, p, direction):
    # the reference at its defaults (30 digits, rtol 1e-12) against 45 digits and rtol 1e-16: its own
    # error is far below the RTOL it is used to test
    for x in (0.0, 0.003, 1.0):
        default, finer = als_delta_mp(x, l, e, r, p, direction), als_delta_mp(x, l, e, r, p, direction, dps=45, rtol=1e-16)
        assert relative_error_mp(default, finer) <= 1e-12, (x, default, finer)


@pytest.mark.parametrize("l, e, r, p", HARD_ROWS[:2])
def test_reverse_minus_infinity_is_the_zero_of_a_bounded_loss(l, e, r, p):
    # e > l (1 - l): both reverse weights are negative, the loss is bounded above and delta(eps) = 0
    # exactly for eps >= its supremum (about 0.006 for these rows): -inf is the true value
    sup = reverse_supremum(l, e, r, p)
    assert 0 < sup < 0.1
    below = np.array([0.5, 0.9, 0.99]) * sup
    above = np.array([1.01 * sup, 0.1, 0.5, 4.0])
    assert np.all(np.isfinite(als_log_delta(below, l, e, r, p, "reverse")))
    assert np.all(als_log_delta(above, l, e, r, p, "reverse") == -np.inf)
    assert als_delta_mp(1.01 * sup, l, e, r, p, "reverse") == 0
    assert als_delta_mp(0.99 * sup, l, e, r, p, "reverse") > 0


def test_whole_parameter_range_is_finite_fast_and_quiet():
    # leverage 1e-7..1e-2, residual share 1e-11..1e-3, r 50..1e5, p 2..100, eps 0..4, both directions
    rng = np.random.default_rng(11)
    n = 150
    l, e = 10 ** rng.uniform(-7, -2, n), 10 ** rng.uniform(-11, -3, n)
    p = rng.integers(2, 101, n)
    r = np.maximum(np.round(10 ** rng.uniform(math.log10(50), 5, n)), p + 1)
    eps = np.linspace(0.0, 4.0, 41)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for direction in ("forward", "reverse"):
            started = time.perf_counter()
            values = als_log_delta(eps[None, :], l[:, None], e[:, None], r[:, None], p[:, None], direction)
            assert (time.perf_counter() - started) / values.size < 0.01      # seconds per point (measured ~1e-4)
            assert not np.any(np.isnan(values) | (values == np.inf))
            zero = values == -np.inf
            if direction == "forward":
                assert not np.any(zero)
            else:
                # -inf only where the loss is bounded (e > l (1 - l)) and eps is beyond its supremum
                bounded = e > l * (1 - l)
                assert not np.any(zero[~bounded])
                for i in np.flatnonzero(zero.any(axis=1)):
                    assert eps[zero[i]].min() >= reverse_supremum(l[i], e[i], r[i], p[i]) * (1 - 1e-9)


@pytest.mark.slow
def test_random_flights_rows_match_the_mpmath_reference():
    # 50 random rows of flights x 41 eps x both directions at r = 1200 (p = 2): 4100 points, each
    # within RTOL of the reference in the measure of `relative_error` (the reference's own error in
    # that measure is below 1e-13, see `als_delta_mp`); about 0.1 s of CPU per point
    from ndis.theory.worst_rows import leverage_residual

    lev, res = leverage_residual(flights())
    rows = np.random.default_rng(2026).choice(lev.size, 50, replace=False)
    eps = np.linspace(0.0, 4.0, 41)
    errors, started = [], time.perf_counter()
    for i in rows:
        for direction in ("forward", "reverse"):
            values = als_log_delta(eps, lev[i], res[i], 1200, 2, direction)
            for x, value in zip(eps, values):
                errors.append((relative_error(value, als_delta_mp(x, lev[i], res[i], 1200, 2, direction)), i, direction, x, value))
    worst = max(errors)
    print(f"\n{len(rows)} flights rows x {eps.size} eps x 2 directions = {len(errors)} points: largest relative "
          f"error {worst[0]:.2e} (row {worst[1]}, {worst[2]}, eps {worst[3]:g}); {time.perf_counter() - started:.0f} s")
    assert len(errors) == 4100
    assert worst[0] <= RTOL, worst

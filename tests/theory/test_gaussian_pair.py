"""GaussianPair (NDIS): RP pairs from real data against mpmath, 1-D pairs against an exact two-root
reference, duality and structural properties, supports, bounded losses, large dimension, epsilon,
Monte Carlo and input validation (issue 2, items 1, 4, 5)."""

import functools
import math

import mpmath as mp
import numpy as np
import pytest

from ndis.experiments.datasets import flights
from ndis.theory.gaussian import gaussian_delta, gaussian_epsilon, gaussian_log_delta
from ndis.theory.gaussian_pair import GaussianPair
from tests.theory.references import (
    gaussian_delta_mp,
    generalized_eigenvalues_mp,
    normal_pair_delta_mp,
    relative_error,
    relative_error_delta,
    rp_delta_mp,
)

RTOL = 1e-9
EPS_RP = np.linspace(-1.0, 10.0, 23)
# (rows of flights, target leverage): the first 1500 rows hold a row of leverage 0.298 and many of
# ~0.01; among the first 300 rows one flight (a 1301-minute delay) has leverage 0.895.
RP_CASES = [(1500, 0.01), (1500, 0.3), (300, 0.9)]


@functools.lru_cache(maxsize=None)
def rp_pair_data(rows, target):
    """M = D^T D and M' = D'^T D' for D = the first `rows` flights rows (unit columns) and D' = D
    minus the row whose leverage is closest to `target`; the reference leverage is computed from
    the float matrices actually passed (taken as exact) in 60-digit arithmetic: l = a / (1 + a) with
    a the generalized eigenvalue of (M - M') against M' (the other two are rounding noise, ~1e-16)."""
    D = flights(rows)
    Q, _ = np.linalg.qr(D)
    leverage = np.sum(Q**2, axis=1)
    i = int(np.argmin(np.abs(leverage - target)))
    kept = np.delete(D, i, axis=0)
    M, Md = D.T @ D, kept.T @ kept
    values = sorted(generalized_eigenvalues_mp(M, Md), key=abs)
    assert abs(values[-2]) < 1e-13 * max(1.0, abs(values[-1]))
    with mp.workdps(60):
        exact = values[-1] / (1 + values[-1])
    assert abs(float(exact) - leverage[i]) < 1e-12
    return M, Md, exact


def check_rp_curve(pair_forward, leverage, r, eps):
    """Both directions of an RP pair against the incomplete-gamma reference."""
    top = float(-0.5 * r * mp.log(1 - leverage))
    worst = 0.0
    for direction, pair in (("forward", pair_forward), ("reverse", pair_forward.reverse())):
        if direction == "reverse":
            # Near the supremum of the bounded reverse loss, ln delta ~ (r/2 - 1) ln(top - eps) and
            # the float input (the Gram matrices) fixes `top` only to ~1e-14 relative; within 1e-3 of
            # it the problem itself is too ill-conditioned for 1e-9 in ln delta, so such eps are skipped.
            eps = eps[np.abs(eps - top) > 1e-3]
        for e, ld in zip(eps, pair.log_delta(eps)):
            ref = rp_delta_mp(e, leverage, r, direction)
            err = relative_error(ld, ref)
            assert err <= RTOL, (direction, r, e, ld, ref)
            worst = max(worst, err)
    return worst


@pytest.mark.parametrize("r", [1, 10, 300])
@pytest.mark.parametrize("rows, target", RP_CASES)
def test_rp_pairs_from_flights_with_copies(rows, target, r):
    M, Md, leverage = rp_pair_data(rows, target)
    zero = np.zeros(M.shape[0])
    check_rp_curve(GaussianPair(zero, M, zero, Md, copies=r), leverage, r, EPS_RP)


@pytest.mark.parametrize("r", [1, 10])
@pytest.mark.parametrize("rows, target", RP_CASES)
def test_rp_pairs_from_flights_dense_kronecker(rows, target, r):
    # vec(D^T G) ~ N(0, I_r (x) D^T D): the same law written as one (3 r)-dimensional Gaussian
    M, Md, leverage = rp_pair_data(rows, target)
    zero = np.zeros(3 * r)
    pair = GaussianPair(zero, np.kron(np.eye(r), M), zero, np.kron(np.eye(r), Md))
    check_rp_curve(pair, leverage, r, EPS_RP)


def test_dimension_300_kronecker_pair():
    # a 300-dimensional pair with a known answer: RP with r = 100 copies of the 3 x 3 flights Gram matrix
    M, Md, leverage = rp_pair_data(1500, 0.3)
    zero = np.zeros(300)
    pair = GaussianPair(zero, np.kron(np.eye(100), M), zero, np.kron(np.eye(100), Md))
    check_rp_curve(pair, leverage, 100, np.linspace(0.0, 10.0, 11))


def test_dimension_300_random_pair_rotation_invariance():
    # a generic 300-dimensional pair (different means and covariances) and the same pair in a random
    # orthonormal basis: delta is invariant; both computations go through 300 x 300 eigenproblems,
    # whose rounding (~300 ulp of the eigenvalues) bounds the agreement, hence 1e-9.
    rng = np.random.default_rng(300)
    d = 300
    mean1, mean2 = 0.05 * rng.standard_normal(d), 0.05 * rng.standard_normal(d)
    cov1 = np.diag(np.exp(rng.uniform(-0.1, 0.1, d)))
    cov2 = np.diag(np.exp(rng.uniform(-0.1, 0.1, d)))
    R, _ = np.linalg.qr(rng.standard_normal((d, d)))
    eps = np.linspace(0.0, 4.0, 5)
    plain = GaussianPair(mean1, cov1, mean2, cov2).delta(eps)
    rotated = GaussianPair(R @ mean1, R @ cov1 @ R.T, R @ mean2, R @ cov2 @ R.T).delta(eps)
    assert np.all(np.diff(plain) <= 0) and np.all((plain >= 0) & (plain <= 1))
    assert plain[0] > 0.1 and plain[-1] > 0
    assert np.allclose(rotated, plain, rtol=1e-9, atol=0)


# -- 1-D pairs against the exact two-root reference ---------------------------------------------------

ONE_D = [
    (0.0, 1.0, 1.0, 1.0),      # equal variances (analytic Gaussian)
    (0.0, 1.0, 0.0, 2.0),      # equal means, P narrower: loss bounded above
    (0.0, 2.0, 0.0, 1.0),      # equal means, P wider
    (0.3, 1.0, -0.4, 1.7),     # both differ, P narrower (bounded above)
    (1.5, 1.3, 0.0, 0.6),      # both differ, P wider
    (0.0, 1.0, 0.01, 1.001),   # nearly equal laws
    (0.0, 1.0, 5.0, 0.2),      # far apart
]


@pytest.mark.parametrize("m1, s1, m2, s2", ONE_D)
def test_one_dimensional_pairs_match_two_root_reference(m1, s1, m2, s2):
    eps = np.concatenate([np.linspace(-4.0, 12.0, 33), [20.0, 40.0]])
    for direction, pair, args in (("P||Q", GaussianPair([m1], [[s1**2]], [m2], [[s2**2]]), (m1, s1, m2, s2)),
                                  ("Q||P", GaussianPair([m2], [[s2**2]], [m1], [[s1**2]]), (m2, s2, m1, s1))):
        for e, ld in zip(eps, pair.log_delta(eps)):
            ref = normal_pair_delta_mp(e, *args)
            assert relative_error(ld, ref) <= RTOL, (direction, e, ld, ref)


# -- random pairs: duality and structure ---------------------------------------------------------------

def random_pair(d, seed, spread=1.0, shift=0.5):
    rng = np.random.default_rng(seed)

    def cov():
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        return (Q * np.exp(rng.uniform(-spread, spread, d))) @ Q.T

    return GaussianPair(shift * rng.standard_normal(d), cov(), shift * rng.standard_normal(d), cov())


DIMS_SEEDS = [(d, s) for d in (1, 2, 3, 5, 8, 13, 20, 30) for s in range(3)]


@pytest.mark.parametrize("d, seed", DIMS_SEEDS)
def test_duality_and_structure_on_random_pairs(d, seed):
    pair = random_pair(d, 1000 * d + seed)
    back = pair.reverse()
    eps = np.linspace(-3.0, 3.0, 25)
    forward, backward = pair.delta(eps), back.delta(eps)
    flipped = pair.delta(-eps)
    # delta_QP(eps) = 1 - e^eps + e^eps delta_PQ(-eps): evaluating the right side subtracts terms of
    # size up to e^eps, so the check is absolute, scaled by max(1, e^eps), at the 1e-9 relative
    # accuracy required of each delta (measured worst: 2.3e-12)
    rhs = 1.0 - np.exp(eps) + np.exp(eps) * flipped
    assert np.all(np.abs(backward - rhs) <= 1e-9 * np.maximum(1.0, np.exp(eps))), np.abs(backward - rhs)
    # delta(0) is the total variation distance in both directions
    assert pair.delta(0.0) == pytest.approx(back.delta(0.0), rel=1e-11)
    for curve in (forward, backward):
        assert np.all((curve >= 0) & (curve <= 1))
        assert np.all(np.diff(curve) <= 1e-14 * curve[1:])      # non-increasing (rounding slack)
    # negative eps: delta(eps) >= 1 - e^eps (take S = everything)
    negative = eps < 0
    assert np.all(forward[negative] >= (1 - np.exp(eps[negative])) * (1 - 1e-12))


@pytest.mark.parametrize("d, seed", [(1, 0), (3, 1), (8, 2), (13, 3)])
def test_tv_distance_reference_and_bhattacharyya_bounds(d, seed):
    # delta(0) = TV: exact 1-D reference for d = 1; in any dimension it must satisfy the bounds
    # 1 - BC <= TV <= sqrt(1 - BC^2) with the closed-form Bhattacharyya coefficient BC of two Gaussians
    pair = random_pair(d, seed)
    tv = pair.delta(0.0)
    if d == 1:
        m1, c1, m2, c2 = pair.law1.mean[0], pair.law1.cov[0, 0], pair.law2.mean[0], pair.law2.cov[0, 0]
        ref = normal_pair_delta_mp(0.0, m1, math.sqrt(c1), m2, math.sqrt(c2))
        assert relative_error_delta(tv, ref) <= RTOL
    S = 0.5 * (pair.law1.cov + pair.law2.cov)
    dm = pair.law1.mean - pair.law2.mean
    log_bc = -0.125 * dm @ np.linalg.solve(S, dm) - 0.5 * (
        np.linalg.slogdet(S)[1] - 0.5 * np.linalg.slogdet(pair.law1.cov)[1] - 0.5 * np.linalg.slogdet(pair.law2.cov)[1])
    bc = math.exp(log_bc)
    assert 1 - bc - 1e-12 <= tv <= math.sqrt(1 - bc**2) + 1e-12


def test_equal_covariances_reduce_to_the_analytic_gaussian():
    rng = np.random.default_rng(11)
    d = 6
    A = rng.standard_normal((d, d))
    cov = A @ A.T + 0.5 * np.eye(d)
    mean1, mean2 = rng.standard_normal(d), rng.standard_normal(d)
    with mp.workdps(50):
        diff = mp.matrix((mean1 - mean2).tolist())
        mu = float(mp.sqrt((diff.T * mp.lu_solve(mp.matrix(cov.tolist()), diff))[0]))
    eps = np.linspace(-2.0, 12.0, 29)
    pair = GaussianPair(mean1, cov, mean2, cov)
    for e, ld in zip(eps, pair.log_delta(eps)):
        assert relative_error(ld, gaussian_delta_mp(e, mu)) <= RTOL
    # copies = k multiplies mu by sqrt(k)
    assert GaussianPair(mean1, cov, mean2, cov, copies=4).delta(1.0) == pytest.approx(gaussian_delta(1.0, 2 * mu), rel=1e-9)
    # the same covariance written differently (not bit-identical): the general eigen path must
    # reproduce the Gaussian answer (the covariance differs by rounding only, ~1e-16 relative)
    R, _ = np.linalg.qr(rng.standard_normal((d, d)))
    other = R.T @ ((R @ cov) @ R.T) @ R
    assert not np.array_equal(other, cov)
    general = GaussianPair(mean1, cov, mean2, 0.5 * (other + other.T))
    assert np.allclose(general.delta(eps[eps < 6]), gaussian_delta(eps[eps < 6], mu), rtol=1e-9, atol=0)


def test_singular_covariances_with_equal_supports_give_the_projected_answer():
    rng = np.random.default_rng(5)
    U, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    basis = U[:, :2]                                  # a 2-dimensional subspace of R^4
    center = rng.standard_normal(4)                   # common offset outside the subspace
    m1, m2 = np.array([0.3, -0.2]), np.array([-0.1, 0.4])
    c1, c2 = np.array([[1.0, 0.3], [0.3, 0.8]]), np.array([[1.4, -0.2], [-0.2, 0.6]])
    embedded = GaussianPair(center + basis @ m1, basis @ c1 @ basis.T, center + basis @ m2, basis @ c2 @ basis.T)
    projected = GaussianPair(m1, c1, m2, c2)
    eps = np.linspace(-1.0, 5.0, 13)
    assert embedded.mutually_continuous
    assert np.allclose(embedded.delta(eps), projected.delta(eps), rtol=1e-9, atol=0)
    assert np.allclose(embedded.reverse().delta(eps), projected.reverse().delta(eps), rtol=1e-9, atol=0)
    # a 1-D support inside R^3 against the exact 1-D reference
    line = np.array([1.0, 2.0, -2.0]) / 3.0
    pair = GaussianPair(0.5 * line, 0.64 * np.outer(line, line), -0.25 * line, 1.21 * np.outer(line, line))
    for e, ld in zip(eps, pair.log_delta(eps)):
        assert relative_error(ld, normal_pair_delta_mp(e, 0.5, 0.8, -0.25, 1.1)) <= RTOL


@pytest.mark.parametrize(
    "mean1, cov1, mean2, cov2",
    [
        ([0, 0, 0], np.diag([1.0, 1.0, 0.0]), [0, 0, 0], np.diag([1.0, 0.0, 1.0])),   # different ranges
        ([0, 0, 0], np.diag([1.0, 1.0, 0.0]), [0, 0, 0], np.eye(3)),                   # different ranks
        ([0, 0, 0.1], np.diag([1.0, 1.0, 0.0]), [0, 0, 0], np.diag([2.0, 1.0, 0.0])),  # shift off the support
    ],
)
def test_different_supports_give_delta_one(mean1, cov1, mean2, cov2):
    pair = GaussianPair(mean1, cov1, mean2, cov2)
    eps = np.array([-1.0, 0.0, 1.0, 50.0])
    assert not pair.mutually_continuous
    assert np.all(pair.delta(eps) == 1.0) and np.all(pair.reverse().delta(eps) == 1.0)
    assert np.all(pair.log_delta(eps) == 0.0)
    assert pair.epsilon(1e-3) == math.inf
    estimate, _ = pair.delta_mc(1.0, 100, seed=0)
    assert estimate == 1.0


def test_bounded_loss_is_exactly_zero_beyond_its_supremum():
    # D' || D for RP: L = -(l/2) chi2_r - (r/2) ln(1 - l) <= -(r/2) ln(1 - l)
    M, Md, leverage = rp_pair_data(1500, 0.3)
    r = 10
    top = float(-0.5 * r * mp.log(1 - leverage))
    zero = np.zeros(3)
    pair = GaussianPair(zero, Md, zero, M, copies=r)
    assert pair.delta(top * (1 - 1e-2)) > 0
    assert np.all(pair.delta(np.array([top * (1 + 1e-9), top + 1.0, 100.0])) == 0.0)
    assert np.all(pair.log_delta(np.array([top * (1 + 1e-9), 100.0])) == -np.inf)
    # a bounded loss with a mean shift (P narrower in every direction): the 1-D reference is also 0
    narrow = GaussianPair([0.3], [[1.0]], [-0.4], [[1.7**2]])
    ks = np.array([2.0, 5.0])
    for e, ld in zip(ks, narrow.log_delta(ks)):
        ref = normal_pair_delta_mp(e, 0.3, 1.0, -0.4, 1.7)
        assert ref == 0 and ld == -np.inf


@pytest.mark.parametrize("d, seed", [(1, 3), (5, 4), (13, 5)])
def test_epsilon_round_trip(d, seed):
    pair = random_pair(d, seed)
    for eps in (0.05, 0.4, 1.0, 2.5):
        target = pair.delta(eps)
        if not 1e-300 < target < 1:
            continue
        # the root is found to xtol 1e-13; the slope of ln delta is at least ~0.1 here, so 1e-9 is safe
        assert pair.epsilon(target) == pytest.approx(eps, abs=1e-9)
    assert pair.epsilon(pair.delta(0.0) * 1.01) == 0.0               # already below at eps = 0
    assert pair.epsilon(np.array([0.5, 0.1])).shape == (2,)


@pytest.mark.parametrize("d, seed", [(2, 7), (13, 8), (30, 9)])
def test_delta_mc_agrees_within_four_standard_errors(d, seed):
    pair = random_pair(d, seed, spread=0.5)
    eps = np.array([-0.5, 0.0, 0.3, 1.0])
    n = 200_000
    estimate, radius = pair.delta_mc(eps, n, seed=seed)
    exact = pair.delta(eps)
    # the summand (1 - e^{eps - L})_+ lies in [0, 1], so its variance is <= delta (1 - delta):
    # 4 standard errors, a bound that cannot be loose by more than that inequality
    assert np.all(np.abs(estimate - exact) <= 4 * np.sqrt(exact * (1 - exact) / n) + 1e-12), (estimate, exact)
    assert radius == pytest.approx(math.sqrt(math.log(2 / 0.01) / (2 * n)), rel=1e-12)
    assert np.all(np.abs(estimate - exact) <= radius)


@pytest.mark.parametrize(
    "args, message",
    [
        (([0, 0], [[1, 0], [0, -1]], [0, 0], np.eye(2)), "positive semidefinite"),
        (([0, 0], np.eye(2), [0, 0], [[1, 0.5], [0.2, 1]]), "symmetric"),
        (([0, 0], np.eye(3), [0, 0], np.eye(2)), "shape"),
        (([0, 0], np.eye(2), [0, 0, 0], np.eye(3)), "dimensions"),
        (([0, np.nan], np.eye(2), [0, 0], np.eye(2)), "NaN"),
        (([0, 0], [[1, 0], [0, np.nan]], [0, 0], np.eye(2)), "NaN"),
        (([0, 0], np.eye(2), [0, np.inf], np.eye(2)), "NaN"),
    ],
)
def test_invalid_pairs(args, message):
    with pytest.raises(ValueError, match=message):
        GaussianPair(*args)


def test_invalid_arguments_of_methods():
    pair = GaussianPair([0.0], [[1.0]], [1.0], [[2.0]])
    for bad in (0.0, 1.0, -0.5, 1.5, float("nan")):
        with pytest.raises(ValueError):
            pair.epsilon(bad)
    with pytest.raises(ValueError, match="NaN"):
        pair.delta(np.array([0.0, np.nan]))
    with pytest.raises(ValueError):
        pair.delta_mc(1.0, 0)
    with pytest.raises(ValueError):
        pair.delta_mc(1.0, 10, confidence=1.0)
    for copies in (0, 1.5, -2):
        with pytest.raises(ValueError, match="copies"):
            GaussianPair([0.0], [[1.0]], [1.0], [[2.0]], copies=copies)


# -- many terms: the shared vertical contours against the per-eps kernel -------------------------------

@pytest.mark.parametrize("d, spread, shift", [(20, 1.0, 0.5), (60, 0.3, 0.2), (150, 0.1, 0.05), (500, 0.1, 0.05)])
def test_many_terms_match_the_per_eps_kernel(d, spread, shift):
    from ndis.theory.quadratic_loss import QuadraticLoss, log_delta

    pair = random_pair(d, 7 * d, spread=spread, shift=shift)
    assert pair.loss.weight.shape[1] >= 16                      # the shared-contour path is taken
    eps = np.linspace(-2.0, 12.0, 57)
    batch = QuadraticLoss(*(np.repeat(getattr(pair.loss, f), eps.size, axis=0)
                            for f in ("weight", "dof", "linear", "offset", "normal_var")))
    reference = log_delta(batch, eps)
    computed = pair.log_delta(eps)
    finite = np.isfinite(reference)
    assert np.array_equal(finite, np.isfinite(computed))
    # 1e-12 relative in delta, or in ln delta where delta < 1e-300
    allowed = 1e-12 * np.where(reference[finite] >= -690.0, 1.0, np.abs(reference[finite]))
    assert np.all(np.abs(computed[finite] - reference[finite]) <= allowed)


def test_equal_covariances_take_the_closed_form():
    pair = GaussianPair(np.zeros(3), np.eye(3), np.array([0.3, 0.4, 0.0]), np.eye(3), copies=4)
    eps = np.linspace(-3.0, 40.0, 44)
    assert np.array_equal(pair.log_delta(eps), gaussian_log_delta(eps, 1.0))
    assert pair.epsilon(1e-7) == gaussian_epsilon(1e-7, 1.0)


def test_reprs_are_short():
    pair = GaussianPair(np.zeros(200), np.eye(200), np.full(200, 0.1), np.eye(200), copies=3)
    assert repr(pair) == "GaussianPair(dim=200, identical_covariances=True, mean_shift_norm=1.414, copies=3)"
    html = pair._repr_html_()
    assert "200" in html and "1.414" in html and len(html) < 600
    other = GaussianPair([0.0], [[1.0]], [1.0], [[2.0]])
    assert repr(other) == "GaussianPair(dim=1, identical_covariances=False, mean_shift_norm=1)"

"""The saddle-point contour kernel on its own: chi-square losses of any weight sign against the
exponential-tilting closed form in mpmath, CGF identities, batching, and paths that must be rejected."""

import math

import numpy as np
import pytest

from ndis.theory.gaussian_pair import GaussianPair, sample_loss
from ndis.theory.quadratic_loss import QuadraticLoss, log_delta
from tests.theory.references import chi2_loss_delta_mp, relative_error

RTOL = 1e-9


@pytest.mark.parametrize(
    "weight, dof, offset",
    [
        (0.5, 1, -1.0), (0.05, 1, 0.0), (2.0, 3, -3.0), (0.01, 40, -0.3), (1e-4, 1, 0.0),
        (-0.3, 1, 1.0), (-0.45, 7, 2.0), (-0.01, 300, 1.5), (-1e-3, 2, 0.01),
    ],
)
def test_single_chi_square_term_matches_tilting_formula(weight, dof, offset):
    # L = weight * chi2_dof + offset; bounded above when weight < 0 (delta = 0 beyond the offset)
    loss = QuadraticLoss.build([[weight]], [[dof]], 0.0, offset=offset)
    eps = np.linspace(-3.0, 15.0, 37)
    if weight < 0:
        eps = eps[eps < offset - 1e-3 * abs(offset)]     # conditioning near the supremum, see test_rp
    values = log_delta(QuadraticLoss(*(np.repeat(getattr(loss, f), eps.size, axis=0)
                                        for f in ("weight", "dof", "linear", "offset", "normal_var"))), eps)
    for e, ld in zip(eps, values):
        ref = chi2_loss_delta_mp(e, weight, dof, offset)
        assert relative_error(ld, ref) <= RTOL, (e, ld, ref)
    if weight < 0:
        beyond = np.array([offset, offset + 1.0])
        assert np.all(log_delta(QuadraticLoss.build([[weight]] * 2, [[dof]] * 2, 0.0, offset=offset), beyond) == -np.inf)


@pytest.mark.parametrize("d, seed", [(1, 0), (4, 1), (13, 2), (30, 3)])
def test_cgf_vanishes_at_zero_and_minus_one(d, seed):
    # For the loss of a pair, E_P[e^{-L}] = E_Q[1] = 1, i.e. K(-1) = 0, and K(0) = 0 always: checks the
    # eigen-reduction (weights, linear parts, offset) of GaussianPair independently of the contour.
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((d, d)), rng.standard_normal((d, d))
    pair = GaussianPair(rng.standard_normal(d), A @ A.T + np.eye(d), rng.standard_normal(d), B @ B.T + np.eye(d))
    k0, _, _, _ = pair.loss.cgf_derivatives(np.array([0.0]))
    km1, _, _, _ = pair.loss.cgf_derivatives(np.array([-1.0]))
    scale = 1.0 + np.abs(pair.loss.offset[0]) + pair.loss.linear.sum()
    assert abs(k0[0]) <= 1e-14 * scale
    assert abs(km1[0]) <= 1e-12 * scale


def test_batch_rows_are_independent_and_order_free():
    rng = np.random.default_rng(4)
    weight = rng.uniform(-0.4, 0.4, (6, 3))
    loss = QuadraticLoss.build(weight, [[1.0, 2.0, 5.0]], rng.uniform(0, 1, (6, 3)), offset=rng.uniform(-1, 1, 6))
    eps = rng.uniform(-1, 3, 6)
    together = log_delta(loss, eps)
    alone = np.array([log_delta(loss.take([i]), eps[[i]])[0] for i in range(6)])
    assert np.allclose(together, alone, rtol=1e-13, atol=0)
    order = rng.permutation(6)
    assert np.allclose(log_delta(loss.take(order), eps[order]), together[order], rtol=1e-13, atol=0)


def test_near_normal_terms_on_the_far_side_do_not_spoil_the_path():
    # Regression for the path-rejection fix: negative weights with large linear parts make the bent
    # parabola climb above the saddle (the 30-dimensional pair below returned delta = 1 for a true
    # 0.985 before). The vertical-line retry must give the duality identity to ~1e-11.
    rng = np.random.default_rng(5)

    def covariance(d):
        Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        return (Q * np.exp(rng.uniform(-1, 1, d))) @ Q.T

    for d in (1, 2, 3, 5, 8, 13, 20, 30):       # the sweep in which the failure was found
        for _ in range(3):
            m1, m2 = 0.5 * rng.standard_normal(d), 0.5 * rng.standard_normal(d)
            c1, c2 = covariance(d), covariance(d)
            if d == 30:
                break                            # its first 30-dimensional pair is the failing one
    pair = GaussianPair(m1, c1, m2, c2)
    eps = np.linspace(-3.0, 3.0, 9)
    back = pair.reverse().delta(eps)
    rhs = 1.0 - np.exp(eps) + np.exp(eps) * pair.delta(-eps)
    assert np.all(np.abs(back - rhs) <= 1e-10 * np.maximum(1.0, np.exp(eps)))
    assert np.all(back < 1.0) and np.all(np.diff(back) <= 0)


def test_trapezoid_does_not_stop_early_on_a_narrow_far_field_bump():
    # Regression for the convergence test: for this pair at eps = -2.25 the trapezoid used to accept
    # 512 nodes (change 3.7e-13 after 3.7e-11) while a bump of width ~0.002 in t near z = -24.5 + 7.9i
    # was unresolved: ln delta off by 1.0e-10 relative. Reference: the inversion integral on the
    # vertical line in 30-digit mpmath (-0.09411299561837277), and the duality identity.
    from tests.theory.test_gaussian_pair import random_pair

    pair = random_pair(5, 5000)
    assert pair.log_delta(-2.25) == pytest.approx(-0.09411299561837277, rel=1e-12)
    rhs = 1.0 - math.exp(2.25) + math.exp(2.25) * pair.delta(-2.25)
    assert abs(pair.reverse().delta(2.25) - rhs) <= 1e-11 * math.exp(2.25)


def test_monte_carlo_of_a_mixed_loss():
    # Normal part + chi-square terms of both signs with linear parts: the contour against the
    # direct average of (1 - e^{eps - L})_+ over 400,000 draws of L, within 4 standard errors
    loss = QuadraticLoss.build([[0.3, -0.2, 0.05]], [[2.0, 3.0, 1.0]], [[0.4, 0.1, 0.0]], offset=0.2, normal_var=0.3)
    eps = np.array([-1.0, 0.0, 0.5, 1.5])
    exact = np.exp(log_delta(QuadraticLoss(*(np.repeat(getattr(loss, f), 4, axis=0)
                                              for f in ("weight", "dof", "linear", "offset", "normal_var"))), eps))
    n = 400_000
    draws = sample_loss(loss, n, np.random.default_rng(1))
    for e, d in zip(eps, exact):
        mc = float(np.mean(-np.expm1(np.minimum(e - draws, 0.0))))
        assert abs(mc - d) <= 4 * math.sqrt(d * (1 - d) / n)

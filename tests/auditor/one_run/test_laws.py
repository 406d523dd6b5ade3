"""The score laws of the coverage table: their exact curves agree with independent computations, and
calibration gives the asked eps."""

import numpy as np
import pytest
from scipy import integrate, stats

from ndis.auditor.one_run import laws


def _integral_delta(p, q, eps, lo, hi):
    """max over directions of the integral of (p - e^eps q)_+, by adaptive quadrature (scipy.integrate.quad)."""
    forward = integrate.quad(lambda x: max(p(x) - np.exp(eps) * q(x), 0.0), lo, hi, limit=400, points=[0.0])[0]
    reverse = integrate.quad(lambda x: max(q(x) - np.exp(eps) * p(x), 0.0), lo, hi, limit=400, points=[0.0])[0]
    return max(forward, reverse)


@pytest.mark.parametrize("eps", [0.5, 2.0, 3.5])
def test_closed_forms_match_quadrature(eps):
    laplace = laws.LaplaceScores(4.0)
    assert laplace.delta(eps) == pytest.approx(
        _integral_delta(stats.laplace(4.0).pdf, stats.laplace().pdf, eps, -60, 64), rel=1e-6)
    gaussian = laws.GaussianScores(1.5)
    assert gaussian.delta(eps) == pytest.approx(
        _integral_delta(stats.norm(1.5).pdf, stats.norm().pdf, eps, -40, 42), rel=1e-6)


def test_the_grid_integral_of_the_t_law_matches_quadrature():
    law = laws.StudentScores(4.0)
    t = stats.t(3)
    for eps in (1.0, 3.0):
        assert law.delta(eps) == pytest.approx(
            _integral_delta(lambda x: t.pdf(x - 4.0), t.pdf, eps, -160, 164), rel=1e-5)


def test_randomized_response_is_its_two_point_curve():
    law = laws.RandomizedResponse(3.0)
    p = np.array([1 - stats.logistic.cdf(3.0), stats.logistic.cdf(3.0)])    # scores 0 and 1 if included
    for eps in (0.0, 1.0, 2.9):
        assert law.delta(eps) == pytest.approx(laws._hockey_stick(p, p[::-1], 1.0, eps), rel=1e-12)


def test_clipped_sums_of_one_step_are_the_clipped_step():
    # T = 1 on a lattice of 1/2: the masses at -1, -1/2, 0, 1/2, 1 of the rounded clipped normal
    law = laws.ClippedSums(0.3, 1, resolution=0.5)
    edges = np.array([-np.inf, -0.75, -0.25, 0.25, 0.75, np.inf])
    np.testing.assert_allclose(law._sum_law(0.3), np.diff(stats.norm.cdf(edges - 0.3)), rtol=1e-12, atol=1e-16)
    draws = law.sample(np.ones(20_000, dtype=bool), np.random.default_rng(0))
    assert set(np.unique(draws)) <= {-1.0, -0.5, 0.0, 0.5, 1.0}
    counts = np.array([np.sum(draws == v) for v in (-1.0, -0.5, 0.0, 0.5, 1.0)]) / draws.size
    np.testing.assert_allclose(counts, law._sum_law(0.3), atol=0.015)      # 4 standard errors at 20,000


@pytest.mark.parametrize("kind,fixed", [("gaussian", {}), ("laplace", {}), ("randomized-response", {}),
                                        ("clipped-sums", {"steps": 20}), ("subsampled-sums", {"steps": 10, "rate": 0.3})])
def test_calibration_gives_the_asked_eps(kind, fixed):
    law = laws.calibrated(kind, 3.0, 1e-5, **fixed)
    assert law.epsilon(1e-5) == pytest.approx(3.0, abs=1e-6)
    scores, included = law.draw(200, np.random.default_rng(1))
    assert scores.shape == included.shape == (200,) and 0 < included.sum() < 200

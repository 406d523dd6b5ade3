"""OpenDP measurements as ndis mechanisms: the samples' law, the claims read from OpenDP, a flagged misuse.

OpenDP cannot be seeded, so the distribution tests use p-value thresholds of 1e-4 (a correct adapter
fails one of them with probability 1e-4 per run).
"""

import numpy as np
import pytest
from scipy import stats

dp = pytest.importorskip("opendp.prelude")

from ndis import theory  # noqa: E402
from ndis.auditor import audit  # noqa: E402
from ndis.mechanisms.libraries import opendp as adapter  # noqa: E402

P_MIN = 1e-4


def _vector_laplace(T=float, scale=1.0):
    atom = dp.atom_domain(T=T, nan=False) if T is float else dp.atom_domain(T=T)
    return dp.m.make_laplace(dp.vector_domain(atom), dp.l1_distance(T=T), scale=scale)


def test_batched_laplace_samples_follow_laplace_of_the_scale_around_the_query():
    mech = adapter.from_measurement(_vector_laplace(scale=2.0), elementwise=True)
    samples = mech.sample([3.0, -1.0], 20_000, None)
    assert samples.shape == (20_000, 2)
    for column, centre in zip(samples.T, (3.0, -1.0)):
        assert stats.kstest(column, stats.laplace(centre, 2.0).cdf).pvalue > P_MIN
    assert abs(np.corrcoef(samples.T)[0, 1]) < 0.04  # independent entries: sd(r) = 1 / sqrt(n) = 0.007


def test_per_sample_route_on_a_scalar_measurement_has_the_same_law():
    scalar = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)
    samples = adapter.from_measurement(scalar).sample(np.array([0.5]), 2_000, None)
    assert samples.shape == (2_000, 1)
    assert stats.kstest(samples[:, 0], stats.laplace(0.5, 1.0).cdf).pvalue > P_MIN


def test_discrete_laplace_frequencies_match_the_two_sided_geometric_law():
    samples = adapter.from_measurement(_vector_laplace(int, 1.0), elementwise=True).sample([0], 20_000, None)[:, 0]
    assert np.array_equal(samples, np.round(samples))
    k = np.arange(-4, 5)
    pmf = np.exp(-np.abs(k)) * (1 - np.exp(-1)) / (1 + np.exp(-1))
    observed = np.append([np.sum(samples == v) for v in k], np.sum(np.abs(samples) > 4))
    expected = np.append(pmf, 1 - pmf.sum()) * samples.size
    assert stats.chisquare(observed, expected).pvalue > P_MIN


def test_claims_are_read_from_opendp():
    assert adapter.claim(_vector_laplace(scale=2.0), 1.0) == (0.5, 0.0)
    gaussian = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                                  scale=4.0)
    eps, delta = adapter.claim(gaussian, 1.0, delta=1e-5)
    assert delta == 1e-5 and gaussian.map(1.0) == pytest.approx(1 / 32)  # rho = 1 / (2 sigma^2)
    # OpenDP's conversion is an upper bound: the tight analytic Gaussian curve is below delta at its eps,
    # and not far below (the conversion loses less than 30% of eps here)
    assert theory.gaussian_delta(eps, 0.25) <= 1e-5 < theory.gaussian_delta(0.7 * eps, 0.25)
    assert adapter.claim(adapter.composed(scale=2.0), 1) == pytest.approx((1.0, 0.0), abs=1e-8)  # 0.5 + 0.5


def test_composed_measurement_releases_a_noisy_sum_and_count():
    D = np.array([[0.2], [0.5], [3.0]])  # 3.0 is clamped to 1
    samples = adapter.from_measurement(adapter.composed(scale=2.0), neighbor="remove").sample(D, 3_000, None)
    assert samples.shape == (3_000, 2)
    assert stats.kstest(samples[:, 0], stats.laplace(1.7, 2.0).cdf).pvalue > P_MIN
    assert np.mean(samples[:, 1]) == pytest.approx(3.0, abs=0.2)  # discrete Laplace(2): sd 2.8 / sqrt(3000) = 0.05


def test_elementwise_is_refused_where_it_would_be_wrong():
    scalar = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)
    with pytest.raises(ValueError, match="vector domain"):
        adapter.from_measurement(scalar, elementwise=True)
    with pytest.raises(ValueError, match="entry by entry"):
        adapter.from_measurement(adapter.composed(), elementwise=True).sample(np.array([0.5, 0.2]), 10, None)


def test_cases_claims_and_the_planted_misuse_is_flagged_by_a_small_audit():
    cases = adapter.cases()
    assert [c.planted for c in cases].count(True) == 1 and all("cannot be seeded" in c.note for c in cases)
    planted = next(c for c in cases if c.planted)
    report = audit(planted.mechanism, planted.D, planted.D_prime, eps=np.linspace(0, 2.5, 11), n_samples=4_000,
                   seed=0, claimed=planted.claimed, progress=False)
    assert report.verdict == "violation" and report.eps_lo(0.0) > planted.claimed[0]

"""diffprivlib mechanisms and GaussianNB as ndis mechanisms: seeded from the audit's rng, the samples'
law, and a planted misuse flagged while the correct use is not. Distribution tests use p > 1e-4 on
fixed seeds (deterministic)."""

import numpy as np
import pytest
from scipy import optimize, stats

adapter = pytest.importorskip("ndis.mechanisms.libraries.diffprivlib")  # imports diffprivlib (made importable)

from diffprivlib import mechanisms as dpm  # noqa: E402

from ndis import theory  # noqa: E402
from ndis.auditor import audit  # noqa: E402

P_MIN = 1e-4


def test_samples_are_reproducible_from_the_rng_and_follow_laplace():
    mech = adapter.from_mechanism(dpm.Laplace, epsilon=0.5, sensitivity=1.0)
    first = mech.sample(np.array([1.0, 2.0]), 20_000, np.random.default_rng(3))
    assert np.array_equal(first, mech.sample(np.array([1.0, 2.0]), 20_000, np.random.default_rng(3)))
    assert not np.array_equal(first, mech.sample(np.array([1.0, 2.0]), 20_000, np.random.default_rng(4)))
    for column, centre in zip(first.T, (1.0, 2.0)):
        assert stats.kstest(column, stats.laplace(centre, 2.0).cdf).pvalue > P_MIN  # scale = sensitivity / eps


def test_analytic_gaussian_noise_has_the_sigma_of_balle_and_wang():
    samples = adapter.from_mechanism(dpm.GaussianAnalytic, epsilon=1.0, delta=1e-5, sensitivity=1.0).sample(
        np.array([0.0]), 20_000, np.random.default_rng(0))[:, 0]
    sigma = optimize.brentq(lambda s: theory.gaussian_delta(1.0, 1.0 / s) - 1e-5, 1.0, 10.0)  # tight (1, 1e-5)
    assert stats.kstest(samples, stats.norm(0.0, sigma).cdf).pvalue > P_MIN


def test_exponential_frequencies_follow_exp_of_eps_utility_over_twice_the_sensitivity():
    utility = np.array([0.0, 1.0, 2.0])
    samples = adapter.from_mechanism(dpm.Exponential, "utility", epsilon=1.0, sensitivity=1.0).sample(
        utility, 20_000, np.random.default_rng(1))[:, 0]
    weights = np.exp(utility / 2)
    observed = [np.sum(samples == k) for k in range(3)]
    assert stats.chisquare(observed, weights / weights.sum() * samples.size).pvalue > P_MIN


def test_naive_bayes_outputs_means_variances_and_counts_summing_to_n():
    samples = adapter.naive_bayes().sample(adapter._toy_data(), 50, np.random.default_rng(0))
    assert samples.shape == (50, 6) and np.all((samples[:, :2] >= 0) & (samples[:, :2] <= 1))
    assert np.all(samples[:, 4:].sum(axis=1) == 10)  # the true n: why D' replaces a row (n is public)


def test_planted_misuse_is_flagged_and_the_correct_use_is_not():
    cases = {c.name: c for c in adapter.cases()}
    assert [c.planted for c in cases.values()].count(True) == 1
    for name, flagged in (("laplace, wrong sensitivity", True), ("laplace", False)):
        case = cases[name]
        report = audit(case.mechanism, case.D, case.D_prime, eps=np.linspace(0, 2.5, 11), n_samples=4_000, seed=0,
                       claimed=case.claimed, progress=False)
        assert (report.verdict == "violation") == flagged
        assert (report.eps_lo(0.0) > case.claimed[0]) == flagged

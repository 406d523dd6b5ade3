"""The exact test of H0: p - c q <= delta on two independent binomial counts (auditor.difference)."""

import math

import numpy as np
import pytest
from scipy import stats

from ndis.auditor import difference
from ndis.auditor.bounds import clopper_pearson_lower, clopper_pearson_upper

C = math.exp(0.2)


def test_tails_equal_the_brute_force_sum():
    rng = np.random.default_rng(0)
    for _ in range(100):
        n_num, n_den = rng.integers(1, 60, 2)
        p, q, t = rng.random(), rng.random(), rng.uniform(-1.5, 1.0)
        k_num, k_den = np.arange(n_num + 1), np.arange(n_den + 1)
        hit = k_num[:, None] / n_num - C * k_den[None, :] / n_den >= t - 1e-12
        brute = np.sum(np.outer(stats.binom.pmf(k_num, n_num, p), stats.binom.pmf(k_den, n_den, q)) * hit)
        got = difference.tails(t, C, n_num, n_den, p, q)[0]
        assert brute - 1e-12 <= got <= brute * (1 + 1e-8) + 1e-12  # never below it, beyond rounding


@pytest.mark.parametrize("p, q", [(0.3, 0.2), (0.05, 0.02), (0.02, 0.0), (0.9, 0.7)])
def test_the_test_keeps_its_level_on_the_boundary(p, q):
    # Counts drawn at p - C q = delta exactly (the worst case of H0): the test may reject at level 0.05 in
    # at most 5% of 1,500 draws, up to 3 binomial standard deviations (8.4 draws).
    delta, level, draws = p - C * q, 0.05, 1_500
    rng = np.random.default_rng(1)
    k_num, k_den = rng.binomial(300, p, draws), rng.binomial(200, q, draws)
    rejected = sum(difference.rejects(a, 300, b, 200, C, delta, level) for a, b in zip(k_num, k_den))
    assert rejected <= level * draws + 3 * math.sqrt(level * (1 - level) * draws)


def test_the_bound_inverts_the_test_and_beats_two_one_sided_bounds():
    # A large event: p = 0.2, p - e^0.2 q = 2e-3, 500,000 samples per side. Two Clopper-Pearson bounds at
    # 0.0125 each certify nothing; the test at 0.025 certifies within a fifth of a standard error of the
    # normal approximation's bound.
    n, k_num, k_den = 500_000, 100_000, 81_055
    bound = difference.lower_bound(k_num, n, k_den, n, C, 0.025)
    estimate = k_num / n - C * k_den / n
    se = math.sqrt(0.2 * 0.8 / n + C * C * (k_den / n) * (1 - k_den / n) / n)
    # the bisection stops within a hundredth of a standard error
    assert difference.rejects(k_num, n, k_den, n, C, bound, 0.025)
    assert not difference.rejects(k_num, n, k_den, n, C, bound + 0.01 * se, 0.025)
    assert clopper_pearson_lower(k_num, n, 0.0125) - C * clopper_pearson_upper(k_den, n, 0.0125) < 0
    assert estimate - 2.0 * se - 0.2 * se < bound < estimate - 1.96 * se


def test_pvalue_is_the_smallest_rejected_level():
    n, k_num, k_den = 20_000, 900, 620  # estimate 7.1e-3, about 3.4 standard errors
    p = difference.pvalue(k_num, n, k_den, n, C, 0.0)
    assert 1e-6 < p < 1e-2
    assert difference.rejects(k_num, n, k_den, n, C, 0.0, p)
    assert not difference.rejects(k_num, n, k_den, n, C, 0.0, p / 1.02)
    assert difference.pvalue(620, n, 900, n, C, 0.0) == 1.0


def test_floor_is_the_smallest_certifiable_count():
    n, level = 10_000, 0.025
    floor = difference.floor(0.2, n, n, level)
    k = round(floor * n)
    assert difference.lower_bound(k, n, 0, n, C, level) > 0
    assert difference.lower_bound(k - 1, n, 0, n, C, level) == 0
    assert difference.floor(5.0, 10, 10, 0.001) == 1.0  # nothing certifiable

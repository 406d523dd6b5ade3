"""Steinke, Nasr & Jagielski's one-run bound: the p-value is their routine's, eps_lo is its root, the
ceiling its closed form, and the grid of guess counts keeps the confidence."""

import numpy as np
import pytest
from scipy import special, stats

from ndis.auditor.one_run import guesses, idealized, steinke


def _published_routine(m, r, v, eps, delta):
    """The statement, term by term: P[Bin >= v] + 2 m delta max_i P[v - i <= Bin < v] / i (a loop over pmfs)."""
    q = 1 / (1 + np.exp(-eps))
    beta = stats.binom.sf(v - 1, r, q)
    worst = total = 0.0
    for i in range(1, v + 1):
        total += stats.binom.pmf(v - i, r, q)
        worst = max(worst, total / i)
    return min(beta + worst * delta * 2 * m, 1.0)


@pytest.mark.parametrize("m,r,v,delta", [(100, 50, 40, 1e-3), (1000, 124, 112, 1e-5), (30, 8, 8, 0.0),
                                         (500, 250, 126, 1e-5)])
def test_p_value_is_the_published_statement(m, r, v, delta):
    eps = np.array([0.0, 0.5, 1.0, 2.5, 4.0])
    expected = [_published_routine(m, r, v, e, delta) for e in eps]
    np.testing.assert_allclose(steinke.p_value(m, r, v, eps, delta), expected, rtol=1e-10, atol=1e-300)


def test_eps_lower_is_where_the_p_value_crosses_alpha():
    m, r, v, delta, alpha = 1000, 124, 112, 1e-5, 0.05 / 7
    eps_lo = steinke.eps_lower(m, r, v, delta, alpha)
    assert eps_lo > 1
    assert steinke.p_value(m, r, v, eps_lo - 1e-4, delta)[0] <= alpha < steinke.p_value(m, r, v, eps_lo + 1e-4, delta)[0]
    assert steinke.eps_lower(m, r, r // 2, delta, alpha) == 0.0        # chance accuracy certifies nothing


def test_ceiling_with_delta_zero_is_the_closed_form():
    # every one of the 2k guesses right, delta = 0: p = q^(2k) = alpha / K, so eps = logit((alpha / K)^(1 / 2k))
    m, alpha = 1000, 0.05
    ks = guesses.sizes(m)
    expected = special.logit((alpha / ks.size) ** (1 / (2 * ks[0])))
    assert steinke.ceiling(m, 0.0, alpha) == pytest.approx(expected, abs=2e-6)


def test_guess_grid_and_counts():
    assert guesses.sizes(1000).tolist() == [500, 250, 125, 62, 31, 15, 7]
    assert guesses.sizes(7).size == 0
    scores = np.array([5.0, 1.0, 3.0, 0.0, 4.0, 2.0, 6.0, 7.0])
    included = np.array([1, 0, 0, 0, 1, 1, 1, 0], dtype=bool)
    # k = 2: in-guesses on the two highest (7: out, 6: in), out-guesses on the two lowest (0: out, 1: out)
    assert guesses.correct_counts(scores, included, [2, 4]).tolist() == [3, 6]


def test_coverage_in_the_idealized_setting():
    # exact confidence: eps_lo > eps in at most 5% of runs; 40 runs, 4 standard errors: at most 2 + 4 * 1.38 = 7
    runs = idealized.idealized_eps_lo(300, 4.0, 1e-5, 0.05, 40, seed=11, methods=["steinke"])["steinke"]
    assert np.sum(runs > 4.0) <= 7 and np.median(runs) > 0.5


def test_the_delta_term_sums_only_the_windows_that_can_win():
    # the truncated max over windows equals the full one (the published routine, a loop over all
    # v windows) on random instances, from chance accuracy to every guess right
    rng = np.random.default_rng(8)
    for _ in range(60):
        r = int(rng.integers(2, 3000))
        v = int(rng.integers(1, r + 1))
        m, eps = r + int(rng.integers(0, 5000)), float(rng.uniform(0, 12))
        full = _published_routine(m, r, v, eps, 1e-5)
        assert steinke.p_value(m, r, v, eps, 1e-5)[0] == pytest.approx(full, rel=1e-9, abs=1e-300), (m, r, v, eps)

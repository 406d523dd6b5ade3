"""The f-DP one-run bound (Mahloujifar, Melis & Chaudhuri 2025): its recursion refutes a curve exactly
when no distribution of the number of right guesses satisfies the per-canary constraints (checked
by a linear program for the (eps, delta) family), and its GDP eps_lo keeps its confidence."""

import numpy as np
import pytest
from scipy.optimize import linprog

from ndis.auditor.one_run import fdp, idealized


def _feasible(m, guessed, c, tau, eps, delta):
    """Is there a law p of N (right guesses) with P[N >= c] >= tau and r_{i+1} <= B(h_i) for every i
    (B of (eps, delta)-DP: min(1, delta + e^eps h, 1 - e^-eps (1 - delta - h)))? A linear program."""
    n = np.arange(guessed + 1)
    rows, bounds = [np.where(n >= c, -1.0, 0.0)], [-tau]
    for i in range(guessed):
        r_next, h = np.where(n >= i + 1, n / m, 0.0), np.where(n >= i, (guessed - n) / m, 0.0)
        rows += [r_next - np.exp(eps) * h, r_next - np.exp(-eps) * h]
        bounds += [delta, 1 - np.exp(-eps) * (1 - delta)]
    result = linprog(np.zeros(n.size), A_ub=np.array(rows), b_ub=bounds, A_eq=np.ones((1, n.size)), b_eq=[1.0],
                     bounds=[(0, None)] * n.size, method="highs")
    return result.status == 0


def test_recursion_refutes_exactly_the_infeasible_claims():
    rng = np.random.default_rng(5)
    refuted = 0
    for _ in range(150):
        m = int(rng.integers(4, 60))
        guessed = int(rng.integers(1, m + 1))
        c = int(rng.integers(guessed // 2, guessed + 1))
        tau, eps, delta = rng.choice([0.01, 0.05, 0.2]), rng.uniform(0, 3), rng.choice([0.0, 1e-3, 0.05])
        says = fdp.refuted(m, guessed, c, tau, fdp._inverse_blow_up("eps-delta", np.array([eps]), delta))[0]
        assert says == (not _feasible(m, guessed, c, tau, eps, delta)), (m, guessed, c, tau, eps, delta)
        refuted += says
    assert refuted >= 10   # the check met both outcomes


def test_refutation_is_monotone_and_eps_lo_is_its_edge():
    m, guessed, right, alpha = 1000, 124, 112, 0.05 / 7
    mu = np.linspace(0, 4, 81)
    says = fdp.refuted(m, guessed, right, alpha, fdp._inverse_blow_up("gdp", mu, 0.0))
    assert says[0] and not says[-1] and np.all(np.diff(says.astype(int)) <= 0)
    edge = fdp.largest_refuted(m, guessed, right, alpha, "gdp", 1e-5)
    assert mu[says].max() <= edge < mu[~says].min()


def test_coverage_in_the_idealized_setting():
    # exact: at most 2 + 4 * 1.38 = 7 of 40 runs above eps
    runs = idealized.idealized_eps_lo(300, 4.0, 1e-5, 0.05, 40, seed=12, methods=["fdp"])["fdp"]
    assert np.sum(runs > 4.0) <= 7 and np.median(runs) > 0.5


def test_the_default_family_assumes_nothing_and_the_gdp_family_says_what_it_assumes():
    scores, included = idealized.draw(300, 4.0, 1e-5, np.random.default_rng(3))
    default, gdp = fdp.estimate(scores, included, 1e-5, 0.05), fdp.estimate(scores, included, 1e-5, 0.05, "gdp")
    assert default.details["family"] == "eps-delta" and default.assumption.startswith("nothing beyond")
    assert "Gaussian one" in gdp.assumption and "mu_lo" in gdp.details


def test_unknown_family_is_refused():
    with pytest.raises(ValueError, match="family must be one of"):
        fdp.estimate(np.arange(20.0), np.arange(20) % 2 == 0, 1e-5, 0.05, family="rdp")

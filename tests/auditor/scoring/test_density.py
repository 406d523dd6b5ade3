"""The density scorer (auditor.scoring.density) and the detection of the zoo's hard cases (issue 10).

Detection tests use scorer="density" (cheap to fit; "auto" is what benchmarks/zoo_sweep.py
measures) at a size where the Bayes-optimal score refutes the claim with probability >= 98%
(`bayes` = the 2% quantile of its held-out lower bound, as in the sweep's `bayes_bound`).
"""

import math

import numpy as np
import pytest

from ndis import mechanisms
from ndis.auditor import Split, audit
from ndis.auditor.scoring import scorers
from ndis.auditor.statistics.bounds import clopper_pearson_lower, clopper_pearson_upper


def test_discrete_outputs_get_smoothed_count_log_odds():
    # Atoms 0, 1, 2 (and a second constant column): log-odds = log((c_P + 1/2) / n_P) - log((c_Q + 1/2) / n_Q).
    X_p = np.repeat([[0.0, 5.0], [1.0, 5.0], [2.0, 5.0]], [60, 30, 10], axis=0)
    X_q = np.repeat([[0.0, 5.0], [1.0, 5.0], [2.0, 5.0]], [20, 30, 0], axis=0)
    scorer = scorers.make("density", min_rows=1).fit(X_p, X_q)
    want = np.log(np.array([60.5, 30.5, 10.5]) / 100) - np.log(np.array([20.5, 30.5, 0.5]) / 50)
    np.testing.assert_allclose(scorer.log_odds(np.array([[0.0, 5.0], [1.0, 5.0], [2.0, 5.0]])), want, rtol=1e-12)
    assert scorer.log_odds(np.array([[7.0, 5.0]]))[0] == pytest.approx(math.log(100 / 50))  # unseen atom


def test_support_edge_is_the_top_level_set():
    # Noisy max with exponential noise returning the value, q = 1^5 against q' = (2, 0, 0, 0, 0), eps0 = 0.7:
    # values in [1, 2) occur under q only (probability 0.00225), and they are all of delta(0.7).
    mech = mechanisms.get("zoo-noisy-max-exp-value", eps0=0.7)
    D, D_prime = mech.patterns(5)["one above rest below"]
    rng = np.random.default_rng(0)
    fit = [mech.sample(data, 200_000, rng).reshape(-1, 1) for data in (D, D_prime)]
    held = [mech.sample(data, 200_000, rng).reshape(-1, 1) for data in (D, D_prime)]
    scorer = scorers.make("density").fit(*fit)
    s_p, s_q = scorer.log_odds(held[0]), scorer.log_odds(held[1])
    top = max(s_p.max(), s_q.max())
    edge = held[0][:, 0] < 2.0
    assert np.all(s_p[edge] == top) and top > 5        # c_Q = 0: log((2 c_P + 1) ...) of the fit's ~450 rows
    # The edge cell ends at the smallest of the fit's 200,000 values of q': a held-out value of q' below it
    # has probability 1 / 200,001 each, so a few at most.
    assert np.sum(s_q == top) <= 5 and np.sum(s_p == top) <= edge.sum() + 5


def test_density_does_not_apply_to_gaussian_outputs():
    rng = np.random.default_rng(1)
    X_p, X_q = rng.normal(size=(20_000, 12)), rng.normal(0.1, size=(20_000, 12))
    with pytest.raises(ValueError, match="does not apply"):
        scorers.make("density").fit(X_p, X_q)


def _bayes(mech, D, D_prime, eps0, n_held, alpha=0.05):
    """2% quantile of the held-out lower bound of the forward direction's Neyman-Pearson event at t = eps0,
    its masses known (no validation choice): the sample size at which the case is within reach."""
    P, Q = mech.level_set(eps0, D, D_prime)
    bound = (clopper_pearson_lower(round(n_held * P), n_held, alpha / 4)
             - math.exp(eps0) * clopper_pearson_upper(round(n_held * Q), n_held, alpha / 4))
    return bound - 2.054 * math.sqrt((P * (1 - P) + math.exp(2 * eps0) * Q * (1 - Q)) / n_held)


@pytest.mark.parametrize("name, eps0, pattern, claimed, n", [
    # Bayes-optimal 2% quantile of the bound with 5e4 held out: 1.2e-3, against a claimed delta of 0.
    ("zoo-noisy-max-exp-value", 0.7, "one above rest below", 0.0, 10**5),
    # 5e5 held out: 1.8e-3 against 0 (true delta 4.5e-3); the claim (0.2, 2e-3) is refuted at its median
    # (2.4e-3 at 5e5 held-out, before the 2% quantile), so it must at least be called suspicious.
    ("zoo-isvt3", 0.2, "half half", 0.0, 10**6),
    ("zoo-isvt3", 0.2, "half half", 2e-3, 10**6),
])
def test_the_issue_misses_are_flagged(name, eps0, pattern, claimed, n):
    mech = mechanisms.get(name, eps0=eps0)
    D, D_prime = mech.patterns(5)[pattern]
    if claimed == 0:
        assert _bayes(mech, D, D_prime, eps0, n // 2) > 1e-3
    report = audit(mech, D, D_prime, eps=[eps0], claimed=(eps0, claimed), n_samples=n, seed=11, scorer="density",
                   progress=False)
    v = report.verdict
    assert v == "violation" or (claimed > 0 and v.suspicious and str(v).startswith("suspicious")), str(v)


def test_isvt4_violated_claim_is_not_passed():
    # iSVT4, c = 1, half half, eps0 = 0.2: true delta(0.2) = 2.17e-3 > the claimed 1e-3, but the scorers find
    # events worth only about 1.1e-3 at this size (a known miss, docs/results.md). The verdict must still not
    # read as a pass: "no violation found" with "not a proof of privacy", never "inconclusive" (1e-3 is far
    # above the floor), and its unbiased estimate must not exceed the truth by more than 3 standard errors.
    mech = mechanisms.get("zoo-isvt4", eps0=0.2)
    D, D_prime = mech.patterns(5)["half half"]
    report = audit(mech, D, D_prime, eps=[0.2], claimed=(0.2, 1e-3), n_samples=10**6, seed=3, scorer="boosting",
                   progress=False, split=Split(max_train=10**5))
    v = report.verdict
    assert v == "violation" or (v == "no violation found" and "not a proof of privacy" in str(v)), str(v)
    assert v.estimate <= 2.17e-3 + 3 * v.estimate_se


def test_level_sets_give_the_exact_curve():
    # At t = eps the Neyman-Pearson event attains delta(eps): P(S) - e^eps Q(S) = exact_delta.
    for name, pattern in [("zoo-laplace-half", "one above"), ("zoo-gaussian-half", "one below"),
                          ("zoo-noisy-max-lap-value", "all above"), ("zoo-noisy-max-exp-value", "one above"),
                          ("zoo-isvt3", "x shape"), ("zoo-noisy-max-lap-index", "half half"),
                          ("zoo-isvt4", "x shape")]:
        mech = mechanisms.get(name, eps0=0.7)
        D, D_prime = mech.patterns(5)[pattern]
        for a, b in ((D, D_prime), (D_prime, D)):
            P, Q = mech.level_set(0.7, a, b)
            assert 0 <= Q <= P <= 1
            # iSVT4's level set is tabulated (absolute error about 1e-8); the others are exact to rounding
            assert P - math.exp(0.7) * Q == pytest.approx(float(mech.exact_delta(0.7, a, b)), abs=1e-7), name

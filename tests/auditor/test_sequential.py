"""Sequential audits (auditor.sequential): a clear violation stops at the first look, a correct mechanism
is not refuted, the same seed replays the audit, claimed curves are tested at one point, mistakes are
refused before sampling, and the looks together keep the level over the stopping time."""

import numpy as np
import pytest

from ndis import theory
from ndis.auditor import Scoring, audit_sequential
from ndis.auditor.statistics import bounds, claims, confirmation, spending
from ndis.mechanisms import zoo


def _laplace_half(seed, n=20_000):
    mech = zoo.ZooLaplaceHalf(eps0=0.7)  # true eps 1.4 (the scale is halved), true delta(0.7) = 0.295
    D, D_prime = mech.patterns(5)["one above"]
    return audit_sequential(mech, D, D_prime, eps=[0.7], n_samples=n, seed=seed, claimed=mech.claim(), progress=False)


def test_a_clear_violation_is_refuted_at_the_first_look():
    report = _laplace_half(seed=0)
    s = report.sequential
    assert report.verdict == "violation" and s["stopped"] == "refuted" and len(s["rounds"]) == 1
    # 20,000 per side make one round: 5,000 screen, then looks at 5,000 and 15,000 confirmation samples
    assert report.samples_used == s["samples_used"] == 10_000 and s["budget"] == 20_000
    assert report.n_samples == 20_000 and report.sizes["held_out"] == 2_500  # the curves: the 5,000 of the screening
    # the bounds are valid statements (each holds with probability >= 0.95; seed fixed)
    assert 0.7 < report.eps_lo(0.0) <= 1.4
    assert 0 < report.verdict.lower_bound <= 0.295
    assert report.verdict.confidence >= 0.95 and "refuted in round 1 of 1, look 1" in s["reason"]
    assert report.to_json()  # the sequential record is JSON-ready


def test_a_correct_mechanism_is_not_refuted_and_draws_at_most_its_budget():
    mech = zoo.ZooSVT(eps0=0.7)  # correct, true eps 0.42 on this pair: far inside its claim
    D, D_prime = mech.patterns(5)["half half"]
    report = audit_sequential(mech, D, D_prime, eps=[0.7], n_samples=20_000, seed=1, claimed=mech.claim(),
                              progress=False)
    s = report.sequential
    assert report.verdict != "violation" and s["stopped"] in ("futile", "budget")
    assert report.samples_used <= 20_000 and s["p_value"] > 0.05
    # every look tests two events of clearly different masses, each at half the look's level, and the
    # deciding one is among them; the p-value combines every test at its own level
    for look in s["rounds"]:
        tested = look["confirmations"]
        assert len(tested) == confirmation.EVENTS and look["confirmation"] in tested
        assert all(t["level"] == pytest.approx(look["level"] / confirmation.EVENTS) for t in tested)
        same = [(t["event"]["num_hat"] + t["event"]["den_hat"]) / 2 for t in tested
                if t["event"]["direction"] == tested[0]["event"]["direction"]]
        assert max(same) / min(same) >= confirmation.DISTINCT or len(same) == 1
    tests = [(t["p_value"], t["level"]) for look in s["rounds"] for t in look["confirmations"]]
    assert s["p_value"] == pytest.approx(min(1.0, min(p * 0.05 / level for p, level in tests)))


def test_the_same_seed_replays_the_sequential_audit():
    first, second = _laplace_half(seed=7), _laplace_half(seed=7)
    assert first.sequential["rounds"] == second.sequential["rounds"]
    assert first.seed == {"entropy": 7, "spawn_key": []}


def test_a_gaussian_dp_claim_is_refuted_at_one_point_of_its_curve():
    def mech(data, n, rng):  # x + N(0, 1) on the inputs 0 and 2: 2-GDP, claimed 0.5-GDP
        return np.asarray(data, float)[0] + rng.standard_normal((n, 1))

    report = audit_sequential(mech, np.array([0.0]), np.array([2.0]), eps=np.linspace(0, 2, 11), n_samples=20_000,
                              seed=2, claimed=claims.gaussian_dp(0.5), progress=False)
    v = report.verdict
    assert v == "violation" and v.eps in np.linspace(0, 2, 11)
    assert v.delta == pytest.approx(float(theory.gaussian_delta(v.eps, 0.5)))
    assert v.lower_bound <= float(theory.gaussian_delta(v.eps, 2.0))  # below the true curve (seed fixed)


@pytest.mark.parametrize("changes, match", [({"claimed": None}, "tests a claim"), ({"D_prime": None}, "D_prime"),
                                            ({"scorer": Scoring(method="eureka")}, "threshold"),
                                            ({"n_samples": 3_000}, "at least")])
def test_what_a_sequential_audit_cannot_do_is_refused_before_sampling(changes, match):
    def never(data, n, rng):
        raise AssertionError("sampled")

    options = dict(D=np.array([0.0]), D_prime=np.array([1.0]), claimed=(1.0, 0.0), n_samples=20_000, progress=False)
    with pytest.raises(ValueError, match=match):
        audit_sequential(never, **{**options, **changes})


def test_the_looks_together_keep_alpha_over_the_stopping_time():
    # The confirmation layer of a sequential audit with a fixed event at the boundary of a true claim
    # (P(S) = e^eps Q(S): delta = 0 = claimed): each look tests the round's cumulative counts at its
    # level and the audit stops at the first refutation. 20,000 simulated audits at alpha = 0.05: the
    # share refuted is at most alpha + 4 standard errors (measured 0.0018: each look's two one-sided
    # bounds are conservative at the boundary, and the looks' union bound adds more slack).
    rng = np.random.default_rng(0)
    eps, q, alpha, runs = 0.3, 0.3, 0.05, 20_000
    refuted = np.zeros(runs, bool)
    for plan in spending.schedule(100_000, alpha):
        k_num, k_den, drawn = np.zeros(runs), np.zeros(runs), 0
        for look in plan.looks:
            k_num += rng.binomial(look.confirm - drawn, np.exp(eps) * q, runs)
            k_den += rng.binomial(look.confirm - drawn, q, runs)
            drawn = look.confirm
            lower = (bounds.clopper_pearson_lower(k_num, drawn, look.level / 2)
                     - np.exp(eps) * bounds.clopper_pearson_upper(k_den, drawn, look.level / 2))
            refuted |= lower > 0
    assert refuted.mean() <= alpha + 4 * np.sqrt(alpha * (1 - alpha) / runs)


def test_rounds_that_could_not_refute_are_skipped_and_an_audit_that_could_not_is_refused():
    from ndis.auditor import sequential

    rounds = spending.schedule(100_000, 0.05)
    # at eps = 8 an event can show P >= e^8 Q only where Q's upper bound is below e^-8 = 3.4e-4: not on
    # the 1,500 or 4,500 confirmation samples of the first rounds (Q_hi(0 of n) = log(2 / level) / n
    # at least), but on the last round's 67,500
    assert [sequential._can_refute(r, [(8.0, 0.0)]) for r in rounds] == [False, False, True]
    assert all(sequential._can_refute(r, [(0.5, 0.0)]) for r in rounds)

    def never(data, n, rng):
        raise AssertionError("sampled")

    with pytest.raises(ValueError, match="no outcome of a sequential audit of 100,000 samples per side"):
        audit_sequential(never, np.array([0.0]), np.array([1.0]), claimed=(20.0, 0.0), n_samples=100_000)

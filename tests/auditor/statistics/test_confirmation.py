"""Confirmation of one event on fresh counts (auditor.statistics.confirmation): the claim is tested on
the difference of the counts (its size: tests/auditor/statistics/test_difference.py), refutation,
delta_lower and the p-value agree, the power prediction matches simulation, and the event is chosen well."""

import numpy as np
import pytest

from ndis.auditor.statistics import confirmation, difference, histogram, spending


def _event(eps=0.5, delta=0.0, direction="forward", threshold=0.0):
    return confirmation.Event(eps, delta, direction, threshold, 0.5, 0.3, 0.5)


def test_the_claim_is_tested_on_the_difference_of_the_counts():
    c = confirmation.confirm(_event(), k_p=620, k_q=300, n=1_000, level=0.01)
    assert c.refuted == difference.rejects(620, 300, 1_000, 0.5, 0.0, 0.01) is True
    assert c.delta_lower == pytest.approx(difference.delta_lower(620, 300, 1_000, 0.5, 0.01))
    assert c.eps_lo == difference.eps_lo(620, 300, 1_000, 0.0, 0.01, points=[0.5])
    assert c.estimate == pytest.approx(0.62 - np.exp(0.5) * 0.3)


def test_the_reverse_direction_counts_the_complement_with_d_prime_as_numerator():
    c = confirmation.confirm(_event(direction="reverse"), k_p=300, k_q=380, n=1_000, level=0.01)
    assert (c.k_num, c.k_den) == (620, 700)


def test_refutation_delta_lower_eps_lo_and_the_p_value_agree():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(200, 5_000))
        k_q = int(rng.integers(0, n // 2))
        k_p = int(rng.integers(k_q, n + 1))
        eps, delta = float(rng.uniform(0, 1.5)), float(rng.choice([0.0, 1e-3, 0.05]))
        level = float(10 ** rng.uniform(-6, -1))
        c = confirmation.confirm(_event(eps, delta), k_p, k_q, n, level)
        # the failure message's one statement: delta(eps) >= delta_lower > delta exactly when refuted
        assert c.refuted == (c.delta_lower > delta) or (c.refuted and c.delta_lower == delta)
        # the p-value: refuted at `level` exactly when p <= level (the bisection is bracketed by the level)
        assert (c.p_value <= level) == c.refuted


@pytest.mark.parametrize("num, den, n", [(0.3, 0.12, 2_000), (0.05, 0.012, 20_000), (0.6, 0.3, 500)])
def test_the_predicted_power_matches_simulation(num, den, n):
    # the normal approximation against 1,000 simulated confirmations; tolerance 0.1: 4 binomial standard
    # errors of the simulation (at most 0.063) and the approximation's own error (0.04 at most in these
    # cases: 0.816 predicted against 0.778 in 2,000 simulations of the first, seed 5)
    eps, level = 0.7, 0.01
    rng = np.random.default_rng(2)
    k_num, k_den = rng.binomial(n, num, 1_000), rng.binomial(n, den, 1_000)
    simulated = np.mean([difference.rejects(int(a), int(b), n, eps, 0.0, level) for a, b in zip(k_num, k_den)])
    assert float(confirmation.predicted_power(num, den, eps, 0.0, n, level)) == pytest.approx(simulated, abs=0.1)


def test_the_combined_p_value_is_the_bonferroni_minimum():
    levels = [0.001, 0.003, 0.016]
    assert confirmation.combined_p_value([0.5, 0.002, 0.2], levels, 0.02) == pytest.approx(0.002 * 0.02 / 0.003)
    assert confirmation.combined_p_value([], [], 0.05) == 1.0
    # a test rejecting at exactly its level gives alpha, not one unit in the last place above it
    # (0.1 * 0.05 / 0.1 is 0.05000000000000001 in floating point)
    assert confirmation.combined_p_value([0.1], [0.1], 0.05) <= 0.05
    # <= alpha exactly when some round's p-value is below its level
    for ps in ([0.0011, 0.0031, 0.017], [0.0009, 1.0, 1.0], [1.0, 1.0, 0.016]):
        assert (confirmation.combined_p_value(ps, levels, 0.02) <= 0.02) == any(p <= a for p, a in zip(ps, levels))


def test_a_refuting_look_combines_to_a_p_value_at_most_alpha():
    # the refutation of issue 39 that printed "refuted at level 0.05 (p = 0.0502)": round 1, look 1 of a
    # sequential audit of 10^5 samples per side at alpha 0.05, the event's counts 782 and 217 of 1,500
    alpha = 0.05
    level = spending.schedule(100_000, alpha)[0].looks[0].level / confirmation.EVENTS
    c = confirmation.confirm(_event(eps=1.0), k_p=782, k_q=217, n=1_500, level=level)
    assert c.refuted and c.p_value <= level
    assert confirmation.combined_p_value([c.p_value], [c.level], alpha) <= alpha


def test_the_event_is_the_one_that_carries_the_violation():
    # Scores on D concentrate above 2 (P = 0.4 there, Q = 0.05): the forward event {s >= 2} carries
    # delta(0.5) = 0.4 - e^0.5 0.05 = 0.32; the reverse direction carries little.
    rng = np.random.default_rng(3)
    n = 4_000
    p = np.where(rng.random(n) < 0.4, 2.5, rng.uniform(0, 1.9, n))
    q = np.where(rng.random(n) < 0.05, 2.5, rng.uniform(0, 1.9, n))
    held = histogram.ScoreHistogram.from_scores(p, q, (p[:100], q[:100]))
    event, other = confirmation.choose_events(held, [(0.5, 0.0)], 1_000, 0.01)
    assert event.direction == "forward" and 1.9 <= event.threshold <= 2.5
    assert event.predicted_power > 0.99
    # the second event's mass differs from the first's by a factor of at least DISTINCT
    mass = [(e.num_hat + e.den_hat) / 2 for e in (event, other)]
    assert other.direction == "reverse" or max(mass) / min(mass) >= confirmation.DISTINCT
    # among two claimed points, the one the mechanism violates
    event, _ = confirmation.choose_events(held, [(3.0, 0.0), (0.5, 0.0)], 1_000, 0.01)
    assert event.eps == 0.5


def test_where_every_power_is_tiny_the_event_is_still_a_real_one():
    # P = Q and a claim of eps = 5: every predicted power underflows to 0, the normal scores still order
    # the events, and the choice is a finite threshold (not the empty event at +inf)
    rng = np.random.default_rng(4)
    p, q = rng.standard_normal(5_000), rng.standard_normal(5_000)
    held = histogram.ScoreHistogram.from_scores(p, q, (p[:100], q[:100]))
    events = confirmation.choose_events(held, [(5.0, 0.0)], 1_000, 1e-4)
    assert all(np.isfinite(e.threshold) and e.predicted_power < 1e-3 for e in events)

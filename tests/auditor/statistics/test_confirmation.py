"""Confirmation of one event on fresh counts (auditor.statistics.confirmation): the bounds are the
Clopper-Pearson bounds, refutation, eps_lo and the p-value agree, the test keeps its level at the
boundary of the claim, the power prediction matches simulation, and the event is chosen well."""

import numpy as np
import pytest
from scipy import stats

from ndis.auditor.statistics import bounds, confirmation, histogram


def _event(eps=0.5, delta=0.0, direction="forward", threshold=0.0):
    return confirmation.Event(eps, delta, direction, threshold, 0.5, 0.3, 0.5)


def test_the_bounds_are_clopper_pearson_at_half_the_level_per_side():
    c = confirmation.confirm(_event(), k_p=620, k_q=300, n=1_000, level=0.01)
    assert c.p_lower == pytest.approx(bounds.clopper_pearson_lower(620, 1_000, 0.005))
    assert c.q_upper == pytest.approx(bounds.clopper_pearson_upper(300, 1_000, 0.005))
    assert c.delta_lower == pytest.approx(c.p_lower - np.exp(0.5) * c.q_upper)
    assert c.estimate == pytest.approx(0.62 - np.exp(0.5) * 0.3)


def test_the_reverse_direction_counts_the_complement_with_d_prime_as_numerator():
    c = confirmation.confirm(_event(direction="reverse"), k_p=300, k_q=380, n=1_000, level=0.01)
    assert (c.k_num, c.k_den) == (620, 700)


def test_refutation_eps_lo_and_the_p_value_agree():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(200, 5_000))
        k_p, k_q = (int(k) for k in rng.integers(0, n + 1, 2))
        eps, delta = float(rng.uniform(0, 1.5)), float(rng.choice([0.0, 1e-3, 0.05]))
        level = float(10 ** rng.uniform(-6, -1))
        c = confirmation.confirm(_event(eps, delta), k_p, k_q, n, level)
        # one statement: delta(eps) > delta exactly when eps_lo(delta) > eps (up to rounding at equality)
        if abs(c.delta_lower - delta) > 1e-12:
            assert c.refuted == (c.eps_lo > eps)
        # the p-value: refuted at `level` exactly when p <= level (bisection to 30 / 2^36 in log10)
        if c.refuted:
            assert c.p_value <= level * (1 + 1e-8)
        elif c.p_value < 1:
            assert c.p_value >= level * (1 - 1e-8)


def test_the_test_keeps_its_level_at_the_boundary_of_the_claim():
    # P(S) = e^eps Q(S) exactly: delta(eps) of the event is 0 = the claimed delta, the hardest true
    # claim. 20,000 simulated confirmations at level 0.05: rejections at most 0.05 + 4 standard errors.
    rng = np.random.default_rng(1)
    eps, q, n, level, runs = 0.5, 0.2, 2_000, 0.05, 20_000
    k_num, k_den = rng.binomial(n, np.exp(eps) * q, runs), rng.binomial(n, q, runs)
    low = bounds.clopper_pearson_lower(k_num, n, level / 2)
    up = bounds.clopper_pearson_upper(k_den, n, level / 2)
    rate = np.mean(low - np.exp(eps) * up > 0)
    assert rate <= level + 4 * np.sqrt(level * (1 - level) / runs)
    # the same through `confirm`, on the first 100 draws
    refuted = [confirmation.confirm(_event(eps), kp, kq, n, level).refuted for kp, kq in zip(k_num[:100], k_den[:100])]
    assert refuted == list((low - np.exp(eps) * up > 0)[:100])


@pytest.mark.parametrize("num, den, n", [(0.3, 0.12, 2_000), (0.05, 0.012, 20_000), (0.6, 0.3, 500)])
def test_the_predicted_power_matches_simulation(num, den, n):
    # the normal approximation against 4,000 simulated Clopper-Pearson tests; tolerance 0.06 (4 binomial
    # standard errors of the simulation at most 0.032, plus the approximation's error, measured <= 0.02)
    eps, level = 0.7, 0.01
    rng = np.random.default_rng(2)
    k_num, k_den = rng.binomial(n, num, 4_000), rng.binomial(n, den, 4_000)
    simulated = np.mean(bounds.clopper_pearson_lower(k_num, n, level / 2)
                        - np.exp(eps) * bounds.clopper_pearson_upper(k_den, n, level / 2) > 0)
    assert float(confirmation.predicted_power(num, den, eps, 0.0, n, level)) == pytest.approx(simulated, abs=0.06)


def test_the_combined_p_value_is_the_bonferroni_minimum():
    levels = [0.001, 0.003, 0.016]
    assert confirmation.combined_p_value([0.5, 0.002, 0.2], levels, 0.02) == pytest.approx(0.002 * 0.02 / 0.003)
    assert confirmation.combined_p_value([], [], 0.05) == 1.0
    # <= alpha exactly when some round's p-value is below its level
    for ps in ([0.0011, 0.0031, 0.017], [0.0009, 1.0, 1.0], [1.0, 1.0, 0.016]):
        assert (confirmation.combined_p_value(ps, levels, 0.02) <= 0.02) == any(p <= a for p, a in zip(ps, levels))


def test_the_event_is_the_one_that_carries_the_violation():
    # Scores on D concentrate above 2 (P = 0.4 there, Q = 0.05): the forward event {s >= 2} carries
    # delta(0.5) = 0.4 - e^0.5 0.05 = 0.32; the reverse direction carries little.
    rng = np.random.default_rng(3)
    n = 4_000
    p = np.where(rng.random(n) < 0.4, 2.5, rng.uniform(0, 1.9, n))
    q = np.where(rng.random(n) < 0.05, 2.5, rng.uniform(0, 1.9, n))
    held = histogram.ScoreHistogram.from_scores(p, q, (p[:100], q[:100]))
    event = confirmation.choose_event(held, [(0.5, 0.0)], 1_000, 0.01)
    assert event.direction == "forward" and 1.9 <= event.threshold <= 2.5
    assert event.predicted_power > 0.99
    # among two claimed points, the one the mechanism violates
    event = confirmation.choose_event(held, [(3.0, 0.0), (0.5, 0.0)], 1_000, 0.01)
    assert event.eps == 0.5


def test_where_every_power_is_tiny_the_event_is_still_a_real_one():
    # P = Q and a claim of eps = 5: every predicted power underflows to 0, the normal scores still order
    # the events, and the choice is a finite threshold (not the empty event at +inf)
    rng = np.random.default_rng(4)
    p, q = rng.standard_normal(5_000), rng.standard_normal(5_000)
    held = histogram.ScoreHistogram.from_scores(p, q, (p[:100], q[:100]))
    event = confirmation.choose_event(held, [(5.0, 0.0)], 1_000, 1e-4)
    assert np.isfinite(event.threshold) and event.predicted_power < 1e-10

"""The segments scorer (auditor.scoring.segments): optimal partitioning, and what it finds on the zoo."""

import itertools
import math

import numpy as np
import pytest

from ndis import mechanisms
from ndis.auditor.scoring import scorers
from ndis.auditor.scoring.segments import _segments


def _penalised(p, q, starts, penalty):
    """The objective of `_segments`: -log-likelihood of each segment's label proportion, plus the penalty."""
    ends = list(starts[1:]) + [p.size]
    total = 0.0
    for s, e in zip(starts, ends):
        a, b = p[s:e].sum(), q[s:e].sum()
        total += penalty - sum(x * math.log(x / (a + b)) for x in (a, b) if x > 0)
    return total


@pytest.mark.parametrize("seed", range(6))
def test_dynamic_programme_finds_the_optimal_partition(seed):
    rng = np.random.default_rng(seed)
    p, q = rng.integers(0, 40, 8).astype(float), rng.integers(0, 40, 8).astype(float)
    penalty = [0.0, 1.0, 3.0, 10.0, 2.5, 0.5][seed]
    # brute force over all 2^7 partitions of the 8 bins
    want = min(_penalised(p, q, [0] + [i + 1 for i, cut in enumerate(cuts) if cut], penalty)
               for cuts in itertools.product((0, 1), repeat=p.size - 1))
    got = _segments(p, q, penalty)
    assert got[0] == 0 and np.all(np.diff(got) > 0)
    assert _penalised(p, q, list(got), penalty) == pytest.approx(want, rel=1e-12, abs=1e-9)


def test_a_step_in_the_ratio_is_found_and_flat_stretches_are_pooled():
    # One released value on (-1, 1): Q uniform, P uniform on each half with e^0.3 times the mass below 0,
    # so log p/q is one constant below 0 and another, 0.3 lower, above.
    rng = np.random.default_rng(2)
    n = 200_000
    lift = math.exp(0.3)
    v_q = rng.uniform(-1, 1, n)
    below = rng.random(n) < lift / (1 + lift)
    v_p = np.where(below, -rng.random(n), rng.random(n))
    scorer = scorers.make("segments").fit(v_p[:, None], v_q[:, None])
    edges = scorer._edges[0]
    assert np.any(np.abs(edges) < 0.02), edges                     # the step, within a few fine bins
    # log p/q on each side: log(2 lift / (1 + lift)) below, log(2 / (1 + lift)) above; standard error
    # of a half's smoothed log ratio about sqrt(2 / 100,000) = 0.0045, so 0.02 is over 4 of them.
    scores = scorer.log_odds(np.array([[-0.5], [-0.1], [0.1], [0.5]]))
    want = [math.log(2 * lift / (1 + lift))] * 2 + [math.log(2 / (1 + lift))] * 2
    np.testing.assert_allclose(scores, want, atol=0.02)


def test_the_extreme_percent_is_a_segment_of_its_own():
    # Q uniform on (0, 1); P has e^0.1 times Q's density ratio on the top 1% of values. One block pools
    # that 1% with the rest (its likelihood gain, about 4,000 rows x 2 x 0.025^2 = 5 nats, is below the
    # BIC penalty log(400,000)/2 = 6.4); the tail blocks cut at the 99% quantile and score it apart:
    # the top segment's smoothed log ratio has a standard error of sqrt(2 / 2,000) = 0.032.
    rng = np.random.default_rng(0)
    n, lift = 200_000, math.exp(0.1)
    v_q = rng.random(n)
    top = rng.random(n) < 0.01 * lift / (0.01 * lift + 0.99)
    v_p = np.where(top, 0.99 + 0.01 * rng.random(n), 0.99 * rng.random(n))
    probe = np.array([[0.5], [0.995]])
    pooled = scorers.make("segments", tails=()).fit(v_p[:, None], v_q[:, None]).log_odds(probe)
    assert pooled[1] == pooled[0]
    scorer = scorers.make("segments").fit(v_p[:, None], v_q[:, None])
    split = scorer.log_odds(probe)
    assert np.any(np.abs(scorer._edges[0] - 0.99) < 1e-3), scorer._edges[0]
    assert split[1] - split[0] == pytest.approx(0.1, abs=3 * 0.032)


def test_discrete_outputs_get_the_density_scorers_cells():
    rng = np.random.default_rng(3)
    X_p = rng.choice(3, size=(5_000, 2), p=[0.5, 0.3, 0.2]).astype(float)
    X_q = rng.choice(3, size=(4_000, 2), p=[0.3, 0.3, 0.4]).astype(float)
    grid = np.array(list(itertools.product(range(3), repeat=2)), dtype=float)
    segments = scorers.make("segments").fit(X_p, X_q).log_odds(grid)
    density = scorers.make("density").fit(X_p, X_q).log_odds(grid)
    np.testing.assert_allclose(segments, density, rtol=1e-12)
    unseen = scorers.make("segments").fit(X_p, X_q).log_odds(np.array([[7.0, 0.0]]))
    assert unseen[0] == pytest.approx(math.log(5_000 / 4_000))


def test_support_edge_is_the_top_segment():
    # Noisy max with exponential noise returning the value, q = 1^5 against q' = (2, 0, 0, 0, 0), eps0 = 0.7:
    # values in [1, 2) occur under q only; they are all of delta(0.7).
    mech = mechanisms.get("zoo-noisy-max-exp-value", eps0=0.7)
    D, D_prime = mech.patterns(5)["one above rest below"]
    rng = np.random.default_rng(0)
    fit = [mech.sample(data, 200_000, rng).reshape(-1, 1) for data in (D, D_prime)]
    scorer = scorers.make("segments").fit(*fit)
    s = scorer.log_odds(np.array([[1.2], [1.9], [2.5]]))
    assert s[0] == s[1] > 5 > s[2]


def test_segments_does_not_apply_to_vectors_of_continuous_values():
    rng = np.random.default_rng(1)
    X_p, X_q = rng.normal(size=(20_000, 2)), rng.normal(0.1, size=(20_000, 2))
    with pytest.raises(ValueError, match="does not apply"):
        scorers.make("segments").fit(X_p, X_q)


def test_as_an_auto_candidate_it_takes_codes_with_a_value_only():
    # "auto" makes it with codes_and_value=True: a lone value and codes alone are the density scorer's.
    rng = np.random.default_rng(5)
    lone = rng.laplace(size=(5_000, 1)), rng.laplace(0.2, size=(5_000, 1))
    codes = rng.choice(3, size=(5_000, 2)).astype(float), rng.choice(3, size=(5_000, 2)).astype(float)
    both = [np.hstack([c, v]) for c, v in zip(codes, lone)]
    options = scorers.AUTO_OPTIONS["segments"]
    with pytest.raises(ValueError, match="lone released value"):
        scorers.make("segments", **options).fit(*lone)
    with pytest.raises(ValueError, match="discrete codes alone"):
        scorers.make("segments", **options).fit(*codes)
    probe = np.hstack([np.zeros((3, 2)), [[-2.0], [0.1], [2.0]]])
    np.testing.assert_array_equal(scorers.make("segments", **options).fit(*both).log_odds(probe),
                                  scorers.make("segments").fit(*both).log_odds(probe))
    assert scorers.make("segments").fit(*lone).log_odds(probe[:, 2:]).shape == (3,)


def test_isvt4_flat_violating_stretch_is_scored_above_eps0():
    # iSVT4 (Lyu, Su & Li 2017, Algorithm 3), eps0 = 0.2, "all above" (q = 1^5, q' = 2^5): when the first
    # answer above the threshold is the 4th or 5th and its released value is below 1, log p/q is exactly
    # 0.4 or 0.5 (theory.zoo.isvt4_log_ratio), the stretch that carries delta(0.2) = 1.2e-3; far above
    # the queries it is about 0. Fitted on 1.5 x 10^6 rows per side (seeds 4, 6, 7, 8 measured), the
    # segments covering the stretch scored 0.39-0.53 and the last ones 0.01-0.05, each the smoothed log
    # ratio of some 5,000 rows a side (standard error about 0.02).
    mech = mechanisms.get("zoo-isvt4", eps0=0.2)
    D, D_prime = mech.patterns(5)["all above"]
    rng = np.random.default_rng(4)
    scorer = scorers.make("segments").fit(mech.sample(D, 1_500_000, rng), mech.sample(D_prime, 1_500_000, rng))

    def output(first, value):
        codes = np.where(np.arange(5) < first, 0.0, -1.0)
        codes[first] = 1.0
        values = np.zeros(5)
        values[first] = value
        return np.concatenate([codes, values])

    X = np.array([output(first, v) for first in (3, 4) for v in (-3.0, -0.5, 40.0)])
    truth = mech.log_ratio(X, D, D_prime)
    np.testing.assert_allclose(truth, [0.4, 0.4, 0.0, 0.5, 0.5, 0.0], atol=0.02)
    s = scorer.log_odds(X)
    assert np.all(s[[0, 1, 3, 4]] > 0.2) and np.all(s[[2, 5]] < 0.2), s

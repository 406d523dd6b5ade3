"""The zoo (mechanisms.zoo): samplers agree with the literal algorithms and with the exact laws;
every correct algorithm satisfies its claim exactly on every StatDP input pattern and every buggy
one violates it on at least one (Ding et al. 2018, StatDP; Lyu, Su & Li 2017; Bichsel et al. 2021).

Tolerances as in checks.py: KS p >= 1e-4 and moments within 4 standard errors; outcome
frequencies within 4 standard errors of the exact probabilities. Seeds are fixed.
"""

import math

import numpy as np
import pytest

from ndis import mechanisms
from ndis.mechanisms import zoo
from ndis.theory import zoo as exact

from .checks import same_distribution

N = 20_000
K = 5
EPS0 = 0.5

#: (name, params): every zoo mechanism at least once (test_samplers.py checks registry coverage).
CASES = [(cls.name, {"eps0": EPS0}) for cls in zoo.CLASSES] + [
    ("zoo-svt", {"eps0": EPS0, "c": 2}), ("zoo-isvt3", {"eps0": EPS0, "c": 2}), ("zoo-isvt4", {"eps0": EPS0, "c": 2}),
    ("zoo-laplace", {"eps0": 1.0, "sensitivity": 2.0}),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]
PAIRS = zoo.patterns(K)


def test_every_zoo_mechanism_is_registered_and_described():
    zoo_names = [name for name in mechanisms.names() if name.startswith("zoo-")]
    assert zoo_names == [cls.name for cls in zoo.CLASSES] and len(zoo_names) == 15
    described = mechanisms.describe()
    assert all("eps0:" in described[name] and "claim" in described[name] for name in zoo_names)
    assert {cls.correct for cls in zoo.CLASSES} == {True, False}


def test_statdp_patterns():
    assert tuple(PAIRS) == zoo.PATTERN_NAMES
    D, D_prime = PAIRS["one below rest above"]
    np.testing.assert_array_equal(D, np.ones((1, K)))
    np.testing.assert_array_equal(D_prime, [[0, 2, 2, 2, 2]])
    np.testing.assert_array_equal(PAIRS["x shape"][0], [[1, 1, 0, 0, 0]])
    np.testing.assert_array_equal(PAIRS["x shape"][1], [[0, 0, 1, 1, 1]])
    assert all(np.max(np.abs(a - b)) == 1 for a, b in PAIRS.values())
    assert list(mechanisms.get("zoo-histogram").patterns(K)) == ["one above", "one below"]
    assert list(mechanisms.get("zoo-svt").patterns(K)) == list(zoo.PATTERN_NAMES)
    np.testing.assert_array_equal(zoo.patterns(3, sensitivity=2.0)["all above"][1], [[4, 4, 4]])


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_fast_sampler_matches_literal(name, params):
    mech = mechanisms.get(name, **params)
    for pattern in ("one above rest below", "x shape"):
        D = PAIRS[pattern][1] * mech.sensitivity
        fast = mech.sample(D, N, np.random.default_rng(1))
        literal = mech.sample_literal(D, N, np.random.default_rng(2))
        assert fast.shape == literal.shape == (N, *mech.output_shape(D))
        assert same_distribution(fast, literal) == []


def _frequencies_match(samples, outcomes, probabilities):
    """Every outcome's frequency within 4 standard errors of its exact probability (and none unlisted)."""
    keys = [tuple(row) for row in np.asarray(samples).tolist()]
    counts = {outcome: 0 for outcome in outcomes}
    for key in keys:
        counts[tuple(int(v) for v in key)] += 1
    for outcome, p in zip(outcomes, probabilities):
        se = math.sqrt(max(p * (1 - p), 1e-12) / len(keys))
        assert abs(counts[outcome] / len(keys) - p) <= 4 * se + 1e-9, (outcome, counts[outcome] / len(keys), p)


@pytest.mark.parametrize("name", ["zoo-svt", "zoo-isvt1", "zoo-isvt2", "zoo-isvt3", "zoo-isvt4"])
def test_svt_outputs_follow_the_exact_law(name):
    mech = mechanisms.get(name, eps0=EPS0, c=2)
    q = PAIRS["x shape"][1]
    outcomes, P = exact.svt_probabilities(q[0], mech.T, *mech.scales(), mech.cutoff())
    codes = mech.sample(q, N, np.random.default_rng(7))[:, :K]
    _frequencies_match(codes, outcomes, P)


@pytest.mark.parametrize("name", ["zoo-noisy-max-lap-index", "zoo-noisy-max-exp-index"])
def test_noisy_max_index_follows_the_exact_law(name):
    mech = mechanisms.get(name, eps0=EPS0)
    q = PAIRS["one above rest below"][1]
    P = exact.noisy_max_index_probabilities(q[0], mech.scale(), mech.noise)
    _frequencies_match(mech.sample(q, N, np.random.default_rng(8)), [(i,) for i in range(K)], P)


def test_isvt4_releases_the_noisy_answers_where_it_says_above():
    mech = mechanisms.get("zoo-isvt4", eps0=EPS0, c=2)
    out = mech.sample(PAIRS["all above"][1], 2000, np.random.default_rng(4))
    codes, values = out[:, :K], out[:, K:]
    assert set(np.unique(codes)) <= {-1.0, 0.0, 1.0} and np.all((codes == 1) == (values != 0))
    assert np.all((codes == 1).sum(axis=1) <= 2) and np.all(np.diff(codes == -1, axis=1) >= 0)


#: StatDP's patterns, those that broke the SVT variants first, so that a lazy search stops early
SEARCH_ORDER = ("half half", "x shape", *(name for name in zoo.PATTERN_NAMES if name not in ("half half", "x shape")))


def _deltas(mech, eps):
    """The exact delta at eps of each of the mechanism's patterns, both directions (lazily)."""
    pairs = mech.patterns(K)
    return (mech.exact_delta(eps, *pair) for name in SEARCH_ORDER if name in pairs
            for pair in (pairs[name], pairs[name][::-1]))


@pytest.mark.parametrize("cls", [cls for cls in zoo.CLASSES if cls.correct], ids=lambda cls: cls.name)
def test_correct_algorithms_satisfy_their_claim_on_every_pattern(cls):
    for eps0 in (0.2, 1.0):
        mech = cls(eps0=eps0)
        eps, delta = mech.claim()
        assert max(_deltas(mech, eps)) <= delta * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("cls", [cls for cls in zoo.CLASSES if not cls.correct], ids=lambda cls: cls.name)
def test_buggy_algorithms_violate_their_claim_on_some_pattern(cls):
    for eps0 in (0.2, 0.5):          # zoo-histogram-eps is private for eps0 >= 1
        mech = cls(eps0=eps0)
        eps, delta = mech.claim()
        assert any(value > delta + 1e-4 for value in _deltas(mech, eps))


def test_known_true_epsilons():
    one_above = PAIRS["one above"]
    assert mechanisms.get("zoo-histogram-eps", eps0=0.1).exact_epsilon(*one_above) == pytest.approx(10.0)  # DP-Sniper's NoisyHist2
    assert mechanisms.get("zoo-laplace-half", eps0=0.3).exact_epsilon(*one_above) == pytest.approx(0.6)
    assert mechanisms.get("zoo-laplace", eps0=0.3).exact_epsilon(*one_above) == pytest.approx(0.3)
    assert mechanisms.get("zoo-gaussian").exact_epsilon(*one_above) == math.inf
    assert mechanisms.get("zoo-noisy-max-exp-value", eps0=EPS0).exact_epsilon(*PAIRS["all above"]) == math.inf
    assert mechanisms.get("zoo-isvt1", eps0=EPS0).exact_epsilon(*PAIRS["one above"][::-1]) == math.inf
    # Lyu et al. 2017, Theorem 5 (Algorithm 4 is ((1 + 6c)/4) eps-DP): iSVT3 lies between the claim and that bound
    for c in (1, 2):
        mech = mechanisms.get("zoo-isvt3", eps0=EPS0, c=c)
        worst = max(max(mech.exact_epsilon(D, Dp), mech.exact_epsilon(Dp, D)) for D, Dp in PAIRS.values())
        assert EPS0 < worst <= (1 + 6 * c) / 4 * EPS0


def test_inputs_are_checked():
    mech = mechanisms.get("zoo-svt", eps0=1.0)
    with pytest.raises(ValueError, match=r"shape \(1, k\)"):
        mech.sample(np.ones((2, 3)), 5, 0)
    with pytest.raises(ValueError, match="not neighbours"):
        mech.exact_delta(0.0, np.ones((1, 3)), 3 * np.ones((1, 3)))
    assert not mechanisms.get("zoo-laplace").is_neighbour(*PAIRS["all above"])
    assert mechanisms.get("zoo-gaussian", delta0=1e-3).claim(0.7) == (0.7, 1e-3)
    with pytest.raises(ValueError, match="eps0 must be"):
        mechanisms.get("zoo-laplace", eps0=0)
    with pytest.raises(NotImplementedError, match="c = 1 only"):
        mechanisms.get("zoo-isvt4", c=2).exact_delta(0.0, *PAIRS["one above"])


def test_isvt4_exact_curve_bounds_its_codes_and_matches_the_sampler():
    """c = 1: delta dominates that of the codes alone (a post-processing); at eps = -30 it is the
    total mass minus e^-30, so the released value's law and P(all below) sum to 1; the sampler's
    positions of the first answer 'above' follow the exact law of the codes."""
    mech = mechanisms.get("zoo-isvt4", eps0=EPS0)
    D, D_prime = PAIRS["half half"]
    b1, b2 = mech.scales()
    assert mech.exact_delta(EPS0, D, D_prime) >= mech.codes_delta(EPS0, D, D_prime) > 0
    assert mech.exact_delta(-30.0, D, D_prime) == pytest.approx(-math.expm1(-30.0), abs=1e-8)
    P = exact.svt_probabilities(D[0], mech.T, b1, b2, 1)[1]      # the codes' law: positions of the first 1
    samples = mech.sample(D, N, np.random.default_rng(9))
    first = np.where((samples[:, :K] == 1).any(axis=1), np.argmax(samples[:, :K] == 1, axis=1), K)
    frequencies = np.bincount(first, minlength=K + 1) / N
    se = np.sqrt(P * (1 - P) / N)
    assert np.all(np.abs(frequencies - P) <= 4 * se + 1e-9)


@pytest.mark.parametrize("cls", zoo.CLASSES)
def test_log_ratio_level_sets_have_the_exact_masses(cls):
    """The pointwise ln p/q (the Bayes-optimal score) and the exact level sets are computed separately
    (closed forms; outcome probabilities; Brent's roots; tables): the frequencies of {ln p/q > t} among
    draws from D and D' must match `level_set(t)` within 5 binomial standard errors (plus 1e-6 for
    the level sets' own error), at levels around eps0."""
    mech = cls(eps0=0.7)
    patterns = mech.patterns(5)  # L1 and L2 relations: the first pattern (one differing query)
    D, D_prime = patterns["half half" if "half half" in patterns else next(iter(patterns))]
    rng = np.random.default_rng(7)
    n = 100_000
    loss_p = mech.log_ratio(mech.sample(D, n, rng), D, D_prime)
    loss_q = mech.log_ratio(mech.sample(D_prime, n, rng), D, D_prime)
    assert not np.isnan(loss_p).any() and not np.isnan(loss_q).any()
    for t in (0.05, 0.3, 0.55, 0.9):  # off the loss's atoms and plateaus at multiples of eps0 / 2
        P, Q = mech.level_set(t, D, D_prime)
        for losses, mass in ((loss_p, P), (loss_q, Q)):
            se = math.sqrt(max(mass * (1 - mass), 1 / n) / n)
            assert abs(np.mean(losses > t) - mass) < 5 * se + 1e-6, (t, np.mean(losses > t), mass)

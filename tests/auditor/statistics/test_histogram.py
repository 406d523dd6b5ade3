"""Streaming estimation (auditor.statistics.histogram): exact counts at the tested events, order-free merging,
the stated error of the point estimate, and audits that stream equal audits that keep every score."""

import warnings

import numpy as np
import pytest

from ndis.auditor import Execution, audit
from ndis.auditor.statistics import bounds, histogram, spectrum


def _streamed(valid, held_p, held_q, chunks=7, seed=0, table=False, sort=False):
    """The held-out scores counted chunk by chunk, the chunks added in a random order; with `table`, the
    bins found by `BinLocator`'s table (sorted with `sort`) instead of sorted binary searches."""
    hist = histogram.ScoreHistogram.empty(histogram.edges_for(valid))
    binner = histogram.Binner(np.asarray, hist.edges, n_scores=2**62 if table else 0, sort=sort)
    assert (binner.locate is not None) == table
    parts = [(side, chunk) for side, scores in (("p", held_p), ("q", held_q)) for chunk in np.array_split(scores, chunks)]
    for k in np.random.default_rng(seed).permutation(len(parts)):
        hist.add(binner(parts[k][1]), parts[k][0])
    return hist


def _scores(rng, n, atoms=False):
    p, q = rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n)
    if atoms:  # ties and support edges: rounded scores and infinite log-odds
        p, q = np.round(p, 1), np.round(q, 1)
        p[:5], q[:3] = np.inf, -np.inf
    return p, q


@pytest.mark.parametrize("atoms", [False, True])
def test_counts_at_every_validation_threshold_are_exact_and_independent_of_chunk_order(atoms):
    rng = np.random.default_rng(1)
    valid, (held_p, held_q) = _scores(rng, 2_000, atoms), _scores(rng, 30_000, atoms)
    hist = _streamed(valid, held_p, held_q)
    assert np.array_equal(hist.p, _streamed(valid, held_p, held_q, chunks=13, seed=5).p)
    thresholds = spectrum.empirical_roc(*valid).thresholds
    k_p, k_q = hist.counts(thresholds)
    assert np.array_equal(k_p, [np.sum(held_p >= t) for t in thresholds])
    assert np.array_equal(k_q, [np.sum(held_q >= t) for t in thresholds])
    assert hist.counts(-np.inf) == (held_p.size, held_q.size)
    with pytest.raises(ValueError, match="not an edge"):
        hist.counts(np.nextafter(hist.edges[10], np.inf))


@pytest.mark.parametrize("seed", range(5))
def test_the_edge_sweep_is_within_its_stated_error_of_the_full_sweep(seed):
    rng = np.random.default_rng(seed)
    valid, (held_p, held_q) = _scores(rng, 1_000), _scores(rng, 50_000)
    hist, eps = _streamed(valid, held_p, held_q), np.linspace(-0.5, 3, 36)
    full = spectrum.empirical_roc(held_p, held_q)
    for direction in spectrum.DIRECTIONS:
        exact, _ = spectrum.delta_sweep(full, eps, direction)
        edges, _ = spectrum.delta_sweep(hist.roc(), eps, direction)
        error = hist.sweep_error(eps, direction)
        assert np.all(edges <= exact + 1e-12) and np.all(exact <= edges + error + 1e-12)
        # a bin holds ~1/4 of a local mean gap of the 2,000 pooled validation scores, ~1.3e-4 of the mass; the
        # worst of ~9,000 bins, with held-out noise and e^eps in min(num, e^eps den), stays below 1e-3
        assert np.all(error < 1e-3)
    complete = histogram.ScoreHistogram.from_scores(held_p, held_q, valid)
    assert np.array_equal(spectrum.delta_sweep(complete.roc(), eps, "forward")[0],
                          spectrum.delta_sweep(full, eps, "forward")[0])
    assert np.all(complete.sweep_error(eps, "forward") == 0)


@pytest.mark.parametrize("seed", range(3))
def test_plain_validation_edges_keep_the_sweep_error_below_its_share_of_the_dkw_radius(seed):
    # `refine_for` leaves the validation scores unrefined only when their largest gap, ~2 ln(n)/n of a
    # side's mass, is below SWEEP_SHARE of the held-out DKW radius; the measured sweep error must be too.
    alpha, n_held = 0.05, 100_000
    rng = np.random.default_rng(seed)
    valid, (held_p, held_q) = _scores(rng, 10_000), _scores(rng, n_held)
    assert histogram.refine_for(20_000, n_held, alpha) == 1
    assert histogram.refine_for(20_000, 4 * n_held, alpha) == histogram.REFINE  # a 2x smaller radius: refined
    hist = histogram.ScoreHistogram.empty(histogram.edges_for(valid, refine=1))
    assert hist.edges.size == np.unique(np.concatenate(valid)).size  # the validation scores alone
    binner = histogram.Binner(np.asarray, hist.edges)
    hist.add(binner(held_p), "p").add(binner(held_q), "q")
    radius = bounds.dkw_radius(n_held, alpha / 2)
    for direction in spectrum.DIRECTIONS:
        assert np.all(hist.sweep_error(np.linspace(0, 2, 21), direction) <= histogram.SWEEP_SHARE * radius)


def test_nan_scores_are_refused():
    binner = histogram.Binner(np.asarray, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="NaN"):
        binner(np.array([0.5, np.nan]))


def _gaussian(data, n, rng):
    return data + rng.standard_normal((n, 1))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_streamed_audit_gives_the_bounds_certificates_and_verdict_of_an_in_memory_audit(n_jobs):
    kwargs = dict(eps=np.linspace(0, 2, 21), n_samples=40_000, seed=11, scorer="quadratic", claimed=(0.5, 1e-3),
                  progress=False)
    run = dict(n_jobs=n_jobs, chunk_size=1_500)
    streamed = audit(_gaussian, np.array([1.0]), np.array([0.0]), execution=Execution(**run), **kwargs)
    kept = audit(_gaussian, np.array([1.0]), np.array([0.0]), execution=Execution(streaming=False, **run), **kwargs)
    assert np.array_equal(streamed.lower.forward, kept.lower.forward)
    assert np.array_equal(streamed.lower.reverse, kept.lower.reverse) and streamed.lower.delta.max() > 0.1
    assert streamed.verdict == kept.verdict and streamed.verdict == "violation"
    assert [c.to_dict() for c in streamed.certificates] == [c.to_dict() for c in kept.certificates]
    error = streamed.info["estimation"]["sweep_error"]
    for direction in spectrum.DIRECTIONS:
        gap = getattr(kept.estimate, direction) - getattr(streamed.estimate, direction)
        assert np.all(gap >= -1e-12) and np.all(gap <= np.array(error[direction]) + 1e-12)
        assert np.all(getattr(streamed.upper, direction) >= getattr(kept.upper, direction) - 1e-12)
    assert kept.info["estimation"]["held_out"] == "kept in memory"
    assert streamed.info["estimation"]["held_out"] == "streamed as counts"


def test_edges_where_tiny_gaps_follow_large_ones():
    # Scores spanning +-700 with a run of gaps of 1e-15 (a true likelihood ratio's plateau): the local
    # mean gap must stay positive (a cumulative-sum difference cancelled to 0 there and divided by it).
    scores = np.concatenate([np.linspace(-700, 700, 1000), 0.25 + np.arange(200) * 1e-15])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        edges = histogram.edges_for([scores])
    assert np.all(np.diff(edges) > 0) and np.isin(np.unique(scores), edges).all()


def _adversarial_scores(rng, edges, n):
    """Scores that stress a bin look-up: draws, every edge itself and its two floating-point
    neighbours, +-inf and the largest floats."""
    picked = edges[np.isfinite(edges)][:: max(edges.size // 5_000, 1)]
    return np.concatenate([rng.standard_normal(n), picked, np.nextafter(picked, np.inf),
                           np.nextafter(picked, -np.inf), [np.inf, -np.inf, 1.7e308, -1.7e308, 0.0, -0.0]])


@pytest.mark.parametrize("law", ["normal", "cauchy", "clustered", "wide", "atoms"])
def test_bin_locator_is_the_binary_search_bit_for_bit(law):
    """`BinLocator` (buckets, a table and a few steps) gives np.searchsorted(edges, s, "right") for
    every score, on edges made by `edges_for` from scores of very different spreads: heavy tails
    (crowded buckets fall back to the search), two scales 1e-6 and 1e2 apart, +-1e300, ties."""
    rng = np.random.default_rng(3)
    draw = {"normal": lambda n: rng.normal(0.0, 0.3, n), "cauchy": lambda n: rng.standard_cauchy(n),
            "clustered": lambda n: np.where(rng.random(n) < 0.5, 1e-6 * rng.standard_normal(n), 1e2 * rng.standard_normal(n)),
            "wide": lambda n: 1e300 * rng.standard_normal(n), "atoms": lambda n: np.round(rng.standard_normal(n), 1)}[law]
    with np.errstate(over="ignore"):
        edges = histogram.edges_for([draw(20_000), draw(20_000)])
    locate = histogram.BinLocator(edges)
    assert (locate.table is not None) == (law != "atoms")  # the atoms' few edges are searched directly
    scores = np.concatenate([draw(50_000), _adversarial_scores(rng, edges, 1_000)])
    assert np.array_equal(locate(scores), np.searchsorted(edges, scores, side="right"))


@pytest.mark.parametrize("table, sort", [(False, False), (True, False), (True, True)],
                         ids=["sorted searches", "bucket table", "bucket table, bins sorted"])
@pytest.mark.parametrize("chunk", [997, 40_000])  # chunks sent as bins, and as counts of every bin
def test_streamed_histogram_equals_the_binary_search_histogram(chunk, table, sort):
    """Counts at every validation score (the thresholds of every tested event) and in every bin are
    those of a histogram made by np.searchsorted on the unsorted scores, whichever form the chunks
    travel in and however their bins are found."""
    rng = np.random.default_rng(4)
    valid, (held_p, held_q) = _scores(rng, 5_000), _scores(rng, 60_000)
    hist = _streamed(valid, held_p, held_q, chunks=60_000 // chunk, table=table, sort=sort)
    assert hist.edges.size > histogram.BinLocator.SMALL  # large enough for the bucket table
    for side, held in (("p", held_p), ("q", held_q)):
        expected = np.bincount(np.searchsorted(hist.edges, held, side="right"), minlength=hist.edges.size + 1)
        assert np.array_equal(getattr(hist, side), expected)
    thresholds = spectrum.empirical_roc(*valid).thresholds
    assert np.array_equal(hist.counts(thresholds)[0], [np.sum(held_p >= t) for t in thresholds])


def test_sweep_error_is_the_maximum_over_every_bin():
    """The frontier computation of err(eps) equals max over bins of min(P-hat, e^eps Q-hat), bit for bit."""
    rng = np.random.default_rng(5)
    valid, (held_p, held_q) = _scores(rng, 3_000), _scores(rng, 20_000)
    hist = _streamed(valid, held_p, held_q)
    eps = np.linspace(-1.0, 3.0, 41)
    for direction in spectrum.DIRECTIONS:
        p, q = hist.p / hist.n_p, hist.q / hist.n_q
        num, den = (p, q) if direction == "forward" else (q, p)
        both = (num > 0) & (den > 0)
        brute = [float(np.max(np.minimum(num[both], np.exp(e) * den[both]), initial=0.0)) for e in eps]
        assert np.array_equal(hist.sweep_error(eps, direction), brute)


def test_sweep_error_with_counts_too_large_to_pair_in_a_table():
    """Bins of millions of scores (atoms) make the codes of the count pairs too many for a table:
    the distinct pairs are then found by sorting, and err(eps) is still the maximum over every bin."""
    edges = np.arange(6.0)
    p = np.array([0, 3_000_000, 5, 7, 3_000_000, 1, 0])
    q = np.array([4, 2_000_000, 0, 9, 2_500_000, 1, 2])
    hist = histogram.ScoreHistogram(edges, p, q)
    eps = np.linspace(-1.0, 3.0, 9)
    for direction in spectrum.DIRECTIONS:
        num, den = (p / p.sum(), q / q.sum()) if direction == "forward" else (q / q.sum(), p / p.sum())
        both = (num > 0) & (den > 0)
        brute = [float(np.max(np.minimum(num[both], np.exp(e) * den[both]))) for e in eps]
        assert np.array_equal(hist.sweep_error(eps, direction), brute)


@pytest.mark.parametrize("law", ["normal", "tiny gaps", "signed zeros", "infinities", "denormals"])
def test_edges_are_the_sorted_distinct_union_of_their_parts(law):
    """`edges_for` is the sorted distinct union of the scores, each gap's equally spaced points and the
    points beyond the extremes, bit for bit as its docstring describes them (a reference gap by gap)."""
    rng = np.random.default_rng(23)
    scores = {"normal": lambda: rng.normal(0, 1, 20_000),
              "tiny gaps": lambda: np.concatenate([np.linspace(-700, 700, 1000), 0.25 + np.arange(200) * 1e-15]),
              "signed zeros": lambda: np.concatenate([rng.normal(0, 1, 1_000), [0.0]]),
              "infinities": lambda: np.concatenate([rng.normal(0, 1, 1_000), [np.inf, -np.inf, -0.0]]),
              "denormals": lambda: np.array([0.0, 5e-324, 1e-323, 1.0])}[law]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        edges = histogram.edges_for([scores])
        values = np.unique(scores)
        finite = values[np.isfinite(values)]
        gaps = np.diff(finite)
        half = min(histogram.WINDOW // 2, gaps.size)
        padded = np.concatenate([np.full(half, gaps[:half].mean()), gaps, np.full(half, gaps[-half:].mean())])
        local = np.convolve(padded, np.full(2 * half + 1, 1.0 / (2 * half + 1)), mode="valid")
        parts = np.clip(np.ceil(histogram.REFINE * gaps / local), 1, histogram.MAX_PARTS).astype(int)
        inner = [finite[i] + np.arange(1, parts[i]) * (gaps[i] / parts[i]) for i in range(gaps.size)]
        reach = 2.0 ** (np.arange(1, histogram.DOUBLINGS * histogram.REFINE + 1) / histogram.REFINE) - 1
        expected = np.unique(np.concatenate([values, *inner, finite[0] - local[0] * reach, finite[-1] + local[-1] * reach]))
    assert np.array_equal(edges, expected) and np.array_equal(np.signbit(edges), np.signbit(expected))

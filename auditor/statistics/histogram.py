"""Held-out scores as counts on fixed edges: exact at every event the audit tests, mergeable, bounded memory.

Every event the audit tests — the level sets {s >= t} behind the lower bound, the certified
epsilons and the verdict — is chosen on the validation split, so its threshold t is a validation
score. A histogram of the held-out scores whose edges include every validation score therefore
gives the exact held-out count of every such event, in memory that does not grow with the number
of held-out samples: chunks are counted where they are drawn and only integer counts travel and
are added (in any order: the sum is the same on 1, 2 or N workers, with joblib or Dask).

The point estimate delta-hat(eps) = max_t P-hat(S_t) - e^eps Q-hat(S_t) runs over the held-out
thresholds; on the histogram it runs over the edges only. For t between consecutive edges a < b,
S_t lies between S_b and S_a, so the full sweep exceeds the edge sweep by at most

    err(eps) = max over bins of min(P-hat(bin), e^eps Q-hat(bin))      (forward; swapped in reverse),

which `ScoreHistogram.sweep_error` computes from the counts and the audit reports beside the
estimate (and adds to the upper band, which stays valid). Extra edges between validation scores
(`edges_for`) make the bins, and so the error, smaller.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import bounds
from .spectrum import EmpiricalROC

#: Parts per local mean gap between consecutive distinct validation scores (`edges_for`): the sweep
#: error is about the held-out mass of one part.
REFINE = 4
#: The validation scores alone are the edges when their largest gap would add less than this share
#: of the DKW radius the upper band adds anyway (`refine_for`).
SWEEP_SHARE = 0.25
#: Gaps in the local mean, the most parts a gap is cut into, doublings of distance beyond the extremes.
WINDOW, MAX_PARTS, DOUBLINGS = 64, 1024, 40


def refine_for(n_validation: int, n_held: int, alpha: float) -> int:
    """`REFINE`, or 1 (no edges between the validation scores) when the plain scores already resolve
    the sweep: the largest of the gaps between n pooled validation scores holds about ln(n)/n of their
    pooled law, so at most 2 ln(n)/n of either side's, which bounds the sweep error; below
    `SWEEP_SHARE` of the one-sided DKW radius of n_held held-out scores at alpha / 2 (the radius the
    upper band adds for each side), the extra edges would refine a small part of the band at the cost
    of a larger histogram (at 10^7 samples per side, 2.26 million edges instead of 0.5 million)."""
    largest_gap = 2 * np.log(max(n_validation, 2)) / max(n_validation, 2)
    return 1 if largest_gap <= SWEEP_SHARE * bounds.dkw_radius(max(n_held, 1), alpha / 2) else REFINE


def edges_for(validation_scores, refine: int = REFINE) -> np.ndarray:
    """Ascending edges: every distinct validation score, and equally spaced points inside each gap
    between consecutive finite ones. A gap holds about 1/n of the mass, but the largest of n
    spacings holds about log(n)/n, so a gap is cut into `refine` parts per local mean gap (the mean
    of the `WINDOW` gaps around it) it spans: bins of about 1/(refine n) each. Beyond the extreme
    validation scores, where the larger held-out sample reaches further, edges at `refine` per
    doubling of the distance, up to 2^`DOUBLINGS` local mean gaps."""
    values = np.unique(np.concatenate([np.ravel(v) for v in validation_scores]).astype(float))
    if np.isnan(values).any():
        raise ValueError("the scorer returned NaN on validation samples")
    finite = values[np.isfinite(values)]
    if refine <= 1 or finite.size < 2:
        return values
    gaps = np.diff(finite)
    half = min(WINDOW // 2, gaps.size)
    padded = np.concatenate([np.full(half, gaps[:half].mean()), gaps, np.full(half, gaps[-half:].mean())])
    # A moving mean by convolution, not by differences of a cumulative sum: those cancel to 0 (or
    # below) where tiny gaps follow large ones, e.g. scores spanning +-700 with gaps of 1e-15.
    local = np.convolve(padded, np.full(2 * half + 1, 1.0 / (2 * half + 1)), mode="valid")
    parts = np.clip(np.ceil(refine * gaps / local), 1, MAX_PARTS).astype(np.int64)
    inner_per_gap = parts - 1
    first = np.repeat(np.cumsum(inner_per_gap) - inner_per_gap, inner_per_gap)
    j = np.arange(first.size) - first + 1  # 1 .. parts - 1 within each gap
    inner = np.repeat(finite[:-1], inner_per_gap) + j * np.repeat(gaps / parts, inner_per_gap)
    reach = 2.0 ** (np.arange(1, DOUBLINGS * refine + 1) / refine) - 1
    left, right = finite[0] - local[0] * reach, finite[-1] + local[-1] * reach
    return np.unique(np.concatenate([values, inner, left, right]))


class BinLocator:
    """b(s) = the number of edges <= s (`np.searchsorted(edges, s, side="right")`), bit for bit, at a
    few passes over the scores and ONE random read of a table per score, instead of a binary search
    of ~21 dependent reads through megabytes of edges.

    The range [lo, hi] of the finite edges (but about 0.2% at each end) is cut into K =
    `PER_EDGE` x (edges in it) buckets of equal width: bucket(s) = clip(floor(x(s) + 1), 0, K + 2)
    with x(s) = (s - lo) K / (hi - lo); bucket 0 takes everything below lo, the last everything
    above hi. bucket() is computed in floating point for the edges and the scores alike, and it is
    monotone (s <= s' gives bucket(s) <= bucket(s'): each step rounds monotonically), so every edge
    of a lower bucket is < s and every edge of a higher bucket is > s. Hence b(s) = (edges in the
    buckets before s's) + (edges e <= s in s's bucket). The table holds, for each bucket, both
    numbers a score needs, side by side in one complex entry (one cache line, one read): the
    bucket's first edge (or the next bucket's, > s, or NaN past the last, when it has none) and the
    count of edges before it. In a bucket of at most one edge, b(s) = count + (s >= first edge);
    a bucket of two or more edges is flagged by a negative count, and its scores step through its
    edges, at most `STEPS` steps, a score still short of its place (a crowded bucket, or beyond lo
    or hi) being placed by `np.searchsorted` itself. So the held-out histogram, and every count and
    report made from it, are exactly the binary search's. Scores must not be NaN (`Binner` refuses
    them). Counts are stored as float64 (exact below 2^53 edges)."""

    PER_EDGE, STEPS, SMALL = 3, 4, 4096  # buckets per edge; steps in a bucket; fewer edges: plain search

    def __init__(self, edges: np.ndarray):
        self.edges = np.asarray(edges, dtype=float)
        self.table = None
        finite = np.flatnonzero(np.isfinite(self.edges))
        if finite.size < self.SMALL:
            return
        first, last = finite[finite.size // 512], finite[-1 - finite.size // 512]
        self.lo, hi, self.k = self.edges[first], self.edges[last], self.PER_EDGE * (last - first + 1)
        with np.errstate(over="ignore", divide="ignore"):
            self.scale = self.k / (hi - self.lo)
        if not np.isfinite(self.scale) or self.scale <= 0:
            return
        self.padded = np.append(self.edges, np.nan)  # s >= NaN is False: no step beyond the last edge
        through = np.bincount(self._buckets(self.edges), minlength=self.k + 3)
        crowded = through >= 2
        np.cumsum(through, out=through)  # the edges in buckets <= j; before bucket j: through[j - 1]
        self.table = np.empty(through.size, complex)
        self.table[0] = self.padded[0]
        self.table.real[1:] = np.take(self.padded, through[:-1])
        self.table.imag[1:] = through[:-1]
        self.table.imag[crowded] = -1 - self.table.imag[crowded]

    def _buckets(self, values):
        x = values - self.lo
        x *= self.scale
        x += 1.0
        np.clip(x, 0.0, self.k + 2.0, out=x)
        return x.astype(np.intp)

    def __call__(self, scores: np.ndarray) -> np.ndarray:
        scores = np.asarray(scores, dtype=float)
        if self.table is None:
            return np.searchsorted(self.edges, scores, side="right")
        with np.errstate(invalid="ignore", over="ignore"):
            found = np.take(self.table, self._buckets(scores))
        step = scores >= found.real
        located = found.imag.astype(np.intp)  # the edges before the bucket; -1 - that when it is crowded
        crowded = np.flatnonzero(located < 0)
        located[crowded] = -1 - located[crowded]
        located += step
        if crowded.size:  # the scores of buckets with two or more edges
            rest, at = scores[crowded], located[crowded]
            for _ in range(self.STEPS):
                more = rest >= self.padded[at]
                if not more.any():
                    break
                at += more
            unplaced = np.flatnonzero(rest >= self.padded[at])
            at[unplaced] = np.searchsorted(self.edges, rest[unplaced], side="right")
            located[crowded] = at
        return located


class Binner:
    """Picklable chunk transform: the bins of a chunk's scores, (bins, None), each score's bin (sorted
    unless found by the table without `sort`); or, for a chunk of at least a quarter as many scores as
    bins, (None, counts), the count of every bin.

    Bin b holds the scores s with edges[b-1] <= s < edges[b] (edges[-1] = -inf, edges[m] = +inf),
    b = `np.searchsorted(edges, s, side="right")`. A chunk's scores are sorted first, so the binary
    searches walk the edges in order instead of at random (50-150 ns a score on 10^6 edges, fewer in
    larger chunks, against 700 ns in random order). When the audit will place at least
    `TABLE_SCORES_PER_EDGE` scores per edge (`n_scores`), `BinLocator`'s table pays for its set-up
    (about 0.2 us per edge; then about 30 ns a score; measured with `python benchmarks/auditor.py --sampling-ratio 1e7` and
    `benchmarks/readme_job.py`). With `sort`, the table's bins of a small chunk are sorted too: the
    fold's np.add.at then walks the counters in order (2-3x faster than at random), which pays when
    the fold runs in one thread and the chunks in several; on one worker the sort would cost more
    than it saves, and a large chunk's counts need no order."""

    TABLE_SCORES_PER_EDGE = 2

    def __init__(self, score, edges: np.ndarray, n_scores: int = 0, sort: bool = False):
        self.score, self.edges, self.sort = score, edges, sort
        self.locate = BinLocator(edges) if n_scores >= self.TABLE_SCORES_PER_EDGE * edges.size else None

    def __call__(self, samples):
        scores = np.asarray(self.score(samples), dtype=float).ravel()
        if np.isnan(scores).any():
            raise ValueError(f"the scorer returned NaN for {int(np.isnan(scores).sum())} held-out samples")
        if self.locate is None:
            bins = np.searchsorted(self.edges, np.sort(scores), side="right")
        else:
            bins = self.locate(scores)
        if 4 * bins.size >= self.edges.size:  # a large chunk: counted where it was drawn, m + 1 counters
            return None, np.bincount(bins, minlength=self.edges.size + 1)
        if self.sort and self.locate is not None:
            bins.sort()
        return bins.astype(np.uint32 if self.edges.size < 2**32 else np.int64), None  # 4 bytes a score


@dataclass
class ScoreHistogram:
    """Counts of the held-out scores of P = M(D) (`p`) and Q = M(D') (`q`) in the m + 1 bins of `edges`;
    `complete` when the edges include every held-out score (then the edge sweep is the full sweep)."""

    edges: np.ndarray
    p: np.ndarray
    q: np.ndarray
    complete: bool = False
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # cleared by `add`

    @classmethod
    def empty(cls, edges: np.ndarray) -> "ScoreHistogram":
        return cls(edges, np.zeros(edges.size + 1, np.int64), np.zeros(edges.size + 1, np.int64))

    @classmethod
    def from_scores(cls, scores_p, scores_q, validation_scores) -> "ScoreHistogram":
        """The histogram of whole held-out score arrays (the in-memory path), on edges that include
        every validation and held-out score: exact counts and an exact sweep."""
        hist = cls.empty(edges_for([*validation_scores, scores_p, scores_q], refine=1))
        binner = Binner(np.asarray, hist.edges)
        hist.add(binner(scores_p), "p")
        hist.add(binner(scores_q), "q")
        hist.complete = True
        return hist

    def add(self, chunk, side: str) -> "ScoreHistogram":
        """Add one chunk's `Binner` result to side "p" or "q"; returns self (a fold step)."""
        bins, counts = chunk
        target = self.p if side == "p" else self.q
        if bins is None:
            target += counts
        else:
            np.add.at(target, bins, 1)
        self._cache.clear()
        return self

    @property
    def n_p(self) -> int:
        if "n_p" not in self._cache:
            self._cache["n_p"] = int(self.p.sum())
        return self._cache["n_p"]

    @property
    def n_q(self) -> int:
        if "n_q" not in self._cache:
            self._cache["n_q"] = int(self.q.sum())
        return self._cache["n_q"]

    def counts(self, threshold) -> tuple[np.ndarray, np.ndarray]:
        """(k_p, k_q): the numbers of held-out scores >= threshold, exact for thresholds that are edges
        or +-inf (ValueError otherwise: a threshold between edges has no exact count here)."""
        t, m = np.asarray(threshold, dtype=float), self.edges.size
        index = np.searchsorted(self.edges, t, side="left")
        exact = (index < m) & (self.edges[np.minimum(index, m - 1)] == t)
        if not np.all(exact | np.isinf(t)):
            raise ValueError("a threshold that is not an edge of the held-out histogram has no exact count")
        at = np.where(exact, index + 1, np.where(t > 0, m + 1, 0))  # +-inf off the edges: empty / everything
        above_p, above_q = self._survival()
        return above_p[at], above_q[at]

    def _survival(self):
        """Counts of bins >= b, for b = 0..m+1 (entry m+1: nothing); kept until the next `add`."""
        if "above" not in self._cache:
            self._cache["above"] = tuple(np.append(np.cumsum(c[::-1])[::-1], 0) for c in (self.p, self.q))
        return self._cache["above"]

    def roc(self) -> EmpiricalROC:
        """The held-out ROC over the edges: events {s >= edge} from the empty one to the whole space."""
        above_p, above_q = self._survival()
        return EmpiricalROC(thresholds=np.concatenate([[np.inf], self.edges[::-1], [-np.inf]]),
                            p=above_p[::-1] / max(self.n_p, 1), q=above_q[::-1] / max(self.n_q, 1))

    def sweep_error(self, eps, direction: str) -> np.ndarray:
        """err(eps): how much the held-out sweep over all thresholds can exceed the sweep over the edges."""
        if self.complete:
            return np.zeros(np.size(eps))
        if "pairs" not in self._cache:  # the same maximum as over the bins, over far fewer pairs
            occupied = (self.p > 0) & (self.q > 0)
            self._cache["pairs"] = _distinct_pairs(self.p[occupied], self.q[occupied])
        (k_num, n_num), (k_den, n_den) = ((k, max(n, 1)) for k, n in zip(self._cache["pairs"], (self.n_p, self.n_q)))
        if direction != "forward":
            (k_num, n_num), (k_den, n_den) = (k_den, n_den), (k_num, n_num)
        return _max_of_minimum(k_num / n_num, k_den / n_den, np.exp(np.ravel(np.asarray(eps, dtype=float))))


def _distinct_pairs(a, b):
    """The distinct pairs (a[i], b[i]) of two equally long arrays of counts (>= 0), as two arrays: a
    histogram of millions of bins holds a few hundred distinct pairs of counts."""
    if not a.size:
        return a, b
    span = int(b.max()) + 1
    if int(a.max()) >= 2**62 // span:  # the pair codes would overflow int64
        pairs = np.unique(np.stack([a, b], axis=1), axis=0)
        return pairs[:, 0], pairs[:, 1]
    code = a * span + b
    top = int(code.max()) + 1
    found = np.flatnonzero(np.bincount(code)) if top <= 8 * code.size else np.unique(code)
    return found // span, found % span


def _max_of_minimum(num, den, factors):
    """max over bins of min(num, c den) for each c in `factors` (0 without bins), bit for bit, over the
    bins that no other bin exceeds in both num and den (their Pareto frontier, usually a few): a
    dominated bin's min(num, c den) is at most its dominating bin's, rounding being monotone."""
    if not num.size:
        return np.zeros(factors.size)
    keep = (den >= den[np.argmax(num)]) & (num >= num[np.argmax(den)])  # the others are dominated
    num, den = num[keep], den[keep]
    order = np.lexsort((-den, -num))  # num descending, then den descending
    num, den = num[order], den[order]
    frontier = den > np.concatenate([[-np.inf], np.maximum.accumulate(den)[:-1]])
    num, den = num[frontier], den[frontier]
    return np.array([float(np.max(np.minimum(num, c * den))) for c in factors])

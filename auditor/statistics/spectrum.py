"""The privacy spectrum delta(eps) of a score function, from held-out scores (threshold sweep).

For a score s (large = "looks like P = M(D)"), every level set S_t = {s >= t} is a test, and

    delta_{P||Q}(eps) >= P(S_t) - e^eps Q(S_t),      delta_{Q||P}(eps) >= Q(S_t^c) - e^eps P(S_t^c)

(the hockey-stick divergence is a supremum over events; Balle, Barthe & Gaboardi 2020). By Neyman-Pearson
the level sets of the log-likelihood ratio log(p/q) attain both suprema for every eps, so ONE score
that estimates log(p/q) serves both directions and the whole grid.

* point estimate: delta-hat(eps) = max_t P-hat(S_t) - e^eps Q-hat(S_t) on held-out scores (and the
  complements for the reverse direction), over the edges of the held-out histogram
  (`auditor.statistics.histogram`; its discretisation error is reported as `sweep_error`);
* lower bound (simultaneous over the grid and both directions, level alpha): the event for each
  (eps, direction) is chosen on a validation split that is independent of the held-out scores; the
  held-out counts then give exact Clopper-Pearson bounds P(S) >= CP_lower, Q(S) <= CP_upper, with a
  union bound over the distinct events actually tested. This is much tighter than a DKW band where
  the optimal events have small probabilities (large eps), which is where small deltas live. The
  held-out data enter only as exact counts of these events (`auditor.statistics.histogram.ScoreHistogram.counts`);
* upper band (level alpha, for the score's own level sets, NOT for the mechanism): DKW-Massart on
  both empirical survival functions, uniform over thresholds, so delta-hat + err + r_P + e^eps r_Q.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.curve import Curve
from . import bounds

DIRECTIONS = ("forward", "reverse")
#: Validation standard errors subtracted from an event's predicted bound when choosing it. 0: on the
#: zoo (iSVT3, half half, eps0 = 0.2, 10^5 samples per side) one standard error drove the choice to
#: tiny events and the bound to 0, while pure-DP violations at small eps live in large events; the
#: bounds stay valid for any value, since the held-out counts never choose the event.
Z_SELECT = 0.0
#: Multiple of sqrt(2 ln(1/m)) subtracted from an event's predicted rejection score (B - delta0) / sd
#: in `select_test_event`, m the event's validation mass. Among about 1/m disjoint events of mass m
#: the largest of their standardized validation errors is about sqrt(2 ln(1/m)) (the maximum of 1/m
#: normals), so without an allowance a tiny event with a lucky validation ratio beats a large one
#: that really carries delta(eps0). 0.25 was measured on the zoo's faint violations (docs/results.md).
MULTIPLICITY = 0.25


@dataclass
class EmpiricalROC:
    """Survival fractions of the P and Q scores at each distinct score value.

    Entry k is the event {s >= thresholds[k]}; entry 0 is the empty event (threshold +inf), the last
    entry is the whole space. `p`, `q` are P-hat and Q-hat of the event.
    """

    thresholds: np.ndarray
    p: np.ndarray
    q: np.ndarray


def empirical_roc(scores_p: np.ndarray, scores_q: np.ndarray) -> EmpiricalROC:
    """All level-set events of the pooled scores: each side sorted once, O(n log n), and the counts
    of scores >= each distinct value found by binary search in them."""
    given = [np.asarray(s, dtype=float).ravel() for s in (scores_p, scores_q)]
    scores_p, scores_q = (np.sort(s) for s in given)
    values = np.unique(np.concatenate([scores_p, scores_q]))[::-1]  # the distinct scores, descending
    zero = np.flatnonzero(values == 0)
    if zero.size:  # 0.0 and -0.0 are one threshold: written as the last zero given, P's then Q's
        zeros = np.concatenate([s[s == 0] for s in given])
        values[zero] = zeros[-1]
    count_p = scores_p.size - np.searchsorted(scores_p, values, side="left")
    count_q = scores_q.size - np.searchsorted(scores_q, values, side="left")
    return EmpiricalROC(
        thresholds=np.concatenate([[np.inf], values]),
        p=np.concatenate([[0.0], count_p / scores_p.size]),
        q=np.concatenate([[0.0], count_q / scores_q.size]),
    )


def _event_probabilities(roc: EmpiricalROC, direction: str):
    """(probability under the numerator law, under the denominator law) of each event."""
    if direction == "forward":
        return roc.p, roc.q
    if direction == "reverse":  # complements {s < t}: Q is the numerator
        return 1.0 - roc.q, 1.0 - roc.p
    raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")


class _BlockMax:
    """argmax over k < end of f(num[k], den[k]), for f increasing in num and decreasing in den: the
    first of the largest, as np.argmax gives it, bit for bit, reading only the blocks of `BLOCK`
    entries that can hold it.

    In a block, num[k] <= (the block's largest num) and den[k] >= (its smallest den), so the
    computed f(num[k], den[k]) is at most f at those two (for f = num - c den exactly so, rounding
    being monotone; a function rounded less tidily is given a `slack`). The block of the largest
    bound is read first; every block whose bound reaches the largest value found there, less the
    slack, is then read, in order: the blocks left out hold only smaller values."""

    BLOCK = 256

    def __init__(self, num: np.ndarray, den: np.ndarray):
        self.num, self.den = num, den
        starts = np.arange(0, num.size, self.BLOCK)
        self.top, self.bottom = np.maximum.reduceat(num, starts), np.minimum.reduceat(den, starts)

    def argmax(self, f, end: int | None = None, slack: float = 0.0) -> tuple[int, float]:
        """(k, f(num[k], den[k])) of the first largest value among the entries k < `end` (all: None)."""
        end, size = self.num.size if end is None else end, self.BLOCK
        blocks = -(-end // size)  # a last block past `end` too: its bound still bounds its part
        bound = f(self.top[:blocks], self.bottom[:blocks])
        start = int(np.argmax(bound)) * size
        largest = np.max(f(self.num[start:min(start + size, end)], self.den[start:min(start + size, end)]))
        read = (np.flatnonzero(bound >= largest - slack)[:, None] * size + np.arange(size)).ravel()  # ascending
        read = read[read < end]
        values = f(self.num[read], self.den[read])
        k = int(np.argmax(values))
        return int(read[k]), values[k]


def _minus(c):
    """num - c den, for `_BlockMax`."""
    return lambda num, den: num - c * den


def delta_sweep(roc: EmpiricalROC, eps: np.ndarray, direction: str):
    """delta-hat(eps) = max over events of num-hat - e^eps den-hat, and the maximising threshold.

    The eps are taken in increasing order: with the events ordered by growing den-hat, a larger eps
    has a maximiser no later than a smaller one's (beyond it, num-hat - e^eps den-hat falls by at
    least as much as at it), so each search is restricted to the previous maximiser's prefix, and
    reads only the blocks of events that can hold the maximum (`_BlockMax`). Memory O(n).
    """
    num, den = _event_probabilities(roc, direction)
    flip = direction == "reverse"  # complements shrink as the level sets grow: search from the other end
    if flip:
        num, den = num[::-1], den[::-1]
    search = _BlockMax(num, den)
    eps = np.asarray(eps, dtype=float)
    delta = np.empty(eps.size)
    best = np.empty(eps.size, dtype=int)
    end = num.size
    for i in np.argsort(eps, kind="stable"):
        k, value = search.argmax(_minus(np.exp(eps[i])), end)
        delta[i], end = max(value, 0.0), k + 1
        best[i] = num.size - 1 - k if flip else k
    return delta, roc.thresholds[best]


def _predicted_sides(roc: EmpiricalROC, direction: str, n_num: int, n_den: int, level: float):
    """(num-hat, den-hat, Wilson lower bound of num, Wilson upper bound of den) of each event, the
    bounds at the held-out sizes (n_num, n_den) and one-sided level `level`."""
    num, den = _event_probabilities(roc, direction)
    z = bounds.normal_isf(level)
    return num, den, bounds.wilson_lower(num, n_num, z), bounds.wilson_upper(den, n_den, z)


def select_events(roc: EmpiricalROC, eps: np.ndarray, direction: str, n_num: int, n_den: int, level: float,
                  n_select: tuple[int, int] | None = None, z_select: float = Z_SELECT):
    """For each eps, the threshold whose event is predicted to give the largest lower bound.

    `roc` must come from data independent of the held-out scores (a validation split). The
    prediction uses Wilson bounds at the held-out sizes (n_num, n_den) and per-side level `level`,
    so that events with tiny, noisy probabilities are not preferred over slightly smaller but
    well-measured ones. With `n_select` = the validation sizes (num, den), the prediction is also
    lowered by `z_select` standard errors of the validation estimates (default `Z_SELECT` = 0),
    which curbs the winner's curse of maximising a noisy curve over many thresholds but also
    pushes the choice toward tiny events. Returns (thresholds, predicted bounds).
    """
    num, den, low_num, up_den = _predicted_sides(roc, direction, n_num, n_den, level)
    if n_select is not None:
        low_num = low_num - z_select * np.sqrt(num * (1 - num) / n_select[0])
        up_den = up_den + z_select * np.sqrt(den * (1 - den) / n_select[1])
    eps = np.asarray(eps, dtype=float)
    thresholds = np.empty(eps.size)
    predicted = np.empty(eps.size)
    search = _BlockMax(low_num, up_den)
    for i, e in enumerate(eps):
        k, predicted[i] = search.argmax(_minus(np.exp(e)))
        thresholds[i] = roc.thresholds[k]
    return thresholds, predicted


def select_test_event(roc: EmpiricalROC, eps0: float, delta0: float, direction: str, n_num: int, n_den: int,
                      level: float, n_select: tuple[int, int] | None = None):
    """The threshold whose event is most likely to give a held-out lower bound above delta0.

    For the test of one claim (the verdict) the goal is not the largest predicted bound but the
    largest probability of rejecting H0: delta(eps0) <= delta0. With B(S) the bound predicted as in
    `select_events` and sd(S) the standard deviation of num-hat(S) - e^eps0 den-hat(S) summed over the
    selection sample (`n_select`, sizes (num, den); none if None) and the held-out one, that
    probability is about Phi((B(S) - delta0) / sd(S)) (normal approximations, a flat prior on the
    event's true value given its validation estimate), so the event maximising (B - delta0) / sd is
    chosen. Unlike the largest B, this does not take a tiny event whose predicted bound is barely
    above 0 over a large one predicted just below it but far more likely to come out above it. The
    score is lowered by `MULTIPLICITY` sqrt(2 ln(1/m)), m = (num-hat + den-hat) / 2 the event's mass:
    a continuous score has ~10^5 level sets, and the smallest ones are many and noisy.
    Returns (threshold, B at it).
    """
    num, den, low_num, up_den = _predicted_sides(roc, direction, n_num, n_den, level)
    predicted = low_num - np.exp(eps0) * up_den
    spread = num * (1 - num) / n_num + np.exp(2 * eps0) * den * (1 - den) / n_den
    if n_select is not None:
        spread = spread + num * (1 - num) / n_select[0] + np.exp(2 * eps0) * den * (1 - den) / n_select[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(spread > 0, (predicted - delta0) / np.sqrt(spread), -np.inf)
    mass = np.clip((num + den) / 2, np.finfo(float).tiny, 1.0)
    score = score - MULTIPLICITY * np.sqrt(2 * np.log(1 / mass))
    k = int(np.argmax(score))
    return roc.thresholds[k], predicted[k]


def event_lower_bound(held, threshold, eps, direction: str, level):
    """Clopper-Pearson lower bound on delta(eps) from one fixed event and held-out counts.

    `held` gives the held-out counts of {s >= threshold} (`auditor.statistics.histogram.ScoreHistogram`).
    CP_lower(num(S)) - e^eps CP_upper(den(S)), each one-sided at `level`, so it holds with
    probability >= 1 - 2 level when the event was chosen independently of the counts.
    """
    n_p, n_q = held.n_p, held.n_q
    k_p, k_q = held.counts(threshold)
    if direction == "forward":
        k_num, n_num, k_den, n_den = k_p, n_p, k_q, n_q
    else:
        k_num, n_num, k_den, n_den = n_q - k_q, n_q, n_p - k_p, n_p
    low = bounds.clopper_pearson_lower(k_num, n_num, level)
    up = bounds.clopper_pearson_upper(k_den, n_den, level)
    return np.maximum(low - np.exp(eps) * up, 0.0)


@dataclass
class Evidence:
    """What every bound, certificate and verdict of a threshold audit is computed from: the ROC of
    the validation scores (which choose the events), their sizes (P, Q), the held-out counts, and
    the seed of the certificates' randomized acceptance draws (`auditor.statistics.certify`); and
    `score`, the trained map from raw outputs to scores, which a confirmation applies to fresh
    samples (`auditor.statistics.confirmation`)."""

    roc_valid: EmpiricalROC
    n_valid: tuple[int, int]
    held: object  # auditor.statistics.histogram.ScoreHistogram
    seed: np.random.SeedSequence
    score: object = None  # callable: (n, ...) outputs -> (n,) scores


@dataclass
class SpectrumEstimate:
    """Both directions of delta-hat, the simultaneous lower bound, the upper band, the bound on the
    estimate's discretisation error (`auditor.statistics.histogram`), all as Curves, and the floor."""

    estimate: Curve
    lower: Curve
    upper: Curve
    sweep_error: Curve
    floor: np.ndarray
    thresholds: dict
    n_events: int


def estimate_spectrum(roc_valid: EmpiricalROC, n_valid: tuple[int, int], held, eps, alpha: float,
                      z_select: float = Z_SELECT) -> SpectrumEstimate:
    """Threshold-sweep spectrum with bounds from validation (event choice) and held-out counts.

    `roc_valid` is the ROC of the validation scores (sizes `n_valid` = (P, Q)), `held` the held-out
    histogram (`auditor.statistics.histogram.ScoreHistogram`). The lower bound holds simultaneously for every
    eps of the grid and both directions with probability >= 1 - alpha: K distinct events are tested,
    each at per-side level alpha / (2K). Events whose predicted bound is <= 0 are not tested (their
    bound is the trivial 0), so they spend no confidence; this choice also uses validation data only.
    """
    eps = np.asarray(eps, dtype=float)
    n_p, n_q = held.n_p, held.n_q
    roc_held = held.roc()
    budget = alpha / (4 * eps.size)  # per-side level if every (eps, direction) were tested

    delta, error, upper, lower, chosen = {}, {}, {}, {}, {}
    r_p, r_q = bounds.dkw_radius(n_p, alpha / 2), bounds.dkw_radius(n_q, alpha / 2)
    for direction in DIRECTIONS:
        delta[direction], _ = delta_sweep(roc_held, eps, direction)
        error[direction] = held.sweep_error(eps, direction)
        r_num, r_den = (r_p, r_q) if direction == "forward" else (r_q, r_p)
        upper[direction] = np.minimum(delta[direction] + error[direction] + r_num + np.exp(eps) * r_den, 1.0)
        n_num, n_den = (n_p, n_q) if direction == "forward" else (n_q, n_p)
        n_sel = tuple(n_valid) if direction == "forward" else tuple(n_valid)[::-1]
        chosen[direction] = select_events(roc_valid, eps, direction, n_num, n_den, budget, n_sel, z_select)

    active = {(d, t) for d in DIRECTIONS for t, pred in zip(*chosen[d]) if pred > 0}
    level = alpha / (2 * max(len(active), 1))
    for direction in DIRECTIONS:
        thresholds, predicted = chosen[direction]
        bound = event_lower_bound(held, thresholds, eps, direction, level)
        lower[direction] = np.where(predicted > 0, bound, 0.0)

    floor = bounds.detectable_floor(eps, n_p, n_q, budget)
    return SpectrumEstimate(
        estimate=Curve(eps, **delta), lower=Curve(eps, **lower), upper=Curve(eps, **upper),
        sweep_error=Curve(eps, **error), floor=floor, thresholds={d: chosen[d][0] for d in DIRECTIONS},
        n_events=len(active),
    )

"""A certified epsilon: the largest eps_lo such that the mechanism is NOT (eps, delta)-DP for any
eps < eps_lo, at confidence 1 - alpha.

(eps, delta)-DP requires P(S) <= e^eps Q(S) + delta for every event S, in both directions, and also
for every randomized event (a test that accepts an output x with probability phi(x): DP is closed
under post-processing with independent randomness). One event with P(S) >= P_lo and Q(S) <= Q_hi
(both with confidence) therefore refutes every eps < log((P_lo - delta) / Q_hi). This is DP-Sniper's
idea (Bichsel, Steffen, Bogunovic & Vechev, S&P 2021, Sections 4-5): choose ONE event on data
independent of the counts, then bound its two probabilities with exact binomial bounds (Clopper &
Pearson 1934).

The events are DP-Sniper's randomized thresholds of the trained score s: between two consecutive
distinct validation scores t < t', S = {s >= t'} plus each output with t <= s < t' accepted with
probability gamma (gamma = 1: the plain level set {s >= t}); on discrete outputs this takes part of
an atom, as DP-Sniper's tie-breaking does. Direction "forward" tests S with P = M(D) as numerator,
"reverse" the complement of S with P = M(D') as numerator.

Confidence budget: the direction, thresholds and gamma are all chosen on the validation split (the
event with the largest predicted value of log((P_lo - delta) / Q_hi): Wilson bounds at `Z_VALID`
validation standard errors, then Wilson bounds at the held-out sizes), so ONE event is tested on the
held-out data, each of its two Clopper-Pearson bounds at alpha / 2 (Bonferroni): the certificate at
one delta holds with probability >= 1 - alpha. The randomized acceptance of the held-out band counts
is drawn from a seeded generator: given the counts, k_above + Binomial(k_band, gamma) is exactly
Binomial(n, P(S)), so the Clopper-Pearson bounds stay exact.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from . import bounds, spectrum

#: The delta at which every threshold audit also certifies an eps, besides delta = 0 and the claim's.
DEFAULT_DELTA = 1e-5
#: Validation standard errors by which each event's validation frequencies are made pessimistic
#: before predicting its held-out bound. Maximising over ~10^5 thresholds otherwise picks tail events
#: whose validation ratio is luck (benchmarks/dpsniper.py, seed 0: with 0, NoisyHist1 at 10^6 samples
#: per side chose an event with 6 validation outputs of D and none of D', eps_lo 0; with 1,
#: ReportNoisyMax3 at 10^7 chose a tail event, eps_lo 0; with 2, wide events: 0.0953 and 0.2303).
Z_VALID = 2.0
#: The acceptance probabilities gamma tried for the band between consecutive validation scores.
GAMMAS = np.linspace(0.05, 1.0, 20)
#: Spawn-key suffix (of the audit's root seed) of the randomized acceptance draws.
SEED_KEY = 9


@dataclass
class Certificate:
    """`eps_lo` at `delta`: not (eps, delta)-DP for any eps < eps_lo, with probability >= 1 - alpha.

    The refuting event (`direction`, `threshold`, `threshold_above`, `gamma`): the outputs with score
    >= threshold_above (None: none) and, with probability gamma, those with threshold <= score <
    threshold_above; its complement for direction "reverse". `p_lower` / `q_upper` are its
    Clopper-Pearson bounds (0 / 1 and threshold None when no event was predicted to certify anything;
    None for a sequential audit's certificate, which tests the difference of the counts as one statistic,
    `statistics.difference`)."""

    delta: float
    eps_lo: float
    alpha: float
    direction: str | None = None
    threshold: float | None = None
    p_lower: float | None = 0.0
    q_upper: float | None = 1.0
    gamma: float = 1.0
    threshold_above: float | None = None

    def __str__(self):
        if self.eps_lo <= 0:
            return (f"eps_lo = 0 at delta={self.delta:g}: its chosen event refutes no (eps, {self.delta:g})-DP "
                    "with eps >= 0")
        return (f"not (eps, {self.delta:g})-DP for any eps < eps_lo = {self.eps_lo:.4g}, "
                f"at {1 - self.alpha:.0%} confidence (its chosen event, {self.direction})")

    def to_dict(self) -> dict:
        return asdict(self)


def clopper_pearson_eps(k_num, n_num, k_den, n_den, delta: float, level: float):
    """(eps_lo, P_lo, Q_hi) of one event from its counts: log((P_lo - delta) / Q_hi), 0 when not
    positive, P_lo / Q_hi one-sided Clopper-Pearson bounds at `level` each."""
    p_lo = bounds.clopper_pearson_lower(k_num, n_num, level)
    q_hi = bounds.clopper_pearson_upper(k_den, n_den, level)
    eps_lo = float(np.log(p_lo - delta) - np.log(q_hi)) if p_lo > delta else 0.0
    return max(eps_lo, 0.0), float(p_lo), float(q_hi)


def randomized_count(k_lower: int, k_above: int, gamma: float, rng: np.random.Generator) -> int:
    """Held-out outputs in the randomized event, from the counts of scores >= lower (`k_lower`) and
    >= above (`k_above`): all of the latter and each of the k_lower - k_above in the band with
    probability `gamma`, i.e. k_above + Binomial(k_lower - k_above, gamma)."""
    k_lower, k_above = int(k_lower), int(k_above)
    return k_above + (k_lower - k_above if gamma == 1 else int(rng.binomial(k_lower - k_above, gamma)))


#: How far below the best plain level set, predicted at its entry, the search's floor is put (in
#: log units): the entry's prediction and the band's at gamma = 1 differ by rounding only.
SLACK = 1e-9


@dataclass
class _Side:
    """One direction's events: their probabilities (`num`, `den`), the two-step Wilson bounds
    `lower`, `upper`, their values at every entry (`low`, `up`) and at each band's larger num and
    smaller den, widened (`band_low`, `band_up`; `_band_ceilings`): what `select_event` needs at
    every delta, computed once (`sides`)."""

    direction: str
    num: np.ndarray
    den: np.ndarray
    lower: object
    upper: object
    low: np.ndarray
    up: np.ndarray
    band_low: np.ndarray
    band_up: np.ndarray


def sides(roc_valid: spectrum.EmpiricalROC, n_valid: tuple[int, int], n_held: tuple[int, int], level: float,
          z_valid: float = Z_VALID) -> list[_Side]:
    """Both directions' `_Side`: the validation frequencies moved `z_valid` Wilson standard errors
    to the pessimistic side (validation sizes `n_valid` = (P side, Q side)), then Wilson bounds at
    the held-out sizes `n_held` and per-bound `level`."""
    z = bounds.normal_isf(level)
    found = []
    for direction in spectrum.DIRECTIONS:
        num, den = spectrum._event_probabilities(roc_valid, direction)
        order = slice(None) if direction == "forward" else slice(None, None, -1)
        (nv_num, nv_den), (nh_num, nh_den) = n_valid[order], n_held[order]

        def lower(p, nv=nv_num, nh=nh_num):
            return bounds.wilson_lower(bounds.wilson_lower(p, nv, z_valid), nh, z)

        def upper(p, nv=nv_den, nh=nh_den):
            return bounds.wilson_upper(bounds.wilson_upper(p, nv, z_valid), nh, z)

        low, up = lower(num), upper(den)
        # Both bounds increase with their argument: at a band's larger num and smaller den they are the
        # larger low and the smaller up of its two ends, widened by 1e-14 + 1e-12 of their value, far
        # beyond the rounding of the Wilson formulas (a few units of 2^-52 of values <= 1).
        band_low = np.maximum(low[:-1], low[1:]) * (1 + 1e-12) + 1e-14
        band_up = np.maximum(np.minimum(up[:-1], up[1:]) * (1 - 1e-12) - 1e-14, 0.0)
        found.append(_Side(direction, num, den, lower, upper, low, up, band_low, band_up))
    return found


def _log_ratio(low, up, delta):
    """log((low - delta) / up), -inf where low <= delta."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(low > delta, np.log(low - delta) - np.log(up), -np.inf)


def select_event(roc_valid: spectrum.EmpiricalROC, n_valid: tuple[int, int], n_held: tuple[int, int],
                 delta: float, level: float, z_valid: float = Z_VALID, found_sides: list[_Side] | None = None):
    """(direction, k, gamma, predicted eps_lo) of the randomized threshold event with the largest
    predicted log((P_lo - delta) / Q_hi); k indexes `roc_valid.thresholds` (the band is between
    entries k - 1 and k). The validation frequencies are first moved `z_valid` Wilson standard
    errors to the pessimistic side (at the validation sizes `n_valid` = (P side, Q side)), then
    bounded by Wilson bounds at the held-out sizes `n_held` and per-bound `level` (`sides`, which
    may be passed as `found_sides` when several deltas are certified). Direction None when no
    event is predicted to give P_lo > delta.

    The search is over (direction, gamma, band) in that order, the first of the largest predictions
    winning. Both Wilson steps are increasing, so every gamma's prediction on a band is at most the
    prediction at the band's larger numerator and smaller denominator end (`_band_ceilings`); only
    the bands whose ceiling reaches a floor are searched over every gamma: the best so far, or the
    best plain level set's prediction at its entry less `SLACK`. When the search finds an event at
    or above the floor, no band left out (its ceiling below the floor) could have won or tied, so
    this is the event of the search over every band; otherwise the direction is searched again
    over every band."""
    best = (None, 0, 1.0, -np.inf)
    for side in found_sides if found_sides is not None else sides(roc_valid, n_valid, n_held, level, z_valid):
        num, den = side.num, side.den

        def predict(bands, gamma):
            num_g = num[bands] + gamma * (num[bands + 1] - num[bands])
            den_g = den[bands] + gamma * (den[bands + 1] - den[bands])
            return _log_ratio(side.lower(num_g), side.upper(den_g), delta)

        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(side.low[1:] > delta, (side.low[1:] - delta) / side.up[1:], 0.0)
            plain = float(np.log(np.max(ratios, initial=0.0))) - SLACK  # the plain level sets' best, rounding aside
        before = best
        for floor in (max(best[3], plain), -np.inf):
            best = before
            bands = _band_ceilings(side, delta, floor)
            for gamma in GAMMAS:
                predicted = predict(bands, gamma)
                k = int(np.argmax(predicted)) if bands.size else 0
                if bands.size and predicted[k] > best[3]:
                    best = (side.direction, int(bands[k]) + 1, float(gamma), float(predicted[k]))
            if best[3] >= floor:
                break
    return best if np.isfinite(best[3]) else (None, 0, 1.0, -np.inf)


def _band_ceilings(side: _Side, delta: float, floor: float) -> np.ndarray:
    """The bands whose ceiling, an upper bound of the prediction log(lower(num) - delta) -
    log(upper(den)) over every event of the band, log(band_low - delta) - log(band_up), is >=
    `floor`. The ceilings are computed only on the candidates band_low - delta >= band_up e^floor
    (1 - 1e-6), a test without logarithms that every band of ceiling >= floor passes (the two
    differ by rounding, a few units of 2^-52, far below 1e-6)."""
    candidates = np.arange(side.band_low.size)
    if np.isfinite(floor):
        threshold = np.exp(min(floor, 700.0)) * (1 - 1e-6)
        candidates = np.flatnonzero(side.band_low - delta >= side.band_up * threshold)
    return candidates[_log_ratio(side.band_low[candidates], side.band_up[candidates], delta) >= floor]


def certify(roc_valid: spectrum.EmpiricalROC, held, delta: float, alpha: float,
            n_select: tuple[int, int] | None = None, seed=None) -> Certificate:
    """eps_lo at `delta` from the validation ROC (event choice) and the held-out counts (bounds;
    `auditor.statistics.histogram.ScoreHistogram`, exact at every validation score).

    `n_select` = the validation sizes (P side, Q side), default the held-out sizes; `seed` (int,
    SeedSequence or None) seeds the randomized acceptance of the band. One event, its two
    Clopper-Pearson bounds at alpha / 2 each."""
    return certify_all(roc_valid, held, [delta], alpha, n_select, seed)[0]


def certify_all(roc_valid: spectrum.EmpiricalROC, held, deltas, alpha: float,
                n_select: tuple[int, int] | None = None, seed=None) -> list[Certificate]:
    """`certify` at each of `deltas` (each a statement at confidence 1 - alpha, its acceptance draws
    seeded by `seed` afresh), the Wilson bounds of the events computed once for all of them."""
    for delta in deltas:
        if not 0 <= delta < 1:
            raise ValueError(f"delta must lie in [0, 1), got {delta}")
    level = alpha / 2
    n_p, n_q = held.n_p, held.n_q
    found = sides(roc_valid, n_select or (n_p, n_q), (n_p, n_q), level)
    return [_certify_one(roc_valid, held, delta, alpha, found, seed) for delta in deltas]


def _certify_one(roc_valid, held, delta, alpha, found, seed) -> Certificate:
    level = alpha / 2
    n_p, n_q = held.n_p, held.n_q
    direction, k, gamma, _ = select_event(roc_valid, None, None, delta, level, found_sides=found)
    if direction is None:
        return Certificate(float(delta), 0.0, float(alpha))
    lower, above = roc_valid.thresholds[k], roc_valid.thresholds[k - 1]
    rng = np.random.default_rng(seed)
    (lower_p, lower_q), (above_p, above_q) = held.counts(lower), held.counts(above)
    k_p, k_q = randomized_count(lower_p, above_p, gamma, rng), randomized_count(lower_q, above_q, gamma, rng)
    k_num, n_num, k_den, n_den = (k_p, n_p, k_q, n_q) if direction == "forward" else (n_q - k_q, n_q, n_p - k_p, n_p)
    eps_lo, p_lo, q_hi = clopper_pearson_eps(k_num, n_num, k_den, n_den, delta, level)
    return Certificate(float(delta), eps_lo, float(alpha), direction, float(lower), p_lo, q_hi, float(gamma),
                       None if np.isinf(above) else float(above))

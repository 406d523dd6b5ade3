"""A certified epsilon: the largest eps_lo such that the mechanism is NOT (eps, delta)-DP for any
eps < eps_lo, at confidence 1 - alpha.

(eps, delta)-DP requires P(S) <= e^eps Q(S) + delta for every event S, in both directions. One
event S with P(S) >= P_lo and Q(S) <= Q_hi (both with confidence) therefore refutes every
eps < log((P_lo - delta) / Q_hi). This is DP-Sniper's idea (Bichsel, Steffen, Bogunovic & Vechev,
S&P 2021): choose ONE event on data independent of the counts, then bound its two probabilities
with exact binomial bounds (Clopper & Pearson 1934).

Here the events are the level sets {s >= t} of the trained score (forward: P = M(D)) and their
complements {s < t} (reverse: P = M(D')). For each direction the event is chosen on the
validation split by the Wilson-predicted value of log((P_lo - delta) / Q_hi) at the held-out
sizes; the held-out counts then give the Clopper-Pearson bounds. The alpha is split over the two
directions and the two bounds (alpha / 4 each, Bonferroni), so the certificate at one delta holds
with probability >= 1 - alpha. The held-out data never choose the event.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from . import bounds, spectrum

#: The delta at which every threshold audit also certifies an eps, besides delta = 0 and the claim's.
DEFAULT_DELTA = 1e-5


@dataclass
class Certificate:
    """`eps_lo` at `delta`: not (eps, delta)-DP for any eps < eps_lo, with probability >= 1 - alpha.

    `direction`, `threshold` name the refuting event, `p_lower` / `q_upper` its Clopper-Pearson
    bounds (0 / 1 and threshold None when no event was predicted to certify anything)."""

    delta: float
    eps_lo: float
    alpha: float
    direction: str | None = None
    threshold: float | None = None
    p_lower: float = 0.0
    q_upper: float = 1.0

    def __str__(self):
        if self.eps_lo <= 0:
            return f"eps_lo = 0 at delta={self.delta:g}: no (eps, {self.delta:g})-DP claim with eps >= 0 is refuted"
        return (f"not (eps, {self.delta:g})-DP for any eps < eps_lo = {self.eps_lo:.4g}, "
                f"at {1 - self.alpha:.0%} confidence ({self.direction})")

    def to_dict(self) -> dict:
        return asdict(self)


def select_event(roc_valid: spectrum.EmpiricalROC, direction: str, n_num: int, n_den: int, delta: float,
                 level: float):
    """(threshold, predicted eps_lo) of the validation event with the largest predicted
    log((P_lo - delta) / Q_hi), Wilson bounds at the held-out sizes and per-bound `level`;
    threshold None when no event is predicted to give P_lo > delta."""
    num, den = spectrum._event_probabilities(roc_valid, direction)
    z = stats.norm.isf(level)
    low_num = bounds.wilson_lower(num, n_num, z)
    up_den = bounds.wilson_upper(den, n_den, z)  # > 0 at any observed fraction
    with np.errstate(divide="ignore", invalid="ignore"):
        predicted = np.where(low_num > delta, np.log(low_num - delta) - np.log(up_den), -np.inf)
    k = int(np.argmax(predicted))
    if not np.isfinite(predicted[k]):
        return None, -np.inf
    return float(roc_valid.thresholds[k]), float(predicted[k])


def certify(roc_valid: spectrum.EmpiricalROC, held, delta: float, alpha: float) -> Certificate:
    """eps_lo at `delta` from the validation ROC (event choice) and the held-out counts (bounds;
    `auditor.histogram.ScoreHistogram`).

    eps_lo = max over the two directions of log((P_lo - delta) / Q_hi), 0 when not positive; each
    of the four one-sided Clopper-Pearson bounds at alpha / 4."""
    if not 0 <= delta < 1:
        raise ValueError(f"delta must lie in [0, 1), got {delta}")
    level = alpha / 4
    n_p, n_q = held.n_p, held.n_q
    best = Certificate(float(delta), 0.0, float(alpha))
    for direction in spectrum.DIRECTIONS:
        n_num, n_den = (n_p, n_q) if direction == "forward" else (n_q, n_p)
        threshold, _ = select_event(roc_valid, direction, n_num, n_den, delta, level)
        if threshold is None:
            continue
        k_p, k_q = held.counts(threshold)
        k_num, k_den = (k_p, k_q) if direction == "forward" else (n_q - k_q, n_p - k_p)
        p_lo = bounds.clopper_pearson_lower(k_num, n_num, level)
        q_hi = bounds.clopper_pearson_upper(k_den, n_den, level)
        eps_lo = float(np.log(p_lo - delta) - np.log(q_hi)) if p_lo > delta else 0.0
        if eps_lo > best.eps_lo:
            best = Certificate(float(delta), eps_lo, float(alpha), direction, threshold, float(p_lo), float(q_hi))
    return best

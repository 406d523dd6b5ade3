"""Confirmation of a screening audit's flag on fresh samples: one event, chosen before they are drawn.

A screening audit trains a score and counts its held-out scores; everything it saw is independent
of samples drawn afterwards. `choose_event` picks, on the screening's held-out counts alone, the
point (eps, delta) of the claim and the level-set event S = {s >= t} of the frozen score (or its
complement, direction "reverse") most likely to refute the claim on n fresh samples per side:
the verdict's rule (`spectrum.select_test_event`, at the confirmation's size), across the
claim's points and both directions by the predicted power (`predicted_power`). `confirm` then
bounds the event's two probabilities from the fresh counts, each with an exact one-sided
Clopper-Pearson bound at level / 2 (Clopper & Pearson 1934):

    delta(eps) >= P_lo - e^eps Q_hi,    and the mechanism is not (e, delta)-DP for e < eps_lo = log((P_lo - delta) / Q_hi),

both consequences of the same two bounds, so they hold together with probability >= 1 - level
(DP-Sniper's certificate, Bichsel et al. 2021, Sections 4-5, on an event chosen on independent
data). The claim is refuted when P_lo - e^eps Q_hi > delta, that is eps_lo > eps. `p_value` is the
smallest level at which it would be: a valid p-value of the test of H0: delta(eps) <= delta.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import special

from ndis.auditor.statistics import bounds, spectrum
from ndis.auditor.statistics.certify import clopper_pearson_eps

#: log10 of the smallest p-value resolved by `p_value` (smaller ones are reported as this).
LOG10_P_MIN = -30.0


@dataclass(frozen=True)
class Event:
    """The tested point of the claim (`eps`, claimed `delta`) and the event: outputs whose score is
    >= `threshold` (direction "forward", numerator M(D)) or below it ("reverse", numerator M(D')),
    with its screening fractions (`num_hat`, `den_hat`) and the power predicted for the confirmation."""

    eps: float
    delta: float
    direction: str
    threshold: float
    num_hat: float
    den_hat: float
    predicted_power: float

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Confirmation:
    """The fresh counts of the event (`k_num` of `n` on the numerator side, `k_den` of `n` on the other)
    and what they give at `level`: `p_lower`, `q_upper`, `delta_lower`, `eps_lo`, `refuted`; the
    unbiased estimate of the event's P(S) - e^eps Q(S) with its standard error; `p_value`."""

    event: Event
    n: int
    k_num: int
    k_den: int
    level: float
    p_lower: float
    q_upper: float
    delta_lower: float
    eps_lo: float
    estimate: float
    estimate_se: float
    p_value: float

    @property
    def refuted(self) -> bool:
        return self.delta_lower > self.event.delta

    def to_dict(self) -> dict:
        return {**asdict(self), "event": self.event.to_dict(), "refuted": self.refuted}


def _sides(num, den, eps, n):
    """Standard errors of num-hat and of e^eps den-hat at n samples per side."""
    return np.sqrt(num * (1 - num) / n), np.exp(eps) * np.sqrt(den * (1 - den) / n)


def _power_z(num, den, eps: float, delta: float, n: int, level: float):
    """The normal score whose Phi is `predicted_power` (+-inf where the estimate has no spread)."""
    se_num, se_den = _sides(np.asarray(num, float), np.asarray(den, float), eps, n)
    spread = np.hypot(se_num, se_den)
    margin = num - np.exp(eps) * den - delta - bounds.normal_isf(level / 2) * (se_num + se_den)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(spread > 0, margin / spread, np.where(margin > 0, np.inf, -np.inf))


def predicted_power(num, den, eps: float, delta: float, n: int, level: float):
    """Normal approximation of the probability that `confirm` refutes (eps, delta) on n samples per
    side, when the event's true probabilities are num and den: the bound P_lo - e^eps Q_hi is about
    num-hat - e^eps den-hat - z (se_num + e^eps se_den), z the normal quantile at level / 2."""
    return special.ndtr(_power_z(num, den, eps, delta, n, level))


def _fractions(held, direction: str):
    roc = held.roc()
    if direction == "forward":
        return roc, roc.p, roc.q, (held.n_p, held.n_q)
    return roc, 1.0 - roc.q, 1.0 - roc.p, (held.n_q, held.n_p)


def choose_event(held, points, n_confirm: int, level: float) -> Event:
    """The event most likely to refute one of the claim's `points` [(eps, delta)] on `n_confirm` fresh
    samples per side at `level`, from the screening's held-out counts `held`
    (`auditor.statistics.histogram.ScoreHistogram`): per point and direction the verdict's choice
    (`spectrum.select_test_event`, each side at level / 2), then the largest predicted power (compared
    by its normal score, which does not underflow where every power is tiny)."""
    best, best_z = None, -np.inf
    for eps, delta in points:
        for direction in spectrum.DIRECTIONS:
            roc, num, den, n_select = _fractions(held, direction)
            threshold, _ = spectrum.select_test_event(roc, eps, delta, direction, n_confirm, n_confirm, level / 2,
                                                      n_select)
            k = int(np.flatnonzero(roc.thresholds == threshold)[0])
            z = float(_power_z(num[k], den[k], eps, delta, n_confirm, level))
            if best is None or z > best_z:
                best, best_z = Event(float(eps), float(delta), direction, float(threshold), float(num[k]),
                                     float(den[k]), float(special.ndtr(z))), z
    if best is None:
        raise ValueError("the claim gives no finite delta at any eps of the grid: nothing to test")
    return best


def _delta_lower(k_num, k_den, n, eps, level) -> float:
    low = bounds.clopper_pearson_lower(k_num, n, level / 2)
    return float(low - np.exp(eps) * bounds.clopper_pearson_upper(k_den, n, level / 2))


def p_value(k_num: int, k_den: int, n: int, eps: float, delta: float) -> float:
    """The smallest level at which P_lo - e^eps Q_hi > delta (1 when none; at least 10^LOG10_P_MIN):
    bisection on log10 of the level, the bound growing with the level."""
    if _delta_lower(k_num, k_den, n, eps, 1.0 - 1e-12) <= delta:
        return 1.0
    lo, hi = LOG10_P_MIN, 0.0  # refutes at 10^hi, not (or not resolved) at 10^lo
    if _delta_lower(k_num, k_den, n, eps, 10**lo) > delta:
        return 10**lo
    for _ in range(36):  # to 30 / 2^36 in log10: a relative error below 1e-9
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _delta_lower(k_num, k_den, n, eps, 10**mid) > delta else (mid, hi)
    return float(10**hi)


def confirm(event: Event, k_p: int, k_q: int, n: int, level: float) -> Confirmation:
    """The bounds of `event` at `level` from fresh counts: k_p of n outputs on D and k_q of n on D' with
    score >= the event's threshold."""
    k_p, k_q, n = int(k_p), int(k_q), int(n)
    k_num, k_den = (k_p, k_q) if event.direction == "forward" else (n - k_q, n - k_p)
    eps_lo, p_lo, q_hi = clopper_pearson_eps(k_num, n, k_den, n, event.delta, level / 2)
    num, den = k_num / n, k_den / n
    se_num, se_den = _sides(num, den, event.eps, n)
    return Confirmation(event, n, k_num, k_den, float(level), p_lo, q_hi,
                        max(p_lo - float(np.exp(event.eps)) * q_hi, 0.0), eps_lo,
                        float(num - np.exp(event.eps) * den), float(np.hypot(se_num, se_den)),
                        p_value(k_num, k_den, n, event.eps, event.delta))


def combined_p_value(p_values, levels, alpha: float) -> float:
    """The p-value of a sequence of tests run at `levels` (summing to at most alpha): min_r p_r alpha / level_r,
    at most 1. It is <= alpha exactly when some p_r <= level_r, and valid (P(<= x) <= x) by the union
    bound whatever decided which rounds ran, since each round's samples are fresh."""
    ratios = [p * alpha / level for p, level in zip(p_values, levels)]
    return float(min(min(ratios, default=1.0), 1.0))

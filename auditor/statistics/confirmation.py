"""Confirmation of a screening audit's flag on fresh samples: events chosen before they are drawn.

A screening audit trains a score and counts its held-out scores; everything it saw is independent
of samples drawn afterwards. `choose_events` picks, on the screening's held-out counts alone,
`EVENTS` level-set events S = {s >= t} of the frozen score (or their complements, direction
"reverse"), each with the point (eps, delta) of the claim it tests, most likely to refute the claim
on n fresh samples per side: across the claim's points, both directions and the thresholds, the
largest predicted power (`predicted_power`) after a penalty for the many small level sets
(`MULTIPLICITY`); the first is the best, the next the best whose mass differs from theirs by a
factor of at least `DISTINCT`. Each event is tested at the look's level / EVENTS (Bonferroni), so
that a choice misled by the screening's sampling error (a lucky level set) is hedged by an event of
another size. `confirm` tests H0: P(S) - e^eps Q(S) <= delta on the fresh counts with the exact test
of their difference as one statistic (`statistics.difference`, after Berger & Boos 1994), which needs
a margin of about z sqrt(se_P^2 + e^{2 eps} se_Q^2) where bounding P and Q separately needs
z (se_P + e^eps se_Q). The same test, inverted, gives the lower confidence bound `delta_lower` on
delta(eps) and `eps_lo` (not (e, delta)-DP for any e < eps_lo), and its p-value; a test's statements
hold together with probability >= 1 - its level, the event being chosen on independent data (as
DP-Sniper's certificate, Bichsel et al. 2021, Sections 4-5).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import special

from . import bounds, difference, spectrum

#: Multiple of sqrt(2 ln(1/m)) subtracted from the normal score of an event of mass m in `choose_event`
#: (the verdict's `spectrum.MULTIPLICITY`, larger: a confirmation has several times the screening's
#: held-out samples, so a lucky small event's predicted power is far more optimistic than in a verdict).
MULTIPLICITY = 1.0
#: Events tested per look, each at the look's level / EVENTS, and the factor by which the mass of each
#: differs from every other's. Measured on the last round's screenings of 60 seeded sequential audits of
#: zoo-isvt4 and 30 of zoo-gaussian-half (eps0 = 0.7, 10^5 per side, level 0.05 / 33), the chosen
#: events' mean true power rose from 0.67 to 0.77 and from 0.91 to 0.98 against one event
#: (docs/testing/README.md).
EVENTS, DISTINCT = 2, 2.0


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
    and what they give at `level` (`statistics.difference`): whether the claim is `refuted`,
    `delta_lower`, `eps_lo` and the `p_value` (bracketed by `level`: <= `level` exactly when `refuted`);
    the unbiased estimate of the event's P(S) - e^eps Q(S) with its standard error."""

    event: Event
    n: int
    k_num: int
    k_den: int
    level: float
    refuted: bool
    delta_lower: float
    eps_lo: float
    estimate: float
    estimate_se: float
    p_value: float

    def to_dict(self) -> dict:
        return {**asdict(self), "event": self.event.to_dict()}


def _sides(num, den, eps, n):
    """Standard errors of num-hat and of e^eps den-hat at n samples per side."""
    return np.sqrt(num * (1 - num) / n), np.exp(eps) * np.sqrt(den * (1 - den) / n)


def _margin(num, den, eps: float, delta: float, n: int, level: float):
    """(num - e^eps den - delta - z sqrt(se_num^2 + se_den^2), se_num, se_den) at n samples per side
    (`_sides`): how far the estimate is expected to clear the test's threshold, z the normal quantile at
    the level less the nuisance's share (`difference.GAMMA_SHARE`)."""
    se_num, se_den = _sides(num, den, eps, n)
    threshold = bounds.normal_isf((1 - difference.GAMMA_SHARE) * level) * np.hypot(se_num, se_den)
    return num - np.exp(eps) * den - delta - threshold, se_num, se_den


def _power_z(num, den, eps: float, delta: float, n: int, level: float):
    """The normal score whose Phi is `predicted_power` (+-inf where the estimate has no spread)."""
    margin, se_num, se_den = _margin(np.asarray(num, float), np.asarray(den, float), eps, delta, n, level)
    spread = np.hypot(se_num, se_den)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(spread > 0, margin / spread, np.where(margin > 0, np.inf, -np.inf))


def predicted_power(num, den, eps: float, delta: float, n: int, level: float):
    """Normal approximation of the probability that `confirm` refutes (eps, delta) on n samples per
    side, when the event's true probabilities are num and den: the test rejects when num-hat - e^eps
    den-hat exceeds delta by about z sqrt(se_num^2 + e^{2 eps} se_den^2), z the normal quantile at
    the level less the nuisance's share (`difference.GAMMA_SHARE`)."""
    return special.ndtr(_power_z(num, den, eps, delta, n, level))


def _fractions(held, direction: str):
    roc = held.roc()
    if direction == "forward":
        return roc, roc.p, roc.q, (held.n_p, held.n_q)
    return roc, 1.0 - roc.q, 1.0 - roc.p, (held.n_q, held.n_p)


def _choice_scores(held, direction, eps, delta, n_confirm: int, level: float):
    """(ROC, num, den, mass, score per threshold): the normal score of `predicted_power` with the
    screening's own sampling error added to the spread (the fractions are estimates), less
    `MULTIPLICITY` sqrt(2 ln(1/m)) for an event of mass m (many small level sets, one of them lucky)."""
    roc, num, den, n_select = _fractions(held, direction)
    margin, se_num, se_den = _margin(num, den, eps, delta, n_confirm, level)
    sd_num, sd_den = _sides(num, den, eps, 1)  # per output: the screening's error is sd / sqrt(size)
    spread = np.sqrt(se_num**2 + se_den**2 + sd_num**2 / n_select[0] + sd_den**2 / n_select[1])
    mass = np.clip((num + den) / 2, np.finfo(float).tiny, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(spread > 0, margin / spread, -np.inf) - MULTIPLICITY * np.sqrt(2 * np.log(1 / mass))
    return roc, num, den, mass, score


def choose_events(held, points, n_confirm: int, level: float) -> list[Event]:
    """Up to `EVENTS` events, each to be tested at `level` / EVENTS on `n_confirm` fresh samples per side,
    most likely to refute one of the claim's `points` [(eps, delta)], from the screening's held-out counts
    `held` (`auditor.statistics.histogram.ScoreHistogram`): over the points, both directions and every
    threshold, the largest score (`_choice_scores`), then the largest among the events of a point and
    direction whose mass differs by a factor >= `DISTINCT` from that of each event chosen there."""
    level = level / EVENTS
    groups = [(float(eps), float(delta), direction, *_choice_scores(held, direction, eps, delta, n_confirm, level))
              for eps, delta in points for direction in spectrum.DIRECTIONS]
    if not groups:
        raise ValueError("the claim gives no finite delta at any eps of the grid: nothing to test")
    events = []
    while len(events) < EVENTS:
        eps, delta, direction, roc, num, den, mass, score = max(groups, key=lambda g: g[-1].max(initial=-np.inf))
        k = int(np.argmax(score))
        if events and not np.isfinite(score[k]):
            break  # no other event left (the first is chosen even if every score is -inf)
        z = float(_power_z(num[k], den[k], eps, delta, n_confirm, level))
        events.append(Event(eps, delta, direction, float(roc.thresholds[k]), float(num[k]), float(den[k]),
                            float(special.ndtr(z))))
        score[(mass > mass[k] / DISTINCT) & (mass < mass[k] * DISTINCT)] = -np.inf
    return events


def confirm(event: Event, k_p: int, k_q: int, n: int, level: float) -> Confirmation:
    """The test of `event`'s claim at `level` from fresh counts: k_p of n outputs on D and k_q of n on
    D' with score >= the event's threshold."""
    k_p, k_q, n = int(k_p), int(k_q), int(n)
    k_num, k_den = (k_p, k_q) if event.direction == "forward" else (n - k_q, n - k_p)
    eps, delta = event.eps, event.delta
    num, den = k_num / n, k_den / n
    se_num, se_den = _sides(num, den, eps, n)
    refuted = difference.rejects(k_num, k_den, n, eps, delta, level)
    delta_lower = difference.delta_lower(k_num, k_den, n, eps, level)
    return Confirmation(event, n, k_num, k_den, float(level), refuted,
                        max(delta_lower, delta) if refuted else delta_lower,  # a rejected d is itself a bound
                        difference.eps_lo(k_num, k_den, n, delta, level, points=[eps]),
                        float(num - np.exp(eps) * den), float(np.hypot(se_num, se_den)),
                        difference.p_value(k_num, k_den, n, eps, delta, level))


def combined_p_value(p_values, levels, alpha: float) -> float:
    """The p-value of a sequence of tests run at `levels` (summing to at most alpha): min_r p_r alpha / level_r,
    at most 1. It is <= alpha exactly when some p_r <= level_r (computed as alpha (p_r / level_r), which
    rounds to at most alpha when p_r <= level_r), and valid (P(<= x) <= x) by the union bound whatever
    decided which rounds ran, since each round's samples are fresh."""
    ratios = [alpha * (p / level) for p, level in zip(p_values, levels)]
    return float(min(min(ratios, default=1.0), 1.0))

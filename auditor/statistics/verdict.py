"""The verdict on a claimed (eps0, delta0): one hypothesis test, H0: delta(eps0) <= delta0.

For each direction one event (a level set of the score) is chosen on the validation split, the
one most likely to give a bound above delta0 (`spectrum.select_test_event`); the held-out counts
give the Clopper-Pearson lower bounds of `auditor.statistics.spectrum.event_lower_bound`, each side of each event at alpha / 4 (a union over the 2 x 2 one-sided statements), and the larger
bound is compared with delta0. Testing both directions costs a little in the quantile but guards
against a validation split that favours the wrong one. Measured: choosing the direction on
validation and testing it at alpha / 2 per side raised the mean bound by 14-23% when the score was
the true likelihood ratio (iSVT4, Lyu, Su & Li 2017, Algorithm 3, half half, eps0 = 0.2, 10^6
samples per side), but with a learned score and 12,500 validation rows per side it chose a
direction predicted at 4.8e-3 that certified 0 on held-out data, while the other one certified
3.5e-4 against a claimed 1e-5 (half-sigma Gaussian, one below, eps0 = 0.2, seed 3001). Testing one
eps, the verdict does not pay the grid's union bound.

Every verdict carries the test's p-value: the smallest level at which the held-out bound still
exceeds delta0 (the bound grows with the level, so it is found by bisection); it is a valid p-value
of H0 (P(p <= u) <= u for every u when delta(eps0) <= delta0), because the events are chosen on the
validation split and the held-out bounds are exact.

* "violation": the (1 - alpha) lower bound exceeds delta0 (p <= alpha); the reported confidence is
  1 - p;
* "inconclusive": no violation, and delta0 is below the detectable floor at eps0 (no outcome of an
  audit of this size could have shown a violation of that size). For a pure-DP claim (delta0 = 0)
  any positive lower bound is a violation, so it is "inconclusive" only when the floor is 1
  (nothing at all can be certified at eps0);
* "no violation found": no violation although the audit could resolve deltas of size delta0.
  Black-box evidence never proves a claim; this says the tested score found no violation at level
  alpha, nothing more: the confidence 1 - alpha belongs to the lower bound, not to the claim.

A verdict that is not a violation is "suspicious" when the same test rejects H0 at the weaker level
`SUSPICION_LEVEL` = 0.2 (alpha < p <= 0.2): a mechanism that meets its claim is labelled so in at
most 20% of audits, whatever its curve (benchmarks/labels.py measures the rate on calibrated
mechanisms audited at their claims). It replaces a rule "held-out estimate above delta0 by more
than one standard error", which is not a test: where both directions' best events sit exactly at
the claim (the Laplace mechanism at its own eps0, whose tails have likelihood ratio e^eps0; the
Gaussian mechanism at its calibrated (eps0, delta0)) each direction's estimate exceeds the claim by
one standard error in about 1 audit in 6, and the larger of the two more often. Measured with
benchmarks/labels.py (100 seeds, 2 x 10^5 samples per side, scorer "auto"): the old rule labelled
18 of 100 audits of the Laplace mechanism at (1, 0) and 27 of 100 of the Gaussian at (1, 1e-5); the
test labels 3 and 0 of them (docs/auditor/method.md).

The verdict's `estimate` is the held-out plug-in value P-hat(S) - e^eps0 Q-hat(S) of the tested
event (the better direction, 0 when negative), with its standard error `estimate_se`: unlike the
sweep's maximum over thresholds it is not biased upward. Its `lower_bound`, `estimate` and `floor`
(`bounds.detectable_floor` at alpha / 4 per side) are the chosen event's, and its text names them so:
the report's table holds the band's (the sweep estimate, a lower bound at every eps of the grid at
once, and a floor at that simultaneous level), which differ at the same eps.

When a claim with delta0 > 0 is not violated, `audit` fills in `samples_needed`: the samples per
side at which delta0 would be detectable at eps0 (`bounds.samples_for_floor`), and
`seconds_needed`, the time that would take at the audit's measured sampling rate (no sample size
makes every violation of a pure-DP claim detectable, so these stay None for delta0 = 0). The text
of an "inconclusive" verdict says them; after "no violation found" the audit was already larger.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from . import bounds, spectrum

LABELS = ("violation", "no violation found", "inconclusive")
#: The level of the "suspicious" qualifier: the verdict's test rejects H0 at this level but not at alpha.
SUSPICION_LEVEL = 0.2


@dataclass(eq=False)
class Verdict:
    """A verdict; compares equal to its label, so `report.verdict == "violation"` works.

    `lower_bound` is the (1 - alpha) lower bound on delta(eps) of the tested events, `p_value` the
    smallest level at which it exceeds delta (1: at no level below 1; None in reports written before
    ndis recorded it), `confidence` 1 - p for a violation and 1 - alpha otherwise (the confidence of
    the lower bound, never of the claim)."""

    label: str
    eps: float
    delta: float
    confidence: float
    lower_bound: float
    estimate: float
    floor: float
    direction: str
    alpha: float
    samples_needed: int | None = None
    seconds_needed: float | None = None
    estimate_se: float | None = None
    p_value: float | None = None

    def __post_init__(self):
        if self.label == "consistent":  # the label of reports written before ndis said "no violation found"
            self.label = "no violation found"
        if self.label not in LABELS:
            raise ValueError(f"unknown verdict {self.label!r}; allowed: {', '.join(LABELS)}")

    def __eq__(self, other):
        if isinstance(other, str):
            return self.label == other
        return isinstance(other, Verdict) and asdict(self) == asdict(other)

    def __hash__(self):
        return hash(self.label)

    def __str__(self):
        eps, delta, level = f"{self.eps:g}", f"{self.delta:g}", f"{1 - self.alpha:.0%}"
        p = "" if self.p_value is None else _p_text(self.p_value, self.alpha)
        if self.label == "violation":
            return (f"violation of ({eps}, {delta}): the chosen event's {level} lower bound on delta({eps}) is "
                    f"{self.lower_bound:.3g} > the claimed {delta} ({p or f'confidence {self.confidence:.4f}'}; "
                    f"{self.direction} direction)")
        bound = (f"the chosen event's {level} lower bound on delta({eps}) is {self.lower_bound:.3g}, not above the "
                 f"claimed {delta} ({p + '; ' if p else ''}chosen event's estimate {self.estimate:.3g}"
                 + ("" if self.estimate_se is None else f" +- {self.estimate_se:.2g}") + ")")
        if self.label == "inconclusive":
            reach = (f"an audit of this size can certify no delta({eps}) > 0 (chosen event's floor 1)"
                     if self.floor >= 1 else
                     f"the claimed {delta} is below the chosen event's floor {self.floor:.3g} (no estimate of "
                     f"delta({eps}) below it gives the chosen event a positive lower bound at this size), so this "
                     "audit could not show a violation of that size")
            text = f"inconclusive about ({eps}, {delta}): {reach}; {bound}"
        else:
            text = (f"no violation found of ({eps}, {delta}): {bound}; chosen event's floor {self.floor:.3g} (no "
                    f"estimate of delta({eps}) below it gives the chosen event a positive lower bound at this size); "
                    "not a proof of privacy")
        if self.suspicious:
            text = (f"suspicious at level {SUSPICION_LEVEL:g} ({p} <= {SUSPICION_LEVEL:g} but > alpha = {self.alpha:g}; "
                    f"a mechanism that meets its claim is so labelled in at most {SUSPICION_LEVEL:.0%} of audits); {text}")
            if self.samples_to_decide is not None:
                text += (f"; about {self.samples_to_decide:,} held-out samples per side would decide it if "
                         f"delta({eps}) equals the estimate")
        if self.samples_needed is not None and self.label == "inconclusive":  # else the audit was already that large
            seconds = self.seconds_needed
            time_needed = "" if seconds is None else f" (about {_duration(seconds)} of sampling)"
            text += (f"; {self.samples_needed:,} samples per side{time_needed} would make delta={delta} "
                     f"detectable at eps={eps}")
        return text

    @property
    def suspicious(self) -> bool:
        """Not a violation, but the verdict's test rejects H0: delta(eps) <= delta at the level
        `SUSPICION_LEVEL` (alpha < p <= 0.2): for a mechanism that meets its claim, at most 20% of audits."""
        return bool(self.label != "violation" and self.p_value is not None and self.p_value <= SUSPICION_LEVEL)

    @property
    def samples_to_decide(self) -> int | None:
        """For a suspicious verdict whose estimate exceeds the claim, the held-out samples per side n
        at which an event with P(S) - e^eps Q(S) = the estimate would give a lower bound above delta
        with probability 0.8 (normal approximation, each side at alpha / 4 as in `judge`, binomial
        variances at their largest, 1/4): n = (z_{alpha/4} + z_{0.2})^2 (1 + e^{2 eps}) / (4 (estimate - delta)^2)."""
        if not self.suspicious or self.estimate <= self.delta:
            return None
        z = bounds.normal_isf(self.alpha / 4) + bounds.normal_isf(0.2)
        return int(np.ceil(z * z * (1 + np.exp(2 * self.eps)) / (4 * (self.estimate - self.delta) ** 2)))

    def to_dict(self) -> dict:
        return asdict(self)


def _p_text(p: float, alpha: float) -> str:
    """"p = 0.12"; "p <= 1e-20" at the end of `_p_value`'s search. Two significant digits, more when
    two would put the printed p on the other side of alpha (0.0502 > alpha = 0.05 is not "p = 0.05")."""
    if p < 1.0001e-20:
        return "p <= 1e-20"
    p = min(p, 1.0)
    digits = next((d for d in range(2, 17) if (float(f"{p:.{d}g}") <= alpha) == (p <= alpha)), 17)
    return f"p = {p:.{digits}g}"


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def check_claim(claimed) -> tuple[float, float]:
    """Validate claimed = (eps0, delta0) with eps0 >= 0 and 0 <= delta0 < 1 (delta0 = 0: pure DP)."""
    try:
        eps0, delta0 = (float(v) for v in claimed)
    except (TypeError, ValueError):
        raise ValueError(f"claimed must be a pair (eps, delta), got {claimed!r}") from None
    if not (np.isfinite(eps0) and eps0 >= 0):
        raise ValueError(f"the claimed eps must be finite and >= 0, got {eps0}")
    if not 0 <= delta0 < 1:
        raise ValueError(f"the claimed delta must lie in [0, 1), got {delta0}")
    return eps0, delta0


def judge(claimed, roc_valid, held, alpha: float, n_select=None) -> Verdict:
    """The verdict on `claimed` from validation ROC (event choice, `spectrum.select_test_event`; its
    sizes `n_select` = (P, Q)) and held-out counts (`auditor.statistics.histogram.ScoreHistogram`)."""
    eps0, delta0 = check_claim(claimed)
    n = {"forward": (held.n_p, held.n_q), "reverse": (held.n_q, held.n_p)}
    events = []
    for direction in spectrum.DIRECTIONS:
        sel = None if n_select is None else (n_select if direction == "forward" else n_select[::-1])
        threshold, _ = spectrum.select_test_event(roc_valid, eps0, delta0, direction, *n[direction], alpha / 4, sel)
        events.append((direction, threshold))

    def lower(level):
        """Best of the two directions' bounds, each side of each event at level / 4."""
        values = [float(spectrum.event_lower_bound(held, t, eps0, d, level / 4)[()]) for d, t in events]
        return max(values), events[int(np.argmax(values))][0]

    estimate, estimate_se = max(_plug_in(held, t, eps0, d) for d, t in events)
    floor = float(bounds.detectable_floor(eps0, held.n_p, held.n_q, alpha / 4)[0])
    bound, direction = lower(alpha)
    p = _p_value(lambda level: lower(level)[0] > delta0, alpha)
    if bound > delta0:
        return Verdict("violation", eps0, delta0, 1 - p, bound, estimate, floor, direction, alpha,
                       estimate_se=estimate_se, p_value=p)
    label = "inconclusive" if floor > delta0 and (delta0 > 0 or floor >= 1) else "no violation found"
    return Verdict(label, eps0, delta0, 1 - alpha, bound, estimate, floor, direction, alpha, estimate_se=estimate_se,
                   p_value=p)


def _p_value(rejects, alpha: float) -> float:
    """The smallest level in [1e-20, 1) at which `rejects(level)` holds (monotone: False below some
    level, True above), by bisection on log10 of the level, rounded up to a level at which it rejects:
    40 steps between 1e-20 and alpha when it rejects at alpha (log10 p to 2e-11; alpha itself is the
    upper end, so p <= alpha exactly when it rejects at alpha), else 20 between alpha and 1 (to 2e-6);
    1 when it rejects at no level below 1."""
    top = -1e-9  # log10 of a level just below 1 (each side of each event at just below 1/4)
    if rejects(alpha):
        lo, hi, steps, p = -20.0, float(np.log10(alpha)), 40, float(alpha)
    elif rejects(10**top):
        lo, hi, steps, p = float(np.log10(alpha)), top, 20, float(10**top)
    else:
        return 1.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        if rejects(10**mid):
            hi, p = mid, float(10**mid)
        else:
            lo = mid
    return p


def _plug_in(held, threshold, eps, direction) -> tuple[float, float]:
    """(num-hat - e^eps den-hat, its standard error) of one event on the held-out counts: unbiased
    for the event's P(S) - e^eps Q(S), since the event was chosen on validation data (the sweep's
    maximum over thresholds is biased upward, most where the true delta is 0)."""
    k_p, k_q = (float(k) for k in held.counts(threshold))
    n_p, n_q = held.n_p, held.n_q
    num, den = (k_p / n_p, k_q / n_q) if direction == "forward" else (1 - k_q / n_q, 1 - k_p / n_p)
    n_num, n_den = (n_p, n_q) if direction == "forward" else (n_q, n_p)
    se = np.sqrt(num * (1 - num) / n_num + np.exp(2 * eps) * den * (1 - den) / n_den)
    return max(float(num - np.exp(eps) * den), 0.0), float(se)

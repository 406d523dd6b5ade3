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

* "violation": the (1 - alpha) lower bound exceeds delta0; the reported confidence is 1 - p, with
  p the smallest level at which it still does;
* "inconclusive": no violation, and delta0 is below the detectable floor at eps0 (no outcome of an
  audit of this size could have shown a violation of that size). For a pure-DP claim (delta0 = 0)
  any positive lower bound is a violation, so it is "inconclusive" only when the floor is 1
  (nothing at all can be certified at eps0);
* "no violation found": no violation although the audit could resolve deltas of size delta0.
  Black-box evidence never proves a claim; this says the tested score found no violation at level
  alpha, nothing more.

The verdict's `estimate` is the held-out plug-in value P-hat(S) - e^eps0 Q-hat(S) of the tested
event (the better direction, 0 when negative), with its standard error `estimate_se`: unlike the
sweep's maximum over thresholds it is not biased upward. A verdict that is not a violation is
"suspicious" when the estimate exceeds delta0 by more than one standard error.

When a claim with delta0 > 0 is not violated, `audit` fills in `samples_needed`: the samples per
side at which delta0 would be detectable at eps0 (`bounds.samples_for_floor`), and
`seconds_needed`, the time that would take at the audit's measured sampling rate (no sample size
makes every violation of a pure-DP claim detectable, so these stay None for delta0 = 0). The text
of an "inconclusive" verdict says them; after "no violation found" the audit was already larger.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from ndis.auditor.statistics import bounds
from ndis.auditor.statistics import spectrum

LABELS = ("violation", "no violation found", "inconclusive")


@dataclass(eq=False)
class Verdict:
    """A verdict; compares equal to its label, so `report.verdict == "violation"` works."""

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
        if self.label == "violation":
            return (f"violation of ({self.eps:g}, {self.delta:g}) with confidence {self.confidence:.4f}: "
                    f"delta({self.eps:g}) >= {self.lower_bound:.3g} ({self.direction})")
        if self.label == "inconclusive":
            text = (f"inconclusive at level {self.alpha:g}: the detectable floor {self.floor:.3g} at eps={self.eps:g} "
                    f"is above the claimed delta {self.delta:g}, so no audit of this size could show a violation")
        else:
            text = (f"no violation found of ({self.eps:g}, {self.delta:g}) at level {self.alpha:g} (lower bound "
                    f"{self.lower_bound:.3g}, estimate {self.estimate:.3g}, floor {self.floor:.3g}); this is not "
                    f"a proof of privacy")
        if self.suspicious:
            text = (f"suspicious: estimate above the claim; {text}; about {self.samples_to_decide:,} held-out samples "
                    f"per side would decide it if delta({self.eps:g}) equals the estimate")
        if self.samples_needed is not None and self.label == "inconclusive":  # else the audit was already that large
            seconds = self.seconds_needed
            time_needed = "" if seconds is None else f" (about {_duration(seconds)} of sampling)"
            text += (f"; {self.samples_needed:,} samples per side{time_needed} would make delta={self.delta:g} "
                     f"detectable at eps={self.eps:g}")
        return text

    @property
    def suspicious(self) -> bool:
        """Not a violation, but the point estimate exceeds the claimed delta by more than its standard
        error (a hint: for a mechanism exactly at its claim, about P(Z > 1) = 1/6 of audits by the normal
        approximation)."""
        margin = 0.0 if self.estimate_se is None else self.estimate_se
        return bool(self.label != "violation" and self.estimate - self.delta > margin)

    @property
    def samples_to_decide(self) -> int | None:
        """For a suspicious verdict, the held-out samples per side n at which an event with
        P(S) - e^eps Q(S) = the estimate would give a lower bound above delta with probability 0.8
        (normal approximation, each side at alpha / 4 as in `judge`, binomial variances at their
        largest, 1/4): n = (z_{alpha/4} + z_{0.2})^2 (1 + e^{2 eps}) / (4 (estimate - delta)^2)."""
        if not self.suspicious:
            return None
        z = stats.norm.isf(self.alpha / 4) + stats.norm.isf(0.2)
        return int(np.ceil(z * z * (1 + np.exp(2 * self.eps)) / (4 * (self.estimate - self.delta) ** 2)))

    def to_dict(self) -> dict:
        return asdict(self)


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
    if bound > delta0:
        lo, hi = -20.0, np.log10(alpha)  # bisection on log10 p (confidence reported up to 1 - 1e-20)
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if lower(10**mid)[0] > delta0 else (mid, hi)
        return Verdict("violation", eps0, delta0, 1 - 10**hi, bound, estimate, floor, direction, alpha,
                       estimate_se=estimate_se)
    label = "inconclusive" if floor > delta0 and (delta0 > 0 or floor >= 1) else "no violation found"
    return Verdict(label, eps0, delta0, 1 - alpha, bound, estimate, floor, direction, alpha, estimate_se=estimate_se)


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

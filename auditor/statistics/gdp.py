"""Gaussian differential privacy from an audit: the certified mu_lo and the trade-off view.

mu-GDP (Dong, Roth & Su 2022, Definition 2.7) requires every test of M(D) against M(D') to have type
II error beta >= G_mu(a) = Phi(Phi^-1(1 - a) - mu) at type I error a. The test "reject M(D') on the
event S" has a = Q(S), beta = 1 - P(S), so mu-GDP implies Phi^-1(P(S)) - Phi^-1(Q(S)) <= mu. One
event with held-out Clopper-Pearson bounds P(S) >= P_lo, Q(S) <= Q_hi therefore refutes mu-GDP for
every mu < mu_lo = Phi^-1(P_lo) - Phi^-1(Q_hi): the f-DP analogue of `auditor.statistics.certify`'s eps_lo.

As there, the event (a level set of the score, or its complement for the reverse direction) is
chosen on the validation split, here by the largest Wilson-predicted Phi^-1(P_lo) - Phi^-1(Q_hi).
The probit gap is flat along a Gaussian ROC, so the maximum over thousands of thresholds is won by
tail events whose validation fractions were lucky. The prediction therefore uses the effective size
1 / (1/n_held + 1/n_validation), the variance of a held-out fraction about the validation one, and a
quantile raised by `Z_SELECT` (mu = 1, 1.25e5 validation and 5e5 held-out scores per side, smallest
mu_lo: 0.73 of 20 seeds at the held-out sizes; 0.90 of 60 seeds at the effective sizes; 0.98 of the
same 60 with Z_SELECT = 1; medians 0.99). Each of the four one-sided bounds (two directions x two
laws) is at alpha / 4, so mu_lo holds with probability >= 1 - alpha. The held-out data are read
only through their counts (`held.counts`, `held.n_p`, `held.n_q`; `auditor.statistics.histogram.ScoreHistogram`).

The trade-off view is the held-out ROC of the score's tests, a = Q-hat(S_t), beta = 1 - P-hat(S_t),
with a DKW-Massart band uniform over thresholds (each empirical survival function two-sided at
alpha / 4); it bounds the errors of the score's own tests, which are at least those of the best test.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import special

from . import bounds, spectrum

#: Added to the normal quantile of the Wilson bounds that predict an event's mu_lo (see above); the
#: bound stays valid for any value, since the held-out counts never choose the event.
Z_SELECT = 1.0
#: Type I errors at which the trade-off view is tabulated (log-spaced near 0, where GDP curves bend).
TRADEOFF_POINTS = np.unique(np.concatenate([[0.0], np.logspace(-5, 0, 81), np.linspace(0, 1, 101)]))


@dataclass
class GDPCertificate:
    """mu_lo: not mu-GDP for any mu < mu_lo, with probability >= 1 - alpha.

    `direction`, `threshold` name the refuting event, `p_lower` / `q_upper` its bounds (threshold
    None and mu_lo 0 when no event was predicted to refute anything). `tradeoff`: the trade-off
    view (`tradeoff_view`), or None."""

    mu_lo: float
    alpha: float
    direction: str | None = None
    threshold: float | None = None
    p_lower: float = 0.0
    q_upper: float = 1.0
    tradeoff: dict | None = field(default=None, repr=False)

    def __str__(self):
        if self.mu_lo <= 0:
            return "mu_lo = 0: no Gaussian-DP claim is refuted"
        return (f"not mu-GDP for any mu < mu_lo = {self.mu_lo:.4g}, at {1 - self.alpha:.0%} confidence "
                f"({self.direction})")

    def to_dict(self) -> dict:
        return asdict(self)


def gaussian_tradeoff(type_one, mu):
    """G_mu(a) = Phi(Phi^-1(1 - a) - mu): the trade-off function of mu-GDP (Dong, Roth & Su 2022,
    Definition 2.7)."""
    return special.ndtr(bounds.normal_isf(np.asarray(type_one, dtype=float)) - mu)


def _probit_gap(p, q):
    """Phi^-1(p) - Phi^-1(q), -inf where p = 0 or q = 1."""
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = special.ndtri(p) - special.ndtri(q)
    return np.where(np.isnan(gap), -np.inf, gap)


def select_event(roc_valid: spectrum.EmpiricalROC, direction: str, n_num: float, n_den: float, level: float):
    """(threshold, predicted mu_lo) of the validation event with the largest Wilson-predicted
    Phi^-1(P_lo) - Phi^-1(Q_hi) at sizes (n_num, n_den); (None, -inf) when none is positive."""
    num, den = spectrum._event_probabilities(roc_valid, direction)
    z = bounds.normal_isf(level) + Z_SELECT
    # The probit gap increases with P_lo and decreases with Q_hi: only the blocks of events that can
    # hold its maximum are evaluated (the slack covers the rounding of ndtri, a few units of 2^-52).
    search = spectrum._BlockMax(bounds.wilson_lower(num, n_num, z), bounds.wilson_upper(den, n_den, z))
    k, predicted = search.argmax(_probit_gap, slack=1e-9)
    if not predicted > 0:
        return None, -np.inf
    return float(roc_valid.thresholds[k]), float(predicted)


def certify_gdp(roc_valid: spectrum.EmpiricalROC, held, alpha: float, n_select: tuple[int, int]) -> GDPCertificate:
    """mu_lo from the validation ROC (event choice; `n_select` = its sizes for P and Q) and the
    held-out counts `held` (`auditor.statistics.histogram.ScoreHistogram`)."""
    level = alpha / 4
    n_p, n_q = held.n_p, held.n_q
    m_p, m_q = (1 / (1 / n_p + 1 / n_select[0]), 1 / (1 / n_q + 1 / n_select[1]))
    best = GDPCertificate(0.0, float(alpha))
    for direction in spectrum.DIRECTIONS:
        n_num, n_den = (n_p, n_q) if direction == "forward" else (n_q, n_p)
        threshold, _ = select_event(roc_valid, direction, *((m_p, m_q) if direction == "forward" else (m_q, m_p)),
                                    level)
        if threshold is None:
            continue
        k_p, k_q = (int(k) for k in held.counts(threshold))
        k_num, k_den = (k_p, k_q) if direction == "forward" else (n_q - k_q, n_p - k_p)
        p_lo = float(bounds.clopper_pearson_lower(k_num, n_num, level))
        q_hi = float(bounds.clopper_pearson_upper(k_den, n_den, level))
        mu_lo = float(_probit_gap(p_lo, q_hi))
        if mu_lo > best.mu_lo:
            best = GDPCertificate(mu_lo, float(alpha), direction, threshold, p_lo, q_hi)
    return best


def tradeoff_view(roc_held: spectrum.EmpiricalROC, n_p: int, n_q: int, alpha: float,
                  type_one=TRADEOFF_POINTS) -> dict:
    """The score's trade-off curve beta(a) on `type_one` (ROC points joined by randomised tests),
    and a band [beta_lower, beta_upper] holding for every threshold with probability >= 1 - alpha."""
    r_p, r_q = bounds.dkw_radius(n_p, alpha / 4), bounds.dkw_radius(n_q, alpha / 4)
    a, b = roc_held.q, 1.0 - roc_held.p  # increasing a, decreasing b along the thresholds
    type_one = np.asarray(type_one, dtype=float)
    beta = np.interp(type_one, a, b)
    lower = np.interp(type_one, np.clip(a - r_q, 0, 1), np.clip(b - r_p, 0, 1))
    upper = np.interp(type_one, np.clip(a + r_q, 0, 1), np.clip(b + r_p, 0, 1), left=1.0)
    return {"type_one": type_one, "beta": beta, "beta_lower": lower, "beta_upper": upper, "alpha": float(alpha)}

"""The one-run bound of Steinke, Nasr & Jagielski (2023, "Privacy auditing with one (1) training run").

m canaries are each included by a fair coin; an auditor that sees the output makes r guesses (the
rest abstain) and W of them are right. If the mechanism is (eps, delta)-DP in each canary, their main
theorem bounds, for every v,

    P[W >= v] <= P[Binomial(r, q) >= v] + 2 m delta max_{1 <= i <= v} P[v - i <= Binomial(r, q) < v] / i,

q = e^eps / (1 + e^eps), the accuracy of eps-DP randomized response (the delta term is the one of
their p-value routine). The right side is the p-value of "the mechanism is (eps, delta)-DP" given v
right guesses of r; it grows with eps, and every eps whose p-value is at most alpha is refuted. The
bound needs no assumption beyond the coin flips: it holds at exactly 1 - alpha (black box: input
canaries and the final model; white box: gradient canaries and the updates alike). It is capped by m:
even r = v = m right guesses certify at most the eps with q^m = alpha (`ceiling`).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from . import guesses
from .estimate import Estimate, Uncomputable

#: The eps search range: a perfect attack on 10^8 canaries certifies less (q^m = alpha at eps ~ 17.5).
EPS_MAX = 40.0
ASSUMPTION = "nothing beyond the fair coin flips (exact)"


def _delta_term(r: int, v: int, q: float) -> float:
    """max_{1 <= i <= v} P[v - i <= Binomial(r, q) < v] / i, the sum over windows of the binomial's
    pmf. Only windows reaching down to `low`, about 12 standard deviations below the mean, are
    summed when the rest provably cannot win: with F the binomial's cdf, every window reaching
    below `low` is at most F(v - 1) / i < F(v - 1) / (v - low), while the window down to `low`
    is F(v - 1) - F(low - 1), at least as large per canary when F(low - 1) (v - low + 1) <= F(v - 1).
    Otherwise all v windows are summed. This makes the cost grow with the binomial's spread, not with v."""
    top = special.bdtr(v - 1, r, q)
    low = int(min(max(r * q - 12.0 * np.sqrt(r * q * (1 - q)) - 1, 0), v - 1))
    if low > 0 and special.bdtr(low - 1, r, q) * (v - low + 1) > top:
        low = 0
    j = np.arange(low, v)
    below = np.where(j > 0, special.bdtr(np.maximum(j - 1, 0), r, q), 0.0)   # F(j - 1), j = low .. v - 1
    windows = top - below[::-1]                                              # P[v - i <= B < v], i = 1 .. v - low
    return float(np.max(windows / np.arange(1, v - low + 1)))


def p_value(m: int, r: int, v: int, eps, delta: float) -> np.ndarray:
    """P-value of (eps, delta)-DP given v right guesses out of r among m canaries (module docstring),
    for an array of eps; at delta = 0 the binomial tail alone (their bound for pure DP)."""
    q = special.expit(np.atleast_1d(np.asarray(eps, dtype=float)))
    tail = special.bdtrc(v - 1, r, q) if v > 0 else np.ones(q.size)   # P[Binomial(r, q) >= v]
    if delta == 0 or v == 0:
        return np.minimum(tail, 1.0)
    worst = np.array([_delta_term(r, v, float(x)) for x in q])
    return np.minimum(tail + 2.0 * m * delta * worst, 1.0)


def eps_lower(m: int, r: int, v: int, delta: float, alpha: float) -> float:
    """inf{eps >= 0 : p_value(eps) > alpha}: every eps below it is refuted at level alpha (0 when even
    eps = 0 is not). Searched on a 65-point grid of [0, EPS_MAX], then by bisection to 1e-6."""
    if v <= r / 2 or p_value(m, r, v, 0.0, delta)[0] > alpha:
        return 0.0
    grid = np.linspace(0.0, EPS_MAX, 65)
    above = np.flatnonzero(p_value(m, r, v, grid, delta) > alpha)
    if above.size == 0:
        return EPS_MAX
    lo, hi = grid[above[0] - 1], grid[above[0]]
    while hi - lo > 1e-6:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if p_value(m, r, v, mid, delta)[0] <= alpha else (lo, mid)
    return float(lo)


def ceiling(m: int, delta: float, alpha: float) -> float:
    """The largest eps_lo of `estimate` on m canaries: every guess right, at the best k of the grid. Its
    delta term 2 m delta grows with m (0.2 at m = 10^4, delta = 1e-5), so beyond some m it falls."""
    ks = guesses.sizes(m)
    return max((eps_lower(m, 2 * int(k), 2 * int(k), delta, alpha / ks.size) for k in ks), default=0.0)


def estimate(scores: np.ndarray, included: np.ndarray, delta: float, alpha: float) -> Estimate:
    """eps_lo from validated canary scores (`inputs.canary_scores`): the largest eps_lower over the
    guess grid `guesses.sizes`, each at alpha / (grid size); `details["ceiling"]` is `ceiling`.
    Raises `Uncomputable` when even every guess right would certify nothing."""
    m = scores.size
    most = ceiling(m, delta, alpha)
    if most == 0:
        raise Uncomputable(guesses.nothing_certifiable(m, delta, alpha, ceiling))
    ks = guesses.sizes(m)
    right = guesses.correct_counts(scores, included, ks)
    bounds = [eps_lower(m, 2 * int(k), int(v), delta, alpha / ks.size) for k, v in zip(ks, right)]
    best = int(np.argmax(bounds))
    return Estimate("steinke", float(bounds[best]), delta, alpha, ASSUMPTION, details={
        "guesses": 2 * int(ks[best]), "correct": int(right[best]), "guess_grid": (2 * ks).tolist(),
        "correct_by_grid": right.tolist(), "eps_lo_by_grid": bounds, "level_per_guess_count": alpha / ks.size,
        "ceiling": most})

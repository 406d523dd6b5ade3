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

from ndis.auditor.one_run import guesses
from ndis.auditor.one_run.estimate import Estimate

#: The eps search range: a perfect attack on 10^8 canaries certifies less (q^m = alpha at eps ~ 17.5).
EPS_MAX = 40.0
ASSUMPTION = "nothing beyond the fair coin flips (exact)"


def p_value(m: int, r: int, v: int, eps, delta: float) -> np.ndarray:
    """P-value of (eps, delta)-DP given v right guesses out of r among m canaries (module docstring),
    for an array of eps."""
    q = special.expit(np.atleast_1d(np.asarray(eps, dtype=float)))[:, None]
    tail = special.bdtrc(v - 1, r, q)[:, 0] if v > 0 else np.ones(q.shape[0])   # P[Binomial(r, q) >= v]
    if delta == 0 or v == 0:
        return np.minimum(tail, 1.0)
    below = special.bdtr(np.arange(v), r, q)                      # P[Binomial <= j], j = 0..v-1
    window = below[:, -1:] - np.concatenate([np.zeros((q.shape[0], 1)), below[:, :-1]], axis=1)[:, ::-1]
    # window[:, i - 1] = P[v - i <= Binomial < v] for i = 1..v
    worst = np.max(window / np.arange(1, v + 1), axis=1)
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
    guess grid `guesses.sizes`, each at alpha / (grid size)."""
    m = scores.size
    ks = guesses.sizes(m)
    right = guesses.correct_counts(scores, included, ks)
    bounds = [eps_lower(m, 2 * int(k), int(v), delta, alpha / ks.size) for k, v in zip(ks, right)]
    best = int(np.argmax(bounds))
    return Estimate("steinke", float(bounds[best]), delta, alpha, ASSUMPTION, details={
        "guesses": 2 * int(ks[best]), "correct": int(right[best]), "guess_grid": (2 * ks).tolist(),
        "correct_by_grid": right.tolist(), "eps_lo_by_grid": bounds, "level_per_guess_count": alpha / ks.size})

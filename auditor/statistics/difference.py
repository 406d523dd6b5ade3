"""An exact test of delta(eps) <= d on one event, from the difference of its two binomial counts.

Of n fresh outputs of M(D) and n of M(D'), k_P ~ Bin(n, P) and k_Q ~ Bin(n, Q) fall in an event S
chosen beforehand (independent counts). The claim (eps, d) implies H0: P - c Q <= d, c = e^eps.
Bounding P and Q separately (Clopper-Pearson at level / 2 each) needs a margin of about
z (se_P + c se_Q); a test of the difference as one statistic needs about z sqrt(se_P^2 + c^2 se_Q^2),
up to sqrt(2) times less. The statistic is T = k_P - c k_Q; its null distribution depends on the
nuisance Q, which Berger & Boos (1994, Theorem 1) handle with a 1 - gamma confidence interval C for Q:

    p = gamma + sup_{Q in C} sup_{P <= min(1, cQ + d)} Pr_{P,Q}(T >= t_obs)

is a valid p-value. Pr(T >= t) grows with P and falls with Q, so the inner supremum is at
P(Q) = min(1, cQ + d), and on a cell [q0, q1] of C it is at most Pr_{P(q1), q0}(T >= t): branch and
bound over cells bounds the supremum from above (erring only on the safe side), refining only the
cells that could reach the threshold. The tail itself is exact (up to floating-point rounding):

    Pr(T >= t) = sum_j Bin(j; n, Q) Pr(k_P >= t + c j),

summed over the j that carry all but a negligible mass of Bin(n, Q), that mass added in full.

`rejects(..., level)` is the test at `level` with gamma = GAMMA_SHARE * level and C the two-sided
Clopper-Pearson interval at gamma: it rejects when the bounded supremum is <= (1 - GAMMA_SHARE) level.
The rejection regions grow with the level (C shrinks, the threshold grows) and with eps and d shrink
(the null grows), so the p-value is the smallest rejecting level (bisection), `delta_lower` the
largest rejected d (a 1 - level lower confidence bound on P - cQ, hence on delta(eps)), and `eps_lo`
is found by walking up the fixed grid `eps_grid`: the largest grid point below which every point is
rejected (each false statement needs the rejection of the one true null at the first grid point
>= the true eps, so the bound holds at 1 - level without assuming any monotonicity in eps).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from . import bounds

#: Share of the level spent on the nuisance's confidence interval (Berger & Boos's gamma / level).
GAMMA_SHARE = 0.1
#: The most halvings of the confidence interval's cells, and the most cells kept open (beyond either the
#: test does not reject: the safe side).
DEPTH, MAX_CELLS = 20, 64
#: log10 of the smallest p-value resolved (smaller ones are reported as this).
LOG10_P_MIN = -30.0
#: The grid of eps on which `eps_lo` is read: steps of EPS_STEP up to EPS_LINEAR, then ratios of EPS_RATIO.
EPS_STEP, EPS_LINEAR, EPS_RATIO = 0.01, 1.0, 1.01


def _log_pmf(k, n: int, p: float):
    """log Bin(k; n, p) for integer arrays k in [0, n]."""
    k = np.asarray(k, dtype=float)
    return (special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)
            + special.xlogy(k, p) + special.xlog1py(n - k, -p))


def _window(n: int, p: float, width: float) -> tuple[int, int]:
    """Integers [low, high] outside which Bin(n, p) has mass < 2 exp(-width^2 / 2) (Bernstein's
    inequality: a deviation x has probability <= exp(-x^2 / (2 (n p (1 - p) + x / 3))) on each side)."""
    x = width**2 / 6 + math.sqrt(width**4 / 36 + width**2 * n * p * (1 - p))
    return max(0, math.floor(n * p - x)), min(n, math.ceil(n * p + x))


def _upper_tail(m, n: int, p: float, width: float):
    """Upper bounds on Pr(Bin(n, p) >= m) for an increasing integer array m: exact for the m in its
    `_window` (and m <= 0), 1 below it, the tail beyond it above it."""
    m = np.asarray(m, dtype=np.int64)
    low, high = _window(n, p, width)
    a, b = max(int(m[0]), low), min(int(m[-1]), high)
    if a > b:  # every m outside the window
        beyond = float(special.bdtrc(high, n, p)) if high < n else 0.0
        return np.where((m < low) | (m <= 0), 1.0, beyond)
    ks = np.arange(a, b + 1)
    above = float(special.bdtrc(b, n, p)) if b < n else 0.0  # Pr(X > b)
    tail = np.append(np.cumsum(np.exp(_log_pmf(ks, n, p))[::-1])[::-1] + above, above)  # Pr(X >= a + i)
    return np.where((m < low) | (m <= 0), 1.0, tail[np.clip(m, a, b + 1) - a])


def tail(t: float, c: float, n: int, p: float, q: float, width: float) -> float:
    """An upper bound on Pr(k_P - c k_Q >= t), k_P ~ Bin(n, p), k_Q ~ Bin(n, q) independent: exact over
    the j and k_P in the `_window`s of the two, plus the mass of Bin(n, q) outside its window and the tail
    of Bin(n, p) beyond its own (at most 3 exp(-width^2 / 2) in all)."""
    lo, hi = _window(n, q, width)
    outside = (float(special.bdtr(lo - 1, n, q)) if lo > 0 else 0.0) + (float(special.bdtrc(hi, n, q)) if hi < n else 0.0)
    j = np.arange(lo, hi + 1)
    x = t + c * j
    m = np.ceil(x - 1e-9 * np.maximum(1.0, np.abs(x)))  # ties counted as T >= t: the safe side
    return float(np.dot(np.exp(_log_pmf(j, n, q)), _upper_tail(m, n, p, width))) + outside


def rejects(k_p: int, k_q: int, n: int, eps: float, d: float, level: float) -> bool:
    """Whether the Berger-Boos test at `level` (module docstring) rejects H0: P - e^eps Q <= d."""
    c, gamma = math.exp(eps), GAMMA_SHARE * level
    threshold = (1 - GAMMA_SHARE) * level
    q_lo = bounds.clopper_pearson_lower(k_q, n, gamma / 2)
    q_hi = bounds.clopper_pearson_upper(k_q, n, gamma / 2)
    t = k_p - c * k_q
    width = math.sqrt(2 * math.log(3e3 / threshold))  # the slack is < threshold / 1000

    @functools.cache  # a cell's upper end is its right half's too: each point's tail is computed once
    def null(q0, q1):  # Pr(T >= t) at the null point P(q1), Q = q0: exact when q0 = q1, else a cell's bound
        return tail(t, c, n, min(1.0, c * q1 + d), q0, width)

    if null(q_hi, q_hi) > threshold:  # the tail tends to peak at the top of C: a quick refusal
        return False
    cells = [(q_lo, q_hi)]
    for _ in range(DEPTH):
        open_cells = [(q0, q1) for q0, q1 in cells if null(q0, q1) > threshold]
        if not open_cells:
            return True
        if len(open_cells) > MAX_CELLS or any(null(q1, q1) > threshold for _, q1 in open_cells):
            return False
        cells = [half for q0, q1 in open_cells for half in ((q0, (q0 + q1) / 2), ((q0 + q1) / 2, q1))]
    return False


def p_value(k_p: int, k_q: int, n: int, eps: float, d: float, level: float | None = None) -> float:
    """The smallest level at which `rejects`, rounded up to a level at which it rejects (1 when none; at
    least 10^LOG10_P_MIN): bisection on log10 to 30 / 2^12 (a relative error below 2%).

    With `level` (a level the test was run at), the bisection is bracketed by it: when the test rejects
    at `level` the upper end starts at `level` itself, so the p-value is <= `level` exactly when the
    test rejects there (a refutation at `level` never reports p > `level`); otherwise the lower end
    starts there and the p-value is > `level`."""
    if not rejects(k_p, k_q, n, eps, d, 1 - 1e-9):
        return 1.0
    lo, hi, p = LOG10_P_MIN, 0.0, 1.0  # rejects at p = 10^hi (or 1), not (or not resolved) at 10^lo
    if level is not None:
        if rejects(k_p, k_q, n, eps, d, level):
            hi, p = math.log10(level), float(level)
        else:
            lo = math.log10(level)
    if lo == LOG10_P_MIN and rejects(k_p, k_q, n, eps, d, 10**lo):
        return 10**lo
    for _ in range(12):
        mid = (lo + hi) / 2
        if rejects(k_p, k_q, n, eps, d, 10**mid):
            hi, p = mid, float(10**mid)
        else:
            lo = mid
    return p


def delta_lower(k_p: int, k_q: int, n: int, eps: float, level: float) -> float:
    """The largest d (to 1e-3 relative) whose H0: P - e^eps Q <= d is rejected at `level`; 0 when none:
    a (1 - level) lower confidence bound on delta(eps) (Neyman's inversion of the tests)."""
    if not rejects(k_p, k_q, n, eps, 0.0, level):
        return 0.0
    lo, hi = 0.0, k_p / n  # rejected at lo; at d >= k_p / n (T <= n d) only at levels near 1: capped there
    while hi - lo > 1e-3 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if rejects(k_p, k_q, n, eps, mid, level) else (lo, mid)
    return lo


def eps_grid(upto: float) -> np.ndarray:
    """The fixed grid of `eps_lo` up to `upto` (module docstring)."""
    linear = np.arange(0.0, min(upto, EPS_LINEAR) + EPS_STEP / 2, EPS_STEP)
    if upto <= EPS_LINEAR:
        return linear
    ratios = EPS_LINEAR * EPS_RATIO ** np.arange(1, math.ceil(math.log(upto / EPS_LINEAR) / math.log(EPS_RATIO)) + 1)
    return np.concatenate([linear, ratios])


def eps_lo(k_p: int, k_q: int, n: int, d: float, level: float, points=()) -> float:
    """The largest point of `eps_grid` (with the fixed `points` added, e.g. the claimed eps) such that
    H0: P - e^eps Q <= d is rejected at `level` there and at every point below; 0 when eps = 0 is not
    rejected. The mechanism is then not (e, d)-DP for any e <= eps_lo (a positive eps_lo is itself
    rejected), at confidence 1 - level."""
    if k_p == 0 or (k_q > 0 and k_p / n - d <= 0):
        return 0.0
    ceiling = math.log((k_p / n - d) / (k_q / n)) if k_q > 0 else math.log(max(k_p / n - d, 1e-300) * n) + 5.0
    grid = np.union1d(eps_grid(max(ceiling, 0.0)), np.asarray(points, dtype=float))
    found = 0.0
    for eps in grid:
        if eps > ceiling or not rejects(k_p, k_q, n, float(eps), d, level):
            break
        found = float(eps)
    return found

"""Confidence bounds for probabilities of events estimated from held-out counts.

Exact binomial (Clopper-Pearson) bounds for one event chosen independently of the counts, the
Dvoretzky-Kiefer-Wolfowitz-Massart radius for bounds that hold uniformly over all thresholds, and
the detectable floor that follows from them.
"""

from __future__ import annotations

import numpy as np
from scipy import special


def normal_isf(q):
    """The standard normal's upper q-quantile, scipy.stats.norm.isf(q), computed as scipy does
    (-ndtri(q), bit for bit) without importing scipy.stats (seconds at start-up)."""
    return -special.ndtri(q)


def _check_level(level) -> np.ndarray:
    level = np.asarray(level, dtype=float)
    if np.any((level <= 0) | (level >= 1)):
        raise ValueError(f"a significance level must lie in (0, 1), got {level}")
    return level


def clopper_pearson_lower(k, n, level):
    """One-sided (1 - level) lower bound on a binomial proportion from k successes in n trials.

    Clopper & Pearson (1934): the `level` quantile of Beta(k, n - k + 1); 0 when k = 0.
    Array in, array out (broadcasting); scalar in, float out.
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    level = _check_level(level)
    with np.errstate(invalid="ignore"):
        bound = special.betaincinv(np.maximum(k, 1.0), n - k + 1.0, level)  # Beta(a, b).ppf(level)
    bound = np.where(k <= 0, 0.0, bound)
    return float(bound) if bound.ndim == 0 else bound


def clopper_pearson_upper(k, n, level):
    """One-sided (1 - level) upper bound on a binomial proportion from k successes in n trials.

    Clopper & Pearson (1934): the (1 - level) quantile of Beta(k + 1, n - k); 1 when k = n.
    """
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    level = _check_level(level)
    with np.errstate(invalid="ignore"):
        bound = special.betainccinv(k + 1.0, np.maximum(n - k, 1.0), level)  # Beta(a, b).isf(level)
    bound = np.where(k >= n, 1.0, bound)
    return float(bound) if bound.ndim == 0 else bound


def dkw_radius(n, level):
    """Radius r with P(sup_t (F_n(t) - F(t)) > r) <= level for an n-sample empirical CDF F_n.

    One-sided Dvoretzky-Kiefer-Wolfowitz inequality with Massart's (1990) constant:
    r = sqrt(log(1 / level) / (2 n)), valid for level <= 1/2. The same radius bounds the other
    side, and the survival function, uniformly over all thresholds t.
    """
    level = _check_level(level)
    if np.any(level > 0.5):
        raise ValueError("the one-sided DKW-Massart bound needs level <= 1/2")
    r = np.sqrt(np.log(1.0 / level) / (2.0 * np.asarray(n, dtype=float)))
    return float(r) if np.ndim(r) == 0 else r


def wilson_lower(p, n, z):
    """Wilson score lower bound for proportion p observed in n trials at normal quantile z.

    A cheap, vectorised, smooth stand-in for Clopper-Pearson, used only to *predict* which event
    will give the best bound (the bound that is reported is always Clopper-Pearson).
    """
    p, n = np.asarray(p, dtype=float), np.asarray(n, dtype=float)
    shape = np.broadcast_shapes(p.shape, n.shape)
    z2 = z * z
    # (p + z2 / 2n) / (1 + z2 / n) - z / (1 + z2 / n) sqrt(p (1 - p) / n + z2 / 4n^2), operation by
    # operation, in place (products in the other order: the same numbers, bit for bit).
    scale = 1 + z2 / n
    centre = np.add(p, z2 / (2 * n), out=np.empty(shape))
    centre /= scale
    half = np.subtract(1.0, p, out=np.empty(shape))
    half *= p
    np.maximum(half, 0.0, out=half)
    half /= n
    half += z2 / (4 * n * n)
    np.sqrt(half, out=half)
    half *= z / scale
    centre -= half
    np.clip(centre, 0.0, 1.0, out=centre)
    return centre if centre.ndim else centre[()]


def wilson_upper(p, n, z):
    """Wilson score upper bound, the counterpart of `wilson_lower`."""
    return 1.0 - wilson_lower(1.0 - np.asarray(p, dtype=float), n, z)


def detectable_floor(eps, n_p, n_q, level):
    """Smallest estimate delta-hat(eps) that can yield a positive (1 - 2 level) lower bound.

    The lower bound of an event S is CP_lower(k_P; n_p) - e^eps CP_upper(k_Q; n_q) (see
    `auditor.statistics.spectrum`); it is largest, for a given delta-hat = k_P / n_p - e^eps k_Q / n_q, when
    k_Q = 0. The floor is the smallest k_P / n_p with CP_lower(k_P) > e^eps CP_upper(0): no outcome
    of an audit with these sample sizes can certify a delta(eps) below it. Returns 1.0 (nothing
    can be certified) where even k_P = n_p is not enough.
    """
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    level = float(_check_level(level))
    q_upper = 1.0 - level ** (1.0 / n_q)
    target = np.exp(eps) * q_upper
    floor = np.ones_like(eps)
    searched = clopper_pearson_lower(n_p, n_p, level) > target  # elsewhere even k_P = n_p is not enough
    t = target[searched]
    counts = np.int64 if n_p < 2**62 else object  # Python integers beyond int64 (an n of 10^300 is checked)
    lo, hi = np.zeros(t.size, counts), np.full(t.size, int(n_p), counts)  # CP_lower(lo) <= t < CP_lower(hi)
    while t.size and np.any(hi - lo > 1):  # one bisection for every eps at once
        mid = (lo + hi) // 2
        above = np.atleast_1d(clopper_pearson_lower(mid, n_p, level)) > t
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    floor[searched] = hi / n_p
    return floor


def samples_for_floor(eps: float, delta: float, level: float) -> int:
    """Smallest n such that n held-out samples per side have a detectable floor (`detectable_floor`
    at eps, level) of at most `delta`: the audit size at which a delta(eps) = delta could be shown."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta}")

    def enough(n):
        return detectable_floor(eps, n, n, level)[0] <= delta

    lo = max(int(np.log(level) / np.log1p(-delta * np.exp(-eps))), 1)  # e^eps CP_upper(0; lo) >= delta
    hi = 2 * lo
    while not enough(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:  # enough(hi), not enough(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi

"""An exact test of H0: p - c q <= delta for two independent binomial proportions, and the lower
confidence bound on p - c q that it inverts to.

The verdict tests one event S: its num side p = P(S) is seen k_num times in n_num held-out samples
and its den side q = Q(S) k_den times in n_den, and delta(eps) >= p - e^eps q. Bounding p from below
and q from above, each at level/2 (Clopper-Pearson), adds the two widths; this test spends `level`
once on the statistic T = k_num / n_num - c k_den / n_den, whose spread is the root of the sum of
the two variances (measured: bounds about 2.1 standard errors below the estimate instead of 3.2;
docs/auditor/method.md).

The test is exact (Berger & Boos 1994): T grows with k_num and falls with k_den, so P(T >= t)
grows with p and falls with q, and for each q its supremum over H0 is at p = min(delta + c q, 1).
At level a, with gamma = GAMMA_SHARE a and C the (1 - gamma) Clopper-Pearson interval for q from
k_den, the test rejects when

    sup over q in C of P_{min(delta + c q, 1), q}(T >= t_obs) + gamma <= a.

The rejections are nested in a (a larger a narrows C and raises the threshold), so the smallest
level at which the test rejects is a valid p-value (`pvalue`), and in delta, so the largest delta
it rejects is a lower confidence bound (`lower_bound`).

C is cut into cells [q_a, q_b] of a tenth of q's standard error (`LATTICE`), and on each the
supremum is bounded from above by P_{min(delta + c q_b, 1), q_a}(T >= t_obs) (p at its largest, q at
its smallest within the cell), so the test never rejects where the exact one would not; the price
is a shift of T's mean by at most 2 c (q_b - q_a), about a tenth of T's standard error. Each
probability is a sum over
k_den of Bin(k_den; n_den, q) times the binomial tail of k_num, with the k_den outside the central
1 - 2e-13 of their law left out and their mass added.
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

GAMMA_SHARE = 0.04  # the share of the level that the nuisance's confidence set leaves out
LATTICE = 0.1  # cell width of the nuisance's lattice, in standard errors of k_den / n_den
_OUT = 1e-13  # binomial mass left out of each sum on each side, added back


def _log_pmf(k: np.ndarray, n: int, prob: np.ndarray) -> np.ndarray:
    """log Bin(k; n, prob), one row per probability."""
    log_choose = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    with np.errstate(divide="ignore"):
        return log_choose + special.xlogy(k, prob[:, None]) + special.xlog1py(n - k, -prob[:, None])


def tails(t: float, c: float, n_num: int, n_den: int, p, q) -> np.ndarray:
    """P(K_num / n_num - c K_den / n_den >= t) for independent K_num ~ Bin(n_num, p), K_den ~ Bin(n_den, q),
    for each pair of the arrays (p, q), rounded up: by 2e-13 for the k_den left out, a relative 1e-9 in
    t (so that rounding cannot drop the observed outcome) and a relative 1e-8 for the rounding of the
    binomial probabilities (log-gamma of numbers up to n carries a relative error near 1e-16 n)."""
    p, q = np.atleast_1d(np.asarray(p, float)), np.atleast_1d(np.asarray(q, float))
    k = np.arange(stats.binom.ppf(_OUT, n_den, q.min()), stats.binom.isf(_OUT, n_den, q.max()) + 1)
    x = t + c * k / n_den
    # the least k_num with T >= t, from a threshold lowered by a relative 1e-9
    need = np.clip(np.ceil(n_num * x * (1 - 1e-9 * np.sign(x))), 0, n_num + 1).astype(np.int64)
    # P(K_num >= m) for m in [need.min(), need.max()]: the mass above the range plus a reverse cumulative sum.
    m = np.arange(need.min(), need.max() + 1)
    above_range = special.bdtrc(m[-1], n_num, p) if m[-1] <= n_num else np.zeros(p.size)
    pmf_num = np.exp(_log_pmf(np.minimum(m, n_num), n_num, p)) * (m <= n_num)
    at_least = np.cumsum(pmf_num[:, ::-1], axis=1)[:, ::-1] + above_range[:, None]
    total = np.sum(np.exp(_log_pmf(k, n_den, q)) * at_least[:, need - m[0]], axis=1)
    return np.minimum(total * (1 + 1e-8) + 2 * _OUT, 1.0)


def _supremum(t: float, k_den: int, n_num: int, n_den: int, c: float, delta: float, gamma: float) -> float:
    """An upper bound on the supremum over q in C_gamma of P_{min(delta + c q, 1), q}(T >= t) (module
    doc), on the cells of a lattice fixed by k_den alone, clipped to C_gamma: a smaller gamma only
    adds cells or widens the clipped end cells, and a larger delta raises every cell's bound, so the
    test's rejections are nested in both the level and delta."""
    q_lo = 0.0 if k_den == 0 else float(stats.beta.ppf(gamma / 2, k_den, n_den - k_den + 1))
    q_hi = 1.0 if k_den == n_den else float(stats.beta.isf(gamma / 2, k_den + 1, n_den - k_den))
    centre = k_den / n_den
    width = LATTICE * np.sqrt(max(k_den, 1) * (1 - centre) + 1) / n_den  # a share of q's standard error
    steps = np.arange(np.floor((q_lo - centre) / width), np.ceil((q_hi - centre) / width) + 1)
    edges = np.clip(centre + width * steps, q_lo, q_hi)
    return float(tails(t, c, n_num, n_den, np.minimum(delta + c * edges[1:], 1.0), edges[:-1]).max())


def rejects(k_num: int, n_num: int, k_den: int, n_den: int, c: float, delta: float, level: float) -> bool:
    """Whether the test of H0: p - c q <= delta rejects at `level` (module doc)."""
    gamma = GAMMA_SHARE * level
    t = k_num / n_num - c * k_den / n_den
    return _supremum(t, k_den, n_num, n_den, c, delta, gamma) + gamma <= level


def pvalue(k_num: int, n_num: int, k_den: int, n_den: int, c: float, delta: float) -> float:
    """The smallest level at which the test rejects H0: p - c q <= delta, within a relative 1%
    (rounded up; 1.0 when it rejects at no level below 1; at least 1e-12)."""
    if not rejects(k_num, n_num, k_den, n_den, c, delta, 0.5):
        return 1.0
    lo, hi = -12.0, np.log10(0.5)  # log10 levels: hi rejects
    if rejects(k_num, n_num, k_den, n_den, c, delta, 10**lo):
        return 10**lo
    while hi - lo > 0.004:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if rejects(k_num, n_num, k_den, n_den, c, delta, 10**mid) else (mid, hi)
    return float(10**hi)


def lower_bound(k_num: int, n_num: int, k_den: int, n_den: int, c: float, level: float) -> float:
    """The (1 - level) lower confidence bound on p - c q: the largest delta in [0, 1] that the test
    rejects at `level` (0 when it rejects none), by bisection to a hundredth of the estimate's
    standard error."""
    if not rejects(k_num, n_num, k_den, n_den, c, 0.0, level):
        return 0.0
    t = k_num / n_num - c * k_den / n_den
    lo, hi = 0.0, max(t, 0.0)  # rejects at lo; T >= t has probability > level at delta = t
    p, q = k_num / n_num, k_den / n_den
    se = np.sqrt(p * (1 - p) / n_num + c * c * q * (1 - q) / n_den) + 1 / max(n_num, n_den)
    while hi - lo > 0.01 * se:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if rejects(k_num, n_num, k_den, n_den, c, mid, level) else (lo, mid)
    return lo


def floor(eps: float, n_num: int, n_den: int, level: float) -> float:
    """The detectable floor of the test at eps: the smallest k_num / n_num whose bound (`lower_bound`
    at `level`, c = e^eps) is positive when k_den = 0, the outcome most favourable to a given estimate;
    1.0 when even k_num = n_num is not enough."""
    c = float(np.exp(eps))
    if not rejects(n_num, n_num, 0, n_den, c, 0.0, level):
        return 1.0
    lo, hi = 0, int(n_num)  # the test rejects delta = 0 at hi, not at lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if rejects(mid, n_num, 0, n_den, c, 0.0, level) else (mid, hi)
    return hi / n_num

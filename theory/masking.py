"""Privacy formulas of Ding, Wu, Miao & Chen (2022) [Masking]: random orthogonal matrix masking plus
Gaussian noise, (A) Y = X + C, (B) Y = A (X + C), (C) Y = A X + C, A ~ Haar(O(n)) secret and fresh.

* Calibrations as printed: Thm 3.2 / Cor. 3.3 for (A), Thm 3.4 and Cor. 3.5 for (B)/(C).
* Laws, derived here: given Z = X + C, A Z is uniform on {Y : Y^T Y = Z^T Z} under both X and X', so
  the likelihood ratio of Y is that of W = Y^T Y ~ noncentral Wishart W_p(n, sigma^2 I; X^T X / sigma^2).
  For p = 1 and for "aligned" pairs (x_1 = a v -> b v, other rows 0) a one-dimensional statistic
  ||Y v||^2 / sigma^2 ~ chi2_n(a^2 / sigma^2) is sufficient, so the exact spectrum is that of two
  noncentral chi-square laws (`chi2_pair_delta`); otherwise vech(W) has the central-limit normal
  law `wishart_clt`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ..core.validation import as_choice, as_int, as_positive, as_probability


def thm32_sigma(eps: float, delta: float, kind: str = "sufficient") -> float:
    """Scheme (A) for condition (5): necessary sigma >= g/eps, sufficient sigma >= (g/eps)(1 + 1/(2 g^2)),
    g = Phi^{-1}(1 - delta) ([Masking] Thm 3.2; a calibration of P[L > eps] <= delta, not of (eps, delta)-DP)."""
    from scipy import stats

    eps, delta = as_positive("eps", eps), as_probability("delta", delta)
    g = float(stats.norm.isf(delta))
    kind = as_choice("kind", kind, ("necessary", "sufficient"))
    return g / eps if kind == "necessary" else (g / eps) * (1.0 + 1.0 / (2.0 * g**2))


def thm34_gap(sigma: ArrayLike, eps: float, delta: float, n: int, p: int) -> np.ndarray:
    """g(sigma) = (2 sqrt(p) + 1) / (2 (n - p)) chi2_{2(n-p), lambda = p/sigma^2}.isf(delta) + sqrt(p) - sigma^2 eps
    ([Masking] Thm 3.4; the noncentrality lambda is the sum of squared means, as in Lemmas A.2-A.3)."""
    from scipy import stats

    sigma = np.asarray(sigma, dtype=float)
    quantile = stats.ncx2.isf(delta, 2 * (n - p), p / sigma**2)
    return (2.0 * np.sqrt(p) + 1.0) / (2.0 * (n - p)) * quantile + np.sqrt(p) - sigma**2 * eps


def thm34_sigma(eps: float, delta: float, n: int, p: int) -> float:
    """sigma_0 = the largest root of `thm34_gap` ([Masking] Thm 3.4, schemes (B)/(C); n -> n_s for blocks,
    Sec. 4): scan a log grid for the last sign change, then Brent's method."""
    from scipy import optimize

    eps, delta = as_positive("eps", eps), as_probability("delta", delta)
    n, p = as_int("n", n), as_int("p", p)
    if n <= p:
        raise ValueError(f"Thm 3.4 needs n > p, got n={n}, p={p}")
    grid = np.geomspace(1e-3, 1e3, 601) * np.sqrt(np.sqrt(p) / eps)
    values = thm34_gap(grid, eps, delta, n, p)
    change = np.flatnonzero((values[:-1] > 0) & (values[1:] <= 0))
    if change.size == 0:
        raise ValueError("no sign change of Thm 3.4's g(sigma) on the search grid")
    k = change[-1]
    return float(optimize.brentq(thm34_gap, grid[k], grid[k + 1], args=(eps, delta, n, p), xtol=1e-12, rtol=1e-12))


def cor35_sigma(eps: float, delta: float, n: int, p: int) -> float:
    """Explicit sufficient sigma = sqrt((2n - p + ln(1/delta)) / (2(n - p))) 3 p^{1/4} / sqrt(eps)
    ([Masking] Cor. 3.5, eq. 14 as printed)."""
    eps, delta = as_positive("eps", eps), as_probability("delta", delta)
    return float(np.sqrt((2 * n - p + np.log(1.0 / delta)) / (2.0 * (n - p))) * 3.0 * p**0.25 / np.sqrt(eps))


def wishart_clt(G: np.ndarray, n: int, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of vech(W), W ~ W_p(n, sigma^2 I; G / sigma^2), G = X^T X (derived here):
    E W = G + n sigma^2 I, Cov(W_jk, W_lm) = n sigma^4 (d_jl d_km + d_jm d_kl)
    + sigma^2 (G_jl d_km + G_jm d_kl + G_kl d_jm + G_km d_jl)."""
    p = G.shape[0]
    I = np.eye(p)
    rows, cols = np.triu_indices(p)
    j, k = rows[:, None], cols[:, None]
    l, m = rows[None, :], cols[None, :]
    cov = (n * sigma**4 * (I[j, l] * I[k, m] + I[j, m] * I[k, l])
           + sigma**2 * (G[j, l] * I[k, m] + G[j, m] * I[k, l] + G[k, l] * I[j, m] + G[k, m] * I[j, l]))
    return (G + n * sigma**2 * I)[rows, cols], cov


def ncx2_logpdf(w: ArrayLike, df: float, nc: float) -> np.ndarray:
    """ln of the noncentral chi-square density as the Poisson mixture
    logsumexp_j [ln Pois(j; nc/2) + ln chi2_{df+2j}(w)] (scipy's ncx2.logpdf returns -inf at large df)."""
    from scipy import stats

    w = np.asarray(w, dtype=float)
    if nc == 0:
        return stats.chi2.logpdf(w, df)
    half = nc / 2.0
    spread = 12.0 * np.sqrt(half) + 12.0
    j = np.arange(max(0, int(half - spread)), int(half + spread) + 1)
    terms = stats.poisson.logpmf(j, half)[:, None] + stats.chi2.logpdf(w.reshape(-1)[None, :], df + 2 * j[:, None])
    return special.logsumexp(terms, axis=0).reshape(w.shape)


def chi2_pair_delta(eps: ArrayLike, n: int, nc_p: float, nc_q: float, points: int = 20_001) -> np.ndarray:
    """delta_{P||Q}(eps) = int (p - e^eps q)_+ for P = chi2_n(nc_p), Q = chi2_n(nc_q): the exact
    spectrum of [Masking]'s (B)/(C) for p = 1 (nc = ||x||^2 / sigma^2) and for aligned pairs
    (nc = a^2 / sigma^2). Trapezoid rule on +-12 sd of both laws."""
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    lo = min(n + nc_p, n + nc_q) - 12.0 * np.sqrt(2.0 * (n + 2.0 * max(nc_p, nc_q)))
    hi = max(n + nc_p, n + nc_q) + 12.0 * np.sqrt(2.0 * (n + 2.0 * max(nc_p, nc_q)))
    w = np.linspace(max(lo, 1e-12), hi, points)
    log_p, log_q = ncx2_logpdf(w, n, nc_p), ncx2_logpdf(w, n, nc_q)
    p = np.exp(log_p)
    gain = -np.expm1(np.minimum(eps[:, None] - (log_p - log_q)[None, :], 0.0))
    return np.trapezoid(p[None, :] * gain, w, axis=1)

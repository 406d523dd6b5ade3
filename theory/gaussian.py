"""The analytic Gaussian mechanism (Balle & Wang 2018; Lu, Magdon-Ismail, Wei & Zikas
2023, NDIS, Appendix C, Propositions 5-7, Corollary 4).

For outputs N(m, sigma^2 I) and N(m', sigma^2 I) with mu = ||m - m'|| / sigma the privacy loss is
L ~ N(mu^2/2, mu^2) and (Balle & Wang 2018, Theorem 8), with a = eps/mu - mu/2 and b = a + mu,

    delta(eps) = Phi(-a) - e^eps Phi(-b) = phi(a) J(a),   J(a) = R(a) - R(b),

R(x) = Phi(-x) / phi(x) the Mills ratio (e^eps phi(b) = phi(a)). J = R(a) (1 - R(b)/R(a)) comes
from ln R(b) - ln R(a) where 1 - R(b)/R(a) >= 1/32; where it is smaller (the subtraction would cancel)
from the asymptotic series of R differenced term by term (a >= 10) or from Gauss-Legendre quadrature
of J = int_a^b (1 - t R(t)) dt (a < 10). Everything is returned as ln delta.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ..core.validation import as_eps, as_finite_array, check_probability, scalar_or_array

_ASYMPTOTIC = 10.0          # a >= this: the Mills-ratio series of _j_asymptotic, K terms:
_SERIES = ((10.0, 16.0, 29), (16.0, 40.0, 13), (40.0, 1e3, 7), (1e3, np.inf, 3))   # (a from, a below, K)
_LOG_DOUBLE_FACTORIAL = np.concatenate([[0.0], np.cumsum(np.log(2.0 * np.arange(28) + 1.0))])  # ln (2k-1)!!
_SIGNS = (-1.0) ** np.arange(29)
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_DIRECT = 32.0              # J from ln R(b) - ln R(a) where 1 - R(b)/R(a) >= 1 / _DIRECT
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(12)


def _log_mills(x: ArrayLike) -> np.ndarray:
    """ln R(x) = ln(Phi(-x) / phi(x)): via erfcx for x >= 0, via log_ndtr below (no overflow)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        positive = np.log(np.sqrt(0.5 * np.pi) * special.erfcx(np.abs(x) / np.sqrt(2.0)))
        negative = special.log_ndtr(-x) + 0.5 * x * x + _LOG_SQRT_2PI
    return np.where(x >= 0, positive, negative)


def _j_asymptotic(a: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """ln J for a >= 10 from R(x) ~ sum_k (-1)^k (2k-1)!! x^-(2k+1) at x = a and x = b = a + mu,
    differenced term by term without cancellation: a^-(2k+1) - b^-(2k+1) = a^-(2k+1) (-expm1(-(2k+1)
    ln(1 + mu/a))). After K terms the remainder is below (2K+3)!! / a^(2K+2) relative (Watson's lemma on
    J = int e^{-as - s^2/2} (1 - e^{-mu s}) ds); _SERIES lists the K that keeps it below 1e-17."""
    log_a, log_ratio = np.log(a), np.log1p(mu / a)
    out = np.empty_like(a)
    for lower, upper, count in _SERIES:
        rows = (a >= lower) & (a < upper)
        if np.any(rows):
            k = np.arange(count)[:, None]
            terms = (np.exp(_LOG_DOUBLE_FACTORIAL[:count, None] - 2 * k * log_a[rows])
                     * -np.expm1(-(2 * k + 1) * log_ratio[rows]))
            out[rows] = np.log(_SIGNS[:count] @ terms)
    return out - log_a


def _j_quadrature(a: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """ln J for mu <= 1: J = int_a^{a+mu} (1 - t R(t)) dt (R' = t R - 1), 12-point Gauss-Legendre
    (the integrand is entire; error ~ (mu/2)^24 / 24! times its 24th derivative)."""
    t = a[:, None] + 0.5 * mu[:, None] * (1.0 + _NODES[None, :])
    slope = 1.0 - t * np.sqrt(0.5 * np.pi) * special.erfcx(t / np.sqrt(2.0))
    return np.log(0.5 * mu * (slope @ _WEIGHTS))


def _log_delta_nonnegative(eps: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ln delta, ln J, b) for eps >= 0 and mu > 0 (flat arrays of one shape). J = R(a) (1 - R(b)/R(a))
    directly where 1 - R(b)/R(a) >= 1/32 (rounding amplified at most 32-fold), else by the series
    (a >= 10) or the quadrature (a < 10, where such cancellation needs mu < ~0.4)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a = eps / mu - 0.5 * mu
        b = a + mu
        log_a = _log_mills(a)
        log_j = log_a + np.log(-np.expm1(_log_mills(b) - log_a))
        log_phi = -0.5 * a * a - _LOG_SQRT_2PI
    cancel = ~(log_j - log_a >= -np.log(_DIRECT)) & np.isfinite(a)
    far = cancel & (a >= _ASYMPTOTIC)
    near = cancel & (a < _ASYMPTOTIC)
    if np.any(far):
        log_j[far] = _j_asymptotic(a[far], mu[far])
    if np.any(near):
        log_j[near] = _j_quadrature(a[near], mu[near])
    log_j[np.isinf(a)] = -np.inf              # eps / mu overflows: delta = 0 in float
    return log_phi + log_j, log_j, b


def _log_delta_flat(eps: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """ln delta for flat arrays: delta(eps) = 1 - e^eps + e^eps delta(-eps) for eps < 0 (the pair
    is symmetric), both terms positive; mu = 0 gives (1 - e^eps)_+."""
    out = np.full(eps.shape, -np.inf)
    negative = eps < 0
    live = mu > 0
    with np.errstate(divide="ignore"):
        out[negative] = np.log(-np.expm1(eps[negative]))
    if np.any(live):
        mirrored, _, _ = _log_delta_nonnegative(np.abs(eps[live]), mu[live])
        out[live] = np.where(negative[live], np.logaddexp(out[live], eps[live] + mirrored), mirrored)
    return np.minimum(out, 0.0)


def gaussian_log_delta(eps: ArrayLike, mu: ArrayLike) -> float | np.ndarray:
    """ln delta(eps) of the Gaussian mechanism with mu = sensitivity / sigma (broadcasting)."""
    eps_arr, mu_arr = np.broadcast_arrays(as_eps(eps), as_finite_array(mu, "mu"))
    if np.any(mu_arr < 0):
        raise ValueError("mu = sensitivity / sigma must be non-negative")
    out = _log_delta_flat(eps_arr.reshape(-1).astype(float), mu_arr.reshape(-1).astype(float))
    return scalar_or_array(out.reshape(eps_arr.shape), eps if np.ndim(eps) else mu)


def gaussian_delta(eps: ArrayLike, mu: ArrayLike) -> float | np.ndarray:
    """delta(eps) of the Gaussian mechanism, mu = sensitivity / sigma (Balle & Wang 2018, Theorem 8)."""
    log = gaussian_log_delta(eps, mu)
    return scalar_or_array(np.exp(np.asarray(log)), eps if np.ndim(eps) else mu)


def _newton(f: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], lo: np.ndarray, hi: np.ndarray,
            start: np.ndarray, rtol: float, atol: float = 0.0) -> np.ndarray:
    """Safeguarded Newton iteration on a decreasing f (f(lo) > 0 > f(hi)), vectorised: f(x) returns
    (value, slope); a step leaving the bracket is replaced by bisection."""
    x = start.copy()
    for _ in range(100):
        value, slope = f(x)
        lo = np.where(value > 0, x, lo)
        hi = np.where(value < 0, x, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = value / slope
        tol = rtol * np.abs(x) + atol
        done = (np.abs(step) <= tol) | (value == 0) | (hi - lo <= 2.0 * tol)   # last: ln delta's rounding
        new = x - step
        outside = ~done & ~((new > lo) & (new < hi))
        x = np.where(outside, 0.5 * (lo + hi), new)
        if np.all(done):
            break
    return x


def gaussian_epsilon(delta: ArrayLike, mu: ArrayLike) -> float | np.ndarray:
    """Smallest eps >= 0 with delta(eps; mu) <= delta (broadcasting): Newton on ln delta, whose slope
    is -R(b) / J, from the bracket [0, mu^2/2 + mu sqrt(2 ln(1/delta))] (at its right end
    delta(eps) <= Phi(-a) <= e^{-a^2/2} / 2 = delta / 2)."""
    delta_arr, mu_arr = np.broadcast_arrays(check_probability(delta), as_finite_array(mu, "mu"))
    if np.any(mu_arr < 0):
        raise ValueError("mu = sensitivity / sigma must be non-negative")
    goal, mu_flat = np.log(delta_arr.reshape(-1)), mu_arr.reshape(-1).astype(float)
    out = np.zeros(goal.shape)
    live = mu_flat > 0
    live[live] = _log_delta_flat(np.zeros(np.count_nonzero(live)), mu_flat[live]) > goal[live]
    if np.any(live):
        g, m = goal[live], mu_flat[live]

        def excess(e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            log_delta, log_j, b = _log_delta_nonnegative(e, m)
            return log_delta - g, -np.exp(_log_mills(b) - log_j)

        hi = 0.5 * m * m + m * np.sqrt(-2.0 * g)
        out[live] = _newton(excess, np.zeros_like(g), hi, hi, 1e-15)
    return scalar_or_array(out.reshape(delta_arr.shape), delta if np.ndim(delta) else mu)


def gaussian_mu(eps: float, delta: float) -> float:
    """The unique mu = sensitivity / sigma with delta(eps; mu) = delta (delta increases with mu,
    Lu et al. 2023, NDIS, Proposition 6): Newton on ln delta in ln mu, whose slope is mu / J
    (d delta / d mu = phi(a), Balle & Wang 2018, proof of Theorem 8)."""
    eps = float(as_finite_array(eps, "eps"))
    delta = float(check_probability(delta))
    if eps < 0:
        raise ValueError(f"eps must be non-negative, got {eps}")
    goal = np.log(delta)
    e = np.array([eps])

    def excess(log_mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu = np.exp(log_mu)
        log_delta, log_j, _ = _log_delta_nonnegative(e, mu)
        return goal - log_delta, -mu * np.exp(-log_j)        # decreasing in ln mu

    lo, hi = np.array([-1.0]), np.array([1.0])
    while excess(lo)[0][0] < 0:
        lo -= 2.0
    while excess(hi)[0][0] > 0:
        hi += 2.0
    return float(np.exp(_newton(excess, lo, hi, 0.5 * (lo + hi), 1e-15, 1e-15)[0]))


def gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest sigma for which sensitivity-bounded queries plus N(0, sigma^2 I) are (eps, delta)-DP:
    sigma = sensitivity / mu*(eps, delta) (the analytic calibration of Balle & Wang 2018)."""
    sensitivity = float(as_finite_array(sensitivity, "sensitivity"))
    if sensitivity <= 0:
        raise ValueError(f"sensitivity must be positive, got {sensitivity}")
    return sensitivity / gaussian_mu(eps, delta)


def classic_gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """The classic calibration sigma = sensitivity sqrt(2 ln(1.25/delta)) / eps (Dwork & Roth 2014,
    Theorem 3.22; Lu et al. 2023, OLS-RP, Proposition 2)."""
    eps = float(as_finite_array(eps, "eps"))
    delta = float(check_probability(delta))
    if eps <= 0:
        raise ValueError(f"eps must be positive, got {eps}")
    return float(sensitivity) * np.sqrt(2.0 * np.log(1.25 / delta)) / eps

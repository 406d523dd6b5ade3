"""The optimal conversion of Rényi DP to (eps, delta)-DP: `rdp_to_dp` (eps given delta) and `rdp_delta`
(delta given eps).

A pair (P, Q) with D_alpha(P||Q) <= rho (alpha > 1) has delta_{P||Q}(eps) = sup_S P(S) - e^eps Q(S).
Any event S turns P and Q into the two-point laws Bernoulli(p) and Bernoulli(q), p = P(S), q = Q(S), whose
Rényi divergence is at most rho (data processing), and every two-point pair within rho is itself such a
pair (P, Q). Hence the tightest delta that the RDP value at one order implies is

    delta_alpha(eps) = max { p - e^eps q : p^alpha q^(1-alpha) + (1-p)^alpha (1-q)^(1-alpha) <= e^((alpha-1) rho) },

and the tightest eps at delta is eps_alpha(delta) = max ln((p - delta) / q) over the same set (Asoodeh, Liao,
Calmon, Kosut & Sankar 2021, Section III: the conversion from the RDP value at one order is lossless when
taken over two-point distributions). It is never looser than the closed form of Balle, Barthe, Gaboardi, Hsu
& Sato 2020, Theorem 21 (eps = rho + ln(1 - 1/alpha) - (ln delta + ln alpha) / (alpha - 1), also Canonne,
Kamath & Steinke 2020, Proposition 12), which is what Opacus's and dp_accounting's RDP accountants use.
Given several orders, each one's conversion holds, and the smallest is returned.

Computation (derived here). The set is convex (t -> t^alpha is convex and the constraint is its perspective
sum), so both objectives are unimodal along its boundary (delta's is linear, eps's a ratio of linear
functions). A boundary point with p > q has likelihood ratios a = p / q > 1 and b = (1 - p) / (1 - q) =
1 - u on S and its complement: q = u / (a - 1 + u), p = a q, and the constraint reads

    ln( u a^alpha + (a - 1) (1 - u)^alpha ) - ln(a - 1 + u) = (alpha - 1) rho,

increasing in u in (0, 1]; for ln a <= rho the whole segment is allowed (u = 1, p = 1), which never beats
ln a = rho. So both maxima are searched over ln a >= rho (and >= eps for delta) by golden section, each
point's u by a safeguarded Newton iteration on ln u, everything in log space (no overflow at large orders):
the values are the optimum to about 1e-13 relative. Since the closed form of Balle et al. is itself a
valid conversion, the smaller of the two is returned (they meet where an order's optimum is its corner).
"""

from __future__ import annotations

import numpy as np

from ..core.validation import Floats, as_finite_array, check_probability, scalar_or_array

_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0
_STEPS = 80          # golden-section steps at most (a bracket of width 2^12 in ln a shrinks to 2e-13)


def rdp_to_dp(orders: Floats, rdp: Floats, delta: Floats) -> float | np.ndarray:
    """The smallest eps such that the RDP curve (orders, rdp) implies (eps, delta)-DP.

    Parameters
    ----------
    orders : array_like
        Rényi orders alpha > 1.
    rdp : array_like
        D_alpha at each order (the RDP epsilons, >= 0; +inf orders are ignored).
    delta : float or array_like
        Target delta(s) in (0, 1).

    Returns
    -------
    float or ndarray
        eps >= 0 for each delta: the minimum over orders of the optimal one-order conversion (module
        docstring; Asoodeh et al. 2021, Section III), never above Balle et al. 2020, Theorem 21. +inf if no
        order is finite.
    """
    alpha, rho = _curve(orders, rdp)
    target = check_probability(delta)
    out = np.maximum(_smallest(alpha, rho, target.reshape(-1), "eps"), 0.0)
    return scalar_or_array(out.reshape(target.shape), delta)


def order_epsilons(orders: Floats, rdp: Floats, delta: Floats) -> np.ndarray:
    """The optimal one-order conversion (module docstring) of each order: an array (orders x deltas) of eps
    >= 0, +inf for the orders whose value is +inf. `rdp_to_dp` is its minimum over the orders."""
    alpha, rho = _curve(orders, rdp, keep_infinite=True)
    target = check_probability(delta).reshape(-1)
    out = np.full((alpha.size, target.size), np.inf)
    finite = np.isfinite(rho)
    if np.any(finite):
        out[finite] = np.maximum(_optimum(alpha[finite, None], rho[finite, None], target[None, :], "eps"), 0.0)
    return out


def rdp_delta(orders: Floats, rdp: Floats, eps: Floats) -> float | np.ndarray:
    """The smallest delta such that the RDP curve (orders, rdp) implies (eps, delta)-DP.

    Parameters
    ----------
    orders : array_like
        Rényi orders alpha > 1.
    rdp : array_like
        D_alpha at each order (the RDP epsilons, >= 0; +inf orders are ignored).
    eps : float or array_like
        eps >= 0 (one value or a grid).

    Returns
    -------
    float or ndarray
        delta in [0, 1] for each eps: the minimum over orders of the optimal one-order conversion (module
        docstring; Asoodeh et al. 2021, Section III), never above the inverse of Balle et al. 2020,
        Theorem 21. 1 if no order is finite.
    """
    alpha, rho = _curve(orders, rdp)
    values = as_finite_array(eps, "eps")
    if np.any(values < 0):
        raise ValueError(f"eps must be >= 0 (a Rényi divergence bounds delta only there), got {eps}")
    out = np.clip(_smallest(alpha, rho, values.reshape(-1), "delta"), 0.0, 1.0)
    return scalar_or_array(out.reshape(values.shape), eps)


def _curve(orders: Floats, rdp: Floats, keep_infinite: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(orders, values) as flat arrays, without the orders whose value is +inf unless `keep_infinite`;
    ValueError for orders <= 1, negative or NaN values, or lengths that differ."""
    alpha = as_finite_array(orders, "orders").reshape(-1)
    rho = np.asarray(rdp, dtype=float).reshape(-1)
    if alpha.shape != rho.shape:
        raise ValueError(f"orders and rdp must have the same length, got {alpha.size} and {rho.size}")
    if np.any(alpha <= 1):
        raise ValueError(f"RDP orders must be > 1 for a conversion to (eps, delta), got {orders}")
    if np.any(np.isnan(rho) | (rho < 0)):
        raise ValueError(f"RDP values must be >= 0 (+inf allowed), got {rdp}")
    keep = np.ones(alpha.size, dtype=bool) if keep_infinite else np.isfinite(rho)
    return alpha[keep], rho[keep]


def _smallest(alpha: np.ndarray, rho: np.ndarray, target: np.ndarray, find: str) -> np.ndarray:
    """The minimum over the orders of `_optimum`, per target (+inf eps / delta 1 without orders). Only the
    orders that can give the minimum are searched: an order's optimum lies between its objective at
    ln a = max(rho, eps + ln(alpha / (alpha - 1))) (the point where b = 0 is stationary) and the closed form,
    so an order whose lower value exceeds the smallest closed form is left out."""
    if alpha.size == 0:
        return np.full(target.size, np.inf if find == "eps" else 1.0)
    a, r, t = (np.broadcast_to(v, (alpha.size, target.size)) for v in (alpha[:, None], rho[:, None], target[None, :]))
    closed = _closed_form(a, r, t, find)
    guess = np.maximum(r, (t if find == "delta" else r) + np.log(a / (a - 1.0)))
    lower = np.where(r > 0, _objective(guess, a, np.where(r > 0, r, 1.0), t, find), 0.0)
    search = lower <= np.min(closed, axis=0)[None, :]
    values = closed.copy()
    values[search] = _optimum(a[search], r[search], t[search], find)
    return np.min(values, axis=0)


def _log_a_minus_one(s: np.ndarray) -> np.ndarray:
    """ln(a - 1) for s = ln a > 0, without overflow or cancellation."""
    return s + np.log(-np.expm1(-s))


def _excess(x: np.ndarray, s: np.ndarray, alpha: np.ndarray, log_r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(phi, dphi/dx) at x = ln u: phi = ln(u a^alpha + (a - 1)(1 - u)^alpha) - ln(a - 1 + u) - (alpha - 1) rho,
    increasing in x."""
    log_gap = _log_a_minus_one(s)
    with np.errstate(divide="ignore"):
        log_left = np.log1p(-np.exp(x))
    top, low = x + alpha * s, log_gap + alpha * log_left
    log_n = np.logaddexp(top, low)
    log_d = np.logaddexp(log_gap, x)
    slope = np.exp(top - log_n) - alpha * np.exp(x + log_gap + (alpha - 1.0) * log_left - log_n) - np.exp(x - log_d)
    return log_n - log_d - log_r, slope


def _boundary(s: np.ndarray, alpha: np.ndarray, log_r: np.ndarray) -> np.ndarray:
    """ln u of the boundary point at ln a = s >= rho: Newton's iteration on ln u from u = 1 (where phi >= 0),
    kept inside the bracket of the points seen (bisection otherwise), each point frozen once its step is
    below 1e-12 relative (the next one is far smaller: Newton converges quadratically; phi itself is only
    known to ~1e-14 absolute)."""
    x = np.zeros(np.broadcast(s, alpha, log_r).shape)
    lo, hi = np.full(x.shape, -np.inf), np.zeros(x.shape)
    live = np.ones(x.shape, dtype=bool)
    for _ in range(100):
        value, slope = _excess(x, s, alpha, log_r)
        lo, hi = np.where(value < 0, x, lo), np.where(value < 0, hi, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - value / slope
        inside = np.isfinite(step) & (step >= lo) & (step <= hi)
        middle = np.where(np.isfinite(lo), 0.5 * (lo + hi), 2.0 * hi - 1.0)
        new = np.where(inside, step, middle)
        live &= ~((np.abs(new - x) <= 1e-12 * np.maximum(np.abs(x), 1.0)) | (value == 0))
        x = np.where(live, new, x)
        if not np.any(live):
            break
    return x


def _objective(s: np.ndarray, alpha: np.ndarray, rho: np.ndarray, target: np.ndarray, find: str) -> np.ndarray:
    """The objective at ln a = s on the boundary: ln((p - delta) / q) for find="eps", p - e^eps q for
    find="delta" (-inf / negative where the point does not help)."""
    x = np.where(s <= rho, 0.0, _boundary(np.maximum(s, rho), alpha, (alpha - 1.0) * rho))
    log_q = x - np.logaddexp(_log_a_minus_one(s), x)
    if find == "delta":
        return np.exp(s + log_q) - np.exp(target + log_q)
    share = np.log(target) - s - log_q                    # ln(delta / p): ln((p - delta) / q) = s + ln(1 - delta / p)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(share < 0, s + np.log1p(-np.exp(np.minimum(share, 0.0))), -np.inf)


def _optimum(alpha: np.ndarray, rho: np.ndarray, target: np.ndarray, find: str) -> np.ndarray:
    """max over ln a of `_objective`, per (order, target): a bracket [start, start + width] with width
    doubled until the objective falls at its end, then golden section to 1e-9 in ln a (the objective is
    flat at its maximum: its value is then within ~1e-18 relative). rho = 0 allows only p = q: eps 0,
    delta 0."""
    shape = np.broadcast(alpha, rho, target).shape
    alpha, rho, target = (np.broadcast_to(v, shape) for v in (alpha, rho, target))
    zero = rho <= 0
    rho_ = np.where(zero, 1.0, rho)                       # placeholders where rho = 0, replaced at the end
    start = rho_ if find == "eps" else np.maximum(rho_, target)
    start = np.maximum(start, 1e-300)

    def f(s: np.ndarray) -> np.ndarray:
        return _objective(s, alpha, rho_, target, find)

    width = np.full(shape, 1.0)
    for _ in range(12):
        falls = f(start + width) <= f(start + 0.5 * width)
        if np.all(falls):
            break
        width = np.where(falls, width, 2.0 * width)
    left, right = start, start + width
    inner_left, inner_right = right - _GOLDEN * width, left + _GOLDEN * width
    f_left, f_right = f(inner_left), f(inner_right)
    for _ in range(_STEPS):
        if np.all(right - left <= 1e-9 * np.maximum(np.abs(left), 1.0)):
            break
        keep_left = f_left >= f_right                     # the maximum is in [left, inner_right]
        left = np.where(keep_left, left, inner_left)
        right = np.where(keep_left, inner_right, right)
        inner_left, inner_right = (np.where(keep_left, right - _GOLDEN * (right - left), inner_right),
                                   np.where(keep_left, inner_left, left + _GOLDEN * (right - left)))
        moved = np.where(keep_left, inner_left, inner_right)
        value = f(moved)
        f_left, f_right = np.where(keep_left, value, f_right), np.where(keep_left, f_left, value)
    best = np.where(zero, 0.0, np.maximum(np.maximum(f_left, f_right), f(start)))
    return np.minimum(best, _closed_form(alpha, rho, target, find))


def _closed_form(alpha: np.ndarray, rho: np.ndarray, target: np.ndarray, find: str) -> np.ndarray:
    """Balle et al. 2020, Theorem 21: eps = rho + ln(1 - 1/alpha) - (ln delta + ln alpha) / (alpha - 1), and its
    inverse ln delta = (alpha - 1)(rho - eps + ln(1 - 1/alpha)) - ln alpha."""
    shrink = np.log1p(-1.0 / alpha)
    if find == "eps":
        return rho + shrink - (np.log(target) + np.log(alpha)) / (alpha - 1.0)
    return np.exp(np.minimum((alpha - 1.0) * (rho - target + shrink) - np.log(alpha), 0.0))

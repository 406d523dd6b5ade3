"""Rényi divergences, Rényi DP and zCDP of privacy profiles: closed forms for Gaussian pairs.

D_alpha(P||Q) = ln E_Q[(p/q)^alpha] / (alpha - 1), the Rényi divergence of order alpha (alpha = 1:
the Kullback-Leibler divergence). For a pair of Gaussians, in the coordinates of `theory.gaussian_pair`
where Q_j = N(0, 1) and P_j = N(m_j, 1 + a_j), the integral factorises into Gaussian integrals
(derived here; z = alpha - 1)

    D_alpha = sum_j [ alpha m_j^2 / (2 (1 - z a_j)) - ( z ln(1 + a_j) + ln(1 - z a_j) ) / (2 z) ],

finite exactly when every 1 - z a_j > 0, i.e. when the alpha-mixture covariance alpha cov2 +
(1 - alpha) cov1 is positive definite; otherwise D_alpha = +inf. It is evaluated from the pair's
privacy loss (weight_j = a_j / 2, linear_j = m_j^2 (1 + a_j), the identity K(z) / z with K the loss's
cumulant generating function), with the log terms as -z h(a) - h(-z a), h(x) = ln(1 + x) - x, which
has no cancellation (both terms are >= 0 for alpha > 1). The ALS and RP laws are Gaussian pairs
(`theory.als.als_pair`, `theory.rp.rp_pair`), products of pairs add their divergences, and a spectrum
takes the largest over its candidate rows.

Any other profile (a Poisson-subsampled one, a PLD) goes through the identity (derived here, by Taylor's
theorem with integral remainder for t -> t^alpha at t = p/q: E_Q[(p/q - g)_+] = H_g(P||Q) and
E_Q[(g - p/q)_+] = g H_{1/g}(Q||P), then g = e^eps and g = e^-eps)

    E_Q[(p/q)^alpha] = 1 + alpha (alpha - 1) [ int_0^inf e^{(alpha-1) eps} delta_{P||Q}(eps) deps
                                               + int_0^inf e^{-alpha eps} delta_{Q||P}(eps) deps ],

valid for alpha > 1, integrated by composite Gauss-Legendre on the profile's exact ln delta until two
levels agree to 1e-11 in ln of each integral.

Rényi DP (Mironov 2017): eps_RDP(alpha) = the larger direction. zCDP (Bun & Steinke 2016, Definition
1.1): rho = sup_{alpha > 1} D_alpha / alpha, +inf for any pair whose covariances differ (in one of the
two directions some a_j > 0, and D_alpha = +inf from alpha = 1 + 1/a_j on): ALS and RP are not zCDP;
`max_order` gives the truncated CDP of Bun, Dwork, Rothblum & Steinke 2018 (the sup over 1 < alpha <
max_order). `rdp_epsilon` is the RDP accountant: composition adds eps_RDP (Mironov 2017,
Proposition 1), converted to (eps, delta) by the optimal conversion at each order (`theory.rdp_conversion`;
Asoodeh et al. 2021), tighter than the closed form of Balle et al. 2020, Theorem 21 that Opacus and
dp_accounting use, on a grid of orders refined around the best one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from scipy import special

from ..core.curve import check_direction
from ..core.validation import Floats, as_finite_array, scalar_or_array
from .gaussian_pair import QuadraticLossProfile
from .profile import PrivacyProfile, WorstCase
from .quadratic_loss import QuadraticLoss
from .rdp_conversion import order_epsilons
from .spectrum import Spectrum

#: Orders of the RDP accountant (those of dp_accounting's RdpAccountant's default, up to 256).
RDP_ORDERS = np.concatenate([np.linspace(1.25, 3.0, 8), np.arange(4.0, 33.0), np.array([40.0, 48, 56, 64, 128, 256])])
#: `rdp_epsilon` adds REFINE orders between the neighbours of the best order so far, REFINE_ROUNDS times.
REFINE, REFINE_ROUNDS = 6, 3

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)
_SERIES = 2.0 / (2.0 * np.arange(1, 21) + 1.0)     # 2 / (2k + 1), k = 1..20


def _log1p_minus(x: np.ndarray) -> np.ndarray:
    """h(x) = ln(1 + x) - x without cancellation: for |x| <= 1/2 as -x^2 / (2 + x) + 2 sum u^(2k+1) /
    (2k + 1), u = x / (2 + x) (the atanh series of ln(1 + x); |u| <= 1/3, 20 terms reach 1e-20)."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) <= 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        u = x / (2.0 + x)
        series = np.polynomial.polynomial.polyval(u * u, np.append(0.0, _SERIES)) * u
        return np.where(small, -x * x / (2.0 + x) + series, np.log1p(x) - x)


def _gaussian_divergence(loss: QuadraticLoss | None, alpha: np.ndarray) -> np.ndarray:
    """D_alpha of the pair whose privacy loss is `loss` (Gaussian-pair form), per alpha."""
    if loss is None:
        return np.full(alpha.shape, np.inf)
    a, dof, linear = 2.0 * loss.weight[0], loss.dof[0], loss.linear[0]
    used = (dof > 0) | (linear > 0)
    a, dof, linear = a[used], dof[used], linear[used]
    z = (alpha - 1.0)[:, None]
    room = 1.0 - z * a[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = alpha[:, None] * linear / (2.0 * (1.0 + a) * room)
        logs = np.where(z != 0, (-z * _log1p_minus(a) - _log1p_minus(-z * a)) / (2.0 * z), -0.5 * _log1p_minus(a))
        total = 0.5 * alpha * float(loss.normal_var[0]) + np.sum(mean + dof * logs, axis=1)
    return np.where(np.all(room > 0, axis=1), total, np.inf)


def _profile_divergence(profile: PrivacyProfile, alpha: np.ndarray) -> np.ndarray:
    """D_alpha(P||Q) of any profile by the hockey-stick identity (module docstring), alpha > 1: +inf for
    the orders whose first integrand e^{(alpha - 1) eps} delta_{P||Q}(eps) has not fallen 60 below its
    peak by eps = 2^10 (reported as divergent: an upper bound); each integral of the others on its own
    range, where its integrand lives."""
    if np.any(alpha <= 1):
        raise ValueError("the Rényi divergence of a profile without a closed form needs orders alpha > 1")
    forward, reverse = profile, profile.reverse()
    first_end, finite = _support_end(forward, alpha - 1.0)
    out = np.full(alpha.shape, np.inf)
    if not np.any(finite):
        return out
    orders = alpha[finite]
    second_end, _ = _support_end(reverse, -orders)
    first = _log_integral(forward, orders - 1.0, float(np.max(first_end[finite])))
    second = _log_integral(reverse, -orders, float(np.max(second_end)))
    # ln(1 + alpha (alpha - 1) (I1 + I2)) in log space: I1 overflows for large orders
    out[finite] = np.logaddexp(0.0, np.log(orders * (orders - 1.0)) + np.logaddexp(first, second)) / (orders - 1.0)
    return out


def _support_end(profile: PrivacyProfile, rate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(end, found) per rate: the first point after the peak of e^{rate eps} delta(eps) where it is 60
    below its peak (e^-60 of the integral is left beyond, for these log-concave-like shapes), on a scan
    of [0, 1] doubled until every rate has one or the scan reaches 2^10."""
    scan = np.linspace(0.0, 1.0, 129)
    values = profile._log_delta(scan)
    while True:
        shape = rate[:, None] * scan[None, :] + values[None, :]
        peak = np.argmax(shape, axis=1)
        after = (shape < np.max(shape, axis=1, keepdims=True) - 60.0) & (np.arange(scan.size)[None, :] > peak[:, None])
        found = np.any(after, axis=1)
        if np.all(found) or scan[-1] >= 2.0**10:
            return np.where(found, scan[np.argmax(after, axis=1)], np.inf), found
        more = np.linspace(scan[-1], 2.0 * scan[-1], 65)[1:]
        scan, values = np.append(scan, more), np.append(values, profile._log_delta(more))


def _log_integral(profile: PrivacyProfile, rate: np.ndarray, end: float) -> np.ndarray:
    """ln int_0^end e^{rate eps} delta(eps) deps per rate, by composite 16-point Gauss-Legendre on
    uniform panels, doubled until two levels agree to 1e-11 (the exact values' own noise is ~1e-12)."""
    previous, panels = None, 16
    while True:
        edges = np.linspace(0.0, end, panels + 1)
        half = 0.5 * np.diff(edges)
        nodes = (edges[:-1, None] + half[:, None] * (_NODES[None, :] + 1.0)).reshape(-1)
        weights = (half[:, None] * _WEIGHTS[None, :]).reshape(-1)
        value = special.logsumexp(rate[:, None] * nodes[None, :] + profile._log_delta(nodes)[None, :],
                                  b=weights[None, :], axis=1)
        if previous is not None and (np.all(np.abs(value - previous) <= 1e-11 * np.maximum(np.abs(value), 1.0))
                                     or panels >= 1 << 12):
            return value
        previous, panels = value, panels * 2


def _directed(pair: PrivacyProfile, alpha: np.ndarray) -> np.ndarray:
    """D_alpha(P||Q) for the forward pair of `pair`."""
    if isinstance(pair, QuadraticLossProfile):
        return _gaussian_divergence(pair.loss, alpha)
    if isinstance(pair, WorstCase):
        return np.max([_directed(m, alpha) for m in pair.members], axis=0)
    return _profile_divergence(pair, alpha)


def _as_profile(pair: object) -> PrivacyProfile:
    if isinstance(pair, Spectrum):
        return pair.profile()
    if not isinstance(pair, PrivacyProfile):
        raise TypeError(f"expected a GaussianPair, Spectrum or other privacy profile, got {type(pair).__name__}")
    return pair


def renyi_divergence(pair: PrivacyProfile | Spectrum, alpha: Floats, direction: str = "max") -> float | np.ndarray:
    """D_alpha(P||Q) of a `GaussianPair` (or ALS / RP pair, product from `compose`, `Spectrum`: the
    largest over its candidate rows, any other privacy profile: numerically) for order(s) alpha > 0
    ("forward": P||Q, "reverse": Q||P, "max": the larger, the Rényi-DP epsilon). +inf where it diverges
    (module docstring)."""
    profile = _as_profile(pair)
    orders = as_finite_array(alpha, "alpha")
    if np.any(orders <= 0):
        raise ValueError(f"Rényi orders alpha must be > 0, got {alpha}")
    flat = orders.reshape(-1)
    if check_direction(direction) == "max":
        out = np.maximum(_directed(profile, flat), _directed(profile.reverse(), flat))
    else:
        out = _directed(profile._oriented(direction), flat)
    return scalar_or_array(out.reshape(orders.shape), alpha)


def zcdp_rho(pair: PrivacyProfile | Spectrum, direction: str = "max", max_order: float = np.inf) -> float:
    """rho = sup_{1 < alpha < max_order} D_alpha / alpha (zCDP, Bun & Steinke 2016; with a finite
    max_order the truncated CDP of Bun et al. 2018), for Gaussian pairs and what is made of them. +inf
    when D_alpha diverges below max_order (any change of covariance, module docstring)."""
    profile = _as_profile(pair)
    members: Sequence[PrivacyProfile] = profile.members if isinstance(profile, WorstCase) else (profile,)
    if not all(isinstance(m, QuadraticLossProfile) for m in members):
        raise TypeError("zcdp_rho needs Gaussian pairs (GaussianPair, ALS / RP pairs, compose of them, a Spectrum)")
    if not max_order > 1:
        raise ValueError(f"max_order must exceed 1, got {max_order}")
    directions = ("forward", "reverse") if check_direction(direction) == "max" else (direction,)
    # either direction of a Gaussian pair is one (`_reversed`)
    return max(_rho(cast(QuadraticLossProfile, m._oriented(d)).loss, float(max_order))
               for m in members for d in directions)


def _rho(loss: QuadraticLoss | None, max_order: float) -> float:
    """sup over 1 < alpha < max_order of D_alpha / alpha for one loss: golden-section search of a
    fine log grid's best point (D_alpha / alpha is smooth in ln(alpha - 1))."""
    if loss is None:
        return np.inf
    a = 2.0 * loss.weight[0][(loss.dof[0] > 0) | (loss.linear[0] > 0)]
    limit = 1.0 + 1.0 / a.max() if a.size and a.max() > 0 else np.inf
    if np.isfinite(limit) and limit <= max_order:
        return np.inf
    top = min(max_order, 1e6)
    def ratio(log_z: float) -> float:
        order = 1.0 + np.exp(log_z)
        return float(_gaussian_divergence(loss, np.atleast_1d(order))[0] / order)

    grid = np.linspace(-12.0, np.log(top - 1.0), 400)
    values = np.array([ratio(g) for g in grid])
    k = int(np.argmax(values))
    if 0 < k < grid.size - 1:
        from scipy import optimize

        found = optimize.minimize_scalar(lambda g: -ratio(g), bracket=(grid[k - 1], grid[k], grid[k + 1]), tol=1e-10)
        return float(max(values[k], -found.fun))
    return float(values[k])


def rdp_epsilon(pair: PrivacyProfile | Spectrum, delta: float, count: int = 1, orders: Floats | None = None) -> float:
    """eps(delta) of `count` releases of `pair` by the RDP accountant.

    Parameters
    ----------
    pair : GaussianPair, Spectrum or PrivacyProfile
        One release.
    delta : float
        Target delta in (0, 1).
    count : int
        Number of releases (composition adds their D_alpha: Mironov 2017, Proposition 1).
    orders : array_like, optional
        Rényi orders > 1. By default `RDP_ORDERS`, then REFINE orders spread between the neighbours of
        the best order so far (past the grid's ends when it is an end), REFINE_ROUNDS times (every order
        gives a valid bound: the refinement only finds a better one).

    Returns
    -------
    float
        The smallest eps over the orders of `rdp_to_dp` of count x the larger direction's D_alpha (the
        optimal conversion at each order). Looser than the exact composition (`compose`), never tighter.
    """
    profile = _as_profile(pair)
    steps = int(count)

    def best(grid: np.ndarray) -> np.ndarray:
        rdp = steps * np.asarray(renyi_divergence(profile, grid, "max"), dtype=float).reshape(-1)
        return order_epsilons(grid, rdp, float(delta))[:, 0]

    grid = np.asarray(RDP_ORDERS if orders is None else orders, dtype=float).reshape(-1)
    eps = best(grid)
    for _ in range(REFINE_ROUNDS if orders is None and np.isfinite(eps).any() else 0):
        order = np.argsort(grid)
        grid, eps = grid[order], eps[order]
        k = int(np.argmin(eps))
        low = grid[k - 1] if k > 0 else 1.0 + (grid[0] - 1.0) / 8.0          # orders stay > 1
        high = grid[k + 1] if k < grid.size - 1 else 2.0 * grid[-1]
        fine = np.linspace(low, high, REFINE + 2)[1:-1]
        grid, eps = np.append(grid, fine), np.append(eps, best(fine))
    return float(np.min(eps))

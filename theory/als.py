"""Approximate least squares (ALS, Sarlos 2006) with a Gaussian sketch: its asymptotic spectrum.

x_tilde = (Pi B)^+ Pi b tends to N(x_opt, ||w||^2 (B^T B)^{-1} / r) (Lu, Magdon-Ismail, Wei & Zikas
2023, OLS-RP, Lemma 1). For D' = D minus a record of leverage l and residual share
e = w_i^2 / ||w||^2 (Lu et al. 2023, NDIS, Theorem 4; the loss written out here as a quadratic
form), with L1 = 1 - l, Q1 = 1 - l - e, Dl = L1^2 - Q1, K0 = (p/2) ln(Q1/L1) - ln(L1)/2,
W ~ chi2_{p-1}, Z ~ N(0, 1):
    under D:   L = e/(2 Q1) W + Dl/(2 Q1) Z^2 + sqrt(r l e) L1/Q1 Z + r l e/(2 Q1) + K0,
    under D':  L = e/(2 L1) W + Dl/(2 L1^2) Z^2 + sqrt(r l e Q1)/L1^2 Z - r l e/(2 L1^2) + K0,
delta_fwd = E_D[(1 - e^{eps - L})_+], delta_rev = E_D'[(1 - e^{eps + L})_+]; both by the contour
integral of `theory.quadratic_loss`. When e > l (1 - l) (Dl > 0) the reverse loss -L is bounded above
by r l e / (2 L1^2) - K0 + r l e Q1 / (2 L1^2 Dl): delta_rev = 0 exactly (ln delta = -inf) from there on.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core.curve import check_direction
from ..core.validation import as_eps, as_finite_array, as_int, check_probability, scalar_or_array
from .gaussian_pair import GaussianLosses
from .quadratic_loss import QuadraticLoss, log_delta as _log_delta, log_delta_ceiling


def _als_losses(leverage: np.ndarray, residual: np.ndarray, r: np.ndarray,
                p: np.ndarray) -> tuple[QuadraticLoss, QuadraticLoss]:
    """The forward loss (under D) and the negated reverse loss (under D') as QuadraticLoss batches."""
    l, e = leverage, residual
    q1 = 1.0 - l - e
    lnl1 = np.log1p(-l)
    l1 = 1.0 - l
    dl = e - l * l1
    k0 = 0.5 * p * np.log1p(-e / l1) - 0.5 * lnl1
    rle = r * l * e
    dof = np.stack([p - 1.0, np.ones_like(l)], axis=1)
    forward = QuadraticLoss.build(
        np.stack([e / (2.0 * q1), dl / (2.0 * q1)], axis=1), dof,
        np.stack([np.zeros_like(l), rle * l1**2 / q1**2], axis=1),
        offset=rle / (2.0 * q1) + k0,
    )
    reverse = QuadraticLoss.build(
        np.stack([-e / (2.0 * l1), -dl / (2.0 * l1**2)], axis=1), dof,
        np.stack([np.zeros_like(l), rle * q1 / l1**4], axis=1),
        offset=rle / (2.0 * l1**2) - k0,
    )
    return forward, reverse


def als_pair(leverage: float, residual: float, r: int, p: int) -> GaussianLosses:
    """The Gaussian pair of the ALS limit for a record with leverage l and residual share e, as its
    two privacy losses (the forms above). Written as laws (derived here, matching the loss term by
    term): in suitable coordinates M(D') ~ N(0, I_p) and M(D) ~ N(sqrt(r l e / Q1) u_p,
    diag(L1/Q1 (p - 1 times), L1^2/Q1)), u_p the last unit vector; the losses avoid the rounding of
    L1/Q1 - 1 = e/Q1. For `theory.composition` and `theory.renyi`."""
    l, e = (float(as_finite_array(v, n)) for v, n in ((leverage, "leverage"), (residual, "residual")))
    if l < 0 or e < 0 or l + e >= 1:
        raise ValueError(f"leverage and residual share must be >= 0 with sum < 1, got {l} and {e}")
    p, r = as_int("p", p), as_int("r", r)
    if r <= p:
        raise ValueError(f"the sketch size r must exceed p, got r={r}, p={p}")
    forward, reverse = _als_losses(np.array([l]), np.array([e]), np.array([float(r)]), np.array([float(p)]))
    label = f"ALS pair, leverage {l:.4g}, residual share {e:.4g}, r = {r}, p = {p}"
    return GaussianLosses(forward, reverse, label=label)


def als_log_delta(eps: ArrayLike, leverage: ArrayLike, residual: ArrayLike, r: ArrayLike, p: ArrayLike,
                  direction: str = "max") -> float | np.ndarray:
    """ln delta(eps) of the ALS limit for a record with leverage l and residual share e (broadcasting)."""
    check_direction(direction)
    arrays = np.broadcast_arrays(as_eps(eps), *(as_finite_array(v, n) for v, n in
                                                ((leverage, "leverage"), (residual, "residual"), (r, "r"), (p, "p"))))
    e_, l_, res_, r_, p_ = (a.reshape(-1) for a in arrays)
    if np.any((l_ < 0) | (res_ < 0)):
        raise ValueError("leverage and residual share must be non-negative")
    if np.any(l_ + res_ >= 1):
        raise ValueError("leverage + residual share must be < 1 (the row's leverage in [B, b], Lu et al. 2023, NDIS, "
                         "Proposition 4)")
    if np.any((p_ < 1) | (p_ != np.round(p_))):
        raise ValueError("p (columns of B) must be a positive integer")
    if np.any(r_ <= p_):
        raise ValueError("the sketch size r must exceed p")
    forward, reverse = _als_losses(l_, res_, r_, p_)
    out = np.full(e_.shape, -np.inf)
    if direction in ("forward", "max"):
        out = np.maximum(out, _log_delta(forward, e_))
    if direction in ("reverse", "max"):
        out = np.maximum(out, _log_delta(reverse, e_))
    like = next((v for v in (eps, leverage, residual, r, p) if np.ndim(v)), eps)
    return scalar_or_array(out.reshape(arrays[0].shape), like)


def als_log_delta_ceiling(eps: ArrayLike, leverage: ArrayLike, residual: ArrayLike, r: float, p: float) -> np.ndarray:
    """An upper bound of ln max(delta_fwd, delta_rev)(eps) of the ALS limit, for arrays of points
    (eps, l, e) of one shape (`quadratic_loss.log_delta_ceiling`): a few operations per point, for
    skipping the rows that cannot be the worst in `theory.spectrum`."""
    eps, leverage, residual = (np.asarray(v, dtype=float).reshape(-1)
                               for v in np.broadcast_arrays(eps, leverage, residual))
    forward, reverse = _als_losses(leverage, residual, np.full(eps.size, float(r)), np.full(eps.size, float(p)))
    return np.maximum(log_delta_ceiling(forward, eps), log_delta_ceiling(reverse, eps))


def als_delta(eps: ArrayLike, leverage: ArrayLike, residual: ArrayLike, r: ArrayLike, p: ArrayLike,
              direction: str = "max") -> float | np.ndarray:
    """phi_{eps,r,p}(l, e): the asymptotic ALS spectrum for one record (Lu et al. 2023, NDIS, Definition 13).

    p = number of columns of B (intercept included); direction "forward", "reverse" or "max"."""
    like = next((v for v in (eps, leverage, residual, r, p) if np.ndim(v)), eps)
    return scalar_or_array(np.exp(np.asarray(als_log_delta(eps, leverage, residual, r, p, direction))), like)


def ols_sigma(eps: float, delta: float, r: int, p: int, C: float, guard_grid: int = 8) -> float:
    """sigma of M_OLS / M_ALS (Lu et al. 2023, NDIS, Fig. 4 and Theorem 5): the smallest sigma (sigma^2 > 2 C^2)
    with phi(C^2/sigma^2, C^2/sigma^2) <= delta, since appending sigma I caps every data row's l and e
    at C^2/sigma^2.

    Theorem 5 relies on phi increasing in l and e (assumed, not proved, there). Guard: phi is also
    evaluated on a guard_grid x guard_grid grid of (l, e) below the cap; if any exceeds delta, sigma
    is calibrated against the grid maximum instead."""
    from scipy import optimize

    eps = float(as_finite_array(eps, "eps"))
    if eps < 0:
        raise ValueError(f"eps must be non-negative, got {eps}")
    goal = float(np.log(check_probability(delta)))
    C = float(as_finite_array(C, "C"))
    if C <= 0:
        raise ValueError(f"the row-norm bound C must be positive, got {C}")
    if r <= p:
        raise ValueError(f"the sketch size r must exceed p, got r={r}, p={p}")
    fractions = np.linspace(0.0, 1.0, guard_grid + 1)[1:]
    grid_l, grid_e = (g.reshape(-1) for g in np.meshgrid(fractions, fractions))

    def corner(log_sigma: float) -> float | np.ndarray:
        cap = C**2 / np.exp(2.0 * log_sigma)
        return als_log_delta(eps, cap, cap, r, p) - goal

    def guarded(log_sigma: float) -> float:
        cap = C**2 / np.exp(2.0 * log_sigma)
        return float(np.max(als_log_delta(eps, cap * grid_l, cap * grid_e, r, p))) - goal

    lo = np.log(C * np.sqrt(2.0)) + 1e-9          # sigma^2 > 2 C^2 keeps l + e < 1
    hi = lo + 1.0
    while corner(hi) > 0:
        hi += 1.0
    if corner(lo) <= 0:
        return float(np.exp(lo))
    log_sigma = optimize.brentq(corner, lo, hi, xtol=1e-14, rtol=1e-15)
    if guarded(log_sigma) > 1e-12:
        while guarded(hi) > 0:
            hi += 1.0
        log_sigma = optimize.brentq(guarded, log_sigma, hi, xtol=1e-14, rtol=1e-15)
    return float(np.exp(log_sigma))

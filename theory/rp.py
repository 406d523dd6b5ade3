"""Gaussian random projection RP(D) = D^T G (G: n x r standard normal) and its calibration.

For D' = D minus a row of leverage l (Lu, Magdon-Ismail, Wei & Zikas 2023, NDIS,
Theorem 2; the loss written out here as a scaled chi-square), with
Y ~ chi2_r, the privacy loss is
    forward (D || D'):  L = l / (2 (1 - l)) Y + (r/2) ln(1 - l),
    reverse (D' || D): -L with L = (l / 2) Y + (r/2) ln(1 - l),
so delta_fwd(eps) = P[Y >= 2(1-l) a / l] - e^eps P[Y >= 2a/l], a = eps - (r/2) ln(1 - l), and the
reverse is 0 for eps >= -(r/2) ln(1 - l). RLC is r = 1. Both are evaluated by the contour integral of
`theory.quadratic_loss` (no subtraction of chi-square tails).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core.curve import check_direction
from ..core.validation import as_eps, as_finite_array, as_int, check_probability, scalar_or_array
from .gaussian_pair import GaussianLosses
from .quadratic_loss import QuadraticLoss, log_delta as _log_delta


def _rp_losses(leverage: np.ndarray, r: np.ndarray) -> tuple[QuadraticLoss, QuadraticLoss]:
    """The forward loss (under D) and the reverse loss (under D') as QuadraticLoss batches."""
    shift = 0.5 * r * np.log1p(-leverage)
    forward = QuadraticLoss.build((leverage / (2.0 * (1.0 - leverage)))[:, None], r[:, None], 0.0, offset=shift)
    reverse = QuadraticLoss.build((-0.5 * leverage)[:, None], r[:, None], 0.0, offset=-shift)
    return forward, reverse


def rp_pair(leverage: float, r: int) -> GaussianLosses:
    """The Gaussian pair (RP(D), RP(D')) of a removed row of leverage l, as its two privacy losses:
    in the basis where D^T D = I, each of the r output columns is N(0, 1) under D and N(0, 1 - l)
    along the row under D' (Lu et al. 2023, NDIS, Theorem 2), i.e. `GaussianPair([0], [[1]], [0],
    [[1 - l]], copies=r)` without the rounding of 1 - l. For `theory.composition`, `theory.renyi`."""
    lev = float(as_finite_array(leverage, "leverage"))
    if not 0 <= lev < 1:
        raise ValueError(f"leverage must lie in [0, 1), got {lev}")
    r = as_int("r", r)
    forward, reverse = _rp_losses(np.array([lev]), np.array([float(r)]))
    return GaussianLosses(forward, reverse, label=f"RP pair, leverage {lev:.4g}, r = {r}")


def rp_log_delta(eps: ArrayLike, leverage: ArrayLike, r: ArrayLike, direction: str = "max") -> float | np.ndarray:
    """ln delta(eps) of RP for a removed row of the given leverage (broadcasting eps, leverage, r)."""
    check_direction(direction)
    eps_a, lev_a, r_a = np.broadcast_arrays(as_eps(eps), as_finite_array(leverage, "leverage"), as_finite_array(r, "r"))
    if np.any((lev_a < 0) | (lev_a >= 1)):
        raise ValueError("leverage must lie in [0, 1); a row of leverage 1 makes D' rank-deficient (delta = 1)")
    if np.any((r_a < 1) | (r_a != np.round(r_a))):
        raise ValueError("r must be a positive integer")
    e, lev, dof = (x.reshape(-1) for x in (eps_a, lev_a, r_a))
    forward, reverse = _rp_losses(lev, dof)
    out = np.full(e.shape, -np.inf)
    if direction in ("forward", "max"):
        out = np.maximum(out, _log_delta(forward, e))
    if direction in ("reverse", "max"):
        out = np.maximum(out, _log_delta(reverse, e))
    like = eps if np.ndim(eps) else (leverage if np.ndim(leverage) else r)
    return scalar_or_array(out.reshape(eps_a.shape), like)


def rp_delta(eps: ArrayLike, leverage: ArrayLike, r: ArrayLike, direction: str = "max") -> float | np.ndarray:
    """delta(eps) of Gaussian RP (r columns; RLC: r = 1) for a removed row of leverage l
    (Lu et al. 2023, NDIS, Theorem 2).

    direction: "forward" (D || D'), "reverse" (D' || D) or "max" (the spectrum, the larger of the two)."""
    like = eps if np.ndim(eps) else (leverage if np.ndim(leverage) else r)
    return scalar_or_array(np.exp(np.asarray(rp_log_delta(eps, leverage, r, direction))), like)


def rp_leverage_threshold(eps: float, delta: float, r: int) -> float:
    """l*(eps, delta, r): the leverage with delta_fwd(eps; l*, r) = delta. The forward spectrum increases
    with l (Lu et al. 2023, NDIS, Proposition 3), so RP is (eps, delta)-DP on databases whose rows have leverage <= l*.
    Root of ln delta(l) - ln delta in logit(l)."""
    from scipy import optimize

    eps = float(as_finite_array(eps, "eps"))
    goal = float(np.log(check_probability(delta)))
    if eps < 0:
        raise ValueError(f"eps must be non-negative, got {eps}")

    def gap(logit: float) -> float | np.ndarray:
        return rp_log_delta(eps, 1.0 / (1.0 + np.exp(-logit)), r, "forward") - goal

    return float(1.0 / (1.0 + np.exp(-optimize.brentq(gap, -40.0, 35.0, xtol=1e-14, rtol=1e-15))))


def rp_sigma(eps: float, delta: float, r: int, C: float, tight: bool = False) -> float:
    """Noise scale of M_RP (Lu et al. 2023, NDIS, Fig. 3 and Theorem 3): appending sigma I_d to D caps
    every data row's leverage at C^2 / sigma^2, so sigma = C / sqrt(l*). With tight=True the valid
    smaller choice sigma = C sqrt(1/l* - 1) (derived here: a row of norm <= C has leverage
    <= C^2 / (C^2 + sigma^2) in [D; sigma I])."""
    C = float(as_finite_array(C, "C"))
    if C <= 0:
        raise ValueError(f"the row-norm bound C must be positive, got {C}")
    lstar = rp_leverage_threshold(eps, delta, r)
    return C * np.sqrt(1.0 / lstar - 1.0) if tight else C / np.sqrt(lstar)

"""Privacy formulas of Burkhardt, Keller, Orlandi & Schwiegelshohn (2025) [LTM]: noisy secure
sketches in the linear-transformation model. Clients hold rows with entries |a_ij| <= eta; a
neighbour replaces one row.

* Calibrations as printed: the zero-output threshold and eq. 4 of Thm 3.4 (Gaussian noise), the
  Laplace scale of Thm 3.5, and the local Gaussian baseline.
* Derived here: given the public sketch S (s = 1), a replaced row is a pure mean shift of an exactly
  Gaussian release, the Gaussian mechanism with mu = ||Delta|| / (sigma sqrt(T)), T the size of the
  changed client's bucket; `resampled_sketch_delta` averages it over a fresh S.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .gaussian import gaussian_delta


def min_clients(m: int, d: int, delta: float, s: int = 1, t_prime: int = 0) -> float:
    """8 m ln(d m / delta) + s + t': with n at or below it eq. 4 is undefined and every client
    outputs 0 (the proof of [LTM] Thm 3.4; eq. 2 prints the threshold without s, as a strict bound)."""
    return float(8 * m * np.log(d * m / delta) + s + t_prime)


def eq4_variance(eps: float, delta: float, eta: float, m: int, s: int, n: int, d: int, t_prime: int = 0,
                 rule: str = "paper_eq4") -> float:
    """sigma^2 = 4 s^3 eta^2 ln(1.25 s / (delta/d - m e^{-(n-s-t')/(8m)})) m d^2 / (eps^2 (n - s - t'))
    ([LTM] eq. 4 as printed); rule "consistent_2eta" multiplies it by 4, matching the L2 sensitivity
    2 eta sqrt(s) of a replaced row (derived here)."""
    honest = n - s - t_prime
    slack = delta / d - m * np.exp(-honest / (8.0 * m))
    if honest <= 0 or slack <= 0:
        raise ValueError(f"eq. 4 is undefined for n={n} <= 8 m ln(dm/delta) + s + t' = "
                         f"{min_clients(m, d, delta, s, t_prime):.1f}")
    variance = 4.0 * s**3 * eta**2 * np.log(1.25 * s / slack) * m * d**2 / (eps**2 * honest)
    return float(variance * (4.0 if rule == "consistent_2eta" else 1.0))


def laplace_scale(eps: float, eta: float, m: int, d: int, scale: str = "theorem") -> float:
    """b = 2 eta m^2 d / eps ([LTM] Thm 3.5 / Cor. D.5 as printed) or 1/eps ("experiment": Lap(0, 1/eps)
    per piece, as [LTM] Sec. 5 describes its experiments)."""
    return float(2.0 * eta * m**2 * d / eps) if scale == "theorem" else float(1.0 / eps)


def local_variance(eps: float, delta: float, eta: float, d: int) -> float:
    """Local baseline: the classic Gaussian mechanism (Dwork & Roth 2014) for a row with L2 sensitivity
    2 eta sqrt(d), 2 (2 eta sqrt d)^2 ln(1.25/delta) / eps^2."""
    return float(2.0 * (2.0 * eta * np.sqrt(d)) ** 2 * np.log(1.25 / delta) / eps**2)


def resampled_sketch_delta(eps: ArrayLike, n: int, m: int, sigma: float, change: float) -> np.ndarray:
    """delta(eps) of [LTM]'s Gaussian sketch with s = 1 when S is drawn afresh each run and published
    with the output (derived here): E_S[delta_mu(S)(eps)] with mu = ||Delta|| / (sigma sqrt(T)), where
    the bucket of the changed client holds T = 1 + Binomial(n - 1, 1/m) clients. Both directions are equal."""
    from scipy import stats

    t = np.arange(1, n + 1)
    weight = stats.binom.pmf(t - 1, n - 1, 1.0 / m)
    keep = weight > 1e-300
    curves = gaussian_delta(np.atleast_1d(np.asarray(eps, dtype=float))[None, :],
                            (change / (sigma * np.sqrt(t[keep])))[:, None])
    return weight[keep] @ curves

"""The analytic Gaussian mechanism (Balle & Wang 2018; Lu, Magdon-Ismail, Wei & Zikas
2023, NDIS, Appendix C, Propositions 5-7, Corollary 4).

For outputs N(m, sigma^2 I) and N(m', sigma^2 I) with mu = ||m - m'|| / sigma the privacy loss is
L ~ N(mu^2/2, mu^2) and delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) (Balle & Wang
2018, Theorem 8), evaluated here without that subtraction by the contour integral of `theory.quadratic_loss`.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from .quadratic_loss import QuadraticLoss, log_delta as _log_delta
from ndis.core.validation import as_eps, as_finite_array, check_probability, scalar_or_array


def gaussian_log_delta(eps, mu):
    """ln delta(eps) of the Gaussian mechanism with mu = sensitivity / sigma (broadcasting)."""
    eps_arr, mu_arr = np.broadcast_arrays(as_eps(eps), as_finite_array(mu, "mu"))
    if np.any(mu_arr < 0):
        raise ValueError("mu = sensitivity / sigma must be non-negative")
    flat_mu = mu_arr.reshape(-1)
    loss = QuadraticLoss.build(np.zeros((1, 0)), 0.0, 0.0, offset=0.5 * flat_mu**2, normal_var=flat_mu**2)
    out = _log_delta(loss, eps_arr.reshape(-1)).reshape(eps_arr.shape)
    return scalar_or_array(out, eps if np.ndim(eps) else mu)


def gaussian_delta(eps, mu):
    """delta(eps) of the Gaussian mechanism, mu = sensitivity / sigma (Balle & Wang 2018, Theorem 8)."""
    log = gaussian_log_delta(eps, mu)
    return scalar_or_array(np.exp(np.asarray(log)), eps if np.ndim(eps) else mu)


def gaussian_mu(eps: float, delta: float) -> float:
    """The unique mu = sensitivity / sigma with delta(eps; mu) = delta (delta increases with mu,
    Lu et al. 2023, NDIS, Proposition 6): root of ln delta(eps; mu) - ln delta by Brent's method."""
    eps = float(as_finite_array(eps, "eps"))
    delta = float(check_probability(delta))
    if eps < 0:
        raise ValueError(f"eps must be non-negative, got {eps}")
    goal = np.log(delta)
    gap = lambda log_mu: gaussian_log_delta(eps, np.exp(log_mu)) - goal
    lo, hi = -1.0, 1.0
    while gap(lo) > 0:
        lo -= 2.0
    while gap(hi) < 0:
        hi += 2.0
    return float(np.exp(optimize.brentq(gap, lo, hi, xtol=1e-14, rtol=1e-15)))


def gaussian_sigma(eps, delta, sensitivity=1.0):
    """Smallest sigma for which sensitivity-bounded queries plus N(0, sigma^2 I) are (eps, delta)-DP:
    sigma = sensitivity / mu*(eps, delta) (the analytic calibration of Balle & Wang 2018)."""
    sensitivity = float(as_finite_array(sensitivity, "sensitivity"))
    if sensitivity <= 0:
        raise ValueError(f"sensitivity must be positive, got {sensitivity}")
    return sensitivity / gaussian_mu(eps, delta)


def classic_gaussian_sigma(eps, delta, sensitivity=1.0) -> float:
    """The classic calibration sigma = sensitivity sqrt(2 ln(1.25/delta)) / eps (Dwork & Roth 2014,
    Theorem 3.22; Lu et al. 2023, OLS-RP, Proposition 2)."""
    eps = float(as_finite_array(eps, "eps"))
    delta = float(check_probability(delta))
    if eps <= 0:
        raise ValueError(f"eps must be positive, got {eps}")
    return float(sensitivity) * np.sqrt(2.0 * np.log(1.25 / delta)) / eps

"""Calibrations of the baselines that Lu, Magdon-Ismail, Wei & Zikas (2023, NDIS) compare against.

* Sheffet (2019) (reference [15] of NDIS): the rows c2 I appended before the random projection,
  c2 = sqrt(4 C^2 (sqrt(2 r ln(4/delta)) + ln(4/delta)) / eps).
* Showkatbakhsh, Karakus & Diggavi (2018, ISIT18) (reference [17] of NDIS) as the NDIS
  experiments use it: delta0 = 2 (1 - delta) / (e^eps + 1), eps_MI = delta0^2 log2(e) / 2 bits, and noise variance
  max(r / (2^{2 eps_MI} - 1) - f(D)^2, 0) on every column. This eps -> MI conversion is NOT a valid
  (eps, delta) guarantee (derived here: mutual-information privacy does not bound the hockey-stick
  divergence); it is reproduced as printed so the auditor can measure it.
"""

from __future__ import annotations

import numpy as np

from ndis.core.validation import as_finite_array, check_probability


def sheffet_c2(eps, delta, r, C) -> float:
    """c2 of Sheffet's DP random-projection least squares (Sheffet 2019; the inner square root)."""
    eps, C = float(as_finite_array(eps, "eps")), float(as_finite_array(C, "C"))
    log_term = np.log(4.0 / float(check_probability(delta)))
    if eps <= 0 or C <= 0 or r < 1:
        raise ValueError("sheffet_c2 needs eps > 0, C > 0 and r >= 1")
    return float(np.sqrt(4.0 * C**2 * (np.sqrt(2.0 * r * log_term) + log_term) / eps))


def isit18_column_bound(D) -> float:
    """f(D) = min_j sqrt(sum_i D_ij^2 - max_i D_ij^2): each column's squared norm without its largest
    entry (Showkatbakhsh et al. 2018, eq. 13, with the maximum taken per column, fixing its
    index typo)."""
    D = as_finite_array(D, "D")
    squares = D**2
    return float(np.sqrt(np.min(squares.sum(axis=0) - squares.max(axis=0))))


def isit18_mi_epsilon(eps, delta) -> float:
    """The eps_MI (bits) that the NDIS experiments' code derives from (eps, delta): delta0^2 log2(e) / 2."""
    delta0 = 2.0 * (1.0 - float(check_probability(delta))) / (np.exp(float(eps)) + 1.0)
    return float(delta0**2 * np.log2(np.e) / 2.0)


def isit18_sigma(eps, delta, r, f) -> float:
    """Noise standard deviation of ISIT'18 random projection + noise as the NDIS experiments calibrate it."""
    eps_mi = isit18_mi_epsilon(eps, delta)
    variance = r / (2.0 ** (2.0 * eps_mi) - 1.0) - float(f) ** 2
    return float(np.sqrt(max(variance, 0.0)))

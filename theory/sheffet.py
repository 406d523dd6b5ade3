"""Calibration of Sheffet's (2019) DP random-projection least squares, a baseline that Lu et al.
(2023) [NDIS] compare against: the rows c2 I appended to the data before the random projection,
c2 = sqrt(4 C^2 (sqrt(2 r ln(4/delta)) + ln(4/delta)) / eps).
"""

from __future__ import annotations

import numpy as np

from ..core.validation import as_finite_array, check_probability


def sheffet_c2(eps: float, delta: float, r: int, C: float) -> float:
    """c2 of Sheffet's (2019) DP random-projection least squares (the scale of the appended rows
    c2 I), as Lu et al. (2023) [NDIS] calibrate it."""
    eps, C = float(as_finite_array(eps, "eps")), float(as_finite_array(C, "C"))
    log_term = np.log(4.0 / float(check_probability(delta)))
    if eps <= 0 or C <= 0 or r < 1:
        raise ValueError("sheffet_c2 needs eps > 0, C > 0 and r >= 1")
    return float(np.sqrt(4.0 * C**2 * (np.sqrt(2.0 * r * log_term) + log_term) / eps))

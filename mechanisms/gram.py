"""What the sketching mechanisms see of the data: the Gram matrix of D (possibly with sigma*I_d rows
appended) as a triangular factor, and the least-squares summary of D = [B, b].

RP, RLC and ALS with a Gaussian sketch depend on D only through D^T D (the rows of Pi D are i.i.d.
N(0, D^T D); Lu, Magdon-Ismail, Wei & Zikas 2023, NDIS, Corollary 2), so every fast sampler starts
here. The factor comes from a thin QR of D, then a QR of [R; sigma I] (the appended rows of
[D; sigma I_d]), which never forms D^T D and costs O(n d^2) once per validated dataset and sigma
(`ndis.core.validation.memo`): the sampler and `output_law` share it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from scipy import linalg

from .. import theory
from ..core.validation import check_full_rank, memo


def _augmented_r(D: np.ndarray, sigma: float) -> np.ndarray:
    """The R of a QR of [D; sigma I] (shape (min(n, d), d) when sigma == 0, else (d, d))."""
    # mode="r" returns R alone (numpy's stubs type every mode as the (Q, R) pair)
    R = cast(np.ndarray, np.linalg.qr(D, mode="r"))
    if sigma > 0:
        R = cast(np.ndarray, np.linalg.qr(np.vstack([R, sigma * np.eye(D.shape[1])]), mode="r"))
    return R


def triangular_factor(D: np.ndarray, sigma: float = 0.0) -> np.ndarray:
    """Upper-triangular R with R^T R = D^T D + sigma^2 I (the Gram matrix of [D; sigma I_d]).

    Raises ValueError when that Gram matrix is singular (possible only with sigma == 0)."""
    return memo(D, ("gram-factor", float(sigma)), lambda D: _checked_factor(D, sigma))


def _checked_factor(D: np.ndarray, sigma: float) -> np.ndarray:
    R = _augmented_r(D, sigma)
    check_full_rank(R, "D" if sigma == 0 else "[D; sigma I]", D.shape[0])
    return R


@dataclass(frozen=True)
class LeastSquares:
    """OLS summary of [B, b] (possibly augmented): x_opt, ||w|| = ||b - B x_opt|| and the factor R
    (upper, R^T R = B^T B), in the notation of Lu et al. (2023, OLS-RP), Sec. 3."""

    x: np.ndarray
    residual_norm: float
    R: np.ndarray

    @property
    def p(self) -> int:
        return self.x.size

    @property
    def R_inv(self) -> np.ndarray:
        """R^{-1}, so that R^{-1} R^{-T} = (B^T B)^{-1}."""
        return linalg.solve_triangular(self.R, np.eye(self.p))


def least_squares(D: np.ndarray, sigma: float = 0.0) -> LeastSquares:
    """OLS of the last column of [D; sigma I] on the others (M_OLS, Lu et al. 2023, NDIS, Fig. 4:
    B~ = [B; sigma I_p; 0], b~ = [b; 0_p; sigma]), by `theory.ols_fit` on the QR shared through
    `theory.split_regression`. Raises ValueError if B~ is rank-deficient (a zero residual, label in
    col(B), is allowed)."""
    x, w, _, R = theory.ols_fit(*theory.split_regression(theory.augment(D, sigma)))
    return LeastSquares(x=x, residual_norm=float(np.linalg.norm(w)), R=R)

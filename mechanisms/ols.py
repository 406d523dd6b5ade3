"""M_OLS: DP least squares by sampling the (regularised) ALS limit (Lu, Magdon-Ismail, Wei & Zikas
2023, NDIS, Fig. 4, Theorem 5; the relative variant M_OLS^rel, Fig. 13).

M_OLS(D) ~ N(x~, ||w~||^2 (B~^T B~)^{-1} / r) for [B~, b~] = [D; sigma I_{p+1}]: the asymptotic law of
ALS on the regularised data, released exactly, so its spectrum is exactly phi (NDIS, Theorem 5).
"""

from __future__ import annotations

import numpy as np

from .. import theory
from ..core.validation import as_int
from .als import SketchedLS
from .base import Draw
from .calibration import OLSNoise, OLSRelativeNoise

_R_DOC = {"r": "sketch size of the ALS whose limit is sampled (int > p + 1)"}


class _NormalLimitLS(SketchedLS):
    """Samples `output_law` (exact here): x~ + ||w~|| R^{-1} z / sqrt(r)."""

    law_is_exact = True

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        _, ls = self._solution(D)
        factor = ls.R_inv.T * (ls.residual_norm / np.sqrt(self.r))
        return (lambda k, rng: ls.x + rng.standard_normal((k, ls.p)) @ factor), (ls.p,), ls.p

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """M_OLS as NDIS, Fig. 4, writes it: form D~, solve OLS, invert B~^T B~, sample the normal."""
        sigma, _ = self._solution(D)
        tilde = theory.augment(D, sigma)
        B, b = tilde[:, :-1], tilde[:, -1]
        x = np.linalg.lstsq(B, b, rcond=None)[0]
        w = b - B @ x
        cov = (w @ w) * np.linalg.inv(B.T @ B) / self.r
        return (lambda k, rng: rng.multivariate_normal(x, cov, size=k)), (x.size,), x.size


class NoisyOLS(OLSNoise, _NormalLimitLS):
    name = "m-ols"
    summary = "M_OLS, a sample of the ALS limit normal of [D; sigma I_{p+1}] (Lu et al. 2023, NDIS, Fig. 4, Theorem 5)"
    param_docs = {**_R_DOC, **OLSNoise.noise_docs}

    def __init__(self, r: int, eps: float | None = None, delta: float | None = None, C: float | None = None,
                 sigma: float | None = None) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta, C, sigma)})


class RelativeOLS(OLSRelativeNoise, _NormalLimitLS):
    name = "m-ols-rel"
    summary = ("M_OLS^rel, the unregularised ALS limit when phi(l_S, e_S) <= delta, else M_OLS (Lu et al. 2023, NDIS, "
               "Fig. 13)")
    param_docs = {**_R_DOC, **OLSRelativeNoise.noise_docs}

    def __init__(self, r: int, eps: float, delta: float, C: float | None = None, leverage: float | None = None,
                 residual: float | None = None) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta, C, leverage, residual)})

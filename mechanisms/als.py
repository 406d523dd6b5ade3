"""Approximate least squares with a Gaussian sketch, and the schemes that are ALS on regularised data
(ALS, Sheffet's RP-LS, M_ALS, least squares on M_RP, M_ALS^rel and the ISIT'18 scheme).

ALS(D) = (Pi B)^+ Pi b for D = [B, b] (Sarlos 2006; Lu, Magdon-Ismail, Wei & Zikas 2023, OLS-RP,
Fig. 1). Every scheme here is ALS of [D; sigma I_{p+1}] for its own sigma (for least squares on
M_RP and for ISIT'18: Pi D + sigma N has the law of Pi~ [D; sigma I], Pi~ Gaussian).

Exact law (derived here; `theory.als_exact`): w ⟂ col(B), so Pi B and Pi w are independent,
x~ - x_opt | Pi B ~ N(0, ||w||^2 W^{-1}) with W = (Pi B)^T Pi B ~ Wishart_p(r, B^T B), and integrating W out gives a
multivariate t: nu = r - p + 1 degrees of freedom, scale ||w||^2 (B^T B)^{-1} / nu. The fast sampler
draws x_opt + ||w|| R^{-1} z / sqrt(u), z ~ N(0, I_p), u ~ chi2_nu, R^T R = B^T B: O(p^2) per sample,
independent of n and r. `output_law` is the papers' asymptotic normal N(x_opt, ||w||^2 (B^T B)^{-1}/r)
(OLS-RP, Lemma 1; Lu et al. 2023, NDIS, Lemma 1), labelled exact=False; the exact covariance is
||w||^2 (B^T B)^{-1} / (r - p - 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import theory
from ..core.validation import as_data, as_int, as_positive
from ..theory.gaussian_pair import GaussianLaw
from .base import Draw, Mechanism
from .calibration import ISIT18Noise, NoNoise, OLSNoise, OLSRelativeNoise, RPNoise, SheffetNoise
from .gram import LeastSquares, least_squares
from .neighbors import row_pair
from .sketch import gaussian_sketch

_R_DOC = {"r": "sketch size (int > p + 1, p = number of feature columns of D = [B, b])"}


def sketched_solutions(S: np.ndarray) -> np.ndarray:
    """lstsq(S_B, S_b) for each sketched system S = [S_B, S_b] of shape (k, r, p+1), by batched QR."""
    Q, R = np.linalg.qr(S[..., :-1])
    rhs = np.einsum("krp,kr->kp", Q, S[..., -1])
    return np.linalg.solve(R, rhs[..., None])[..., 0]


class SketchedLS(Mechanism):
    """ALS of [D; sigma I_{p+1}] with sigma = noise_scale(D) (from the calibration mixin)."""

    law_is_exact = False
    r: int

    def noise_scale(self, D: np.ndarray) -> float:
        """sigma of the appended rows: the calibration mixin's, listed first among the bases."""
        raise NotImplementedError

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        return as_data(D, min_cols=2)

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return (as_data(D, min_cols=2).shape[1] - 1,)

    def _solution(self, D: np.ndarray) -> tuple[float, LeastSquares]:
        """(sigma, least-squares summary of [D; sigma I]) after checking r against p."""
        p = D.shape[1] - 1
        if self.r < p + 2:
            raise ValueError(f"r={self.r} is too small: the sketch size must exceed p + 1 = {p + 1} "
                             f"(p = {p} feature columns) for the sketched solution to have a covariance")
        sigma = self.noise_scale(D)
        return sigma, least_squares(D, sigma)

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        _, ls = self._solution(D)
        nu, p, factor = self.r - ls.p + 1, ls.p, ls.R_inv.T * ls.residual_norm

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            z = rng.standard_normal((k, p))
            return ls.x + (z @ factor) / np.sqrt(rng.chisquare(nu, size=k))[:, None]

        return draw, (p,), p + 1

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        sigma, ls = self._solution(D)
        r, n = self.r, D.shape[0]
        return (lambda k, rng: sketched_solutions(gaussian_sketch(D, r, k, rng, sigma))), (ls.p,), r * (n + ls.p + 1)

    def output_law(self, D: ArrayLike) -> GaussianLaw | None:
        """N(x_opt, ||w||^2 (B^T B)^{-1} / r) of [D; sigma I]: asymptotic for sketches (exact=False),
        exact for M_OLS, which samples this normal."""
        _, ls = self._solution(as_data(D, min_cols=2))
        R_inv = ls.R_inv
        cov = ls.residual_norm**2 * (R_inv @ R_inv.T) / self.r
        return theory.GaussianLaw(ls.x, cov, copies=1, exact=self.law_is_exact)

    def spectrum_model(self, D: ArrayLike) -> tuple[str, dict[str, Any]]:
        """theory's closed form: the ALS spectrum phi of [D; sigma I], sigma calibrated on D (held fixed)."""
        return "als", {"r": self.r, "ridge": self.noise_scale(as_data(D, min_cols=2)), "exact": self.law_is_exact}

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None,
                       eps: float | None = None) -> tuple[int, np.ndarray] | None:
        """The row maximising the asymptotic ALS spectrum phi_{eps,r,p}(l, e) in [D; sigma I] over the
        Pareto frontier of (leverage, residual share) (`theory.max_als_delta_row`), for remove/zero. eps defaults to
        the mechanism's eps, else 1 (the papers' setting). sigma is computed from D (`fixed_for(D)` pins
        data-dependent defaults so that D' gets the same)."""
        relation = self._relation(relation)
        D = as_data(D, min_cols=2)
        if eps is None:
            own = getattr(self, "eps", None)         # the calibration's eps, when it has one
            eps = own if own is not None else 1.0
        return row_pair(D, theory.max_als_delta_row(D, self.r, as_positive("eps", eps), self.noise_scale(D)), relation)


class ApproximateLeastSquares(NoNoise, SketchedLS):
    name = "als"
    summary = "ALS (Pi B)^+ Pi b with an r x n Gaussian sketch (Sarlos 2006; Lu et al. 2023, OLS-RP, Fig. 1)"
    param_docs = _R_DOC

    def __init__(self, r: int) -> None:
        self._set({"r": as_int("r", r)})


class SheffetLeastSquares(SheffetNoise, SketchedLS):
    name = "rp-ls"
    summary = "RP-LS of Sheffet (2019), ALS of [D; c2 I_{p+1}] (Lu et al. 2023, OLS-RP, Fig. 4)"
    param_docs = {**_R_DOC, **SheffetNoise.noise_docs}

    def __init__(self, r: int, eps: float, delta: float, C: float | None = None) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta, C)})


class NoisyALS(OLSNoise, SketchedLS):
    name = "m-als"
    summary = "M_ALS, ALS of [D; sigma I_{p+1}] with M_OLS's sigma (Lu et al. 2023, NDIS, Sec. 6.3)"
    param_docs = {**_R_DOC, **OLSNoise.noise_docs}

    def __init__(self, r: int, eps: float | None = None, delta: float | None = None, C: float | None = None,
                 sigma: float | None = None) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta, C, sigma)})


class RPLeastSquares(RPNoise, SketchedLS):
    name = "m-rp-ls"
    summary = "least squares on the M_RP sketch of D = ALS of [D; sigma_RP I_{p+1}] (Lu et al. 2023, NDIS, Sec. 2.3)"
    param_docs = {**_R_DOC, **RPNoise.noise_docs}

    def __init__(self, r: int, eps: float | None = None, delta: float | None = None, C: float | None = None,
                 tight: bool = False, sigma: float | None = None) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta, C, tight, sigma)})


class RelativeALS(OLSRelativeNoise, SketchedLS):
    name = "m-als-rel"
    summary = "M_ALS^rel, plain ALS when phi(l_S, e_S) <= delta, else M_ALS (Lu et al. 2023, NDIS, Sec. 7)"
    param_docs = {**_R_DOC, **OLSRelativeNoise.noise_docs}

    def __init__(self, r: int, eps: float, delta: float, C: float | None = None, leverage: float | None = None,
                 residual: float | None = None) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta, C, leverage, residual)})


class ISIT18LeastSquares(ISIT18Noise, SketchedLS):
    name = "isit18-ls"
    summary = ("Showkatbakhsh, Karakus & Diggavi (2018): lstsq of Pi D + sigma N, as the code of Lu et al. (2023, "
               "NDIS) runs it")
    param_docs = {**_R_DOC, **ISIT18Noise.noise_docs}

    def __init__(self, r: int, eps: float, delta: float) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta)})

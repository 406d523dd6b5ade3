"""Gaussian random projection and the DP schemes that release it (Lu, Magdon-Ismail, Wei & Zikas
2023, NDIS: RP, RLC, M_RP, M_RLC, M_RP^rel; and the sketch of Sheffet 2019).

Output layout: the sketch Pi [D; sigma I_d] of shape (r, d) (= (D^T G)^T in the notation of
NDIS); its r rows are i.i.d. N(0, D^T D + sigma^2 I) (NDIS, Corollary 2), i.e. `copies = r` draws of one
d-dimensional normal. The fast sampler draws H R with H (r x d) i.i.d. N(0, 1) and
R^T R = D^T D + sigma^2 I (`mechanisms.gram`): O(r d^2) per sample, independent of n. The literal one
multiplies an r x n Gaussian matrix into D: O(r n d).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import theory
from ..core.validation import as_data, as_int
from ..theory.gaussian_pair import GaussianLaw
from .base import Draw, Mechanism
from .calibration import NoNoise, RPNoise, RPRelativeNoise, SheffetNoise
from .gram import triangular_factor
from .neighbors import row_pair
from .sketch import gaussian_sketch

_R_DOC = {"r": "sketch size, the number of projected rows (int >= 1)"}


def gram_features(samples: ArrayLike) -> np.ndarray:
    """Upper triangle (with diagonal) of S^T S for each sketch S (r, d): shape (n, d(d+1)/2).

    The output law depends on D only through D^T D, and S^T S is sufficient for it."""
    samples = np.asarray(samples, dtype=float)
    gram = np.einsum("nrd,nre->nde", samples, samples)
    rows, cols = np.triu_indices(samples.shape[-1])
    return gram[:, rows, cols]


class _Projection(Mechanism):
    """RP of [D; sigma I_d] with sigma = noise_scale(D) (from the calibration mixin)."""

    r: int

    def noise_scale(self, D: np.ndarray) -> float:
        """sigma of the appended rows: the calibration mixin's, listed first among the bases."""
        raise NotImplementedError

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return (self.r, as_data(D).shape[1])

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        R = triangular_factor(D, self.noise_scale(D))
        r, d = self.r, D.shape[1]
        return (lambda k, rng: rng.standard_normal((k, r, d)) @ R), (r, d), r * d

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        sigma = self.noise_scale(D)
        triangular_factor(D, sigma)  # same input checks as the fast sampler
        r, (n, d) = self.r, D.shape
        return (lambda k, rng: gaussian_sketch(D, r, k, rng, sigma)), (r, d), r * (n + d)

    def output_law(self, D: ArrayLike) -> GaussianLaw | None:
        """Exact: the r rows are i.i.d. N(0, D^T D + sigma^2 I)."""
        D = as_data(D)
        R = triangular_factor(D, self.noise_scale(D))
        return theory.GaussianLaw(np.zeros(D.shape[1]), R.T @ R, copies=self.r, exact=True)

    def features(self, samples: np.ndarray) -> np.ndarray:
        return gram_features(samples)

    def spectrum_model(self, D: ArrayLike) -> tuple[str, dict[str, Any]]:
        """theory's closed form: RP of [D; sigma I] with sigma calibrated on D (held fixed)."""
        return "rp", {"r": self.r, "ridge": self.noise_scale(as_data(D))}

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """The row with the largest leverage in [D; sigma I] (`theory.max_leverage_row`), for remove/zero.

        sigma is computed from D; with data-dependent defaults (C=None, leverage=None) the mechanism
        run on D' may choose another sigma: `fixed_for(D)` pins them to audit one fixed scheme."""
        relation = self._relation(relation)
        D = as_data(D)
        return row_pair(D, theory.max_leverage_row(D, self.noise_scale(D)), relation)


class RandomProjection(NoNoise, _Projection):
    name = "rp"
    summary = "Gaussian random projection Pi D (r x d), Pi i.i.d. N(0,1) (Lu et al. 2023, NDIS, Definition 5)"
    param_docs = _R_DOC

    def __init__(self, r: int) -> None:
        self._set({"r": as_int("r", r)})


class RandomLinearCombination(NoNoise, _Projection):
    name = "rlc"
    summary = "random linear combination g^T D (1 x d) = RP with r = 1 (Lu et al. 2023, NDIS, Appendix F)"
    param_docs = {}

    def __init__(self) -> None:
        self._set({}, r=1)


class NoisyProjection(RPNoise, _Projection):
    name = "m-rp"
    summary = "M_RP, RP of [D; sigma I_d] with sigma = C/sqrt(l*) (Lu et al. 2023, NDIS, Fig. 3, Theorem 3)"
    param_docs = {**_R_DOC, **RPNoise.noise_docs}

    def __init__(self, r: int, eps: float | None = None, delta: float | None = None, C: float | None = None,
                 tight: bool = False, sigma: float | None = None) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta, C, tight, sigma)})


class NoisyLinearCombination(RPNoise, _Projection):
    name = "m-rlc"
    summary = "M_RLC, M_RP with r = 1 (Lu et al. 2023, NDIS, Fig. 8, Corollary 7)"
    param_docs = RPNoise.noise_docs

    def __init__(self, eps: float | None = None, delta: float | None = None, C: float | None = None,
                 tight: bool = False, sigma: float | None = None) -> None:
        self._set(self._noise_params(eps, delta, C, tight, sigma), r=1)


class RelativeProjection(RPRelativeNoise, _Projection):
    name = "m-rp-rel"
    summary = "M_RP^rel, plain RP when the leverage l_S <= l*, else M_RP (Lu et al. 2023, NDIS, Fig. 12)"
    param_docs = {**_R_DOC, **RPRelativeNoise.noise_docs}

    def __init__(self, r: int, eps: float, delta: float, C: float | None = None, leverage: float | None = None,
                 tight: bool = False) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta, C, leverage, tight)})


class SheffetProjection(SheffetNoise, _Projection):
    name = "sheffet-rp"
    summary = "the sketch of Sheffet (2019) alone: RP of [D; c2 I_d] ('[15]' in Lu et al. 2023, NDIS, Tables I, III)"
    param_docs = {**_R_DOC, **SheffetNoise.noise_docs}

    def __init__(self, r: int, eps: float, delta: float, C: float | None = None) -> None:
        self._set({"r": as_int("r", r), **self._noise_params(eps, delta, C)})


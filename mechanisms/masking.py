"""Ding, Wu, Miao & Chen (2022) [Masking]: random orthogonal matrix masking plus Gaussian noise.

    mask-a:   Y = X + C                 (eq. 3; C i.i.d. N(0, sigma^2))
    mask-b:   Y = A (X + C)             (eq. 4; A ~ Haar(O(n)), secret, fresh per release)
    mask-c:   Y = A X + C               (eq. 15; same law as mask-b, Lemma A.4)
    mask-blk: Y = diag(A_1..A_k)(X + C) (Sec. 4; independent Haar blocks, n_s = min n_b > p)

Neighbours: one row replaced, ||x_i - x'_i||_2 <= 1, entries |x_ij| <= 1 (Def. 2.1, eq. 6).

Fast exact sampler (derived here): for Z = Q_Z R_Z (thin QR) and A Haar, A Q_Z is Haar on the Stiefel
manifold, so A Z has the law of V R_Z with V the sign-corrected Q factor of an n x p Gaussian:
O(n p^2) per release instead of O(n^3). The literal samplers draw A with scipy.stats.ortho_group.

Output law: (A) is exactly Gaussian (`NoisyRelease`). For (B)/(C) the likelihood ratio of Y equals
that of W = Y^T Y ~ noncentral Wishart W_p(n, sigma^2 I; X^T X / sigma^2) (derived here, see
`theory.masking`), so `features` is vech(Y^T Y) and `output_law` is the Wishart central-limit normal
of that feature (`theory.masking.wishart_clt`), labelled exact=False. For p = 1 and for "aligned"
pairs the exact spectrum is that of two noncentral chi-square laws (`theory.masking.chi2_pair_delta`).
The calibrations (Thm 3.2, Thm 3.4) are `theory.masking.thm32_sigma` and `thm34_sigma`.
"""

from __future__ import annotations

import itertools
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from .. import theory
from ..core.validation import as_choice, as_data, as_int, as_positive, as_probability, one_setting, optional
from ..theory.gaussian_pair import GaussianLaw
from ..theory.masking import thm32_sigma, thm34_sigma, wishart_clt
from .base import Draw, Mechanism
from .noisy_release import FOCUS_DOC, Focus, NoisyRelease, as_focus


# -- Haar sampling --------------------------------------------------------------------------------
def _upper_factor(gram: np.ndarray) -> np.ndarray:
    """Upper-triangular R with R^T R = gram (batched Cholesky), the R of a QR with positive diagonal."""
    return np.swapaxes(np.linalg.cholesky(gram), -1, -2)


def haar_stiefel(k: int, n: int, p: int, rng: np.random.Generator) -> np.ndarray:
    """k Haar-distributed n x p matrices with orthonormal columns, shape (k, n, p): G R^{-1} for a
    Gaussian G = Q R with diag R > 0, i.e. the sign-corrected Q factor (Mezzadri 2007), with R from
    the Cholesky factor of G^T G (matrix products only: O(n p^2) each)."""
    G = rng.standard_normal((k, n, p))
    R = _upper_factor(np.swapaxes(G, 1, 2) @ G)
    return np.swapaxes(np.linalg.solve(np.swapaxes(R, 1, 2), np.swapaxes(G, 1, 2)), 1, 2)   # G R^{-1}


def masked(Z: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A Z for k matrices Z (k, n, p) of rank p and independent Haar A (n x n), exactly in law, as
    V R_Z: Z = Q_Z R_Z and A Q_Z is Haar on the Stiefel manifold (derived here); R_Z^T R_Z = Z^T Z."""
    R = _upper_factor(np.swapaxes(Z, 1, 2) @ Z)
    return haar_stiefel(Z.shape[0], Z.shape[1], Z.shape[2], rng) @ R


def vech_gram(samples: ArrayLike) -> np.ndarray:
    """Upper triangle (with diagonal) of Y^T Y per sample (n_samples, p(p+1)/2)."""
    samples = np.asarray(samples, dtype=float)
    gram = np.einsum("sni,snj->sij", samples, samples)
    rows, cols = np.triu_indices(samples.shape[-1])
    return gram[:, rows, cols]


def gram_error(X: ArrayLike, Y: ArrayLike, sigma: float) -> float | np.ndarray:
    """Relative Gram error ||Y^T Y - n sigma^2 I - X^T X||_F / ||X^T X||_F per release (our
    suggestion: [Masking] has no experiments beyond Table 1). Y: (n, p) or (k, n, p)."""
    X = as_data(X)
    Y = np.asarray(Y, dtype=float)
    single = Y.ndim == 2
    Y = Y[None] if single else Y
    G = X.T @ X
    err = np.linalg.norm(np.einsum("sni,snj->sij", Y, Y) - X.shape[0] * sigma**2 * np.eye(X.shape[1]) - G, axis=(1, 2))
    err = err / np.linalg.norm(G)
    return float(err[0]) if single else err


def aligned_pair(n: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """The candidate worst pair for (B)/(C) (derived here, not proven worst): all rows 0 except
    x_1 = (1 - 1/sqrt(p)) 1_p in D and x'_1 = 1_p in D' (||x_1 - x'_1|| = 1, |x_ij| <= 1)."""
    D = np.zeros((as_int("n", n), as_int("p", p)))
    D_prime = D.copy()
    D[0] = 1.0 - 1.0 / np.sqrt(p)
    D_prime[0] = 1.0
    return D, D_prime


def _check_bounded(D: np.ndarray) -> np.ndarray:
    if np.max(np.abs(D), initial=0.0) > 1.0 + 1e-12:
        raise ValueError("the masking schemes of Ding et al. (2022) need every entry in [-1, 1] (eq. 6); "
                         "rescale the data")
    return D


def _calibration(name: str, sigma: float | None, eps: float | None, delta: float | None) -> dict[str, float | None]:
    """Validated (sigma, eps, delta): an explicit sigma, or the eps and delta to calibrate it, not both."""
    params = {"sigma": optional(as_positive, "sigma", sigma), "eps": optional(as_positive, "eps", eps),
              "delta": optional(as_probability, "delta", delta)}
    one_setting(name, params, ("sigma",), ("eps", "delta"))
    return params


_CAL_DOCS = {
    "sigma": "explicit noise standard deviation, instead of eps and delta (default None)",
    "eps": "target eps of condition (5) (> 0)",
    "delta": "target delta in (0, 1)",
}


class MaskNoiseOnly(NoisyRelease):
    name = "mask-a"
    neighbor = "replace"
    summary = "Ding et al. 2022 (A): X + C, C i.i.d. N(0, sigma^2) (eq. 3); sigma by Thm 3.2 or the analytic Gaussian"
    param_docs = {**_CAL_DOCS,
                  "calibration": "'thm3.2-sufficient' (default; a calibration of the paper's condition (5), not of "
                                 "DP), 'thm3.2-necessary' or 'analytic' (exact (eps, delta)-DP Gaussian with "
                                 "sensitivity 1)",
                  "focus": FOCUS_DOC}
    calibration: str
    _noise: float

    def __init__(self, sigma: float | None = None, eps: float | None = None, delta: float | None = None,
                 calibration: str = "thm3.2-sufficient", focus: Focus | str | None = None) -> None:
        choices = ("thm3.2-sufficient", "thm3.2-necessary", "analytic")
        params: dict[str, Any] = {**_calibration(self.name, sigma, eps, delta),
                                  "calibration": as_choice("calibration", calibration, choices),
                                  "focus": as_focus(focus)}
        if params["sigma"] is not None:
            noise = params["sigma"]
        elif calibration == "analytic":
            noise = float(theory.gaussian_sigma(params["eps"], params["delta"], 1.0))
        else:
            noise = thm32_sigma(params["eps"], params["delta"], calibration.split("-")[1])
        self._set(params, _noise=noise)

    def noise_scale(self, D: np.ndarray) -> float:
        return self._noise

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        return _check_bounded(as_data(D))

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """replace: every change with ||Delta|| = 1 is equally bad (mu = 1/sigma); we move x_00 by 1
        towards the other side of 0 (stays in [-1, 1])."""
        relation = self._relation(relation)
        if relation != "replace":
            return None
        D = self._check_data(D)
        out = D.copy()
        out[0, 0] = D[0, 0] - (1.0 if D[0, 0] > 0 else -1.0)
        return 0, out


class _Masked(Mechanism):
    """Shared parts of (B), (C) and blocks: calibration, data checks, Gram features, CLT law."""

    neighbor = "replace"
    sigma: float | None
    eps: float | None
    delta: float | None

    def _blocks(self, n: int) -> list[slice]:
        return [slice(0, n)]

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        D = _check_bounded(as_data(D))
        smallest = min(b.stop - b.start for b in self._blocks(D.shape[0]))
        if smallest <= D.shape[1]:
            raise ValueError(f"{self.name} needs more rows per mask ({smallest}) than columns p = {D.shape[1]}")
        return D

    def noise_scale(self, D: np.ndarray) -> float:
        """sigma_0 of Thm 3.4 with n = the smallest mask size (n_s for blocks)."""
        if self.sigma is not None:
            return self.sigma
        assert self.eps is not None and self.delta is not None  # given when sigma is not (`_calibration`)
        smallest = min(b.stop - b.start for b in self._blocks(D.shape[0]))
        return thm34_sigma(self.eps, self.delta, smallest, D.shape[1])

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return as_data(D).shape

    def features(self, samples: np.ndarray) -> np.ndarray:
        """vech(Y_b^T Y_b) of each masked block (sufficient, derived here); one block for (B)/(C)."""
        samples = np.asarray(samples, dtype=float)
        return np.concatenate([vech_gram(samples[:, b]) for b in self._blocks(samples.shape[1])], axis=1)

    def output_law(self, D: ArrayLike) -> GaussianLaw | None:
        """Asymptotic (Wishart CLT, exact=False) normal law of `features`, block-diagonal over blocks."""
        D = self._check_data(D)
        sigma = self.noise_scale(D)
        parts = [wishart_clt(D[b].T @ D[b], b.stop - b.start, sigma) for b in self._blocks(D.shape[0])]
        mean = np.concatenate([m for m, _ in parts])
        cov = np.zeros((mean.size, mean.size))
        start = 0
        for _, c in parts:
            cov[start:start + c.shape[0], start:start + c.shape[0]] = c
            start += c.shape[0]
        return theory.GaussianLaw(mean, cov, copies=1, exact=False)

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """replace (a heuristic of ours): in the smallest block, the row of smallest norm moved
        radially outwards by up to 1 inside [-1, 1]^p (x = 0 moves along 1_p / sqrt(p)): this maximises
        the change of its squared norm, the noncentrality that drives the p = 1 and aligned cases."""
        relation = self._relation(relation)
        if relation != "replace":
            return None
        D = self._check_data(D)
        blocks = self._blocks(D.shape[0])
        block = min(blocks, key=lambda b: b.stop - b.start)
        norms = np.linalg.norm(D[block], axis=1)
        i = block.start + int(np.argmin(norms))
        x = D[i]
        v = x / np.linalg.norm(x) if np.linalg.norm(x) > 0 else np.ones(D.shape[1]) / np.sqrt(D.shape[1])
        with np.errstate(divide="ignore"):
            room = np.where(np.abs(v) > 0, (1.0 - np.abs(x)) / np.abs(v), np.inf)
        step = min(1.0, float(np.min(room)))
        out = D.copy()
        out[i] = x + step * v
        return i, out


class MaskNoiseThenRotate(_Masked):
    name = "mask-b"
    summary = "Ding et al. 2022 (B): A (X + C), A ~ Haar(O(n)) secret and fresh, sigma by Thm 3.4 (eq. 4)"
    param_docs = dict(_CAL_DOCS)

    def __init__(self, sigma: float | None = None, eps: float | None = None, delta: float | None = None) -> None:
        self._set(_calibration(self.name, sigma, eps, delta))

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        sigma = self.noise_scale(D)
        return (lambda k, rng: masked(D + sigma * rng.standard_normal((k, *D.shape)), rng)), D.shape, 2 * D.size

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        from scipy import stats

        sigma, n = self.noise_scale(D), D.shape[0]

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            return np.stack([stats.ortho_group.rvs(n, random_state=rng) @ (D + sigma * rng.standard_normal(D.shape))
                             for _ in range(k)])

        return draw, D.shape, n * n


class MaskRotateThenNoise(_Masked):
    name = "mask-c"
    summary = "Ding et al. 2022 (C): A X + C, A ~ Haar(O(n)) secret and fresh, sigma by Thm 3.4 (eq. 15)"
    param_docs = dict(_CAL_DOCS)

    def __init__(self, sigma: float | None = None, eps: float | None = None, delta: float | None = None) -> None:
        self._set(_calibration(self.name, sigma, eps, delta))

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        sigma = self.noise_scale(D)
        R = cast(np.ndarray, np.linalg.qr(D, mode="r"))     # R alone (numpy's stubs: the (Q, R) pair)
        n, p = D.shape
        # Householder QR: Q (n x p) has orthonormal columns even for rank-deficient X, so A Q is Haar

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            V = haar_stiefel(k, n, p, rng)
            return V @ R + sigma * rng.standard_normal((k, n, p))

        return draw, D.shape, 2 * D.size

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        from scipy import stats

        sigma, n = self.noise_scale(D), D.shape[0]

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            return np.stack([stats.ortho_group.rvs(n, random_state=rng) @ D + sigma * rng.standard_normal(D.shape)
                             for _ in range(k)])

        return draw, D.shape, n * n


def as_blocks(value: object) -> int | tuple[int, ...]:
    """An int k (k nearly equal blocks) or a tuple of block sizes (also "30,40" from the CLI)."""
    if isinstance(value, str):
        value = tuple(int(v) for v in value.split(",") if v.strip())
        value = value[0] if len(value) == 1 else value
    if isinstance(value, (tuple, list, np.ndarray)):
        return tuple(as_int("block size", v) for v in value)
    return as_int("blocks", value)


class MaskBlocks(_Masked):
    name = "mask-blk"
    summary = ("Ding et al. 2022 Sec. 4: diag(A_1..A_k)(X + C), independent Haar blocks; sigma by Thm 3.4 with "
               "n_s = min n_b")
    param_docs = {**_CAL_DOCS, "blocks": "number of (nearly equal, consecutive) blocks, or the list of block sizes"}
    blocks: int | tuple[int, ...]

    def __init__(self, blocks: int | tuple[int, ...] | str, sigma: float | None = None, eps: float | None = None,
                 delta: float | None = None) -> None:
        self._set({"blocks": as_blocks(blocks), **_calibration(self.name, sigma, eps, delta)})

    def _blocks(self, n: int) -> list[slice]:
        sizes = (self.blocks if isinstance(self.blocks, tuple)
                 else [len(a) for a in np.array_split(np.arange(n), self.blocks)])
        if sum(sizes) != n:
            raise ValueError(f"the block sizes {tuple(sizes)} must add up to the number of rows n = {n}")
        edges = np.concatenate([[0], np.cumsum(sizes)])
        return [slice(int(a), int(b)) for a, b in itertools.pairwise(edges)]

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        sigma, blocks = self.noise_scale(D), self._blocks(D.shape[0])

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            Z = D + sigma * rng.standard_normal((k, *D.shape))
            return np.concatenate([masked(Z[:, b], rng) for b in blocks], axis=1)

        return draw, D.shape, 2 * D.size

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        from scipy import stats

        sigma, blocks = self.noise_scale(D), self._blocks(D.shape[0])

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            out = np.empty((k, *D.shape))
            for s in range(k):
                A = np.zeros((D.shape[0], D.shape[0]))
                for b in blocks:
                    A[b, b] = stats.ortho_group.rvs(b.stop - b.start, random_state=rng)
                out[s] = A @ (D + sigma * rng.standard_normal(D.shape))
            return out

        return draw, D.shape, D.shape[0] ** 2

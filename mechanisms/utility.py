"""Utility metrics of the source papers (Lu, Magdon-Ismail, Wei & Zikas 2023, OLS-RP and NDIS).

Sketches are in this package's layout: S of shape (r, d), or a batch (n, r, d); column j of S is
the image of column j of D. Each function takes one output or a batch and returns a float or an
array with one value per output.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core.validation import as_data


def _batch(S: ArrayLike, D: np.ndarray) -> tuple[np.ndarray, bool]:
    S = np.asarray(S, dtype=float)
    single = S.ndim == 2
    S = S[None] if single else S
    if S.ndim != 3 or S.shape[-1] != D.shape[1]:
        raise ValueError(f"sketches must have shape (r, {D.shape[1]}) or (n, r, {D.shape[1]}), got {np.shape(S)}")
    return S, single


def _unbatch(values: np.ndarray, single: bool) -> float | np.ndarray:
    return float(values[0]) if single else values


def pdr(D: ArrayLike, S: ArrayLike) -> float | np.ndarray:
    """Pairwise distance ratio: mean over column pairs j < k of ||P_j - P_k|| / ||D_j - D_k||, with
    P = S / sqrt(r) (Lu et al. 2023, NDIS, Tables I, III). 1 is perfect."""
    D = as_data(D, min_cols=2)
    S, single = _batch(S, D)
    j, k = np.triu_indices(D.shape[1], 1)
    sketched = np.linalg.norm(S[:, :, j] - S[:, :, k], axis=1) / np.sqrt(S.shape[1])
    return _unbatch(np.mean(sketched / np.linalg.norm(D[:, j] - D[:, k], axis=0), axis=1), single)


def dpr(D: ArrayLike, S: ArrayLike, biased: bool = False) -> float | np.ndarray:
    """Dot product ratio: Pearson correlation of the d^2 entries of D^T D and of P^T P, P = S/sqrt(r)
    (NDIS, Tables I, III). biased=True gives the papers' variant cov_ddof1 / (std_ddof0 std_ddof0) = Pearson
    N/(N-1), N = d^2 (derived here from the papers' code), which can exceed 1 (Flight: 1.123)."""
    D = as_data(D, min_cols=2)
    S, single = _batch(S, D)
    x = (D.T @ D).reshape(-1)
    y = np.einsum("nrd,nre->nde", S, S).reshape(S.shape[0], -1)
    xc, yc = x - x.mean(), y - y.mean(axis=1, keepdims=True)
    pearson = (yc @ xc) / np.sqrt((xc @ xc) * np.einsum("ij,ij->i", yc, yc))
    return _unbatch(pearson * (x.size / (x.size - 1)) if biased else pearson, single)


def ls_error(x: ArrayLike, x_opt: ArrayLike) -> float | np.ndarray:
    """Normalised L2 error ||x - x_opt|| / ||x_opt|| of a regression output (Lu et al. 2023, NDIS, Tables II, IV);
    x is one solution (p,) or a batch (n, p)."""
    x = np.asarray(x, dtype=float)
    x_opt = np.asarray(x_opt, dtype=float).reshape(-1)
    if x.shape[-1] != x_opt.size:
        raise ValueError(f"x must have {x_opt.size} coordinates like x_opt, got shape {x.shape}")
    scale = np.linalg.norm(x_opt)
    if scale == 0:
        raise ValueError("x_opt is zero; the normalised error is undefined")
    error = np.linalg.norm(x - x_opt, axis=-1) / scale
    return float(error) if error.ndim == 0 else error


def trace_covariance(samples: ArrayLike) -> float:
    """tr Cov(M(D)) estimated from outputs (n, ...) (unbiased, ddof = 1): the utility of Lu et al. (2023, OLS-RP),
    "Var(||M(D) - f(D)||_F) ... the sum of the variance of each coordinate"."""
    samples = np.asarray(samples, dtype=float)
    if samples.ndim < 1 or samples.shape[0] < 2:
        raise ValueError("trace_covariance needs at least 2 samples")
    return float(np.sum(np.var(samples.reshape(samples.shape[0], -1), axis=0, ddof=1)))

"""Privacy formulas of Showkatbakhsh, Karakus & Diggavi (2018) [ISIT18]: additive noise (AN) and a
Gaussian projection plus noise (RP) for linear regression under mutual-information DP (MI-DP).

The privacy unit is one entry of X, |X_ij| <= 1. eps_MI is in bits. The (eps, delta) -> eps_MI
conversion and the sigma built from it are those of Lu et al. (2023) [NDIS]'s experiments, which
use [ISIT18] as a baseline. That conversion is NOT a valid (eps, delta) guarantee; it is reproduced
as printed so the auditor can measure it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core.validation import as_finite_array, as_int, as_positive, check_probability


def mi_noise_variance(eps_mi: float) -> float:
    """sigma_AN^2 = 1 / (2^{2 eps_MI} - 1), eps_MI in bits ([ISIT18] eq. 9)."""
    eps_mi = as_positive("eps_mi", eps_mi)
    return float(1.0 / np.expm1(2.0 * eps_mi * np.log(2.0)))


def rp_noise_variance(eps_mi: float, n_proj: int, f: float) -> float:
    """sigma_RP^2 = (n' / (2^{2 eps_MI} - 1) - f^2)_+ ([ISIT18] eq. 13)."""
    return float(max(as_int("n_proj", n_proj) * mi_noise_variance(eps_mi) - float(f) ** 2, 0.0))


def mi_delta(eps_mi: float, corrected: bool = False) -> float:
    """The (0, delta)-DP that eps_MI-MI-DP implies ([ISIT18] Prop. 2 / Cor. 1), delta = TV bound.

    As printed: delta = sqrt(2 / log2(e)) eps_MI. corrected=True: delta = sqrt(2 eps_MI ln 2)
    (Pinsker's inequality with eps_MI in bits; the printed form is not what Pinsker gives)."""
    eps_mi = as_positive("eps_mi", eps_mi)
    if corrected:
        return float(np.sqrt(2.0 * eps_mi * np.log(2.0)))
    return float(np.sqrt(2.0 / np.log2(np.e)) * eps_mi)


def isit18_column_bound(D: ArrayLike) -> float:
    """f(D) = min_j sqrt(sum_i D_ij^2 - max_i D_ij^2): each column's squared norm without its largest
    entry ([ISIT18] eq. 13, read column-wise as the proof of Lemma 2, eq. 22, requires; the printed
    indices and square root are swapped)."""
    D = as_finite_array(D, "D")
    squares = D**2
    return float(np.sqrt(np.min(squares.sum(axis=0) - squares.max(axis=0))))


def isit18_mi_epsilon(eps: float, delta: float) -> float:
    """The eps_MI (bits) that [NDIS]'s code derives from (eps, delta): delta0 = 2 (1 - delta) / (e^eps + 1),
    eps_MI = delta0^2 log2(e) / 2."""
    delta0 = 2.0 * (1.0 - float(check_probability(delta))) / (np.exp(float(eps)) + 1.0)
    return float(delta0**2 * np.log2(np.e) / 2.0)


def isit18_sigma(eps: float, delta: float, r: int, f: float) -> float:
    """Noise standard deviation of [ISIT18]'s RP as [NDIS] calibrates it: sqrt of `rp_noise_variance`
    at eps_MI = `isit18_mi_epsilon(eps, delta)`."""
    return float(np.sqrt(rp_noise_variance(isit18_mi_epsilon(eps, delta), r, f)))


def flip_value(x: ArrayLike) -> np.ndarray:
    """The farthest admissible new value of an entry in [-1, 1]: -sign(x) (+1 for x = 0)."""
    return np.where(np.asarray(x) > 0, -1.0, 1.0)


def entry_flip_eigenvalues(Z: np.ndarray, C: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every entry (i, j), j < columns, flipped to `flip_value`: the two eigenvalues of
    C^{-1/2} C' C^{-1/2} that differ from 1, with C' = C - z z^T + z' z'^T (derived here; they fix the
    exact spectrum of [ISIT18]'s RP release for an entry neighbour):
    eig([[1 - h, -h12], [h12, 1 + h']]), h = z^T C^-1 z, h12 = z^T C^-1 z', h' = z'^T C^-1 z'.
    Returns (lambda_1, lambda_2, t), arrays of shape (n, columns), t the change of the entry."""
    Cinv = np.linalg.inv(C)
    U = Z @ Cinv
    h = np.einsum("ij,ij->i", U, Z)[:, None]
    t = flip_value(Z[:, :columns]) - Z[:, :columns]
    h12 = h + t * U[:, :columns]
    hp = h + 2.0 * t * U[:, :columns] + t**2 * np.diag(Cinv)[None, :columns]
    half_trace = 0.5 * ((1.0 - h) + (1.0 + hp))
    det = (1.0 - h) * (1.0 + hp) + h12**2
    root = np.sqrt(np.maximum(half_trace**2 - det, 0.0))
    return half_trace + root, half_trace - root, t

"""Leverages, residual shares and OLS sensitivities of a regression dataset D = [B, b].

Notation of Lu, Magdon-Ismail, Wei & Zikas (2023, NDIS), Sec. 5: the leverage l_i of record i in B
and its residual share e_i = w_i^2 / ||w||^2, w = b - B x_opt. All come from one thin QR
factorisation B = Q R (O(n p^2)); the n x n hat matrix is never formed. The factorisation is kept
with a validated dataset (`ndis.core.validation.memo`), so every quantity of one dataset, and of the
same dataset with the same appended rows, shares a single QR.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg

from ..core.validation import as_data, as_finite_array, memo, register

_RANK_TOL = 1e-12     # smallest singular value of R relative to the largest that counts as full rank


def _factor(X: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(Q, R) of the thin QR of a validated X, checked to have full column rank."""
    n, p = X.shape
    if n <= p:
        raise ValueError(f"{name} needs more rows than columns, got {n} x {p}")
    Q, R = linalg.qr(X, mode="economic", check_finite=False)
    s = linalg.svdvals(R)
    if s[-1] <= _RANK_TOL * s[0]:
        raise ValueError(
            f"{name} is rank-deficient (condition number {s[0] / max(s[-1], 1e-300):.3g}): "
            "drop collinear or constant-duplicate columns"
        )
    return Q, R


def _qr(X: ArrayLike, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The thin QR of X, computed once per validated array."""
    X = as_data(X, name)
    return memo(X, "qr", lambda X: _factor(X, name))


def leverages(X: ArrayLike) -> np.ndarray:
    """l_i = (X (X^T X)^{-1} X^T)_ii = ||Q_i||^2 from the thin QR of X."""
    Q, _ = _qr(X, "X")
    return np.einsum("ij,ij->i", Q, Q)


def split_regression(D: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(B, b) from a regression dataset D = [B, b] (last column = label); the same two arrays for
    every call on one validated D."""
    D = as_data(D, min_cols=2)
    return memo(D, "split", lambda D: (register(D[:, :-1]), register(D[:, -1])))


def ols_fit(B: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_opt, w, Q, R): the least-squares solution, the residual vector w = b - B x_opt and the thin QR of B."""
    Q, R = _qr(B, "B")
    b = as_finite_array(b, "b").reshape(-1)
    if b.shape[0] != Q.shape[0]:
        raise ValueError(f"b has {b.shape[0]} entries but B has {Q.shape[0]} rows")
    coef = Q.T @ b
    x_opt = linalg.solve_triangular(R, coef)
    w = b - Q @ coef
    return x_opt, w, Q, R


def residual_shares(B: ArrayLike, b: ArrayLike) -> np.ndarray:
    """e_i = w_i^2 / ||w||^2, the normalised squared OLS residual of each record (Lu et al. 2023, NDIS)."""
    _, w, _, _ = ols_fit(B, b)
    total = float(w @ w)
    if total <= 1e-28 * float(np.dot(b, b)):
        raise ValueError("b lies in the column space of B (zero residual): ALS is then deterministic")
    return w**2 / total


def ols_sensitivities(B: ArrayLike, b: ArrayLike) -> np.ndarray:
    """||x_opt(D) - x_opt(D minus row i)||_2 = |w_i| ||M^{-1} v_i|| / (1 - l_i) for every row i
    (Sherman-Morrison; Lu et al. 2023, OLS-RP, Propositions 7-9); the same for the zero-out neighbour."""
    _, w, Q, R = ols_fit(B, b)
    lev = np.einsum("ij,ij->i", Q, Q)
    if np.any(lev >= 1 - 1e-12):
        raise ValueError("a row has leverage 1: removing it makes B rank-deficient")
    directions = linalg.solve_triangular(R, Q.T)          # column i = M^{-1} v_i
    return np.abs(w) * np.linalg.norm(directions, axis=0) / (1.0 - lev)


def augment(D: ArrayLike, sigma: float) -> np.ndarray:
    """[D; sigma I_d]: the public rows that M_RP, M_OLS (Lu et al. 2023, NDIS, Figs. 3-4) and Sheffet
    (2019) append; D itself when sigma == 0. One array per (validated D, sigma)."""
    D = as_data(D)
    if not sigma:
        return D
    return memo(D, ("augment", float(sigma)), lambda D: register(np.vstack([D, sigma * np.eye(D.shape[1])])))

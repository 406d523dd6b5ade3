"""Leverages, residual shares and OLS sensitivities of a regression dataset (spec §1.4, §3.3).

All from one thin QR factorisation B = Q R (O(n p^2)); the n x n hat matrix is never formed.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from ndis.core.validation import as_finite_array

_RANK_TOL = 1e-12     # smallest singular value of R relative to the largest that counts as full rank


def _qr(X: np.ndarray, name: str):
    X = as_finite_array(X, name)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows = records), got shape {X.shape}")
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


def leverages(X) -> np.ndarray:
    """l_i = (X (X^T X)^{-1} X^T)_ii = ||Q_i||^2 from the thin QR of X (spec §1.4, Fact 1)."""
    Q, _ = _qr(X, "X")
    return np.einsum("ij,ij->i", Q, Q)


def split_regression(D) -> tuple[np.ndarray, np.ndarray]:
    """(B, b) from a regression dataset D = [B, b] (last column = label)."""
    D = as_finite_array(D, "D")
    if D.ndim != 2 or D.shape[1] < 2:
        raise ValueError(f"a regression dataset D = [B, b] needs at least 2 columns, got shape {D.shape}")
    return D[:, :-1], D[:, -1]


def ols_fit(B, b):
    """(x_opt, w, Q, R): the least-squares solution, the residual vector w = b - B x_opt and the thin QR of B."""
    Q, R = _qr(B, "B")
    b = as_finite_array(b, "b").reshape(-1)
    if b.shape[0] != Q.shape[0]:
        raise ValueError(f"b has {b.shape[0]} entries but B has {Q.shape[0]} rows")
    coef = Q.T @ b
    x_opt = linalg.solve_triangular(R, coef)
    w = b - Q @ coef
    return x_opt, w, Q, R


def residual_shares(B, b) -> np.ndarray:
    """e_i = w_i^2 / ||w||^2, the normalised squared OLS residual of each record (spec §1.4, seed 004)."""
    _, w, _, _ = ols_fit(B, b)
    total = float(w @ w)
    if total <= 1e-28 * float(np.dot(b, b)):
        raise ValueError("b lies in the column space of B (zero residual): ALS is then deterministic")
    return w**2 / total


def ols_sensitivities(B, b) -> np.ndarray:
    """||x_opt(D) - x_opt(D minus row i)||_2 = |w_i| ||M^{-1} v_i|| / (1 - l_i) for every row i
    (Sherman-Morrison, seed 000 Props. 7-9, spec §3.3); the same for the zero-out neighbour."""
    _, w, Q, R = ols_fit(B, b)
    lev = np.einsum("ij,ij->i", Q, Q)
    if np.any(lev >= 1 - 1e-12):
        raise ValueError("a row has leverage 1: removing it makes B rank-deficient")
    directions = linalg.solve_triangular(R, Q.T)          # column i = M^{-1} v_i
    return np.abs(w) * np.linalg.norm(directions, axis=0) / (1.0 - lev)


def augment(D, sigma: float) -> np.ndarray:
    """[D; sigma I_d]: the public regularisation rows that M_RP / M_OLS / Sheffet append (spec §6.0)."""
    D = as_finite_array(D, "D")
    return np.vstack([D, sigma * np.eye(D.shape[1])]) if sigma else D

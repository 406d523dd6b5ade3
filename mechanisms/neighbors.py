"""Neighbouring datasets (DESIGN.md relations) and the worst row of each family of schemes.

Relations: `remove` (D minus row i; seed 004), `zero` (row i set to 0; seed 000), `replace` (row i
replaced by a given row), `entry` (one entry changed; seed 001). For every sketching scheme here the
output law depends on D only through sums over rows, so `remove` and `zero` give identical pairs
(spec §1.1).

Worst rows (spec §4.5, §5.6, §3.4), for data possibly regularised by appended sigma*I rows:
* RP/RLC: the forward spectrum increases with leverage, so the max-leverage row;
* ALS/M_OLS: under the monotonicity of phi (spec §5.6) only the Pareto frontier of (leverage,
  residual share) can be worst; the frontier row with the largest `theory.als_delta`;
* Gaussian LS: the row with the largest OLS sensitivity ||x_opt - x'_opt||.
"""

from __future__ import annotations

import numpy as np

from ndis import theory

from ndis.core.validation import as_data, as_int


def _row(D: np.ndarray, i) -> int:
    i = as_int("i", i, minimum=0)
    if i >= D.shape[0]:
        raise ValueError(f"row index i={i} is out of range for a dataset with {D.shape[0]} rows")
    return i


def remove(D, i) -> np.ndarray:
    """D' = D without row i (add/remove neighbours, seed 004)."""
    D = as_data(D)
    if D.shape[0] < 2:
        raise ValueError("cannot remove a row from a dataset with a single row")
    return np.delete(D, _row(D, i), axis=0)


def zero(D, i) -> np.ndarray:
    """D' = D with row i replaced by zeros (seed 000 Def. 1)."""
    D = as_data(D).copy()
    D[_row(D, i)] = 0.0
    return D


def replace(D, i, row) -> np.ndarray:
    """D' = D with row i replaced by `row`."""
    D = as_data(D).copy()
    row = np.asarray(row, dtype=float).reshape(-1)
    if row.shape != (D.shape[1],) or not np.all(np.isfinite(row)):
        raise ValueError(f"row must be a finite vector of length {D.shape[1]}")
    D[_row(D, i)] = row
    return D


def change_entry(D, i, j, value) -> np.ndarray:
    """D' = D with the single entry D[i, j] set to `value` (seed 001's entry-level privacy unit)."""
    D = as_data(D).copy()
    j = as_int("j", j, minimum=0)
    if j >= D.shape[1]:
        raise ValueError(f"column index j={j} is out of range for a dataset with {D.shape[1]} columns")
    if not np.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}")
    D[_row(D, i), j] = value
    return D


def neighbor(D, relation: str, i, **kwargs) -> np.ndarray:
    """The neighbour of D under `relation` at row i (`row=` for replace, `j=`, `value=` for entry)."""
    makers = {"remove": remove, "zero": zero, "replace": replace, "entry": change_entry}
    if relation not in makers:
        raise ValueError(f"relation must be one of {', '.join(makers)}; got {relation!r}")
    return makers[relation](D, i, **kwargs)


def max_leverage_row(D, sigma: float = 0.0) -> int:
    """Row of D with the largest leverage in [D; sigma I] (the worst RP/RLC row, spec §4.5)."""
    D = as_data(D)
    return int(np.argmax(theory.leverages(theory.augment(D, sigma))[: D.shape[0]]))


def leverage_residual(D, sigma: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(l_i, e_i) of the data rows of D = [B, b] in [D; sigma I] (spec §1.4: leverage in B,
    residual share w_i^2/||w||^2)."""
    D = as_data(D, min_cols=2)
    A = theory.augment(D, sigma)
    n = D.shape[0]
    return theory.leverages(A[:, :-1])[:n], theory.residual_shares(A[:, :-1], A[:, -1])[:n]


def max_als_delta_row(D, r: int, eps: float, sigma: float = 0.0) -> int:
    """Row of D = [B, b] with the largest asymptotic ALS spectrum phi_{eps,r,p}(l_i, e_i) in
    [D; sigma I] (spec §5.6), searched over the Pareto frontier of (l_i, e_i)."""
    leverage, residual = leverage_residual(D, sigma)
    front = theory.pareto_frontier(leverage, residual)
    p = np.shape(D)[1] - 1
    deltas = [float(theory.als_delta(eps, leverage[j], residual[j], r, p)) for j in front]
    return int(front[int(np.argmax(deltas))])


def max_sensitivity_row(D) -> int:
    """Row of D = [B, b] whose removal moves x_opt the most (seed 000 Props. 7-9, spec §3.3)."""
    D = as_data(D, min_cols=2)
    return int(np.argmax(theory.ols_sensitivities(D[:, :-1], D[:, -1])))


def row_pair(D, i: int, relation: str):
    """(i, D') for the removal or zero-out of row i; None for relations with no worst row."""
    if relation in ("remove", "zero"):
        return i, neighbor(D, relation, i)
    return None

"""The worst row of a dataset for each closed-form family: the removed (or zeroed) record whose
neighbouring pair has the largest spectrum.

The data may be regularised by public appended rows, [D; ridge I], which are never removed. The
scans use the monotonicity results of the papers:

* RP / RLC: the spectrum increases with the removed row's leverage (Lu, Magdon-Ismail, Wei & Zikas
  2023, NDIS, Theorem 2 and Proposition 3), so the max-leverage row is worst;
* ALS / M_OLS: the spectrum phi(l, e) of Lu et al. (2023, NDIS), Theorem 4, increases in the
  leverage l and the residual share e (assumed there, not proved; the tests check the frontier
  scan against every row), so only the Pareto frontier of {(l_i, e_i)} can hold the worst row;
* the Gaussian mechanism on x_opt: the spectrum increases with mu = ||x_opt(D) - x_opt(D')|| / sigma
  (Lu et al. 2023, NDIS, Proposition 6), so the row with the largest OLS sensitivity is worst.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core.validation import as_data
from .als import als_delta
from .leverage import augment, leverages, ols_sensitivities, residual_shares, split_regression


def data_leverages(D: ArrayLike, ridge: float = 0.0) -> np.ndarray:
    """Leverages of the n data rows of [D; ridge I]."""
    D = as_data(D)
    return leverages(augment(D, ridge))[: D.shape[0]]


def max_leverage_row(D: ArrayLike, ridge: float = 0.0) -> int:
    """The data row with the largest leverage in [D; ridge I]: the worst RP / RLC row."""
    return int(np.argmax(data_leverages(D, ridge)))


def leverage_residual(D: ArrayLike, ridge: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(l_i, e_i) of the n data rows of D = [B, b] in [D; ridge I]: leverage in B and residual share
    w_i^2 / ||w||^2 (Lu et al. 2023, NDIS, Sec. 5)."""
    D = as_data(D, min_cols=2)
    B, b = split_regression(augment(D, ridge))
    n = D.shape[0]
    return leverages(B)[:n], residual_shares(B, b)[:n]


def pareto_frontier(leverage: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """Indices of the rows not dominated in both leverage and residual share (O(n log n))."""
    order = np.lexsort((-residual, -leverage))            # by leverage, then residual, descending
    best = np.maximum.accumulate(residual[order])
    keep = np.concatenate([[True], residual[order][1:] > best[:-1]])
    return np.sort(order[keep])


def max_als_delta_row(D: ArrayLike, r: int, eps: float, ridge: float = 0.0) -> int:
    """The data row of D = [B, b] with the largest ALS spectrum phi_{eps,r,p}(l_i, e_i) in
    [D; ridge I], searched over the Pareto frontier of (l_i, e_i)."""
    leverage, residual = leverage_residual(D, ridge)
    front = pareto_frontier(leverage, residual)
    p = np.shape(D)[1] - 1
    deltas = als_delta(float(eps), leverage[front], residual[front], r, p)
    return int(front[int(np.argmax(deltas))])


def max_sensitivity_row(D: ArrayLike) -> int:
    """The row of D = [B, b] whose removal moves x_opt the most (Lu et al. 2023, OLS-RP,
    Propositions 7-9)."""
    return int(np.argmax(ols_sensitivities(*split_regression(D))))

"""The black-box choice of the neighbouring row: candidate rows and the selection among them.

The neighbour relations themselves (remove, zero, replace, entry), their construction and their
check are defined once in `ndis.core.neighbors`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ... import theory
from ...core import neighbors as relations
from ...core.validation import as_data


def candidate_rows(D, n_candidates: int = 6, seed=0) -> list[int]:
    """Rows to screen black-box: largest leverage, largest norm, and random rows (distinct).

    Leverage = diagonal of the hat matrix of D, from `theory.leverages`: the random projection and
    approximate least squares spectra grow with the removed row's leverage (NDIS; Lu,
    Magdon-Ismail, Wei & Zikas 2023), so their worst row is typically a high-leverage one.
    """
    D = as_data(D)
    k = max(n_candidates // 3, 1)
    order = list(np.argsort(-theory.leverages(D), kind="stable")[:k])
    order += list(np.argsort(-np.linalg.norm(D, axis=1), kind="stable")[:k])
    rng = np.random.default_rng(seed)
    order += list(rng.choice(D.shape[0], size=min(D.shape[0], n_candidates), replace=False))
    rows = []
    for r in map(int, order):
        if r not in rows:
            rows.append(r)
    return rows[:n_candidates]


def select(mechanism, D, relation: str = "remove", rows="worst",
           pilot: Callable[[int, np.ndarray], float] | None = None, n_candidates: int = 6, seed=0):
    """(row, D', how) for a neighbour spec: a given row, a random one, or the worst one.

    "worst" uses the mechanism's `worst_neighbor(D, relation)` when it provides one; otherwise
    each candidate row (`candidate_rows`) is scored by `pilot(row, D')`, a measure of how
    distinguishable M(D) and M(D') are (`audit` passes a small audit's mean delta-hat over the eps
    grid, on seed streams disjoint from its own, so that the choice of the row does not depend on
    the samples that later bound delta), and the row with the largest score wins. With
    n_candidates=1 there is no screen: the largest-leverage row is taken (how = "max-leverage").
    """
    D = as_data(D)
    if isinstance(rows, (int, np.integer)):
        return int(rows), relations.make(D, relation, int(rows)), "given"
    if rows == "random":
        row = int(np.random.default_rng(seed).integers(D.shape[0]))
        return row, relations.make(D, relation, row), "random"
    if rows not in (None, "worst"):
        raise ValueError(f"unknown row choice {rows!r}; allowed: {', '.join(relations.ROW_CHOICES)}")
    worst = getattr(mechanism, "worst_neighbor", None)
    if callable(worst):
        found = worst(D, relation)
        if found is not None:
            row, D_prime = found
            return int(row), np.asarray(D_prime, dtype=float), "mechanism"
    if relation not in relations.ROW_RELATIONS:
        raise ValueError(f"a black-box screen needs a relation that defines D' from a row: "
                         f"{', '.join(relations.ROW_RELATIONS)}, got {relation!r}")
    if n_candidates == 1:
        row = candidate_rows(D, 1, seed)[0]
        return row, relations.make(D, relation, row), "max-leverage"
    if pilot is None:
        raise ValueError("the mechanism has no worst_neighbor: choosing the worst row black-box needs a pilot")
    best = None
    for row in candidate_rows(D, n_candidates, seed):
        D_prime = relations.make(D, relation, row)
        score = float(pilot(row, D_prime))
        if best is None or score > best[0]:
            best = (score, row, D_prime)
    return best[1], best[2], "screen"

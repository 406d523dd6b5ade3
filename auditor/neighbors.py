"""Neighbouring datasets: the named relations, their validation, and the choice of the row.

Relations (DESIGN.md conventions): `remove` (D' = D minus row i), `zero` (row i replaced by zeros),
`replace` (row i replaced by another row), `entry` (one entry changed). A neighbour spec string is
RELATION or RELATION:ROWS with ROWS = `worst`, a row index, or `random`.
"""

from __future__ import annotations

import numpy as np

RELATIONS = ("remove", "zero", "replace", "entry")
ROW_CHOICES = ("worst", "random", "<index>")


def parse(spec: str) -> tuple[str, str | int | None]:
    """"remove:worst" -> ("remove", "worst"); "zero:12" -> ("zero", 12); "replace" -> ("replace", None)."""
    relation, _, rows = str(spec).partition(":")
    if relation not in RELATIONS:
        raise ValueError(f"unknown neighbour relation {relation!r}; allowed: {', '.join(RELATIONS)}")
    if rows == "":
        return relation, None
    if rows in ("worst", "random"):
        return relation, rows
    try:
        return relation, int(rows)
    except ValueError:
        raise ValueError(f"unknown row choice {rows!r} in {spec!r}; allowed: {', '.join(ROW_CHOICES)}") from None


def _matrix(D, name):
    D = np.asarray(D, dtype=float)
    if D.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (rows = records), got shape {D.shape}")
    return D


def check(D, D_prime, relation: str) -> int:
    """Row index i such that (D, D') are neighbours under `relation`; ValueError otherwise."""
    if relation not in RELATIONS:
        raise ValueError(f"unknown neighbour relation {relation!r}; allowed: {', '.join(RELATIONS)}")
    D, D_prime = _matrix(D, "D"), _matrix(D_prime, "D_prime")
    if relation == "remove":
        if D_prime.shape != (D.shape[0] - 1, D.shape[1]):
            raise ValueError(f"D and D' are not neighbours under 'remove': D' must have shape "
                             f"{(D.shape[0] - 1, D.shape[1])} (one row fewer than D), got {D_prime.shape}")
        differs = np.flatnonzero(np.any(D[:-1] != D_prime, axis=1))
        i = int(differs[0]) if differs.size else D.shape[0] - 1
        if not np.array_equal(D[i + 1:], D_prime[i:]):
            raise ValueError("D and D' are not neighbours under 'remove': D' is not D with one row deleted")
        return i
    if D_prime.shape != D.shape:
        raise ValueError(f"D and D' are not neighbours under {relation!r}: shapes {D.shape} and {D_prime.shape} differ")
    rows = np.flatnonzero(np.any(D != D_prime, axis=1))
    if rows.size != 1:
        raise ValueError(f"D and D' are not neighbours under {relation!r}: they differ in {rows.size} rows, not 1")
    i = int(rows[0])
    if relation == "zero" and np.any(D_prime[i] != 0):
        raise ValueError(f"D and D' are not neighbours under 'zero': row {i} of D' is not all zeros")
    if relation == "entry" and np.count_nonzero(D[i] != D_prime[i]) != 1:
        raise ValueError(f"D and D' are not neighbours under 'entry': row {i} differs in more than one entry")
    return i


def make(D, relation: str, row: int, replacement=None) -> np.ndarray:
    """The neighbour D' of D under `relation` at `row` (`ndis.core.neighbors.make`)."""
    from ndis.core.neighbors import make

    return make(D, relation, row, replacement)


def candidate_rows(D, n_candidates: int = 6, seed=0) -> list[int]:
    """Rows to screen black-box: largest leverage, largest norm, and random rows (distinct).

    Leverage = diagonal of the hat matrix of D, from `theory.leverages` (seed 004: the worst row of
    RP/ALS is a high-leverage row).
    """
    from ndis import theory

    D = _matrix(D, "D")
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


def select(mechanism, D, relation: str = "remove", rows="worst", audit_options: dict | None = None,
           n_candidates: int = 6, n_pilot: int = 20_000, seed=0):
    """(row, D', how) for a neighbour spec: a given row, a random one, or the worst one.

    "worst" uses the mechanism's `worst_neighbor(D, relation)` when it provides one; otherwise
    each candidate row (`candidate_rows`) gets a small pilot audit (`n_pilot` samples per side,
    quadratic scorer) and the row with the largest mean delta-hat over the eps grid wins. `audit`
    passes a `seed` whose streams are disjoint from its own, so the choice of the row does not
    depend on the samples that later bound delta.
    """
    D = _matrix(D, "D")
    if isinstance(rows, (int, np.integer)):
        return int(rows), make(D, relation, int(rows)), "given"
    if rows == "random":
        row = int(np.random.default_rng(seed).integers(D.shape[0]))
        return row, make(D, relation, row), "random"
    if rows not in (None, "worst"):
        raise ValueError(f"unknown row choice {rows!r}; allowed: {', '.join(ROW_CHOICES)}")
    worst = getattr(mechanism, "worst_neighbor", None)
    if callable(worst):
        found = worst(D, relation)
        if found is not None:
            row, D_prime = found
            return int(row), np.asarray(D_prime, dtype=float), "mechanism"
    if relation not in ("remove", "zero"):
        raise ValueError(f"a black-box screen needs a relation that defines D' from a row: remove or zero, got {relation!r}")
    from .api import audit

    options = dict(audit_options or {})
    options.update(n_samples=n_pilot, scorer="quadratic", claimed=None, progress=False)
    best = None
    for row in candidate_rows(D, n_candidates, seed):
        D_prime = make(D, relation, row)
        report = audit(mechanism, D, D_prime, seed=seed, **options)
        score = float(np.mean(report.delta))
        if best is None or score > best[0]:
            best = (score, row, D_prime)
    return best[1], best[2], "screen"

"""Neighbouring datasets: the relations, their construction, their check, and neighbour specs.

A dataset D is an (n, d) float array whose rows are records. The relations:

* ``remove``  -- D' = D without row i (add/remove neighbours; Lu et al. 2025);
* ``zero``    -- row i replaced by zeros (Lu et al. 2024, Definition 1);
* ``replace`` -- row i replaced by another row (replace-one neighbours);
* ``entry``   -- one entry D[i, j] changed (Showkatbakhsh, Karakus & Diggavi 2018).

A neighbour spec string is RELATION or RELATION:ROWS with ROWS = ``worst``, ``random`` or a row
index. This module is the one definition of the relations; every other module refers to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .validation import as_data, as_int, register

#: Every neighbour relation, in the order they are documented.
RELATIONS = ("remove", "zero", "replace", "entry")
#: Relations whose neighbour is defined by a row index alone (no replacement value needed).
ROW_RELATIONS = ("remove", "zero")
#: The row choices of a neighbour spec.
ROW_CHOICES = ("worst", "random", "<index>")
#: The one default neighbour of an audit given D alone (`ndis.audit(mech, D)`, `ndis audit --data D`):
#: remove the row whose removal the mechanism says, or a black-box screen finds, is most visible.
#: With D' given, the default is instead the mechanism's declared relation (checked), else none.
DEFAULT_NEIGHBOR = "remove:worst"


def check_relation(relation: str) -> str:
    """`relation` itself when it is one of RELATIONS; ValueError listing them otherwise."""
    if relation not in RELATIONS:
        raise ValueError(f"unknown neighbour relation {relation!r}; allowed: {', '.join(RELATIONS)}")
    return relation


@dataclass(frozen=True)
class Neighbor:
    """A neighbour spec: the `relation`, the `row` (an index, "worst", "random", or None: none given)
    and, for ``replace`` and ``entry`` at a row index, the `replacement` that makes D' from D (the new
    row, or (column, value)). `Neighbor.parse` reads the string form RELATION or RELATION:ROWS."""

    relation: str
    row: int | str | None = None
    replacement: Any = None

    def __post_init__(self) -> None:
        check_relation(self.relation)
        if not (self.row is None or self.row in ("worst", "random")
                or isinstance(self.row, (int, np.integer)) and not isinstance(self.row, bool) and self.row >= 0):
            raise ValueError(f"unknown row choice {self.row!r}; allowed: {', '.join(ROW_CHOICES)}")
        if self.replacement is not None and (self.relation in ROW_RELATIONS or not isinstance(self.row, (int, np.integer))):
            raise ValueError("a replacement goes with the relations replace (the new row) and entry ((column, value)) at "
                             "a row index, e.g. Neighbor('replace', 0, replacement=[...])")

    @classmethod
    def parse(cls, spec: str | Neighbor) -> Neighbor:
        """"remove:worst" -> Neighbor("remove", "worst"); "zero:12" -> Neighbor("zero", 12); a Neighbor itself."""
        if isinstance(spec, Neighbor):
            return spec
        relation, _, rows = str(spec).partition(":")
        check_relation(relation)
        if rows in ("", "worst", "random"):
            return cls(relation, rows or None)
        try:
            return cls(relation, int(rows))
        except ValueError:
            raise ValueError(f"unknown row choice {rows!r} in {spec!r}; allowed: {', '.join(ROW_CHOICES)}") from None

    def __str__(self) -> str:
        return self.relation if self.row is None else f"{self.relation}:{self.row}"


def _row(D: np.ndarray, i: int) -> int:
    i = as_int("i", i, minimum=0)
    if i >= D.shape[0]:
        raise ValueError(f"row index i={i} is out of range for a dataset with {D.shape[0]} rows")
    return i


def make(D: ArrayLike, relation: str, row: int, replacement: Any = None) -> np.ndarray:
    """The neighbour D' of D under `relation` at `row`.

    `replacement` is the new row (a vector of length d) for ``replace`` and the pair
    (column, value) for ``entry``; ``remove`` and ``zero`` take none. D' is finite by construction
    and returned as a validated read-only dataset (see `validation.as_data`).
    """
    check_relation(relation)
    D = as_data(D)
    i = _row(D, row)
    if relation in ROW_RELATIONS and replacement is not None:
        raise ValueError(f"the {relation!r} relation takes no replacement")
    if relation == "remove":
        if D.shape[0] < 2:
            raise ValueError("cannot remove a row from a dataset with a single row")
        return register(np.delete(D, i, axis=0))
    D_prime = D.copy()
    if relation == "zero":
        D_prime[i] = 0.0
    elif relation == "replace":
        if replacement is None:
            raise ValueError("the 'replace' relation needs a replacement row")
        new = np.asarray(replacement, dtype=float).reshape(-1)
        if new.shape != (D.shape[1],) or not np.all(np.isfinite(new)):
            raise ValueError(f"the replacement row must be a finite vector of length {D.shape[1]}")
        D_prime[i] = new
    else:
        if replacement is None:
            raise ValueError("the 'entry' relation needs replacement=(column, value)")
        column, value = replacement
        j = as_int("column", column, minimum=0)
        if j >= D.shape[1]:
            raise ValueError(f"column index {j} is out of range for a dataset with {D.shape[1]} columns")
        if not np.isfinite(value):
            raise ValueError(f"the new entry must be finite, got {value!r}")
        D_prime[i, j] = value
    return register(D_prime)


def check(D: ArrayLike, D_prime: ArrayLike, relation: str) -> int:
    """Row index i such that (D, D') are neighbours under `relation`; ValueError otherwise."""
    check_relation(relation)
    D, D_prime = as_data(D), as_data(D_prime, "D_prime")
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

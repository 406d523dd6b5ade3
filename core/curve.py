"""A privacy curve in both directions: delta_{M(D)||M(D')}(eps) and delta_{M(D')||M(D)}(eps).

"forward" is the ordered pair (M(D), M(D')), "reverse" is (M(D'), M(D)); the curve of the pair is
their pointwise maximum. Theory spectra, audit estimates and their bounds are all of this type,
so that no caller ever reports one direction as "the" delta.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

DIRECTIONS = ("forward", "reverse", "max")


def check_direction(which: str) -> str:
    """`which` itself when it is one of DIRECTIONS; ValueError listing them otherwise."""
    if which not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {which!r}")
    return which


#: A printed table of an eps grid shows every row up to this many; a longer grid about 40 of them.
TABLE_ROWS = 60


def table_rows(eps: ArrayLike, keep: Iterable[float] = (), every: int | None = None,
               where: str = "the CSV") -> tuple[np.ndarray, str | None]:
    """(indices, note) of the grid rows a printed table shows: every row of a grid of at most
    `TABLE_ROWS` (note None); else (or every `every`-th row when given) evenly spaced rows, the last
    one and the rows of the eps values in `keep` (e.g. the claimed eps), with a note saying which rows
    were left out, why, and `where` every row is."""
    eps = np.asarray(eps, dtype=float)
    n = eps.size
    if every is None and n <= TABLE_ROWS:
        return np.arange(n), None
    step = every if every is not None else -(-(n - 1) // 40)
    if int(step) != step or step < 1:
        raise ValueError(f"every must be an integer >= 1, got {every!r}")
    step = int(step)
    kept = [int(i) for value in keep for i in np.flatnonzero(eps == value)]
    rows = np.unique(np.concatenate([np.arange(0, n, step), [n - 1], kept])).astype(int)
    if rows.size == n:
        return rows, None
    extra = [f"eps = {eps[i]:g}" for i in sorted({n - 1, *kept}) if i % step]
    why = f"every={every} was asked for" if every is not None else f"more than {TABLE_ROWS} rows are too many to print"
    shown = ", ".join([f"one in {step} from the first"] + extra)
    return rows, f"{rows.size} of {n:,} grid rows shown ({shown}): {why}; every row is in {where}"


@dataclass(frozen=True)
class Curve:
    """delta on an eps grid for both orders of a neighbouring pair."""

    eps: np.ndarray
    forward: np.ndarray
    reverse: np.ndarray

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Subclasses (theory.Spectrum, ...) keep the short repr: set in the class body, it stops
        @dataclass from generating a field dump."""
        super().__init_subclass__(**kwargs)
        if "__repr__" not in cls.__dict__:
            cls.__repr__ = Curve.__repr__  # type: ignore[method-assign]  # on purpose: the short repr

    def __post_init__(self) -> None:
        for name in ("eps", "forward", "reverse"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=float))
        if not self.eps.shape == self.forward.shape == self.reverse.shape:
            raise ValueError(f"a curve needs one forward and one reverse delta per eps; got shapes "
                             f"{self.eps.shape}, {self.forward.shape}, {self.reverse.shape}")

    @property
    def delta(self) -> np.ndarray:
        """max(forward, reverse): the curve of the unordered pair."""
        return np.maximum(self.forward, self.reverse)

    def direction(self, which: str) -> np.ndarray:
        """"forward", "reverse" or "max"."""
        return self.delta if check_direction(which) == "max" else getattr(self, which)

    def _larger(self) -> str:
        """The direction with the larger delta at more grid points ("forward", "reverse" or "equal")."""
        balance = np.count_nonzero(self.forward > self.reverse) - np.count_nonzero(self.reverse > self.forward)
        return "forward" if balance > 0 else "reverse" if balance < 0 else "equal"

    def __repr__(self) -> str:
        if not self.eps.size:
            return f"{type(self).__name__}(no eps)"
        i = int(np.argmax(self.delta))
        return (f"{type(self).__name__}({self.eps.size} eps in [{self.eps.min():g}, {self.eps.max():g}], "
                f"max delta {self.delta[i]:.4g} at eps {self.eps[i]:g}, larger direction: {self._larger()})")

    def _repr_html_(self) -> str:
        """At most 11 evenly spaced rows of eps, forward, reverse and delta."""
        rows = np.unique(np.linspace(0, self.eps.size - 1, min(11, self.eps.size)).round().astype(int))
        cells = "".join(f"<tr><td>{self.eps[i]:g}</td><td>{self.forward[i]:.4g}</td><td>{self.reverse[i]:.4g}</td>"
                        f"<td>{self.delta[i]:.4g}</td></tr>" for i in rows)
        return (f"<table><caption>{html.escape(repr(self))}</caption><thead><tr><th>eps</th><th>forward</th>"
                f"<th>reverse</th><th>delta</th></tr></thead><tbody>{cells}</tbody></table>")

"""A privacy curve in both directions: delta_{M(D)||M(D')}(eps) and delta_{M(D')||M(D)}(eps).

"forward" is the ordered pair (M(D), M(D')), "reverse" is (M(D'), M(D)); the curve of the pair is
their pointwise maximum. Theory spectra, audit estimates and their bounds are all of this type,
so that no caller ever reports one direction as "the" delta.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DIRECTIONS = ("forward", "reverse", "max")


def check_direction(which: str) -> str:
    """`which` itself when it is one of DIRECTIONS; ValueError listing them otherwise."""
    if which not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}, got {which!r}")
    return which


@dataclass(frozen=True)
class Curve:
    """delta on an eps grid for both orders of a neighbouring pair."""

    eps: np.ndarray
    forward: np.ndarray
    reverse: np.ndarray

    def __post_init__(self):
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

"""The worst neighbouring pair as the mechanisms' `worst_neighbor` methods return it.

The relations themselves are defined once, in `ndis.core.neighbors`; the worst rows of the
closed-form families are found by `ndis.theory.worst_rows`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..core.neighbors import ROW_RELATIONS, make


def row_pair(D: ArrayLike, i: int, relation: str) -> tuple[int, np.ndarray] | None:
    """(i, D') for the removal or zero-out of row i; None for relations with no worst row."""
    if relation in ROW_RELATIONS:
        return i, make(D, relation, i)
    return None

"""The input of a one-run audit: one score per canary and the secret coin flips that included it.

A canary's score is any number that is larger, on average, when the canary was included (a
canary-aligned gradient sum, minus a loss, a likelihood ratio). Every check below raises ValueError
with one line saying what was wrong and what is allowed; nothing is dropped or repaired silently.
"""

from __future__ import annotations

import numpy as np


def _some(indices: np.ndarray) -> str:
    """The first five canary indices, and "..." when there are more."""
    return ", ".join(map(str, indices[:5])) + (", ..." if indices.size > 5 else "")


def canary_scores(scores, included) -> tuple[np.ndarray, np.ndarray]:
    """(scores as float64, included as bool), both 1-D of the same length m >= 2, every score finite,
    `included` only 0/1 or booleans, both groups non-empty and the scores not all equal."""
    try:
        values = np.asarray(scores, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("scores must be numbers, one per canary") from None
    flips = np.asarray(included)
    if values.ndim != 1 or flips.ndim != 1:
        raise ValueError(f"scores and included must be 1-D (one entry per canary), got shapes {values.shape} "
                         f"and {flips.shape}")
    if values.size != flips.size:
        raise ValueError(f"included has {flips.size} entries but there are {values.size} scores: give one coin flip "
                         "(1 = included in training, 0 = left out) per canary, in the order of the scores")
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ValueError(f"{bad.size} of the {values.size} canary scores are NaN or infinite (canaries {_some(bad)}): "
                         "score every canary with a finite number; nothing was audited")
    if flips.dtype != bool:
        try:
            numeric = flips.astype(float)
        except (TypeError, ValueError):
            raise ValueError("included must hold booleans or 0/1, one per canary") from None
        bad = np.flatnonzero((numeric != 0) & (numeric != 1))
        if bad.size:
            raise ValueError(f"included must hold booleans or 0/1 (1 = included in training); {bad.size} of the "
                             f"{flips.size} entries do not (canaries {_some(bad)})")
        flips = numeric == 1
    if flips.all() or not flips.any():
        raise ValueError(f"all {flips.size} canaries are {'included' if flips.all() else 'left out'}: a one-run audit "
                         "compares included with left-out canaries (draw each by a fair coin flip)")
    if np.ptp(values) == 0:
        raise ValueError(f"all {values.size} canary scores equal {values[0]:g}: the scores do not depend on the "
                         "canaries (does training insert the included canaries, and does the score read the model "
                         "at each canary?)")
    return values, flips

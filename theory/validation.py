"""Input checks and the scipy.stats-style scalar-in / scalar-out convention, in one place."""

from __future__ import annotations

import numpy as np


def as_finite_array(value, name: str) -> np.ndarray:
    """float64 array of `value`; ValueError naming `name` if it holds NaN or inf."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric: {error}") from None
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return array


def scalar_or_array(result, like):
    """A Python float when `like` is a scalar, else an ndarray (scipy.stats convention)."""
    if np.ndim(like) == 0:
        return float(np.asarray(result).reshape(-1)[0])
    return np.asarray(result, dtype=float)


def check_probability(delta, name: str = "delta") -> np.ndarray:
    """delta as an array, each value strictly inside (0, 1)."""
    delta = as_finite_array(delta, name)
    if np.any((delta <= 0) | (delta >= 1)):
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {delta}")
    return delta

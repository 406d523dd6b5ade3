"""Feature maps: post-processing of mechanism outputs before scoring.

Any measurable map of the output can only lower delta (post-processing), so a feature map never
makes a lower bound invalid; a good one makes the classifier's job low-dimensional. For Gaussian
random projection Z = G D the law depends on D only through D^T D, so the Gram matrix Z^T Z is a
sufficient statistic: by the NDIS theorem (Lu, Magdon-Ismail, Wei & Zikas 2023) the rows of Z are
i.i.d. N(0, D^T D), and the Gram matrix of i.i.d. Gaussian rows is sufficient for their covariance.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...mechanisms.rp import gram_features

NAMES = ("auto", "flatten", "gram", "float-grid")


def flatten(samples: np.ndarray) -> np.ndarray:
    """(n, ...) -> (n, prod(...)), float64."""
    samples = np.asarray(samples, dtype=float)
    return samples.reshape(samples.shape[0], -1)


def gram(samples: np.ndarray) -> np.ndarray:
    """Upper triangle (with diagonal) of Z^T Z for each sample Z of shape (r, d): (n, d(d+1)/2).

    The map of `mechanisms.rp.gram_features`; a vector output (n, d) is treated as r = 1, i.e. the
    upper triangle of x x^T.
    """
    samples = np.asarray(samples, dtype=float)
    if samples.ndim == 2:
        samples = samples[:, None, :]
    if samples.ndim != 3:
        raise ValueError(f"gram features need outputs of shape (n, r, d) or (n, d), got {samples.shape}")
    values = gram_features(samples)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"gram features overflow float64: the products of outputs of magnitude up to "
                         f"{np.max(np.abs(samples)):.3g} exceed 1.8e308; use features='flatten' (scale-invariant "
                         "scorers need no rescaling) or rescale the outputs")
    return values


def float_grid(samples: np.ndarray) -> np.ndarray:
    """Where each output coordinate x sits on the floating-point grid: its binary exponent e
    (x = m 2^e, 1/2 <= |m| < 1) and the number of trailing zero bits of its 53-bit significand
    (53 for x = 0): (n, 2k) small integers.

    A textbook floating-point mechanism x = q + noise reaches a set of doubles that depends on q
    (Mironov 2012): e.g. with q = 1 and q' = 2, Laplace noise gives values in (1/2, 1) of every
    last bit from q, but only even multiples of 2^-53 from q' (2 + n is exact there), an event of
    probability 0 under one input, hence infinite privacy loss. Rounded or snapped outputs (a
    mechanism that releases a multiple of a fixed granularity) show no such difference. The columns
    are discrete, for the density scorer (`auditor.scoring.density`)."""
    x = flatten(samples)
    mantissa, exponent = np.frexp(x)
    significand = np.abs(mantissa * 2.0**53).astype(np.int64)  # exact: |m| < 1 has 53 significant bits
    low = significand & -significand                           # the lowest set bit
    zeros = np.where(significand == 0, 53, np.log2(np.maximum(low, 1)).round())
    return np.concatenate([exponent.astype(float), zeros], axis=1)


def resolve(features, mechanism=None) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    """(name, map) for a `features` argument: "auto", "flatten", "gram", "float-grid" or a callable.

    "auto" uses the mechanism's own `features(samples)` when it has one, else `flatten`.
    """
    if callable(features):
        return getattr(features, "__name__", "callable"), _checked(features)
    if features == "flatten":
        return "flatten", flatten
    if features == "gram":
        return "gram", gram
    if features == "float-grid":
        return "float-grid", float_grid
    if features == "auto":
        own = getattr(mechanism, "features", None)
        if callable(own):
            return "mechanism", _checked(own)
        return "flatten", flatten
    raise ValueError(f"unknown features {features!r}; allowed: {', '.join(NAMES)} or a callable")


def _checked(function):
    """Wrap a user feature map so that its output is validated as a finite (n, k) float array."""

    def apply(samples: np.ndarray) -> np.ndarray:
        values = np.asarray(function(samples), dtype=float)
        n = len(samples)
        if values.ndim == 1 and values.size == n:
            values = values[:, None]
        if values.ndim != 2 or values.shape[0] != n:
            raise ValueError(f"a feature map must return an array of shape (n, k) = ({n}, k), got {values.shape}")
        if not np.all(np.isfinite(values)):
            raise ValueError("the feature map returned NaN or infinite values")
        return values

    apply.__name__ = getattr(function, "__name__", "features")
    return apply

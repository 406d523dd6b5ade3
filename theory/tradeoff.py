"""The f-DP view of a privacy profile: its trade-off curve beta(alpha), the convex conjugate of delta(eps).

For a test of Q = M(D') against P = M(D) that rejects Q on an event S, the type I error is
alpha = Q(S) and the type II error beta = 1 - P(S); since P(S) - e^eps Q(S) <= delta_{P||Q}(eps) for
every eps, beta >= 1 - delta_{P||Q}(eps) - e^eps alpha, and the Neyman-Pearson lemma makes the
supremum over eps of these lines the trade-off function T(Q, P) (Dong, Roth & Su 2022, Proposition
2.12 and its proof). Negative eps turn into the reverse curve by the duality
delta_{P||Q}(-eps) = 1 - e^-eps + e^-eps delta_{Q||P}(eps) (derived here), so, over eps >= 0,

    T(Q, P)(alpha) = max(0, sup [1 - delta_{P||Q}(eps) - e^eps alpha], sup e^-eps [1 - delta_{Q||P}(eps) - alpha]).

"forward" is this T(M(D'), M(D)), the convention of the audit's trade-off view
(`ndis.auditor.statistics.gdp.tradeoff_view`: type I = M(D')(S), type II = 1 - M(D)(S)); "reverse"
swaps the pair; "max" takes delta = the larger of the two directions in both terms: Dong, Roth &
Su's Proposition 2.12 for the curve of the unordered pair, a trade-off function below both orders'.
Both lines are concave along e^eps (delta_{P||Q} is convex in e^eps, and e^-eps (1 - delta_{Q||P}(eps))
is the perspective of a concave function), so unimodal in eps: the supremum is located on a grid of
eps and refined by golden-section search between the grid's neighbours of the best point.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ..core.curve import check_direction
from ..core.validation import as_finite_array
from .profile import PrivacyProfile
from .spectrum import Spectrum

#: Default type I errors: log-spaced near 0, where trade-off curves bend, and evenly spaced.
TYPE_ONE = np.unique(np.concatenate([[0.0], np.logspace(-6, 0, 61), np.linspace(0.0, 1.0, 101)]))


def tradeoff(spectrum: PrivacyProfile | Spectrum, type_one: ArrayLike | None = None, direction: str = "max",
             points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """(alpha, beta): the trade-off curve of a privacy profile (`GaussianPair`, `Spectrum`, the results of
    `compose` and `poisson_subsample`, ...) at type I errors alpha (default `TYPE_ONE`), from delta on
    `points` eps in [0, eps(1e-12)] (module docstring)."""
    profile = spectrum.profile() if isinstance(spectrum, Spectrum) else spectrum
    if not isinstance(profile, PrivacyProfile):
        raise TypeError(f"tradeoff takes a privacy profile or a Spectrum, got {type(spectrum).__name__}")
    alpha = TYPE_ONE if type_one is None else as_finite_array(type_one, "type_one").reshape(-1)
    if np.any((alpha < 0) | (alpha > 1)):
        raise ValueError("type I errors must lie in [0, 1]")
    direction = check_direction(direction)
    end = float(PrivacyProfile.epsilon(profile, 1e-12, "max"))     # a grid's end: no stated eps, no warning
    end = end if np.isfinite(end) and end > 0 else 50.0
    eps = np.linspace(0.0, end, int(points))
    step = eps[1] - eps[0]
    other = "max" if direction == "max" else "reverse" if direction == "forward" else "forward"

    def first(e: np.ndarray) -> float | np.ndarray:
        return profile.delta(e, direction)

    def second(e: np.ndarray) -> float | np.ndarray:
        return profile.delta(e, other)

    lines = (lambda e, a: 1.0 - first(e) - np.exp(e) * a,                 # both concave along e^eps,
             lambda e, a: np.exp(-e) * (1.0 - second(e) - a))             # so unimodal in eps
    beta = np.zeros(alpha.size)
    for line in lines:
        values = line(eps[None, :], alpha[:, None])
        best = eps[np.argmax(values, axis=1)]
        refined = _golden(line, np.maximum(best - step, 0.0), np.minimum(best + step, end), alpha)
        beta = np.maximum(beta, np.maximum(values.max(axis=1), refined))
    return alpha, np.clip(beta, 0.0, 1.0 - alpha)


def _golden(line: Callable[[np.ndarray, np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray, alpha: np.ndarray,
            iterations: int = 25) -> np.ndarray:
    """max of the unimodal line(., alpha) on [lo, hi] per alpha, by golden-section search (vectorised)."""
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = lo.copy(), hi.copy()
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = line(c, alpha), line(d, alpha)
    for _ in range(iterations):
        left = fc >= fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c_new, d_new = b - ratio * (b - a), a + ratio * (b - a)
        probe = np.where(left, c_new, d_new)
        value = line(probe, alpha)
        fd, fc = np.where(left, fc, value), np.where(left, value, fd)
        c, d = np.where(left, c_new, d), np.where(left, c, d_new)
    return np.maximum(fc, fd)

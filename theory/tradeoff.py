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
The supremum is taken over a grid of eps, so beta is a lower bound of the exact curve (a valid,
weaker f-DP statement), off by O(grid step^2).
"""

from __future__ import annotations

import numpy as np

from .profile import PrivacyProfile
from .spectrum import Spectrum
from ndis.core.curve import check_direction
from ndis.core.validation import as_finite_array

#: Default type I errors: log-spaced near 0, where trade-off curves bend, and evenly spaced.
TYPE_ONE = np.unique(np.concatenate([[0.0], np.logspace(-6, 0, 61), np.linspace(0.0, 1.0, 101)]))


def tradeoff(spectrum, type_one=None, direction: str = "max", points: int = 4000):
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
    end = float(profile.epsilon(1e-12, "max"))
    end = end if np.isfinite(end) and end > 0 else 50.0
    eps = np.linspace(0.0, end, int(points))
    forward, reverse = profile.delta(eps, "forward"), profile.delta(eps, "reverse")
    if direction == "max":
        first = second = np.maximum(forward, reverse)
    else:
        first, second = (forward, reverse) if direction == "forward" else (reverse, forward)
    a = alpha[:, None]
    lines = np.maximum(1.0 - first[None, :] - np.exp(eps)[None, :] * a,
                       np.exp(-eps)[None, :] * (1.0 - second[None, :] - a))
    beta = np.clip(lines.max(axis=1), 0.0, 1.0 - alpha)
    return alpha, beta

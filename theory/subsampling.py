"""Privacy amplification by Poisson subsampling of any privacy profile, both neighbour directions.

Run M on a Poisson subsample of the rows (each kept with probability q). If (P, Q) = (M(D), M(D'))
is the worst pair of M for D' = D minus a record, the subsampled mechanism's worst pairs are
(Zhu, Dong & Wang 2022, Theorem 11; Balle, Barthe & Gaboardi 2018, Theorem 8 for the remove side):

    REMOVE (forward):  (q P + (1 - q) Q, Q),        ADD (reverse):  (Q, q P + (1 - q) Q),

the ADD side NOT being the REMOVE pair with P and Q swapped. Their profiles follow from those of
(P, Q) in closed form (derived here, as in Balle, Barthe & Gaboardi 2018, Theorem 8, "advanced joint
convexity"): with x = e^eps,

    forward(eps) = q delta_{P||Q}(ln(1 + (x - 1)/q))                 for x > 1 - q, else 1 - x,
    reverse(eps) = c delta_{Q||P}(ln(q x / c)),  c = 1 - (1 - q) x,  for x < 1/(1 - q), else 0,

evaluated in log space (log1p / expm1), so the subsampled curve is as exact as the curve it comes
from, at every eps. Validity: the amplification holds when (P, Q) is the worst pair of M over every
pair of neighbouring datasets, which the subsample may be (a curve calibrated for all datasets, e.g.
with a norm bound and a ridge, `theory.als.ols_sigma`). A `Spectrum` of one dataset D does not
qualify on its own: a subsample has fewer rows, so its rows' leverages are larger than in D.

Sampling without replacement (m of n rows, gamma = m / n) under the replace-one relation: the two
subsampled outputs are mixtures (1 - gamma) mu0 + gamma mu1 and (1 - gamma) mu0 + gamma mu1' sharing the
part mu0 in which the replaced record was not drawn, and advanced joint convexity bounds each direction
by the same expression as the REMOVE side above (Balle, Barthe & Gaboardi 2018, Section 5, sampling
without replacement with the substitution relation):

    delta'(eps) <= gamma delta(ln(1 + (e^eps - 1)/gamma))      in each direction, with that direction's delta,

where delta is M's profile over replace-one neighbours. This is an upper bound, attained by some
mechanisms with that profile but not necessarily by M: `WithoutReplacement` is pessimistic, never
exact. (dp_accounting's PLD accountant has no sampling without replacement; its RDP accountant has one
for the Gaussian mechanism.)
"""

from __future__ import annotations

import numpy as np

from .profile import PrivacyProfile
from .spectrum import Spectrum


class PoissonSubsampled(PrivacyProfile):
    """The profile of M run on a Poisson subsample with rate q, from the profile `base` of M: forward =
    REMOVE = (q P + (1 - q) Q || Q), reverse = ADD = (Q || q P + (1 - q) Q) (module docstring)."""

    def __init__(self, base: PrivacyProfile, q: float, add: bool = False) -> None:
        self.base, self.q, self.add = base, float(q), bool(add)
        self.fast = base.fast

    def __repr__(self) -> str:
        return f"PoissonSubsampled(q={self.q:g}, {'ADD' if self.add else 'REMOVE'} direction of {self.base!r})"

    def _reversed(self) -> PoissonSubsampled:
        return PoissonSubsampled(self.base, self.q, not self.add)

    def _log_delta(self, eps: np.ndarray) -> np.ndarray:
        if not self.add:
            return _amplified_log_delta(self.base, self.q, eps)
        q, out = self.q, np.full(eps.shape, -np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            inside = eps < -np.log1p(-q)
            log_c = np.log(-np.expm1(eps[inside] + np.log1p(-q)))
            out[inside] = log_c + self.base.reverse()._log_delta(np.log(q) + eps[inside] - log_c)
        return out


class WithoutReplacement(PrivacyProfile):
    """An upper bound of the profile of M run on m of n rows drawn without replacement (replace-one
    neighbours), gamma = m / n: each direction is gamma delta(ln(1 + (e^eps - 1)/gamma)) of `base`'s same
    direction (module docstring). Pessimistic, not exact."""

    def __init__(self, base: PrivacyProfile, gamma: float) -> None:
        self.base, self.gamma = base, float(gamma)
        self.fast = base.fast

    def __repr__(self) -> str:
        return f"WithoutReplacement(gamma={self.gamma:g}, bound from {self.base!r})"

    def _reversed(self) -> WithoutReplacement:
        return WithoutReplacement(self.base.reverse(), self.gamma)

    def _log_delta(self, eps: np.ndarray) -> np.ndarray:
        return _amplified_log_delta(self.base, self.gamma, eps)


def _amplified_log_delta(base: PrivacyProfile, q: float, eps: np.ndarray) -> np.ndarray:
    """ln of q delta_base(ln(1 + (e^eps - 1)/q)) for e^eps > 1 - q, else ln(1 - e^eps) (module
    docstring), in log space: for eps > 1, ln(q + e^eps - 1) = eps + ln(1 - (1 - q) e^-eps)."""
    out = np.empty(eps.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = eps > np.log1p(-q)
        out[~inside] = np.log(-np.expm1(eps[~inside]))
        e = eps[inside]
        inner = np.where(e > 1.0, e + np.log1p(-(1.0 - q) * np.exp(-np.abs(e))),
                         np.log(q + np.expm1(np.minimum(e, 1.0)))) - np.log(q)
        out[inside] = np.log(q) + base._log_delta(inner)
    return out


def poisson_subsample(spectrum: PrivacyProfile | Spectrum, q: float) -> PoissonSubsampled:
    """The profile of a mechanism run on a Poisson subsample (each row kept with probability q) from the
    profile of the mechanism itself (a `GaussianPair`, the result of `compose`, any
    `theory.profile.PrivacyProfile`, or a `Spectrum`: its worst candidate row). See the module docstring
    for the two directions and when the amplification is valid."""
    q = float(q)
    if not 0 < q <= 1:
        raise ValueError(f"the sampling probability q must lie in (0, 1], got {q}")
    return PoissonSubsampled(_profile_of(spectrum, "poisson_subsample"), q)


def _profile_of(spectrum: object, name: str) -> PrivacyProfile:
    """The privacy profile a subsampling function amplifies: a `Spectrum`'s worst row, or the profile."""
    base = spectrum.profile() if isinstance(spectrum, Spectrum) else spectrum
    if not isinstance(base, PrivacyProfile):
        raise TypeError(f"{name} takes a privacy profile (GaussianPair, Spectrum, the result of compose, ...), "
                        f"got {type(spectrum).__name__}")
    return base


def subsample_without_replacement(spectrum: PrivacyProfile | Spectrum, m: int, n: int) -> WithoutReplacement:
    """An upper bound of the profile of a mechanism run on m of n rows drawn without replacement, from
    the mechanism's own profile over replace-one neighbours (a `GaussianPair`, the result of `compose`,
    any `theory.profile.PrivacyProfile`, or a `Spectrum`: its worst candidate row); Balle, Barthe &
    Gaboardi (2018), Section 5 (module docstring). The same validity condition as `poisson_subsample`."""
    if isinstance(m, bool) or isinstance(n, bool) or int(m) != m or int(n) != n or not 0 < m <= n:
        raise ValueError(f"draw m of n rows with integers 0 < m <= n, got m = {m}, n = {n}")
    return WithoutReplacement(_profile_of(spectrum, "subsample_without_replacement"), int(m) / int(n))

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
Sampling without replacement is not provided: dp_accounting's PLD accountant, which the compositions
here hand off to, supports Poisson sampling only.
"""

from __future__ import annotations

import numpy as np

from .profile import PrivacyProfile
from .spectrum import Spectrum


class PoissonSubsampled(PrivacyProfile):
    """The profile of M run on a Poisson subsample with rate q, from the profile `base` of M: forward =
    REMOVE = (q P + (1 - q) Q || Q), reverse = ADD = (Q || q P + (1 - q) Q) (module docstring)."""

    def __init__(self, base: PrivacyProfile, q: float, add: bool = False):
        self.base, self.q, self.add = base, float(q), bool(add)
        self.fast = base.fast

    def __repr__(self) -> str:
        return f"PoissonSubsampled(q={self.q:g}, {'ADD' if self.add else 'REMOVE'} direction of {self.base!r})"

    def _reversed(self) -> "PoissonSubsampled":
        return PoissonSubsampled(self.base, self.q, not self.add)

    def _log_delta(self, eps):
        q = self.q
        out = np.full(eps.shape, -np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            if not self.add:
                inside = eps > np.log1p(-q)
                out[~inside] = np.log(-np.expm1(eps[~inside]))
                e = eps[inside]
                big = e > 1.0      # e^eps would overflow: ln(q + e^eps - 1) = eps + ln(1 - (1 - q) e^-eps)
                inner = np.where(big, e + np.log1p(-(1.0 - q) * np.exp(-np.abs(e))),
                                 np.log(q + np.expm1(np.minimum(e, 1.0)))) - np.log(q)
                out[inside] = np.log(q) + self.base._log_delta(inner)
            else:
                inside = eps < -np.log1p(-q)
                log_c = np.log(-np.expm1(eps[inside] + np.log1p(-q)))
                out[inside] = log_c + self.base.reverse()._log_delta(np.log(q) + eps[inside] - log_c)
        return out


def poisson_subsample(spectrum, q: float) -> PoissonSubsampled:
    """The profile of a mechanism run on a Poisson subsample (each row kept with probability q) from the
    profile of the mechanism itself (a `GaussianPair`, the result of `compose`, any
    `theory.profile.PrivacyProfile`, or a `Spectrum`: its worst candidate row). See the module docstring
    for the two directions and when the amplification is valid."""
    q = float(q)
    if not 0 < q <= 1:
        raise ValueError(f"the sampling probability q must lie in (0, 1], got {q}")
    base = spectrum.profile() if isinstance(spectrum, Spectrum) else spectrum
    if not isinstance(base, PrivacyProfile):
        raise TypeError(f"poisson_subsample takes a privacy profile (GaussianPair, Spectrum, the result of "
                        f"compose, ...), got {type(spectrum).__name__}")
    return PoissonSubsampled(base, q)

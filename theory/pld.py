"""dp_accounting's privacy-loss distributions and events read back as privacy profiles.

A dp_accounting PrivacyLossDistribution holds the privacy loss of the REMOVE adjacency, (M(D), M(D'))
with D' = D minus one record, and of the ADD adjacency, the pair reversed; `PLDProfile` reads them as
the "forward" and "reverse" directions of a `theory.profile.PrivacyProfile`, so that a PLD (from
`to_pld`, `compose`, or any accountant) gives delta(eps) and eps(delta) like every exact curve. Its
values are those of the discrete distribution itself (dp_accounting's `get_delta_for_epsilon` and
`get_epsilon_for_delta`); `eps_error` states how far its eps(delta) may exceed the exact curve it was
built from (`theory.profile`), when known. `PLDProfile.epsilon` warns (`DiscretizationWarning`, once
per profile) when that stated error exceeds max(10% of the eps it returns, 0.01): 10% because exact
accounting is worth about that much (the DP-SGD run of docs/theory.md, q = 0.01, sigma = 1, 1000 steps:
RDP accountant 2.101 against 1.828 through PLDs, 15% more), so a larger stated error could hide all of
it; 0.01 because an error below it changes e^eps, the bound on the likelihood ratio, by at most 1%,
which keeps the grid's own step (1e-4 for one part) from warning at eps near 0. The stated error is a
worst case, count x the grid step: 10^5 subsampled Gaussian steps (q = 0.01, sigma = 1) state 10 at
eps 25.57 (delta = 1e-5), while a grid ten times finer moves eps by 1.3e-4 only.

dp_accounting DpEvents become parts of a composition (`event_parts`): a GaussianDpEvent (sensitivity
1, noise multiplier sigma) is the exact pair N(1, sigma^2) vs N(0, sigma^2), and its Poisson-sampled
form the exact `theory.subsampling.poisson_subsample` of it; Laplace events (plain or Poisson-sampled)
become dp_accounting's own connect-the-dots PLDs (`from_laplace_mechanism`, eps_error = the
discretization); Composed and SelfComposed events are unpacked. dp_accounting is imported on first use
(`theory.profile.dp_accounting_modules`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .gaussian_pair import GaussianPair
from .profile import PrivacyProfile, dp_accounting_modules
from .subsampling import poisson_subsample

#: A PLD's eps warns when its stated eps_error exceeds max(STATED_SHARE x eps, STATED_FLOOR) (module docstring).
STATED_SHARE, STATED_FLOOR = 0.1, 0.01


class DiscretizationWarning(UserWarning):
    """A privacy-loss distribution's stated eps_error is a large part of the eps read from it."""


def is_dp_accounting(value: object) -> bool:
    """True for an object of the dp_accounting package (an event, a PLD, an accountant)."""
    return (type(value).__module__ or "").startswith("dp_accounting")


def pmfs(pld: Any) -> tuple[Any, Any]:
    """(REMOVE pmf, ADD pmf) of a PrivacyLossDistribution (dp_accounting keeps them as attributes
    without public accessors; a symmetric PLD holds the same pmf twice)."""
    try:
        return pld._pmf_remove, pld._pmf_add
    except AttributeError:
        raise TypeError(f"not a dp_accounting PrivacyLossDistribution: {type(pld).__name__}") from None


class _DiscreteLoss:
    """One direction of a PLD as arrays: masses `probs` at the losses h (lower + i), and `infinity`.
    delta(eps) = infinity + sum_{l > eps} p_l (1 - e^{eps - l}) = infinity + U_k - e^eps L_k with the
    suffix sums U_k = sum_{i >= k} p_i, L_k = sum_{i >= k} p_i e^{-l_i} (L in log space), k the first
    loss above eps; vectorised over eps (dp_accounting loops over the losses in Python)."""

    def __init__(self, pmf: Any) -> None:
        dense = pmf.to_dense_pmf()
        self.h = float(dense._discretization)
        self.losses = self.h * (int(dense._lower_loss) + np.arange(len(dense._probs)))
        probs = np.maximum(np.asarray(dense._probs, dtype=float), 0.0)     # FFT rounding leaves -1e-17s
        self.infinity = float(dense._infinity_mass)
        self.upper = np.append(np.cumsum(probs[::-1])[::-1], 0.0)
        with np.errstate(divide="ignore"):
            weights = np.log(probs) - self.losses
        self.log_lower = np.append(np.logaddexp.accumulate(weights[::-1])[::-1], -np.inf)

    def delta(self, eps: np.ndarray) -> np.ndarray:
        k = np.searchsorted(self.losses, eps, side="right")
        with np.errstate(over="ignore"):
            value = self.infinity + self.upper[k] - np.exp(eps + self.log_lower[k])
        return np.clip(value, 0.0, 1.0)

    def epsilon(self, target: np.ndarray) -> np.ndarray:
        """Smallest eps >= 0 with delta(eps) <= target, exactly for the discrete law: on the segment
        below the first loss l_j where delta <= target, delta = infinity + U_j - e^eps L_j."""
        at_losses = self.delta(self.losses)
        out = np.full(target.shape, np.inf)
        for i, goal in enumerate(target):
            if self.infinity > goal:
                continue
            j = int(np.argmax(at_losses <= goal)) if np.any(at_losses <= goal) else self.losses.size
            with np.errstate(divide="ignore", invalid="ignore"):
                eps = np.log(self.infinity + self.upper[j] - goal) - self.log_lower[j]
            out[i] = max(float(eps) if np.isfinite(eps) else float(self.losses[min(j, self.losses.size - 1)]), 0.0)
        return out


class PLDProfile(PrivacyProfile):
    """A dp_accounting PrivacyLossDistribution as a privacy profile: forward = its REMOVE privacy loss,
    reverse = its ADD one. `eps_error`: how much its eps(delta) may exceed the exact curve it was built
    from (0 when unknown, e.g. a PLD made elsewhere); `pld` is the PrivacyLossDistribution itself."""

    fast = True

    def __init__(self, pld: Any, eps_error: float = 0.0, label: str = "dp_accounting PLD",
                 _sides: tuple[_DiscreteLoss, ...] | None = None) -> None:
        self.pld, self.eps_error, self.label = pld, float(eps_error), label
        self._sides = _sides if _sides is not None else tuple(_DiscreteLoss(pmf) for pmf in pmfs(pld))
        self.discretization = self._sides[0].h

    def __repr__(self) -> str:
        return f"PLDProfile({self.label}, discretization {self.discretization:g}, eps_error {self.eps_error:.3g})"

    def _reversed(self) -> PLDProfile:
        _, pld_module, _ = dp_accounting_modules()
        remove, add = pmfs(self.pld)
        flipped = pld_module.PrivacyLossDistribution(add, remove)
        return PLDProfile(flipped, self.eps_error, f"{self.label}, reversed", self._sides[::-1])

    def _log_delta(self, eps: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self._sides[0].delta(eps))

    def epsilon(self, delta: ArrayLike, direction: str = "forward") -> float | np.ndarray:
        """`PrivacyProfile.epsilon`, with a `DiscretizationWarning` (once per profile) when `eps_error`
        exceeds max(STATED_SHARE x eps, STATED_FLOOR) for an eps returned (module docstring)."""
        eps = super().epsilon(delta, direction)
        values = np.asarray(eps, dtype=float).reshape(-1)
        loose = np.isfinite(values) & (self.eps_error > np.maximum(STATED_SHARE * values, STATED_FLOOR))
        if np.any(loose) and not self.__dict__.get("_warned"):
            self._warned = True
            value = float(values[np.argmax(loose)])
            finer = self.discretization * max(STATED_SHARE * value, STATED_FLOOR) / self.eps_error
            finer = float(np.floor(finer / 10.0 ** np.floor(np.log10(finer))) * 10.0 ** np.floor(np.log10(finer)))
            warnings.warn(f"eps = {value:.4g} may exceed the exact eps by up to the stated eps_error "
                          f"{self.eps_error:.3g} ({self.eps_error / max(value, 1e-300):.0%} of it): compose with a "
                          f"finer discretization (e.g. discretization={finer:.1g}; the stated error is the "
                          f"number of composed steps times the grid step {self.discretization:g})",
                          DiscretizationWarning, stacklevel=2)
        return eps

    def _epsilon(self, goal: np.ndarray) -> np.ndarray:
        return self._sides[0].epsilon(np.exp(goal))

    def _pld(self, discretization: float, tail: float, *options: Any) -> tuple[Any, float]:
        """The PLD itself on its own grid (its eps_error as the gap), else re-discretized."""
        if np.isclose(float(discretization), self.discretization, rtol=1e-12, atol=0.0):
            return self.pld, self.eps_error
        pld, gap = super()._pld(discretization, tail, *options)
        return pld, gap + self.eps_error


def from_pld(pld: Any, eps_error: float = 0.0, label: str = "dp_accounting PLD") -> PLDProfile:
    """A dp_accounting PrivacyLossDistribution (from `to_pld`, `compose` or any accountant) as a privacy
    profile: our curve of the PLD, both directions."""
    return PLDProfile(pld, eps_error, label)


def event_parts(event: Any, discretization: float) -> list[tuple[PrivacyProfile, int]]:
    """[(profile, count)] of a dp_accounting DpEvent, or of a PrivacyLossDistribution (module docstring)."""
    dp, pld_module, _ = dp_accounting_modules()
    if isinstance(event, pld_module.PrivacyLossDistribution):
        return [(PLDProfile(event), 1)]
    if isinstance(event, dp.NoOpDpEvent):
        return []
    if isinstance(event, dp.SelfComposedDpEvent):
        return [(profile, count * int(event.count)) for profile, count in event_parts(event.event, discretization)]
    if isinstance(event, dp.ComposedDpEvent):
        return [part for inner in event.events for part in event_parts(inner, discretization)]
    if isinstance(event, dp.GaussianDpEvent):
        return [(_gaussian(event.noise_multiplier), 1)]
    if isinstance(event, dp.LaplaceDpEvent):
        return [(_laplace(event.noise_multiplier, 1.0, discretization), 1)]
    if isinstance(event, dp.PoissonSampledDpEvent):
        q = float(event.sampling_probability)
        if isinstance(event.event, dp.GaussianDpEvent):
            return [(poisson_subsample(_gaussian(event.event.noise_multiplier), q), 1)]
        if isinstance(event.event, dp.LaplaceDpEvent):
            return [(_laplace(event.event.noise_multiplier, q, discretization), 1)]
    raise ValueError(f"cannot compose the dp_accounting event {event!r}: supported are GaussianDpEvent, "
                     "LaplaceDpEvent, PoissonSampledDpEvent of either, SelfComposedDpEvent, ComposedDpEvent, "
                     "NoOpDpEvent and PrivacyLossDistribution")


def _gaussian(noise_multiplier: float) -> GaussianPair:
    sigma = float(noise_multiplier)
    if not sigma > 0:
        raise ValueError(f"a GaussianDpEvent needs a noise multiplier > 0 (0 is not private), got {sigma}")
    return GaussianPair([1.0 / sigma], [[1.0]], [0.0], [[1.0]])


def _laplace(noise_multiplier: float, q: float, discretization: float) -> PLDProfile:
    _, pld_module, _ = dp_accounting_modules()
    scale = float(noise_multiplier)
    if not scale > 0:
        raise ValueError(f"a LaplaceDpEvent needs a noise multiplier > 0 (0 is not private), got {scale}")
    pld = pld_module.from_laplace_mechanism(scale, value_discretization_interval=discretization, sampling_prob=q)
    label = f"Laplace, scale {scale:g}" + (f", q = {q:g}" if q < 1 else "")
    return PLDProfile(pld, eps_error=discretization, label=label)

"""Privacy profiles evaluable at every eps, and their hand-off to dp_accounting.

The privacy profile of an ordered pair of output laws (P, Q) = (M(D), M(D')) is
delta_{P||Q}(eps) = sup_S P(S) - e^eps Q(S) for every real eps (Balle, Barthe & Gaboardi 2020). With
D' = D minus one record, "forward" is (M(D), M(D')), dp_accounting's REMOVE adjacency, and "reverse"
is the reversed pair, its ADD adjacency; "max" is the larger of the two. `PrivacyProfile` is what the
exact curves of `theory` share (`GaussianPair`, the compositions of `theory.composition`, the
subsampled curves of `theory.subsampling`, PLDs read back by `theory.pld`): ln delta in each
direction at any eps, eps(delta), the curve on a grid, and `to_pld()`.

`to_pld()` is a dp_accounting PrivacyLossDistribution whose delta is >= the exact one at every eps
(pessimistic), built by connect-the-dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022,
Algorithm 1): the discrete privacy loss on support points eps_1 < ... < eps_n (multiples of the
discretization h) whose delta equals the exact delta at each eps_i and is the chord in e^eps between
them, which lies above the exact curve since every privacy profile is convex in e^eps. The mass
delta(eps_n) <= `tail` goes to the infinite loss. Between neighbouring support points eps_i < eps <
eps_{i+1} the chord is at most delta(eps_i), so delta(eps) <= delta_PLD(eps) <= delta(eps - g), g the
largest gap between support points: eps(delta) read from the PLD exceeds the exact one by at most g
(and by at most k g after composing k such PLDs, since composition preserves this order; Zhu, Dong
& Wang 2022, Theorem 10). The support is the whole grid of multiples of h when that has at most
`max_points` points (g = h), otherwise points chosen so that ln delta changes by at most `log_step`
between neighbours and no gap exceeds `max_gap` (g <= max_gap; the chord's relative error is then
about (log_step^2 + log_step max_gap) / 8). The lower end of the support, -(eps_rev(tail) + c) with
c = 0.01 and eps_rev(tail) where the reverse curve falls to `tail`, holds all but 101 tail of the
loss's mass (derived here: P(L <= t) = E_Q[e^{-L'}; L' >= -t] for the reverse loss L' = -L under Q,
and Q(L' >= s) <= delta_rev(s - c) / (1 - e^-c)); that mass, and the losses' lowest mass up to `tail`,
are moved up onto the support, pessimistically. The exact deltas at the support points are accurate
to ~1e-12 relative: the PLD is pessimistic up to that.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from ..core.curve import Curve, check_direction
from ..core.validation import as_eps, as_eps_grid, as_finite_array, scalar_or_array

#: The install hint of every function that needs dp_accounting (an optional dependency).
ACCOUNTING_HINT = 'dp_accounting is needed for privacy-loss distributions: pip install "ndis[accounting]"'

_COARSE = 400            # coarse intervals per half-line when the support is chosen adaptively
_MARGIN = 0.01           # the support reaches 0.01 below -eps_rev(tail): P(L <= there) <= 101 tail
_PRUNE_STEP = 32         # coarse spacing (in grid points) of the WorstCase pruning


def dp_accounting_modules() -> tuple[ModuleType, ModuleType, ModuleType]:
    """(dp_accounting, privacy_loss_distribution, pld_pmf), imported on first use; ImportError naming
    the extra to install when dp_accounting is missing."""
    try:
        import dp_accounting
        from dp_accounting.pld import pld_pmf, privacy_loss_distribution
    except ImportError as error:
        raise ImportError(ACCOUNTING_HINT) from error
    return dp_accounting, privacy_loss_distribution, pld_pmf


class PrivacyProfile:
    """delta_{P||Q}(eps) of an ordered pair at any eps, and that of the reversed pair.

    Subclasses give `_log_delta(flat eps) -> flat ln delta` (forward) and `_reversed()`. `fast`
    says whether evaluating ln delta on 10^6 eps is cheap (closed forms), which lets `to_pld` use
    every multiple of the discretization as a support point."""

    fast = False
    _reverse: PrivacyProfile  # set by `reverse`

    def _log_delta(self, eps: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _reversed(self) -> PrivacyProfile:
        raise NotImplementedError

    def reverse(self) -> PrivacyProfile:
        """The reversed pair Q||P (built once)."""
        if self.__dict__.get("_reverse") is None:
            self._reverse = self._reversed()
            self._reverse.__dict__["_reverse"] = self
        return self._reverse

    def _oriented(self, direction: str) -> PrivacyProfile:
        return self if check_direction(direction) == "forward" else self.reverse()

    def log_delta(self, eps: ArrayLike, direction: str = "forward") -> float | np.ndarray:
        """ln delta(eps) in the given direction ("forward", "reverse" or "max"), no underflow; -inf
        where delta = 0. Any shape and order of eps."""
        eps_arr = as_eps(eps)
        flat = eps_arr.reshape(-1)
        if check_direction(direction) == "max":
            out = np.maximum(self._log_delta(flat), self.reverse()._log_delta(flat))
        else:
            out = self._oriented(direction)._log_delta(flat)
        return scalar_or_array(np.asarray(out, dtype=float).reshape(eps_arr.shape), eps)

    def delta(self, eps: ArrayLike, direction: str = "forward") -> float | np.ndarray:
        """delta(eps) = sup_S P(S) - e^eps Q(S) in the given direction, in [0, 1]."""
        return scalar_or_array(np.exp(np.asarray(self.log_delta(eps, direction), dtype=float)), eps)

    def curve(self, eps: ArrayLike) -> Curve:
        """Both directions on an eps grid (`core.curve.Curve`; its `delta` is their maximum)."""
        grid = as_eps_grid(eps)
        return Curve(grid, np.asarray(self.delta(grid, "forward")), np.asarray(self.delta(grid, "reverse")))

    def epsilon(self, delta: ArrayLike, direction: str = "forward") -> float | np.ndarray:
        """Smallest eps >= 0 with delta(eps) <= delta in the given direction (inf if none, or if beyond
        2^27); for "max" the larger of the two directions' answers."""
        target = as_finite_array(delta, "delta")
        if np.any((target <= 0) | (target >= 1)):
            raise ValueError("delta must lie in (0, 1)")
        goal = np.log(target.reshape(-1))
        if check_direction(direction) == "max":
            out = np.maximum(self._epsilon(goal), self.reverse()._epsilon(goal))
        else:
            out = self._oriented(direction)._epsilon(goal)
        return scalar_or_array(out.reshape(target.shape), delta)

    def _epsilon(self, goal: np.ndarray) -> np.ndarray:
        """eps(delta) for ln delta targets `goal` (flat): a batched ladder of eps brackets every target,
        then `_solve`."""
        out = np.full(goal.size, np.inf)
        live = np.flatnonzero(np.isfinite(goal))
        ladder = np.append(0.0, np.exp2(np.arange(-2, 6)))
        values = self._log_delta(ladder)
        if np.any(values[-1] > goal[live]):
            rungs = np.exp2(np.arange(6, 28))
            ladder, values = np.append(ladder, rungs), np.append(values, self._log_delta(rungs))
        first = np.argmax(values[None, :] <= goal[live, None], axis=1)
        found = values[first] <= goal[live]
        out[live[found & (first == 0)]] = 0.0
        inner = live[found & (first > 0)]
        if inner.size:
            k = first[found & (first > 0)]
            out[inner] = self._solve(goal[inner], ladder[k - 1], ladder[k], values[k - 1], values[k])
        return out

    def _solve(self, goal: np.ndarray, lo: np.ndarray, hi: np.ndarray, f_lo: np.ndarray,
               f_hi: np.ndarray) -> np.ndarray:
        """ln delta(eps) = goal inside [lo, hi], for many goals at once: Newton steps with a forward-
        difference slope (one batched evaluation of ln delta at eps and eps + h per step), bisection
        where a step leaves the bracket. The slope is good to ~1e-6, so a step below 1e-7 + 1e-8 eps
        leaves an error below 1e-13 + 1e-14 eps and is the last."""
        with np.errstate(invalid="ignore", divide="ignore"):
            x = np.where(np.isfinite(f_hi), lo + (hi - lo) * (f_lo - goal) / (f_lo - f_hi), 0.5 * (lo + hi))
        x = np.clip(x, lo, hi)
        active = np.arange(goal.size)
        for _ in range(100):
            h = 1e-7 * np.maximum(x[active], 1e-3)
            both = self._log_delta(np.concatenate([x[active], x[active] + h]))
            value, ahead = both[:active.size] - goal[active], both[active.size:] - goal[active]
            lo[active] = np.where(value > 0, x[active], lo[active])
            hi[active] = np.where(value <= 0, x[active], hi[active])
            with np.errstate(invalid="ignore", divide="ignore"):
                step = value * h / (ahead - value)
            newton = np.isfinite(step) & np.isfinite(value)
            done = newton & (np.abs(step) <= 1e-7 + 1e-8 * x[active]) | (hi[active] - lo[active] <= 1e-13)
            new = x[active] - np.where(newton, step, 0.0)
            bisect = ~newton | ~((new > lo[active]) & (new < hi[active]))
            x[active] = np.where(done, np.where(newton, new, hi[active]),
                                 np.where(bisect, 0.5 * (lo[active] + hi[active]), new))
            active = active[~done]
            if active.size == 0:
                break
        return x

    # -- hand-off to dp_accounting ----------------------------------------------------------------
    def to_pld(self, discretization: float = 1e-4, tail: float = 1e-20, max_points: int = 20_000,
               log_step: float = 0.005, max_gap: float = 1e-3) -> Any:
        """A pessimistic dp_accounting PrivacyLossDistribution of this profile (REMOVE = forward, ADD =
        reverse), by connect-the-dots on the exact curve; see the module docstring for its error."""
        return self._pld(discretization, tail, max_points, log_step, max_gap)[0]

    def _pld(self, discretization: float, tail: float, max_points: int = 20_000, log_step: float = 0.005,
             max_gap: float = 1e-3) -> tuple[Any, float]:
        """(PLD, g): `to_pld` and the largest gap g between support points (both directions)."""
        _, pld_module, pld_pmf = dp_accounting_modules()
        h = _positive("discretization", discretization)
        if not 0 < tail < 1e-3:
            raise ValueError(f"tail must lie in (0, 1e-3), got {tail}")
        forward, reverse = self, self.reverse()
        reach = {id(p): _reach(p, tail) for p in (forward, reverse)}
        pmfs, gap = [], 0.0
        for first, second in ((forward, reverse), (reverse, forward)):
            rounded = _support(first, second, reach, h, max_points, log_step, max_gap, self.fast or first.fast)
            deltas = np.minimum.accumulate(np.exp(first._log_delta(rounded * h)))
            gap = max(gap, float(np.max(np.diff(rounded), initial=0)) * h)
            probs = np.zeros(rounded[-1] - rounded[0] + 1)
            probs[rounded - rounded[0]] = _connect_dots(rounded * h, deltas)
            # the lowest losses, of total mass <= tail, move up onto the first loss kept (pessimistic)
            cut = min(int(np.searchsorted(np.cumsum(probs), tail, side="right")), probs.size - 1)
            probs[cut] += probs[:cut].sum()
            last = probs.size - int(np.argmax(probs[::-1] > 0)) if np.any(probs > 0) else cut + 1
            pmfs.append(pld_pmf.DensePLDPmf(h, int(rounded[0]) + cut, probs[cut:max(last, cut + 1)],
                                            float(deltas[-1]), True))
        return pld_module.PrivacyLossDistribution(pmfs[0], pmfs[1]), gap


def _connect_dots(eps: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """Masses at the support points eps_1 < ... < eps_n of the discrete privacy loss whose delta is the
    chord in e^eps through (eps_i, delta_i), and 1 at e^eps = 0 (Doroshenko et al. 2022, Algorithm 1):
    p_i = x_i (S_{i-1} - S_i), S_i = (delta_i - delta_{i+1}) / (x_{i+1} - x_i) the Q-mass above eps_i,
    S_0 = (1 - delta_1) / x_1, S_n = 0; the rest, delta_n, is the mass of the infinite loss. Negative
    masses (rounding) are set to 0, which only raises delta."""
    step = np.diff(eps)
    drop = -np.diff(deltas)                                   # delta_i - delta_{i+1} >= 0
    below = np.concatenate([[1.0 - deltas[0]], drop / -np.expm1(-step)])    # x_i S_{i-1}
    above = np.concatenate([drop / np.expm1(step), [0.0]])                  # x_i S_i
    return np.maximum(below - above, 0.0)


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value}")
    return value


def _reach(profile: PrivacyProfile, tail: float) -> float:
    """A point where delta <= `tail`, at most 1/64 of the bracketing ladder step beyond the first such
    eps (inf when there is none before 2^27): two batched evaluations, not a root search, since only
    the support's size depends on it."""
    goal = np.log(tail)
    for ladder in (np.exp2(np.arange(-10.0, 6.0)), np.exp2(np.arange(6.0, 28.0))):
        below = profile._log_delta(ladder) <= goal
        if np.any(below):
            k = int(np.argmax(below))
            grid = np.linspace(ladder[k - 1] if k else 0.0, ladder[k], 65)
            return float(grid[int(np.argmax(profile._log_delta(grid) <= goal))])
    return np.inf


def _half_line(profile: PrivacyProfile, end: float, h: float, log_step: float, max_gap: float) -> np.ndarray:
    """Points of [0, end] (multiples of h) such that ln delta changes by at most log_step between
    neighbours and no gap exceeds max_gap, from ln delta on _COARSE intervals."""
    coarse = np.linspace(0.0, end, _COARSE + 1)
    values = profile._log_delta(coarse)
    with np.errstate(invalid="ignore"):
        change = np.abs(np.diff(values))
    width = np.diff(coarse)
    finest = np.maximum(np.ceil(width / h), 1.0)
    pieces = np.where(np.isfinite(change), np.maximum(np.ceil(change / log_step), np.ceil(width / max_gap)), finest)
    pieces = np.clip(pieces, 1.0, finest).astype(int)
    points = [coarse[i] + width[i] * np.arange(pieces[i]) / pieces[i] for i in range(_COARSE)]
    return np.concatenate(points + [[end]])


def _support(first: PrivacyProfile, second: PrivacyProfile, reach: dict[int, float], h: float, max_points: int,
             log_step: float, max_gap: float, fast: bool) -> np.ndarray:
    """Support points (as integer multiples of h) of the PLD of `first` (its reverse is `second`):
    [-(reach of second + _MARGIN), reach of first], every multiple of h or the adaptive points."""
    top, bottom = reach[id(first)], reach[id(second)]
    if not np.isfinite(top):
        return np.array([int(np.ceil(2.0**27 / h))])
    bottom = (bottom if np.isfinite(bottom) else top) + _MARGIN
    lo, hi = int(np.floor(-bottom / h)), max(int(np.ceil(top / h)), 1)
    if hi - lo + 1 <= (max(max_points, 2_000_000) if fast else max_points):
        return np.arange(lo, hi + 1)
    upper = _half_line(first, hi * h, h, log_step, max_gap)
    lower = -_half_line(second, -lo * h, h, log_step, max_gap)
    return np.unique(np.concatenate([np.round(upper / h), np.round(lower / h)]).astype(np.int64))


class WorstCase(PrivacyProfile):
    """The pointwise maximum of several profiles, in each direction separately: the curve of the worst
    of several neighbouring pairs (the candidate rows of a dataset's spectrum, say). A maximum of
    privacy profiles is convex and non-increasing in e^eps and >= 1 - e^eps, hence itself the profile of
    a pair (derived here), one that dominates every member (Zhu, Dong & Wang 2022, Definition 7)."""

    def __init__(self, members: Iterable[PrivacyProfile]) -> None:
        members = tuple(members)
        if not members or not all(isinstance(m, PrivacyProfile) for m in members):
            raise TypeError("WorstCase needs one or more privacy profiles")
        self.members = members
        self.fast = all(m.fast for m in members)

    def __repr__(self) -> str:
        return f"WorstCase({len(self.members)} profiles)"

    def _log_delta(self, eps: np.ndarray) -> np.ndarray:
        """The maximum over members: at eps < 0 through the duality delta_{P||Q}(eps) = 1 - e^eps +
        e^eps delta_{Q||P}(-eps) (no cancellation: both terms >= 0), since every member's delta is
        about 1 - e^eps there and the pruning below would not skip any."""
        out = np.empty(eps.size)
        negative = eps < 0
        out[~negative] = self._largest(eps[~negative])
        if np.any(negative):
            e = eps[negative]
            with np.errstate(divide="ignore"):
                reverse = cast(WorstCase, self.reverse())  # a WorstCase (`_reversed`)
                out[negative] = np.logaddexp(np.log(-np.expm1(e)), e + reverse._largest(-e))
        return out

    def _largest(self, eps: np.ndarray) -> np.ndarray:
        """max_m ln delta_m; on long grids member m is skipped between two coarse points eps_k <
        eps_{k+1} where delta_m(eps_k) <= the others' maximum at eps_{k+1}, since every profile is
        non-increasing in eps (then delta_m <= that maximum on the whole interval)."""
        if eps.size < 8 * _PRUNE_STEP or len(self.members) == 1:
            return np.max([m._log_delta(eps) for m in self.members], axis=0)
        order = np.argsort(eps, kind="stable")
        sorted_eps = eps[order]
        marks = np.unique(np.append(np.arange(0, eps.size, _PRUNE_STEP), eps.size - 1))
        coarse = np.array([m._log_delta(sorted_eps[marks]) for m in self.members])
        interval = np.clip(np.searchsorted(marks, np.arange(eps.size), side="right") - 1, 0, marks.size - 2)
        out = np.full(eps.size, -np.inf)
        for j, member in enumerate(self.members):
            others = np.max(np.delete(coarse, j, axis=0), axis=0)
            needed = ~(coarse[j, :-1] <= others[1:])             # per coarse interval
            points = np.flatnonzero(needed[interval])
            if points.size:
                out[points] = np.maximum(out[points], member._log_delta(sorted_eps[points]))
        out[marks] = np.max(coarse, axis=0)
        result = np.empty(eps.size)
        result[order] = out
        return result

    def _epsilon(self, goal: np.ndarray) -> np.ndarray:
        return np.max([m._epsilon(goal) for m in self.members], axis=0)

    def _reversed(self) -> WorstCase:
        return WorstCase(m.reverse() for m in self.members)

"""A claimed privacy curve delta(eps), from whatever states it, and where an audit or an exact curve refutes it.

`claimed_curve` turns a claim into a `ClaimedCurve`, a callable eps -> delta that is NaN where the
claim says nothing: arrays (eps, delta), a CSV file with columns eps,delta, a callable delta(eps),
a `theory.GaussianPair` (both orders), a `core.curve.Curve` such as `theory.Spectrum`, a
dp_accounting PrivacyLossDistribution, privacy-loss object, PrivacyAccountant or DpEvent (when
dp_accounting is installed), or a Gaussian-DP claim `gaussian_dp(mu)`: the curve
delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) of Dong, Roth & Su (2022, Corollary 2.13),
which is the analytic Gaussian curve `theory.gaussian_delta`.

Between the points of a tabulated claim the curve is the chord in e^eps: any privacy curve
delta(eps) = sup_S P(S) - e^eps Q(S) is convex and non-increasing in e^eps, so a mechanism that meets
the claim at two points meets the chord between them. The chord is thus implied by the claim (refuting
it refutes the claim); outside the tabulated range the claim is taken to say nothing.

`check` compares an audit's lower bound, which holds simultaneously over the eps grid and both
directions at confidence 1 - alpha, with the claim at every grid point: "refuted" where the bound
exceeds the claim, "not refuted" elsewhere. Not refuted is never a certificate of privacy: the bound
is only as strong as the trained score.
"""

from __future__ import annotations

import math
import pathlib
from dataclasses import asdict, dataclass

import numpy as np

from ...core.curve import Curve
from ...theory import GaussianPair, gaussian_delta
from .gdp import gaussian_tradeoff

LABELS = ("refuted", "not refuted")
#: Relative tolerance of `exceeds` for exact curves (theory curves are exact to ~1e-12 relative).
EXACT_RTOL = 1e-9
#: How far outside [0, 1] a claimed delta may fall by rounding (exact curves are exact to ~1e-12).
ROUNDING = 1e-12


class ClaimedCurve:
    """delta(eps) of a claim: `curve(eps)` is the claimed delta on an array of eps, NaN where the
    claim says nothing. `source` names the claim; `gdp_mu` is set for a Gaussian-DP claim."""

    def __init__(self, function, source: str, gdp_mu: float | None = None):
        self.function, self.source, self.gdp_mu = function, source, gdp_mu

    def __call__(self, eps) -> np.ndarray:
        """The claimed delta at each eps: a number in [0, 1], or NaN where the claim says nothing."""
        eps = np.atleast_1d(np.asarray(eps, dtype=float))
        returned = self.function(eps)
        raw = np.asarray(returned)
        texts = raw.dtype.kind in "US" or (raw.dtype.kind == "O" and any(isinstance(v, (str, bytes)) for v in raw.flat))
        try:
            if texts:
                raise TypeError
            values = raw.astype(float)
        except (TypeError, ValueError):
            raise TypeError(f"the claimed curve ({self.source}) must give numbers, got "
                            f"{type(returned).__name__} {returned!r:.60}") from None
        if values.shape != eps.shape:
            raise ValueError(f"the claimed curve ({self.source}) must give one delta per eps, got shape "
                             f"{values.shape} for {eps.size} eps")
        outside = ~np.isnan(values) & ((values < -ROUNDING) | (values > 1 + ROUNDING))
        if outside.any():
            i = int(np.argmax(outside))
            raise ValueError(f"the claimed curve ({self.source}) gives delta = {values[i]:g} at eps = {eps[i]:g}; a "
                             "claimed delta must lie in [0, 1] (NaN where the claim says nothing)")
        return values

    def __repr__(self) -> str:
        return f"ClaimedCurve({self.source})"

    def renamed(self, source: str) -> "ClaimedCurve":
        return ClaimedCurve(self.function, source, self.gdp_mu)

    def tradeoff(self, type_one, eps) -> np.ndarray:
        """The trade-off function the claim implies: the smallest type II error of a test with type I
        error `type_one`. For a Gaussian-DP claim `gdp.gaussian_tradeoff` (Dong, Roth & Su 2022,
        Definition 2.7); otherwise the envelope of the (eps, delta(eps)) claims at the given eps,
        max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) (their Proposition 2.12)."""
        type_one = np.asarray(type_one, dtype=float)
        if self.gdp_mu is not None:
            return gaussian_tradeoff(type_one, self.gdp_mu)
        eps = np.asarray(eps, dtype=float)
        eps = eps[eps >= 0]
        delta = self(eps)
        eps, delta = eps[np.isfinite(delta)], delta[np.isfinite(delta)]
        a = type_one[:, None]
        bound = np.maximum(1 - delta - np.exp(eps) * a, np.exp(-eps) * (1 - delta - a))
        return np.maximum(bound.max(axis=1, initial=0.0), 0.0)


def gaussian_dp(mu: float) -> ClaimedCurve:
    """The claim "mu-GDP" (Dong, Roth & Su 2022): delta(eps) = theory.gaussian_delta(eps, mu)."""
    mu = float(mu)
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"the Gaussian-DP parameter mu must be finite and > 0, got {mu}")
    return ClaimedCurve(lambda eps: gaussian_delta(eps, mu), f"{mu:g}-GDP", gdp_mu=mu)


def tabulated(eps, delta, source: str = "tabulated curve") -> ClaimedCurve:
    """A claim given at points: the chord in e^eps between them, NaN outside [min eps, max eps]."""
    eps, delta = np.asarray(eps, dtype=float).ravel(), np.asarray(delta, dtype=float).ravel()
    if eps.size != delta.size or eps.size == 0:
        raise ValueError(f"a claimed curve needs as many deltas as eps (and at least one), got {eps.size} eps "
                         f"and {delta.size} deltas")
    if not (np.all(np.isfinite(eps)) and np.all(np.isfinite(delta))):
        raise ValueError("a claimed curve's eps and delta must be finite numbers")
    if np.any((delta < 0) | (delta > 1)):
        raise ValueError("a claimed delta must lie in [0, 1]")
    order = np.argsort(eps)
    eps, delta = eps[order], delta[order]
    if np.any(np.diff(eps) == 0):
        raise ValueError("a claimed curve gives one delta per eps; some eps are repeated")
    x = np.exp(eps)

    def chord(grid):
        values = np.interp(np.exp(grid), x, delta)
        return np.where((grid >= eps[0]) & (grid <= eps[-1]), values, np.nan)

    return ClaimedCurve(chord, f"{source}, {eps.size} points in [{eps[0]:g}, {eps[-1]:g}]")


def read_csv(path) -> ClaimedCurve:
    """A claim from a CSV file with a header naming the columns eps and delta (others are ignored;
    `ndis theory`'s spectrum.csv qualifies)."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"claimed curve file {str(path)!r} not found")
    if not path.read_text(encoding="utf-8").strip():
        raise ValueError(f"claimed curve file {str(path)!r} is empty: it needs a header eps,delta and one row "
                         "per point")
    table = np.genfromtxt(path, delimiter=",", names=True, dtype=float, encoding="utf-8")
    names = table.dtype.names or ()
    if "eps" not in names or "delta" not in names:
        raise ValueError(f"{path} must have a header with columns eps and delta, got {', '.join(names) or 'none'}")
    try:
        return tabulated(np.atleast_1d(table["eps"]), np.atleast_1d(table["delta"]), f"{path.name}")
    except ValueError as error:
        raise ValueError(f"claimed curve file {str(path)!r}: {error}") from None


def _dp_accounting_claim(claim) -> ClaimedCurve | None:
    """A dp_accounting object as a claim, or None when `claim` is not one (or dp_accounting is absent)."""
    name = type(claim).__module__ or ""
    if not name.startswith("dp_accounting"):
        return None
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    if isinstance(claim, dp_accounting.DpEvent):
        accountant = pld_privacy_accountant.PLDAccountant()
        if not accountant.supports(claim):
            raise ValueError(f"dp_accounting's PLDAccountant does not support the event {claim!r}")
        return _dp_accounting_claim(accountant.compose(claim)).renamed(f"dp_accounting PLD of {type(claim).__name__}")
    if callable(getattr(claim, "get_delta_for_epsilon", None)):  # a PLD or a privacy-loss object
        return ClaimedCurve(lambda eps: np.asarray(claim.get_delta_for_epsilon(eps), dtype=float),
                            f"dp_accounting {type(claim).__name__}")
    if callable(getattr(claim, "get_delta", None)):  # a PrivacyAccountant: one eps at a time
        return ClaimedCurve(lambda eps: np.array([claim.get_delta(float(e)) for e in eps]),
                            f"dp_accounting {type(claim).__name__}")
    raise TypeError(f"a dp_accounting {type(claim).__name__} does not state a delta(eps) curve; pass a "
                    "PrivacyLossDistribution, a PrivacyAccountant or a DpEvent")


def _pointwise(function):
    """A callable delta(eps) on arrays: called on the whole array, else one eps at a time."""

    def curve(eps):
        try:
            values = np.asarray(function(eps), dtype=float)
            if values.shape == eps.shape:
                return values
        except (TypeError, ValueError):
            pass
        return np.array([_number(function(float(e)), function) for e in eps])

    return curve


def _number(value, function) -> float:
    """A callable claim's delta at one eps as a float; TypeError naming the callable otherwise."""
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"the claimed curve {getattr(function, '__name__', 'callable')} must return a number (delta) "
                        f"for an eps, got {type(value).__name__} {value!r:.60}") from None


def claimed_curve(claim) -> ClaimedCurve:
    """`claim` as a ClaimedCurve: see the module docstring for what is accepted."""
    if isinstance(claim, ClaimedCurve):
        return claim
    if isinstance(claim, (str, pathlib.Path)):
        return read_csv(claim)
    if isinstance(claim, GaussianPair):
        reverse = claim.reverse()
        return ClaimedCurve(lambda eps: np.maximum(claim.delta(eps), reverse.delta(eps)),
                            "GaussianPair (both orders)")
    if isinstance(claim, Curve):
        return tabulated(claim.eps, claim.delta, type(claim).__name__)
    accounting = _dp_accounting_claim(claim)
    if accounting is not None:
        return accounting
    if callable(claim):
        return ClaimedCurve(_pointwise(claim), getattr(claim, "__name__", "callable"))
    if isinstance(claim, (tuple, list, np.ndarray)) and len(claim) == 2:
        return tabulated(*claim, source="(eps, delta) arrays")
    raise TypeError(f"cannot read a claimed curve from {type(claim).__name__}: give arrays (eps, delta), a CSV "
                    "path with columns eps,delta, a callable delta(eps), a GaussianPair or Spectrum, "
                    "gaussian_dp(mu), or a dp_accounting PLD / accountant / DpEvent")


def is_point_claim(claim) -> bool:
    """True for the single (eps0, delta0) claim of `auditor.statistics.verdict`: a pair of two numbers."""
    if isinstance(claim, (str, pathlib.Path)) or not isinstance(claim, (tuple, list, np.ndarray)):
        return False
    return len(claim) == 2 and all(np.ndim(v) == 0 for v in claim)


def regions(eps: np.ndarray, mask: np.ndarray) -> list[tuple[float, float]]:
    """[(first eps, last eps)] of each run of consecutive grid points where `mask` holds."""
    mask = np.asarray(mask, dtype=bool)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(int), [0]])))
    return [(float(eps[start]), float(eps[stop - 1])) for start, stop in zip(edges[::2], edges[1::2])]


def _describe(pieces: list[tuple[float, float]]) -> str:
    return ", ".join(f"{a:g}" if a == b else f"[{a:g}, {b:g}]" for a, b in pieces)


@dataclass(eq=False)
class ClaimCheck:
    """A claimed curve against an audit, per eps of the grid and overall.

    `refuted[i]`: the simultaneous lower bound exceeds the claim at eps[i] (so the claim is false
    there, and all such statements hold together with probability >= 1 - alpha). `excess` is the
    largest lower - claimed and `eps_excess` its eps (NaN when nothing is refuted). `gap` is
    claimed - estimate where positive: a hint that the claim may be loose, never a proof, since the
    estimate only measures the trained score's power. `tradeoff`: the trade-off function the claim
    implies at `gdp.TRADEOFF_POINTS` (for the plot), or None.
    """

    label: str
    source: str
    alpha: float
    confidence: float
    eps: np.ndarray
    claimed: np.ndarray
    lower: np.ndarray
    estimate: np.ndarray
    refuted: np.ndarray
    excess: float
    eps_excess: float
    tradeoff: np.ndarray | None = None

    def __post_init__(self):
        if self.label not in LABELS:
            raise ValueError(f"unknown claim check label {self.label!r}; allowed: {', '.join(LABELS)}")
        for name in ("eps", "claimed", "lower", "estimate", "tradeoff"):  # JSON writes NaN as null
            values = getattr(self, name)
            if values is not None:
                setattr(self, name, np.array([np.nan if v is None else v for v in np.ravel(values)], dtype=float))
        self.refuted = np.asarray(self.refuted, dtype=bool)
        self.excess, self.eps_excess = (np.nan if v is None else float(v) for v in (self.excess, self.eps_excess))

    def __eq__(self, other):
        if isinstance(other, str):
            return self.label == other
        return self is other

    __hash__ = object.__hash__

    @property
    def gap(self) -> np.ndarray:
        """claimed - estimate where the claim lies above the point estimate (0 elsewhere, NaN unclaimed)."""
        return np.where(np.isnan(self.claimed), np.nan, np.maximum(self.claimed - self.estimate, 0.0))

    @property
    def refuted_regions(self) -> list[tuple[float, float]]:
        return regions(self.eps, self.refuted)

    def __str__(self):
        claimed = int(np.sum(np.isfinite(self.claimed)))
        if self.label == "refuted":
            return (f"claimed curve ({self.source}) refuted at eps in {_describe(self.refuted_regions)} "
                    f"({int(self.refuted.sum())} of {claimed} claimed grid points), all at once with confidence "
                    f"{self.confidence:.0%}; largest excess {self.excess:.3g} (lower bound minus claim) at "
                    f"eps={self.eps_excess:g}")
        return (f"claimed curve ({self.source}) not refuted: the {self.confidence:.0%} lower bound (simultaneous "
                f"over the grid) is at or below the claim at all {claimed} claimed grid points; the confidence "
                f"belongs to the bound, this is not a proof of privacy")

    def to_dict(self) -> dict:
        return asdict(self)


def check(claim: ClaimedCurve, lower: Curve, estimate: Curve, alpha: float) -> ClaimCheck:
    """The claim against an audit's simultaneous lower bound (`lower`, confidence 1 - alpha) and its
    point estimate, both directions together: refuted where max(lower) > claimed(eps)."""
    eps = lower.eps
    claimed = claim(eps)
    bound = lower.delta
    refuted = np.isfinite(claimed) & (bound > claimed)
    excess, where = np.nan, np.nan
    if refuted.any():
        differences = np.where(refuted, bound - claimed, -np.inf)
        i = int(np.argmax(differences))
        excess, where = float(differences[i]), float(eps[i])
    return ClaimCheck("refuted" if refuted.any() else "not refuted", claim.source, float(alpha), 1 - float(alpha),
                      eps, claimed, bound, estimate.delta, refuted, excess, where)


def exceeds(claim: ClaimedCurve, eps, exact_delta, rtol: float = EXACT_RTOL) -> dict:
    """Where an exact curve exceeds the claim (no sampling): the grid points, their eps regions and the
    largest excess. `rtol` absorbs the exact curve's rounding."""
    eps, exact_delta = np.asarray(eps, dtype=float), np.asarray(exact_delta, dtype=float)
    claimed = claim(eps)
    over = np.isfinite(claimed) & (exact_delta > claimed * (1 + rtol) + 1e-300)
    result = {"source": claim.source, "refuted": bool(over.any()), "points": int(over.sum()),
              "claimed_points": int(np.isfinite(claimed).sum()), "regions": regions(eps, over),
              "excess": None, "eps_excess": None}
    if over.any():
        differences = np.where(over, exact_delta - claimed, -np.inf)
        i = int(np.argmax(differences))
        result.update(excess=float(differences[i]), eps_excess=float(eps[i]))
    return result


def describe_exceeds(result: dict) -> str:
    """One line for `exceeds`."""
    if not result["refuted"]:
        return (f"the exact curve does not exceed the claim ({result['source']}) at any of its "
                f"{result['claimed_points']} claimed grid points")
    return (f"the exact curve exceeds the claim ({result['source']}) at eps in {_describe(result['regions'])} "
            f"({result['points']} of {result['claimed_points']} claimed grid points); largest excess "
            f"{result['excess']:.3g} at eps={result['eps_excess']:g}")

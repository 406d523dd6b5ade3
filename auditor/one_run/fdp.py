"""The f-DP one-run bound of Mahloujifar, Melis & Chaudhuri (2025, "Auditing f-differential privacy in
one run", ICML), with the guesses of `guesses`.

Let the mechanism be f-DP in each canary, B(x) = 1 - f(x) the largest true-positive rate of a test at
false-positive rate x (concave), and make c' guesses among m canaries, N of them right. With
r_i = E[N 1{N >= i}] / m and h_i = E[(c' - N) 1{N >= i}] / m, one canary j's guess restricted to the
event {N without j >= i} is a test between "j in" and "j out"; averaging its right and wrong rates over
the canaries and using the concavity of B gives r_{i+1} <= B(h_i), i.e. h_i >= B^-1(r_{i+1}), while
r_i - r_{i+1} = i P[N = i] / m and h_i - h_{i+1} = (c' - i) P[N = i] / m. Their audit ("audit with
cap") starts from P[N >= c] = tau at N = c (r_c = tau c / m, h_c = tau (c' - c) / m), takes the least
h_i the constraint allows at each level down to 0, and refutes f when the mass this needs,
r_0 + h_0, exceeds c' / m, the mass of every outcome: c right guesses then have probability below tau
under f, so tau = alpha tests f at level alpha.

The f tested by default (`family="eps-delta"`) is (eps, delta)-DP itself,
B^-1(y) = max(0, (y - delta) e^-eps, 1 - delta - e^eps (1 - y)): every eps below eps_lo is refuted,
and eps_lo needs no assumption beyond the coin flips. The paper's own family, mu-GDP (Dong, Roth &
Su 2022), B^-1(y) = Phi(Phi^-1(y) - mu), is `family="gdp"`: every mu below mu_lo is refuted, and
eps_lo is the eps at delta of mu_lo-GDP, so it assumes the mechanism's trade-off curve is a
Gaussian one (DP-SGD's is close to one; Dong et al. 2022, Theorem 3.4). Refuting mu-GDP does not
refute (eps(mu), delta)-DP for a mechanism whose curve is not Gaussian: on Laplace-mechanism scores
the GDP family's eps_lo exceeds the true eps in most runs (docs/auditor/one-run.md), so
`audit_one_run` uses the (eps, delta) family, and the GDP family stays for comparisons with the paper.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ...theory.gaussian import gaussian_epsilon
from . import guesses
from .estimate import Estimate, Uncomputable

#: The search ranges of mu (GDP) and of eps ((eps, delta) family); each is refined three times on 33 points.
MU_MAX, EPS_MAX = 12.0, 40.0
ASSUMPTIONS = {"gdp": "the mechanism's trade-off curve is a Gaussian one (mu-GDP for some mu)",
               "eps-delta": "nothing beyond the fair coin flips (exact)"}


def _inverse_blow_up(family: str, values: np.ndarray, delta: float):
    """y -> B^-1(y) for each tested curve (`values`: mu for GDP, eps for the (eps, delta) family)."""
    if family == "gdp":
        return lambda y: special.ndtr(special.ndtri(y) - values)
    grow, shrink = np.exp(values), np.exp(-values)
    return lambda y: np.maximum(np.maximum((y - delta) * shrink, 1.0 - delta - grow * (1.0 - y)), 0.0)


def refuted(m: int, guessed: int, right: int, alpha: float, inverse) -> np.ndarray:
    """For each tested curve: is it refuted at level alpha by `right` of `guessed` guesses (m canaries)?"""
    r = np.full_like(inverse(np.zeros(1)), alpha * right / m, dtype=float)
    h = np.full_like(r, alpha * (guessed - right) / m)
    for i in range(right - 1, -1, -1):
        h_new = np.maximum(h, inverse(np.minimum(r, 1.0)))
        if np.array_equal(h_new, h):   # nothing moves any more: r and h are final
            break
        r = r + i / (guessed - i) * (h_new - h)
        h = h_new
    return r + h > guessed / m


def largest_refuted(m: int, guessed: int, right: int, alpha: float, family: str, delta: float) -> float:
    """The supremum of the refuted parameters (mu or eps) below the first one not refuted, 0 if none."""
    if right <= guessed / 2:
        return 0.0
    lo, hi = 0.0, MU_MAX if family == "gdp" else EPS_MAX
    for _ in range(3):
        grid = np.linspace(lo, hi, 33)
        kept = ~refuted(m, guessed, right, alpha, _inverse_blow_up(family, grid, delta))
        if not kept.any():
            return float(hi)
        first = int(np.argmax(kept))
        if first == 0:
            return float(lo)
        lo, hi = grid[first - 1], grid[first]
    return float(lo)


def _as_eps(value: float, family: str, delta: float) -> float:
    """The eps at delta of a refuted parameter: mu-GDP's eps for GDP, eps itself for (eps, delta)."""
    return float(gaussian_epsilon(delta, value)) if family == "gdp" else value


def eps_from_counts(m: int, guessed: int, right: int, delta: float, alpha: float, family: str = "gdp") -> float:
    """eps_lo at delta from `right` of `guessed` guesses on m canaries, at level alpha."""
    return _as_eps(largest_refuted(m, guessed, right, alpha, family, delta), family, delta)


def ceiling(m: int, delta: float, alpha: float, family: str = "eps-delta") -> float:
    """The largest eps_lo of `estimate` on m canaries: every guess of the largest k right."""
    ks = guesses.sizes(m)
    if ks.size == 0:
        return 0.0
    return eps_from_counts(m, 2 * int(ks[0]), 2 * int(ks[0]), delta, alpha / ks.size, family)


def estimate(scores: np.ndarray, included: np.ndarray, delta: float, alpha: float,
             family: str = "eps-delta") -> Estimate:
    """eps_lo from validated canary scores: the largest over the guess grid, each at alpha / (grid size);
    `details["ceiling"]` is `ceiling`. Raises `Uncomputable` when even every guess right would certify
    nothing."""
    if family not in ASSUMPTIONS:
        raise ValueError(f"family must be one of {', '.join(map(repr, ASSUMPTIONS))}; got {family!r}")
    m = scores.size
    most = ceiling(m, delta, alpha, family)
    if most == 0:
        raise Uncomputable(guesses.nothing_certifiable(m, delta, alpha, lambda n, d, a: ceiling(n, d, a, family)))
    ks = guesses.sizes(m)
    right = guesses.correct_counts(scores, included, ks)
    refuted_up_to = [largest_refuted(m, 2 * int(k), int(v), alpha / ks.size, family, delta) for k, v in zip(ks, right)]
    bounds = [_as_eps(value, family, delta) for value in refuted_up_to]
    best = int(np.argmax(bounds))
    details = {"family": family, "guesses": 2 * int(ks[best]), "correct": int(right[best]),
               "guess_grid": (2 * ks).tolist(), "correct_by_grid": right.tolist(), "eps_lo_by_grid": bounds,
               "level_per_guess_count": alpha / ks.size, "ceiling": most}
    if family == "gdp":
        details["mu_lo"] = refuted_up_to[best]
    return Estimate("fdp", bounds[best], delta, alpha, ASSUMPTIONS[family], details=details)

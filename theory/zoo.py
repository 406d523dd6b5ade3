"""Exact privacy curves of the textbook DP algorithms and their published buggy variants (the zoo
of `ndis.mechanisms.zoo`): Dwork & Roth (2014); Lyu, Su & Li (2017), Algorithms 1 and 3-6; Ding,
Wang, Wang, Zhang & Kifer (2018, StatDP); Bichsel, Steffen, Bogunovic & Vechev (2021, DP-Sniper).

Every function takes the two query-answer vectors q (the answers on D) and q' (on D') and returns
delta(eps) = sup_S P(M(q) in S) - e^eps P(M(q') in S), the hockey-stick divergence of the pair in
that direction (swap q and q' for the reverse one), or the eps at which it reaches 0.

Methods and accuracy:

* Laplace noise on a shift vector: one coordinate differs -> the closed form
  delta = 1 - e^{(eps - a)/2} for |eps| <= a = |shift| / scale, evaluated with expm1. Several
  coordinates -> the privacy loss is a sum of independent clipped Laplace losses (atoms at +-a_i,
  density e^{l/2} / 4 e^{-a_i/2} in between); conditioning on which coordinates sit on an atom
  (3^m cases for m differing coordinates) leaves one 1-D integral of a box-spline density, done by
  adaptive quadrature between its knots (absolute error about 1e-13 for m <= 8; the
  inclusion-exclusion formula of the box spline rounds at that level).
* Discrete outputs (report-noisy-max index, SVT and iSVT1-3): each outcome's probability is a 1-D
  integral over one noise variable (the max's location, or SVT's threshold noise), computed by
  adaptive quadrature between the kinks of the integrand with relative tolerance 1e-12, then
  delta = sum_o P(o) max(0, 1 - e^{eps + ln Q(o) - ln P(o)}) (expm1: no cancellation term by term).
* The noisy max's value: the max has CDF F = prod_j F_j and density p = sum_i f_i prod_{j != i} F_j;
  delta = integral of (p - e^eps p')_+ is the sum of the increments of F - e^eps F' over the
  intervals where ln p - ln p' > eps, whose ends are found on a 20,001-point grid and refined by
  Brent's method: no quadrature, absolute error about 1e-15 (checked against a quadrature split
  at the same ends, 1e-13), provided ln p / p' crosses eps at most once between grid points.
* The Neyman-Pearson events: `*_level_set(t, ...)` give (P(S_t), Q(S_t)) for S_t = {ln p/q > t},
  the level sets of the privacy loss, which are the events a Bayes-optimal score tests; at t = eps
  P(S_t) - e^eps Q(S_t) = delta(eps). Same methods (closed forms, the same interval ends, the same
  quadrature with an indicator for iSVT4).
* iSVT4 releases continuous answers: for cutoff c = 1, `isvt4_delta` by nested 1-D quadrature
  (relative error about 1e-9); for c > 1 no exact curve here, but the exact curve of its codes
  alone (a post-processing, hence a lower bound) is `svt_probabilities` with its noise scales.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..core.validation import as_eps, as_finite_array, as_positive, scalar_or_array
from .gaussian import gaussian_delta

_QUAD: dict[str, Any] = dict(epsabs=0.0, epsrel=1e-12, limit=200)
#: A function of one real variable (a density, a distribution function, an integrand).
Real = Callable[[float], float]


def _vectors(q: ArrayLike, q_prime: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    q, q_prime = as_finite_array(q, "q").reshape(-1), as_finite_array(q_prime, "q_prime").reshape(-1)
    if q.shape != q_prime.shape:
        raise ValueError(f"q and q' must have the same length, got {q.size} and {q_prime.size}")
    return q, q_prime


def _map(function: Real, eps: ArrayLike) -> float | np.ndarray:
    """function applied to every eps (scipy.stats convention: scalar in, float out)."""
    grid = as_eps(eps)
    out = np.array([function(float(e)) for e in grid.reshape(-1)]).reshape(grid.shape)
    return scalar_or_array(out, eps)


def _integral(f: Real, knots: Iterable[float], lo: float = -np.inf, hi: float = np.inf, epsabs: float = 0.0) -> float:
    """integral of f over (lo, hi), split at the sorted knots inside it (kinks of f)."""
    from scipy import integrate

    points = [lo, *sorted(k for k in set(knots) if lo < k < hi), hi]
    options = {**_QUAD, "epsabs": epsabs}
    return float(sum(integrate.quad(f, a, b, **options)[0] for a, b in itertools.pairwise(points) if b > a))


# -- Laplace and Gaussian noise on a shift vector ------------------------------------------------------
def _box_spline(x: float, widths: np.ndarray) -> float:
    """Density at x of a sum of independent uniforms on [0, w_i] (inclusion-exclusion formula)."""
    m = widths.size
    if m == 1:
        return float(0.0 <= x <= widths[0]) / widths[0]
    total = 0.0
    for subset in itertools.product((0, 1), repeat=m):
        corner = x - float(np.dot(subset, widths))
        if corner > 0:
            total += (-1) ** sum(subset) * corner ** (m - 1)
    return max(total, 0.0) / (math.factorial(m - 1) * float(np.prod(widths)))


def _laplace_one(eps: float, a: float) -> float:
    if eps >= a:
        return 0.0
    if eps <= -a:
        return float(-np.expm1(eps))
    return float(-np.expm1(0.5 * (eps - a)))


def _laplace_many(eps: float, a: np.ndarray) -> float:
    """E[(1 - e^{eps - L})_+] for L = sum of the clipped Laplace losses with ranges a_i."""
    total = 0.0
    for codes in itertools.product((1, -1, 0), repeat=a.size):   # atom +a_i, atom -a_i, continuous
        states = np.array(codes)
        weight = float(np.prod(np.where(states == 1, 0.5, np.where(states == -1, 0.5 * np.exp(-a), 1.0))))
        shift = float(np.dot(states, a))
        free = a[states == 0]
        if free.size == 0:
            total += weight * max(0.0, -np.expm1(eps - shift))
            continue
        weight *= float(np.prod(0.5 * free * np.exp(-0.5 * free)))   # prod (e^{-a_i/2}/4) * (2 a_i)
        t, half = eps - shift, float(free.sum())
        if t >= half:
            continue
        widths = 2.0 * free
        knots = {float(np.dot(subset, widths)) - half for subset in itertools.product((0, 1), repeat=widths.size)}

        def f(s: float) -> float:  # integrated right below, so the loop's current t, half and widths
            return -np.expm1(t - s) * np.exp(0.5 * s) * _box_spline(s + half, widths)  # noqa: B023

        total += weight * _integral(f, knots, max(t, -half), half, epsabs=1e-14)   # the box spline's rounding
    return total


def laplace_delta(eps: ArrayLike, q: ArrayLike, q_prime: ArrayLike, scale: float) -> float | np.ndarray:
    """delta(eps) of q + Lap(scale)^k against q' + Lap(scale)^k (Dwork & Roth 2014, Theorem 3.6)."""
    q, q_prime = _vectors(q, q_prime)
    scale = as_positive("scale", scale)
    a = np.abs(q - q_prime)[q != q_prime] / scale
    if a.size == 0:
        return _map(lambda e: max(0.0, -np.expm1(e)), eps)
    if a.size == 1:
        return _map(lambda e: _laplace_one(e, float(a[0])), eps)
    if a.size > 8:
        raise ValueError(f"the exact Laplace curve handles at most 8 differing coordinates, got {a.size}")
    return _map(lambda e: _laplace_many(e, a), eps)


def laplace_epsilon(q: ArrayLike, q_prime: ArrayLike, scale: float) -> float:
    """The eps at which delta(eps) reaches 0: ||q - q'||_1 / scale (the loss's largest value)."""
    q, q_prime = _vectors(q, q_prime)
    return float(np.abs(q - q_prime).sum() / as_positive("scale", scale))


def gaussian_shift_delta(eps: ArrayLike, q: ArrayLike, q_prime: ArrayLike, sigma: float) -> float | np.ndarray:
    """delta(eps) of q + N(0, sigma^2 I) against q' + N(0, sigma^2 I) (Balle & Wang 2018, Theorem 8)."""
    q, q_prime = _vectors(q, q_prime)
    return gaussian_delta(eps, float(np.linalg.norm(q - q_prime)) / as_positive("sigma", sigma))


def laplace_level_set(t: float, q: ArrayLike, q_prime: ArrayLike, scale: float) -> tuple[float, float]:
    """(P(S_t), Q(S_t)) for q + Lap(scale)^k against q' + Lap(scale)^k, one differing coordinate:
    with a = |shift| / scale the loss is a clipped Laplace loss, and for |t| < a S_t is the half-line
    beyond the point at distance (a - t) scale / 2 from q toward q'."""
    q, q_prime = _vectors(q, q_prime)
    scale = as_positive("scale", scale)
    differ = np.flatnonzero(q != q_prime)
    if differ.size > 1:
        raise ValueError(f"the Laplace level set is implemented for one differing coordinate, got {differ.size}")
    a = 0.0 if differ.size == 0 else float(abs(q - q_prime)[differ[0]]) / scale
    if t >= a:
        return 0.0, 0.0
    if t < -a:
        return 1.0, 1.0
    x = 0.5 * (a - t)                        # distance from q, in scales, of the boundary
    return float(1.0 - 0.5 * math.exp(-x)), float(0.5 * math.exp(x - a))


def gaussian_shift_level_set(t: float, q: ArrayLike, q_prime: ArrayLike, sigma: float) -> tuple[float, float]:
    """(P(S_t), Q(S_t)) for q + N(0, sigma^2 I) against q' + N(0, sigma^2 I): with mu = ||q - q'|| / sigma
    the loss is N(mu^2 / 2, mu^2) under P, so P(S_t) = Phi(mu / 2 - t / mu), Q(S_t) = Phi(-mu / 2 - t / mu)."""
    from scipy.stats import norm

    q, q_prime = _vectors(q, q_prime)
    mu = float(np.linalg.norm(q - q_prime)) / as_positive("sigma", sigma)
    if mu == 0:
        return (1.0, 1.0) if t < 0 else (0.0, 0.0)
    return float(norm.cdf(mu / 2 - t / mu)), float(norm.cdf(-mu / 2 - t / mu))


# -- noise laws used by report-noisy-max and SVT ------------------------------------------------------
def _check_noise(kind: str) -> str:
    if kind not in ("laplace", "exponential"):
        raise ValueError(f"noise must be 'laplace' or 'exponential', got {kind!r}")
    return kind


def _noise(kind: str) -> tuple[Real, Real]:
    """(pdf, cdf) of the unit-scale noise: 'laplace' or 'exponential'."""
    if _check_noise(kind) == "laplace":
        return (lambda x: 0.5 * np.exp(-abs(x)),
                lambda x: 0.5 * np.exp(x) if x < 0 else 1.0 - 0.5 * np.exp(-x))
    return (lambda x: np.exp(-x) if x >= 0 else 0.0,     # "exponential"
            lambda x: -np.expm1(-x) if x > 0 else 0.0)


def discrete_delta(eps: ArrayLike, P: ArrayLike, Q: ArrayLike) -> float | np.ndarray:
    """sum_o max(0, P(o) - e^eps Q(o)) for outcome probabilities P, Q (same order), term by term
    as P(o) (1 - e^{eps + ln Q(o) - ln P(o)})_+."""
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)

    def one(e: float) -> float:
        with np.errstate(divide="ignore"):
            gap = -np.expm1(np.minimum(e + np.log(Q) - np.log(np.where(P > 0, P, 1.0)), 700.0))
        return float(np.sum(np.where(P > 0, P * np.maximum(gap, 0.0), 0.0)))

    return _map(one, eps)


def discrete_level_set(t: float, P: ArrayLike, Q: ArrayLike) -> tuple[float, float]:
    """(P(S_t), Q(S_t)) for S_t = the outcomes with P(o) > e^t Q(o)."""
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
    inside = P > math.exp(t) * Q
    return float(P[inside].sum()), float(Q[inside].sum())


def discrete_epsilon(P: ArrayLike, Q: ArrayLike) -> float:
    """max_o ln(P(o) / Q(o)) over outcomes with P(o) > 0 (inf when some Q(o) = 0 < P(o))."""
    P, Q = np.asarray(P, dtype=float), np.asarray(Q, dtype=float)
    support = P > 0
    if np.any(Q[support] == 0):
        return math.inf
    return float(np.max(np.log(P[support]) - np.log(Q[support])))


# -- report noisy max ---------------------------------------------------------------------------------
def noisy_max_index_probabilities(q: ArrayLike, scale: float, noise: str = "laplace") -> np.ndarray:
    """P(argmax_i q_i + scale * Z_i = i) for i.i.d. Laplace or exponential Z (Dwork & Roth 2014,
    Claim 3.9; StatDP's noisy_max_v1a and v2a): integral of f_i(x) prod_{j != i} F_j(x) dx."""
    q = as_finite_array(q, "q").reshape(-1)
    scale = as_positive("scale", scale)
    pdf, cdf = _noise(noise)
    probabilities = np.empty(q.size)
    for i in range(q.size):
        others = np.delete(q, i)

        def f(x: float) -> float:  # integrated right below, so the loop's current i and others
            return pdf((x - q[i]) / scale) / scale * math.prod(cdf((x - o) / scale) for o in others)  # noqa: B023

        lo = q[i] if noise == "exponential" else -np.inf
        probabilities[i] = _integral(f, q, lo)
    return probabilities


def _log_max_laws(x: np.ndarray, q: np.ndarray, scale: float, noise: str) -> tuple[np.ndarray, np.ndarray]:
    """(ln P(max <= x), ln density of the max at x) of max_i q_i + scale * Z_i, at points x above
    the lower end of the max's support (every F_j(x) > 0): ln prod F_j and
    ln prod F_j + ln sum_i f_i / F_i, evaluated in logs so that the far tails do not underflow."""
    z = (x[:, None] - q[None, :]) / scale
    if noise == "laplace":
        log_cdf = np.where(z < 0, z - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(z))))
        log_pdf = -np.abs(z) - math.log(2.0 * scale)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            log_cdf = np.where(z > 0, np.log(-np.expm1(-np.maximum(z, 0.0))), -np.inf)
        log_pdf = -z - math.log(scale)
    outside = np.any(np.isneginf(log_cdf), axis=1)          # below some q_j: no mass (exponential noise)
    log_cdf, log_pdf = np.where(outside[:, None], 0.0, log_cdf), np.where(outside[:, None], 0.0, log_pdf)
    log_ratio = log_pdf - log_cdf
    top = log_ratio.max(axis=1)
    log_sum = top + np.log(np.exp(log_ratio - top[:, None]).sum(axis=1))
    log_F = np.where(outside, -np.inf, log_cdf.sum(axis=1))
    return log_F, log_F + log_sum


def noisy_max_value_log_ratio(x: ArrayLike, q: np.ndarray, q_prime: np.ndarray, scale: float,
                              noise: str = "laplace") -> np.ndarray:
    """ln p(x) - ln p'(x) for the densities of the two maxes (+inf where only p' vanishes)."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    return _log_max_laws(x, q, scale, noise)[1] - _log_max_laws(x, q_prime, scale, noise)[1]


def _value_grid(q: np.ndarray, q_prime: np.ndarray, scale: float, noise: str) -> np.ndarray:
    """Grid for the max's value: from the lower end of the max of q's support (exponential) or
    60 scales below every answer (Laplace) to 60 scales above, 20,001 points plus the answers."""
    lo = float(q.max()) if noise == "exponential" else float(min(q.min(), q_prime.min())) - 60 * scale
    hi = float(max(q.max(), q_prime.max())) + 60 * scale
    knots = np.concatenate([q, q_prime])
    return np.unique(np.concatenate([np.linspace(lo, hi, 20_001), knots[(knots > lo) & (knots < hi)]]))[1:]


def noisy_max_value_level_set(t: float, q: ArrayLike, q_prime: ArrayLike, scale: float,
                              noise: str = "laplace") -> tuple[float, float]:
    """(P(S_t), Q(S_t)) for the noisy max's value max_i q_i + scale * Z_i (StatDP's noisy_max_v1b,
    v2b), S_t = {x: ln p(x) - ln p'(x) > t} with p the density of the max: the sums of the increments
    of F and F' (F the max's CDF, prod_j F_j) over the intervals of S_t, whose ends are the sign
    changes of the smooth log-ratio on a 20,001-point grid, refined by Brent's method (relative
    tolerance 1e-14); beyond the grid the sign is taken as constant (the ratio has reached its tail
    limit to 1e-20)."""
    from scipy import optimize

    q, q_prime = _vectors(q, q_prime)
    scale = as_positive("scale", scale)
    _check_noise(noise)
    grid = _value_grid(q, q_prime, scale, noise)
    start = float(q.max()) if noise == "exponential" else -np.inf    # the max of q has no mass below
    ratio = noisy_max_value_log_ratio(grid, q, q_prime, scale, noise)

    def cdfs(x: float) -> tuple[float, ...]:                  # (F(x), F'(x))
        if x == np.inf:
            return 1.0, 1.0
        if x == -np.inf:
            return 0.0, 0.0
        return tuple(float(np.exp(_log_max_laws(np.array([x]), v, scale, noise)[0][0])) for v in (q, q_prime))

    positive = ratio > t
    ends = [start] if positive[0] else []
    for j in np.flatnonzero(positive[1:] != positive[:-1]):
        if math.isinf(ratio[j]) or math.isinf(ratio[j + 1]):
            ends.append(grid[j])           # p' starts at a knot of the grid (exponential noise)
        else:
            ends.append(optimize.brentq(lambda x: float(noisy_max_value_log_ratio(x, q, q_prime, scale, noise)[0]) - t,
                                        grid[j], grid[j + 1], xtol=1e-14 * scale, rtol=1e-14))
    if positive[-1]:
        ends.append(np.inf)
    masses = np.zeros(2)
    for a, b in zip(ends[::2], ends[1::2], strict=True):          # an even number of ends
        masses += np.subtract(cdfs(b), cdfs(a))
    return float(masses[0]), float(masses[1])


def noisy_max_value_delta(eps: ArrayLike, q: ArrayLike, q_prime: ArrayLike, scale: float,
                          noise: str = "laplace") -> float | np.ndarray:
    """delta(eps) of the noisy max's value: P(S_eps) - e^eps Q(S_eps) for the Neyman-Pearson event
    S_eps of `noisy_max_value_level_set` (absolute error about 1e-15)."""
    def one(e: float) -> float:
        p, p_prime = noisy_max_value_level_set(e, q, q_prime, scale, noise)
        return max(p - math.exp(e) * p_prime, 0.0)

    return _map(one, eps)


def noisy_max_value_epsilon(q: ArrayLike, q_prime: ArrayLike, scale: float, noise: str = "laplace") -> float:
    """sup_x ln p(x) / p'(x) for the noisy max's value. With exponential noise it is inf when
    max q < max q' (the max of q has mass where the max of q' has none) or when the maxima are
    equal, m, but fewer answers of q than of q' attain it (near m, p(x) ~ (x - m)^(count - 1)).
    Otherwise: the largest value of the log-ratio on `_value_grid`, refined by a bounded scalar search."""
    from scipy import optimize

    q, q_prime = _vectors(q, q_prime)
    scale = as_positive("scale", scale)
    _check_noise(noise)
    if noise == "exponential" and (q.max() < q_prime.max() or (
            q.max() == q_prime.max() and np.sum(q == q.max()) < np.sum(q_prime == q_prime.max()))):
        return math.inf
    grid = _value_grid(q, q_prime, scale, noise)
    values = noisy_max_value_log_ratio(grid, q, q_prime, scale, noise)
    j = int(np.argmax(values))
    a, b = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    best = optimize.minimize_scalar(lambda x: -float(noisy_max_value_log_ratio(x, q, q_prime, scale, noise)[0]),
                                    bounds=(a, b), method="bounded",
                                    options={"xatol": 1e-12 * scale})
    return float(max(values[j], -best.fun))


# -- sparse vector technique --------------------------------------------------------------------------
def svt_outcomes(k: int, cutoff: int | None) -> list[tuple[int, ...]]:
    """Every output of SVT on k queries as codes 1 (above), 0 (below), -1 (not answered after the
    cutoff-th 1); cutoff None = no cutoff."""
    out: list[tuple[int, ...]] = []

    def grow(prefix: list[int], ones: int) -> None:
        if len(prefix) == k:
            out.append(tuple(prefix))
        elif cutoff is not None and ones == cutoff:
            out.append(tuple(prefix) + (-1,) * (k - len(prefix)))
        else:
            grow(prefix + [1], ones + 1)
            grow(prefix + [0], ones)

    grow([], 0)
    return out


def svt_probabilities(q: ArrayLike, threshold: float, threshold_scale: float, query_scale: float,
                      cutoff: int | None) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """(outcomes, probabilities) of SVT with threshold noise rho ~ Lap(threshold_scale) and query
    noise nu_i ~ Lap(query_scale) (0: none, as in Lyu et al. 2017, Algorithm 5): answer i is 1 iff
    q_i + nu_i >= threshold + rho. Given rho = z the answers are independent, so
    P(o) = integral of f_rho(z) prod_i P(answer i = o_i | z) dz."""
    q = as_finite_array(q, "q").reshape(-1)
    threshold_scale = as_positive("threshold_scale", threshold_scale)
    query_scale = as_positive("query_scale", query_scale, allow_zero=True)
    pdf, cdf = _noise("laplace")
    knots = q - threshold

    def below(i: int, z: float) -> float:
        if query_scale == 0:
            return float(q[i] < threshold + z)
        return cdf((threshold + z - q[i]) / query_scale)

    def above(i: int, z: float) -> float:
        if query_scale == 0:
            return float(q[i] >= threshold + z)
        return cdf((q[i] - threshold - z) / query_scale)   # Laplace noise is symmetric

    outcomes = svt_outcomes(q.size, cutoff)
    probabilities = np.empty(len(outcomes))
    for n, codes in enumerate(outcomes):
        def f(z: float, codes: tuple[int, ...] = codes) -> float:
            value = pdf(z / threshold_scale) / threshold_scale
            for i, code in enumerate(codes):
                if code == 1:
                    value *= above(i, z)
                elif code == 0:
                    value *= below(i, z)
            return value

        probabilities[n] = _integral(f, [*knots, 0.0])
    return outcomes, probabilities


def _isvt4_laws(q: ArrayLike, q_prime: ArrayLike, threshold: float, threshold_scale: float,
                query_scale: float) -> tuple[tuple[float, ...], Callable[[np.ndarray, int, float], float], list[float]]:
    """((P(none), P'(none)), density(answers, j, v), value edges) of iSVT4 with c = 1 (`isvt4_delta`)."""
    q, q_prime = _vectors(q, q_prime)
    b1, b2 = as_positive("threshold_scale", threshold_scale), as_positive("query_scale", query_scale)
    pdf, cdf = _noise("laplace")
    knots = [*(q - threshold), *(q_prime - threshold), 0.0]

    def G(answers: np.ndarray, j: int, w: float) -> float:
        def f(z: float) -> float:
            return pdf(z / b1) / b1 * math.prod(cdf((threshold + z - a) / b2) for a in answers[:j])

        return _integral(f, knots, hi=w)

    def density(answers: np.ndarray, j: int, v: float) -> float:
        return pdf((v - answers[j]) / b2) / b2 * G(answers, j, v - threshold)

    none = tuple(G(answers, q.size, np.inf) for answers in (q, q_prime))
    return none, density, [-np.inf, *sorted({*q, *q_prime}), np.inf]


def isvt4_delta(eps: ArrayLike, q: ArrayLike, q_prime: ArrayLike, threshold: float, threshold_scale: float,
                query_scale: float) -> float | np.ndarray:
    """delta(eps) of iSVT4 with cutoff c = 1 (Lyu et al. 2017, Algorithm 3): the output is either
    'all below' or (j, v), the first answer above and its released value v = q_j + nu_j, with density
    p_j(v) = f_nu(v - q_j) G_j(v - T), G_j(w) = integral over z < w of f_rho(z) prod_{i<j} P(q_i + nu_i < T + z).
    delta = (P(none) - e^eps P'(none))_+ + sum_j integral of (p_j - e^eps p'_j)_+ dv, by nested
    adaptive quadrature (relative error about 1e-9: the outer integrand has kinks where p_j = e^eps p'_j)."""
    from scipy import integrate

    q, q_prime = _vectors(q, q_prime)
    none, density, edges = _isvt4_laws(q, q_prime, threshold, threshold_scale, query_scale)

    def one(e: float) -> float:
        total = max(0.0, none[0] - math.exp(e) * none[1])
        for j in range(q.size):

            def f(v: float) -> float:  # integrated right below, so the loop's current j
                return max(0.0, density(q, j, v) - math.exp(e) * density(q_prime, j, v))  # noqa: B023

            total += float(sum(integrate.quad(f, a, b, epsabs=1e-13, epsrel=1e-9, limit=100)[0]
                               for a, b in itertools.pairwise(edges)))
        return total

    return _map(one, eps)


def _isvt4_tables(q: ArrayLike, q_prime: ArrayLike, threshold: float, threshold_scale: float, query_scale: float,
                  points: int) -> tuple[np.ndarray, list[list[np.ndarray]], list[float]]:
    """(v, densities, none): the answer grid v, densities[side][j] = p_j(v) (`isvt4_delta`) of q and
    q' on it, and none[side] = P(all below), by the cumulative trapezoid rule over the threshold noise
    on `points` nodes (60 scales each side, the answers' kinks among them)."""
    from scipy import integrate

    q, q_prime = _vectors(q, q_prime)
    b1, b2 = as_positive("threshold_scale", threshold_scale), as_positive("query_scale", query_scale)
    both = np.concatenate([q, q_prime])
    z = np.unique(np.concatenate([np.linspace(-60 * b1, 60 * b1, points), both - threshold]))
    f_rho = 0.5 * np.exp(-np.abs(z) / b1) / b1

    def cdf(x: np.ndarray) -> np.ndarray:
        return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(x, 0.0)))

    v = np.unique(np.concatenate([np.linspace(both.min() - 60 * b2, both.max() + 60 * b2, points), both]))
    densities: list[list[np.ndarray]] = []
    none: list[float] = []
    for answers in (q, q_prime):
        below = np.ones_like(z)        # prod_{i<j} P(a_i + nu_i < T + z)
        per_j = []
        for j in range(q.size):
            G = np.concatenate([[0.0], integrate.cumulative_trapezoid(f_rho * below, z)])
            per_j.append(0.5 * np.exp(-np.abs(v - answers[j]) / b2) / b2 * np.interp(v - threshold, z, G))
            below = below * cdf((threshold + z - answers[j]) / b2)
        densities.append(per_j)
        none.append(float(integrate.trapezoid(f_rho * below, z)))
    return v, densities, none


def isvt4_level_set(t: float, q: ArrayLike, q_prime: ArrayLike, threshold: float, threshold_scale: float,
                    query_scale: float, points: int = 100_001) -> tuple[float, float]:
    """(P(S_t), Q(S_t)) of iSVT4 with c = 1, S_t = {p > e^t p'} (densities of `isvt4_delta`), on
    the tables of `_isvt4_tables`, then the trapezoid rule over v of p_j and p'_j times the
    indicator, plus 'all below' when it is in S_t. Absolute error about 1e-8 (at t = eps it
    reproduces `isvt4_delta` to that level), for a fraction of the nested quadrature's time."""
    from scipy import integrate

    v, densities, none = _isvt4_tables(q, q_prime, threshold, threshold_scale, query_scale, points)
    bound = math.exp(t)
    masses = np.array(none) if none[0] > bound * none[1] else np.zeros(2)
    for p, p_prime in zip(*densities, strict=True):
        inside = p > bound * p_prime
        masses += [integrate.trapezoid(np.where(inside, p, 0.0), v),
                   integrate.trapezoid(np.where(inside, p_prime, 0.0), v)]
    return float(masses[0]), float(masses[1])


def isvt4_log_ratio(first: ArrayLike, values: ArrayLike, q: ArrayLike, q_prime: ArrayLike, threshold: float,
                    threshold_scale: float, query_scale: float,
                    points: int = 100_001) -> np.ndarray:
    """ln p/p' of iSVT4 outputs with c = 1: `first` the index of the answer above the threshold (-1:
    all below) and `values` its released value, by linear interpolation of ln p_j - ln p'_j on the
    tables of `_isvt4_tables` (+-inf where one density vanishes)."""
    v, densities, none = _isvt4_tables(q, q_prime, threshold, threshold_scale, query_scale, points)
    first, values = np.asarray(first, dtype=int), np.asarray(values, dtype=float)
    out = np.full(first.shape, math.log(none[0]) - math.log(none[1]))
    with np.errstate(divide="ignore", invalid="ignore"):  # NaN only where neither side has mass
        for j, (p, p_prime) in enumerate(zip(*densities, strict=True)):
            at = first == j
            out[at] = np.interp(values[at], v, np.log(p) - np.log(p_prime))
    return out

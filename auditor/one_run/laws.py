"""Score laws with an exact privacy curve, to measure the coverage of the one-run estimators.

Each law is a mechanism that releases one canary's score: drawn from P if the canary is included,
from Q if it is left out. Its exact curve is the pair's, delta(eps) = max(H_eps(P || Q), H_eps(Q || P))
with the hockey-stick divergence H_eps(P || Q) = sum or integral of (p - e^eps q)_+, and `epsilon`
inverts it. Every one-run estimator sees exactly such scores, and a score is a post-processing of
whatever a real mechanism releases, so a certificate that holds for every law below holds in the
strictest reading of its claim.

* `GaussianScores`: N(mu, 1) against N(0, 1), the estimators' idealized setting (Balle & Wang 2018).
* `LaplaceScores`: Lap(eps0, 1) against Lap(0, 1), delta(eps) = 1 - e^((eps - eps0) / 2) on
  [0, eps0] (the Laplace mechanism's curve; e.g. Koskela, Jalko, Prediger & Honkela 2021, Sec. 5).
* `StudentScores`: a Student t location shift with 3 degrees of freedom (heavy tails, bounded loss).
* `RandomizedResponse`: 1 with probability e^eps0 / (1 + e^eps0) if included, 1 / (1 + e^eps0)
  if not, delta(eps) = (e^eps0 - e^eps) / (1 + e^eps0) (Kairouz, Oh & Viswanath 2015).
* `ClippedSums`: the sum of T steps, each a shifted standard normal clipped to [-1, 1] (a score that
  post-processes each noisy step: its privacy loss is bounded, while its bulk is close to Gaussian),
  optionally rounded to a lattice (then with many ties).
* `SubsampledSums`: the sum of T steps N(shift B_t, 1), B_t ~ Bernoulli(rate) if included (Poisson
  subsampling), 0 if not: a mixture of Gaussians against one Gaussian.

`calibrated(kind, eps, delta)` sets the law's free parameter so that its exact eps at delta is eps.
Continuous laws without a closed form are integrated by the trapezoid rule on a grid of 1/1000 of
their scale (relative error below 1e-5 in delta on the Gaussian's closed form; `_integrated`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from ...theory.gaussian import gaussian_delta, gaussian_epsilon, gaussian_mu

#: Grid points per unit of scale of the integrals of the continuous laws without a closed form.
POINTS_PER_SCALE = 1000
#: Mixture components lighter than e^-60 are left out (their total mass bounds the change in delta).
LOG_WEIGHT_MIN = -60.0


class ScoreLaw(ABC):
    """P (included) and Q (left out) of one canary's score."""

    def draw(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(scores, included) of m canaries, each included by a fair coin flip."""
        included = rng.random(m) < 0.5
        return self.sample(included, rng), included

    @abstractmethod
    def sample(self, included: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One score per canary, from P where `included`, else from Q."""

    @abstractmethod
    def delta(self, eps: float) -> float:
        """The exact delta(eps) of the pair, the larger of its two directions."""

    def epsilon(self, delta: float) -> float:
        """The exact eps at `delta`: the least eps >= 0 with delta(eps) <= delta."""
        if self.delta(0.0) <= delta:
            return 0.0
        hi = 1.0
        while self.delta(hi) > delta:
            hi *= 2
        return float(optimize.brentq(lambda eps: self.delta(eps) - delta, 0.0, hi, xtol=1e-10))


def _hockey_stick(p: np.ndarray, q: np.ndarray, weights: np.ndarray | float, eps: float) -> float:
    """max over the two directions of sum(weights (p - e^eps q)_+), from densities or masses."""
    return float(max(np.sum(weights * np.maximum(p - np.exp(eps) * q, 0.0)),
                     np.sum(weights * np.maximum(q - np.exp(eps) * p, 0.0))))


def _integrated(log_p, log_q, lo: float, hi: float, scale: float, eps: float) -> float:
    """`_hockey_stick` of two densities (functions of x giving log densities), by the trapezoid rule on
    [lo, hi] with `POINTS_PER_SCALE` points per `scale`: the integrand is smooth but at the two
    densities' crossings, so the error falls as the square of the step."""
    grid = np.arange(lo, hi, scale / POINTS_PER_SCALE)
    weights = np.full(grid.size, grid[1] - grid[0])
    weights[[0, -1]] /= 2
    return _hockey_stick(np.exp(log_p(grid)), np.exp(log_q(grid)), weights, eps)


@dataclass(frozen=True)
class GaussianScores(ScoreLaw):
    """N(mu, 1) if included, N(0, 1) if not."""

    mu: float

    def sample(self, included, rng):
        return rng.standard_normal(included.size) + self.mu * included

    def delta(self, eps):
        return float(gaussian_delta(eps, self.mu))

    def epsilon(self, delta):
        return float(gaussian_epsilon(delta, self.mu))


@dataclass(frozen=True)
class LaplaceScores(ScoreLaw):
    """Lap(eps0, 1) if included, Lap(0, 1) if not: eps0-DP."""

    eps0: float

    def sample(self, included, rng):
        return rng.laplace(size=included.size) + self.eps0 * included

    def delta(self, eps):
        return float(max(0.0, -np.expm1((eps - self.eps0) / 2)))

    def epsilon(self, delta):
        return float(max(0.0, self.eps0 + 2 * np.log1p(-delta)))


@dataclass(frozen=True)
class StudentScores(ScoreLaw):
    """shift + t(dof) if included, t(dof) if not: its privacy loss is bounded (pure DP), its tails heavy."""

    shift: float
    dof: float = 3.0

    def sample(self, included, rng):
        return rng.standard_t(self.dof, included.size) + self.shift * included

    def delta(self, eps):
        law, reach = stats.t(self.dof), 40.0 * max(1.0, self.shift)
        return _integrated(lambda x: law.logpdf(x - self.shift), law.logpdf, -reach, self.shift + reach, 1.0, eps)


@dataclass(frozen=True)
class RandomizedResponse(ScoreLaw):
    """Score 1 with probability e^eps0 / (1 + e^eps0) if included, 1 / (1 + e^eps0) if not; else 0."""

    eps0: float

    def sample(self, included, rng):
        truthful = rng.random(included.size) < special.expit(self.eps0)
        return (included == truthful).astype(float)

    def delta(self, eps):
        return float(max(0.0, (np.exp(self.eps0) - np.exp(eps)) / (1 + np.exp(self.eps0))))

    def epsilon(self, delta):
        return float(max(0.0, np.log(np.exp(self.eps0) - delta * (1 + np.exp(self.eps0)))))


@dataclass(frozen=True)
class ClippedSums(ScoreLaw):
    """The sum of `steps` values clip(shift + Z_t, -1, 1) if included, the same with shift 0 if not (Z_t
    standard normal), each rounded to a multiple of `resolution` when it is given (lattice scores, with
    many ties). The sum's law is that of the rounded steps, T-fold convolved (by FFT); without
    rounding it is computed on the lattice `FINE`, whose eps at delta = 1e-5 differs from that of
    the lattice twice as coarse by less than 2e-4 (measured at T = 5, 20 and 100 with shifts giving eps near
    2, 4 and 8 respectively)."""

    shift: float
    steps: int
    resolution: float | None = None

    #: The lattice on which the law of unrounded sums is computed.
    FINE = 1 / 1024

    def sample(self, included, rng):
        steps = np.clip(rng.standard_normal((included.size, self.steps)) + self.shift * included[:, None], -1.0, 1.0)
        if self.resolution is not None:
            steps = self.resolution * np.round(steps / self.resolution)
        return steps.sum(axis=1)

    def _sum_law(self, shift: float) -> np.ndarray:
        """The masses of the sum on its lattice: one step's cell masses, convolved `steps` times."""
        spacing = self.resolution or self.FINE
        points = np.arange(-1.0, 1.0 + spacing / 2, spacing)
        edges = np.r_[-np.inf, (points[:-1] + points[1:]) / 2, np.inf]
        step = np.diff(special.ndtr(edges - shift))
        size = self.steps * (points.size - 1) + 1
        return np.maximum(np.fft.irfft(np.fft.rfft(step, size) ** self.steps, size), 0.0)

    def delta(self, eps):
        return _hockey_stick(self._sum_law(self.shift), self._sum_law(0.0), 1.0, eps)


@dataclass(frozen=True)
class SubsampledSums(ScoreLaw):
    """The sum of `steps` values N(shift B_t, 1), B_t ~ Bernoulli(rate), if included; N(0, steps) if not."""

    shift: float
    steps: int
    rate: float

    def sample(self, included, rng):
        hits = rng.binomial(self.steps, self.rate, included.size) * included
        return rng.standard_normal(included.size) * np.sqrt(self.steps) + self.shift * hits

    def delta(self, eps):
        sd, hits = np.sqrt(self.steps), np.arange(self.steps + 1)
        log_weights = stats.binom.logpmf(hits, self.steps, self.rate)
        kept = log_weights > LOG_WEIGHT_MIN
        hits, log_weights = hits[kept], log_weights[kept]

        def log_p(x):
            return special.logsumexp(log_weights[:, None] + stats.norm.logpdf(x, self.shift * hits[:, None], sd), axis=0)

        return _integrated(log_p, lambda x: stats.norm.logpdf(x, 0.0, sd), -40 * sd, self.shift * hits[-1] + 40 * sd,
                           sd, eps)


#: The laws by name, each a function of its free parameter (and the fixed ones).
KINDS = {"gaussian": GaussianScores, "laplace": LaplaceScores, "student-t3": StudentScores,
         "randomized-response": RandomizedResponse, "clipped-sums": ClippedSums, "subsampled-sums": SubsampledSums}


def calibrated(kind: str, eps: float, delta: float, **fixed) -> ScoreLaw:
    """The law `kind` (a key of `KINDS`) whose exact eps at `delta` is `eps`; `fixed` sets its other
    parameters (steps, rate, ...). Where no closed form gives it, the free parameter (the first field,
    a shift) is the root of delta(eps) = `delta`, which grows with the shift."""
    if kind == "gaussian":
        return GaussianScores(float(gaussian_mu(eps, delta)))
    if kind == "laplace":
        return LaplaceScores(eps - 2 * float(np.log1p(-delta)))
    if kind == "randomized-response":
        return RandomizedResponse(float(np.log((np.exp(eps) + delta) / (1 - delta))))
    law = KINDS[kind]
    hi = 1.0
    while law(hi, **fixed).delta(eps) < delta:
        hi *= 2
        if hi > 2**10:
            raise ValueError(f"{kind} with {fixed} does not reach eps = {eps:g} at delta = {delta:g}")
    return law(float(optimize.brentq(lambda x: law(x, **fixed).delta(eps) - delta, 0.0, hi, xtol=1e-9)), **fixed)

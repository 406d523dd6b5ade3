"""The zoo: textbook DP algorithms and their published buggy variants, with known truth, to measure
an auditor's power (Dwork & Roth 2014; Lyu, Su & Li 2017, Algorithms 1 and 3-6; Ding, Wang, Wang,
Zhang & Kifer 2018, StatDP, Section 6; Bichsel, Steffen, Bogunovic & Vechev 2021, DP-Sniper, Table 2).

Input convention: D is a (1, k) dataset, its one row the k query answers q (the algorithms see
only q). Neighbours: D' is D with that row replaced (`neighbor = "replace"`) by q' with
||q - q'|| <= sensitivity in the mechanism's `norm` (`is_neighbour` checks it): the L1 norm for
the Laplace mechanism and the histogram (StatDP's ONE_DIFFER inputs: one count moves), L2 for the
Gaussian mechanism, L-infinity for report-noisy-max and SVT (StatDP's ALL_DIFFER inputs: every
query may move by up to its sensitivity).

Outputs are fixed-length float vectors: the Laplace/Gaussian/histogram noisy answers; the noisy
max's index (as a float) or value; SVT's answers as codes 1 (above), 0 (below), -1 (not answered
after the cutoff), and for iSVT4 the k codes followed by the k released noisy answers (0 where none).

Each mechanism states its claimed guarantee `claim()`, and `exact_delta(eps, D, D')` /
`exact_epsilon(D, D')` give its true curve from `ndis.theory.zoo` (iSVT4: delta for c = 1 only);
`level_set(t, D, D')` the masses under both inputs of the Neyman-Pearson event {ln p/q > t}, which
a Bayes-optimal score tests (Laplace-type mechanisms: one differing query).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import theory
from ..core.validation import as_data, as_finite_array, as_int, as_positive, as_probability
from ..theory import zoo as exact
from .base import Draw, Mechanism

#: StatDP's neighbouring inputs (Ding et al. 2018, Section 6.1; statdp/generators.py): D is all
#: ones except for "x shape"; each entry of D' - D is 0 or +-1 (times the sensitivity).
PATTERN_NAMES = ("one above", "one below", "one above rest below", "one below rest above", "half half",
                 "all above", "all below", "x shape")


def patterns(k: int = 5, sensitivity: float = 1.0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """StatDP's named neighbouring pairs {name: (D, D')} of (1, k) query-answer datasets."""
    k = as_int("k", k, minimum=2)
    s = as_positive("sensitivity", sensitivity)
    ones, half, first = np.ones(k), k // 2, np.arange(k) == 0
    pairs = {
        "one above": (ones, ones + first),
        "one below": (ones, ones - first),
        "one above rest below": (ones, np.where(first, 2.0, 0.0)),
        "one below rest above": (ones, np.where(first, 0.0, 2.0)),
        "half half": (ones, np.where(np.arange(k) < half, 2.0, 0.0)),
        "all above": (ones, 2.0 * ones),
        "all below": (ones, 0.0 * ones),
        "x shape": (np.where(np.arange(k) < half, 1.0, 0.0), np.where(np.arange(k) < half, 0.0, 1.0)),
    }
    return {name: (s * a.reshape(1, k), s * b.reshape(1, k)) for name, (a, b) in pairs.items()}


class ZooMechanism(Mechanism):
    """Common part of the zoo: a (1, k) query-answer input, the claim, the neighbour check."""

    neighbor = "replace"
    norm: float = math.inf        # the norm in which ||q - q'|| <= sensitivity
    correct: bool = True          # does the algorithm satisfy its claim?
    param_docs = {"eps0": "the privacy parameter the algorithm is run with (> 0)",
                  "sensitivity": "sensitivity of each query answer in the mechanism's norm (> 0, default 1)"}
    eps0: float
    sensitivity: float

    def __init__(self, eps0: float = 1.0, sensitivity: float = 1.0) -> None:
        self._set({"eps0": as_positive("eps0", eps0), "sensitivity": as_positive("sensitivity", sensitivity)})

    def claim(self, eps0: float | None = None) -> tuple[float, float]:
        """The (eps, delta) the algorithm is claimed to satisfy when run with eps0."""
        return (self.eps0 if eps0 is None else as_positive("eps0", eps0)), 0.0

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        D = as_data(D)
        if D.shape[0] != 1:
            raise ValueError(f"{self.name} takes one row of k query answers, shape (1, k); got shape {D.shape}")
        return D

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return (self._check_data(D).shape[1],)

    def is_neighbour(self, D: ArrayLike, D_prime: ArrayLike) -> bool:
        """||q - q'|| <= sensitivity in the mechanism's norm (relative tolerance 1e-12)."""
        q, q_prime = self._check_data(D)[0], self._check_data(D_prime)[0]
        if q.shape != q_prime.shape:
            return False
        return bool(np.linalg.norm(q - q_prime, ord=self.norm) <= self.sensitivity * (1 + 1e-12))

    def patterns(self, k: int = 5) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """StatDP's pairs (module-level `patterns`) that are neighbours under this mechanism's relation."""
        return {name: pair for name, pair in patterns(k, self.sensitivity).items() if self.is_neighbour(*pair)}

    def _pair(self, D: ArrayLike, D_prime: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        if not self.is_neighbour(D, D_prime):
            raise ValueError(f"D and D' are not neighbours of {self.name}: ||q - q'||_{self.norm} exceeds "
                             f"the sensitivity {self.sensitivity}")
        return self._check_data(D)[0], self._check_data(D_prime)[0]

    def exact_delta(self, eps: ArrayLike, D: ArrayLike, D_prime: ArrayLike) -> float | np.ndarray:
        """The true delta(eps) of the pair (D, D') in that direction (theory.zoo)."""
        return self._delta(eps, *self._pair(D, D_prime))

    def exact_epsilon(self, D: ArrayLike, D_prime: ArrayLike) -> float:
        """The true eps at delta = 0 of the pair (D, D') in that direction (inf if none is finite)."""
        return self._epsilon(*self._pair(D, D_prime))

    def level_set(self, t: float, D: ArrayLike, D_prime: ArrayLike) -> tuple[float, float]:
        """(P(S_t), Q(S_t)) of S_t = {ln p/q > t}, p and q the output laws on D and D' (theory.zoo)."""
        return self._level_set(float(t), *self._pair(D, D_prime))

    def log_ratio(self, X: np.ndarray, D: ArrayLike, D_prime: ArrayLike) -> np.ndarray:
        """ln p(x)/q(x) of each output row x of X, p and q the output laws on D and D' (theory.zoo):
        the Bayes-optimal score, whose level sets are the events of `level_set` (+-inf where only one
        law has mass)."""
        X = np.asarray(X, dtype=float).reshape(len(X), -1)
        return self._log_ratio(X, *self._pair(D, D_prime))

    def _log_ratio(self, X: np.ndarray, q: np.ndarray, q_prime: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{self.name} has no exact likelihood ratio")

    def _delta(self, eps: ArrayLike, q: np.ndarray, q_prime: np.ndarray) -> float | np.ndarray:
        raise NotImplementedError(f"{self.name} has no exact curve")

    def _level_set(self, t: float, q: np.ndarray, q_prime: np.ndarray) -> tuple[float, float]:
        raise NotImplementedError(f"{self.name} has no exact level sets")

    def _epsilon(self, q: np.ndarray, q_prime: np.ndarray) -> float:
        raise NotImplementedError(f"{self.name} has no exact curve")

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """One call of the algorithm per output, query by query as the paper writes it."""
        q = self._check_data(D)[0]
        shape = self.output_shape(D)
        return (lambda k, rng: np.stack([self._once(q, rng) for _ in range(k)])), shape, q.size + 1

    def _once(self, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError


# -- additive noise -----------------------------------------------------------------------------------
class ZooLaplace(ZooMechanism):
    name = "zoo-laplace"
    norm = 1.0
    summary = "zoo: the Laplace mechanism q + Lap(s/eps0)^k, claim eps0-DP, correct (Dwork & Roth 2014, Theorem 3.6)"

    def scale(self) -> float:
        return self.sensitivity / self.eps0

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        q, b = self._check_data(D)[0], self.scale()
        return (lambda k, rng: q + rng.laplace(0.0, b, (k, q.size))), (q.size,), q.size

    def _once(self, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.array([qi + rng.laplace(0.0, self.scale()) for qi in q])

    def _delta(self, eps: ArrayLike, q: np.ndarray, q_prime: np.ndarray) -> float | np.ndarray:
        return exact.laplace_delta(eps, q, q_prime, self.scale())

    def _epsilon(self, q: np.ndarray, q_prime: np.ndarray) -> float:
        return exact.laplace_epsilon(q, q_prime, self.scale())

    def _level_set(self, t: float, q: np.ndarray, q_prime: np.ndarray) -> tuple[float, float]:
        return exact.laplace_level_set(t, q, q_prime, self.scale())

    def _log_ratio(self, X: np.ndarray, q: np.ndarray, q_prime: np.ndarray) -> np.ndarray:
        return np.sum(np.abs(X - q_prime) - np.abs(X - q), axis=1) / self.scale()


class ZooLaplaceHalf(ZooLaplace):
    name = "zoo-laplace-half"
    correct = False
    summary = "zoo: Laplace with half the scale, q + Lap(s/(2 eps0))^k, claim eps0-DP, buggy (true eps 2 eps0)"

    def scale(self) -> float:
        return self.sensitivity / (2.0 * self.eps0)


class ZooHistogram(ZooLaplace):
    name = "zoo-histogram"
    summary = ("zoo: noisy histogram, counts + Lap(1/eps0) (neighbours move one count by s = 1), claim eps0-DP, "
               "correct (Dwork & Roth 2014, Section 3.3; DP-Sniper's NoisyHist1)")


class ZooHistogramEps(ZooLaplace):
    name = "zoo-histogram-eps"
    correct = False
    summary = ("zoo: noisy histogram with Lap(eps0) for Lap(1/eps0), claim eps0-DP, buggy for eps0 < 1: true eps "
               "1/eps0 (DP-Sniper's NoisyHist2; StatDP's histogram_eps)")

    def scale(self) -> float:
        return self.sensitivity * self.eps0


class ZooGaussian(ZooMechanism):
    name = "zoo-gaussian"
    norm = 2.0
    summary = ("zoo: the analytic Gaussian mechanism q + N(0, sigma^2 I), sigma for (eps0, delta0) and L2 "
               "sensitivity s, claim (eps0, delta0)-DP, correct (Balle & Wang 2018, Theorem 8)")
    param_docs = {**ZooMechanism.param_docs, "delta0": "the claimed delta in (0, 1) (default 1e-5)"}

    factor = 1.0                  # the sigma used, as a multiple of the calibrated one
    delta0: float
    _sigma: float

    def __init__(self, eps0: float = 1.0, sensitivity: float = 1.0, delta0: float = 1e-5) -> None:
        params = {"eps0": as_positive("eps0", eps0), "sensitivity": as_positive("sensitivity", sensitivity),
                  "delta0": as_probability("delta0", delta0)}
        sigma = self.factor * float(theory.gaussian_sigma(params["eps0"], params["delta0"], params["sensitivity"]))
        self._set(params, _sigma=sigma)

    def claim(self, eps0: float | None = None) -> tuple[float, float]:
        return (self.eps0 if eps0 is None else as_positive("eps0", eps0)), self.delta0

    def sigma(self) -> float:
        return self._sigma

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        q, sigma = self._check_data(D)[0], self.sigma()
        return (lambda k, rng: q + sigma * rng.standard_normal((k, q.size))), (q.size,), q.size

    def _once(self, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.array([qi + rng.normal(0.0, self.sigma()) for qi in q])

    def _delta(self, eps: ArrayLike, q: np.ndarray, q_prime: np.ndarray) -> float | np.ndarray:
        return exact.gaussian_shift_delta(eps, q, q_prime, self.sigma())

    def _epsilon(self, q: np.ndarray, q_prime: np.ndarray) -> float:
        return math.inf if np.any(q != q_prime) else 0.0

    def _level_set(self, t: float, q: np.ndarray, q_prime: np.ndarray) -> tuple[float, float]:
        return exact.gaussian_shift_level_set(t, q, q_prime, self.sigma())

    def _log_ratio(self, X: np.ndarray, q: np.ndarray, q_prime: np.ndarray) -> np.ndarray:
        return np.sum((X - q_prime) ** 2 - (X - q) ** 2, axis=1) / (2.0 * self.sigma() ** 2)


class ZooGaussianHalf(ZooGaussian):
    name = "zoo-gaussian-half"
    correct = False
    summary = "zoo: the Gaussian mechanism with half the calibrated sigma, claim (eps0, delta0)-DP, buggy"
    factor = 0.5


# -- report noisy max ---------------------------------------------------------------------------------
class ZooNoisyMaxLapIndex(ZooMechanism):
    name = "zoo-noisy-max-lap-index"
    noise = "laplace"
    returns = "index"
    summary = ("zoo: report noisy max, argmax q_i + Lap(2s/eps0), claim eps0-DP, correct "
               "(Dwork & Roth 2014, Claim 3.9; StatDP's noisy_max_v1a; DP-Sniper's ReportNoisyMax1)")

    def scale(self) -> float:
        return 2.0 * self.sensitivity / self.eps0

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        self._check_data(D)
        return (1,)

    def _noise(self, rng: np.random.Generator, size: tuple[int, ...] | None) -> Any:  # an array, or a float (size None)
        if self.noise == "laplace":
            return rng.laplace(0.0, self.scale(), size)
        return rng.exponential(self.scale(), size)

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        q = self._check_data(D)[0]

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            noisy = q + self._noise(rng, (k, q.size))
            best = noisy.max(axis=1) if self.returns == "value" else np.argmax(noisy, axis=1)
            return best.astype(float).reshape(k, 1)

        return draw, (1,), q.size

    def _once(self, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        best, where = -math.inf, -1
        for i, qi in enumerate(q):
            value = qi + float(self._noise(rng, None))
            if value > best:
                best, where = value, i
        return np.array([best if self.returns == "value" else float(where)])

    def _delta(self, eps: ArrayLike, q: np.ndarray, q_prime: np.ndarray) -> float | np.ndarray:
        if self.returns == "value":
            return exact.noisy_max_value_delta(eps, q, q_prime, self.scale(), self.noise)
        P = exact.noisy_max_index_probabilities(q, self.scale(), self.noise)
        Q = exact.noisy_max_index_probabilities(q_prime, self.scale(), self.noise)
        return exact.discrete_delta(eps, P, Q)

    def _epsilon(self, q: np.ndarray, q_prime: np.ndarray) -> float:
        if self.returns == "value":
            return exact.noisy_max_value_epsilon(q, q_prime, self.scale(), self.noise)
        P = exact.noisy_max_index_probabilities(q, self.scale(), self.noise)
        return exact.discrete_epsilon(P, exact.noisy_max_index_probabilities(q_prime, self.scale(), self.noise))

    def _level_set(self, t: float, q: np.ndarray, q_prime: np.ndarray) -> tuple[float, float]:
        if self.returns == "value":
            return exact.noisy_max_value_level_set(t, q, q_prime, self.scale(), self.noise)
        P = exact.noisy_max_index_probabilities(q, self.scale(), self.noise)
        return exact.discrete_level_set(t, P, exact.noisy_max_index_probabilities(q_prime, self.scale(), self.noise))

    def _log_ratio(self, X: np.ndarray, q: np.ndarray, q_prime: np.ndarray) -> np.ndarray:
        if self.returns == "value":
            return exact.noisy_max_value_log_ratio(X[:, 0], q, q_prime, self.scale(), self.noise)
        P, Q = (exact.noisy_max_index_probabilities(v, self.scale(), self.noise) for v in (q, q_prime))
        return (np.log(P) - np.log(Q))[X[:, 0].astype(int)]


class ZooNoisyMaxLapValue(ZooNoisyMaxLapIndex):
    name = "zoo-noisy-max-lap-value"
    returns = "value"
    correct = False
    summary = ("zoo: report noisy max returning the noisy max value max_i q_i + Lap(2s/eps0), claim eps0-DP, "
               "buggy (StatDP's noisy_max_v1b; DP-Sniper's ReportNoisyMax3)")


class ZooNoisyMaxExpIndex(ZooNoisyMaxLapIndex):
    name = "zoo-noisy-max-exp-index"
    noise = "exponential"
    summary = ("zoo: report noisy max with exponential noise, argmax q_i + Exp(2s/eps0), claim eps0-DP, correct "
               "(StatDP's noisy_max_v2a; DP-Sniper's ReportNoisyMax2)")


class ZooNoisyMaxExpValue(ZooNoisyMaxLapIndex):
    name = "zoo-noisy-max-exp-value"
    noise = "exponential"
    returns = "value"
    correct = False
    summary = ("zoo: report noisy max with exponential noise returning the value, claim eps0-DP, buggy: "
               "infinite eps at delta 0 (StatDP's noisy_max_v2b; DP-Sniper's ReportNoisyMax4)")


# -- sparse vector technique --------------------------------------------------------------------------
class ZooSVT(ZooMechanism):
    """SVT: rho ~ Lap(threshold scale); answer i is 1 iff q_i + nu_i >= T + rho, nu_i ~ Lap(query
    scale); stop after c answers 1 (no cutoff: c = None)."""

    name = "zoo-svt"
    summary = ("zoo: SVT, rho ~ Lap(2s/eps0), nu_i ~ Lap(4cs/eps0), stop after c answers 'above', claim eps0-DP, "
               "correct (Lyu, Su & Li 2017, Algorithm 1 with eps1 = eps2 = eps0/2; StatDP's SVT)")
    param_docs = {**ZooMechanism.param_docs,
                  "c": "the cutoff: answers 'above' before stopping (integer >= 1, default 1)",
                  "T": "the threshold (default 1)"}
    has_cutoff = True
    c: int
    T: float

    def __init__(self, eps0: float = 1.0, sensitivity: float = 1.0, c: int = 1, T: float = 1.0) -> None:
        self._set({"eps0": as_positive("eps0", eps0), "sensitivity": as_positive("sensitivity", sensitivity),
                   "c": as_int("c", c), "T": float(as_finite_array(T, "T"))})

    def scales(self) -> tuple[float, float]:
        """(threshold noise scale, query noise scale)."""
        return 2.0 * self.sensitivity / self.eps0, 4.0 * self.c * self.sensitivity / self.eps0

    def cutoff(self) -> int | None:
        return self.c if self.has_cutoff else None

    def _answers(self, q: np.ndarray, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(codes, noisy answers), each (k, len(q)), from vectorised noise."""
        b1, b2 = self.scales()
        rho = rng.laplace(0.0, b1, (k, 1))
        noisy = q + (rng.laplace(0.0, b2, (k, q.size)) if b2 > 0 else 0.0)
        above = noisy >= self.T + rho
        reached = np.ones_like(above) if self.cutoff() is None else (np.cumsum(above, axis=1) - above) < self.cutoff()
        return np.where(reached, above.astype(float), -1.0), np.where(reached & above, noisy, 0.0)

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        q = self._check_data(D)[0]
        return (lambda k, rng: self._answers(q, k, rng)[0]), (q.size,), q.size + 1

    def _run(self, q: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(codes, noisy answers released at the codes 1) of one call, query by query."""
        b1, b2 = self.scales()
        noisy_T = self.T + rng.laplace(0.0, b1)
        codes, values, count = -np.ones(q.size), np.zeros(q.size), 0
        cutoff = self.cutoff()
        for i, qi in enumerate(q):
            answer = qi + (rng.laplace(0.0, b2) if b2 > 0 else 0.0)
            if answer >= noisy_T:
                codes[i], values[i], count = 1.0, answer, count + 1
                if cutoff is not None and count >= cutoff:
                    break
            else:
                codes[i] = 0.0
        return codes, values

    def _once(self, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self._run(q, rng)[0]

    def _probabilities(self, q: np.ndarray) -> np.ndarray:
        return _svt_probabilities(tuple(q), self.T, *self.scales(), self.cutoff())

    def _delta(self, eps: ArrayLike, q: np.ndarray, q_prime: np.ndarray) -> float | np.ndarray:
        return exact.discrete_delta(eps, self._probabilities(q), self._probabilities(q_prime))

    def _epsilon(self, q: np.ndarray, q_prime: np.ndarray) -> float:
        return exact.discrete_epsilon(self._probabilities(q), self._probabilities(q_prime))

    def _level_set(self, t: float, q: np.ndarray, q_prime: np.ndarray) -> tuple[float, float]:
        return exact.discrete_level_set(t, self._probabilities(q), self._probabilities(q_prime))

    def _log_ratio(self, X: np.ndarray, q: np.ndarray, q_prime: np.ndarray) -> np.ndarray:
        """Outcomes looked up by their codes read as base-3 digits (code + 1)."""
        outcomes = exact.svt_outcomes(q.size, self.cutoff())
        with np.errstate(divide="ignore", invalid="ignore"):  # NaN: outcomes neither input produces
            ratios = np.log(self._probabilities(q)) - np.log(self._probabilities(q_prime))
        table = np.full(3**q.size, np.nan)
        table[(np.array(outcomes) + 1) @ 3 ** np.arange(q.size)] = ratios
        return table[(X[:, :q.size].astype(int) + 1) @ 3 ** np.arange(q.size)]


class ZooISVT1(ZooSVT):
    name = "zoo-isvt1"
    correct = False
    has_cutoff = False
    summary = ("zoo: iSVT1, no noise on the queries and no cutoff, claim eps0-DP, buggy: infinite eps "
               "(Lyu et al. 2017, Algorithm 5, after Stoddard et al. 2014; StatDP's iSVT1)")

    def scales(self) -> tuple[float, float]:
        return 2.0 * self.sensitivity / self.eps0, 0.0


class ZooISVT2(ZooSVT):
    name = "zoo-isvt2"
    correct = False
    has_cutoff = False
    summary = ("zoo: iSVT2, nu_i ~ Lap(2s/eps0) and no cutoff, claim eps0-DP, buggy: eps grows with k "
               "(Lyu et al. 2017, Algorithm 6, after Chen et al. 2015; StatDP's iSVT2)")

    def scales(self) -> tuple[float, float]:
        return 2.0 * self.sensitivity / self.eps0, 2.0 * self.sensitivity / self.eps0


class ZooISVT3(ZooSVT):
    name = "zoo-isvt3"
    correct = False
    summary = ("zoo: iSVT3, rho ~ Lap(4s/eps0), nu_i ~ Lap(4s/(3 eps0)) not scaled with c, claim eps0-DP, buggy: "
               "((1 + 6c)/4) eps0-DP (Lyu et al. 2017, Algorithm 4, after Lee & Clifton 2014; StatDP's iSVT3)")

    def scales(self) -> tuple[float, float]:
        return 4.0 * self.sensitivity / self.eps0, 4.0 * self.sensitivity / (3.0 * self.eps0)


class ZooISVT4(ZooSVT):
    name = "zoo-isvt4"
    correct = False
    summary = ("zoo: iSVT4, SVT releasing the noisy answer q_i + nu_i instead of 'above', nu_i ~ Lap(2cs/eps0), "
               "claim eps0-DP, buggy (Lyu et al. 2017, Algorithm 3, after Roth 2011; StatDP's iSVT4); "
               "output: k codes then k released answers (0 where none)")

    def scales(self) -> tuple[float, float]:
        return 2.0 * self.sensitivity / self.eps0, 2.0 * self.c * self.sensitivity / self.eps0

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return (2 * self._check_data(D).shape[1],)

    def _delta(self, eps: ArrayLike, q: np.ndarray, q_prime: np.ndarray) -> float | np.ndarray:
        if self.c != 1:
            raise NotImplementedError("zoo-isvt4 has an exact curve for c = 1 only; see codes_delta")
        return exact.isvt4_delta(eps, q, q_prime, self.T, *self.scales())

    def _epsilon(self, q: np.ndarray, q_prime: np.ndarray) -> float:
        raise NotImplementedError("zoo-isvt4 has no exact eps at delta 0 (continuous answers)")

    def _level_set(self, t: float, q: np.ndarray, q_prime: np.ndarray) -> tuple[float, float]:
        if self.c != 1:
            raise NotImplementedError("zoo-isvt4 has exact level sets for c = 1 only")
        return exact.isvt4_level_set(t, q, q_prime, self.T, *self.scales())

    def _log_ratio(self, X: np.ndarray, q: np.ndarray, q_prime: np.ndarray) -> np.ndarray:
        if self.c != 1:
            raise NotImplementedError("zoo-isvt4 has an exact likelihood ratio for c = 1 only")
        codes, values = X[:, :q.size], X[:, q.size:]
        above = codes == 1
        first = np.where(above.any(axis=1), np.argmax(above, axis=1), -1)
        released = values[np.arange(len(X)), np.maximum(first, 0)]
        return exact.isvt4_log_ratio(first, released, q, q_prime, self.T, *self.scales())

    def codes_delta(self, eps: ArrayLike, D: ArrayLike, D_prime: ArrayLike) -> float | np.ndarray:
        """The exact delta(eps) of the k codes alone, a post-processing of the output, hence a lower
        bound on the true delta."""
        return super()._delta(eps, *self._pair(D, D_prime))

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        q = self._check_data(D)[0]
        return (lambda k, rng: np.hstack(self._answers(q, k, rng))), (2 * q.size,), q.size + 1

    def _once(self, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.concatenate(self._run(q, rng))


@functools.lru_cache(maxsize=256)
def _svt_probabilities(q: tuple[float, ...], T: float, threshold_scale: float, query_scale: float,
                       cutoff: int | None) -> np.ndarray:
    return exact.svt_probabilities(np.array(q), T, threshold_scale, query_scale, cutoff)[1]


CLASSES: tuple[type[ZooMechanism], ...] = (
    ZooLaplace, ZooLaplaceHalf, ZooGaussian, ZooGaussianHalf, ZooNoisyMaxLapIndex, ZooNoisyMaxLapValue,
    ZooNoisyMaxExpIndex, ZooNoisyMaxExpValue, ZooHistogram, ZooHistogramEps, ZooSVT, ZooISVT1, ZooISVT2,
    ZooISVT3, ZooISVT4,
)

"""The exact finite-r spectrum of ALS with a Gaussian sketch (derived here, beyond the papers,
which use its normal limit).

w is orthogonal to col(B), so Pi B and Pi w are independent: given W = (Pi B)^T Pi B ~ Wishart_p(r, M),
x_tilde - x_opt ~ N(0, ||w||^2 W^{-1}); marginally x_tilde is multivariate t with nu = r - p + 1
degrees of freedom, location x_opt and scale ||w||^2 M^{-1} / nu. For D and D' the two t laws share
nu, so the privacy loss is

    L(x) = (1/2) ln det S_Q/det S_P - ((nu + p)/2) [ln(1 + q_P(x)/nu) - ln(1 + q_Q(x)/nu)],
    q_P(x) = (x - x_opt)^T S_P^{-1} (x - x_opt),

and delta(eps) = E_P[(1 - e^{eps - L})_+] is estimated by Monte Carlo with a confidence interval, to
show how far the asymptotic normal curve (`theory.als_delta`) is from the truth at a given r.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..core.curve import Curve
from ..core.validation import Seed, as_data, as_eps
from .leverage import augment, ols_fit, split_regression


@dataclass(frozen=True)
class ExactALSSpectrum(Curve):
    """Monte-Carlo spectrum of the exact ALS law: estimates and (1 - alpha) intervals per eps."""

    forward_interval: tuple[np.ndarray, np.ndarray]
    reverse_interval: tuple[np.ndarray, np.ndarray]
    confidence: float
    n_samples: int

    @property
    def interval(self) -> tuple[np.ndarray, np.ndarray]:
        """An interval for max(forward, reverse) (each side holds with the stated confidence)."""
        return (np.maximum(self.forward_interval[0], self.reverse_interval[0]),
                np.maximum(self.forward_interval[1], self.reverse_interval[1]))


class _TLaw:
    """Multivariate t: location, scale matrix S = ||w||^2 M^{-1} / nu, nu degrees of freedom."""

    def __init__(self, D: np.ndarray, r: int) -> None:
        B, b = split_regression(D)
        x_opt, w, _, R = ols_fit(B, b)
        self.p = B.shape[1]
        self.nu = r - self.p + 1
        self.loc = x_opt
        self.w2 = float(w @ w)
        self.R = R                                                  # M = R^T R
        # ln det S = p ln(||w||^2 / nu) - ln det M
        self.logdet = self.p * np.log(self.w2 / self.nu) - 2.0 * np.sum(np.log(np.abs(np.diag(R))))

    def quad(self, x: np.ndarray) -> np.ndarray:
        """(x - loc)^T S^{-1} (x - loc) = nu ||R (x - loc)||^2 / ||w||^2 for rows x."""
        y = (x - self.loc) @ self.R.T
        return self.nu * np.einsum("ij,ij->i", y, y) / self.w2

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        from scipy import linalg

        z = linalg.solve_triangular(self.R, rng.standard_normal((self.p, n))).T   # N(0, M^{-1})
        scale = np.sqrt(self.w2 / rng.chisquare(self.nu, n))
        return self.loc + z * scale[:, None]


def _loss(x: np.ndarray, first: _TLaw, second: _TLaw) -> np.ndarray:
    power = 0.5 * (first.nu + first.p)
    return (0.5 * (second.logdet - first.logdet)
            - power * (np.log1p(first.quad(x) / first.nu) - np.log1p(second.quad(x) / second.nu)))


def _estimate(first: _TLaw, second: _TLaw, eps: np.ndarray, n: int, rng: np.random.Generator,
              chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of (1 - e^{eps - L})_+ over n draws from `first`."""
    total = np.zeros(eps.size)
    square = np.zeros(eps.size)
    for start in range(0, n, chunk):
        loss = _loss(first.sample(min(chunk, n - start), rng), first, second)
        values = -np.expm1(np.minimum(eps[:, None] - loss[None, :], 0.0))
        total += values.sum(axis=1)
        square += (values**2).sum(axis=1)
    mean = total / n
    return mean, np.maximum(square / n - mean**2, 0.0)


def als_exact_delta(eps: ArrayLike, D: ArrayLike, row: int, r: int, n_samples: int = 10**6, seed: Seed = None,
                    confidence: float = 0.95, ridge: float = 0.0) -> ExactALSSpectrum:
    """Exact spectrum of ALS (Gaussian sketch, r rows) between D and D minus `row` (or row zeroed:
    the same law, since a zero row adds nothing to B^T B or B^T b), both directions, by Monte Carlo
    of the exact t-law privacy loss with normal-approximation intervals at `confidence` for each eps. ridge > 0
    runs on [D; ridge I]."""
    from scipy import stats

    eps = as_eps(eps).reshape(-1)
    D = as_data(D, min_cols=2)
    if not 0 <= row < D.shape[0]:
        raise ValueError(f"row must be in [0, {D.shape[0]}), got {row}")
    if r <= D.shape[1]:
        raise ValueError(f"the exact ALS law needs r > p + 1 = {D.shape[1]}, got r={r}")
    if n_samples < 100:
        raise ValueError(f"n_samples must be at least 100, got {n_samples}")
    full = _TLaw(augment(D, ridge), r)
    reduced = _TLaw(augment(np.delete(D, row, axis=0), ridge), r)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_samples, 4_000_000 // max(eps.size, 1)))
    z = stats.norm.ppf(0.5 + confidence / 2.0)
    results = []
    for first, second in ((full, reduced), (reduced, full)):
        mean, var = _estimate(first, second, eps, n_samples, rng, chunk)
        half = z * np.sqrt(var / n_samples)
        results.append((mean, (np.maximum(mean - half, 0.0), np.minimum(mean + half, 1.0))))
    (fwd, fwd_ci), (rev, rev_ci) = results
    return ExactALSSpectrum(eps, fwd, rev, fwd_ci, rev_ci, confidence, n_samples)

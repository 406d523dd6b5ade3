"""Showkatbakhsh, Karakus & Diggavi (2018) [ISIT18]: linear regression under MI-DP by additive
noise (AN) or a Gaussian projection followed by noise (RP). The calibrations and conversions are in
`theory.isit18`.

* `isit18-an`: X_AN = X + sigma_AN N, sigma_AN^2 = 1 / (2^{2 eps_MI} - 1) (eqs. 8-9).
* `isit18-rp`: X_RP = S X + sigma_RP N, y_RP = S y, S (n' x n) and N i.i.d. N(0, 1),
  sigma_RP^2 = (n' / (2^{2 eps_MI} - 1) - f(X)^2)_+ (eq. 13; f column-wise, as the proof of Lemma 2 requires).

The privacy unit is one entry of X, |X_ij| <= 1 (relation `entry`); y is not private. Data layout:
output="release" takes D = X (n x d); "release-y" and "regression" take D = [X, y] (the label last)
and release [X_RP, y_RP] (n' x (d+1)) or the least-squares solution theta (d,) of eq. 10 / 14.

Structural identities (derived here): X_RP = [S N] [X; sigma I_d], so `isit18-rp` is the Gaussian RP of
the augmented data [D; sigma (I_d, 0)] (rows i.i.d. N(0, D^T D + diag(sigma^2 I_d, 0)), exact), and
theta_RP is ALS of that augmented data (sketched ridge, lambda = sigma^2). Both reuse `mechanisms.rp`
and `mechanisms.als`.

sigma_mode: "data" recomputes sigma_RP from f(X) of each input (the paper's rule; D and D'
may get different sigmas, also after `fixed_for`); "fixed" (default) uses one sigma for every dataset:
from `sigma`, else from the reference value `f`. f=None is the data-dependent default f(X) of the
input, which `fixed_for(D)` pins to the reference dataset D; f=0 is the data-free calibration, valid
for every database.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import theory
from ..core import neighbors
from ..core.validation import as_choice, as_data, as_int, as_positive, as_probability, one_setting, optional
from ..theory.gaussian_pair import GaussianLaw
from ..theory.isit18 import entry_flip_eigenvalues, flip_value, mi_delta, mi_noise_variance, rp_noise_variance
from .als import ApproximateLeastSquares, sketched_solutions
from .base import Draw, Mechanism
from .neighbors import row_pair
from .noisy_release import FOCUS_DOC, Focus, NoisyRelease, as_focus
from .rp import RandomProjection, gram_features


def check_entries(X: np.ndarray) -> None:
    """[ISIT18] assumes |X_ij| <= 1 (the MI bounds use it)."""
    if np.max(np.abs(X), initial=0.0) > 1.0 + 1e-12:
        raise ValueError("the schemes of Showkatbakhsh et al. (2018) need every entry of X in [-1, 1] (|X_ij| <= 1); "
                         "rescale the data")


def augmented(D: np.ndarray, sigma: float, d: int) -> np.ndarray:
    """[D; sigma (I_d, 0)]: d public rows that add N(0, sigma^2) noise to the first d columns only."""
    rows = np.zeros((d, D.shape[1]))
    rows[:, :d] = sigma * np.eye(d)
    return np.vstack([D, rows])


class _ISIT18:
    """Shared parameter handling: eps_MI given directly or by the (eps, delta) conversion of Lu et al. (2023) [NDIS]."""

    name: str
    output: str
    eps_mi: float | None
    eps: float | None
    delta: float | None
    sigma: float | None

    def _eps_mi(self) -> float:
        if self.eps_mi is not None:
            return self.eps_mi
        assert self.eps is not None and self.delta is not None  # given when eps_mi is not (`one_setting`)
        return theory.isit18_mi_epsilon(self.eps, self.delta)

    def _privacy_params(self, eps_mi: float | None, eps: float | None, delta: float | None,
                        sigma: float | None) -> dict[str, Any]:
        params = {"eps_mi": optional(as_positive, "eps_mi", eps_mi), "eps": optional(as_positive, "eps", eps),
                  "delta": optional(as_probability, "delta", delta),
                  "sigma": optional(as_positive, "sigma", sigma, True)}
        one_setting(self.name, {key: params[key] for key in ("sigma", "eps_mi", "eps", "delta")},
                    ("sigma",), ("eps_mi",), ("eps", "delta"))
        return params

    def _split(self, D: np.ndarray) -> np.ndarray:
        """The private part X of D (all of D for "release", else all but the label column)."""
        X = D if self.output == "release" else D[:, :-1]
        check_entries(X)
        return X

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        D = as_data(D, min_cols=1 if self.output == "release" else 2)
        self._split(D)
        return D

    def mi_delta(self, corrected: bool = False) -> float:
        """The paper's TV (= delta(0)) guarantee for entry neighbours, printed or corrected."""
        return mi_delta(self._eps_mi(), corrected)


_PRIVACY_DOCS = {
    "eps_mi": "MI-DP level eps_MI in bits (> 0)",
    "eps": "alternatively: target eps, converted to eps_MI as the code of Lu et al. (2023) [NDIS] does (with delta)",
    "delta": "alternatively: target delta for that conversion",
    "sigma": "explicit noise standard deviation, instead of eps_mi or eps and delta (default None)",
}


class ISIT18AdditiveNoise(_ISIT18, NoisyRelease):
    name = "isit18-an"
    neighbor = "entry"
    summary = ("Showkatbakhsh et al. 2018 AN: X + sigma_AN N (n x d), sigma_AN^2 = 1/(2^{2 eps_MI} - 1); or its OLS "
               "theta_AN (eq. 10)")
    param_docs = {**_PRIVACY_DOCS,
                  "output": "'release' (D = X, output X_AN) or 'regression' (D = [X, y], output lstsq(X_AN, y))",
                  "focus": FOCUS_DOC}

    def __init__(self, eps_mi: float | None = None, eps: float | None = None, delta: float | None = None,
                 sigma: float | None = None, output: str = "release", focus: Focus | str | None = None) -> None:
        self._set({**self._privacy_params(eps_mi, eps, delta, sigma),
                   "output": as_choice("output", output, ("release", "regression")), "focus": as_focus(focus)})

    def noise_scale(self, D: np.ndarray) -> float:
        return self.sigma if self.sigma is not None else float(np.sqrt(mi_noise_variance(self._eps_mi())))

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        D = self._check_data(D)
        return D.shape if self.output == "release" else (D.shape[1] - 1,)

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        if self.output == "release":
            return super()._fast(D)
        return self._fast_regression(D)

    def _fast_regression(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """theta_AN without forming X_AN: with Q an orthonormal basis of col([X, y]), Q^T X = R_x,
        Q^T y = r_y, Z1 = Q^T N (k x d) and W = N^T (I - QQ^T) N ~ Wishart_d(n - k, I) independent,
        X_AN^T X_AN = (R_x + sigma Z1)^T (R_x + sigma Z1) + sigma^2 W and X_AN^T y = (R_x + sigma Z1)^T r_y.
        O(d^3) per sample (Bartlett decomposition of W), independent of n."""
        X, y = D[:, :-1], D[:, -1]
        n, d = X.shape
        Q, R = np.linalg.qr(D)
        keep = np.abs(np.diag(R)) > 1e-12 * max(np.abs(R).max(), 1e-300)
        Q = Q[:, keep]
        k = Q.shape[1]
        Rx, ry = Q.T @ X, Q.T @ y
        sigma, df = self.noise_scale(D), n - k

        def draw(m: int, rng: np.random.Generator) -> np.ndarray:
            Z = Rx + sigma * rng.standard_normal((m, k, d))
            gram = np.einsum("mki,mkj->mij", Z, Z) + sigma**2 * wishart_identity(m, d, df, rng)
            rhs = np.einsum("mki,k->mi", Z, ry)
            return np.linalg.solve(gram, rhs[..., None])[..., 0]

        return draw, (d,), k * d + d * d

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        if self.output == "release":
            return super()._literal(D)
        X, y = D[:, :-1], D[:, -1]
        sigma = self.noise_scale(D)

        def draw(m: int, rng: np.random.Generator) -> np.ndarray:
            return np.stack([np.linalg.lstsq(X + sigma * rng.standard_normal(X.shape), y, rcond=None)[0]
                             for _ in range(m)])

        return draw, (X.shape[1],), X.size

    def output_law(self, D: ArrayLike) -> GaussianLaw | None:
        """Exact N(vec X, sigma^2 I) (of the focus coordinates if set); None for theta_AN, an
        errors-in-variables OLS without a Gaussian law."""
        D = self._check_data(D)
        return super().output_law(D) if self.output == "release" else None

    def features(self, samples: np.ndarray) -> np.ndarray:
        if self.output == "regression":
            return np.asarray(samples, dtype=float).reshape(len(samples), -1)
        return super().features(samples)

    def worst_entry(self, D: ArrayLike) -> tuple[int, int, float]:
        """(i, j, new value): the entry with the largest |X_ij| flipped to -sign(X_ij), the largest
        change |t| = 1 + |X_ij| <= 2, i.e. mu = |t| / sigma_AN."""
        X = self._split(self._check_data(D))
        i, j = np.unravel_index(int(np.argmax(np.abs(X))), X.shape)
        return int(i), int(j), float(flip_value(X[i, j]))

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """entry: `worst_entry`; replace: the row maximising sum_j (1 + |X_ij|)^2, every entry flipped;
        zero: the row of largest norm."""
        relation = self._relation(relation)
        D = self._check_data(D)
        X = self._split(D)
        out = D.copy()
        if relation == "entry":
            i, j, value = self.worst_entry(D)
            out[i, j] = value
            return i, out
        if relation == "replace":
            i = int(np.argmax(np.sum((1.0 + np.abs(X)) ** 2, axis=1)))
            out[i, :X.shape[1]] = flip_value(X[i])
            return i, out
        if relation == "zero":
            return row_pair(D, int(np.argmax(np.einsum("ij,ij->i", X, X))), relation)
        return None


def wishart_identity(m: int, d: int, df: int, rng: np.random.Generator) -> np.ndarray:
    """m draws of Wishart_d(df, I) (shape (m, d, d)): Bartlett L L^T when df >= d, else G^T G."""
    if df <= 0:
        return np.zeros((m, d, d))
    if df < d:
        G = rng.standard_normal((m, df, d))
        return np.einsum("mki,mkj->mij", G, G)
    L = np.tril(rng.standard_normal((m, d, d)), -1)
    idx = np.arange(d)
    L[:, idx, idx] = np.sqrt(rng.chisquare(df - idx, size=(m, d)))
    return L @ np.swapaxes(L, 1, 2)


class ISIT18Projection(_ISIT18, Mechanism):
    name = "isit18-rp"
    neighbor = "entry"
    summary = ("Showkatbakhsh et al. 2018 RP: S X + sigma_RP N (n' x d), S i.i.d. N(0,1) secret, "
               "sigma_RP^2 = (n'/(2^{2 eps_MI}-1) - f^2)_+; optionally with y_RP = S y, or the regression theta_RP "
               "(eq. 14)")
    param_docs = {"r": "projection dimension n' (int >= 1)", **_PRIVACY_DOCS,
                  "sigma_mode": "'fixed' (one sigma for every dataset, from sigma or f; default) or 'data' "
                                "(recomputed from f(X) of each input, the paper's rule)",
                  "f": "reference f(X) for sigma_mode='fixed' (default None = f of the data, pinned by fixed_for(D); "
                       "0 = data-free)",
                  "output": "'release' (D = X -> X_RP), 'release-y' (D = [X, y] -> [X_RP, y_RP]) or "
                            "'regression' (D = [X, y] -> theta_RP)"}
    r: int
    sigma_mode: str
    f: float | None

    def __init__(self, r: int, eps_mi: float | None = None, eps: float | None = None, delta: float | None = None,
                 sigma: float | None = None, sigma_mode: str = "fixed", f: float | None = None,
                 output: str = "release") -> None:
        self._set({"r": as_int("r", r), **self._privacy_params(eps_mi, eps, delta, sigma),
                   "sigma_mode": as_choice("sigma_mode", sigma_mode, ("fixed", "data")),
                   "f": optional(as_positive, "f", f, True),
                   "output": as_choice("output", output, ("release", "release-y", "regression"))})

    def _data_defaults(self, D: np.ndarray) -> dict[str, Any]:
        """sigma_mode="fixed" with f=None: f(X) of D, pinned by `fixed_for(D)` (the reference dataset)."""
        if self.sigma is None and self.sigma_mode == "fixed" and self.f is None:
            return {"f": theory.isit18_column_bound(self._split(D))}
        return {}

    def noise_scale(self, D: np.ndarray) -> float:
        if self.sigma is not None:
            return self.sigma
        if self.sigma_mode == "data" or self.f is None:
            f = theory.isit18_column_bound(self._split(D))
        else:
            f = self.f
        return float(np.sqrt(rp_noise_variance(self._eps_mi(), self.r, f)))

    def _inner(self, D: np.ndarray) -> tuple[Mechanism, np.ndarray]:
        """(the rp / als mechanism, the augmented data [D; sigma (I_d, 0)]) of the structural identities above."""
        X = self._split(D)
        tilde = augmented(D, self.noise_scale(D), X.shape[1])
        inner = ApproximateLeastSquares(self.r) if self.output == "regression" else RandomProjection(self.r)
        return inner, tilde

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        D = self._check_data(D)
        return (D.shape[1] - 1,) if self.output == "regression" else (self.r, D.shape[1])

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        inner, tilde = self._inner(D)
        return inner._fast(tilde)

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """eq. 12 as written: fresh S (n' x n) and N (n' x d) per release; y_RP = S y; eq. 14 by QR."""
        X = self._split(D)
        sigma, r, (n, d) = self.noise_scale(D), self.r, X.shape

        def draw(m: int, rng: np.random.Generator) -> np.ndarray:
            S = rng.standard_normal((m, r, n))
            out = S @ D
            out[..., :d] += sigma * rng.standard_normal((m, r, d))
            return sketched_solutions(out) if self.output == "regression" else out

        shape = (D.shape[1] - 1,) if self.output == "regression" else (r, D.shape[1])
        return draw, shape, r * (n + d)

    def output_law(self, D: ArrayLike) -> GaussianLaw | None:
        """release / release-y: exact, rows i.i.d. N(0, D^T D + diag(sigma^2 I_d, 0)) (r copies).
        regression: the asymptotic ALS normal of the augmented data (exact=False)."""
        inner, tilde = self._inner(self._check_data(D))
        return inner.output_law(tilde)

    def features(self, samples: np.ndarray) -> np.ndarray:
        """vech of the Gram matrix (sufficient for the release); theta itself for the regression."""
        if self.output == "regression":
            return np.asarray(samples, dtype=float).reshape(len(samples), -1)
        return gram_features(samples)

    def worst_entry(self, D: ArrayLike) -> tuple[int, int, float]:
        """(i, j, new value) maximising the symmetrised KL proxy sum_m (lambda_m + 1/lambda_m - 2) over
        all flips X_ij -> -sign(X_ij), with the two eigenvalues of `theory.isit18.entry_flip_eigenvalues` (a heuristic
        of ours).
        With sigma_mode="data" the proxy keeps D's sigma for D' (the search is then approximate)."""
        D = self._check_data(D)
        X = self._split(D)
        sigma = self.noise_scale(D)
        C = D.T @ D
        C[: X.shape[1], : X.shape[1]] += sigma**2 * np.eye(X.shape[1])
        lam1, lam2, _ = entry_flip_eigenvalues(D, C, X.shape[1])
        lam1, lam2 = np.maximum(lam1, 1e-300), np.maximum(lam2, 1e-300)
        proxy = lam1 + 1.0 / lam1 + lam2 + 1.0 / lam2
        i, j = np.unravel_index(int(np.argmax(proxy)), proxy.shape)
        return int(i), int(j), float(flip_value(X[i, j]))

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """entry: `worst_entry`; remove/zero: the row of largest leverage in the augmented data."""
        relation = self._relation(relation)
        D = self._check_data(D)
        if relation == "entry":
            i, j, value = self.worst_entry(D)
            return i, neighbors.make(D, "entry", i, (j, value))
        if relation in neighbors.ROW_RELATIONS:
            _, tilde = self._inner(D)
            target = tilde if self.output != "regression" else tilde[:, :-1]
            return row_pair(D, int(np.argmax(theory.leverages(target)[: D.shape[0]])), relation)
        return None


# -- utility ([ISIT18] eq. 5, Thm 1) --------------------------------------------------------------
def relative_error(D: ArrayLike, theta: ArrayLike) -> float | np.ndarray:
    """eta = g(theta) / g(theta*) >= 1 with g(theta) = ||X theta - y||^2 on the original D = [X, y]
    and theta* = X^+ y ([ISIT18] eq. 5); theta of shape (d,) or (k, d)."""
    D = as_data(D, min_cols=2)
    X, y = D[:, :-1], D[:, -1]
    best = np.linalg.lstsq(X, y, rcond=None)[0]
    g_best = float(np.sum((X @ best - y) ** 2))
    if g_best == 0:
        raise ValueError("y lies in the column space of X: g(theta*) = 0 and eta is undefined")
    theta = np.asarray(theta, dtype=float)
    value = np.sum((theta @ X.T - y) ** 2, axis=-1) / g_best
    return float(value) if np.ndim(value) == 0 else value


def an_error_bound(D: ArrayLike, sigma: float, t: float) -> tuple[float, float]:
    """[ISIT18] Thm 1: (bound, probability). With Delta = sigma (sqrt n + sqrt d) / sigma_max(X),
    kappa = sigma_max / sigma_min and r(y) = ||X theta*|| / ||X theta* - y||, eta_AN <=
    (1 + kappa (Delta + t) / (1 - kappa (Delta + t)) (kappa + r(y)))^2 with probability
    >= 1 - 2 exp(-sigma_max^2 t^2 / (2 sigma^2)); needs kappa (Delta + t) < 1 (else bound = inf)."""
    D = as_data(D, min_cols=2)
    X, y = D[:, :-1], D[:, -1]
    n, d = X.shape
    sv = np.linalg.svd(X, compute_uv=False)
    kappa = sv[0] / sv[-1]
    fit = X @ np.linalg.lstsq(X, y, rcond=None)[0]
    r_y = np.linalg.norm(fit) / np.linalg.norm(fit - y)
    gap = kappa * (sigma * (np.sqrt(n) + np.sqrt(d)) / sv[0] + t)
    probability = max(0.0, 1.0 - 2.0 * np.exp(-sv[0] ** 2 * t**2 / (2.0 * sigma**2)))
    if gap >= 1:
        return float("inf"), probability
    return float((1.0 + gap / (1.0 - gap) * (kappa + r_y)) ** 2), probability

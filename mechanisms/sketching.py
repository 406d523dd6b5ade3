"""Burkhardt, Keller, Orlandi & Schwiegelshohn (2025) [LTM]: noisy secure sketches in the
linear-transformation model (LTM). The calibrations (eq. 4, Thm 3.5, the zero-output threshold) are
in `theory.sketching`.

Clients i = 1..n hold rows a_i with |a_ij| <= eta; neighbours replace one row (`replace`). A public
sketch S (m x n), fixed by `sketch_seed` and shared by D and D', is applied to the clients' noisy
shares by secure computation; the analyst sees only the result:

* `ltm-gauss` (Thm 3.4, eqs. 2-4): S ~ D^sketch_{m,n,s} (s signed nonzeros per column),
  A~ = (1/sqrt s) sum_l S_l (A + G_l), G_l i.i.d. N(0, sigma^2) with sigma^2 of eq. 4 as printed.
* `ltm-laplace` (Thm 3.5): dense Rademacher S (s = m, exactly n/m clients per row of each S_l),
  client noise Gamma(1/(n/m - t'), b) - Gamma(1/(n/m - t'), b), b = 2 eta m^2 d / eps as printed.
* `ltm-lra` / `ltm-ridge`: the analyses A_k (top-k right singular vectors) and A_lambda (ridge on the
  jointly sketched [A, b]) run on either sketch.
* `ltm-local`: the local-model baseline, every client releases a_i + g_i.

Exact law of `ltm-gauss` given S (derived here): the m d entries are independent, mean S A, entry (k, j)
of variance sigma^2 T_k / s with T_k the number of nonzeros in row k of S. A replaced row i is a pure
mean shift: the Gaussian mechanism with mu^2 = (||Delta||^2 / sigma^2) sum_{k in rows(i)} 1 / T_k.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from .. import theory
from ..theory.gaussian_pair import GaussianLaw
from ..theory.sketching import eq4_variance, laplace_scale, local_variance, min_clients

if TYPE_CHECKING:
    from scipy import sparse

from ..core.validation import (
    Seed,
    as_bool,
    as_choice,
    as_data,
    as_int,
    as_positive,
    as_probability,
    one_setting,
    optional,
)
from .base import Draw, Mechanism, noise_variance
from .noisy_release import FOCUS_DOC, Focus, NoisyRelease, as_focus


# -- public sketches ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Sketch:
    """S = (1/sqrt s) sum_l S_l: column i of S_l has the single nonzero signs[i, l] in row rows[i, l]."""

    rows: np.ndarray     # (n, s) int
    signs: np.ndarray    # (n, s) +-1
    m: int

    @property
    def s(self) -> int:
        return self.rows.shape[1]

    @property
    def n(self) -> int:
        return self.rows.shape[0]

    def piece(self, l: int) -> sparse.csr_matrix:
        """S_l as a sparse m x n matrix."""
        from scipy import sparse

        return sparse.csr_matrix((self.signs[:, l], (self.rows[:, l], np.arange(self.n))), shape=(self.m, self.n))

    def matrix(self) -> sparse.csr_matrix:
        """S = (1/sqrt s) sum_l S_l."""
        return sum(self.piece(l) for l in range(self.s)) / np.sqrt(self.s)

    def counts(self) -> np.ndarray:
        """T_k = #{(i, l): rows[i, l] = k}, the nonzeros in row k of S (for s = 1 the bucket sizes)."""
        return np.bincount(self.rows.reshape(-1), minlength=self.m).astype(float)

    def row_weight(self) -> np.ndarray:
        """sum_{k in rows(i)} 1 / T_k for every client i (mu^2 sigma^2 / ||Delta||^2 of its replacement)."""
        return np.sum(1.0 / self.counts()[self.rows], axis=1)


def osnap_sketch(m: int, n: int, s: int, seed: Seed) -> Sketch:
    """D^sketch_{m,n,s} ([LTM] Def. 2.1): per column s distinct uniform rows with fair signs."""
    if s > m:
        raise ValueError(f"the sparsity s={s} cannot exceed the sketch size m={m}")
    rng = np.random.default_rng(seed)
    rows = np.argsort(rng.random((n, m)), axis=1)[:, :s] if s > 1 else rng.integers(0, m, size=(n, 1))
    return Sketch(rows=rows, signs=rng.choice([-1.0, 1.0], size=(n, s)), m=m)


def dense_sketch(m: int, n: int, seed: Seed) -> Sketch:
    """Dense Rademacher S with s = m pieces, each S_l with exactly n/m clients per row ([LTM] Thm 3.5): a
    random partition into m groups; client i of group g sends piece l to row (l + g) mod m."""
    if n % m:
        raise ValueError(f"the dense sketch needs m | n (n/m clients per row), got n={n}, m={m}")
    rng = np.random.default_rng(seed)
    group = rng.permutation(n) % m
    rows = (np.arange(m)[None, :] + group[:, None]) % m
    signs = rng.choice([-1.0, 1.0], size=(n,))[:, None] * np.ones((1, m))
    return Sketch(rows=rows, signs=signs, m=m)


def _check_eta(D: np.ndarray, eta: float) -> np.ndarray:
    if np.max(np.abs(D), initial=0.0) > eta * (1 + 1e-12):
        raise ValueError(f"the LTM sketches of Burkhardt et al. (2025) need every entry bounded by eta={eta:g}; got "
                         f"max |entry| {np.max(np.abs(D)):.4g}")
    return D


def _extreme_row(row: np.ndarray, eta: float) -> np.ndarray:
    """The admissible replacement farthest from `row`: -eta sign(row) entrywise (+eta at 0)."""
    return np.where(row > 0, -eta, eta)


_COMMON_DOCS = {
    "m": "sketch size (rows of S)",
    "eps": "target epsilon (> 0)",
    "eta": "bound on every entry |a_ij| <= eta (> 0)",
    "sketch_seed": "seed of the public sketch S, shared by D and D' (default 0)",
    "t_prime": "number of corrupt clients t' (default 0)",
}


class LTMGauss(Mechanism):
    name = "ltm-gauss"
    neighbor = "replace"
    summary = ("Burkhardt et al. 2025 Thm 3.4: sparse public sketch S of the clients' Gaussian-noised rows (m x d), "
               "sigma by eq. 4")
    param_docs = {**_COMMON_DOCS, "delta": "target delta in (0, 1)",
                  "s": "nonzeros per column of S (default 1: CountSketch)",
                  "sigma_rule": "'paper_eq4' (as printed, default) or 'consistent_2eta' (4x the variance)",
                  "p": "interpolation exponent: sigma^2 = sigma_eq4^2 n^{1-p} (default 1 = eq. 4)",
                  "sigma": "explicit client noise standard deviation, instead of eps (delta may still set the "
                           "zero-output rule)",
                  "enforce_min_n": "release 0 when n <= 8 m ln(dm/delta) + s + t' (default true)"}
    m: int
    eps: float | None
    delta: float | None
    eta: float
    s: int
    sketch_seed: int
    t_prime: int
    sigma_rule: str
    p: float
    sigma: float | None
    enforce_min_n: bool

    def __init__(self, m: int, eps: float | None = None, delta: float | None = None, eta: float = 1.0, s: int = 1,
                 sketch_seed: int = 0, t_prime: int = 0, sigma_rule: str = "paper_eq4", p: float = 1.0,
                 sigma: float | None = None, enforce_min_n: bool = True) -> None:
        target = {"sigma": optional(as_positive, "sigma", sigma), "eps": optional(as_positive, "eps", eps),
                  "delta": optional(as_probability, "delta", delta)}
        one_setting(self.name, target, ("sigma",), ("eps", "delta"), shared=("delta",))  # delta: the zero-output rule
        self._set({"m": as_int("m", m), "eps": target["eps"], "delta": target["delta"], "eta": as_positive("eta", eta),
                   "s": as_int("s", s), "sketch_seed": as_int("sketch_seed", sketch_seed, minimum=0),
                   "t_prime": as_int("t_prime", t_prime, minimum=0),
                   "sigma_rule": as_choice("sigma_rule", sigma_rule, ("paper_eq4", "consistent_2eta")),
                   "p": float(as_positive("p", p, allow_zero=True)), "sigma": target["sigma"],
                   "enforce_min_n": as_bool("enforce_min_n", enforce_min_n)})

    def sketch(self, n: int) -> Sketch:
        return osnap_sketch(self.m, n, self.s, self.sketch_seed)

    def silent(self, D: np.ndarray) -> bool:
        """True when the zero-output rule applies (eq. 2 / proof of Thm 3.4)."""
        if not self.enforce_min_n or self.delta is None:
            return False
        return D.shape[0] <= min_clients(self.m, D.shape[1], self.delta, self.s, self.t_prime)

    def noise_scale(self, D: np.ndarray) -> float:
        if self.sigma is not None:
            return self.sigma
        assert self.eps is not None and self.delta is not None  # given when sigma is not (`one_setting`)
        n, d = D.shape
        variance = eq4_variance(self.eps, self.delta, self.eta, self.m, self.s, n, d, self.t_prime, self.sigma_rule)
        return float(np.sqrt(variance * float(n) ** (1.0 - self.p)))

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        return _check_eta(as_data(D), self.eta)

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return (self.m, as_data(D).shape[1])

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        shape = (self.m, D.shape[1])
        if self.silent(D):
            return (lambda k, rng: np.zeros((k, *shape))), shape, 1
        S = self.sketch(D.shape[0])
        mean = S.matrix() @ D
        scale = self.noise_scale(D) * np.sqrt(S.counts() / S.s)[:, None]
        return (lambda k, rng: mean + scale * rng.standard_normal((k, *shape))), shape, D.size // D.shape[0] * self.m

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """Alg. 1: every client adds s fresh noise vectors; the servers sum (1/sqrt s) sum_l S_l (A + G_l)."""
        shape = (self.m, D.shape[1])
        if self.silent(D):
            return (lambda k, rng: np.zeros((k, *shape))), shape, 1
        S = self.sketch(D.shape[0])
        pieces = [S.piece(l) for l in range(S.s)]
        sigma = self.noise_scale(D)

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            out = np.empty((k, *shape))
            for t in range(k):
                out[t] = sum(P @ (D + sigma * rng.standard_normal(D.shape)) for P in pieces) / np.sqrt(S.s)
            return out

        return draw, shape, D.size * S.s

    def output_law(self, D: ArrayLike) -> GaussianLaw | None:
        """Exact given S: N(vec(S A), diag(sigma^2 T_k / s) per entry (k, j)), row-major (derived here)."""
        D = self._check_data(D)
        if self.silent(D):
            size = self.m * D.shape[1]
            return theory.GaussianLaw(np.zeros(size), np.zeros((size, size)), copies=1, exact=True)
        S = self.sketch(D.shape[0])
        variance = np.repeat(noise_variance(self.noise_scale(D)) * S.counts() / S.s, D.shape[1])
        return theory.GaussianLaw((S.matrix() @ D).reshape(-1), np.diag(variance), copies=1, exact=True)

    def mu(self, D: ArrayLike, i: int, new_row: ArrayLike) -> float:
        """mu of replacing row i by new_row: ||Delta|| sqrt(sum_{k in rows(i)} 1/T_k) / sigma (derived here)."""
        D = self._check_data(D)
        delta = D[i] - np.asarray(new_row, dtype=float)
        return float(np.linalg.norm(delta) * np.sqrt(self.sketch(D.shape[0]).row_weight()[i]) / self.noise_scale(D))

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """replace: the client i* maximising sum_{k in rows(i)} 1/T_k (the smallest bucket for s = 1),
        its row replaced by -eta sign(a_i*) (set a_i* = eta 1 for the global worst pair)."""
        relation = self._relation(relation)
        if relation != "replace":
            return None
        D = self._check_data(D)
        i = int(np.argmax(self.sketch(D.shape[0]).row_weight()))
        out = D.copy()
        out[i] = _extreme_row(D[i], self.eta)
        return i, out


class LTMLaplace(Mechanism):
    name = "ltm-laplace"
    neighbor = "replace"
    summary = ("Burkhardt et al. 2025 Thm 3.5: dense public Rademacher sketch of the clients' Gamma-difference-noised "
               "rows (m x d)")
    param_docs = {**_COMMON_DOCS, "scale": "'theorem' (b = 2 eta m^2 d / eps, default) or 'experiment' (b = 1/eps)",
                  "b": "explicit Laplace scale, instead of eps"}
    m: int
    eps: float | None
    eta: float
    sketch_seed: int
    t_prime: int
    scale: str
    b: float | None

    def __init__(self, m: int, eps: float | None = None, eta: float = 1.0, sketch_seed: int = 0, t_prime: int = 0,
                 scale: str = "theorem", b: float | None = None) -> None:
        noise = {"b": optional(as_positive, "b", b), "eps": optional(as_positive, "eps", eps)}
        one_setting(self.name, noise, ("b",), ("eps",))
        self._set({"m": as_int("m", m), "eps": noise["eps"], "eta": as_positive("eta", eta),
                   "sketch_seed": as_int("sketch_seed", sketch_seed, minimum=0),
                   "t_prime": as_int("t_prime", t_prime, minimum=0),
                   "scale": as_choice("scale", scale, ("theorem", "experiment")), "b": noise["b"]})

    def sketch(self, n: int) -> Sketch:
        return dense_sketch(self.m, n, self.sketch_seed)

    def laplace_b(self, D: np.ndarray) -> float:
        if self.b is not None:
            return self.b
        assert self.eps is not None  # given when b is not (`one_setting`)
        return laplace_scale(self.eps, self.eta, self.m, D.shape[1], self.scale)

    def _shape(self, n: int) -> float:
        per_row = n // self.m
        if per_row - self.t_prime <= 0:
            raise ValueError(f"t'={self.t_prime} must be below n/m = {per_row}")
        return 1.0 / (per_row - self.t_prime)

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        D = _check_eta(as_data(D), self.eta)
        self.sketch(D.shape[0])
        return D

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return (self.m, as_data(D).shape[1])

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """Each S_l row sums n/m client Gamma differences: by Gamma additivity one difference of
        Gamma(n/m * shape, b) variables per (piece, row, column) (a Laplace(b) when t' = 0)."""
        n, d = D.shape
        m, b, total = self.m, self.laplace_b(D), (n // self.m) * self._shape(n)
        mean = self.sketch(n).matrix() @ D

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            g = rng.gamma(total, b, size=(k, m, m, d)) - rng.gamma(total, b, size=(k, m, m, d))
            return mean + g.sum(axis=1) / np.sqrt(m)

        return draw, (m, d), 2 * m * m * d

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        """Every client draws m noise vectors of Gamma(1/(n/m - t'), b) differences (eq. 3)."""
        n, d = D.shape
        S = self.sketch(n)
        pieces = [S.piece(l) for l in range(S.s)]
        b, shape = self.laplace_b(D), self._shape(n)

        def draw(k: int, rng: np.random.Generator) -> np.ndarray:
            out = np.empty((k, self.m, d))
            for t in range(k):
                out[t] = sum(P @ (D + rng.gamma(shape, b, size=(n, d)) - rng.gamma(shape, b, size=(n, d)))
                             for P in pieces) / np.sqrt(self.m)
            return out

        return draw, (self.m, d), 2 * n * d * self.m

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """replace: the noise is the same for every client, so the row with the largest possible
        L1 change, sum_j (eta + |a_ij|), replaced by -eta sign(a_i)."""
        relation = self._relation(relation)
        if relation != "replace":
            return None
        D = self._check_data(D)
        i = int(np.argmax(np.abs(D).sum(axis=1)))
        out = D.copy()
        out[i] = _extreme_row(D[i], self.eta)
        return i, out


# -- analyses on the sketch ---------------------------------------------------------------------
_SKETCH_PARAMS = ("m", "eps", "delta", "eta", "s", "sketch_seed", "t_prime", "sigma_rule", "p", "sigma",
                  "enforce_min_n", "scale", "b")


class _SketchAnalysis(Mechanism):
    """A post-processing of `ltm-gauss` (noise="gauss") or `ltm-laplace` (noise="laplace")."""

    neighbor = "replace"
    noise: str
    inner: LTMGauss | LTMLaplace

    def _init(self, noise: str, extra: dict[str, Any], sketch: dict[str, Any]) -> None:
        noise = as_choice("noise", noise, ("gauss", "laplace"))
        allowed: type[LTMGauss] | type[LTMLaplace] = {"gauss": LTMGauss, "laplace": LTMLaplace}[noise]
        given = {k: v for k, v in sketch.items() if v is not None}
        unknown = sorted(set(given) - set(allowed.param_docs))
        if unknown:
            raise ValueError(f"{self.name} with noise={noise!r} takes no parameter(s) {unknown}")
        inner = allowed(**given)
        self._set({"noise": noise, **extra, **given}, inner=inner)

    def _fast(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        draw, shape, cost = self.inner._fast(self._sketched(D))
        return (lambda k, rng: self._analyse(draw(k, rng), D)), self.output_shape(D), cost

    def _literal(self, D: np.ndarray) -> tuple[Draw, tuple[int, ...], int]:
        draw, shape, cost = self.inner._literal(self._sketched(D))
        return (lambda k, rng: self._analyse(draw(k, rng), D)), self.output_shape(D), cost

    def _sketched(self, D: np.ndarray) -> np.ndarray:
        return self.inner._check_data(D)

    def _analyse(self, sketches: np.ndarray, D: np.ndarray) -> np.ndarray:
        """The analysis of k sketches (k, m, d) of D."""
        raise NotImplementedError

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        return self.inner.worst_neighbor(D, relation)


def _sign_fixed(V: np.ndarray) -> np.ndarray:
    """Columns of V (..., d, k) with their largest-magnitude entry made positive (a deterministic
    choice among the singular vectors' +- signs)."""
    idx = np.argmax(np.abs(V), axis=-2)
    signs = np.sign(np.take_along_axis(V, idx[..., None, :], axis=-2))
    signs[signs == 0] = 1.0
    return V * signs


class LTMLowRank(_SketchAnalysis):
    name = "ltm-lra"
    summary = ("Burkhardt et al. 2025 A_k: top-k right singular vectors X' (d x k) of the LTM sketch (noise='gauss' or "
               "'laplace')")
    param_docs = {"k": "target rank (int >= 1)", "noise": "'gauss' (ltm-gauss, default) or 'laplace' (ltm-laplace)",
                  **{key: f"passed to the sketch mechanism ({key})" for key in _SKETCH_PARAMS}}
    k: int

    def __init__(self, k: int, m: int, noise: str = "gauss", eps: float | None = None, delta: float | None = None,
                 eta: float = 1.0, s: int | None = None, sketch_seed: int = 0, t_prime: int = 0,
                 sigma_rule: str | None = None, p: float | None = None, sigma: float | None = None,
                 enforce_min_n: bool | None = None, scale: str | None = None, b: float | None = None) -> None:
        sketch = dict(m=m, eps=eps, delta=delta, eta=eta, s=s, sketch_seed=sketch_seed, t_prime=t_prime,
                      sigma_rule=sigma_rule, p=p, sigma=sigma, enforce_min_n=enforce_min_n, scale=scale, b=b)
        self._init(noise, {"k": as_int("k", k)}, sketch)

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return (as_data(D).shape[1], self.k)

    def _analyse(self, sketches: np.ndarray, D: np.ndarray) -> np.ndarray:
        if self.k > min(sketches.shape[1:]):
            raise ValueError(f"k={self.k} exceeds min(m, d) = {min(sketches.shape[1:])}")
        _, _, Vt = np.linalg.svd(sketches, full_matrices=False)
        return _sign_fixed(np.swapaxes(Vt[:, : self.k], 1, 2))

    def features(self, samples: np.ndarray) -> np.ndarray:
        """vech of the projector X' X'^T (sign-free)."""
        samples = np.asarray(samples, dtype=float)
        proj = samples @ np.swapaxes(samples, 1, 2)
        rows, cols = np.triu_indices(samples.shape[1])
        return proj[:, rows, cols]


def lra_error(D: ArrayLike, Xp: ArrayLike, k: int | None = None) -> float | np.ndarray:
    """psi = (||A - A X' X'^T||_F^2 - ||A - A X_k X_k^T||_F^2) / n ([LTM] Sec. 5) for one X' (d, k)
    or a batch (t, d, k)."""
    A = as_data(D)
    Xp = np.asarray(Xp, dtype=float)
    single = Xp.ndim == 2
    Xp = Xp[None] if single else Xp
    k = Xp.shape[-1] if k is None else k
    sv = np.linalg.svd(A, compute_uv=False)
    best = float(np.sum(sv[k:] ** 2))
    total = float(np.sum(A**2))
    captured = np.sum((A @ Xp) ** 2, axis=(1, 2))          # ||A X'||_F^2 for orthonormal X'
    psi = (total - captured - best) / A.shape[0]
    return float(psi[0]) if single else psi


class LTMRidge(_SketchAnalysis):
    name = "ltm-ridge"
    summary = ("Burkhardt et al. 2025 A_lambda: ridge regression argmin ||A~ x - b~||^2 + lambda ||x||^2 on the LTM "
               "sketch of [A, b]")
    param_docs = {"lam": "ridge parameter lambda (> 0)", "noise": "'gauss' (default) or 'laplace'",
                  **{key: f"passed to the sketch mechanism ({key})" for key in _SKETCH_PARAMS}}
    lam: float

    def __init__(self, lam: float, m: int, noise: str = "gauss", eps: float | None = None, delta: float | None = None,
                 eta: float = 1.0, s: int | None = None, sketch_seed: int = 0, t_prime: int = 0,
                 sigma_rule: str | None = None, p: float | None = None, sigma: float | None = None,
                 enforce_min_n: bool | None = None, scale: str | None = None, b: float | None = None) -> None:
        sketch = dict(m=m, eps=eps, delta=delta, eta=eta, s=s, sketch_seed=sketch_seed, t_prime=t_prime,
                      sigma_rule=sigma_rule, p=p, sigma=sigma, enforce_min_n=enforce_min_n, scale=scale, b=b)
        self._init(noise, {"lam": as_positive("lam", lam)}, sketch)

    def _sketched(self, D: np.ndarray) -> np.ndarray:
        return self.inner._check_data(as_data(D, min_cols=2))

    def output_shape(self, D: ArrayLike) -> tuple[int, ...]:
        return (as_data(D, min_cols=2).shape[1] - 1,)

    def _analyse(self, sketches: np.ndarray, D: np.ndarray) -> np.ndarray:
        A, b = sketches[..., :-1], sketches[..., -1]
        gram = np.swapaxes(A, 1, 2) @ A + self.lam * np.eye(A.shape[-1])
        return np.linalg.solve(gram, np.einsum("tmd,tm->td", A, b)[..., None])[..., 0]


def ridge_error(D: ArrayLike, x: ArrayLike, lam: float) -> float | np.ndarray:
    """phi = (||A x - b||^2 + lam ||x||^2) / (||A x_opt - b||^2 + lam ||x_opt||^2) ([LTM] Sec. 5)."""
    D = as_data(D, min_cols=2)
    A, b = D[:, :-1], D[:, -1]
    x_opt = np.linalg.solve(A.T @ A + lam * np.eye(A.shape[1]), A.T @ b)

    def cost(x: np.ndarray) -> np.ndarray:
        return np.sum((x @ A.T - b) ** 2, axis=-1) + lam * np.sum(x**2, axis=-1)

    return cost(np.asarray(x, dtype=float)) / float(cost(x_opt))


class LTMLocal(NoisyRelease):
    name = "ltm-local"
    neighbor = "replace"
    summary = "Burkhardt et al. 2025's local-model baseline: every client releases a_i + N(0, sigma_loc^2 I) (n x d)"
    param_docs = {"eps": "target epsilon (> 0)", "delta": "target delta in (0, 1)", "eta": "entry bound (> 0)",
                  "sigma_rule": "'textbook' (2 (2 eta sqrt d)^2 ln(1.25/delta)/eps^2, default) or 'interpolate' "
                                "(eq. 4's sigma^2 n^{1-p} with the sketch parameters m, s)",
                  "m": "sketch size for 'interpolate'", "s": "sketch sparsity for 'interpolate' (default 1)",
                  "p": "interpolation exponent (default 0 = local end)", "sigma": "explicit noise standard deviation",
                  "focus": FOCUS_DOC}
    eps: float | None
    delta: float | None
    eta: float
    sigma_rule: str
    m: int | None
    s: int
    p: float
    sigma: float | None

    def __init__(self, eps: float | None = None, delta: float | None = None, eta: float = 1.0,
                 sigma_rule: str = "textbook", m: int | None = None, s: int = 1, p: float = 0.0,
                 sigma: float | None = None, focus: Focus | str | None = None) -> None:
        target = {"sigma": optional(as_positive, "sigma", sigma), "eps": optional(as_positive, "eps", eps),
                  "delta": optional(as_probability, "delta", delta)}
        one_setting(self.name, target, ("sigma",), ("eps", "delta"))
        rule = as_choice("sigma_rule", sigma_rule, ("textbook", "interpolate"))
        if rule == "interpolate" and m is None and sigma is None:
            raise ValueError("sigma_rule='interpolate' needs the sketch size m")
        self._set({"eps": target["eps"], "delta": target["delta"],
                   "eta": as_positive("eta", eta), "sigma_rule": rule, "m": optional(as_int, "m", m),
                   "s": as_int("s", s),
                   "p": float(as_positive("p", p, allow_zero=True)), "sigma": target["sigma"],
                   "focus": as_focus(focus)})

    def noise_scale(self, D: np.ndarray) -> float:
        if self.sigma is not None:
            return self.sigma
        assert self.eps is not None and self.delta is not None  # given when sigma is not (`one_setting`)
        n, d = D.shape
        if self.sigma_rule == "textbook":
            return float(np.sqrt(local_variance(self.eps, self.delta, self.eta, d)))
        assert self.m is not None  # 'interpolate' without sigma needs m (checked in __init__)
        variance = eq4_variance(self.eps, self.delta, self.eta, self.m, self.s, n, d)
        return float(np.sqrt(variance * float(n) ** (1 - self.p)))

    def _check_data(self, D: ArrayLike) -> np.ndarray:
        return _check_eta(as_data(D), self.eta)

    def worst_neighbor(self, D: ArrayLike, relation: str | None = None) -> tuple[int, np.ndarray] | None:
        """replace: the row with the largest ||a_i - (-eta sign a_i)||, replaced by -eta sign(a_i)."""
        relation = self._relation(relation)
        if relation != "replace":
            return None
        D = self._check_data(D)
        i = int(np.argmax(np.sum((self.eta + np.abs(D)) ** 2, axis=1)))
        out = D.copy()
        out[i] = _extreme_row(D[i], self.eta)
        return i, out

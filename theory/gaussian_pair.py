"""Exact privacy spectrum of a pair of multivariate Gaussians (the NDIS theorem).

NDIS (Lu, Magdon-Ismail, Wei & Zikas 2023, NDIS, Theorem 1; OLS-RP, Lemma 2): for
P = N(mean1, cov1), Q = N(mean2, cov2) the privacy loss L = ln p/q under P is a quadratic form of a
standard normal vector. We diagonalise it with the
generalised symmetric eigenproblem (cov1 - cov2) v = a cov2 v, V^T cov2 V = I: in the coordinates
u = V^T (x - mean2) both laws are products, Q_j = N(0, 1) and P_j = N(m_j, 1 + a_j) with m = V^T dmean,
so that (each coordinate, z_j ~ N(0, 1))

    L = sum_j [ a_j/2 z_j^2 + m_j sqrt(1 + a_j) z_j + m_j^2/2 - ln(1 + a_j)/2 ],

free of the cancellation in I - cov1^{1/2} cov2^{-1} cov1^{1/2}. delta(eps) then comes from the
saddle-point contour integral of `theory.quadratic_loss`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg, special

from ..core.validation import Seed, as_eps, as_finite_array, scalar_or_array
from .gaussian import _log_delta_flat as _gaussian_log_delta, gaussian_epsilon
from .profile import PrivacyProfile
from .quadratic_loss import QuadraticLoss, log_delta as _log_delta


@dataclass(frozen=True)
class GaussianLaw:
    """The law of a mechanism's output: `copies` i.i.d. draws of N(mean, cov).

    `exact` is False when the normal is only the asymptotic law (e.g. ALS as r -> inf)."""

    mean: np.ndarray
    cov: np.ndarray
    copies: int = 1
    exact: bool = True

    def __post_init__(self) -> None:
        mean = as_finite_array(self.mean, "mean").reshape(-1)
        cov = as_finite_array(self.cov, "cov")
        if cov.shape != (mean.size, mean.size):
            raise ValueError(f"cov must have shape {(mean.size, mean.size)} to match mean, got {cov.shape}")
        if int(self.copies) != self.copies or self.copies < 1:
            raise ValueError(f"copies must be a positive integer, got {self.copies}")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "cov", cov)


def _symmetric(cov: np.ndarray, name: str) -> np.ndarray:
    """cov symmetrised, after checking that it is symmetric up to rounding."""
    if np.max(np.abs(cov - cov.T), initial=0.0) > 1e-10 * np.max(np.abs(cov), initial=0.0):
        raise ValueError(f"{name} is not symmetric")
    return 0.5 * (cov + cov.T)


def _clearly_positive_definite(cov: np.ndarray) -> bool:
    """A Cholesky factor exists and its diagonal spans < 4 decades: full rank beyond doubt, so the
    eigen-analysis of the supports can be skipped (it costs two eigendecompositions)."""
    try:
        diagonal = np.diag(np.linalg.cholesky(cov))
    except np.linalg.LinAlgError:
        return False
    return diagonal.size == 0 or diagonal.min() > 1e-4 * diagonal.max()


def _check_covariance(cov: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Check PSD (cov already symmetric); return (eigenvalues, eigenvectors)."""
    vals, vecs = np.linalg.eigh(cov)
    if vals.size and vals[0] < -1e-9 * max(vals[-1], 0.0) - 1e-300:
        raise ValueError(f"{name} is not positive semidefinite (smallest eigenvalue {vals[0]:.3g})")
    return vals, vecs


def _range_basis(vals: np.ndarray, vecs: np.ndarray) -> np.ndarray:
    tol = max(vals.size, 1) * 1e-13 * max(vals[-1] if vals.size else 0.0, 0.0)
    return vecs[:, vals > tol]


def group_terms(weight: np.ndarray, dof: np.ndarray,
                linear: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Merge terms with equal weights (within rounding): dof and linear norms add up, the weight is
    their dof-weighted mean. Returns (weight, dof, linear, tol), tol the merging tolerance."""
    order = np.argsort(weight)
    weight, dof, linear = weight[order], dof[order], linear[order]
    tol = 1e-13 * np.max(np.abs(weight), initial=0.0)
    starts = np.flatnonzero(np.concatenate([[True], np.diff(weight) > tol]))
    if not weight.size:
        return weight, dof, linear, tol
    merged_dof = np.add.reduceat(dof, starts)
    return np.add.reduceat(weight * dof, starts) / merged_dof, merged_dof, np.add.reduceat(linear, starts), tol


def reversed_loss(loss: QuadraticLoss | None) -> QuadraticLoss | None:
    """The privacy loss of Q||P from that of P||Q, both in the Gaussian-pair form (derived here): in
    coordinates where P_j = N(0, 1), Q_j = N(-m_j / sqrt(1 + a_j), 1 / (1 + a_j)), so a_j' = -a_j / (1 + a_j),
    ln(1 + a_j') = -ln(1 + a_j) and linear_j' = linear_j / (1 + a_j)^3; normal terms keep their variance."""
    if loss is None:
        return None
    a, dof, linear = 2.0 * loss.weight[0], loss.dof[0], loss.linear[0]
    normal_var = float(loss.normal_var[0])
    flipped = linear / (1.0 + a) ** 3
    offset = float(np.sum(flipped * (1.0 + a) / 2.0 + dof * np.log1p(a) / 2.0)) + normal_var / 2.0
    return QuadraticLoss.build((-0.5 * a / (1.0 + a))[None, :], dof[None, :], flipped[None, :], offset=offset,
                               normal_var=normal_var)


class QuadraticLossProfile(PrivacyProfile):
    """The profile of a pair of Gaussians through its privacy loss, a `QuadraticLoss` of one row (None
    when the supports differ: delta = 1), shared by `GaussianPair` and the products of
    `theory.composition`. The loss always has the form of a Gaussian pair's (module docstring):
    offset = sum_j [linear_j / (2 (1 + 2 weight_j)) - dof_j ln(1 + 2 weight_j) / 2] + normal_var / 2,
    which `theory.renyi` relies on. `_mu` is set when the loss is normal (equal covariances)."""

    loss: QuadraticLoss | None = None
    _mu: float | None = None
    _shared: _SharedContour | None = None

    @property
    def fast(self) -> bool:  # type: ignore[override]  # a plain attribute of the base class, only read
        """ln delta is a closed form (the analytic Gaussian) when the loss is normal."""
        return self._mu is not None or self.loss is None

    @property
    def mutually_continuous(self) -> bool:
        """False when the supports differ: then delta = 1 for every eps, in both directions."""
        return self.loss is not None

    def _log_delta(self, flat: np.ndarray) -> np.ndarray:
        """ln delta_{P||Q} on a flat array of eps: the analytic Gaussian, the shared contour of many
        terms, or the per-eps saddle-point integral."""
        if self.loss is None:
            return np.zeros(flat.shape)
        if self._mu is not None:
            return _gaussian_log_delta(flat, np.full(flat.size, self._mu))
        if self.loss.weight.shape[1] >= _SHARED_MIN_TERMS:
            if self._shared is None:
                self._shared = _SharedContour(self.loss)
            out, ok = self._shared.log_delta(flat)
            out[~ok] = self._kernel(flat[~ok])
            return np.minimum(out, 0.0)
        return self._kernel(flat)

    def _kernel(self, flat: np.ndarray) -> np.ndarray:
        """ln delta by the per-eps saddle-point integral of `theory.quadratic_loss`."""
        batch = QuadraticLoss(*(np.repeat(getattr(self.loss, f), flat.size, axis=0)
                                for f in ("weight", "dof", "linear", "offset", "normal_var")))
        return _log_delta(batch, flat)

    def _epsilon(self, goal: np.ndarray) -> np.ndarray:
        if self._mu is not None:
            return np.asarray(gaussian_epsilon(np.exp(goal), self._mu), dtype=float).reshape(-1)
        return super()._epsilon(goal)

    def delta_mc(self, eps: ArrayLike, n_samples: int, seed: Seed = None,
                 confidence: float = 0.99) -> tuple[float | np.ndarray, float]:
        """The NDIS Monte-Carlo estimator (Lu et al. 2023, NDIS, Fig. 2 and Corollary 1): the mean of
        (1 - e^{eps - L})_+ over n_samples draws of L under P, and its Hoeffding radius
        sqrt(ln(2/gamma) / (2 n)) at confidence 1 - gamma. Returns (estimate, radius)."""
        eps_arr = as_eps(eps).reshape(-1)
        if n_samples < 1:
            raise ValueError(f"n_samples must be positive, got {n_samples}")
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
        radius = float(np.sqrt(np.log(2.0 / (1.0 - confidence)) / (2.0 * n_samples)))
        if self.loss is None:
            return scalar_or_array(np.ones(eps_arr.size), eps), radius
        rng = np.random.default_rng(seed)
        total = np.zeros(eps_arr.size)
        chunk = 1 << 20
        for start in range(0, n_samples, chunk):
            loss = sample_loss(self.loss, min(chunk, n_samples - start), rng)
            for i, e in enumerate(eps_arr):
                total[i] += -np.expm1(np.minimum(e - loss, 0.0)).sum()
        return scalar_or_array(total / n_samples, eps), radius


class GaussianLosses(QuadraticLossProfile):
    """A pair of Gaussians given by its privacy losses in both directions (one-row `QuadraticLoss`es
    of the Gaussian-pair form, or None where the supports differ) instead of its laws: the closed-form
    ALS and RP pairs (`theory.als.als_pair`, `theory.rp.rp_pair`) and the products of
    `theory.composition`. mu: set when the loss is N(mu^2/2, mu^2) (the analytic Gaussian)."""

    def __init__(self, forward: QuadraticLoss | None, reverse: QuadraticLoss | None, mu: float | None = None,
                 label: str = "Gaussian pair") -> None:
        self.loss, self._reverse_loss, self._mu, self.label = forward, reverse, mu, label
        self._shared = None

    def __repr__(self) -> str:
        return f"GaussianLosses({self.label})"

    def _reversed(self) -> GaussianLosses:
        return GaussianLosses(self._reverse_loss, self.loss, self._mu, f"{self.label}, reversed")


class GaussianPair(QuadraticLossProfile):
    """P = N(mean1, cov1), Q = N(mean2, cov2) (each repeated `copies` times, i.i.d.).

    `delta(eps)` is delta_{P||Q}(eps) = sup_S P(S) - e^eps Q(S) (Lu et al. 2023, NDIS,
    Definition 1), exact to ~1e-12
    relative for every representable value; `reverse()` gives Q||P (`delta(eps, "max")`, the larger
    of the two). A `theory.profile.PrivacyProfile`: `epsilon`, `curve`, `to_pld`.
    """

    def __init__(self, mean1: ArrayLike, cov1: ArrayLike, mean2: ArrayLike, cov2: ArrayLike, copies: int = 1) -> None:
        self.law1 = GaussianLaw(as_finite_array(mean1, "mean"), as_finite_array(cov1, "cov"), copies)
        self.law2 = GaussianLaw(as_finite_array(mean2, "mean"), as_finite_array(cov2, "cov"), copies)
        if self.law1.mean.shape != self.law2.mean.shape:
            raise ValueError(f"the two Gaussians have different dimensions: {self.law1.mean.size} and "
                             f"{self.law2.mean.size}")
        self.copies = int(copies)
        self._mu = None                  # mu of an analytic-Gaussian loss (equal covariances), see below
        self.loss = self._privacy_loss()
        self._shared = None

    @classmethod
    def from_laws(cls, law1: GaussianLaw, law2: GaussianLaw) -> GaussianPair:
        if law1.copies != law2.copies:
            raise ValueError(f"the two laws have different numbers of copies: {law1.copies} and {law2.copies}")
        return cls(law1.mean, law1.cov, law2.mean, law2.cov, law1.copies)

    def _reversed(self) -> GaussianPair:
        return GaussianPair(self.law2.mean, self.law2.cov, self.law1.mean, self.law1.cov, self.copies)

    def _summary(self) -> tuple[int, bool, float]:
        """(dimension, covariances identical, ||mean1 - mean2||) for the reprs."""
        return (self.law1.mean.size, bool(np.array_equal(self.law1.cov, self.law2.cov)),
                float(np.linalg.norm(self.law1.mean - self.law2.mean)))

    def __repr__(self) -> str:
        dim, same, shift = self._summary()
        copies = f", copies={self.copies}" if self.copies != 1 else ""
        return f"GaussianPair(dim={dim}, identical_covariances={same}, mean_shift_norm={shift:.4g}{copies})"

    def _repr_html_(self) -> str:
        dim, same, shift = self._summary()
        rows = [("dimension", dim), ("identical covariances", "yes" if same else "no"),
                ("||mean1 - mean2||", f"{shift:.4g}"), ("copies", self.copies),
                ("mutually continuous", "yes" if self.mutually_continuous else "no (delta = 1)")]
        body = "".join(f"<tr><td>{name}</td><td>{value}</td></tr>" for name, value in rows)
        return f"<b>GaussianPair</b> P = N(mean1, cov1), Q = N(mean2, cov2)<table>{body}</table>"

    @staticmethod
    def _common_support(cov1: np.ndarray, cov2: np.ndarray,
                        shift: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Restrict to the common affine support (derived here: outside it one law has mass
        the other lacks): (cov1, cov2, shift) in a basis
        of it, or None when the supports differ (then delta = 1 in both directions)."""
        vals1, vecs1 = _check_covariance(cov1, "cov1")
        vals2, vecs2 = _check_covariance(cov2, "cov2")
        basis1, basis2 = _range_basis(vals1, vecs1), _range_basis(vals2, vecs2)
        if basis1.shape[1] != basis2.shape[1]:
            return None
        if basis2.shape[1] < shift.size:
            if np.linalg.norm(basis1 - basis2 @ (basis2.T @ basis1)) > 1e-8 * np.sqrt(basis1.shape[1] + 1):
                return None
            outside = shift - basis2 @ (basis2.T @ shift)
            if np.linalg.norm(outside) > 1e-8 * (np.linalg.norm(shift) + np.sqrt(max(vals2[-1], 0.0)) + 1e-300):
                return None
            cov1, cov2, shift = basis2.T @ cov1 @ basis2, basis2.T @ cov2 @ basis2, basis2.T @ shift
        return cov1, cov2, shift

    def _privacy_loss(self) -> QuadraticLoss | None:
        cov1, cov2 = _symmetric(self.law1.cov, "cov1"), _symmetric(self.law2.cov, "cov2")
        shift = self.law1.mean - self.law2.mean
        if not (_clearly_positive_definite(cov1) and _clearly_positive_definite(cov2)):
            support = self._common_support(cov1, cov2, shift)
            if support is None:
                return None
            cov1, cov2, shift = support
        if shift.size == 0:
            self._mu = 0.0
            return QuadraticLoss.build(np.zeros((1, 0)), 0.0, 0.0, offset=0.0)
        if np.array_equal(cov1, cov2):
            # equal covariances: the analytic Gaussian with mu = Mahalanobis distance
            mu2 = self.copies * float(shift @ linalg.cho_solve(linalg.cho_factor(cov2), shift))
            self._mu = float(np.sqrt(mu2))
            return QuadraticLoss.build(np.zeros((1, 0)), 0.0, 0.0, offset=0.5 * mu2, normal_var=mu2)
        a, vecs = linalg.eigh(cov1 - cov2, cov2)
        a = np.maximum(a, -1.0 + 1e-300)
        m = vecs.T @ shift
        offset = self.copies * float(np.sum(0.5 * m**2 - 0.5 * np.log1p(a)))
        weight, dof, linear, tol = group_terms(0.5 * a, np.full(a.size, float(self.copies)),
                                               self.copies * m**2 * (1.0 + a))
        return QuadraticLoss.build(weight[None, :], dof[None, :], linear[None, :], offset=offset, zero_tol=tol)


# -- many terms: one vertical contour shared by the eps whose saddle points lie close ---------------
_SHARED_MIN_TERMS = 16    # below this the per-eps kernel is as fast
_TABLE_STEP = 0.05        # spacing of the real-axis table in s, x = z_max expit(s) or e^s
_SHARE = 1.5              # largest g_eps(c) - min g_eps accepted for a shared centre c: e^1.5 of cancellation
_LEVELS = (32, 64, 128, 256, 512, 1024)
_RTOL = 1e-11             # agreement of two successive trapezoid levels, as in the kernel
_CHUNK = 4096             # eps per centre search


class _SharedContour:
    """delta(eps) for many eps on one loss (a single QuadraticLoss row) by the inversion integral of
    `theory.quadratic_loss` taken on vertical lines Re z = c shared between eps values.

    On Re z = c the integrand's modulus never exceeds its value at y = 0 (|E e^{zL}| <= E e^{cL}), so
    any c in (0, z_max) gives ln delta = g_eps(c) + ln(I / pi) with a loss of at most
    e^{g_eps(c) - min g_eps} to cancellation; K(c + iy) is evaluated once per line, not per eps.
    The line centres come from a table of G0(x) = K(x) - ln x - ln(1 + x) on the real axis
    (g_eps = G0 - x eps). Rows whose trapezoid sums do not settle are reported for the kernel."""

    def __init__(self, loss: QuadraticLoss) -> None:
        self.loss = loss
        zmax = float(loss.upper_domain()[0])
        s = np.arange(-40.0, 30.0 + _TABLE_STEP, _TABLE_STEP)
        x = zmax * special.expit(s) if np.isfinite(zmax) else np.exp(s)
        x = x[(x > 0) & (x < zmax) & (np.diff(x, prepend=0.0) > 0)]
        k0, k1, k2 = loss.cgf_table(x)
        self.x = x
        self.g0 = k0 - np.log(x) - np.log1p(x)
        self.slope = k1 - 1.0 / x - 1.0 / (1.0 + x)             # = eps whose saddle point is x
        self.g2 = k2 + 1.0 / x**2 + 1.0 / (1.0 + x) ** 2
        keep = np.isfinite(self.g0) & np.isfinite(self.slope) & np.isfinite(self.g2)
        self.x, self.g0, self.slope, self.g2 = (a[keep] for a in (self.x, self.g0, self.slope, self.g2))

    def _centres(self, eps: np.ndarray) -> np.ndarray:
        """Index into the table of the line used by each eps (-1: outside the table)."""
        gap = self.g0[:, None] - self.x[:, None] * eps[None, :]
        gap -= gap.min(axis=0)
        inside = (eps > self.slope[0]) & (eps < self.slope[-1])
        centre = np.full(eps.size, -1)
        todo = inside.copy()
        for i in np.argsort(eps):
            if not todo[i]:
                continue
            j = np.flatnonzero(gap[:, i] <= _SHARE)[-1]           # furthest line still good for eps_i
            members = todo & (gap[j] <= _SHARE)
            centre[members] = j
            todo &= ~members
        return centre

    def _exponent(self, j: int, y: np.ndarray) -> np.ndarray:
        """G(c + iy) - G(c) at the table point c = x_j, with eps its own saddle slope (vector y)."""
        loss, c = self.loss, self.x[j]
        w, k, s = loss.weight[0], loss.dof[0], loss.linear[0]
        u = 1.0 - 2.0 * w * c
        beta = (2.0 * w / u)[None, :] * y[:, None]
        iy = 1j * y
        out = iy * (loss.offset[0] - self.slope[j]) + 0.5 * loss.normal_var[0] * iy * (2.0 * c + iy)
        out = out - np.log1p(iy / c) - np.log1p(iy / (1.0 + c))
        real = -0.25 * (np.log1p(beta**2) @ k)
        imag = 0.5 * (np.arctan(beta) @ k)
        out = out + real + 1j * imag
        if np.any(s):
            z = c + iy[:, None]
            out = out + (iy[:, None] * (z / (1.0 - 2.0 * w[None, :] * z) + c)) @ (0.5 * s / u)
        return out

    def log_delta(self, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(ln delta, settled) for a flat array of eps, in chunks (the centre search holds a table x eps
        array)."""
        parts = [self._log_delta_chunk(eps[i:i + _CHUNK]) for i in range(0, max(eps.size, 1), _CHUNK)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _log_delta_chunk(self, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per line, sinh-mapped trapezoid sums y = sinh(t) / sqrt(g''(c)), t in [0, T], halving the
        step until two levels agree."""
        out, ok = np.full(eps.size, np.nan), np.zeros(eps.size, dtype=bool)
        centre = self._centres(eps)
        scan = np.arange(0.5, 24.5, 0.5)
        for j in np.unique(centre[centre >= 0]):
            rows = np.flatnonzero(centre == j)
            shift = (eps[rows] - self.slope[j])[:, None]
            scale = 1.0 / np.sqrt(self.g2[j])
            # T: first scan point where the integrand's modulus is below e^-60 of its value at t = 0
            small = self._exponent(j, scale * np.sinh(scan)).real + np.log(np.cosh(scan)) < -60.0
            if not np.any(small):
                continue
            top = scan[np.argmax(small)]
            total = np.full(rows.size, 0.5)          # f(0) / 2 = 1/2; f(T) is negligible
            value = previous = None
            for level in _LEVELS:
                t = top / level * np.arange(1, level, 1 if value is None else 2)
                y = scale * np.sinh(t)
                terms = np.exp(self._exponent(j, y)[None, :] - 1j * shift * y[None, :]).real * np.cosh(t)
                total = total + terms.sum(axis=1)
                previous, value = value, total * top / level
                if previous is not None and np.all(np.abs(value - previous) <= _RTOL * np.abs(value)):
                    break
            assert value is not None and previous is not None  # two levels at least: len(_LEVELS) > 1
            settled = (np.abs(value - previous) <= _RTOL * np.abs(value)) & (value > 0)
            with np.errstate(divide="ignore", invalid="ignore"):
                out[rows] = self.g0[j] - self.x[j] * eps[rows] + np.log(value * scale / np.pi)
            ok[rows] = settled
        return out, ok


def sample_loss(loss: QuadraticLoss, n: int, rng: np.random.Generator) -> np.ndarray:
    """n draws of the privacy loss L (first batch row): normal and chi-square components."""
    weight, dof, linear = loss.weight[0], loss.dof[0], loss.linear[0]
    value = np.full(n, loss.offset[0])
    if loss.normal_var[0] > 0:
        value += np.sqrt(loss.normal_var[0]) * rng.standard_normal(n)
    for w, k, s in zip(weight, dof, linear, strict=True):
        z = rng.standard_normal(n)
        rest = rng.chisquare(k - 1, n) if k > 1 else 0.0
        value += w * (z**2 + rest) + np.sqrt(s) * z
    return value

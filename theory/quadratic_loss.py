"""Exact privacy profile of a privacy loss that is a quadratic form of a standard normal vector.

For every pair of Gaussians (and the RP / ALS / Gaussian-mechanism closed forms) the privacy loss
L = ln p(X)/q(X), X ~ P, has the law (spec ndis-als-rp.md §2.3)

    L = offset + sqrt(normal_var) Z_0 + sum_j [ weight_j ||Z_j||^2 + sqrt(linear_j) Z_j1 ],

with independent standard normal vectors Z_j of dimension dof_j. Its cumulant generating function is

    K(z) = offset z + normal_var z^2 / 2
           + sum_j [ -dof_j/2 ln(1 - 2 weight_j z) + linear_j z^2 / (2 (1 - 2 weight_j z)) ].

delta_{P||Q}(eps) = E[(1 - e^{eps - L})_+] is the inverse Laplace transform

    delta(eps) = (1 / 2 pi i) int_{c - i inf}^{c + i inf} exp(K(z) - z eps) / (z (z + 1)) dz,   0 < c < z_max,

(spec prior-art-theory.md §5). We integrate through the saddle point of
g(z) = K(z) - z eps - ln z - ln(1 + z) along a parabola z = c + alpha y^2 + i y bent towards the
half-plane where the integrand decays, factor out e^{g(c)} and return ln delta = g(c) + ln(I / pi):
no subtraction of probabilities, relative accuracy for every representable ln delta.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import integrate

_START_NODES = 32     # first trapezoid level in the sinh-mapped variable t
_MAX_NODES = 4096     # last level of the batched trapezoid
_DEEP_NODES = 1 << 17  # last level of the second, row-chunked pass before the adaptive fallback
_DEEP_CHUNK = 1 << 21  # rows x nodes evaluated at once in that pass (bounded memory)
_RTOL = 1e-11         # agreement required between two successive trapezoid levels
_MAX_CLIMB = np.log(100.0)   # largest Re[G(z) - G(c)] tolerated on a path: at most 2 digits of cancellation


@dataclass(frozen=True)
class QuadraticLoss:
    """A batch of privacy-loss laws (see module docstring); arrays broadcast over a leading axis.

    weight, dof, linear: shape (batch, terms); offset, normal_var: shape (batch,). Terms with
    weight 0 must be folded into normal_var (use `QuadraticLoss.build`).
    """

    weight: np.ndarray
    dof: np.ndarray
    linear: np.ndarray
    offset: np.ndarray
    normal_var: np.ndarray

    @classmethod
    def build(cls, weight, dof, linear, offset, normal_var=0.0, zero_tol=0.0) -> "QuadraticLoss":
        """Broadcast the parameters to a batch; terms with |weight| <= zero_tol become normal terms."""
        weight = np.atleast_1d(np.asarray(weight, dtype=float))
        if weight.ndim == 1:
            weight = weight[None, :]
        batch = np.broadcast_shapes(weight.shape[:1], np.shape(np.atleast_1d(offset)), np.shape(np.atleast_1d(normal_var)))[0]
        shape = (batch, weight.shape[1])
        weight = np.broadcast_to(weight, shape).astype(float)
        dof = np.broadcast_to(np.asarray(dof, dtype=float), shape).astype(float)
        linear = np.broadcast_to(np.asarray(linear, dtype=float), shape).astype(float)
        offset = np.broadcast_to(np.asarray(offset, dtype=float), (batch,)).astype(float)
        normal_var = np.broadcast_to(np.asarray(normal_var, dtype=float), (batch,)).astype(float)
        zero = np.abs(weight) <= zero_tol
        normal_var = normal_var + np.where(zero, linear, 0.0).sum(axis=1)
        weight = np.where(zero, 0.0, weight)
        linear = np.where(zero, 0.0, linear)
        dof = np.where(zero, 0.0, dof)
        return cls(weight, dof, linear, offset, normal_var)

    @property
    def batch(self) -> int:
        return self.offset.shape[0]

    def take(self, rows) -> "QuadraticLoss":
        return QuadraticLoss(self.weight[rows], self.dof[rows], self.linear[rows], self.offset[rows], self.normal_var[rows])

    def negated(self) -> "QuadraticLoss":
        """The law of -L."""
        return QuadraticLoss(-self.weight, self.dof, self.linear, -self.offset, self.normal_var)

    # -- cumulant generating function and its derivatives on the real axis ------------------------
    def cgf_derivatives(self, x: np.ndarray):
        """K(x), K'(x), K''(x), K'''(x) for real x of shape (batch,), inside the domain."""
        w, k, s = self.weight, self.dof, self.linear
        x = x[:, None]
        u = 1.0 - 2.0 * w * x
        with np.errstate(divide="ignore", invalid="ignore"):
            k0 = (-0.5 * k * np.log(u) + s * x**2 / (2.0 * u)).sum(axis=1)
            k1 = (k * w / u + s * x * (1.0 - w * x) / u**2).sum(axis=1)
            k2 = (2.0 * k * w**2 / u**2 + s / u**3).sum(axis=1)
            k3 = (8.0 * k * w**3 / u**3 + 6.0 * w * s / u**4).sum(axis=1)
        x = x[:, 0]
        v = self.normal_var
        return (
            k0 + self.offset * x + 0.5 * v * x**2,
            k1 + self.offset + v * x,
            k2 + v,
            k3,
        )

    def upper_domain(self) -> np.ndarray:
        """z_max = 1 / (2 max weight) over positive weights (inf if none): K is finite on (-, z_max)."""
        wmax = np.max(np.where(self.weight > 0, self.weight, 0.0), axis=1, initial=0.0)
        with np.errstate(divide="ignore"):
            return np.where(wmax > 0, 0.5 / wmax, np.inf)

    def drift(self) -> np.ndarray:
        """The slope of K at infinity: offset - sum linear_j / (4 weight_j) (normal terms excluded)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(self.weight != 0, self.linear / (4.0 * self.weight), 0.0)
        return self.offset - terms.sum(axis=1)

    def bounded_above(self) -> np.ndarray:
        """True where L has a finite essential supremum (all weights <= 0, no normal part)."""
        return (self.normal_var == 0) & np.all(self.weight <= 0, axis=1)

    def ess_sup(self) -> np.ndarray:
        """Essential supremum of L (inf where unbounded): offset + sum linear_j / (4 |weight_j|)."""
        return np.where(self.bounded_above(), self.drift(), np.inf)

    def is_constant(self) -> np.ndarray:
        return (self.normal_var == 0) & np.all((self.weight == 0) & (self.linear == 0), axis=1)

    def complex_exponent(self, z: np.ndarray, c: np.ndarray, eps: np.ndarray) -> np.ndarray:
        """G(z) - G(c) with G(z) = K(z) - z eps - ln z - ln(1 + z), for z of shape (batch, nodes).

        Written in differences so that it is accurate near the saddle c."""
        dz = z - c[:, None]
        out = dz * (self.offset - eps)[:, None] + 0.5 * self.normal_var[:, None] * dz * (z + c[:, None])
        out -= np.log1p(dz / c[:, None]) + np.log1p(dz / (1.0 + c[:, None]))
        for j in range(self.weight.shape[1]):
            w, k, s = self.weight[:, j, None], self.dof[:, j, None], self.linear[:, j, None]
            if not np.any(k) and not np.any(s):
                continue
            uc = 1.0 - 2.0 * w * c[:, None]
            uz = 1.0 - 2.0 * w * z
            out += -0.5 * k * np.log1p(-2.0 * w * dz / uc) + 0.5 * s * dz * (z + c[:, None] - 2.0 * w * z * c[:, None]) / (uz * uc)
        return out


def _saddle(loss: QuadraticLoss, eps: np.ndarray) -> np.ndarray:
    """The minimiser c of the convex g(x) = K(x) - x eps - ln x - ln(1 + x) on (0, z_max)."""
    zmax = loss.upper_domain()
    lo = np.zeros_like(eps)
    hi = zmax.copy()

    def slope(x):
        return loss.cgf_derivatives(x)[1] - eps - 1.0 / x - 1.0 / (1.0 + x)

    # bracket: for z_max = inf double until g' > 0 (exists when delta > 0, see log_delta)
    top = np.isinf(hi)
    probe = np.where(top, 1.0, 0.0)
    for _ in range(2100):
        if not np.any(top):
            break
        grad = slope(np.where(top, probe, 1.0))
        done = top & (grad > 0)
        hi = np.where(done, probe, hi)
        lo = np.where(top & ~done, probe, lo)
        top = top & ~done
        probe = probe * 2.0
    x = 0.5 * (lo + hi)
    for _ in range(200):
        _, k1, k2, _ = loss.cgf_derivatives(x)
        grad = k1 - eps - 1.0 / x - 1.0 / (1.0 + x)
        curv = k2 + 1.0 / x**2 + 1.0 / (1.0 + x) ** 2
        lo = np.where(grad < 0, x, lo)
        hi = np.where(grad > 0, x, hi)
        step = grad / curv
        new = x - step
        outside = ~((new > lo) & (new < hi)) | ~np.isfinite(new)
        # bisect (geometrically when the bracket spans decades) where Newton leaves the bracket
        mid = np.where((lo > 0) & (hi > 4.0 * lo), np.sqrt(lo * hi), 0.5 * (lo + hi))
        new = np.where(outside, mid, new)
        converged = np.abs(new - x) <= 1e-14 * x
        x = new
        if np.all(converged | (grad == 0)):
            break
    return x


def _path_shape(loss, eps, c, g0, g2, g3):
    """Curvature alpha of the path z = c + alpha y^2 + i y and the far-field Gaussian decay rate of
    the integrand along it. alpha has the sign of D = eps - drift (e^{-D Re z} must decay) and is
    capped so that the path keeps its distance from the singularities on the real axis. A normal
    component, or a term whose 1/(2|weight|) lies far beyond the range where its Gaussian factor
    e^{-linear y^2 / 2} has killed the integrand, makes the vertical line (alpha = 0) the path."""
    zmax = loss.upper_domain()
    w, s = loss.weight, loss.linear
    with np.errstate(divide="ignore", invalid="ignore"):
        near_normal = (w != 0) & (s / (8.0 * w**2) > (np.abs(g0) + 1000.0)[:, None])
    gaussian = loss.normal_var + np.where(near_normal, s, 0.0).sum(axis=1)
    direction = np.sign(eps - loss.drift())                     # sign of D: decay of e^{-D Re z}
    local = g3 / (6.0 * g2)                                     # steepest-descent curvature at c
    with np.errstate(divide="ignore"):
        left = np.max(np.where(w < 0, 0.5 / w, -1.0), axis=1, initial=-1.0)   # nearest singularity < 0
    cap = np.where(direction > 0, np.where(np.isfinite(zmax), 0.5 / (zmax - c), np.sqrt(g2)), 0.5 / (c - left))
    cap = np.minimum(cap, np.sqrt(g2) * 4.0)
    magnitude = np.where(local * direction > 0, np.abs(local), 0.0)
    magnitude = np.clip(magnitude, 0.05 * cap, cap)
    alpha = np.where(gaussian > 0, 0.0, direction * magnitude)
    rate = np.where(gaussian > 0, 0.5 * gaussian, np.abs((eps - loss.drift()) * alpha))
    return alpha, rate


def _integrand(loss, eps, c, g2, alpha, t):
    """Im[e^{G(z) - G(c)} z'(y)] dy/dt at the nodes t (rows x points) of the sinh-mapped parabola,
    and per row the largest Re[G(z) - G(c)] met at these nodes (> 0: the path climbs above the saddle)."""
    scale = 1.0 / np.sqrt(g2)[:, None]
    y = scale * np.sinh(t)
    z = c[:, None] + alpha[:, None] * y**2 + 1j * y
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        exponent = loss.complex_exponent(z, c, eps)
        values = np.exp(exponent) * (2.0 * alpha[:, None] * y + 1j)
        climb = np.max(np.where(np.isnan(exponent.real), np.inf, exponent.real), axis=1, initial=-np.inf)
    return values.imag * scale * np.cosh(t), climb


def _line_range(loss, c, g2):
    """T for the vertical line z = c + i y (alpha = 0) when the loss has no normal part to give
    Gaussian decay. Each term's modulus |E e^{zX_j}| / E e^{cX_j} is <= 1 and its central chi-square
    coordinates contribute (1 + (2 w y / (1 - 2 w c))^2)^(-1/4) each; with the kernel bound
    c (1 + c) / |z (1 + z)| this bounds the integrand. Y is the first point of a log grid where
    bound * y is below 1e-18 of the peak (the tail beyond Y is then negligible), or 1e18 scales."""
    scale = 1.0 / np.sqrt(g2)
    y = scale[:, None] * np.logspace(0.0, 18.0, 73)[None, :]
    log_bound = np.log(c * (1.0 + c))[:, None] - 0.5 * np.log((c**2)[:, None] + y**2) - 0.5 * np.log(((1.0 + c) ** 2)[:, None] + y**2)
    central = loss.dof - (loss.linear > 0)          # a noncentral coordinate is only bounded by 1
    for j in range(loss.weight.shape[1]):
        w = loss.weight[:, j, None]
        u = 1.0 - 2.0 * w * c[:, None]
        log_bound += -0.25 * central[:, j, None] * np.log1p((2.0 * w * y / u) ** 2)
    log_bound -= 0.5 * loss.normal_var[:, None] * y**2
    small = log_bound + np.log(y / scale[:, None]) < np.log(1e-18)
    first = np.where(small.any(axis=1), np.argmax(small, axis=1), y.shape[1] - 1)
    reach = y[np.arange(y.shape[0]), first]
    return np.arcsinh(reach * np.sqrt(g2))


def _integration_range(loss, eps, c, g0, g2, rate):
    """T such that the integrand is below e^-100 of its peak for t > T (y = sinh(t) / sqrt(g2))."""
    dofs = loss.dof.sum(axis=1)
    reach = np.sqrt((np.abs(g0) + np.abs(c * (eps - loss.drift())) + 200.0 + dofs) / np.maximum(rate, 1e-300))
    reach = np.maximum(reach, 40.0 / np.sqrt(g2))
    return np.arcsinh(reach * np.sqrt(g2))


def _trapezoid(loss, eps, c, g2, alpha, top, max_nodes=_MAX_NODES):
    """I = int_0^T (integrand) dt by nested trapezoid sums, halving the step until two successive
    sums agree to _RTOL (exponential convergence for analytic integrands). Returns (I, converged)."""
    rows = np.arange(loss.batch)
    ends, climb_ends = _integrand(loss, eps, c, g2, alpha, np.stack([np.zeros_like(top), top], axis=1))
    n = _START_NODES
    h = top / n
    inner, climb = _integrand(loss, eps, c, g2, alpha, h[:, None] * np.arange(1, n)[None, :])
    climb = np.maximum(climb, climb_ends)
    total = h * (inner.sum(axis=1) + 0.5 * ends.sum(axis=1))
    ok = np.all(np.isfinite(ends), axis=1) & (np.abs(ends[:, 1]) <= 1e-15 * np.abs(total) / np.maximum(h, 1e-300))
    done = np.zeros(loss.batch, dtype=bool)
    previous = np.ones(loss.batch)           # relative change at the previous refinement
    while n < max_nodes:
        todo = rows[~done]
        if todo.size == 0:
            break
        sub = loss.take(todo)
        h = top[todo] / (2 * n)
        mids, climbed = _integrand(sub, eps[todo], c[todo], g2[todo], alpha[todo], h[:, None] * np.arange(1, 2 * n, 2)[None, :])
        climb[todo] = np.maximum(climb[todo], climbed)
        refined = 0.5 * total[todo] + h * mids.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            change = np.abs(refined - total[todo]) / np.abs(refined)
        # small AND converging the way an analytic integrand does (the change at least ~squares per
        # halving), or at the rounding floor, or small twice in a row: a narrow far-field feature that
        # the coarse nodes straddle can make one change spuriously small while the next is 1e-10
        settled = np.isfinite(refined) & (change <= _RTOL) & (
            (change <= previous[todo] ** 1.5) | (change <= 1e-14) | (previous[todo] <= _RTOL))
        previous[todo] = np.where(np.isfinite(change), change, 1.0)
        total[todo] = refined
        done[todo[settled | ~np.isfinite(refined)]] = True
        n *= 2
    # a path on which |e^{G(z) - G(c)}| climbs far above its value at the saddle (a near-normal
    # term growing like e^{linear z^2 / 2} before its singularity, met by a strongly bent parabola)
    # only yields I through cancellation: reject it (the caller retries on the vertical line)
    ok &= done & np.isfinite(total) & (total > 0) & (climb <= _MAX_CLIMB)
    return total, ok


def _adaptive(loss, eps, c, alpha, g2, top) -> float:
    """Fallback for one batch row: adaptive Gauss-Kronrod quadrature on the same path, or on the
    vertical line Re z = c over y in [0, inf) if that path meets overflow."""
    scale = 1.0 / np.sqrt(g2[0])

    def on_path(t):
        y = scale * np.sinh(t)
        z = np.array([[c[0] + alpha[0] * y * y + 1j * y]])
        value = np.exp(loss.complex_exponent(z, c, eps)[0, 0]) * (2.0 * alpha[0] * y + 1j)
        return value.imag * scale * np.cosh(t)

    def on_line(y):
        return np.exp(loss.complex_exponent(np.array([[c[0] + 1j * y]]), c, eps)[0, 0]).real

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            pieces = np.linspace(0.0, top[0], 33)
            total = sum(integrate.quad(on_path, a, b, epsabs=0.0, epsrel=1e-13, limit=200)[0]
                        for a, b in zip(pieces[:-1], pieces[1:]))
            if not (np.isfinite(total) and total > 0):
                total = integrate.quad(on_line, 0.0, np.inf, epsabs=0.0, epsrel=1e-12, limit=1000)[0]
    return total


def log_delta(loss: QuadraticLoss, eps) -> np.ndarray:
    """ln delta(eps) = ln E[(1 - e^{eps - L})_+] for each batch row (eps broadcast to the batch).

    -inf where delta = 0 exactly (eps >= ess sup L). Accurate to ~1e-12 relative in delta."""
    eps = np.broadcast_to(np.asarray(eps, dtype=float), (loss.batch,)).astype(float)
    out = np.full(loss.batch, -np.inf)
    constant = loss.is_constant()
    with np.errstate(divide="ignore"):
        out[constant] = np.log(-np.expm1(np.minimum(eps - loss.offset, 0.0)))[constant]
    active = ~constant & (eps < loss.ess_sup())
    if not np.any(active):
        return out
    rows = np.flatnonzero(active)
    sub, e = loss.take(rows), eps[rows]
    c = _saddle(sub, e)
    k0, _, k2, k3 = sub.cgf_derivatives(c)
    g0 = k0 - c * e - np.log(c) - np.log1p(c)
    g2 = k2 + 1.0 / c**2 + 1.0 / (1.0 + c) ** 2
    g3 = k3 - 2.0 / c**3 - 2.0 / (1.0 + c) ** 3
    alpha, rate = _path_shape(sub, e, c, g0, g2, g3)
    top = _integration_range(sub, e, c, g0, g2, rate)
    integral, ok = _trapezoid(sub, e, c, g2, alpha, top)
    # a saddle pinned to the edge of the domain (1 - c/z_max below 1e-10) only happens for
    # ln delta of order -1e10 and beyond: there the Laplace term sqrt(pi / (2 g''(c))) carries
    # ln delta to full relative precision and the path integral is not needed
    pinned = c >= (1.0 - 1e-10) * sub.upper_domain()
    integral[pinned] = np.sqrt(np.pi / (2.0 * g2[pinned]))
    # a rejected parabola: retry on the vertical line Re z = c, where |e^{G(z) - G(c)}| <= 1 always
    retry = np.flatnonzero(~ok & ~pinned & (alpha != 0))
    if retry.size:
        part = sub.take(retry)
        alpha[retry] = 0.0
        top[retry] = _line_range(part, c[retry], g2[retry])
        integral[retry], ok[retry] = _trapezoid(part, e[retry], c[retry], g2[retry], alpha[retry], top[retry])
    # still unconverged (typically the vertical line with a slowly decaying, oscillating integrand,
    # e.g. a near-normal term together with a saddle next to another term's branch point): finer
    # trapezoid levels, a few rows at a time, before the much slower adaptive quadrature
    deep = np.flatnonzero(~ok & ~pinned)
    for start in range(0, deep.size, max(1, _DEEP_CHUNK // _DEEP_NODES)):
        part = deep[start:start + max(1, _DEEP_CHUNK // _DEEP_NODES)]
        integral[part], ok[part] = _trapezoid(sub.take(part), e[part], c[part], g2[part], alpha[part], top[part],
                                              max_nodes=_DEEP_NODES)
    for i in np.flatnonzero(~ok & ~pinned):
        integral[i] = _adaptive(sub.take([i]), e[[i]], c[[i]], alpha[[i]], g2[[i]], top[[i]])
    with np.errstate(divide="ignore", invalid="ignore"):
        value = g0 + np.log(integral / np.pi)
    out[rows] = np.minimum(value, 0.0)
    return out

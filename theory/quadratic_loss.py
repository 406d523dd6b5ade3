"""Exact privacy profile of a privacy loss that is a quadratic form of a standard normal vector.

For every pair of Gaussians (and the RP / ALS / Gaussian-mechanism closed forms) the privacy loss
L = ln p(X)/q(X), X ~ P, has the law (Lu, Magdon-Ismail, Wei & Zikas 2023, NDIS, Theorem 1)

    L = offset + sqrt(normal_var) Z_0 + sum_j [ weight_j ||Z_j||^2 + sqrt(linear_j) Z_j1 ],

with independent standard normal vectors Z_j of dimension dof_j. Its cumulant generating function is

    K(z) = offset z + normal_var z^2 / 2
           + sum_j [ -dof_j/2 ln(1 - 2 weight_j z) + linear_j z^2 / (2 (1 - 2 weight_j z)) ].

delta_{P||Q}(eps) = E[(1 - e^{eps - L})_+] is the inverse Laplace transform

    delta(eps) = (1 / 2 pi i) int_{c - i inf}^{c + i inf} exp(K(z) - z eps) / (z (z + 1)) dz,   0 < c < z_max,

(the Laplace inversion of delta, derived here; docs/theory.md, Method). We integrate through the saddle point of
g(z) = K(z) - z eps - ln z - ln(1 + z) along a parabola z = c + alpha y^2 + i y bent towards the
half-plane where the integrand decays, factor out e^{g(c)} and return ln delta = g(c) + ln(I / pi):
no subtraction of probabilities, relative accuracy for every representable ln delta.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

_START_NODES = 32     # first trapezoid level in the sinh-mapped variable t
_MAX_NODES = 4096     # last level before the adaptive-quadrature fallback
_RTOL = 1e-11         # agreement required between two successive trapezoid levels
_SCAN_STEP, _SCAN_POINTS, _SCAN_BLOCKS = 0.5, 8, 6   # coarse scan for the end of the range: t <= 24
_MAX_CLIMB = np.log(100.0)   # largest Re[G(z) - G(c)] accepted on a path: two digits of cancellation


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
    def build(cls, weight: ArrayLike, dof: ArrayLike, linear: ArrayLike, offset: ArrayLike, normal_var: ArrayLike = 0.0,
              zero_tol: float = 0.0) -> QuadraticLoss:
        """Broadcast the parameters to a batch; terms with |weight| <= zero_tol become normal terms."""
        weight = np.atleast_1d(np.asarray(weight, dtype=float))
        if weight.ndim == 1:
            weight = weight[None, :]
        batch = np.broadcast_shapes(weight.shape[:1], np.shape(np.atleast_1d(offset)),
                                    np.shape(np.atleast_1d(normal_var)))[0]
        shape = (batch, weight.shape[1])
        weight = np.broadcast_to(weight, shape).astype(float)
        dof = np.broadcast_to(np.asarray(dof, dtype=float), shape).astype(float)
        linear = np.broadcast_to(np.asarray(linear, dtype=float), shape).astype(float)
        offset = np.broadcast_to(np.asarray(offset, dtype=float), (batch,)).astype(float)
        normal_var = np.broadcast_to(np.asarray(normal_var, dtype=float), (batch,)).astype(float)
        zero = np.abs(weight) <= zero_tol
        folded = np.where(zero, linear, 0.0).sum(axis=1)
        # a linear part left on rounding-level weights that is negligible against the variance of
        # the rest must not turn a bounded loss into an unbounded one
        rest = np.where(zero, 0.0, 2.0 * dof * weight**2 + linear).sum(axis=1)
        normal_var = normal_var + np.where(folded <= 1e-20 * rest, 0.0, folded)
        weight = np.where(zero, 0.0, weight)
        linear = np.where(zero, 0.0, linear)
        dof = np.where(zero, 0.0, dof)
        return cls(weight, dof, linear, offset, normal_var)

    @property
    def batch(self) -> int:
        return self.offset.shape[0]

    def take(self, rows: np.ndarray | list[int]) -> QuadraticLoss:
        return QuadraticLoss(self.weight[rows], self.dof[rows], self.linear[rows], self.offset[rows],
                             self.normal_var[rows])

    # -- cumulant generating function and its derivatives on the real axis ------------------------
    def denominators(self, x: np.ndarray, gap: np.ndarray | None = None) -> np.ndarray:
        """u_j = 1 - 2 weight_j x, shape (batch, terms), for real x with gap = z_max - x.

        Near z_max = 1 / (2 w_max) the direct form loses the digits of the largest weight's u to
        cancellation (x ~ 1e9 at a gap of 0.1 for tiny weights); written as
        u_j = (w_max - w_j) / w_max + 2 w_j gap it keeps full relative accuracy when the gap is
        carried separately (`_saddle`)."""
        zmax = self.upper_domain()
        if gap is None:
            gap = zmax - x
        w = self.weight
        finite = np.isfinite(zmax)
        wmax = np.where(finite, 0.5 / np.where(finite, zmax, 1.0), 1.0)[:, None]
        if not finite.any():
            return 1.0 - 2.0 * w * x[:, None]
        with np.errstate(invalid="ignore"):
            near = (wmax - w) / wmax + 2.0 * w * np.where(finite, gap, 0.0)[:, None]
        return near if finite.all() else np.where(finite[:, None], near, 1.0 - 2.0 * w * x[:, None])

    def cgf_derivatives(self, x: np.ndarray,
                        gap: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """K(x), K'(x), K''(x), K'''(x) for real x of shape (batch,) inside the domain (gap = z_max - x)."""
        w, k, s = self.weight, self.dof, self.linear
        u = self.denominators(x, gap)
        x = x[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):  # products of 1/u, not powers: 2.5x faster
            inv = 1.0 / u
            wu = w * inv                        # w / u
            kwu = k * wu                        # k w / u
            su = s * inv                        # s / u
            su2 = su * inv                      # s / u^2
            k0 = (-0.5 * k * np.log(u) + (0.5 * x * x) * su).sum(axis=1)
            k1 = (kwu + (x * (1.0 - w * x)) * su2).sum(axis=1)
            k2 = (2.0 * kwu * wu + su2 * inv).sum(axis=1)
            k3 = (8.0 * kwu * wu * wu + 6.0 * wu * su2 * inv).sum(axis=1)
        x = x[:, 0]
        v = self.normal_var
        return (
            k0 + self.offset * x + 0.5 * v * x**2,
            k1 + self.offset + v * x,
            k2 + v,
            k3,
        )

    def cgf_table(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """K(x), K'(x), K''(x) of a one-row loss at many real x (shape (m,)) inside its domain: the same
        sums as `cgf_derivatives`, taken over the terms as matrix-vector products (a few passes over the
        (m, terms) array instead of a dozen)."""
        if self.batch != 1:
            raise ValueError("cgf_table evaluates a loss of one row")
        w, k, s = self.weight[0], self.dof[0], self.linear[0]
        u = self.denominators(x)                # (m, terms): the one row's terms at each x
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / u
            inv2 = inv * inv
            s_inv, s_inv2 = inv @ s, inv2 @ s
            k0 = -0.5 * (np.log(u) @ k) + 0.5 * x * x * s_inv
            k1 = inv @ (k * w) + x * s_inv2 - x * x * (inv2 @ (w * s))
            k2 = 2.0 * (inv2 @ (k * w * w)) + (inv2 * inv) @ s
        v, offset = self.normal_var[0], self.offset[0]
        return k0 + offset * x + 0.5 * v * x**2, k1 + offset + v * x, k2 + v

    def slope_curvature(self, x: np.ndarray, gap: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """K'(x) and K''(x) only (the saddle-point iteration needs no logarithm)."""
        w, k, s = self.weight, self.dof, self.linear
        xc = x[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / self.denominators(x, gap)
            k1 = (inv * (k * w + s * xc * (1.0 - w * xc) * inv)).sum(axis=1)
            k2 = (inv**2 * (2.0 * k * w**2 + s * inv)).sum(axis=1)
        return k1 + self.offset + self.normal_var * x, k2 + self.normal_var

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

    def complex_exponent(self, dz: np.ndarray, c: np.ndarray, gap: np.ndarray, eps: np.ndarray) -> np.ndarray:
        """G(c + dz) - G(c) with G(z) = K(z) - z eps - ln z - ln(1 + z), for dz of shape (batch, nodes).

        Written in the offset dz from the saddle c (gap = z_max - c), with u(z) = u(c) - 2 weight dz:
        accurate near c and next to the branch point z_max even where c is huge (c + dz would lose
        the digits of dz)."""
        z = c[:, None] + dz
        ucs = self.denominators(c, gap)
        out = dz * (self.offset - eps)[:, None] + 0.5 * self.normal_var[:, None] * dz * (z + c[:, None])
        out -= np.log1p(dz / c[:, None]) + np.log1p(dz / (1.0 + c[:, None]))
        for j in range(self.weight.shape[1]):
            w, k, s = self.weight[:, j, None], self.dof[:, j, None], self.linear[:, j, None]
            uc = ucs[:, j, None]
            if np.any(k):
                out -= 0.5 * k * np.log1p((-2.0 * w / uc) * dz)
            if np.any(s):
                # linear (z^2/u(z) - c^2/u(c)) / 2 = linear dz (z/u(z) + c) / (2 u(c))
                out += (0.5 * s / uc) * dz * (z / (uc - 2.0 * w * dz) + c[:, None])
        return out


def _saddle(loss: QuadraticLoss, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The minimiser c of the convex g(x) = K(x) - x eps - ln x - ln(1 + x) on (0, z_max), and its
    gap z_max - c to full relative accuracy (inf where z_max = inf)."""
    zmax = loss.upper_domain()
    lo = np.zeros_like(eps)
    hi = zmax.copy()

    def slope(x: np.ndarray) -> np.ndarray:
        return loss.slope_curvature(x)[0] - eps - 1.0 / x - 1.0 / (1.0 + x)

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
        k1, k2 = loss.slope_curvature(x)
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
        # any c in (0, z_max) gives the exact integral: the saddle only makes the path efficient
        converged = np.abs(new - x) <= 1e-10 * x
        x = new
        if np.all(converged | (grad == 0)):
            break
    gap = _polish_gap(loss, eps, x, zmax)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(gap), zmax - gap, x), gap


def _polish_gap(loss: QuadraticLoss, eps: np.ndarray, x: np.ndarray, zmax: np.ndarray) -> np.ndarray:
    """Newton on the gap h = z_max - c (dh = -dx), halving where a step leaves (0, z_max): a saddle
    within a few units in the last place of z_max (tiny weights, large eps) gets a gap accurate to
    1e-12 relative, which c itself cannot carry."""
    finite = np.isfinite(zmax)
    gap = np.where(finite, zmax - x, np.inf)
    rows = np.flatnonzero(finite)
    if rows.size == 0:
        return gap
    part, e, top = loss.take(rows), eps[rows], zmax[rows]
    h = np.maximum(gap[rows], 1e-17 * top)
    for _ in range(200):
        c = top - h
        k1, k2 = part.slope_curvature(c, h)
        grad = k1 - e - 1.0 / c - 1.0 / (1.0 + c)
        curv = k2 + 1.0 / c**2 + 1.0 / (1.0 + c) ** 2
        new = h + grad / curv
        new = np.where(new <= 0, 0.5 * h, np.where(new >= top, 0.5 * (h + top), new))
        done = ~np.isfinite(new) | (np.abs(new - h) <= 1e-13 * h)
        h = np.where(np.isfinite(new), new, h)
        if np.all(done):
            break
    gap[rows] = h
    return gap


def _path_shape(loss: QuadraticLoss, eps: np.ndarray, c: np.ndarray, gap: np.ndarray, g2: np.ndarray,
                g3: np.ndarray) -> list[np.ndarray]:
    """Curvatures (bold, cautious) of the path z = c + alpha y^2 + i y, tried in this order.

    |alpha| is the steepest-descent curvature g3 / (6 g2) at the saddle (g2, g3: derivatives of g at
    c), clipped to [0.05, 1] x 0.5 / room and to 4 sqrt(g2): the path keeps half the room from the
    nearest singularity on the real axis on its side. The bold shape bends to the side of the
    steepest descent and measures the room to the nearest singularity of any kind (a branch point
    next to a saddle pinned near z_max, as for tiny weights at large eps, needs the Hankel-like path
    around it); the cautious one bends to the side of D = eps - drift (e^{-D Re z} decays at
    infinity) and measures the room to the nearest essential singularity of
    exp(linear z^2 / (2(1 - 2 weight z))), near which the integrand may bump above its saddle value.
    The parabola never meets the real axis beyond c, so every alpha gives the exact integral; paths
    on which the integrand climbs are rejected by `_trapezoid` and the next shape is tried. A normal
    component (e^{normal_var z^2 / 2} grows along any parabola) makes the vertical line the path.
    Terms that are nearly normal (a linear part with a tiny weight) do not: a branch point next to
    the saddle still needs the bent path, whose far end the integration range cuts off."""
    zmax = loss.upper_domain()
    w, s = loss.weight, loss.linear
    direction = np.sign(eps - loss.drift())                     # sign of D: decay of e^{-D Re z}
    local = g3 / (6.0 * g2)                                     # steepest-descent curvature at c
    with np.errstate(divide="ignore"):
        point = np.where(w != 0, 0.5 / w, np.nan)              # branch points 1/(2 weight) on the real axis
    # exp(linear z^2 / (2(1 - 2 weight z))) is an essential singularity at 1/(2 weight) unless its
    # exponent, about linear / (4 weight^2) at unit distance, is negligible
    with np.errstate(divide="ignore", invalid="ignore"):
        essential = (s > 0) & (s > 1e-3 * 4.0 * w**2)
        right_ess = np.min(np.where((w > 0) & essential, point - zmax[:, None], np.inf), axis=1, initial=np.inf) + gap
    right_any = gap
    left_any = c - np.max(np.where(w < 0, point, -1.0), axis=1, initial=-1.0)
    left_ess = c - np.max(np.where((w < 0) & essential, point, -np.inf), axis=1, initial=-np.inf)
    shapes = []
    # the bold shape follows the steepest descent at c (its side, nearest singularity of any kind);
    # the cautious one the side where e^{-D Re z} decays at infinity, clear of essential singularities
    for side, right, left in ((np.where(local != 0, np.sign(local), direction), right_any, left_any),
                              (direction, np.where(np.isfinite(right_ess), right_ess, right_any),
                               np.where(np.isfinite(left_ess), left_ess, left_any))):
        room = np.where(side > 0, right, left)
        cap = np.minimum(np.where(np.isfinite(room), 0.5 / room, np.sqrt(g2)), np.sqrt(g2) * 4.0)
        magnitude = np.clip(np.where(local * side > 0, np.abs(local), 0.0), 0.05 * cap, cap)
        shapes.append(np.where(loss.normal_var > 0, 0.0, side * magnitude))
    return shapes


def _integrand(loss: QuadraticLoss, eps: np.ndarray, c: np.ndarray, gap: np.ndarray, g2: np.ndarray, alpha: np.ndarray,
               t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Im[e^{G(z) - G(c)} z'(y)] dy/dt at the nodes t (rows x points) of the sinh-mapped parabola,
    and per row the largest Re[G(z) - G(c)] met (> 0: the path climbs above the saddle)."""
    scale = 1.0 / np.sqrt(g2)[:, None]
    y = scale * np.sinh(t)
    dz = alpha[:, None] * y**2 + 1j * y
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        exponent = loss.complex_exponent(dz, c, gap, eps)
        values = np.exp(exponent) * (2.0 * alpha[:, None] * y + 1j)
        climb = np.max(np.where(np.isnan(exponent.real), np.inf, exponent.real), axis=1, initial=-np.inf)
        return values.imag * scale * np.cosh(t), climb


def _integration_range(loss: QuadraticLoss, eps: np.ndarray, c: np.ndarray, gap: np.ndarray, g2: np.ndarray,
                       alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First t (on a coarse scan) where the integrand has fallen below e^-70 of its value at the saddle.

    The rest of the contour may then leave the parabola for the vertical line through that point,
    along which the integrand's modulus keeps decreasing: its contribution is negligible. This also
    keeps the path away from essential singularities further along the real axis. Returns (T, found)."""
    top = np.full(loss.batch, np.inf)
    todo = np.arange(loss.batch)
    for block in range(_SCAN_BLOCKS):
        if todo.size == 0:
            break
        t = (block * _SCAN_POINTS + np.arange(1, _SCAN_POINTS + 1))[None, :] * _SCAN_STEP
        t = np.broadcast_to(t, (todo.size, _SCAN_POINTS))
        scale = 1.0 / np.sqrt(g2[todo])[:, None]
        y = scale * np.sinh(t)
        dz = alpha[todo, None] * y**2 + 1j * y
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            size = (loss.take(todo).complex_exponent(dz, c[todo], gap[todo], eps[todo]).real
                    + np.log(np.abs(2.0 * alpha[todo, None] * y + 1j) * scale * np.cosh(t)))
        below = size < -70.0
        hit = np.any(below, axis=1)
        first = np.argmax(below, axis=1)
        # a path along which the integrand grows far above its saddle value meets an essential
        # singularity: its huge contributions cancel only in exact arithmetic -> reject it
        before = np.where(np.arange(_SCAN_POINTS)[None, :] < np.where(hit, first, _SCAN_POINTS)[:, None], size, -np.inf)
        bumped = ~(np.max(before, axis=1) < 20.0)
        top[todo[hit & ~bumped]] = t[hit & ~bumped, first[hit & ~bumped]]
        todo = todo[~hit & ~bumped]
    return top, np.isfinite(top)


def _trapezoid(loss: QuadraticLoss, eps: np.ndarray, c: np.ndarray, gap: np.ndarray, g2: np.ndarray, alpha: np.ndarray,
               top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """I = int_0^T (integrand) dt by nested trapezoid sums, halving the step until two successive
    sums agree to _RTOL (exponential convergence for analytic integrands). Returns (I, accepted):
    rejected are unconverged rows and paths on which |e^{G(z) - G(c)}| climbs more than _MAX_CLIMB
    above its saddle value (a bump near a singularity that only cancels in exact arithmetic)."""
    rows = np.arange(loss.batch)
    ends, climb = _integrand(loss, eps, c, gap, g2, alpha, np.stack([np.zeros_like(top), top], axis=1))
    n = _START_NODES
    h = top / n
    inner, climbed = _integrand(loss, eps, c, gap, g2, alpha, h[:, None] * np.arange(1, n)[None, :])
    climb = np.maximum(climb, climbed)
    with np.errstate(invalid="ignore", over="ignore"):       # non-finite sums mark rejected rows
        total = h * (inner.sum(axis=1) + 0.5 * ends.sum(axis=1))
        ok = np.all(np.isfinite(ends), axis=1) & (np.abs(ends[:, 1]) <= 1e-15 * np.abs(total) / np.maximum(h, 1e-300))
    done = np.zeros(loss.batch, dtype=bool)
    while n < _MAX_NODES:
        todo = rows[~done]
        if todo.size == 0:
            break
        sub = loss.take(todo)
        h = top[todo] / (2 * n)
        mids, climbed = _integrand(sub, eps[todo], c[todo], gap[todo], g2[todo], alpha[todo],
                                   h[:, None] * np.arange(1, 2 * n, 2)[None, :])
        climb[todo] = np.maximum(climb[todo], climbed)
        with np.errstate(invalid="ignore", over="ignore"):
            refined = 0.5 * total[todo] + h * mids.sum(axis=1)
            settled = np.isfinite(refined) & (np.abs(refined - total[todo]) <= _RTOL * np.abs(refined))
        total[todo] = refined
        done[todo[settled | ~np.isfinite(refined) | (climb[todo] > _MAX_CLIMB)]] = True
        n *= 2
    ok &= done & np.isfinite(total) & (total > 0) & (climb <= _MAX_CLIMB)
    return total, ok


def _adaptive(loss: QuadraticLoss, eps: np.ndarray, c: np.ndarray, gap: np.ndarray, g2: np.ndarray) -> float:
    """Last resort for one batch row: adaptive quadrature on the vertical line Re z = c, y in [0, inf).
    Warns when the quadrature's own error estimate exceeds 1e-9 of the result."""
    from scipy import integrate

    def on_line(y: float) -> float:
        return np.exp(loss.complex_exponent(np.array([[1j * y]]), c, gap, eps)[0, 0]).real

    scale = 1.0 / np.sqrt(g2[0])
    breaks = scale * np.array([0.0, 1.0, 3.0, 10.0, 30.0, np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            pieces = [integrate.quad(on_line, a, b, epsabs=0.0, epsrel=1e-13, limit=1000)
                      for a, b in itertools.pairwise(breaks)]
    total, error = sum(p[0] for p in pieces), sum(p[1] for p in pieces)
    if not error <= 1e-9 * abs(total):
        warnings.warn(f"delta at eps={eps[0]:.6g}: the fallback quadrature's error estimate is "
                      f"{error / max(abs(total), 1e-300):.1e} relative", RuntimeWarning, stacklevel=3)
    return total


def log_delta_ceiling(loss: QuadraticLoss, eps: ArrayLike, steps: int = 6) -> np.ndarray:
    """An upper bound of ln delta(eps) for each batch row, at a few vectorised steps per row.

    For z in (0, z_max), (1 - e^{-u})_+ <= e^{z u} max_{v > 0} (1 - e^{-v}) e^{-z v} for every u, and
    the maximum is (z / (1 + z))^z / (1 + z) (at e^{-v} = z / (1 + z)); with u = L - eps this is the
    Chernoff-type bound

        ln delta(eps) <= B(z) = K(z) - z eps - ln(1 + z) + z ln(z / (1 + z)),

    valid at every z of the domain, so z is only roughly optimised: from the normal approximation's
    (eps - K'(0)) / K''(0), `steps` Newton steps on B'(z) = K'(z) - eps + ln(z / (1 + z)), kept
    inside (0, z_max) and within a factor 1000 per step. Exact (-inf) where delta = 0 exactly, and for a
    constant loss. Where the steps converge it exceeds ln delta by about ln(z sqrt(2 pi B''(z))), a few
    units (3.6 to 12 on flights rows at r = 1200: median 12); where they do not it is looser (up to
    thousands), which only keeps more rows in a pruned scan (`theory.spectrum`)."""
    eps = np.broadcast_to(np.asarray(eps, dtype=float), (loss.batch,)).astype(float)
    # the same law with its (batch, terms) arrays in column order: the sums over the few terms then
    # run down whole columns instead of row by row (same values, a fraction of the time)
    weight, dof, linear = (np.asfortranarray(a) for a in (loss.weight, loss.dof, loss.linear))
    loss = QuadraticLoss(weight, dof, linear, loss.offset, loss.normal_var)
    zmax = loss.upper_domain()
    top = np.where(np.isfinite(zmax), zmax, np.inf)
    _, slope, curvature, _ = loss.cgf_derivatives(np.zeros(loss.batch))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = np.clip((eps - slope) / curvature, 1e-3, np.minimum(0.5 * top, 1e6))
        z = np.where(np.isfinite(z), z, np.minimum(0.5 * top, 1.0))
        for _ in range(steps):
            k1, k2 = loss.slope_curvature(z)
            newton = z - (k1 - eps + np.log(z / (1.0 + z))) / (k2 + 1.0 / (z * (1.0 + z)))
            z = np.clip(np.where(np.isfinite(newton), newton, z), 0.1 * z, np.minimum(1e3 * z, z + 0.9 * (top - z)))
        k0 = loss.cgf_derivatives(z)[0]
        bound = k0 - z * eps - np.log1p(z) + z * np.log(z / (1.0 + z))
    bound = np.where(np.isnan(bound), np.inf, np.minimum(bound, 0.0))
    bound[eps >= loss.ess_sup()] = -np.inf  # delta = 0 exactly there (`log_delta`)
    constant = loss.is_constant()
    bound[constant] = log_delta(loss.take(np.flatnonzero(constant)), eps[constant])
    return bound


def log_delta(loss: QuadraticLoss, eps: ArrayLike) -> np.ndarray:
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
    c, gap = _saddle(sub, e)
    k0, _, k2, k3 = sub.cgf_derivatives(c, gap)
    g0 = k0 - c * e - np.log(c) - np.log1p(c)
    g2 = k2 + 1.0 / c**2 + 1.0 / (1.0 + c) ** 2
    g3 = k3 - 2.0 / c**3 - 2.0 / (1.0 + c) ** 3
    bold, cautious = _path_shape(sub, e, c, gap, g2, g3)
    # first the shape along which the integrand falls below e^-70 sooner (fewer trapezoid nodes),
    # then the other, the cautious one flattened by 8 and 64, then the vertical line
    reach = [np.where(found, top, np.inf) for top, found in
             (_integration_range(sub, e, c, gap, g2, shape) for shape in (bold, cautious))]
    bold_first = reach[0] < reach[1]
    first, second = np.where(bold_first, bold, cautious), np.where(bold_first, cautious, bold)
    integral = np.full(rows.size, np.nan)
    pending = np.arange(rows.size)
    tried = np.full(rows.size, np.nan)
    for shape in (first, second, cautious / 8.0, cautious / 64.0, 0.0 * cautious):
        retry = pending[shape[pending] != tried[pending]]
        alpha = tried[retry] = shape[retry]
        part = sub.take(retry)
        top, found = _integration_range(part, e[retry], c[retry], gap[retry], g2[retry], alpha)
        value, ok = _trapezoid(part, e[retry], c[retry], gap[retry], g2[retry], alpha, np.where(found, top, 1.0))
        ok &= found
        integral[retry[ok]] = value[ok]
        pending = np.setdiff1d(pending, retry[ok])
        if pending.size == 0:
            break
    # a saddle pinned to the edge of the domain (1 - c/z_max below 1e-10) only happens for
    # ln delta of order -1e10 and beyond: there the Laplace term sqrt(pi / (2 g''(c))) carries
    # ln delta to full relative precision and the path integral is not needed
    pinned = gap[pending] <= 1e-10 * sub.upper_domain()[pending]
    integral[pending[pinned]] = np.sqrt(np.pi / (2.0 * g2[pending[pinned]]))
    for i in pending[~pinned]:
        integral[i] = _adaptive(sub.take([i]), e[[i]], c[[i]], gap[[i]], g2[[i]])
    with np.errstate(divide="ignore", invalid="ignore"):
        value = g0 + np.log(integral / np.pi)
    out[rows] = np.minimum(value, 0.0)
    return out

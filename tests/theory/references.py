"""Independent high-precision references for the theory tests (mpmath only, no code from `theory`).

Every reference below is the textbook two-term formula delta = P(S) - e^eps Q(S) evaluated with
`dps` decimal digits. The two terms agree in at most ~log10(1/cancellation) leading digits, and for
the cases tested here the cancellation costs fewer than 40 digits (checked by `test_reference_*_self_check`
which recomputes with 50 more digits), so with dps = 100 the reference is exact far below the 1e-9
tolerance of the tests. mpmath numbers have an unbounded exponent: delta = 10^-400000 is representable.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np

DPS = 100


def _phi_cdf(x):
    return mp.erfc(-x / mp.sqrt(2)) / 2


def gaussian_delta_mp(eps, mu, dps: int = DPS):
    """Balle-Wang: delta(eps; mu) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)."""
    with mp.workdps(dps):
        eps, mu = mp.mpf(eps), mp.mpf(mu)
        return +(_phi_cdf(mu / 2 - eps / mu) - mp.exp(eps) * _phi_cdf(-mu / 2 - eps / mu))


def chi2_sf_mp(r, t):
    """Pr[chi2_r >= t] = Gamma(r/2, t/2) / Gamma(r/2) (regularised upper incomplete gamma)."""
    if t <= 0:
        return mp.mpf(1)
    return mp.gammainc(mp.mpf(r) / 2, t / 2, mp.inf, regularized=True)


def chi2_cdf_mp(r, t):
    """Pr[chi2_r <= t] (regularised lower incomplete gamma)."""
    if t <= 0:
        return mp.mpf(0)
    return mp.gammainc(mp.mpf(r) / 2, 0, t / 2, regularized=True)


def rp_delta_mp(eps, leverage, r, direction: str, dps: int = DPS):
    """RP of a row of leverage l, chi-square forms of Lu et al. (2023, NDIS), Theorem 2 (Y ~ chi2_r):
    forward  = Pr[Y >= 2(1-l) a+/l] - e^eps Pr[Y >= 2 a+/l],       a+ = eps - (r/2) ln(1-l);
    reverse  = Pr[Y <= 2 a-/l] - e^eps Pr[Y <= 2(1-l) a-/l] (a- > 0, else 0), a- = -eps - (r/2) ln(1-l).
    Valid for negative eps too (a threshold <= 0 gives probability 1 resp. 0)."""
    with mp.workdps(dps):
        eps, l = mp.mpf(eps), mp.mpf(leverage)
        shift = mp.mpf(r) / 2 * mp.log(1 - l)
        if direction == "forward":
            a = eps - shift
            return +(chi2_sf_mp(r, 2 * (1 - l) * a / l) - mp.exp(eps) * chi2_sf_mp(r, 2 * a / l))
        if direction == "reverse":
            a = -eps - shift
            if a <= 0:
                return mp.mpf(0)
            return +(chi2_cdf_mp(r, 2 * a / l) - mp.exp(eps) * chi2_cdf_mp(r, 2 * (1 - l) * a / l))
        raise ValueError(direction)


def rlc_erf_delta_mp(eps, leverage, direction: str, dps: int = DPS):
    """The r = 1 (RLC) erf forms of Lu et al. (2023, OLS-RP), Lemma 10, an oracle independent of gammainc."""
    with mp.workdps(dps):
        eps, l = mp.mpf(eps), mp.mpf(leverage)
        if direction == "forward":
            a = eps - mp.log(1 - l) / 2
            # 1 - e^eps + e^eps erf(x) - erf(y) written as erfc(y) - e^eps erfc(x): same value, no
            # cancellation of the leading 1 - e^eps against terms of order 1
            return +(mp.erfc(mp.sqrt(a * (1 - l) / l)) - mp.exp(eps) * mp.erfc(mp.sqrt(a / l)))
        a = -eps - mp.log(1 - l) / 2
        if a <= 0:
            return mp.mpf(0)
        return +(mp.erf(mp.sqrt(a / l)) - mp.exp(eps) * mp.erf(mp.sqrt(a * (1 - l) / l)))


def normal_pair_delta_mp(eps, m1, s1, m2, s2, dps: int = DPS):
    """delta_{P||Q}(eps) for 1-D P = N(m1, s1^2), Q = N(m2, s2^2) from the roots of the quadratic
    L(x) = eps (the privacy-loss region S = {L > eps} is an interval or the complement of one)."""
    with mp.workdps(dps):
        eps, m1, s1, m2, s2 = (mp.mpf(v) for v in (eps, m1, s1, m2, s2))
        # L(x) - eps = A x^2 + B x + C
        A = 1 / (2 * s2**2) - 1 / (2 * s1**2)
        B = m1 / s1**2 - m2 / s2**2
        C = m2**2 / (2 * s2**2) - m1**2 / (2 * s1**2) + mp.log(s2 / s1) - eps

        def mass(lo, hi, m, s):   # P(lo < X < hi), X ~ N(m, s^2), computed on the short side
            a, b = (lo - m) / s, (hi - m) / s
            if a > 0:
                return _phi_cdf(-a) - _phi_cdf(-b)
            return _phi_cdf(b) - _phi_cdf(a)

        def region(m, s):
            if A == 0:
                if B == 0:
                    return mp.mpf(1) if C > 0 else mp.mpf(0)
                root = -C / B
                return mass(root, mp.inf, m, s) if B > 0 else mass(-mp.inf, root, m, s)
            disc = B**2 - 4 * A * C
            if disc <= 0:
                return mp.mpf(1) if A > 0 else mp.mpf(0)
            lo, hi = sorted(((-B - mp.sqrt(disc)) / (2 * A), (-B + mp.sqrt(disc)) / (2 * A)))
            if A > 0:
                return mass(-mp.inf, lo, m, s) + mass(hi, mp.inf, m, s)
            return mass(lo, hi, m, s)

        return +(region(m1, s1) - mp.exp(eps) * region(m2, s2))


def chi2_loss_delta_mp(eps, weight, dof, offset, dps: int = DPS):
    """E[(1 - e^{eps - L})_+] for L = weight * chi2_dof + offset (weight != 0, weight > -1/2), by
    exponential tilting: E[e^{-w Y} 1{Y in T}] = (1 + 2w)^{-k/2} Pr[chi2_k in (1 + 2w) T]."""
    with mp.workdps(dps):
        eps, w, o = mp.mpf(eps), mp.mpf(weight), mp.mpf(offset)
        t = (eps - o) / w
        tilt = (1 + 2 * w) ** (-mp.mpf(dof) / 2)
        if w > 0:       # L > eps  <=>  Y > t
            return +(chi2_sf_mp(dof, t) - mp.exp(eps - o) * tilt * chi2_sf_mp(dof, (1 + 2 * w) * t))
        return +(chi2_cdf_mp(dof, t) - mp.exp(eps - o) * tilt * chi2_cdf_mp(dof, (1 + 2 * w) * t))


def generalized_eigenvalues_mp(A, B, dps: int = 60):
    """Eigenvalues of B^{-1}(A - B) for symmetric float matrices taken as exact (Cholesky of B)."""
    with mp.workdps(dps):
        A, B = mp.matrix(np.asarray(A).tolist()), mp.matrix(np.asarray(B).tolist())
        inverse = mp.inverse(mp.cholesky(B))
        S = inverse * (A - B) * inverse.T
        values, _ = mp.eigsy((S + S.T) / 2)
        return [values[i] for i in range(values.rows)]


LOG_TINY = math.log(1e-300)


def relative_error(log_value, reference) -> float:
    """Error of a computed ln delta against an mpmath delta, in the measure of the acceptance
    criterion: |delta / reference - 1| where reference >= 1e-300, else |ln delta / ln reference - 1|.
    An exact zero must be matched by -inf (and vice versa)."""
    if reference == 0:
        return 0.0 if log_value == -math.inf else math.inf
    if reference < 0:
        raise AssertionError(f"negative reference {reference}: not enough digits")
    if log_value == -math.inf or not math.isfinite(log_value):
        return math.inf
    with mp.workdps(40):
        log_ref = mp.log(reference)
        if log_ref >= LOG_TINY:
            return float(abs(mp.expm1(mp.mpf(log_value) - log_ref)))
        return float(abs((mp.mpf(log_value) - log_ref) / log_ref))


def relative_error_mp(value, reference) -> float:
    """The measure of `relative_error` between two mpmath deltas (no float ln in between)."""
    with mp.workdps(40):
        if reference == 0:
            return 0.0 if value == 0 else math.inf
        if reference >= 1e-300:
            return float(abs(value / reference - 1))
        return float(abs(mp.log(value) / mp.log(reference) - 1))


def relative_error_delta(value, reference) -> float:
    """|value / reference - 1| for a float delta >= 1e-300 (0 must match an exact 0)."""
    if reference == 0:
        return 0.0 if value == 0 else math.inf
    with mp.workdps(40):
        return float(abs(mp.mpf(value) / reference - 1))


def _upper_tail(x):
    """Pr[Z > x] for x >= 0 (erfc at a non-negative argument: the asymptotic series, never erf's
    Taylor series, which costs ~1 ms at 30 digits for |x| ~ 10-40)."""
    if x == mp.inf:
        return mp.mpf(0)
    return mp.erfc(x / mp.sqrt(2)) / 2


def _normal_mass(lo, hi, m, v):
    """P(lo < Y < hi) for Y ~ N(m, v), from the upper tails of the two ends (no 1 - 1 in a tail)."""
    s = mp.sqrt(v)
    a, b = (lo - m) / s, (hi - m) / s
    if a >= 0:
        return _upper_tail(a) - _upper_tail(b)
    if b <= 0:
        return _upper_tail(-b) - _upper_tail(-a)
    return 1 - _upper_tail(-a) - _upper_tail(b)


def _quadratic_region(A, B, C):
    """{z : A z^2 + B z + C > 0} as a list of intervals."""
    if A == 0:
        if B == 0:
            return [(-mp.inf, mp.inf)] if C > 0 else []
        root = -C / B
        return [(root, mp.inf)] if B > 0 else [(-mp.inf, root)]
    disc = B**2 - 4 * A * C
    if disc <= 0:
        return [(-mp.inf, mp.inf)] if A > 0 else []
    lo, hi = sorted(((-B - mp.sqrt(disc)) / (2 * A), (-B + mp.sqrt(disc)) / (2 * A)))
    return [(-mp.inf, lo), (hi, mp.inf)] if A > 0 else [(lo, hi)]


def als_loss_coefficients_mp(leverage, residual, r, p, direction):
    """(a, b, beta, o): the ALS privacy loss a W + b Z^2 + beta Z + o, W ~ chi2_{p-1}, Z ~ N(0, 1),
    of Lu et al. (2023, NDIS), Theorem 4, as written out in the ALS module docstring (forward: the loss
    under D; reverse: minus the forward loss under D')."""
    l, e, r = mp.mpf(leverage), mp.mpf(residual), mp.mpf(r)
    l1, q1 = 1 - l, 1 - l - e
    dl = l1**2 - q1
    k0 = mp.mpf(p) / 2 * mp.log(q1 / l1) - mp.log(l1) / 2
    if direction == "forward":
        return e / (2 * q1), dl / (2 * q1), mp.sqrt(r * l * e) * l1 / q1, r * l * e / (2 * q1) + k0
    return -e / (2 * l1), -dl / (2 * l1**2), -mp.sqrt(r * l * e * q1) / l1**2, r * l * e / (2 * l1**2) - k0


def als_delta_mp(eps, leverage, residual, r, p, direction, dps: int = 30, rtol: float = 1e-12):
    """E[(1 - e^{eps - L})_+] for the ALS loss L = a W + b Z^2 + beta Z + o, W ~ chi2_{p-1}, Z ~ N(0, 1)
    (Lu et al. 2023, NDIS, Theorem 4), by conditioning on W; independent of `theory` (no Laplace
    inversion, no saddle point). Given W = w, {L > eps} is a quadratic region S in Z, and P(Z in S)
    and E[e^{-b Z^2 - beta Z} 1_S] = (1 + 2b)^{-1/2} e^{beta^2 / (2 (1 + 2b))} P(Y in S),
    Y ~ N(-beta v, v), v = 1 / (1 + 2b), are normal probabilities, evaluated at `dps` digits (their
    difference cancels many leading digits). The outer integral over the chi2_{p-1}
    density, in t = sqrt(w), is mpmath quadrature split at the peak of the integrand (coarse grid,
    then golden section), at 2, 8 and 40 of its e^-1 half-widths on either side, at the fold (where
    S closes: a square-root point) and at the threshold crossing a w = eps - o.

    Accuracy: asked in the measure of `relative_error` (rtol in delta, or rtol |ln delta| in delta
    where delta < 1e-300, i.e. rtol in ln delta); the quadrature runs at the digits this needs (at
    least 10) and raises if its error estimate exceeds it. At the defaults (30 digits, rtol = 1e-12)
    it agrees with itself at 45 digits and rtol = 1e-16 to <= 5.4e-15 in that measure on 70 points
    (3 random flights rows and the 4 hard rows of `test_als_rows.py` x eps in {0, 0.003, 0.05, 1,
    3.7} x both directions), and the 45-digit values agree with the previous version of this
    reference (tanh-sinh on fixed breakpoints in w, 30 digits throughout, 10-40x slower) to
    <= 3.4e-18 on 43 of those points (eps <= 1). Cost: about 0.1 s of CPU per point (Gauss-Legendre
    on the smooth pieces, tanh-sinh at the fold and at infinity; erfc only at non-negative
    arguments). Returns an mpf (0 where L <= eps almost surely)."""
    with mp.workdps(dps):
        eps = mp.mpf(eps)
        a, b, beta, o = als_loss_coefficients_mp(leverage, residual, r, p, direction)
        k = p - 1
        v = 1 / (1 + 2 * b)
        tilt = mp.sqrt(v) * mp.exp(beta**2 * v / 2)

        def inner(w):
            region = _quadratic_region(b, beta, o + a * w - eps)
            if not region:
                return mp.mpf(0)
            hit = sum(_normal_mass(lo, hi, 0, 1) for lo, hi in region)
            tilted = sum(_normal_mass(lo, hi, -beta * v, v) for lo, hi in region)
            return hit - mp.exp(eps - o - a * w) * tilt * tilted

        if k == 0:
            return +inner(0)
        log_norm = -mp.mpf(k) / 2 * mp.log(2) - mp.loggamma(mp.mpf(k) / 2)

        def integrand(w):
            if w <= 0:
                return mp.mpf(0)
            return inner(w) * mp.exp(log_norm + (mp.mpf(k) / 2 - 1) * mp.log(w) - w / 2)

        def h(t):                   # the integrand in t = sqrt(w): w = t^2 removes the w^{k/2 - 1}
            return 2 * t * integrand(t * t)     # endpoint singularity of the chi2 density

        # the peak of h: near the chi2 bulk (w ~ k), where L's threshold a w = eps - o is crossed
        # (centre) or past the fold, where the discriminant of the region in Z vanishes (inner(w) has
        # a square-root point there); located on a coarse grid, then by golden section in t
        centre = (eps - o) / a if a != 0 else mp.mpf(k)
        fold = (beta**2 / (4 * b) + eps - o) / a if a != 0 and b != 0 else mp.mpf(-1)
        candidates = {k * mp.mpf(2) ** j for j in range(-12, 31, 2)}
        candidates |= {g + s * mp.mpf(2) ** j for g in (centre, fold) if g > 0 for s in (-1, 1) for j in range(-6, 15, 2)}
        grid = sorted(mp.sqrt(c) for c in candidates if c > 0)
        values = [h(t) for t in grid]
        best = max(range(len(grid)), key=lambda i: values[i])
        if values[best] == 0:       # L <= eps almost surely (a bounded loss beyond its supremum)
            return mp.mpf(0)
        lo, hi = grid[max(best - 1, 0)] if best else mp.mpf(0), grid[min(best + 1, len(grid) - 1)]
        peak, top = grid[best], values[best]
        ratio = (mp.sqrt(5) - 1) / 2
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        f1, f2 = h(x1), h(x2)
        for _ in range(14):
            if f1 >= f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - ratio * (hi - lo)
                f1 = h(x1)
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + ratio * (hi - lo)
                f2 = h(x2)
        if max(f1, f2) > top:
            peak, top = (x1, f1) if f1 >= f2 else (x2, f2)
        # the half-width: the step at which h falls below e^-1 of its peak value on its wider side
        # (search by factors of 4; the other side may end at the fold, a breakpoint of its own)
        def inside(step):
            return max(h(peak + step), h(peak - step) if peak > step else 0) > top / mp.e

        width = (grid[min(best + 1, len(grid) - 1)] - grid[max(best - 1, 0)]) / 64
        if inside(width):
            while width < 1e8 and inside(4 * width):
                width *= 4
        else:
            while width > 1e-12 * peak and not inside(width / 4):
                width /= 4
        points = {mp.mpf(0), peak, mp.inf} | {peak + s * width * d for s in (-1, 1) for d in (2, 8, 40)}
        points |= {mp.sqrt(x) for x in (centre, fold) if x > 0}
        ends = sorted(x for x in points if x >= 0)
        rough = {mp.inf} | ({mp.sqrt(fold)} if fold > 0 else set())

        def empty(t):               # the region in Z is empty at w = t^2 (a bounded interval that closed)
            if b >= 0:
                return False
            if t == mp.inf:
                return a < 0 or (a == 0 and beta**2 - 4 * b * (o - eps) <= 0)
            return beta**2 - 4 * b * (o + a * t * t - eps) <= 0

        # mp.quad stops on an absolute error: the integrand is scaled by its peak times its width, so
        # that the integral is of order 1. The quadrature runs at quad_dps digits (its nodes, weights
        # and stopping rule), the integrand at dps digits (the cancellation inside `inner`);
        # Gauss-Legendre on the smooth pieces, tanh-sinh on a piece ending at the fold (a square-root
        # endpoint) or at infinity. The relative accuracy asked of delta is that of the test's
        # measure (`relative_error`): rtol, or rtol |ln delta| where delta < 1e-300.
        scale = top * width
        tiny = mp.log(scale) < LOG_TINY - 10
        quad_dps = max(int(-mp.log10(rtol * (-mp.log(scale) if tiny else 1))) + 2, 10)

        def scaled(t):
            with mp.workdps(dps):
                return h(t) / scale

        # the discriminant beta^2 - 4 b (o + a w - eps) is linear in w: a piece empty at both ends is empty throughout
        pieces = [(lo, hi) for lo, hi in zip(ends[:-1], ends[1:]) if not (empty(lo) and empty(hi))]
        value = error = mp.mpf(0)
        with mp.workdps(quad_dps):
            for lo, hi in pieces:
                method = "tanh-sinh" if lo in rough or hi in rough else "gauss-legendre"
                piece, piece_error = mp.quad(scaled, [lo, hi], method=method, error=True)
                value, error = value + piece, error + piece_error
        value, error = value * scale, error * scale
        if not error <= rtol * abs(value) * (-mp.log(value) if value < 1e-300 else 1):
            raise ArithmeticError(f"als_delta_mp: quadrature error {mp.nstr(error, 3)} on {mp.nstr(value, 10)}")
        return +value


def renyi_gaussian_mp(mean1, cov1, mean2, cov2, alpha, dps: int = 20):
    """D_alpha(N(mean1, cov1) || N(mean2, cov2)) by numerical integration (mpmath quadrature): for
    dimension 1 the integral of p^alpha q^(1 - alpha) over the line; above, the pair is first whitened
    by cov2 and rotated (Cholesky and symmetric eigen-decomposition at `dps` digits, in mpmath), after
    which the integrand is a product of 1-D ones, each integrated numerically. The integrand is
    Gaussian-shaped: integrated over its peak +-40 widths (the rest is below e^-800 of it), split at
    the peak and at +-10 widths."""
    with mp.workdps(dps):
        a = mp.mpf(alpha)
        cov1, cov2 = np.atleast_2d(cov1), np.atleast_2d(cov2)
        shift = np.atleast_1d(np.asarray(mean1, dtype=float) - np.asarray(mean2, dtype=float))
        if shift.size == 1:
            pieces = [(mp.mpf(float(shift[0])), mp.mpf(float(cov1[0, 0])), mp.mpf(float(cov2[0, 0])))]
        else:
            L = mp.cholesky(mp.matrix(cov2.tolist()))
            inverse = mp.inverse(L)
            S = inverse * mp.matrix(cov1.tolist()) * inverse.T
            values, vectors = mp.eigsy((S + S.T) / 2)
            m = vectors.T * (inverse * mp.matrix(shift.tolist()))
            pieces = [(m[j], values[j], mp.mpf(1)) for j in range(values.rows)]
        total = mp.mpf(0)
        for m, s1, s2 in pieces:
            norm = -(a * mp.log(2 * mp.pi * s1) + (1 - a) * mp.log(2 * mp.pi * s2)) / 2

            def integrand(x, m=m, s1=s1, s2=s2, norm=norm):    # p(x)^alpha q(x)^(1 - alpha)
                return mp.exp(norm - a * (x - m) ** 2 / (2 * s1) - (1 - a) * x ** 2 / (2 * s2))

            curvature = a / s1 + (1 - a) / s2                  # of -ln integrand, > 0 when finite
            if curvature <= 0:
                return mp.inf
            peak, width = (a * m / s1) / curvature, 1 / mp.sqrt(curvature)
            breaks = [peak + k * width for k in (-40, -10, 0, 10, 40)]
            total += mp.log(mp.quad(integrand, breaks, method="gauss-legendre"))
        return total / (a - 1)


def renyi_subsampled_gaussian_mp(mu, q, alpha, direction: str, dps: int = 30):
    """D_alpha of the Poisson-subsampled Gaussian mechanism, M = q N(mu, 1) + (1 - q) N(0, 1) against
    Q = N(0, 1): "forward" D_alpha(M || Q) (REMOVE), "reverse" D_alpha(Q || M) (ADD), by mpmath
    quadrature of the 1-D integral split at 0, mu and +-12 around them."""
    with mp.workdps(dps):
        mu, q, a = mp.mpf(mu), mp.mpf(q), mp.mpf(alpha)
        phi = lambda x, m: mp.exp(-(x - m) ** 2 / 2) / mp.sqrt(2 * mp.pi)
        mix = lambda x: q * phi(x, mu) + (1 - q) * phi(x, 0)
        first, second = (mix, lambda x: phi(x, 0)) if direction == "forward" else (lambda x: phi(x, 0), mix)
        integrand = lambda x: first(x) ** a * second(x) ** (1 - a)
        peak = a * mu                                       # the integrand's mass lies below about alpha mu
        breaks = sorted({-mp.mpf(40), mp.mpf(0), mu, peak, peak + 40})
        return mp.log(mp.quad(integrand, breaks)) / (a - 1)

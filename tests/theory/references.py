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


def relative_error_delta(value, reference) -> float:
    """|value / reference - 1| for a float delta >= 1e-300 (0 must match an exact 0)."""
    if reference == 0:
        return 0.0 if value == 0 else math.inf
    with mp.workdps(40):
        return float(abs(mp.mpf(value) / reference - 1))

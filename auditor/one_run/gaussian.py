"""The Gaussian (NDIS) one-run bound, after Agrawal, Wei, Singh, Magdon-Ismail & Zikas (2026, "Let's
Ask Gauss: improved one-run privacy auditing"): read the canary scores themselves, not guesses.

In white-box DP-SGD a canary's aligned signal is a sum over steps whose normalised law is
asymptotically Gaussian (their central limit theorem), the same noise in and out: included canaries'
scores ~ N(mu_in, s^2), left-out ones ~ N(mu_out, s^2). Each score is a post-processing of the
output, and the law of one canary's score is a mixture (over the other canaries' coin flips) of such
post-processings, so by the joint convexity of the hockey-stick divergence the mechanism's
delta(eps) is at least that of the pair of score laws: the Gaussian mechanism with
mu = d = (mu_in - mu_out) / s (`ndis.theory.gaussian_delta`, Balle & Wang 2018, Theorem 8; NDIS,
Lu et al. 2023, for any pair of Gaussians, `ndis.theory.GaussianPair`).

The bound: under the model the pooled two-sample t statistic is noncentral t with n_in + n_out - 2
degrees of freedom and noncentrality d / sqrt(1/n_in + 1/n_out), so inverting its distribution gives
an exact one-sided lower confidence bound d_lo, and eps_lo = eps(delta; d_lo) (`theory.gaussian_epsilon`).
The confidence is exact when the scores are i.i.d. Gaussian with equal variances (the idealized
setting) and asymptotic otherwise: the report says so and shows the checks of the model (Shapiro-Wilk
and Anderson-Darling normality of each group, Levene's test of equal variances) and the mean shift
with its confidence interval. Higher scores must mean "included" (negate losses).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from ...theory.gaussian import gaussian_epsilon
from .estimate import Estimate, Uncomputable

ASSUMPTION = ("the canary scores are i.i.d. Gaussian, with the same variance in and out (asymptotically so for "
              "white-box DP-SGD canaries)")
#: Each check of the model at this level: below it, the report says the model is rejected.
CHECK_LEVEL = 0.01
#: Fewest canaries per group (Shapiro-Wilk's minimum), and the most it reads (its p-value's accuracy limit).
SMALLEST_GROUP, SHAPIRO_MAX = 3, 5000


def _noncentrality(t: float, df: int, tail: float) -> float:
    """The noncentrality nc with P_nc[T >= t] = tail (it increases with nc)."""
    def gap(nc):
        return stats.nct.sf(t, df, nc) - tail

    lo, hi = t - 10.0, t + 10.0
    while gap(lo) > 0:
        lo -= 2 * (hi - lo)
    while gap(hi) < 0:
        hi += 2 * (hi - lo)
    return float(optimize.brentq(gap, lo, hi, xtol=1e-10))


def _normality(x: np.ndarray) -> dict:
    """Shapiro-Wilk and Anderson-Darling p-values of one group (scipy's interpolated AD p-value, 1.17+);
    Shapiro-Wilk on the first `SHAPIRO_MAX` scores, the size up to which scipy's p-value is accurate."""
    found = {"shapiro_p": float(stats.shapiro(x[:SHAPIRO_MAX]).pvalue)}
    try:
        found["anderson_p"] = float(stats.anderson(x, dist="norm", method="interpolate").pvalue)
    except TypeError:  # scipy < 1.17 has no Anderson-Darling p-value
        found["anderson_p"] = None
    return found


def _rejection(checks: dict, sd_in: float, sd_out: float, tied: int) -> str | None:
    """Why the checks reject the model (None when they do not): a group whose scores are all equal,
    tied scores, or a p-value below `CHECK_LEVEL`. Equal scores have probability 0 under the model (a
    Gaussian law has no atoms), so they reject it at level 0: they come from discrete or rounded
    scores, whose tails the Gaussian bound cannot extrapolate."""
    for name, sd in (("included", sd_in), ("left-out", sd_out)):
        if sd == 0:
            return f"the {name} canaries' scores are all equal, which no Gaussian law gives"
    if tied:
        return (f"{tied} scores repeat another canary's score, which a Gaussian law never does (discrete or rounded "
                "scores? give them at full precision)")
    named = {"Levene (equal variances)": checks["levene_p"]}
    for group in ("in", "out"):
        named.update({f"{test} ({group})": checks[group][key] for test, key in (("Shapiro-Wilk", "shapiro_p"),
                                                                               ("Anderson-Darling", "anderson_p"))
                      if checks[group][key] is not None})
    test, smallest = min(named.items(), key=lambda item: item[1])
    if smallest >= CHECK_LEVEL:
        return None
    return f"{test} p = {smallest:.3g} < {CHECK_LEVEL:g}"


def fit(scores: np.ndarray, included: np.ndarray, alpha: float) -> dict:
    """The equal-variance Gaussian fit: d_hat, its one-sided lower bound d_lo at alpha and two-sided
    1 - alpha interval, the mean shift with its pooled-t interval, and the checks of the model
    (`rejected`: why they reject it, or None). Raises `Uncomputable` when neither group's scores vary."""
    inside, outside = np.sort(scores[included]), np.sort(scores[~included])   # sorted: the same sums in any row order
    n_in, n_out = inside.size, outside.size
    df = n_in + n_out - 2
    shift = float(inside.mean() - outside.mean())
    sd_in, sd_out = float(inside.std(ddof=1)), float(outside.std(ddof=1))
    pooled = float(np.sqrt(((n_in - 1) * sd_in**2 + (n_out - 1) * sd_out**2) / df))
    if pooled == 0:
        raise Uncomputable("the scores do not vary within either group (the included canaries all score "
                           f"{inside[0]:g}, the left-out ones {outside[0]:g}): the Gaussian model does not describe them")
    scale = np.sqrt(1.0 / n_in + 1.0 / n_out)
    t = shift / (pooled * scale)
    margin = stats.t.ppf(1 - alpha / 2, df) * pooled * scale
    constant = sd_in == 0 or sd_out == 0
    checks = {"in": _normality(inside), "out": _normality(outside),
              "levene_p": float(stats.levene(inside, outside).pvalue)} if not constant else {}
    rejected = _rejection(checks, sd_in, sd_out, scores.size - np.unique(scores).size)
    return {"n_in": n_in, "n_out": n_out, "mean_in": float(inside.mean()), "mean_out": float(outside.mean()),
            "sd_in": sd_in, "sd_out": sd_out, "sd_pooled": pooled,
            "shift": shift, "shift_interval": [shift - margin, shift + margin], "d_hat": shift / pooled,
            "d_lo": _noncentrality(t, df, alpha) * scale,
            "d_interval": [_noncentrality(t, df, alpha / 2) * scale, _noncentrality(t, df, 1 - alpha / 2) * scale],
            "checks": checks, "check_level": CHECK_LEVEL, "rejected": rejected}


def estimate(scores: np.ndarray, included: np.ndarray, delta: float, alpha: float) -> Estimate:
    """eps_lo = eps(delta; max(d_lo, 0)) from validated canary scores, with the fit and its checks; the
    estimate is not certified (`Estimate.rejected`) when the checks reject the model. Raises
    `Uncomputable` on too few canaries, at delta = 0, or when no group's scores vary."""
    groups = int(included.sum()), int((~included).sum())
    if min(groups) < SMALLEST_GROUP:
        raise Uncomputable(f"the Gaussian bound needs at least {SMALLEST_GROUP} included and {SMALLEST_GROUP} "
                           f"left-out canaries, got {groups[0]} and {groups[1]}")
    if delta == 0:
        raise Uncomputable("the Gaussian bound is for delta > 0: under its model any shift refutes every eps at "
                           "delta = 0 (no Gaussian mechanism is pure DP)")
    found = fit(scores, included, alpha)
    found["eps_hat"] = float(gaussian_epsilon(delta, abs(found["d_hat"])))
    eps_lo = float(gaussian_epsilon(delta, max(found["d_lo"], 0.0)))
    return Estimate("gaussian", eps_lo, delta, alpha, ASSUMPTION, asymptotic=True, details=found,
                    rejected=found["rejected"])

"""Two-sample and moment checks shared by the mechanism tests.

Tolerances: a KS p-value above 1e-4 per coordinate (a two-sided 3.9-sigma event under equality) and
moments within 4 standard errors estimated from the samples themselves. Seeds are fixed, so the
checks are deterministic; `test_samplers.py::test_checks_detect_a_small_change` shows they have
power against a 5% change of scale.
"""

import numpy as np
from scipy import stats

KS_PVALUE = 1e-4
N_SE = 4.0


def _columns(x):
    x = np.asarray(x, dtype=float)
    return x.reshape(x.shape[0], -1)


def same_distribution(a, b) -> list[str]:
    """Problems found comparing samples a and b coordinate by coordinate (empty if none):
    KS test, means (4 se) and variances (4 se, se from the fourth central moment)."""
    a, b = _columns(a), _columns(b)
    problems = []
    for j in range(a.shape[1]):
        x, y = a[:, j], b[:, j]
        pvalue = stats.ks_2samp(x, y).pvalue
        if pvalue < KS_PVALUE:
            problems.append(f"coordinate {j}: KS p-value {pvalue:.2e}")
        se_mean = np.sqrt(x.var() / x.size + y.var() / y.size)
        if abs(x.mean() - y.mean()) > N_SE * se_mean:
            problems.append(f"coordinate {j}: means {x.mean():.5g} vs {y.mean():.5g} (se {se_mean:.2g})")
        se_var = np.sqrt(_var_of_var(x) + _var_of_var(y))
        if abs(x.var() - y.var()) > N_SE * se_var:
            problems.append(f"coordinate {j}: variances {x.var():.5g} vs {y.var():.5g} (se {se_var:.2g})")
    return problems


def _var_of_var(x):
    centred = x - x.mean()
    return (np.mean(centred**4) - np.mean(centred**2) ** 2) / x.size


def moments_match(x, mean, cov) -> list[str]:
    """Problems found comparing i.i.d. vectors x (N, m) with a known mean and covariance: each mean
    within 4 se (sqrt(cov_jj / N)); each covariance entry, estimated as the average of
    (x_j - mean_j)(x_k - mean_k), within 4 of its own standard errors."""
    x = _columns(x)
    mean, cov = np.asarray(mean, float).reshape(-1), np.asarray(cov, float)
    problems = []
    se_mean = np.sqrt(np.diag(cov) / x.shape[0])
    bad = np.abs(x.mean(axis=0) - mean) > N_SE * se_mean
    problems += [f"mean {j}: {x[:, j].mean():.5g} vs {mean[j]:.5g}" for j in np.flatnonzero(bad)]
    centred = x - mean
    for j in range(x.shape[1]):
        for k in range(j, x.shape[1]):
            products = centred[:, j] * centred[:, k]
            se = products.std() / np.sqrt(products.size)
            if abs(products.mean() - cov[j, k]) > N_SE * se:
                problems.append(f"cov[{j},{k}]: {products.mean():.5g} vs {cov[j, k]:.5g} (se {se:.2g})")
    return problems

"""`theory.spectrum` on each Gaussian-output scheme's worst pair agrees with a Monte-Carlo estimate.

For the pair (D, D') returned by `worst_neighbor`, the mechanism is sampled on D (forward) and on D'
(reverse); the exact log-density ratio L of the two output laws (`output_law`) is evaluated at each
sample and delta(eps) estimated as the mean of (1 - e^{eps - L})_+, with its standard error. Both
directions must lie within 4 standard errors (plus 1e-4 absolute for the deterministic part of the
contour integral) of the spectrum's forward / reverse curves. This checks the samplers, the laws,
the worst-pair helpers and theory's generic path together.
"""

import numpy as np
import pytest
from scipy import stats

from ndis import mechanisms
from ndis import theory

EPS = np.array([0.0, 0.3, 1.0])
N = 100_000


def _vectors(mech, law, samples):
    """Samples in the coordinates of `law`: the i.i.d. rows for laws with copies (RP), else the features."""
    if law.copies > 1:
        return samples.reshape(samples.shape[0], law.copies, -1)
    return mech.features(samples)[:, None, :]


def _log_ratio(x, law_p, law_q):
    """sum over copies of ln p(x) - ln q(x), with the two normal densities."""
    p = stats.multivariate_normal(law_p.mean, law_p.cov)
    q = stats.multivariate_normal(law_q.mean, law_q.cov)
    flat = x.reshape(-1, x.shape[-1])
    return (p.logpdf(flat) - q.logpdf(flat)).reshape(x.shape[:2]).sum(axis=1)


def _mc_delta(mech, D, law_p, law_q, seed):
    samples = mech.sample(D, N, np.random.default_rng(seed))
    L = _log_ratio(_vectors(mech, law_p, samples), law_p, law_q)
    values = -np.expm1(np.minimum(EPS[:, None] - L[None, :], 0.0))
    return values.mean(axis=1), values.std(axis=1) / np.sqrt(N)


def _data():
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, size=(30, 3))
    y = X @ np.array([0.5, -0.3, 0.2]) + 0.2 * rng.standard_normal(30)
    return {"X": X, "Xy": np.column_stack([X, y]), "A": rng.uniform(-1, 1, size=(40, 3))}


CASES = [
    ("isit18-an", dict(eps_mi=0.5), "X", "entry", True),
    ("isit18-rp", dict(r=5, sigma=1.0), "X", "entry", False),
    ("isit18-rp", dict(r=4, eps_mi=0.5, f=2.0), "X", "remove", False),
    ("isit18-rp", dict(r=6, eps_mi=0.5, sigma_mode="data"), "X", "entry", False),
    ("isit18-rp", dict(r=5, sigma=1.0, output="release-y"), "Xy", "entry", False),
    ("mask-a", dict(eps=1.0, delta=0.01, calibration="analytic"), "X", "replace", True),
    ("ltm-gauss", dict(m=5, sigma=1.0), "A", "replace", False),
    ("ltm-gauss", dict(m=5, s=2, sigma=1.0, sketch_seed=4), "A", "replace", False),
    ("ltm-local", dict(eps=2.0, delta=1e-2), "A", "replace", True),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(CASES)]


@pytest.mark.parametrize(("name", "params", "data", "relation", "focus"), CASES, ids=IDS)
def test_spectrum_matches_monte_carlo(name, params, data, relation, focus):
    D = _data()[data]
    mech = mechanisms.get(name, **params)
    i, D_prime = mech.worst_neighbor(D, relation)
    if focus:   # full n x d releases: the changed coordinates are sufficient (noisy_release.py)
        mech = mech.focused(D, relation)
        assert mech.focus in (i, tuple(np.argwhere(D != D_prime)[0]))
    spec = theory.spectrum(mech, D, EPS, neighbor=relation)
    assert spec.exact and int(spec.row[0]) == i
    law_d, law_dp = mech.output_law(D), mech.output_law(D_prime)
    forward, se_f = _mc_delta(mech, D, law_d, law_dp, seed=1)
    reverse, se_r = _mc_delta(mech, D_prime, law_dp, law_d, seed=2)
    assert np.all(np.abs(forward - spec.forward) <= 4 * se_f + 1e-4), (forward, spec.forward, se_f)
    assert np.all(np.abs(reverse - spec.reverse) <= 4 * se_r + 1e-4), (reverse, spec.reverse, se_r)
    assert spec.delta[0] > 0.01      # a pair that is not trivially private, so the check has power


def test_monte_carlo_detects_a_wrong_law():
    """Power: the check fails when theory is given the pair of a sketch one row shorter (r = 4 for 5)."""
    D = _data()["X"]
    mech = mechanisms.get("isit18-rp", r=5, sigma=1.0)
    _, D_prime = mech.worst_neighbor(D, "entry")
    wrong = mech.with_params(r=4)
    spec = theory.spectrum(wrong, D, EPS, neighbor="entry")
    forward, se = _mc_delta(mech, D, mech.output_law(D), mech.output_law(D_prime), seed=1)
    assert np.any(np.abs(forward - spec.forward) > 4 * se + 1e-4)


def test_wishart_clt_law_of_masking_features():
    """mask-b's output_law (exact=False) is the CLT normal of vech(Y^T Y): its mean and covariance
    are the exact first two moments of the noncentral Wishart (a standard result, used as in Ding et al. 2022), checked at n = 12."""
    from .checks import moments_match
    D = np.random.default_rng(3).uniform(-1, 1, size=(12, 2))
    mech = mechanisms.get("mask-b", sigma=0.8)
    law = mech.output_law(D)
    assert not law.exact
    assert moments_match(mech.features(mech.sample(D, 40_000, np.random.default_rng(4))), law.mean, law.cov) == []


def test_exact_aligned_spectrum_of_masking_and_its_gaussian_approximation():
    """Golden value (computed independently for this project): p = 5, n = 100, sigma = 1.552, aligned pair x_1 = (1 - 1/sqrt p) 1_p -> 1_p: the exact
    (noncentral chi-square) delta(0.1) is 0.010, the Wishart-CLT normal gives 0.013 (both directions'
    max). The exact curve also matches a Monte Carlo of mask-b itself on the sufficient ||Y v||^2."""
    from scipy import stats as st

    from ndis.mechanisms.masking import aligned_pair
    from ndis.theory.masking import chi2_pair_delta, ncx2_logpdf
    n, p, sigma = 100, 5, 1.552
    nc_d, nc_dp = (np.sqrt(p) - 1) ** 2 / sigma**2, p / sigma**2
    exact = np.maximum(chi2_pair_delta([0.0, 0.1], n, nc_d, nc_dp), chi2_pair_delta([0.0, 0.1], n, nc_dp, nc_d))
    assert round(float(exact[1]), 3) == 0.010
    D, D_prime = aligned_pair(n, p)
    mech = mechanisms.get("mask-b", sigma=sigma)
    pair = theory.GaussianPair.from_laws(mech.output_law(D), mech.output_law(D_prime))
    assert round(max(float(pair.delta(0.1)), float(pair.reverse().delta(0.1))), 3) == 0.013
    # Monte Carlo of the mechanism: W = ||Y v||^2 / sigma^2 with v = 1_p / sqrt(p)
    w = np.linalg.norm(mech.sample(D, 20_000, np.random.default_rng(8)).sum(axis=2) / np.sqrt(p), axis=1) ** 2 / sigma**2
    L = ncx2_logpdf(w, n, nc_d) - ncx2_logpdf(w, n, nc_dp)
    values = -np.expm1(np.minimum(np.array([0.0, 0.1])[:, None] - L[None, :], 0.0))
    forward = chi2_pair_delta([0.0, 0.1], n, nc_d, nc_dp)
    assert np.all(np.abs(values.mean(axis=1) - forward) <= 4 * values.std(axis=1) / np.sqrt(w.size) + 1e-4)
    # the Poisson-mixture log-density agrees with scipy where scipy works
    grid = np.linspace(60.0, 160.0, 7)
    assert np.allclose(ncx2_logpdf(grid, n, nc_dp), st.ncx2.logpdf(grid, n, nc_dp), rtol=1e-10)

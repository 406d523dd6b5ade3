"""The mechanisms of Showkatbakhsh et al. (2018), Burkhardt et al. (2025) and Ding et al. (2022) use
their papers' calibrations (the formulas themselves: tests/theory/test_other_schemes_calibration.py)."""

import numpy as np
import pytest

from ndis import mechanisms
from ndis import theory
from ndis.theory.masking import thm34_sigma
from ndis.theory.sketching import eq4_variance


def test_mask_calibrations_used_by_the_mechanisms():
    X = np.zeros((100, 5))
    assert mechanisms.get("mask-b", eps=0.1, delta=0.01).noise_scale(X) == pytest.approx(9.5, abs=0.05)
    # blocks: n -> n_s = the smallest block
    blk = mechanisms.get("mask-blk", eps=0.1, delta=0.01, blocks=(40, 60))
    assert blk.noise_scale(X) == pytest.approx(thm34_sigma(0.1, 0.01, 40, 5))
    assert mechanisms.get("mask-a", eps=0.1, delta=0.01).noise_scale(X) == pytest.approx(25.4, abs=0.05)


@pytest.mark.parametrize(("eps", "delta", "sigma"), [(0.1, 0.01, 9.54), (0.1, 0.001, 17.40), (0.01, 0.01, 27.70),
                                                     (0.01, 0.001, 93.91), (0.001, 0.01, 38.04), (0.001, 0.001, 276.13)])
def test_exact_gaussian_calibration_of_scheme_a(eps, delta, sigma):
    """Golden value: the analytic Gaussian sigma (Balle & Wang 2018) for sensitivity 1 (far below P3's 'necessary' sigma)."""
    mech = mechanisms.get("mask-a", eps=eps, delta=delta, calibration="analytic")
    assert round(mech.noise_scale(np.zeros((3, 2))), 2) == sigma


def test_seed001_an_total_variation():
    """Golden value: ISIT'18 additive noise at eps_MI = 0.5, worst flip -1 -> +1: TV = delta(0) = 0.6827 (mu = 2 / sigma_AN)."""
    X = np.random.default_rng(0).uniform(-1, 1, size=(10, 4))
    X[3, 2] = -1.0
    an = mechanisms.get("isit18-an", eps_mi=0.5)
    assert an.worst_entry(X) == (3, 2, 1.0)
    spec = theory.spectrum(an.with_params(focus=(3, 2)), X, [0.0], neighbor="entry")
    assert round(float(spec.delta[0]), 4) == 0.6827
    assert float(spec.delta[0]) <= an.mi_delta(corrected=True)


def test_seed001_rp_validation_vector():
    """Golden value (computed independently for this project): n=40, d=3, n'=5, sigma^2=2, entry (0,1) flipped to -sign: forward delta(0) = 0.0815,
    delta(0.2) = 0.01303, delta(0.5) = 0.00020 (X = U[-1,1] from default_rng(0))."""
    X = np.random.default_rng(0).uniform(-1, 1, size=(40, 3))
    rp = mechanisms.get("isit18-rp", r=5, sigma=np.sqrt(2.0))
    X2 = X.copy()
    X2[0, 1] = -np.sign(X[0, 1])
    pair = theory.GaussianPair.from_laws(rp.output_law(X), rp.output_law(X2))
    d0, d02, d05 = pair.delta([0.0, 0.2, 0.5])
    assert (round(d0, 4), round(d02, 5), round(d05, 5)) == (0.0815, 0.01303, 0.00020)


def test_ltm_gauss_zero_output_threshold():
    # the threshold 8 m ln(dm/delta) + s = 7092.01 at m = 50, d = 10, delta = 1e-5 (tests/theory)
    g = mechanisms.get("ltm-gauss", m=50, eps=1.0, delta=1e-5)
    assert g.silent(np.zeros((7092, 10))) and not g.silent(np.zeros((7093, 10)))


def _paper_scale_X():
    return np.random.default_rng(0).uniform(-1, 1, size=(10_000, 800))


def test_seed001_reference_calibration_at_paper_scale():
    """Golden values (computed independently for this project): X ~ U[-1,1]^{10000 x 800} (default_rng(0)), eps_MI = 0.5, sigma_mode fixed:
    f^2 = 3241.8 and sigma_RP^2 = 61.2 / 2258.2 / 6758.2 for n' = 3303 / 5500 / 10000."""
    X = _paper_scale_X()
    assert round(theory.isit18_column_bound(X) ** 2, 1) == 3241.8
    got = [round(mechanisms.get("isit18-rp", r=r, eps_mi=0.5).fixed_for(X).noise_scale(X) ** 2, 1)
           for r in (3303, 5500, 10000)]
    assert got == [61.2, 2258.2, 6758.2]


@pytest.mark.slow
def test_seed001_rp_spectrum_at_paper_scale():
    """Golden values (computed independently for this project), n' = 3303: worst entry flip delta(0, 0.1, 0.5) = 0.238, 0.202, 0.087, below
    the corrected MI guarantee 0.833; removal of the max-leverage row: TV 0.936 (about 2 minutes)."""
    X = _paper_scale_X()
    mech = mechanisms.get("isit18-rp", r=3303, eps_mi=0.5).fixed_for(X)
    spec = theory.spectrum(mech, X, [0.0, 0.1, 0.5], neighbor="entry")
    assert np.round(spec.delta, 3).tolist() == [0.238, 0.202, 0.087]
    assert spec.delta[0] <= mech.mi_delta(corrected=True)
    removal = theory.spectrum(mech, X, [0.0], neighbor="remove")
    assert round(float(removal.delta[0]), 3) == 0.936


def test_seed001_utility():
    """eta >= 1 with equality at theta*; Thm 1's bound holds for AN releases in a regime where it is
    not vacuous (large n, small sigma): every one of 200 draws, the bound's probability being ~1."""
    from ndis.mechanisms.isit18 import an_error_bound, relative_error
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 3))
    y = X @ np.array([1.0, -1.0, 0.5]) + 0.5 * rng.standard_normal(4000)
    D = np.column_stack([X, y])
    best = np.linalg.lstsq(X, y, rcond=None)[0]
    assert relative_error(D, best) == pytest.approx(1.0)
    mech = mechanisms.get("isit18-an", sigma=0.05, output="regression")
    eta = relative_error(D, mech.sample(D, 200, rng))
    bound, probability = an_error_bound(D, 0.05, t=0.01)
    assert np.all(eta >= 1.0) and probability > 0.99 and np.isfinite(bound)
    assert np.all(eta <= bound)


def test_isit18_sigma_modes():
    """fixed: f defaults to f(X) of the input and fixed_for(D) pins it, so a neighbour keeps D's sigma;
    data: sigma follows each input; f = 0: the data-free sigma^2 = n' / (2^{2 eps_MI} - 1)."""
    X = np.random.default_rng(2).uniform(-1, 1, size=(30, 3))
    X2 = 0.9 * X                                                      # lowers f
    fixed = mechanisms.get("isit18-rp", r=40, eps_mi=0.5).fixed_for(X)
    assert fixed.f == pytest.approx(theory.isit18_column_bound(X))
    assert fixed.noise_scale(X2) == fixed.noise_scale(X)
    data = mechanisms.get("isit18-rp", r=40, eps_mi=0.5, sigma_mode="data")
    assert data.fixed_for(X) == data and data.noise_scale(X2) != data.noise_scale(X)
    assert mechanisms.get("isit18-rp", r=40, eps_mi=0.5, f=0).noise_scale(X) ** 2 == pytest.approx(40.0)


def test_seed002_and_seed003_utility_metrics():
    """psi = 0 at the exact top-k subspace and > 0 elsewhere; phi = 1 at the ridge optimum; the Gram
    error of (B) grows with sigma."""
    from ndis.mechanisms.masking import gram_error
    from ndis.mechanisms.sketching import lra_error, ridge_error
    rng = np.random.default_rng(0)
    A = rng.uniform(-1, 1, size=(200, 4)) * np.array([1.0, 0.8, 0.2, 0.1])
    top = np.linalg.svd(A, full_matrices=False)[2][:2].T
    assert lra_error(A, top) == pytest.approx(0.0, abs=1e-12)
    assert lra_error(A, np.eye(4)[:, 2:]) > 0
    lra = mechanisms.get("ltm-lra", k=2, m=20, sigma=0.05)
    assert np.all(lra_error(A, lra.sample(A, 50, rng)) >= -1e-12)
    D = np.column_stack([A, 0.3 * A @ np.array([1.0, -1.0, 0.5, 0.0])])
    x_opt = np.linalg.solve(A.T @ A + 10.0 * np.eye(4), A.T @ D[:, -1])
    assert ridge_error(D, x_opt, 10.0) == pytest.approx(1.0)
    ridge = mechanisms.get("ltm-ridge", lam=10.0, m=20, sigma=0.05)
    assert np.all(ridge_error(D, ridge.sample(D, 50, rng), 10.0) >= 1.0 - 1e-12)
    X = rng.uniform(-1, 1, size=(50, 3))
    small, large = (np.mean(gram_error(X, mechanisms.get("mask-b", sigma=s).sample(X, 200, rng), s)) for s in (0.1, 1.0))
    assert small < large


def test_ltm_gauss_noise_rules():
    """p interpolates sigma^2 = sigma_eq4^2 n^{1-p}; consistent_2eta is 4x the variance; ltm-local's
    'interpolate' rule at p = 0 is eq. 4 times n."""
    A = np.random.default_rng(0).uniform(-1, 1, size=(20_000, 3))
    base = mechanisms.get("ltm-gauss", m=20, eps=1.0, delta=1e-5)
    s2 = base.noise_scale(A) ** 2
    assert s2 == pytest.approx(eq4_variance(1.0, 1e-5, 1.0, 20, 1, 20_000, 3))
    assert base.with_params(p=0.5).noise_scale(A) ** 2 == pytest.approx(s2 * 20_000**0.5)
    assert base.with_params(sigma_rule="consistent_2eta").noise_scale(A) ** 2 == pytest.approx(4 * s2)
    local = mechanisms.get("ltm-local", eps=1.0, delta=1e-5, sigma_rule="interpolate", m=20)
    assert local.noise_scale(A) ** 2 == pytest.approx(s2 * 20_000)


def test_resampled_sketch_spectrum_is_the_average_over_sketches():
    """E_S[delta_mu(S)] by the Binomial bucket law equals the mean over 2000 sketch seeds of the exact
    fixed-sketch delta of the same client (4 standard errors)."""
    from ndis.theory.sketching import resampled_sketch_delta
    n, m, sigma, change = 40, 5, 1.0, 2.0
    mech = mechanisms.get("ltm-gauss", m=m, sigma=sigma)
    mu = np.array([change * np.sqrt(mech.with_params(sketch_seed=seed).sketch(n).row_weight()[0]) / sigma
                   for seed in range(2000)])
    values = theory.gaussian_delta(np.array([0.0, 0.5])[None, :], mu[:, None])
    expected = resampled_sketch_delta([0.0, 0.5], n, m, sigma, change)
    assert np.all(np.abs(values.mean(axis=0) - expected) <= 4 * values.std(axis=0) / np.sqrt(len(values)))

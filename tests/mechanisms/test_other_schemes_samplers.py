"""Fast samplers of the other papers' schemes (Showkatbakhsh et al. 2018; Burkhardt et al. 2025; Ding et al. 2022) agree in distribution with the literal algorithms.

Each case draws N outputs from `sample` and from `sample_literal` (different fixed seeds) on a small
bounded dataset and compares them coordinate by coordinate (checks.py: KS p >= 1e-4, means and
variances within 4 standard errors) on the scheme's feature map plus a fixed random projection of the
raw output. The Haar-masking literals cost O(n^3) per release (scipy ortho_group), hence their
smaller N and n = 12; so do the literal Gamma-difference noises of ltm-laplace (n m d per release).
"""

import numpy as np
import pytest

from ndis import mechanisms

from .checks import same_distribution

N = 20_000
N_HAAR = 4_000

CASES = [
    ("isit18-an", dict(eps_mi=0.5), "X", N),
    ("isit18-an", dict(eps_mi=0.5, output="regression"), "Xy", N),
    ("isit18-rp", dict(r=5, eps_mi=0.5), "X", N),
    ("isit18-rp", dict(r=12, eps_mi=0.5, sigma_mode="data"), "X", N),
    ("isit18-rp", dict(r=6, sigma=1.0, output="release-y"), "Xy", N),
    ("isit18-rp", dict(r=8, sigma=1.0, output="regression"), "Xy", N),
    ("isit18-rp", dict(r=5, eps=1.0, delta=1e-3), "X", N),
    ("ltm-gauss", dict(m=5, sigma=1.0), "ltm", N),
    ("ltm-gauss", dict(m=5, s=2, sigma=1.0, sketch_seed=3), "ltm", N),
    ("ltm-laplace", dict(m=4, b=0.5), "ltm", N_HAAR),
    ("ltm-laplace", dict(m=4, b=0.5, t_prime=2), "ltm", N_HAAR),
    ("ltm-lra", dict(k=1, m=6, sigma=0.5), "ltm", N),
    ("ltm-lra", dict(k=2, m=4, noise="laplace", b=0.3), "ltm", N_HAAR),
    ("ltm-ridge", dict(lam=1.0, m=8, sigma=0.3), "ltm-xy", N),
    ("ltm-local", dict(eps=1.0, delta=1e-3), "ltm", N),
    ("mask-a", dict(eps=0.5, delta=0.01), "mask", N),
    ("mask-b", dict(sigma=0.8), "mask", N_HAAR),
    ("mask-c", dict(sigma=0.8), "mask", N_HAAR),
    ("mask-blk", dict(sigma=0.8, blocks=(5, 7)), "mask", N_HAAR),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(CASES)]


def datasets():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(30, 3))
    y = X @ np.array([1.0, -0.5, 0.25]) + 0.3 * rng.standard_normal(30)
    A = rng.uniform(-1, 1, size=(40, 3))
    return {"X": X, "Xy": np.column_stack([X, y]), "mask": rng.uniform(-1, 1, size=(12, 2)),
            "ltm": A, "ltm-xy": np.column_stack([A, 0.2 * A @ np.array([1.0, 2.0, -1.0])])}


def _views(mech, samples):
    flat = samples.reshape(samples.shape[0], -1)
    direction = np.random.default_rng(99).standard_normal(flat.shape[1])
    return np.column_stack([mech.features(samples), flat @ direction])


@pytest.mark.parametrize(("name", "params", "data", "n"), CASES, ids=IDS)
def test_fast_sampler_matches_literal(name, params, data, n):
    D = datasets()[data]
    mech = mechanisms.get(name, **params)
    fast = mech.sample(D, n, np.random.default_rng(1))
    literal = mech.sample_literal(D, n, np.random.default_rng(2))
    assert fast.shape == literal.shape == (n, *mech.output_shape(D))
    assert same_distribution(_views(mech, fast), _views(mech, literal)) == []


def test_mask_b_and_c_have_the_same_law():
    """Ding et al. (2022), Lemma A.4: A(X + C) and AX + C are equal in law (fast samplers)."""
    D = datasets()["mask"]
    b = mechanisms.get("mask-b", sigma=0.8)
    c = mechanisms.get("mask-c", sigma=0.8)
    assert same_distribution(b.features(b.sample(D, N, np.random.default_rng(3))),
                             c.features(c.sample(D, N, np.random.default_rng(4)))) == []


def test_checks_detect_a_wrong_mask():
    """Power: masking without the sign correction of the Stiefel factor's columns is no longer
    Haar, and a 5% larger sigma in (B), are both flagged at these sample sizes."""
    D = datasets()["mask"]
    b = mechanisms.get("mask-b", sigma=0.8)
    good = b.features(b.sample(D, N_HAAR, np.random.default_rng(1)))
    wider = mechanisms.get("mask-b", sigma=0.84)
    assert same_distribution(good, wider.features(wider.sample_literal(D, N_HAAR, np.random.default_rng(2)))) != []
    rng = np.random.default_rng(5)
    Z = D + 0.8 * rng.standard_normal((N_HAAR, *D.shape))
    Q = np.linalg.qr(rng.standard_normal((N_HAAR, *D.shape)))[0]          # no sign fix
    unsigned = Q @ np.abs(np.linalg.qr(Z, mode="r"))
    assert same_distribution(good, b.features(unsigned)) != []


def test_haar_stiefel_is_orthonormal_and_rotation_invariant():
    from ndis.mechanisms.masking import haar_stiefel
    V = haar_stiefel(N, 5, 2, np.random.default_rng(0))
    assert np.allclose(np.einsum("kni,knj->kij", V, V), np.eye(2), atol=1e-12)
    # Haar: each column is uniform on the sphere, so V[:, 0, 0]^2 ~ Beta(1/2, (n-1)/2), mean 1/n
    first = V[:, 0, 0] ** 2
    assert abs(first.mean() - 0.2) < 4 * first.std() / np.sqrt(N)

"""Fast samplers agree in distribution with the literal algorithms, and with `output_law`.

For every registered scheme: 20,000 outputs from `sample` and from `sample_literal` on a small
dataset (n = 40, d = 3) are compared coordinate by coordinate on the feature map (the Gram matrix
for sketches) and on a fixed random projection of the raw output (checks.py: KS p >= 1e-4, means
and variances within 4 standard errors).
"""

import numpy as np
import pytest

from ndis import mechanisms
from ndis.experiments.datasets import synthetic

from .checks import moments_match, same_distribution
from .test_other_schemes_samplers import CASES as OTHER_CASES
from .test_zoo import CASES as ZOO_CASES

N = 20_000
DELTA = 1e-3

# (name, params): every registered scheme at least once; both branches of the relative-DP schemes.
CASES = [
    ("gaussian", dict(query="sum", sigma=0.5)),
    ("gaussian", dict(query="mean", eps=1.0, delta=DELTA, sensitivity=0.1)),
    ("gaussian", dict(query="ols", sigma=0.2)),
    ("gaussian", dict(query=lambda D: D[:, 0] @ D[:, 1], sigma=0.3)),
    ("gaussian-ls", dict(eps=1.0, delta=DELTA)),
    ("rp", dict(r=5)),
    ("rlc", dict()),
    ("m-rp", dict(r=5, eps=1.0, delta=DELTA)),
    ("m-rlc", dict(eps=1.0, delta=DELTA, C=2.0)),
    ("m-rp-rel", dict(r=5, eps=1.0, delta=DELTA)),
    ("m-rp-rel", dict(r=5, eps=1.0, delta=DELTA, leverage=0.0)),
    ("sheffet-rp", dict(r=5, eps=1.0, delta=DELTA)),
    ("isit18-rp", dict(r=5, eps=1.0, delta=DELTA, sigma_mode="data")),
    ("als", dict(r=20)),
    ("rp-ls", dict(r=20, eps=1.0, delta=DELTA)),
    ("m-als", dict(r=20, eps=1.0, delta=DELTA)),
    ("m-rp-ls", dict(r=20, eps=1.0, delta=DELTA, tight=True)),
    ("m-als-rel", dict(r=20, eps=1.0, delta=DELTA)),
    ("m-als-rel", dict(r=20, eps=1.0, delta=DELTA, leverage=0.0, residual=0.0)),
    ("isit18-ls", dict(r=20, eps=1.0, delta=DELTA)),
    ("m-ols", dict(r=20, eps=1.0, delta=DELTA)),
    ("m-ols-rel", dict(r=20, eps=1.0, delta=DELTA)),
    ("m-ols-rel", dict(r=20, eps=1.0, delta=DELTA, leverage=0.0, residual=0.0)),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]


@pytest.fixture(scope="module")
def data():
    return synthetic(n=40, d=2, seed=3)   # D = [x, 1, y] with unit-norm columns


def _views(mech, samples):
    """Feature map plus a fixed random projection of the flattened output."""
    flat = samples.reshape(samples.shape[0], -1)
    direction = np.random.default_rng(99).standard_normal(flat.shape[1])
    return np.column_stack([mech.features(samples), flat @ direction])


def test_every_registered_scheme_is_covered():
    covered = {name for name, _ in CASES} | {name for name, *_ in OTHER_CASES} | {name for name, _ in ZOO_CASES}
    assert covered == set(mechanisms.names())


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_fast_sampler_matches_literal(data, name, params):
    mech = mechanisms.get(name, **params)
    fast = mech.sample(data, N, np.random.default_rng(1))
    literal = mech.sample_literal(data, N, np.random.default_rng(2))
    assert fast.shape == literal.shape == (N, *mech.output_shape(data))
    assert same_distribution(_views(mech, fast), _views(mech, literal)) == []


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_output_law_moments(data, name, params):
    mech = mechanisms.get(name, **params)
    law = mech.output_law(data)
    samples = mech.sample(data, N, np.random.default_rng(5))
    vectors = samples.reshape(N * law.copies, -1)        # RP: the r rows are the i.i.d. copies
    cov = law.cov
    if not law.exact:
        # ALS: the law is the asymptotic N(x_opt, ||w||^2 M^{-1}/r); the exact covariance of the
        # multivariate t (`theory.als_exact`) is that times r / (r - p - 1).
        p = law.mean.size
        cov = cov * mech.r / (mech.r - p - 1)
    assert moments_match(vectors, law.mean, cov) == []


def test_same_seed_same_numbers(data):
    for name, params in CASES:
        mech = mechanisms.get(name, **params)
        a = mech.sample(data, 7, np.random.default_rng(11))
        b = mech.sample(data, 7, np.random.default_rng(11))
        assert np.array_equal(a, b), name


def test_checks_detect_a_small_change(data):
    """Power check of the comparison itself: a 5% larger noise scale, or an ALS sketch of size 12
    instead of 10, is flagged at the sample sizes used above."""
    base = mechanisms.get("m-rp", r=5, sigma=1.0)
    wider = base.with_params(sigma=1.05)
    a = base.sample(data, N, np.random.default_rng(1))
    b = wider.sample(data, N, np.random.default_rng(2))
    assert same_distribution(_views(base, a), _views(wider, b)) != []
    als = mechanisms.get("als", r=10)
    a = als.sample(data, N, np.random.default_rng(1))
    b = als.with_params(r=12).sample_literal(data, N, np.random.default_rng(2))
    assert same_distribution(a, b) != []


def test_literal_sketch_in_row_blocks_matches(data, monkeypatch):
    """When r n exceeds the chunk budget the literal sketch draws Pi in row blocks (as at Flight
    size); its law is unchanged. A budget of 1000 floats forces that path at n = 40, r = 50."""
    monkeypatch.setattr("ndis.mechanisms.sketch.CHUNK_FLOATS", 1000)
    mech = mechanisms.get("rp", r=50)
    literal = mech.sample_literal(data, 4000, np.random.default_rng(1))
    fast = mech.sample(data, 4000, np.random.default_rng(2))
    assert same_distribution(mech.features(literal), mech.features(fast)) == []

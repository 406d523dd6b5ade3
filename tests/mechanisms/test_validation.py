"""Parameter and data validation: clear ValueErrors/TypeErrors naming what was wrong."""

import numpy as np
import pytest

from ndis import mechanisms
from ndis.experiments.datasets import synthetic


@pytest.fixture(scope="module")
def data():
    return synthetic(n=30, d=2, seed=0)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown mechanism 'nope'.*als.*m-rp"):
        mechanisms.get("nope")


def test_unknown_and_missing_parameters():
    with pytest.raises(ValueError, match="no parameter.*sigmaa"):
        mechanisms.get("m-rp", r=3, sigmaa=1.0)
    with pytest.raises(ValueError, match="needs the parameter.*r"):
        mechanisms.get("als")
    with pytest.raises(ValueError, match="eps and delta"):
        mechanisms.get("m-rp", r=3)


@pytest.mark.parametrize(("name", "params", "word"), [
    ("rp", dict(r=0), "r must be an integer >= 1"),
    ("rp", dict(r=2.5), "r must be an integer"),
    ("m-rp", dict(r=3, sigma=0.0), "sigma"),
    ("m-rp", dict(r=3, sigma=-1.0), "sigma"),
    ("m-ols", dict(r=3, eps=1.0, delta=1.5), "delta"),
    ("m-ols", dict(r=3, eps=-1.0, delta=0.1), "eps"),
    ("m-rp", dict(r=3, eps=1.0, delta=0.1, C=0.0), "C"),
    ("m-rp-rel", dict(r=3, eps=1.0, delta=0.1, leverage=1.0), "leverage"),
    ("gaussian", dict(query="median", sigma=1.0), "query"),
    ("gaussian", dict(query="sum"), "sigma"),
    ("gaussian-ls", dict(eps=1.0, delta=0.1, calibration="loose"), "calibration"),
    ("m-rp", dict(r=3, eps=1.0, delta=0.1, tight="maybe"), "tight"),
])
def test_bad_parameters_name_the_parameter(name, params, word):
    with pytest.raises(ValueError, match=word):
        mechanisms.get(name, **params)


def test_string_parameters_are_parsed():
    mech = mechanisms.get("m-rp", r="30", eps="1", delta="1e-5", tight="true")
    assert mech.params == dict(r=30, eps=1.0, delta=1e-5, C=None, tight=True, sigma=None)


def test_mechanisms_are_immutable_values():
    mech = mechanisms.get("als", r=10)
    with pytest.raises(AttributeError, match="immutable"):
        mech.r = 20
    assert mech.with_params(r=20).r == 20 and mech.r == 10
    assert mech == mechanisms.get("als", r=10) and mech != mech.with_params(r=11)
    with pytest.raises(ValueError, match="r must be"):
        mech.with_params(r=0)


@pytest.mark.parametrize("name", ["rp", "als", "gaussian"])
def test_non_finite_data(data, name):
    params = {"rp": dict(r=3), "als": dict(r=10), "gaussian": dict(sigma=1.0)}[name]
    bad = data.copy()
    bad[3, 1] = np.nan
    mech = mechanisms.get(name, **params)
    for sampler in (mech.sample, mech.sample_literal):
        with pytest.raises(ValueError, match="NaN or infinite"):
            sampler(bad, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="2-D"):
        mech.sample(data[0], 5, np.random.default_rng(0))


def test_rank_deficient_data(data):
    collinear = np.column_stack([data[:, :2], 2 * data[:, 0], data[:, 2]])
    for mech in (mechanisms.get("rp", r=3), mechanisms.get("als", r=10)):
        for run in (mech.sample, mech.sample_literal, lambda D, *_: mech.output_law(D)):
            with pytest.raises(ValueError, match="rank-deficient"):
                run(collinear, 3, np.random.default_rng(0))
    # appending sigma I makes every Gram matrix positive definite: no error
    assert mechanisms.get("m-ols", r=10, sigma=1.0).sample(collinear, 3, np.random.default_rng(0)).shape == (3, 3)


def test_sketch_size_too_small_for_least_squares(data):
    # D = [B, b] with p = 2 feature columns: ALS needs r > p + 1 = 3.
    for name in ("als", "m-ols"):
        mech = mechanisms.get(name, r=3, **({} if name == "als" else {"sigma": 1.0}))
        with pytest.raises(ValueError, match=r"r=3 is too small.*p \+ 1 = 3"):
            mech.sample(data, 5, np.random.default_rng(0))
    assert mechanisms.get("als", r=4).sample(data, 5, np.random.default_rng(0)).shape == (5, 2)


def test_row_norm_bound_below_the_data(data):
    largest = np.linalg.norm(data, axis=1).max()
    mech = mechanisms.get("m-rp", r=3, eps=1.0, delta=1e-3, C=0.5 * largest)
    with pytest.raises(ValueError, match="row-norm bound C=.*smaller than the largest row norm"):
        mech.sample(data, 5, np.random.default_rng(0))
    mechanisms.get("m-rp", r=3, eps=1.0, delta=1e-3, C=largest).sample(data, 5, np.random.default_rng(0))


def test_sample_count_and_rng(data):
    mech = mechanisms.get("rp", r=3)
    assert mech.sample(data, 0, np.random.default_rng(0)).shape == (0, 3, 3)
    with pytest.raises(ValueError, match="n must be an integer >= 0"):
        mech.sample(data, -1, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        mech.sample(data, 2, "seed")
    assert np.array_equal(mech.sample(data, 2, 7), mech.sample(data, 2, np.random.default_rng(7)))


def test_registry_describes_every_scheme():
    described = mechanisms.describe()
    assert list(described) == mechanisms.names()
    assert "r:" in described["als"] and "eps:" in described["m-ols"] and "data-dependent" in described["m-rp"]
    assert {"gaussian", "gaussian-ls", "rp", "rlc", "als", "rp-ls", "m-rp", "m-rlc", "m-ols", "m-als", "m-rp-ls",
            "m-rp-rel", "m-ols-rel", "m-als-rel", "isit18-ls"} <= set(mechanisms.names())


@pytest.mark.parametrize(("name", "params", "extra"), [
    ("gaussian", dict(query="sum", sigma=1.0), dict(eps=1.0, delta=1e-5, sensitivity=1.0)),
    ("gaussian-ls", dict(sigma=1.0), dict(eps=1.0, delta=1e-5)),
    ("m-rp", dict(r=3, sigma=1.0), dict(eps=1.0, delta=1e-5)),
    ("m-ols", dict(r=3, sigma=1.0), dict(eps=1.0, delta=1e-5)),
    ("m-als", dict(r=3, sigma=1.0), dict(eps=1.0, delta=1e-5, C=2.0)),
    ("isit18-an", dict(sigma=1.0), dict(eps=1.0, delta=1e-5)),
    ("isit18-an", dict(sigma=1.0), dict(eps_mi=0.5)),
    ("isit18-an", dict(eps_mi=0.5), dict(eps=1.0, delta=1e-5)),
    ("isit18-rp", dict(r=3, sigma=1.0), dict(eps=1.0, delta=1e-5)),
    ("mask-a", dict(sigma=1.0), dict(eps=1.0, delta=1e-5)),
    ("mask-b", dict(sigma=1.0), dict(eps=1.0, delta=1e-5)),
    ("mask-blk", dict(blocks=2, sigma=1.0), dict(eps=1.0, delta=1e-5)),
    ("ltm-gauss", dict(m=5, sigma=1.0), dict(eps=1.0)),
    ("ltm-laplace", dict(m=5, b=1.0), dict(eps=1.0)),
    ("ltm-local", dict(sigma=1.0), dict(eps=1.0, delta=1e-5)),
    ("ltm-lra", dict(k=1, m=5, sigma=1.0), dict(eps=1.0)),
])
def test_an_explicit_noise_scale_and_its_calibration_are_not_both_accepted(name, params, extra):
    # Before, the explicit scale silently won and eps, delta (or eps_MI) were ignored.
    checked_by = "ltm-gauss" if name == "ltm-lra" else name  # its sketch parameters go to ltm-gauss
    for key, value in extra.items():
        with pytest.raises(ValueError, match=f"{checked_by} takes .*only one of them: got .*{key}={value!r}"):
            mechanisms.get(name, **params, **{key: value})
    mechanisms.get(name, **params)  # the explicit scale alone is accepted


def test_ltm_gauss_keeps_delta_beside_an_explicit_sigma_for_its_zero_output_rule():
    mech = mechanisms.get("ltm-gauss", m=5, sigma=1.0, delta=1e-5)
    assert mech.sigma == 1.0 and mech.delta == 1e-5


def test_the_missing_calibration_is_named():
    with pytest.raises(ValueError, match="isit18-an needs sigma, or eps_mi, or eps and delta"):
        mechanisms.get("isit18-an", eps=1.0)
    with pytest.raises(ValueError, match="gaussian needs sigma, or eps, delta and sensitivity"):
        mechanisms.get("gaussian", eps=1.0, delta=1e-5)


@pytest.mark.parametrize(("name", "params"), [("gaussian", dict(query="mean")), ("mask-a", {}),
                                               ("ltm-gauss", dict(m=2))])
def test_an_output_law_whose_variance_overflows_is_a_clear_error(name, params):
    # sigma = 1e160: sigma^2 is beyond float64 (OverflowError from Python's float power before).
    data = np.full((20, 2), 0.5)
    mech = mechanisms.get(name, sigma=1e160, **params)
    with pytest.raises(ValueError, match=r"noise variance .*1e\+160.* exceeds"):
        mech.output_law(data)

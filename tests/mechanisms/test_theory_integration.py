"""`output_law` + `worst_neighbor` give theory the same spectrum as its closed forms.

theory.spectrum(mechanism, D, eps) evaluates the exact Gaussian pair of the worst neighbour found by
`worst_neighbor` (NDIS, generic path); theory.spectrum("rp" | "als" | "gaussian-ls", ...) uses the
leverage / (leverage, residual) / sensitivity closed forms and its own worst-row search."""

import numpy as np
import pytest

import mechanisms
import theory
from experiments.datasets import synthetic

EPS = np.array([0.0, 0.5, 1.0])


@pytest.mark.parametrize(("name", "params", "family", "family_params"), [
    ("rp", dict(r=5), "rp", dict(r=5)),
    ("m-rp", dict(r=5, sigma=0.4), "rp", dict(r=5, ridge=0.4)),
    ("als", dict(r=40), "als", dict(r=40)),
    ("m-ols", dict(r=40, sigma=0.5), "als", dict(r=40, ridge=0.5)),
    ("gaussian-ls", dict(sigma=0.05), "gaussian-ls", dict(sigma=0.05)),
])
def test_generic_spectrum_equals_closed_form(name, params, family, family_params):
    D = synthetic(n=60, d=2, seed=1)
    generic = theory.spectrum(mechanisms.get(name, **params), D, EPS)
    closed = theory.spectrum(family, D, EPS, **family_params)
    assert np.array_equal(generic.row, closed.row)
    np.testing.assert_allclose(generic.delta, closed.delta, rtol=1e-6)

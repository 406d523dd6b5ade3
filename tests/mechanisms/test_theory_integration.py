"""Mechanisms hand theory the right model: `output_law` + `worst_neighbor` (theory's generic NDIS
path) and `spectrum_model` (its closed forms) give the same spectrum as theory's own closed form
on the same configuration."""

import numpy as np
import pytest

from ndis import mechanisms
from ndis import theory
from ndis.experiments.datasets import synthetic

EPS = np.array([0.0, 0.5, 1.0])


class LawOnly:
    """The mechanism seen only through output_law and worst_neighbor (no spectrum_model)."""

    def __init__(self, mech):
        self.output_law, self.worst_neighbor, self.name = mech.output_law, mech.worst_neighbor, mech.name


@pytest.mark.parametrize(("name", "params", "family", "family_params"), [
    ("rp", dict(r=5), "rp", dict(r=5, ridge=0.0)),
    ("rlc", dict(), "rp", dict(r=1, ridge=0.0)),
    ("m-rp", dict(r=5, sigma=0.4), "rp", dict(r=5, ridge=0.4)),
    ("als", dict(r=40), "als", dict(r=40, ridge=0.0, exact=False)),
    ("m-ols", dict(r=40, sigma=0.5), "als", dict(r=40, ridge=0.5, exact=True)),
    ("m-als", dict(r=40, sigma=0.5), "als", dict(r=40, ridge=0.5, exact=False)),
    ("gaussian-ls", dict(sigma=0.05), "gaussian-ls", dict(sigma=0.05)),
    ("gaussian", dict(query="ols", sigma=0.05), "gaussian-ls", dict(sigma=0.05)),
])
def test_spectrum_through_the_mechanism(name, params, family, family_params):
    D = synthetic(n=60, d=2, seed=1)
    mech = mechanisms.get(name, **params)
    closed = theory.spectrum(family, D, EPS, **family_params)
    assert mech.spectrum_model(D) == (family, family_params)
    for route in (mech, LawOnly(mech)):
        found = theory.spectrum(route, D, EPS)
        assert found.exact == closed.exact
        assert np.array_equal(found.row, closed.row)
        np.testing.assert_allclose(found.delta, closed.delta, rtol=1e-6)


def test_calibrated_noise_is_handed_over():
    D = synthetic(n=60, d=2, seed=1)
    mech = mechanisms.get("m-rp", r=5, eps=1.0, delta=1e-3)
    assert mech.spectrum_model(D) == ("rp", {"r": 5, "ridge": mech.noise_scale(D)})
    assert mechanisms.get("gaussian", query="sum", sigma=1.0).spectrum_model(D) is None

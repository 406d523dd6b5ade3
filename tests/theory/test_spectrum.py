"""Dataset spectra: the vectorised worst-row scans agree with evaluating every row."""

import numpy as np
import pytest

from ndis import theory
from ndis.core.curve import Curve
from ndis.experiments.datasets import cancer, synthetic

EPS = np.array([0.0, 0.25, 0.5, 1.0, 2.0])


@pytest.fixture(scope="module")
def small():
    return synthetic(n=80, d=3, seed=7)


@pytest.mark.parametrize("family,params", [("rp", {"r": 5}), ("rlc", {}), ("als", {"r": 40}),
                                           ("gaussian-ls", {"sigma": 0.05}), ("rp", {"r": 5, "ridge": 0.3}),
                                           ("als", {"r": 40, "ridge": 0.3})])
def test_worst_row_scan_equals_full_scan(small, family, params):
    worst = theory.spectrum(family, small, EPS, **params)
    full = theory.spectrum(family, small, EPS, rows="all", **params)
    np.testing.assert_allclose(worst.delta, full.delta, rtol=1e-10, atol=1e-300)


def test_rp_spectrum_is_the_max_leverage_curve(small):
    s = theory.spectrum("rp", small, EPS, r=5)
    lev = theory.leverages(small)
    assert s.worst_row == int(np.argmax(lev))
    np.testing.assert_allclose(s.delta, theory.rp_delta(EPS, lev.max(), 5), rtol=1e-12)


def test_ridge_rows_lower_the_spectrum(small):
    plain = theory.spectrum("als", small, EPS, r=40).delta
    ridged = theory.spectrum("als", small, EPS, r=40, ridge=0.5).delta
    assert np.all(ridged <= plain)


def test_generic_output_law_matches_closed_form(small):
    # a duck-typed mechanism exposing only the RP output law: N(0, D^T D), r i.i.d. columns
    class Projection:
        name = "rp-law"

        def output_law(self, D):
            return theory.GaussianLaw(np.zeros(D.shape[1]), D.T @ D, copies=5)

    row = int(np.argmax(theory.leverages(small)))
    generic = theory.spectrum(Projection(), small, EPS, rows=[row])
    closed = theory.spectrum("rp", small, EPS, r=5)
    np.testing.assert_allclose(generic.delta, closed.delta, rtol=1e-9)


def test_cancer_als_frontier_contains_the_worst_row(cancer_csv):
    D = cancer(cancer_csv)
    s = theory.spectrum("als", D, EPS, r=300)
    assert s.delta[0] > s.delta[-1] > 0
    assert not s.exact


def test_spectrum_errors(small):
    with pytest.raises(ValueError, match="unknown mechanism family"):
        theory.spectrum("nope", small, EPS)
    with pytest.raises(ValueError, match="neighbour"):
        theory.spectrum("rp", small, EPS, neighbor="entry", r=3)
    with pytest.raises(ValueError, match="sketch size"):
        theory.spectrum("als", small, EPS, r=2)
    with pytest.raises(ValueError, match="row indices"):
        theory.spectrum("rp", small, EPS, rows=[10_000], r=3)


@pytest.mark.parametrize("family,params", [("rp", {"r": 5}), ("als", {"r": 40}), ("gaussian-ls", {"sigma": 0.05})])
def test_spectrum_is_a_two_direction_curve(small, family, params):
    s = theory.spectrum(family, small, np.array([-0.5, 0.0, 1.0]), rows="all", **params)
    assert isinstance(s, Curve)
    np.testing.assert_array_equal(s.delta, np.maximum(s.forward, s.reverse))
    np.testing.assert_array_equal(s.direction("max"), s.delta)
    assert s.eps[0] == -0.5 and s.delta[0] >= 1 - np.exp(-0.5)       # negative eps: delta >= 1 - e^eps

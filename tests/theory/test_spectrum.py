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


def _duplicated_synthetic():
    D = synthetic(n=400, d=3, seed=3)
    D[:3] = D[3]  # three duplicate rows: ties, which keep the first row
    return D


@pytest.mark.parametrize("data", ["flights", "synthetic"])
def test_log_delta_ceiling_bounds_every_row_from_above(data):
    """The Chernoff ceiling (`quadratic_loss.log_delta_ceiling`) is >= ln delta at every eps and direction
    (the pruned row scan relies on it): on 2,000 random flights rows and the 100 of largest leverage and
    residual share (r = 1200, p = 2), and on every row of a synthetic regression with ridge 0.3 (r = 40,
    p = 3). The margin 1e-9 is the curves' own relative accuracy."""
    from ndis.experiments.datasets import flights
    from ndis.theory.als import als_log_delta_ceiling

    if data == "flights":
        lev, res = theory.leverage_residual(flights())
        rows = np.unique(np.concatenate([np.random.default_rng(0).choice(lev.size, 2_000, replace=False),
                                         np.argsort(-lev)[:50], np.argsort(-res)[:50]]))
        r, p = 1200, 2
    else:
        lev, res = theory.leverage_residual(_duplicated_synthetic(), 0.3)
        rows, r, p = np.arange(lev.size), 40, 3
    eps = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 4.0, 10.0])[None, :]
    exact = theory.als_log_delta(eps, lev[rows, None], res[rows, None], r, p)
    ceiling = als_log_delta_ceiling(eps, lev[rows, None], res[rows, None], r, p).reshape(exact.shape)
    assert np.all(ceiling >= exact - 1e-9 * np.abs(exact))
    assert np.all(ceiling[np.isfinite(exact)] < np.inf)  # a bound that prunes, not a trivial one


def _als_rows(D, eps, r, ridge):
    """(rows, curves, ceiling) of the ALS scan of every row of D, as `theory.spectrum` builds them."""
    from ndis.theory.als import als_log_delta_ceiling

    lev, res = theory.leverage_residual(D, ridge)
    p = D.shape[1] - 1
    curves = lambda block: tuple(theory.als_delta(eps[None, :], lev[block, None], res[block, None], r, p, d)
                                 for d in ("forward", "reverse"))
    ceiling = lambda block: als_log_delta_ceiling(eps[None, :], lev[block, None], res[block, None], r, p).reshape(
        block.size, eps.size)
    return np.arange(D.shape[0]), curves, ceiling


@pytest.mark.parametrize("data,r,ridge", [("synthetic", 40, 0.0), ("synthetic", 40, 0.3), ("flights", 1200, 0.0)])
def test_pruned_als_scan_is_the_full_scan_row_and_ties_included(data, r, ridge):
    """rows="all" evaluates only the rows whose ceiling can reach the best curve; the worst row per
    eps and the forward and reverse curves there are those of evaluating every row (`_scan` without
    ceilings), bit for bit: on duplicated rows (ties) whose deltas at eps = 50 are all 0.0 (the
    first row wins), and on 3,000 flights rows, of which the pruned scan evaluates a handful."""
    from ndis.experiments.datasets import flights
    from ndis.theory.spectrum import _rows_that_can_be_worst, _scan

    D = _duplicated_synthetic() if data == "synthetic" else flights(3_000)
    eps = np.array([0.0, 0.5, 1.0, 2.0, 4.0, 50.0])
    rows, curves, ceiling = _als_rows(D, eps, r, ridge)
    forward, reverse, row = _scan(eps, rows, curves)
    fast = theory.spectrum("als", D, eps, rows="all", r=r, ridge=ridge)
    assert np.array_equal(fast.forward, forward) and np.array_equal(fast.reverse, reverse)
    assert np.array_equal(fast.row, row)
    if data == "flights":  # the comparison is not vacuous: most rows were skipped (11 of 3,000 here)
        assert _rows_that_can_be_worst(eps, rows, curves, ceiling).size < 100
    else:
        assert fast.delta[-1] == 0 and fast.row[-1] == 0


def test_worst_details_are_the_worst_rows_values_per_eps(small):
    # `details` keeps every candidate row's values (for `pairs()`); `worst_details` maps them to the
    # worst row at each eps, as recorded in theory.json
    eps = np.linspace(0, 2, 5)
    spec = theory.spectrum("als", small, eps, rows="all", r=200)
    lev, res = theory.leverage_residual(small)
    assert len(spec.details["leverage"]) == small.shape[0] == spec.candidates.size
    worst = spec.worst_details
    assert worst["leverage"] == [lev[i] for i in spec.row] and worst["residual"] == [res[i] for i in spec.row]
    assert worst["p"] == spec.details["p"] and worst["r"] == 200
    few = theory.spectrum("als", small, eps, rows=[7, 3, 5], r=200)
    assert few.worst_details["leverage"] == [lev[i] for i in few.row]

"""The exact finite-r ALS spectrum (multivariate t) against the asymptotic normal curve."""

import numpy as np
import pytest

from ndis import theory
from ndis.experiments.datasets import synthetic

EPS = np.array([0.0, 0.5, 1.0])


@pytest.fixture(scope="module")
def setup():
    D = synthetic(n=200, d=3, seed=1)
    row = theory.spectrum("als", D, EPS, r=100).worst_row
    return D, row


def test_large_r_converges_to_the_normal_limit(setup):
    # at r = 2000 the t law (nu = 1999) is within MC error of the normal: the asymptotic curve must
    # lie inside a 99.9% interval widened by 2e-3 (the residual O(1/r) gap)
    D, row = setup
    exact = theory.als_exact_delta(EPS, D, row, 2000, n_samples=200_000, seed=0, confidence=0.999)
    asymptotic = theory.spectrum("als", D, EPS, r=2000, rows=[row]).delta
    lo, hi = exact.interval
    assert np.all(asymptotic >= lo - 2e-3) and np.all(asymptotic <= hi + 2e-3)


def test_normal_limit_is_conservative_at_small_r(setup):
    # the asymptotic-normal spectrum is larger than the exact one at moderate r
    D, row = setup
    exact = theory.als_exact_delta(EPS, D, row, 30, n_samples=200_000, seed=1)
    asymptotic = theory.spectrum("als", D, EPS, r=30, rows=[row]).delta
    assert np.all(exact.interval[1] <= asymptotic + 1e-12)
    assert np.all(exact.interval[0] <= exact.delta) and np.all(exact.delta <= exact.interval[1])


def test_same_seed_same_numbers(setup):
    D, row = setup
    a = theory.als_exact_delta(EPS, D, row, 50, n_samples=1000, seed=5)
    b = theory.als_exact_delta(EPS, D, row, 50, n_samples=1000, seed=5)
    np.testing.assert_array_equal(a.delta, b.delta)


def test_exact_law_input_errors(setup):
    D, _ = setup
    with pytest.raises(ValueError, match="r > p"):
        theory.als_exact_delta(EPS, D, 0, 3)
    with pytest.raises(ValueError, match="row"):
        theory.als_exact_delta(EPS, D, 10_000, 50)

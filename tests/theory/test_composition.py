"""theory.composition: exact products of Gaussian pairs, spectra composed row by row, the route through
dp_accounting's privacy-loss distributions, and an audit of a composed mechanism inside its exact curve."""

import numpy as np
import pytest
from scipy import linalg

import ndis
from ndis import theory
from ndis.experiments import datasets

EPS = np.linspace(-0.5, 12.0, 26)


def _pair(p, seed):
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(p, p)), rng.normal(size=(p, p))
    return theory.GaussianPair(rng.normal(size=p), A @ A.T / p + np.eye(p), rng.normal(size=p), B @ B.T / p + np.eye(p))


def _log_relative(a, b):
    """|ln a - ln b| / max(1, |ln b|): relative in ln delta where |ln delta| >= 1, else relative in delta
    itself (ln delta near 0, delta near 1, has no relative digits of its own)."""
    a, b = np.asarray(a), np.asarray(b)
    assert np.all(np.isfinite(a)) and np.all(np.isfinite(b))
    return np.abs(a - b) / np.maximum(1.0, np.abs(b))


@pytest.mark.parametrize("k", [2, 10, 100])
def test_k_identical_pairs_are_copies_k(k):
    # acceptance: 1e-12 relative in ln delta, both directions
    pair = _pair(3, seed=1)
    composed = theory.compose(*[pair] * k)
    copies = theory.GaussianPair(pair.law1.mean, pair.law1.cov, pair.law2.mean, pair.law2.cov, copies=k)
    for direction in ("forward", "reverse"):
        assert np.max(_log_relative(composed.log_delta(EPS, direction), copies.log_delta(EPS, direction))) <= 1e-12


def test_different_pairs_make_the_block_diagonal_pair():
    # the product of independent releases is one larger pair: the block-diagonal GaussianPair,
    # diagonalised on its own (eigenvalues of the big matrix) agrees to the kernels' 1e-11
    a, b = _pair(2, seed=2), _pair(3, seed=3)
    analytic = theory.GaussianPair([0.6], [[1.0]], [0.0], [[1.0]])
    block = theory.GaussianPair(np.concatenate([a.law1.mean, b.law1.mean, b.law1.mean, [0.6]]),
                                linalg.block_diag(a.law1.cov, b.law1.cov, b.law1.cov, [[1.0]]),
                                np.concatenate([a.law2.mean, b.law2.mean, b.law2.mean, [0.0]]),
                                linalg.block_diag(a.law2.cov, b.law2.cov, b.law2.cov, [[1.0]]))
    composed = theory.compose(a, b, analytic, b)
    for direction in ("forward", "reverse"):
        assert np.max(_log_relative(composed.log_delta(EPS, direction), block.log_delta(EPS, direction))) <= 1e-11
    gaussian_only = theory.compose(analytic, analytic, theory.GaussianPair([0.8], [[1.0]], [0.0], [[1.0]]))
    assert gaussian_only.fast                                                   # mu^2 = 0.36 + 0.36 + 0.64
    assert gaussian_only.delta(1.0) == pytest.approx(theory.gaussian_delta(1.0, np.sqrt(1.36)), rel=1e-14)


def test_a_spectrum_composes_row_by_row():
    # k releases on one dataset remove the same row from each: the maximum over rows of each row's k-fold pair
    D = np.random.default_rng(4).normal(size=(300, 3))
    spectrum = theory.spectrum("als", D, [0.5], r=60, rows=[0, 5, 9])
    composed = theory.compose(spectrum, spectrum, spectrum)
    rows = [theory.compose(pair, pair, pair) for _, pair in spectrum.pairs()]
    eps = np.linspace(0.0, 2.0, 9)
    expected = np.max([pair.log_delta(eps, "max") for pair in rows], axis=0)
    assert np.array_equal(composed.log_delta(eps, "max"), expected)


def test_ten_als_releases_through_plds_bound_the_exact_curve():
    # acceptance: flights, r = 1200. The exact curve of 10 releases is the maximum over the candidate
    # rows of each row's 10-fold Gaussian pair; the PLD route is never below it (beyond the 1e-12
    # relative accuracy of the exact values) and its eps(delta) within the stated eps_error of it
    pytest.importorskip("dp_accounting")
    spectrum = theory.spectrum("als", datasets.flights(), [0.5], r=1200)
    exact = theory.compose(*[spectrum] * 10)
    through_plds = theory.compose(*[spectrum] * 10, through_pld=True)
    assert through_plds.eps_error == pytest.approx(10 * 1e-4, rel=1e-9)     # support: every multiple of 1e-4
    eps = np.linspace(0.0, 0.25, 11)
    exact_delta, pld_delta = exact.delta(eps, "max"), through_plds.delta(eps, "max")
    assert np.all(pld_delta >= exact_delta * (1 - 1e-10))
    shifted = exact.delta(eps - through_plds.eps_error, "max")       # delta_PLD(eps) <= delta(eps - error) + tails
    assert np.all(pld_delta <= shifted + 1e-14)
    for delta in (1e-3, 1e-6, 1e-10):
        gap = through_plds.epsilon(delta, "max") - exact.epsilon(delta, "max")
        assert -1e-12 <= gap <= through_plds.eps_error


def test_events_and_laplace_against_dp_accountings_accountant():
    # a Gaussian count (exact) composed with Laplace histograms (dp_accounting's PLD) and a Poisson-sampled
    # Gaussian: both are pessimistic PLDs on the grid 1e-4, so they agree to a few grid steps
    dp = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    events = [dp.GaussianDpEvent(2.0), dp.SelfComposedDpEvent(dp.LaplaceDpEvent(3.0), 4),
              dp.PoissonSampledDpEvent(0.1, dp.GaussianDpEvent(1.5))]
    ours = theory.compose(*events)
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp.ComposedDpEvent(events))
    for delta in (1e-3, 1e-6):
        assert ours.epsilon(delta, "max") == pytest.approx(accountant.get_epsilon(delta), abs=5e-4)
    with pytest.raises(ValueError, match="cannot compose the dp_accounting event"):
        theory.compose(dp.RandomizedResponseDpEvent(0.5, 2))


def test_a_stated_error_that_is_a_large_part_of_eps_warns_once():
    # theory.pld: warn when eps_error > max(10% of eps, 0.01). 2000 subsampled steps on a grid of 1e-3 state
    # 2.0 at eps 2.58 (77%); 1000 steps on 1e-4 state 0.1 at 1.83 (5.5%); 60 steps at q = 0.0005 state 0.006
    # at 0.0197 (30%, but below the floor 0.01)
    import warnings

    pytest.importorskip("dp_accounting")
    gauss = theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]])
    step = theory.poisson_subsample(gauss, 0.01)
    coarse = theory.compose(*[step] * 2000, discretization=1e-3)
    with pytest.warns(theory.DiscretizationWarning, match=r"eps = 2\.585 may exceed the exact eps by up to the "
                      r"stated eps_error 2 \(77% of it\): compose with a finer discretization \(e\.g\. "
                      r"discretization=0\.0001;"):
        assert coarse.epsilon(1e-5, "max") == pytest.approx(2.585, abs=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        coarse.epsilon(1e-6, "max")                                         # once per profile
        theory.compose(*[step] * 1000).epsilon(1e-5, "max")
        theory.compose(*[theory.poisson_subsample(gauss, 0.0005)] * 60).epsilon(1e-5, "max")
        theory.tradeoff(coarse)                                             # its grid's end is not a statement


def test_an_audit_of_a_composed_mechanism_stays_inside_its_exact_curve():
    # two releases of one input x in {0, 1}: x + N(0, 1) and N(0, 1 + x/2) (a variance that depends on
    # the data); the exact curve of the pair (D = 1, D' = 0) is the product of the two pairs. The audit's
    # simultaneous 95% lower bound must stay below it at every grid eps (one seeded run)
    exact = theory.compose(theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]]),
                           theory.GaussianPair([0.0], [[1.5]], [0.0], [[1.0]]))

    def mech(x, n, rng):
        return np.column_stack([x + rng.standard_normal(n), np.sqrt(1.0 + 0.5 * x) * rng.standard_normal(n)])

    eps = np.linspace(0.0, 1.5, 16)
    report = ndis.audit(ndis.auditor.batched(mech, exact=lambda grid: exact.delta(grid, "max")), 1.0, 0.0, eps=eps,
                        n_samples=40_000, seed=7, scorer="quadratic", progress=False)
    assert np.all(report.delta_lower <= exact.delta(eps, "max"))
    assert np.max(report.delta_lower) > 0.1          # the audit is not vacuous: it sees most of the curve


def test_clear_errors():
    with pytest.raises(ValueError, match="at least one part"):
        theory.compose()
    with pytest.raises(TypeError, match="compose takes privacy profiles"):
        theory.compose(np.ones(3))

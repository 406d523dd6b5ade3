"""The python-dp adapter (mechanisms.libraries.pydp): outputs follow the laws of Google's library
(Laplace of scale sensitivity / eps, the analytic Gaussian's std, Count's rounded Laplace), the
claims are the library objects' own (eps, delta), and the planted misuse is flagged.

python-dp's noise cannot be seeded, so these tests are random: each KS / 4-standard-error check
fails by chance with probability about 1e-4 (checks.py), the planted-misuse audit (true eps 3
against a claim of 1) with a far smaller one.
"""

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("pydp")
from pydp.algorithms import laplacian  # noqa: E402
from pydp.algorithms import numerical_mechanisms as numerical  # noqa: E402

from ndis.auditor import audit  # noqa: E402
from ndis.core import neighbors  # noqa: E402
from ndis.mechanisms.libraries import pydp as adapter  # noqa: E402

from .checks import KS_PVALUE, N_SE  # noqa: E402

N = 20_000
CASES = {case.name: case for case in adapter.cases()}


def _draw(case, data):
    return case.mechanism(data, N, None)


@pytest.mark.parametrize("name", ["LaplaceMechanism on a bounded sum", "BoundedSum"])
def test_laplace_outputs_are_the_sum_plus_laplace_noise_of_scale_sensitivity_over_eps(name):
    case = CASES[name]
    for data in (case.D, case.D_prime):
        out = _draw(case, data)
        assert stats.kstest(out, "laplace", args=(data.sum(), 1.0 / case.claimed[0])).pvalue > KS_PVALUE
        # on the same granularity lattice for D and D': no output only one side can produce (Mironov 2012)
        assert np.array_equal(out * 2.0**40, np.round(out * 2.0**40))


def test_gaussian_outputs_have_the_librarys_analytic_std():
    case = CASES["GaussianMechanism on a bounded sum"]
    eps, delta = case.claimed
    std = numerical.GaussianMechanism(eps, delta, 1.0).std
    # Balle & Wang (2018)'s analytic calibration for (1, 1e-5) and sensitivity 1 is 3.73, not the
    # classical sqrt(2 ln(1.25 / delta)) / eps = 4.84
    assert 3.7 < std < 3.8
    for data in (case.D, case.D_prime):
        assert stats.kstest(_draw(case, data), "norm", args=(data.sum(), std)).pvalue > KS_PVALUE


def test_count_is_the_count_plus_rounded_laplace_noise():
    case = CASES["Count"]
    out = _draw(case, case.D)
    assert np.array_equal(out, np.round(out))
    k = np.arange(-3, 4)
    laplace = stats.laplace(scale=1.0 / case.claimed[0])
    p = laplace.cdf(k + 0.5) - laplace.cdf(k - 0.5)
    freq = np.array([(out == len(case.D) + j).mean() for j in k])
    assert np.all(np.abs(freq - p) < N_SE * np.sqrt(p * (1 - p) / N))


def test_bounded_mean_is_the_noisy_normalised_sum_over_the_noisy_count():
    # Li, Lyu, Su & Yang 2016, Algorithm 2.4 (the library's reference): with midpoint m = 1/2 and eps/2
    # each, clamp(m + (sum(x - m) + Lap((u - l) / 2 / (eps / 2))) / max(1, round(n + Lap(1 / (eps / 2)))), l, u)
    case = CASES["BoundedMean"]
    half = case.claimed[0] / 2
    rng = np.random.default_rng(0)
    for data in (case.D, case.D_prime):
        x = data[:, 0]
        noisy_sum = (x - 0.5).sum() + rng.laplace(0, 0.5 / half, 4 * N)
        noisy_count = np.maximum(1, np.round(x.size + rng.laplace(0, 1 / half, 4 * N)))
        law = np.clip(0.5 + noisy_sum / noisy_count, 0, 1)
        assert stats.ks_2samp(_draw(case, data), law).pvalue > KS_PVALUE


def test_claims_are_the_library_objects_own_and_neighbours_differ_by_one_record():
    assert sum(case.planted for case in CASES.values()) == 1
    for case in CASES.values():
        options = dict(case.mechanism.options)
        if isinstance(case.mechanism, adapter.NoisySum):
            library = getattr(numerical, case.mechanism.name)(**options)
            assert (library.epsilon, getattr(library, "delta", 0.0)) == case.claimed
        else:
            library = getattr(laplacian, case.mechanism.name)(**options)
            assert (library.epsilon, library.delta) == case.claimed
        assert "cannot be seeded" in case.note
        if case.mechanism.neighbor is not None:
            assert neighbors.check(case.D, case.D_prime, case.mechanism.neighbor) == len(case.D) - 1
    misuse = next(case for case in CASES.values() if case.planted)
    assert len(misuse.D) - len(misuse.D_prime) == 3 and misuse.mechanism.options["linf_sensitivity"] == 1


def test_planted_misuse_is_flagged_by_a_small_audit():
    case = next(case for case in CASES.values() if case.planted)
    report = audit(case.mechanism, case.D, case.D_prime, claimed=case.claimed, n_samples=20_000, progress=False)
    assert report.verdict.label == "violation" and report.eps_lo(case.claimed[1]) > case.claimed[0]

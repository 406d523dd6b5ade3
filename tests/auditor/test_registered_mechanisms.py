"""Audits of registered mechanisms against their exact spectra from `theory`."""

import os

import numpy as np
import pytest

from ndis import mechanisms
from ndis.mechanisms import gaussian
from ndis import theory
from ndis.auditor import Execution, Scoring, Split, audit


def test_gaussian_mechanism_report_carries_the_exact_curve():
    # sum query, sensitivity 1 between D and D' (one row of ones removed), sigma = 1: mu = 1.
    mech = mechanisms.get("gaussian", query="sum", sigma=1.0)
    D = np.ones((3, 1))
    eps = np.linspace(0, 1, 11)
    report = audit(mech, D, D[:-1], eps=eps, n_samples=100_000, seed=0, scorer="quadratic", neighbor="remove")
    np.testing.assert_allclose(report.theory, theory.gaussian_delta(eps, 1.0), rtol=1e-8)
    assert report.info["theory"] == "exact law"
    # 5e4 held-out per side: SE of delta-hat <= sqrt((1 + e^2) / 4 / 5e4) = 0.0065; 4 SE = 0.026, and
    # the observed error is far smaller; 0.015 keeps ~2.3 SE.
    assert np.max(np.abs(report.delta - report.theory)) < 0.015
    assert np.all(report.delta_lower <= report.theory)


def test_random_projection_with_gram_features_and_worst_row():
    # RP r = 5 on a small matrix; the worst row comes from the mechanism, features from its Gram map.
    rng = np.random.default_rng(4)
    D = rng.normal(size=(30, 3))
    mech = mechanisms.get("rp", r=5)
    eps = np.linspace(0, 2, 11)
    report = audit(mech, D, None, neighbor="remove:worst", eps=eps, n_samples=60_000, seed=1,
                   scorer=Scoring(scorer="quadratic", features="auto"))
    row, D_prime = mech.worst_neighbor(D, "remove")
    assert report.neighbor == {"relation": "remove", "row": row, "how": "mechanism"}
    assert report.scorer.startswith("quadratic/")
    # 3e4 held-out per side: SE of delta-hat <= sqrt((1 + e^4) / 4 / 3e4) = 0.022 at eps = 2 and about
    # 0.004 where the curve matters; max error 0.02 and bound below the exact curve.
    assert np.max(np.abs(report.delta - report.theory)) < 0.02
    assert np.all(report.delta_lower <= report.theory)


def test_black_box_screen_finds_a_distinguishable_row():
    # The Gaussian sum mechanism has no worst_neighbor: the screen audits candidate rows (largest
    # leverage, largest norm, random) and keeps the most distinguishable, which is the largest-norm row.
    class Sum:
        name = "sum-noise"

        def sample(self, D, n, rng):
            return D.sum(axis=0) + rng.standard_normal((n, D.shape[1]))

    D = np.full((12, 2), 0.1)
    D[5] = [2.0, 1.0]
    report = audit(Sum(), D, None, neighbor="remove:worst", eps=np.linspace(0, 1, 6), n_samples=20_000, seed=0,
                   scorer="quadratic")
    assert report.neighbor == {"relation": "remove", "row": 5, "how": "screen"}
    assert report.delta[0] > 0.5


def test_literal_sampler_as_a_control_agrees_with_the_fast_one():
    # ALS r = 30 on a 60 x 3 regression: the paper's sketch-and-solve vs the exact t-law sampler.
    # 1e4 held-out per side: SE of delta-hat <= sqrt((1 + e^2) / 4 / 1e4) = 0.015 at eps <= 1; the
    # difference of two independent estimates has SE <= 0.021, so 4 SE = 0.085.
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    D = np.column_stack([X, X @ [1.0, -1.0] + rng.normal(size=60)])
    mech = mechanisms.get("als", r=30)
    eps = np.linspace(0, 1, 6)
    kwargs = dict(neighbor="remove:worst", eps=eps, n_samples=20_000, scorer="quadratic")
    fast = audit(mech, D, None, seed=0, **kwargs)
    literal = audit(mech, D, None, seed=1, execution=Execution(literal=True), **kwargs)
    assert literal.info["kind"] == "mechanism (literal)"
    assert np.max(np.abs(fast.delta - literal.delta)) < 0.085
    with pytest.raises(ValueError, match="literal=True"):
        audit(lambda data, n, rng: rng.normal(size=(n, 1)), 0, 1, n_samples=2_000,
              execution=Execution(literal=True))


class _CountingGaussian(gaussian.GaussianMechanism):
    """The registered Gaussian mechanism, counting its data-dependent set-ups (`_fast` calls) and
    without a worst_neighbor, so that `remove:worst` runs the black-box screen."""

    set_ups = []

    def _fast(self, D):
        _CountingGaussian.set_ups.append(D.shape[0])
        return super()._fast(D)

    def worst_neighbor(self, D, relation=None):
        return None


def test_the_set_up_is_done_once_per_side():
    # 4 chunks per side for training and 4 for held-out scoring; output_shape is declared, so there is
    # no shape probe: D (3 rows) and D' (2 rows) are set up once each.
    _CountingGaussian.set_ups = []
    mech = _CountingGaussian(query="sum", sigma=1.0)
    D = np.ones((3, 1))
    audit(mech, D, D[:-1], neighbor="remove", eps=np.linspace(0, 1, 5), n_samples=4_000, seed=0, scorer="quadratic",
          execution=Execution(chunk_size=500))
    assert _CountingGaussian.set_ups == [3, 2]


def test_the_neighbour_screen_sets_each_candidate_up_once_and_hands_it_on():
    # D once (shared by the screen and the audit), each candidate D' once; the chosen candidate's
    # sampler is reused by the audit itself.
    from ndis.auditor.sampling import chunks, neighbors

    _CountingGaussian.set_ups = []
    D = np.full((8, 1), 0.1)
    D[5] = 2.0
    report = audit(_CountingGaussian(query="sum", sigma=1.0), D, None, neighbor="remove:worst",
                   eps=np.linspace(0, 1, 3), n_samples=4_000, seed=0, scorer="quadratic",
                   split=Split(screen_fraction=1.0), execution=Execution(chunk_size=1_000))
    assert report.neighbor["how"] == "screen" and report.neighbor["row"] == 5
    screened = report.screen["rows"]
    assert screened == neighbors.candidate_rows(D, 4, seed=chunks.chunk_seed(chunks.as_seed_sequence(0), 8))
    assert _CountingGaussian.set_ups == [8] + [7] * len(screened)


def test_a_duck_typed_sampler_serves_the_shape_probe_too():
    # no output_shape: the probe draws from the prepared samplers, so D and D' are still set up once each
    calls = []

    class Duck:
        name = "duck"

        def sampler(self, D, literal=False):
            calls.append(D.shape)
            centre = D.sum()
            return lambda n, rng: centre + rng.standard_normal((n, 1))

        def sample(self, D, n, rng):
            return self.sampler(D)(n, rng)

    audit(Duck(), np.ones((1, 1)), np.zeros((1, 1)), eps=np.linspace(0, 1, 3), n_samples=2_000, scorer="quadratic",
          execution=Execution(chunk_size=300))
    assert calls == [(1, 1), (1, 1)]


def test_a_registered_mechanism_gives_the_same_report_on_threads_loky_and_dask():
    pytest.importorskip("distributed")
    mech = mechanisms.get("gaussian", query="sum", sigma=1.0)
    D = np.ones((3, 1))
    kwargs = dict(neighbor="remove", eps=np.linspace(0, 1, 5), n_samples=6_000, seed=4, scorer="quadratic")
    one = audit(mech, D, D[:-1], execution=Execution(n_jobs=1, chunk_size=700), **kwargs)
    default = audit(mech, D, D[:-1], execution=Execution(chunk_size=700), **kwargs)  # thread-safe: a thread per core
    assert one.info["n_jobs"] == 1  # one worker: sequential, whatever the backend
    assert (default.info["backend"], default.info["n_jobs"]) == ("threads", os.cpu_count())
    for other in (default, *(audit(mech, D, D[:-1], execution=Execution(n_jobs=2, backend=backend, chunk_size=700),
                                   **kwargs) for backend in ("threads", "loky", "dask"))):
        for name in ("delta", "delta_lower", "delta_upper", "floor"):
            np.testing.assert_array_equal(getattr(one, name), getattr(other, name))

"""Shared helpers for the auditor tests: a 1-D Gaussian mechanism and its exact spectrum.

The closed form delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) (Balle & Wang 2018,
Theorem 8) is evaluated with scipy here, in the tests only, as the reference for the estimator.
"""

import numpy as np
import pytest
from scipy.stats import norm


def gaussian_delta_reference(eps, mu):
    eps = np.asarray(eps, dtype=float)
    return norm.cdf(mu / 2 - eps / mu) - np.exp(eps) * norm.cdf(-mu / 2 - eps / mu)


def optimal_event_probabilities(eps, mu):
    """P(S*), Q(S*) of the optimal event S* = {x > eps/mu + mu/2} for P = N(mu, 1), Q = N(0, 1)."""
    t = np.asarray(eps, dtype=float) / mu + mu / 2
    return norm.sf(t - mu), norm.sf(t)


class GaussianMechanism:
    """A duck-typed mechanism object: x + sigma N(0, 1) for a one-row dataset D = [[x]]."""

    name = "test-gaussian"
    neighbor = "replace"

    def __init__(self, sigma):
        self.sigma = sigma
        self.params = {"sigma": sigma}

    def sample(self, D, n, rng):
        return np.asarray(D, dtype=float)[0] + self.sigma * rng.standard_normal((n, 1))

    def output_shape(self, D):
        return (1,)


def counting_mechanism():
    """A batched plug-in (the mean of the rows plus N(0, 1) noise) and the list of its calls' sizes."""
    calls = []

    def mechanism(data, n, rng):
        calls.append(n)
        return np.asarray(data).mean(axis=0) + rng.standard_normal((n, np.shape(data)[1]))

    return mechanism, calls


@pytest.fixture
def gaussian_batched():
    def mechanism(data, n, rng):
        return data[0] + 1.0 * rng.standard_normal((n, 1))

    return mechanism


@pytest.fixture
def gaussian_per_sample():
    def mechanism(data, rng):
        return data[0] + 1.0 * rng.standard_normal(1)

    return mechanism

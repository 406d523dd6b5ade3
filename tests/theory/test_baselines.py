"""Calibrations of the baselines and of M_RP / M_OLS reproduce the published constants of
Lu, Magdon-Ismail, Wei & Zikas (2023, NDIS)."""

import numpy as np
import pytest

from ndis import theory
from ndis.experiments.datasets import flights


@pytest.fixture(scope="module")
def flight():
    D = flights()
    return D, len(D), float(np.linalg.norm(D, axis=1).max())


def test_flight_constants(flight):
    # the NDIS Flight setting: r = 1200, eps = 1, delta = 1/n, C = max row norm = 0.0732081
    D, n, C = flight
    assert n == 327_346
    assert C == pytest.approx(0.0732081, abs=5e-8)
    assert round(theory.rp_sigma(1.0, 1 / n, 1200, C), 4) == 0.7452
    assert round(theory.ols_sigma(1.0, 1 / n, 1200, 2, C), 5) == 0.86414
    assert round(theory.sheffet_c2(1.0, 1 / n, 1200, C), 3) == 2.060
    assert round(theory.isit18_sigma(1.0, 1 / n, 1200, theory.isit18_column_bound(D)), 3) == 59.796


def test_tight_rp_sigma_is_smaller_and_valid(flight):
    # sigma = C sqrt(1/l* - 1) caps the regularised leverage C^2/(C^2 + sigma^2) at l*
    _, n, C = flight
    lstar = theory.rp_leverage_threshold(1.0, 1 / n, 1200)
    tight = theory.rp_sigma(1.0, 1 / n, 1200, C, tight=True)
    assert tight < theory.rp_sigma(1.0, 1 / n, 1200, C)
    assert C**2 / (C**2 + tight**2) == pytest.approx(lstar, rel=1e-12)


def test_isit18_conversion_as_printed():
    # Showkatbakhsh et al. (2018) as NDIS calibrates it: eps = 1, delta -> 0: delta0 = 2/(e + 1) = 0.5379, eps_MI = 0.2087 bits
    assert theory.isit18_mi_epsilon(1.0, 1e-12) == pytest.approx(0.20873, abs=5e-5)
    assert 1 / (2 ** (2 * theory.isit18_mi_epsilon(1.0, 1e-12)) - 1) == pytest.approx(2.9805, abs=5e-4)


def test_calibration_input_errors():
    with pytest.raises(ValueError):
        theory.sheffet_c2(1.0, 1.5, 100, 1.0)
    with pytest.raises(ValueError):
        theory.rp_sigma(1.0, 1e-5, 10, -1.0)
    with pytest.raises(ValueError):
        theory.ols_sigma(1.0, 1e-5, 2, 2, 1.0)

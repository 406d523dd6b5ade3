"""The worst row of each closed-form family, against brute force."""

import numpy as np
import pytest

from ndis import theory
from ndis.core import validation
from ndis.experiments.datasets import synthetic


@pytest.fixture(scope="module")
def data():
    D = synthetic(n=30, d=3, seed=2)
    D[7] *= 4.0          # one high-leverage, high-residual row
    return D


@pytest.mark.parametrize("sigma", [0.0, 0.7])
def test_max_leverage_row_brute_force(data, sigma):
    gram = data.T @ data + sigma**2 * np.eye(data.shape[1])
    lev = np.einsum("ij,jk,ik->i", data, np.linalg.inv(gram), data)
    assert theory.max_leverage_row(data, sigma) == int(np.argmax(lev))
    np.testing.assert_allclose(theory.data_leverages(data, sigma), lev, rtol=1e-10)


def test_max_sensitivity_row_brute_force(data):
    B, b = data[:, :-1], data[:, -1]
    x = np.linalg.lstsq(B, b, rcond=None)[0]
    moved = [np.linalg.norm(x - np.linalg.lstsq(np.delete(B, i, 0), np.delete(b, i), rcond=None)[0])
             for i in range(len(b))]
    assert theory.max_sensitivity_row(data) == int(np.argmax(moved))


@pytest.mark.parametrize(("sigma", "eps"), [(0.0, 1.0), (0.0, 0.3), (0.5, 1.0)])
def test_max_als_delta_row_is_the_global_max(data, sigma, eps):
    """The frontier search finds the row with the largest phi over all rows."""
    lev, res = theory.leverage_residual(data, sigma)
    phi = [theory.als_delta(eps, lev[i], res[i], 40, 3) for i in range(len(lev))]
    assert theory.max_als_delta_row(data, 40, eps, sigma) == int(np.argmax(phi))


def test_leverage_residual_in_the_augmented_data(data):
    lev, res = theory.leverage_residual(data, 0.5)
    A = np.vstack([data, 0.5 * np.eye(4)])
    B, b = A[:, :-1], A[:, -1]
    hat = B @ np.linalg.solve(B.T @ B, B.T)
    w = b - hat @ b
    assert np.allclose(lev, np.diag(hat)[:30]) and np.allclose(res, (w**2 / (w @ w))[:30])


def test_pareto_frontier_brute_force():
    rng = np.random.default_rng(0)
    lev, res = rng.random(300), rng.random(300)
    dominated = [(np.any((lev >= lev[i]) & (res >= res[i]) & ((lev > lev[i]) | (res > res[i])))) for i in range(300)]
    np.testing.assert_array_equal(theory.pareto_frontier(lev, res), np.flatnonzero(~np.array(dominated)))


def test_one_qr_per_validated_dataset(data, monkeypatch):
    """Leverages, residual shares, sensitivities, x_opt and the worst rows of one validated dataset
    (and of one [D; ridge I]) share a single QR factorisation."""
    from ndis.theory import leverage

    calls = []
    qr = leverage.linalg.qr
    monkeypatch.setattr(leverage.linalg, "qr", lambda *a, **k: calls.append(a[0].shape) or qr(*a, **k))
    D = validation.as_data(data)
    B, b = theory.split_regression(D)
    theory.leverages(B), theory.residual_shares(B, b), theory.ols_sensitivities(B, b), theory.ols_fit(B, b)
    theory.max_sensitivity_row(D), theory.leverage_residual(D), theory.max_als_delta_row(D, 40, 1.0)
    assert calls == [(30, 3)]
    theory.leverage_residual(D, 0.5), theory.max_als_delta_row(D, 40, 1.0, 0.5)
    assert calls == [(30, 3), (34, 3)]

"""Leverages, residual shares and OLS sensitivities against brute-force linear algebra."""

import numpy as np
import pytest

from ndis import theory
from ndis.experiments.datasets import synthetic


@pytest.fixture(scope="module")
def data():
    D = synthetic(n=60, d=4, seed=3)
    return D[:, :-1], D[:, -1]


def test_leverages_are_hat_matrix_diagonal(data):
    B, _ = data
    hat = B @ np.linalg.solve(B.T @ B, B.T)
    np.testing.assert_allclose(theory.leverages(B), np.diag(hat), rtol=1e-12, atol=1e-15)
    assert theory.leverages(B).sum() == pytest.approx(B.shape[1], rel=1e-12)   # trace = rank


def test_residual_share_is_leverage_gap_of_augmented_matrix(data):
    # Lu et al. (2023, NDIS), Proposition 4: l_A = l + e for A = [B, b]
    B, b = data
    lhs = theory.leverages(np.column_stack([B, b]))
    rhs = theory.leverages(B) + theory.residual_shares(B, b)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-11, atol=1e-15)


def test_ols_sensitivity_matches_deletion(data):
    B, b = data
    x = np.linalg.lstsq(B, b, rcond=None)[0]
    brute = [np.linalg.norm(x - np.linalg.lstsq(np.delete(B, i, 0), np.delete(b, i), rcond=None)[0])
             for i in range(B.shape[0])]
    np.testing.assert_allclose(theory.ols_sensitivities(B, b), brute, rtol=1e-9)


def test_rank_deficient_and_non_finite_inputs_are_rejected(data):
    B, b = data
    with pytest.raises(ValueError, match="rank-deficient"):
        theory.leverages(np.column_stack([B, B[:, 0]]))
    with pytest.raises(ValueError, match="NaN"):
        theory.leverages(np.where(B == B[0, 0], np.nan, B))
    with pytest.raises(ValueError, match="more rows than columns"):
        theory.leverages(B[:3])
    with pytest.raises(ValueError, match="zero residual"):
        theory.residual_shares(B, B @ np.ones(B.shape[1]))

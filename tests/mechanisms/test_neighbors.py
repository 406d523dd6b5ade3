"""Neighbour relations and the worst row of each family, against brute force."""

import numpy as np
import pytest

from ndis import mechanisms
from ndis import theory
from ndis.experiments.datasets import synthetic
from ndis.mechanisms import neighbors


@pytest.fixture(scope="module")
def data():
    D = synthetic(n=30, d=3, seed=2)
    D[7] *= 4.0          # one high-leverage, high-residual row
    return D


def test_relations(data):
    assert np.array_equal(neighbors.remove(data, 4), np.vstack([data[:4], data[5:]]))
    zeroed = neighbors.zero(data, 4)
    assert np.all(zeroed[4] == 0) and np.array_equal(np.delete(zeroed, 4, 0), np.delete(data, 4, 0))
    replaced = neighbors.replace(data, 2, [1.0, 2.0, 3.0, 4.0])
    assert np.array_equal(replaced[2], [1, 2, 3, 4]) and np.array_equal(np.delete(replaced, 2, 0), np.delete(data, 2, 0))
    changed = neighbors.change_entry(data, 1, 3, 0.5)
    assert changed[1, 3] == 0.5 and np.sum(changed != data) == 1
    assert np.array_equal(neighbors.neighbor(data, "zero", 4), zeroed)
    with pytest.raises(ValueError, match="out of range"):
        neighbors.remove(data, 30)
    with pytest.raises(ValueError, match="relation must be one of"):
        neighbors.neighbor(data, "swap", 1)


@pytest.mark.parametrize("sigma", [0.0, 0.7])
def test_max_leverage_row_brute_force(data, sigma):
    gram = data.T @ data + sigma**2 * np.eye(data.shape[1])
    lev = np.einsum("ij,jk,ik->i", data, np.linalg.inv(gram), data)
    assert neighbors.max_leverage_row(data, sigma) == int(np.argmax(lev))


def test_max_sensitivity_row_brute_force(data):
    B, b = data[:, :-1], data[:, -1]
    x = np.linalg.lstsq(B, b, rcond=None)[0]
    moved = [np.linalg.norm(x - np.linalg.lstsq(np.delete(B, i, 0), np.delete(b, i), rcond=None)[0])
             for i in range(len(b))]
    assert neighbors.max_sensitivity_row(data) == int(np.argmax(moved))


@pytest.mark.parametrize(("sigma", "eps"), [(0.0, 1.0), (0.0, 0.3), (0.5, 1.0)])
def test_max_als_delta_row_is_the_global_max(data, sigma, eps):
    """The frontier search finds the row with the largest phi over all rows."""
    lev, res = neighbors.leverage_residual(data, sigma)
    phi = [theory.als_delta(eps, lev[i], res[i], 40, 3) for i in range(len(lev))]
    assert neighbors.max_als_delta_row(data, 40, eps, sigma) == int(np.argmax(phi))


def test_leverage_residual_in_the_augmented_data(data):
    lev, res = neighbors.leverage_residual(data, 0.5)
    A = np.vstack([data, 0.5 * np.eye(4)])
    B, b = A[:, :-1], A[:, -1]
    hat = B @ np.linalg.solve(B.T @ B, B.T)
    w = b - hat @ b
    assert np.allclose(lev, np.diag(hat)[:30]) and np.allclose(res, (w**2 / (w @ w))[:30])


def test_worst_neighbor_of_each_family(data):
    rp = mechanisms.get("rp", r=5)
    i, other = rp.worst_neighbor(data)
    assert i == neighbors.max_leverage_row(data) and np.array_equal(other, neighbors.remove(data, i))
    i, other = rp.worst_neighbor(data, "zero")
    assert np.array_equal(other, neighbors.zero(data, i))
    assert rp.worst_neighbor(data, "replace") is None
    with pytest.raises(ValueError, match="relation must be one of"):
        rp.worst_neighbor(data, "swap")
    m_rp = mechanisms.get("m-rp", r=5, sigma=0.3)
    assert m_rp.worst_neighbor(data)[0] == neighbors.max_leverage_row(data, 0.3)
    assert mechanisms.get("als", r=40).worst_neighbor(data, eps=0.3)[0] == neighbors.max_als_delta_row(data, 40, 0.3)
    assert mechanisms.get("m-ols", r=40, sigma=0.5).worst_neighbor(data)[0] == neighbors.max_als_delta_row(data, 40, 1.0, 0.5)
    assert mechanisms.get("gaussian-ls", sigma=1.0).worst_neighbor(data)[0] == neighbors.max_sensitivity_row(data)
    assert mechanisms.get("gaussian", query=np.sum, sigma=1.0).worst_neighbor(data) is None


@pytest.mark.parametrize(("query", "relation"), [("sum", "remove"), ("sum", "zero"), ("mean", "remove"), ("mean", "zero")])
def test_gaussian_query_worst_row_brute_force(data, query, relation):
    f = {"sum": lambda D: D.sum(0), "mean": lambda D: D.mean(0)}[query]
    moved = [np.linalg.norm(f(data) - f(neighbors.neighbor(data, relation, i))) for i in range(len(data))]
    mech = mechanisms.get("gaussian", query=query, sigma=1.0)
    assert mech.worst_neighbor(data, relation)[0] == int(np.argmax(moved))


def test_remove_and_zero_give_the_same_law(data):
    """The output laws depend on D only through sums over rows (spec §1.1)."""
    for mech in (mechanisms.get("rp", r=5), mechanisms.get("m-ols", r=40, sigma=0.5)):
        a, b = mech.output_law(neighbors.remove(data, 7)), mech.output_law(neighbors.zero(data, 7))
        assert np.allclose(a.mean, b.mean) and np.allclose(a.cov, b.cov)


def test_fixed_for_pins_the_data_dependent_defaults(data):
    """With C=None M_RP on D' would use D''s own largest row norm; fixed_for(D) pins C (and the
    relative schemes' l_S, e_S) so that D and D' are run by one scheme."""
    i = int(np.argmax(np.linalg.norm(data, axis=1)))
    other = neighbors.remove(data, i)
    loose = mechanisms.get("m-rp", r=5, eps=1.0, delta=1e-3)
    assert loose.noise_scale(other) < loose.noise_scale(data)
    fixed = loose.fixed_for(data)
    assert fixed.C == pytest.approx(np.linalg.norm(data[i])) and fixed.noise_scale(other) == fixed.noise_scale(data)
    rel = mechanisms.get("m-ols-rel", r=40, eps=1.0, delta=1e-3).fixed_for(data)
    lev, res = neighbors.leverage_residual(data)
    assert (rel.leverage, rel.residual) == (pytest.approx(lev.max()), pytest.approx(res.max()))
    assert rel.noise_scale(other) == rel.noise_scale(data)
    gls = mechanisms.get("gaussian-ls", eps=1.0, delta=1e-3).fixed_for(data)
    assert gls.noise_scale(other) == gls.noise_scale(data)
    assert mechanisms.get("rp", r=5).fixed_for(data) == mechanisms.get("rp", r=5)
    partial = mechanisms.get("m-ols-rel", r=40, eps=1.0, delta=1e-3, leverage=0.5).fixed_for(data)
    assert partial.leverage == 0.5 and partial.residual == pytest.approx(res.max())

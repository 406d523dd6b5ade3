"""The mechanisms' worst neighbouring pairs (the relations: tests/core/test_neighbors.py; the worst
rows against brute force: tests/theory/test_worst_rows.py)."""

import numpy as np
import pytest

from ndis import mechanisms
from ndis import theory
from ndis.core.neighbors import make
from ndis.experiments.datasets import synthetic


@pytest.fixture(scope="module")
def data():
    D = synthetic(n=30, d=3, seed=2)
    D[7] *= 4.0          # one high-leverage, high-residual row
    return D


def test_worst_neighbor_of_each_family(data):
    rp = mechanisms.get("rp", r=5)
    i, other = rp.worst_neighbor(data)
    assert i == theory.max_leverage_row(data) and np.array_equal(other, make(data, "remove", i))
    i, other = rp.worst_neighbor(data, "zero")
    assert np.array_equal(other, make(data, "zero", i))
    assert rp.worst_neighbor(data, "replace") is None
    with pytest.raises(ValueError, match="unknown neighbour relation 'swap'"):
        rp.worst_neighbor(data, "swap")
    m_rp = mechanisms.get("m-rp", r=5, sigma=0.3)
    assert m_rp.worst_neighbor(data)[0] == theory.max_leverage_row(data, 0.3)
    assert mechanisms.get("als", r=40).worst_neighbor(data, eps=0.3)[0] == theory.max_als_delta_row(data, 40, 0.3)
    assert mechanisms.get("m-ols", r=40, sigma=0.5).worst_neighbor(data)[0] == theory.max_als_delta_row(data, 40, 1.0, 0.5)
    assert mechanisms.get("gaussian-ls", sigma=1.0).worst_neighbor(data)[0] == theory.max_sensitivity_row(data)
    assert mechanisms.get("gaussian", query=np.sum, sigma=1.0).worst_neighbor(data) is None


@pytest.mark.parametrize(("query", "relation"), [("sum", "remove"), ("sum", "zero"), ("mean", "remove"), ("mean", "zero")])
def test_gaussian_query_worst_row_brute_force(data, query, relation):
    f = {"sum": lambda D: D.sum(0), "mean": lambda D: D.mean(0)}[query]
    moved = [np.linalg.norm(f(data) - f(make(data, relation, i))) for i in range(len(data))]
    mech = mechanisms.get("gaussian", query=query, sigma=1.0)
    assert mech.worst_neighbor(data, relation)[0] == int(np.argmax(moved))


def test_remove_and_zero_give_the_same_law(data):
    """The output laws depend on D only through sums over rows, to which a zero row adds nothing."""
    for mech in (mechanisms.get("rp", r=5), mechanisms.get("m-ols", r=40, sigma=0.5)):
        a, b = mech.output_law(make(data, "remove", 7)), mech.output_law(make(data, "zero", 7))
        assert np.allclose(a.mean, b.mean) and np.allclose(a.cov, b.cov)


def test_fixed_for_pins_the_data_dependent_defaults(data):
    """With C=None M_RP on D' would use D''s own largest row norm; fixed_for(D) pins C (and the
    relative schemes' l_S, e_S) so that D and D' are run by one scheme."""
    i = int(np.argmax(np.linalg.norm(data, axis=1)))
    other = make(data, "remove", i)
    loose = mechanisms.get("m-rp", r=5, eps=1.0, delta=1e-3)
    assert loose.noise_scale(other) < loose.noise_scale(data)
    fixed = loose.fixed_for(data)
    assert fixed.C == pytest.approx(np.linalg.norm(data[i])) and fixed.noise_scale(other) == fixed.noise_scale(data)
    rel = mechanisms.get("m-ols-rel", r=40, eps=1.0, delta=1e-3).fixed_for(data)
    lev, res = theory.leverage_residual(data)
    assert (rel.leverage, rel.residual) == (pytest.approx(lev.max()), pytest.approx(res.max()))
    assert rel.noise_scale(other) == rel.noise_scale(data)
    gls = mechanisms.get("gaussian-ls", eps=1.0, delta=1e-3).fixed_for(data)
    assert gls.noise_scale(other) == gls.noise_scale(data)
    assert mechanisms.get("rp", r=5).fixed_for(data) == mechanisms.get("rp", r=5)
    partial = mechanisms.get("m-ols-rel", r=40, eps=1.0, delta=1e-3, leverage=0.5).fixed_for(data)
    assert partial.leverage == 0.5 and partial.residual == pytest.approx(res.max())


def test_als_audit_set_up_factorises_and_validates_the_data_once(data, monkeypatch):
    """worst_neighbor, the fast sampler's set-up and output_law on one validated D share one QR of D
    and one finiteness scan."""
    from ndis.core import validation
    from ndis.theory import leverage

    qrs, scans = [], []
    qr, isfinite = leverage.linalg.qr, validation.np.isfinite
    monkeypatch.setattr(leverage.linalg, "qr", lambda *a, **k: qrs.append(a[0].shape) or qr(*a, **k))
    monkeypatch.setattr(validation.np, "isfinite", lambda a: scans.append(np.shape(a)) or isfinite(a))
    mech = mechanisms.get("als", r=40)
    D = validation.as_data(data)
    mech.worst_neighbor(D, "remove")
    mech.sampler(D)(10, np.random.default_rng(0))
    mech.output_law(D)
    assert qrs == [(30, 3)] and scans.count(data.shape) == 1

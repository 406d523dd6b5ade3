"""theory.profile: the PrivacyProfile interface, WorstCase, and the pessimistic hand-off to dp_accounting
PLDs (to_pld) and back (from_pld)."""

import builtins

import numpy as np
import pytest

from ndis import theory
from ndis.theory.profile import WorstCase


def _pld_checks(profile, pld, gap, eps):
    """Both directions: the PLD's delta is >= the exact one (up to the 1e-12 relative accuracy of the
    exact values and dp_accounting's own rounding) and <= the exact one gap earlier (plus the tails)."""
    back = theory.from_pld(pld)
    for direction in ("forward", "reverse"):
        exact, discrete = profile.delta(eps, direction), back.delta(eps, direction)
        assert np.all(discrete >= exact * (1 - 1e-10) - 1e-300)
        assert np.all(discrete <= profile.delta(eps - gap, direction) + 1e-16)


def test_to_pld_is_pessimistic_and_within_one_grid_step():
    pytest.importorskip("dp_accounting")
    eps = np.linspace(-0.3, 4.0, 431) + 0.37e-4              # between the grid's points as well
    gauss = theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]])
    pld, gap = gauss._pld(1e-4, 1e-20)
    assert gap == pytest.approx(1e-4) and gauss.to_pld(1e-4).get_delta_for_epsilon(1.0) == pld.get_delta_for_epsilon(1.0)
    _pld_checks(gauss, pld, gap, eps)
    als = theory.als_pair(0.01, 0.02, 300, 3)                # not a closed form: the adaptive support
    pld, gap = als._pld(1e-4, 1e-20, 2000, 0.05, 1e-2)      # (coarse steps, to keep the test short)
    assert 1e-4 < gap <= 1e-2
    _pld_checks(als, pld, gap, np.linspace(-0.2, 2.0, 221))


def test_from_pld_reads_dp_accountings_curves_and_epsilons():
    dp = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution

    pld = privacy_loss_distribution.from_laplace_mechanism(2.0, value_discretization_interval=1e-3, sampling_prob=0.3)
    ours = theory.from_pld(pld)
    eps = np.linspace(0.0, 3.0, 31)
    assert np.allclose(ours.delta(eps, "max"), pld.get_delta_for_epsilon(eps), rtol=1e-9, atol=1e-15)
    for delta in (1e-2, 1e-4, 1e-7):
        assert ours.epsilon(delta, "max") == pytest.approx(pld.get_epsilon_for_delta(delta), abs=1e-9)
    assert ours.to_pld(1e-3) is pld and ours.reverse().reverse() is ours
    assert isinstance(ours.to_pld(2e-3), privacy_loss_distribution.PrivacyLossDistribution)
    assert dp is not None


def test_worst_case_is_the_maximum_in_each_direction():
    # the pruned maximum on long grids and the duality used at eps < 0 give exactly the plain maximum
    pairs = [theory.als_pair(l, e, 200, 2) for l, e in ((0.01, 0.002), (0.004, 0.006), (0.012, 0.0001))]
    worst = WorstCase(pairs)
    eps = np.linspace(-0.6, 1.2, 900)
    for direction in ("forward", "reverse"):
        plain = np.max([p.log_delta(eps, direction) for p in pairs], axis=0)
        assert np.allclose(worst.log_delta(eps, direction), plain, rtol=1e-11, atol=0)   # both exact to ~1e-12
        assert worst.epsilon(1e-6, direction) == pytest.approx(max(p.epsilon(1e-6, direction) for p in pairs), rel=1e-12)


def test_curve_and_epsilon_directions():
    pair = theory.GaussianPair([0.5, 0.0], np.diag([1.0, 2.0]), [0.0, 0.0], np.eye(2))
    curve = pair.curve([0.0, 0.5, 1.0])
    assert np.array_equal(curve.forward, pair.delta([0.0, 0.5, 1.0]))
    assert np.array_equal(curve.reverse, pair.reverse().delta([0.0, 0.5, 1.0]))
    assert pair.epsilon(1e-6, "max") == max(pair.epsilon(1e-6), pair.reverse().epsilon(1e-6))
    assert pair.delta(0.3, "max") == max(pair.delta(0.3), pair.reverse().delta(0.3))
    with pytest.raises(ValueError, match="direction must be one of"):
        pair.delta(0.3, "both")


def test_missing_dp_accounting_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def without_dp_accounting(name, *args, **kwargs):
        if name.startswith("dp_accounting"):
            raise ImportError("No module named 'dp_accounting'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_dp_accounting)
    with pytest.raises(ImportError, match=r'pip install "ndis\[accounting\]"'):
        theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]]).to_pld()


def test_theory_imports_dp_accounting_only_inside_functions():
    # dp_accounting is optional: no module of theory imports it when loaded (top-level statements)
    import ast
    import pathlib

    folder = pathlib.Path(theory.__file__).resolve().parent
    for path in folder.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith("dp_accounting") for n in names), path.name

"""Canary design and a user's own train/score plug-ins: coin flips from a recorded seed, included
canaries inserted, the flips withheld from the scorer, the user's tracebacks kept."""

import numpy as np
import pytest

from ndis.auditor.one_run import canaries
from ndis.auditor.one_run.training import audit_training
from ndis.core.errors import MechanismError


def test_coin_flips_are_fair_and_seeded():
    flips = canaries.coin_flips(10_000, 3)
    np.testing.assert_array_equal(flips, canaries.coin_flips(10_000, 3))
    assert abs(flips.mean() - 0.5) < 4 * 0.005             # 4 standard errors


def test_input_canaries_insert_the_included_rows():
    design = canaries.InputCanaries((np.arange(6.0).reshape(3, 2), np.array([7, 8, 9])))
    X, y = design.insert((np.zeros((2, 2)), np.array([0, 1])), np.array([True, False, True]))
    np.testing.assert_array_equal(X, [[0, 0], [0, 0], [0, 1], [4, 5]])
    np.testing.assert_array_equal(y, [0, 1, 7, 9])
    assert len(design) == 3 and design[1][1] == 8


def test_dirac_canaries_are_distinct_coordinates():
    design = canaries.DiracCanaries.choose(50, 1000, seed=1, norm=2.0)
    assert np.unique(design.coordinates).size == 50 and design.norm == 2.0
    inserted = design.insert("data", np.arange(50) % 2 == 0)
    np.testing.assert_array_equal(inserted.coordinates, design.coordinates[::2])
    with pytest.raises(ValueError, match="own non-negative coordinate"):
        canaries.DiracCanaries([1, 1, 2])
    with pytest.raises(ValueError, match="only 10 are candidates"):
        canaries.DiracCanaries.choose(20, 10, seed=0)


def _noisy_mean(data, seed):
    """A user's 'training': the mean of the rows plus Gaussian noise (each canary row moves one coordinate)."""
    return data.sum(axis=0) + np.random.default_rng(seed).standard_normal(data.shape[1])


def test_a_users_train_and_score_are_audited_without_showing_the_flips():
    m = 600
    design = canaries.InputCanaries(np.eye(m) * 1.5)             # canary i adds 1.5 to coordinate i
    seen = []

    def score(model, canary):
        seen.append(canary)
        return float(model @ canary)

    report = audit_training(_noisy_mean, score, np.zeros((5, m)), design, seed=21, idealized_runs=2, method="gaussian")
    assert len(seen) == m and report.canaries == design.kind
    # the truth: the Gaussian mechanism with mu = 1.5 (eps ~ 6.1 at 1e-5): covered and well above 0
    assert 2.0 < report.eps_lo < 6.1 and report.headline == "gaussian" and report.estimates["gaussian"].certified
    again = audit_training(_noisy_mean, score, np.zeros((5, m)), design, seed=report.seed["entropy"],
                           idealized_runs=2, method="gaussian")
    assert again.eps_lo == report.eps_lo


def test_a_model_that_ignores_the_canaries_is_one_line():
    design = canaries.InputCanaries(np.eye(40))
    with pytest.raises(ValueError, match="do not depend on the canaries"):
        audit_training(lambda data, seed: 0.0, lambda model, canary: model, np.zeros((2, 40)), design, seed=0)


def test_errors_in_the_users_code_keep_their_traceback():
    design = canaries.InputCanaries(np.eye(40))

    def broken(model, canary):
        raise KeyError("inside the user's scorer")

    with pytest.raises(MechanismError, match=r"score\(model, canary 0\)") as caught:
        audit_training(_noisy_mean, broken, np.zeros((2, 40)), design, seed=0)
    assert isinstance(caught.value.__cause__, KeyError)

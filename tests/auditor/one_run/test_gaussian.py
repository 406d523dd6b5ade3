"""The Gaussian one-run bound: d_lo is an exact lower confidence bound under its model, eps_lo is the
Gaussian mechanism's eps at d_lo, and the checks of the model notice scores that are not Gaussian."""

import numpy as np
import pytest

from ndis import theory
from ndis.auditor.one_run import gaussian, idealized
from ndis.auditor.one_run.estimate import Uncomputable


def test_d_lo_covers_at_its_level():
    # exact noncentral-t inversion: P[d_lo > d] = alpha = 0.2; 150 runs: 30 +- 4 * 4.9 expected misses
    rng = np.random.default_rng(3)
    misses = 0
    for _ in range(150):
        included = rng.random(40) < 0.5
        scores = rng.standard_normal(40) * 2.0 + 0.7 * 2.0 * included
        misses += gaussian.fit(scores, included, 0.2)["d_lo"] > 0.7
    assert 11 <= misses <= 49


def test_eps_lo_is_the_gaussian_epsilon_at_d_lo():
    scores, included = idealized.draw(1000, 4.0, 1e-5, np.random.default_rng(0))
    estimate = gaussian.estimate(scores, included, 1e-5, 0.05)
    d = estimate.details
    assert estimate.eps_lo == theory.gaussian_epsilon(1e-5, d["d_lo"])
    assert d["d_interval"][0] < d["d_lo"] < d["d_hat"] < d["d_interval"][1]
    assert d["shift_interval"][0] < d["shift"] < d["shift_interval"][1]
    assert estimate.asymptotic and d["rejected"] is None and estimate.certified
    # the point estimate is near the truth (mu = 0.925; d_hat's standard error ~ 0.065, 4 of them)
    assert abs(d["d_hat"] - theory.gaussian_mu(4.0, 1e-5)) < 0.26


def test_the_model_checks_reject_scores_that_are_not_gaussian():
    rng = np.random.default_rng(1)
    included = rng.random(1000) < 0.5
    scores = rng.exponential(size=1000) + 0.5 * included       # skewed scores
    estimate = gaussian.estimate(scores, included, 1e-5, 0.05)
    assert not estimate.certified and estimate.rejected == estimate.details["rejected"]
    scores = rng.standard_normal(1000) * np.where(included, 3.0, 1.0)   # unequal variances
    assert gaussian.fit(scores, included, 0.05)["rejected"].startswith("Levene (equal variances) p = ")


def test_degenerate_scores_give_a_reason_not_a_crash():
    included = np.arange(40) % 2 == 0
    with pytest.raises(Uncomputable, match="do not vary within either group"):
        gaussian.estimate(included * 3.0, included, 1e-5, 0.05)            # perfect separation, no spread
    one_constant = np.where(included, 3.0, np.linspace(0, 1, 40))
    assert gaussian.estimate(one_constant, included, 1e-5, 0.05).rejected == (
        "the included canaries' scores are all equal, which no Gaussian law gives")
    with pytest.raises(Uncomputable, match="delta > 0"):
        gaussian.estimate(np.linspace(0, 1, 40), included, 0.0, 0.05)


def test_tied_scores_reject_the_model():
    # a Gaussian law has no atoms: rounded or discrete scores are outside the model, however normal
    # their histogram (here Gaussian scores rounded to 0.1: the five tests pass, the ties do not)
    scores, included = idealized.draw(1000, 4.0, 1e-5, np.random.default_rng(0))
    exact = gaussian.estimate(scores, included, 1e-5, 0.05)
    rounded = gaussian.estimate(np.round(scores, 1), included, 1e-5, 0.05)
    assert exact.certified and not rounded.certified
    assert rounded.rejected.startswith(f"{1000 - np.unique(np.round(scores, 1)).size} scores repeat another")


def test_median_is_above_steinke_in_the_idealized_setting():
    runs = idealized.idealized_eps_lo(1000, 4.0, 1e-5, 0.05, 9, seed=4, methods=["steinke", "gaussian"])
    assert np.median(runs["gaussian"]) > np.median(runs["steinke"])

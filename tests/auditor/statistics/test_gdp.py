"""The certified Gaussian-DP parameter mu_lo and the trade-off view (`auditor.statistics.gdp`)."""

import numpy as np
import pytest
from scipy.stats import norm

from ndis.auditor.statistics import gdp, spectrum
from ndis.auditor.statistics.histogram import ScoreHistogram


def test_gaussian_tradeoff_is_dong_roth_su_g_mu():
    a = np.linspace(0, 1, 11)
    np.testing.assert_allclose(gdp.gaussian_tradeoff(a, 0.0), 1 - a, atol=1e-15)  # perfect privacy
    np.testing.assert_allclose(gdp.gaussian_tradeoff(a, 1.3), norm.cdf(norm.ppf(1 - a) - 1.3), atol=1e-15)
    # symmetric: G_mu is its own inverse
    np.testing.assert_allclose(gdp.gaussian_tradeoff(gdp.gaussian_tradeoff(a, 0.8), 0.8), a, atol=1e-12)


def _scores(seed, mu, n_valid, n_held):
    """Scores of the optimal test for N(mu, 1) vs N(0, 1) (the outputs themselves)."""
    rng = np.random.default_rng(seed)
    valid = rng.normal(mu, 1, n_valid), rng.normal(0, 1, n_valid)
    held = ScoreHistogram.from_scores(rng.normal(mu, 1, n_held), rng.normal(0, 1, n_held), valid)
    return spectrum.empirical_roc(*valid), held, (n_valid, n_valid)


def test_mu_lo_is_below_the_true_mu_and_close_to_it():
    # 3e4 validation and 1e5 held-out per side; each run is wrong with probability <= 5%, and
    # the bounds' union over four one-sided statements makes it rarer: 0 of 12 seeds here. The
    # probit gap's standard error at the chosen central events is about 0.005 per side, so with
    # z(0.0125) = 2.24 on both sides mu_lo is about 1 - 0.03; 0.93 leaves room for a poorer event.
    values = []
    for seed in range(12):
        roc, held, sizes = _scores(seed, 1.0, 30_000, 100_000)
        certificate = gdp.certify_gdp(roc, held, 0.05, n_select=sizes)
        values.append(certificate.mu_lo)
        assert 0 < certificate.p_lower and certificate.q_upper < 1
    assert max(values) <= 1.0 and min(values) >= 0.93
    assert "not mu-GDP for any mu < mu_lo" in str(certificate)


def test_identical_laws_certify_nothing():
    rng = np.random.default_rng(3)
    valid = rng.normal(size=5_000), rng.normal(size=5_000)
    held = ScoreHistogram.from_scores(rng.normal(size=20_000), rng.normal(size=20_000), valid)
    certificate = gdp.certify_gdp(spectrum.empirical_roc(*valid), held, 0.05, n_select=(5_000, 5_000))
    assert certificate.mu_lo == 0 and certificate.threshold is None and "no Gaussian-DP claim" in str(certificate)


def test_held_out_data_are_read_only_through_their_counts():
    # An object with only the sizes and counts (no scores, no ROC) is enough for mu_lo.
    roc, held, sizes = _scores(0, 1.0, 20_000, 50_000)

    class CountsOnly:
        n_p, n_q, calls = held.n_p, held.n_q, []

        def counts(self, threshold):
            self.calls.append(threshold)
            return held.counts(threshold)

    counts_only = CountsOnly()
    assert gdp.certify_gdp(roc, counts_only, 0.05, n_select=sizes).mu_lo == gdp.certify_gdp(roc, held, 0.05,
                                                                                           n_select=sizes).mu_lo
    assert counts_only.calls


def test_tradeoff_band_contains_the_true_tradeoff():
    # DKW-Massart at alpha / 4 per side and law: the true G_1 lies in the band at every type I error
    # with probability >= 95% (here seed 5).
    rng = np.random.default_rng(5)
    n = 40_000
    roc = spectrum.empirical_roc(rng.normal(1, 1, n), rng.normal(0, 1, n))
    view = gdp.tradeoff_view(roc, n, n, 0.05)
    truth = gdp.gaussian_tradeoff(view["type_one"], 1.0)
    assert np.all(view["beta_lower"] <= truth + 1e-12) and np.all(truth <= view["beta_upper"] + 1e-12)
    assert np.all(np.diff(view["beta"]) <= 1e-12)  # non-increasing
    assert np.max(np.abs(view["beta"] - truth)) < 0.02  # DKW radius at 4e4: sqrt(log(80) / 8e4) = 0.007


@pytest.mark.parametrize("mu", [0.5, 2.0])
def test_mu_lo_tracks_other_mus(mu):
    roc, held, sizes = _scores(1, mu, 30_000, 100_000)
    assert mu - 0.1 <= gdp.certify_gdp(roc, held, 0.05, n_select=sizes).mu_lo <= mu

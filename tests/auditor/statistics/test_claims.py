"""Claimed curves (`auditor.statistics.claims`): every accepted form, the chord rule, and the check against audits."""

import json

import numpy as np
import pytest
from scipy.stats import norm

from ndis import theory
from ndis.auditor import Scoring, audit
from ndis.auditor.reporting import html
from ndis.auditor.statistics import claims
from ndis.auditor.reporting.report import AuditReport, _plain
from ndis.core.curve import Curve

from ..conftest import GaussianMechanism

EPS = np.linspace(0, 2, 21)


def drs_gdp_delta(eps, mu):
    """Dong, Roth & Su (2022), Corollary 2.13, evaluated plainly with scipy (the independent reference)."""
    return norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)


def test_gaussian_dp_claim_is_the_dong_roth_su_curve():
    np.testing.assert_allclose(claims.gaussian_dp(0.7)(EPS), drs_gdp_delta(EPS, 0.7), rtol=1e-10)
    with pytest.raises(ValueError, match="mu must be finite and > 0"):
        claims.gaussian_dp(0)


def test_the_chord_between_claimed_points_is_implied_by_the_claim():
    # A true privacy curve (mu = 1) tabulated at 6 points: the chord in e^eps lies on or above the true
    # curve everywhere in between (convexity in e^eps), and equals it at the points.
    points = np.linspace(0, 2, 6)
    claim = claims.tabulated(points, theory.gaussian_delta(points, 1.0))
    fine = np.linspace(0, 2, 401)
    values = claim(fine)
    assert np.all(values >= theory.gaussian_delta(fine, 1.0) - 1e-15)
    np.testing.assert_allclose(claim(points), theory.gaussian_delta(points, 1.0), rtol=1e-14)
    # linear in e^eps between two points
    x0, x1 = np.exp(points[1]), np.exp(points[2])
    middle = np.log((x0 + x1) / 2)
    np.testing.assert_allclose(claim([middle]), np.mean(claim(points[1:3])), rtol=1e-14)
    assert np.all(np.isnan(claim([-0.1, 2.1])))  # nothing claimed outside the given range


@pytest.mark.parametrize("eps,delta,message", [
    ([0, 1], [0.1], "as many deltas as eps"),
    ([0, 1], [0.1, 1.5], r"lie in \[0, 1\]"),
    ([0, 0], [0.1, 0.05], "repeated"),
    ([0, np.nan], [0.1, 0.05], "finite"),
])
def test_bad_tabulated_claims_are_refused_with_one_line(eps, delta, message):
    with pytest.raises(ValueError, match=message):
        claims.tabulated(eps, delta)


def test_csv_claims_read_eps_and_delta_columns(tmp_path):
    path = tmp_path / "claim.csv"
    path.write_text("eps,delta,note\n1,0.2,3\n0,0.4,1\n")
    claim = claims.claimed_curve(str(path))
    np.testing.assert_allclose(claim([0.0, 1.0]), [0.4, 0.2])
    bad = tmp_path / "bad.csv"
    bad.write_text("epsilon,d\n0,0.4\n")
    with pytest.raises(ValueError, match="columns eps and delta"):
        claims.read_csv(bad)
    with pytest.raises(FileNotFoundError, match="not found"):
        claims.read_csv(tmp_path / "missing.csv")


def test_empty_claim_files_are_named(tmp_path):
    # before: an empty file gave an IndexError traceback from numpy.genfromtxt
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="claimed curve file .*empty.csv' is empty"):
        claims.read_csv(tmp_path / "empty.csv")
    (tmp_path / "header.csv").write_text("eps,delta\n")
    with pytest.raises(ValueError, match="claimed curve file .*header.csv': a claimed curve needs .*at least one"):
        claims.read_csv(tmp_path / "header.csv")


def test_callable_claims_are_held_to_the_rules_of_tabulated_ones():
    # before: a callable could claim delta = 2 or -0.5, which a tabulated claim may not, or return text
    with pytest.raises(ValueError, match=r"gives delta = 2 at eps = 0\.5; a claimed delta must lie in \[0, 1\]"):
        claims.claimed_curve(lambda e: np.where(np.asarray(e) >= 0.5, 2.0, 0.1))(EPS)
    with pytest.raises(ValueError, match="gives delta = -0.5"):
        claims.claimed_curve(lambda e: -0.5 + 0 * np.asarray(e))(EPS)
    with pytest.raises(TypeError, match="claimed curve <lambda> must return a number .* got str 'tight'"):
        claims.claimed_curve(lambda e: "tight")(EPS)
    partial = claims.claimed_curve(lambda e: np.where(np.asarray(e) < 1, 0.3, np.nan))(EPS)  # NaN: nothing claimed
    assert np.all(np.isnan(partial[EPS >= 1])) and np.all(partial[EPS < 1] == 0.3)


def test_theory_objects_callables_and_arrays_are_claims():
    pair = theory.GaussianPair([0.0, 0.0], np.eye(2), [1.0, 0.0], np.diag([1.0, 2.0]))
    both = np.maximum(pair.delta(EPS), pair.reverse().delta(EPS))
    np.testing.assert_allclose(claims.claimed_curve(pair)(EPS), both, rtol=1e-12)
    curve = Curve(EPS, both, both / 2)
    np.testing.assert_allclose(claims.claimed_curve(curve)(EPS), both, rtol=1e-12)
    scalar_only = claims.claimed_curve(lambda e: float(drs_gdp_delta(e, 1.0)))  # fails on arrays
    np.testing.assert_allclose(scalar_only(EPS), drs_gdp_delta(EPS, 1.0), rtol=1e-12)
    np.testing.assert_allclose(claims.claimed_curve((EPS, both))(EPS), both, rtol=1e-12)
    np.testing.assert_allclose(claims.claimed_curve(np.vstack([EPS, both]))(EPS), both, rtol=1e-12)
    with pytest.raises(TypeError, match="cannot read a claimed curve"):
        claims.claimed_curve(3.0)
    assert claims.is_point_claim((1, 1e-5)) and not claims.is_point_claim((EPS, both))


def test_dp_accounting_objects_are_claims():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant, privacy_loss_distribution

    truth = theory.gaussian_delta(EPS, 1.0)
    event = dp_accounting.GaussianDpEvent(1.0)
    accountant = pld_privacy_accountant.PLDAccountant().compose(event)
    for claim in (privacy_loss_distribution.from_gaussian_mechanism(1.0), accountant, event):
        values = claims.claimed_curve(claim)(EPS)
        # dp_accounting's PLD is pessimistic: at or above the exact curve, by its discretisation (1e-4 in loss)
        assert np.all(values >= truth - 1e-9) and np.all(values <= truth + 1e-3)
    with pytest.raises(TypeError, match="does not state a delta"):
        claims.claimed_curve(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE)


def test_tradeoff_of_a_curve_approaches_the_gdp_tradeoff():
    # The envelope of the (eps, delta(eps)) claims of the 1-GDP curve is G_1 (Dong, Roth & Su 2022,
    # Corollary 2.13 and Proposition 2.12); on a grid of 801 eps in [0, 8] it is within 0.01 below.
    a = np.linspace(0, 1, 101)
    exact = claims.gaussian_dp(1.0).tradeoff(a, EPS)
    np.testing.assert_allclose(exact, norm.cdf(norm.ppf(1 - a) - 1.0), atol=1e-12)
    envelope = claims.claimed_curve(lambda e: theory.gaussian_delta(e, 1.0)).tradeoff(a, np.linspace(0, 8, 801))
    assert np.all(envelope <= exact + 1e-12) and np.max(exact - envelope) < 0.01


def _curves(lower, estimate):
    return Curve(EPS, lower, lower * 0), Curve(EPS, estimate, estimate * 0)


def test_check_refutes_exactly_where_the_lower_bound_exceeds_the_claim():
    claimed = np.full(EPS.size, 0.3)
    lower = np.where((EPS > 0.45) & (EPS < 0.75), 0.35, 0.1)
    lower[12] = 0.42
    check = claims.check(claims.tabulated(EPS, claimed), *_curves(lower, lower + 0.05), alpha=0.05)
    assert check == "refuted" and check.confidence == 0.95
    np.testing.assert_array_equal(check.refuted, lower > 0.3)
    assert np.allclose(check.refuted_regions, [(0.5, 0.7), (1.2, 1.2)])
    assert check.excess == pytest.approx(0.12) and check.eps_excess == pytest.approx(1.2)
    np.testing.assert_allclose(check.gap, np.maximum(0.3 - lower - 0.05, 0))
    text = str(check)
    assert "[0.5, 0.7], 1.2" in text and "private" not in text


def test_check_is_not_refuted_where_nothing_is_claimed():
    lower = np.full(EPS.size, 0.5)
    claim = claims.tabulated([0.0, 0.5], [0.4, 0.3])  # claims nothing above eps = 0.5
    check = claims.check(claim, *_curves(lower, lower), alpha=0.05)
    assert check.refuted_regions == [(0.0, 0.5)]
    below = claims.check(claims.tabulated(EPS, np.full(EPS.size, 0.6)), *_curves(lower, lower), alpha=0.05)
    assert below == "not refuted" and np.isnan(below.excess) and "not a proof of privacy" in str(below)
    # through JSON (NaN as null) and back: the unclaimed points and the missing excess stay NaN
    back = claims.ClaimCheck(**json.loads(json.dumps(_plain(check.to_dict()))))
    np.testing.assert_array_equal(back.claimed, check.claimed)
    np.testing.assert_array_equal(back.refuted, check.refuted)
    assert np.isnan(claims.ClaimCheck(**json.loads(json.dumps(_plain(below.to_dict())))).excess)


def test_exceeds_finds_the_wrong_region_of_an_exact_curve_and_nothing_else():
    exact = theory.gaussian_delta(EPS, 1.0)
    wrong = (EPS >= 0.2 - 1e-9) & (EPS <= 0.4 + 1e-9)
    found = claims.exceeds(claims.tabulated(EPS, np.where(wrong, 0.7 * exact, exact)), EPS, exact)
    assert found["regions"] == [(0.2, 0.4)] and found["points"] == 3
    assert found["excess"] == pytest.approx(0.3 * exact[2])
    assert not claims.exceeds(claims.gaussian_dp(1.0), EPS, exact)["refuted"]  # equal up to rounding
    assert "does not exceed" in claims.describe_exceeds(claims.exceeds(claims.gaussian_dp(1.0), EPS, exact))


def test_audit_checks_a_gdp_claim_and_a_theory_curve_over_the_grid(tmp_path):
    # x + N(0, 1) on x in {0, 1}: mu = 1. 1e5 per side (5e4 held out): the lower bound is within about
    # 0.02 of the curve, far above the 0.6-GDP curve (0.38 vs 0.24 at eps = 0); the true curve stays
    # above the lower bound with probability >= 95% (here seed 0).
    mech = GaussianMechanism(1.0)
    run = dict(eps=EPS, n_samples=100_000, seed=0, scorer="quadratic", progress=False)
    wrong = audit(mech, np.array([[0.0]]), np.array([[1.0]]), claimed=claims.gaussian_dp(0.6), **run)
    assert wrong.claim == "refuted" and wrong.claim.refuted[0] and wrong.verdict is None
    true = theory.GaussianPair([0.0], [[1.0]], [1.0], [[1.0]])
    right = audit(mech, np.array([[0.0]]), np.array([[1.0]]), claimed=true, **run)
    assert right.claim == "not refuted" and np.all(right.delta_lower <= right.claim.claimed)
    # the report carries the check through JSON and CSV, the table, the plot and the HTML page
    back = AuditReport.from_json(wrong.to_json())
    np.testing.assert_array_equal(back.claim.refuted, wrong.claim.refuted)
    assert back.claim.excess == wrong.claim.excess and back.gdp.mu_lo == wrong.gdp.mu_lo
    frame = wrong.to_frame()
    np.testing.assert_allclose(frame["claimed"], claims.gaussian_dp(0.6)(EPS))
    assert frame["claim_refuted"].tolist() == wrong.claim.refuted.tolist()
    assert wrong.to_csv() == frame.to_csv(index=False)  # spectrum.csv without pandas, the same text
    assert "refuted" in wrong.table() and "0.6-GDP" in wrong.table()
    assert len(wrong.plot().axes) == 3
    page = wrong.to_html(tmp_path / "report.html")
    assert "Claimed curve: refuted" in page and "hint" in page and f'width="{14 * html.DPI}"' in page
    assert json.loads(wrong.to_json())["claim"]["label"] == "refuted"


def test_the_point_claim_path_is_unchanged_and_curves_need_the_threshold_method():
    mech = GaussianMechanism(1.0)
    report = audit(mech, np.array([[0.0]]), np.array([[1.0]]), eps=EPS, n_samples=20_000, seed=0,
                   scorer="quadratic", progress=False, claimed=(1.0, 1e-5))
    assert report.verdict == "violation" and report.claim is None
    with pytest.raises(ValueError, match="method='threshold' only"):
        audit(mech, np.array([[0.0]]), np.array([[1.0]]), eps=EPS, n_samples=20_000, seed=0,
              claimed=claims.gaussian_dp(1.0), progress=False, scorer=Scoring(method="eureka"))

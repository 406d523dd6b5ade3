"""assert_dp (ndis.testing.assertions): it returns the report when the claim stands, raises an
AssertionError carrying the report and the evidence when it is refuted, replays from the seed it
prints, takes (eps, delta), mu or a curve, and knows whether the pytest plugin counts it."""

import dataclasses
import math
import re
import warnings

import numpy as np
import pytest

from ndis.auditor import AuditReport, Execution
from ndis.auditor.statistics.claims import gaussian_dp
from ndis.testing import PrivacyViolation, UncountedAudit, assert_dp, assertions, family

#: These tests call assert_dp directly, outside the session's family of counted audits, on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::ndis.testing.assertions.UncountedAudit")


@pytest.fixture(autouse=True)
def outside_any_session(monkeypatch):
    """The audits here are not counted by this session's plugin (which counts tests/dogfood): no family
    is active unless a test activates one."""
    monkeypatch.setattr(family, "_ACTIVE", [])


def laplace(data, n, rng):
    """x + Lap(1) on one number: eps = |x - x'|-DP. The tests use the quadratic scorer, the fastest to
    train: the property tested is the assertion's, not the score's."""
    return np.asarray(data, float)[0] + rng.laplace(0.0, 1.0, (n, 1))


def test_a_claim_that_stands_returns_the_report():
    report = assert_dp(laplace, np.array([0.0]), np.array([1.0]), eps=2.0, n_samples=20_000, seed=0, scorer="quadratic")
    assert isinstance(report, AuditReport) and report.verdict != "violation"
    assert report.samples_used <= 20_000 and report.sequential["alpha"] == 0.05


def test_a_refuted_claim_raises_with_the_evidence_and_the_report():
    with pytest.raises(AssertionError) as caught:  # the inputs 0 and 3: true eps 3, claimed 1
        assert_dp(laplace, np.array([0.0]), np.array([3.0]), eps=1.0, n_samples=20_000, seed=1, scorer="quadratic")
    error = caught.value
    assert isinstance(error, PrivacyViolation) and isinstance(error.report, AuditReport)
    text = str(error)
    assert text.startswith("(1, 0)-DP of laplace is refuted at level 0.05")
    eps_lo = float(re.search(r"eps_lo = ([0-9.]+)", text).group(1))
    assert eps_lo == pytest.approx(error.report.eps_lo(0.0), rel=1e-3) and 1.0 < eps_lo <= 3.0
    assert "event: outputs with score" in text and "fresh outputs on D" in text
    assert "samples used: 10,000 per side of 20,000" in text
    assert "replay: assert_dp(..., alpha=0.05, seed=1)" in text
    # the seed printed replays the audit
    with pytest.raises(PrivacyViolation) as again:
        assert_dp(laplace, np.array([0.0]), np.array([3.0]), eps=1.0, n_samples=20_000, seed=1, scorer="quadratic")
    assert again.value.report.sequential["rounds"] == error.report.sequential["rounds"]


@pytest.fixture(scope="module")
def refuted() -> PrivacyViolation:
    """A refutation (the inputs 0 and 3: true eps 3, claimed 1), made once for the tests of its message."""
    with pytest.raises(PrivacyViolation) as caught:
        assert_dp(laplace, np.array([0.0]), np.array([3.0]), eps=1.0, n_samples=20_000, seed=1, scorer="quadratic")
    return caught.value


def _with(report, **sequential):
    """A copy of `report` whose sequential record has the given entries replaced."""
    return dataclasses.replace(report, sequential={**report.sequential, **sequential})


@pytest.mark.parametrize("level", [0.05, 0.05 / 3, 0.05 / 33, 1e-4 / 7])
def test_the_printed_p_value_of_a_refutation_is_never_above_the_printed_level(refuted, level):
    # a refutation's p-value is <= its level (tests/auditor/statistics/test_confirmation.py); printed,
    # p = level itself must not round above it (0.05 / 33 with 3 digits against 4: 0.00152 > 0.001515)
    for p in (level, level * (1 - 1e-9), level / 1.0004):
        first = assertions.message(_with(refuted.report, p_value=p), "(1, 0)-DP", level).splitlines()[0]
        printed_level, printed_p = (float(v) for v in re.search(r"at level (\S+) \(p = (\S+)\)", first).groups())
        assert printed_p <= printed_level


def test_the_message_says_up_to_eps_lo_when_eps_lo_itself_is_rejected(refuted):
    # every grid point up to and including a positive eps_lo is rejected (statistics.difference.eps_lo),
    # and so is the refuted claim's own eps: "for any eps <= eps_lo" there, "<" only when eps_lo = 0
    # and the test did not reach it (nothing rejected at 0)
    text = str(refuted)
    eps_lo = float(re.search(r"eps_lo = ([0-9.]+)", text).group(1))
    assert eps_lo > 0 and f"-DP for any eps <= {eps_lo:.4g};" in text
    c = refuted.report.sequential["rounds"][-1]["confirmation"]
    for event_eps, eps_lo, sign in ((0.0, 0.0, "<="), (1.0, 0.0, "<"), (1.0, 1.0, "<=")):
        rounds = [{"confirmation": {**c, "eps_lo": eps_lo, "event": {**c["event"], "eps": event_eps}}}]
        line = assertions.message(_with(refuted.report, rounds=rounds), "claim", 0.05).splitlines()[1]
        assert f"for any eps {sign} {eps_lo:.4g};" in line


def test_a_gaussian_dp_claim_and_a_curve_claim():
    def gaussian(data, n, rng):  # x + N(0, 1) on 0 and 2: exactly 2-GDP
        return np.asarray(data, float)[0] + rng.standard_normal((n, 1))

    pair = np.array([0.0]), np.array([2.0])
    with pytest.raises(PrivacyViolation, match="the claimed curve 0.5-GDP"):
        assert_dp(gaussian, *pair, claimed=gaussian_dp(0.5), n_samples=20_000, seed=2, grid=np.linspace(0, 2, 11),
                  scorer="quadratic")
    eps = np.linspace(0, 2, 11)
    report = assert_dp(gaussian, *pair, claimed=(eps, np.ones_like(eps) * 0.9), n_samples=20_000, seed=3, grid=eps,
                       scorer="quadratic")
    assert report.verdict != "violation"


def test_an_audit_too_long_for_a_test_is_refused_before_any_sample():
    # 10^10 samples per side on one worker: at least 2 x 10^4 s (core.budget), above MAX_SECONDS = 3600;
    # the refusal comes before the mechanism is called, and max_seconds=math.inf lifts it
    def never(data, n, rng):
        raise RuntimeError("sampled")

    pair = np.array([0.0]), np.array([1.0])
    with pytest.raises(ValueError, match=r"^this audit's 10,000,000,000 samples per side would take at least "
                                         r"5.56 h to draw .*max_seconds=3600: use fewer samples"):
        assert_dp(never, *pair, eps=1.0, n_samples=10**10, execution=Execution(n_jobs=1))
    with pytest.raises(ValueError, match="max_seconds=60:"):
        assert_dp(never, *pair, eps=1.0, n_samples=10**8, execution=Execution(n_jobs=1, max_seconds=60))
    with pytest.raises(RuntimeError, match="sampled"):
        assert_dp(never, *pair, eps=1.0, n_samples=10**10, execution=Execution(n_jobs=1, max_seconds=math.inf))


@pytest.mark.parametrize("claim, match", [({}, "got neither"), ({"eps": 1.0, "claimed": gaussian_dp(1.0)}, "not both"),
                                          ({"claimed": gaussian_dp(1.0), "delta": 1e-5}, "delta goes with eps"),
                                          ({"eps": -1.0}, "claimed eps"), ({"eps": 1.0, "delta": 1.5}, "claimed delta")])
def test_malformed_claims_are_refused(claim, match):
    with pytest.raises(ValueError, match=match):
        assert_dp(laplace, np.array([0.0]), np.array([1.0]), **claim)


def test_inside_a_counted_test_the_family_sets_level_and_seed():
    f = family.Family(0.05, 3, "--ndis-seed", {"t::a": 1})
    token = f.enter("t::a")
    try:
        with pytest.raises(ValueError, match=r"more than this test's share .* = 0.05: remove alpha= .*--ndis-alpha"):
            assert_dp(laplace, np.array([0.0]), np.array([1.0]), eps=2.0, alpha=0.06)
        report = assert_dp(laplace, np.array([0.0]), np.array([1.0]), eps=2.0, n_samples=20_000, scorer="quadratic")
    finally:
        f.leave(token)
    assert report.seed["entropy"] == family.test_seed(3, "t::a", 0)
    assert report.sequential["alpha"] == pytest.approx(0.05)
    (record,) = f.records
    assert record["test"] == "t::a" and record["failed"] is False and record["samples_used"] <= 20_000


def test_an_audit_outside_the_counted_tests_of_a_session_warns():
    f = family.Family(0.05, 3, "--ndis-seed", {"t::a": 1})
    f.activate()
    try:
        with pytest.warns(UncountedAudit, match="dp_audit"):
            assert_dp(laplace, np.array([0.0]), np.array([1.0]), eps=2.0, n_samples=4_000, seed=4, scorer="quadratic")
    finally:
        f.deactivate()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UncountedAudit)
        assert_dp(laplace, np.array([0.0]), np.array([1.0]), eps=2.0, n_samples=4_000, seed=4, scorer="quadratic")

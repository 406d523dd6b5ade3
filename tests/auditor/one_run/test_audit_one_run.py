"""`audit_one_run` and its report: one clear line for each bad input, a headline that never rests on a
rejected assumption nor on the rows' order, the other estimators beside it on request, and JSON /
CSV / PNG / HTML files written as a set, with user text escaped."""

import json

import numpy as np
import pandas as pd
import pytest

import ndis
from ndis.auditor.one_run import OneRunReport, audit_one_run, idealized


@pytest.fixture(scope="module")
def scores():
    return idealized.draw(400, 4.0, 1e-5, np.random.default_rng(7))


@pytest.mark.parametrize("change,message", [
    (lambda s, i: (np.where(np.arange(s.size) == 3, np.nan, s), i), r"1 of the 400 canary scores are NaN .*canaries 3"),
    (lambda s, i: (s, i[:-1]), "included has 399 entries but there are 400 scores"),
    (lambda s, i: (s, np.where(i, 2, 0)), r"booleans or 0/1 .*190 of the 400 entries do not \(canaries 3, 4, "),
    (lambda s, i: (s, np.where(np.arange(s.size) == 5, np.nan, i)), r"booleans or 0/1 .*canaries 5\)"),
    (lambda s, i: (np.ones_like(s), i), "all 400 canary scores equal 1: the scores do not depend on the canaries"),
    (lambda s, i: (s, np.ones_like(i)), "all 400 canaries are included"),
    (lambda s, i: (s[:5], [1, 0, 1, 0, 1]), "5 canaries are too few for any bound .*steinke: .*gaussian: the Gaussian "
                                            "bound needs at least 3"),
    (lambda s, i: (s.reshape(20, 20), i), "must be 1-D"),
])
def test_bad_input_is_one_clear_line(scores, change, message):
    with pytest.raises(ValueError, match=message) as caught:
        audit_one_run(*change(*scores))
    assert "\n" not in str(caught.value)


def test_too_few_for_the_chosen_method_names_another():
    s, i = np.arange(7.0), np.array([1, 0, 1, 0, 1, 0, 1])
    with pytest.raises(ValueError, match="7 canaries: a guess-based bound certifies nothing on 7 canaries .*it needs "
                                         "at least 8: use more canaries, or method='gaussian'"):
        audit_one_run(s, i, method="steinke")


def test_only_the_asked_estimator_is_computed_unless_compared(scores):
    assert set(audit_one_run(*scores).estimates) == {"steinke"}
    assert set(audit_one_run(*scores, method="gaussian").estimates) == {"gaussian"}   # certified: no fallback needed
    assert set(audit_one_run(*scores, compare=True).estimates) == {"steinke", "fdp", "gaussian"}


def test_every_estimator_beside_the_claim_and_idealized_bounds(scores):
    report = ndis.audit_one_run(*scores, delta=1e-5, method="steinke", claimed_eps=4.0, idealized_runs=5,
                                compare=True)
    assert report.headline == "steinke" and report.fallback is None
    assert report.eps_lo == report.estimates["steinke"].eps_lo
    assert all(e.eps_lo < 4.0 and e.certified for e in report.estimates.values())   # this draw: all three cover
    assert report.refutes_claim() is False
    assert report.idealized["median"].keys() == report.estimates.keys()
    assert report.ceiling("gaussian") == np.inf and 0 < report.ceiling("steinke") <= report.ceiling("fdp")
    text = report.table()
    assert "claimed eps 4" in text and "gaussian model check: not rejected" in text
    assert "the claimed eps 4 is not refuted" in text


def test_a_claim_below_the_evidence_is_refuted(scores):
    report = audit_one_run(*scores, method="gaussian", claimed_eps=0.5, idealized_runs=3)
    assert report.headline == "gaussian" and report.refutes_claim() and "REFUTED" in report.table()


def test_a_rejected_model_never_makes_the_headline():
    # Laplace-mechanism scores at eps 2: the Gaussian bound overclaims (6.2 here) and its checks reject it
    rng = np.random.default_rng(1)
    included = rng.random(1000) < 0.5
    scores = rng.laplace(size=1000) / 2.0 + included
    report = audit_one_run(scores, included, method="gaussian", claimed_eps=2.0, idealized_runs=3)
    rejected = report.estimates["gaussian"]
    assert rejected.eps_lo > 2.0 and not rejected.certified and "Shapiro-Wilk" in rejected.rejected
    assert report.headline == "steinke" and report.eps_lo <= 2.0 and report.refutes_claim() is False
    assert report.refutes_claim("gaussian") is None                # a rejected estimate refutes nothing
    assert report.fallback.startswith("gaussian is not certified: model rejected")
    assert "model rejected; not certified" in report.table() and "no: model rejected" in report.to_html()


def test_tied_scores_in_a_sorted_file_certify_nothing():
    # the reproduction: binary scores carrying no information, rows sorted by the coin flips;
    # ties broken by row order certified steinke 3.83 and fdp 6.13
    s = np.random.default_rng(0).integers(0, 2, 1000).astype(float)
    report = ndis.audit_one_run(s, np.r_[np.zeros(500), np.ones(500)], compare=True)
    assert {name: e.eps_lo for name, e in report.estimates.items()} == {"steinke": 0.0, "fdp": 0.0, "gaussian": 0.0}


def test_separated_scores_without_spread_give_a_bound_and_a_reason():
    # the reproduction: scores equal to the coin flips (randomized response at a huge eps);
    # gaussian.fit divided by a zero spread and took every estimator down
    included = np.random.default_rng(0).random(1000) < 0.5
    report = ndis.audit_one_run(included.astype(float), included, method="gaussian", compare=True)
    assert report.headline == "steinke" and report.eps_lo > 4.0
    assert "do not vary within either group" in report.not_computed["gaussian"]
    assert set(report.estimates) == {"steinke", "fdp"} and "gaussian gives no bound" in report.fallback


def test_pure_dp_is_audited_at_delta_zero(scores):
    report = audit_one_run(*scores, delta=0.0, claimed_eps=1.0, compare=True)
    assert report.delta == 0.0 and report.eps_lo > 1.0 and report.refutes_claim()
    assert "delta > 0" in report.not_computed["gaussian"] and report.idealized == {}


def test_files_round_trip_and_escape_user_text(scores, tmp_path):
    report = audit_one_run(*scores, claimed_eps=4.0, idealized_runs=3, compare=True)
    report.mechanism = "<script>alert(1)</script> $x^2$"
    written = report.write(tmp_path)
    assert [p.name for p in written] == ["report.json", "estimates.csv", "scores.csv", "one-run.png", "report.html"]
    back = OneRunReport.from_json(tmp_path / "report.json")
    assert back.table() == report.table() and back.eps_lo == report.eps_lo
    np.testing.assert_array_equal(back.scores, scores[0])
    frame = pd.read_csv(tmp_path / "estimates.csv")
    assert frame["method"].tolist() == ["steinke", "fdp", "gaussian"]
    canaries = pd.read_csv(tmp_path / "scores.csv")
    np.testing.assert_array_equal(canaries["score"], scores[0])
    np.testing.assert_array_equal(canaries["included"], scores[1].astype(int))
    page = (tmp_path / "report.html").read_text()
    assert "<script" not in page and "&lt;script&gt;" in page and "data:image/png;base64," in page
    assert json.loads((tmp_path / "report.json").read_text())["claimed_eps"] == 4.0
    assert not list(tmp_path.glob(".*.tmp"))            # no temporary file left behind


def test_the_legends_sit_outside_the_panels(scores):
    report = audit_one_run(*scores, claimed_eps=4.0, idealized_runs=3, compare=True)
    figure = report.plot()
    figure.canvas.draw()
    for axes in figure.axes:
        legend = axes.get_legend().get_window_extent()
        assert legend.y0 >= axes.get_window_extent().y1          # above the panel, never over its data

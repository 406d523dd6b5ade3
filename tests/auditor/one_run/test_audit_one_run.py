"""`audit_one_run` and its report: one clear line for each bad input, every estimator beside the claim
and the idealized bounds, and JSON / CSV / PNG / HTML files written whole, with user text escaped."""

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
    (lambda s, i: (s, np.where(i, 2, 0)), "booleans or 0/1"),
    (lambda s, i: (np.ones_like(s), i), "all 400 canary scores equal 1: the scores do not depend on the canaries"),
    (lambda s, i: (s, np.ones_like(i)), "all 400 canaries are included"),
    (lambda s, i: (s[:5], [1, 0, 1, 0, 1]), "5 canaries are too few for any bound"),
    (lambda s, i: (s.reshape(20, 20), i), "must be 1-D"),
])
def test_bad_input_is_one_clear_line(scores, change, message):
    with pytest.raises(ValueError, match=message) as caught:
        audit_one_run(*change(*scores))
    assert "\n" not in str(caught.value)


def test_too_few_for_the_chosen_method_names_another():
    s, i = np.arange(7.0), np.array([1, 0, 1, 0, 1, 0, 1])
    with pytest.raises(ValueError, match="7 canaries: a guess-based bound certifies nothing on fewer than 8 canaries.*"
                                         "method='gaussian'"):
        audit_one_run(s, i, method="steinke")


def test_every_estimator_beside_the_claim_and_idealized_bounds(scores):
    report = ndis.audit_one_run(*scores, delta=1e-5, method="steinke", claimed_eps=4.0, idealized_runs=5)
    assert report.eps_lo == report.estimates["steinke"].eps_lo
    assert set(report.estimates) == {"steinke", "fdp", "gaussian"}
    assert all(e.eps_lo < 4.0 for e in report.estimates.values())      # this draw is covered by all three
    assert report.refutes_claim() is False
    assert report.idealized["median"].keys() == report.estimates.keys()
    assert report.idealized["ceiling"]["gaussian"] == np.inf
    assert report.idealized["ceiling"]["steinke"] < report.idealized["ceiling"]["fdp"]
    text = report.table()
    assert "claimed eps 4" in text and "gaussian model check: not rejected" in text


def test_a_claim_below_the_evidence_is_refuted(scores):
    report = audit_one_run(*scores, claimed_eps=0.5, idealized_runs=3)
    assert report.refutes_claim("gaussian") and "YES" in report.table()


def test_files_round_trip_and_escape_user_text(scores, tmp_path):
    report = audit_one_run(*scores, claimed_eps=4.0, idealized_runs=3)
    report.info["mechanism"] = "<script>alert(1)</script> $x^2$"
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

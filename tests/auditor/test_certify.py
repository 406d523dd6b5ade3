"""The certified epsilon eps_lo (auditor.certify): validity on known truth, power on a strong
signal, pure-DP claims, its place in every report format, and seed=None re-runs."""

import json

import numpy as np
import pytest

from ndis import mechanisms
from ndis.auditor import audit, certify, histogram, spectrum
from ndis.auditor.report import AuditReport
from ndis.cli import main, parse_claimed
from ndis.mechanisms import zoo


def _laplace_scores(rng, n, shift, scale):
    """The optimal score of Lap(0, b) against Lap(shift, b) (the log-likelihood ratio), from both laws;
    rounded, since its floating-point rounding error itself differs between the laws."""
    def score(x):
        return np.round((np.abs(x - shift) - np.abs(x)) / scale, 9)
    return score(rng.laplace(0, scale, n)), score(rng.laplace(shift, scale, n))


def test_eps_lo_never_exceeds_the_true_epsilon_on_laplace():
    # Lap(0, 1) vs Lap(1, 1): true eps = 1 at delta = 0; below it at delta > 0.
    for seed in range(10):
        rng = np.random.default_rng(seed)
        valid = _laplace_scores(rng, 5_000, 1.0, 1.0)
        held = histogram.ScoreHistogram.from_scores(*_laplace_scores(rng, 20_000, 1.0, 1.0), valid)
        roc = spectrum.empirical_roc(*valid)
        certificate = certify.certify(roc, held, 0.0, 0.05)
        assert 0.5 < certificate.eps_lo <= 1.0
        assert certify.certify(roc, held, 1e-3, 0.05).eps_lo <= certificate.eps_lo


def test_nothing_is_certified_for_identical_laws():
    rng = np.random.default_rng(0)
    valid = rng.normal(size=2_000), rng.normal(size=2_000)
    held = histogram.ScoreHistogram.from_scores(rng.normal(size=5_000), rng.normal(size=5_000), valid)
    certificate = certify.certify(spectrum.empirical_roc(*valid), held, 0.0, 0.05)
    assert certificate.eps_lo < 0.2
    with pytest.raises(ValueError, match="delta"):
        certify.certify(spectrum.empirical_roc(*valid), held, 1.0, 0.05)


def test_eps_lo_is_close_to_a_large_true_epsilon():
    # NoisyHist2 at eps0 = 0.1 has true eps 10: with 10^5 held-out samples per side the best event
    # {x <= q} has Q(S) = e^-10 / 2, about 2 held-out samples, so eps_lo is near log(0.5 n / 4).
    mech = mechanisms.get("zoo-histogram-eps", eps0=0.1)
    D, D_prime = zoo.patterns(5)["one above"]
    report = audit(mech, D, D_prime, eps=[0.0, 1.0], n_samples=200_000, seed=0, scorer="quadratic",
                   progress=False, claimed=(0.1, 0))
    truth = mech.exact_epsilon(D, D_prime)
    assert truth == pytest.approx(10.0)
    assert 8.0 < report.eps_lo(0) <= truth and report.eps_lo(1e-5) <= truth
    assert report.verdict == "violation" and report.verdict.delta == 0 and report.verdict.confidence > 0.999
    assert report.info.get("samples_needed") is None


def test_a_pure_dp_claim_of_a_correct_mechanism_is_not_violated():
    mech = mechanisms.get("zoo-laplace", eps0=0.5)
    D, D_prime = zoo.patterns(5)["one above"]
    report = audit(mech, D, D_prime, eps=[0.0, 0.5], n_samples=20_000, seed=1, scorer="quadratic", progress=False,
                   claimed=(0.5, 0))
    assert report.verdict == "no violation found" and report.verdict.samples_needed is None
    assert report.eps_lo(0) <= 0.5
    assert "not a proof of privacy" in str(report.verdict)


def test_eps_lo_is_in_every_report_format(tmp_path):
    mech = mechanisms.get("zoo-laplace-half", eps0=0.5)
    D, D_prime = zoo.patterns(5)["one above"]
    report = audit(mech, D, D_prime, eps=[0.0, 0.5], n_samples=10_000, seed=3, scorer="quadratic", progress=False,
                   claimed=(0.5, 1e-3))
    assert [c.delta for c in report.certificates] == [0.0, 1e-5, 1e-3]
    assert report.eps_lo(0) > 0.5  # the true eps is 1
    later = report.eps_lo(0.1)  # certified after the audit, from its evidence (validation ROC, held-out counts)
    assert later <= report.eps_lo(0) and later == certify.certify(report.evidence.roc_valid, report.evidence.held,
                                                                  0.1, 0.05).eps_lo
    with pytest.raises(ValueError, match="delta=0.1.*not saved in JSON"):
        AuditReport.from_json(report.to_json()).eps_lo(0.1)
    data = json.loads(report.to_json())
    assert [c["eps_lo"] for c in data["eps_lo"]] == [c.eps_lo for c in report.certificates]
    again = AuditReport.from_json(report.to_json())
    assert again.eps_lo(1e-3) == report.eps_lo(1e-3)
    assert "not (eps, 0)-DP for any eps < eps_lo" in report.table() and "at 95% confidence" in report.table()
    assert "Certified epsilon" in report.to_html() and "eps_lo" in report._repr_html_()
    labels = [t.get_text() for t in report.plot().axes[0].get_legend().get_texts()]
    assert any(label.startswith("eps_lo at delta=0") for label in labels)


def test_seed_none_records_entropy_that_reruns_the_audit_exactly(gaussian_batched):
    first = audit(gaussian_batched, np.array([1.0]), np.array([0.0]), eps=[0.0, 1.0], n_samples=2_000,
                  scorer="quadratic", progress=False)
    entropy = first.info["seed"]["entropy"]
    again = audit(gaussian_batched, np.array([1.0]), np.array([0.0]), eps=[0.0, 1.0], n_samples=2_000,
                  scorer="quadratic", progress=False, seed=entropy)
    np.testing.assert_array_equal(first.delta, again.delta)
    assert first.eps_lo(0) == again.eps_lo(0)
    assert f"seed={entropy}" in first.table()


def test_the_cli_takes_a_pure_dp_claim_and_prints_eps_lo(tmp_path, capsys):
    assert parse_claimed("0.7,0") == (0.7, 0.0)
    argv = ["audit", "gaussian", "--param", "sigma=1", "--data", "synthetic:n=20,d=2,seed=0", "--neighbor",
            "remove:0", "--samples", "4000", "--eps", "0:1:3", "--scorer", "quadratic", "--claimed", "0.7,0",
            "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "(0.7, 0)" in out and "eps_lo" in out and "re-runs this audit exactly" in out
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["verdict"]["delta"] == 0 and len(saved["eps_lo"]) == 2

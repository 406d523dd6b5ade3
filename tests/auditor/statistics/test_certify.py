"""The certified epsilon eps_lo (auditor.statistics.certify): validity on known truth, power on a strong
signal, pure-DP claims, its place in every report format, and seed=None re-runs."""

import json

import numpy as np
import pytest
from scipy import stats

from ndis import mechanisms
from ndis.auditor import audit
from ndis.auditor.statistics import bounds, certify, histogram, spectrum
from ndis.auditor.reporting.report import AuditReport
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


def _atoms(rng, n, probabilities):
    """n scores drawn from a discrete law on the atoms 0, 1, ... (score = atom index)."""
    return np.sort(rng.choice(len(probabilities), size=n, p=probabilities).astype(float))


def test_eps_lo_covers_the_truth_on_a_discrete_law():
    # P = (0.5, 0.5), Q = (0.5 e^-0.2, 1 - 0.5 e^-0.2): true eps = 0.2 (atom 1, forward), attained by a
    # large event, so eps_lo is often near the truth. At alpha = 0.5 (the most sensitive setting) at
    # most alpha of the runs may exceed the truth; 400 runs: tolerance 3 binomial standard deviations.
    P = np.array([0.5, 0.5])
    Q = np.array([1 - 0.5 * np.exp(-0.2), 0.5 * np.exp(-0.2)])
    alpha, runs, above = 0.5, 400, 0
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        valid = _atoms(rng, 1_000, P), _atoms(rng, 1_000, Q)
        held = histogram.ScoreHistogram.from_scores(_atoms(rng, 4_000, P), _atoms(rng, 4_000, Q), valid)
        certificate = certify.certify(spectrum.empirical_roc(*valid), held, 0.0, alpha, n_select=(1_000, 1_000),
                                      seed=seed)
        above += certificate.eps_lo > 0.2
    assert above <= alpha * runs + 3 * np.sqrt(runs * alpha * (1 - alpha))


def test_the_randomized_count_is_exactly_binomial():
    # Scores on atoms 0, 1, 2 with probabilities (0.5, 0.3, 0.2); the event {score >= 2} plus each
    # score 1 with probability 0.4 has probability 0.2 + 0.4 * 0.3 = 0.32, so over fresh data and
    # draws its count in n = 30 is Binomial(30, 0.32). A deterministic rounding gamma * k_band would
    # have the wrong variance (0.2 x 0.8 + ... instead of 0.32 x 0.68 per draw) and fail the test.
    n, reps = 30, 20_000
    rng = np.random.default_rng(5)
    scores = [_atoms(rng, n, [0.5, 0.3, 0.2]) for _ in range(reps)]
    counts = np.array([certify.randomized_count(np.sum(s >= 1), np.sum(s >= 2), 0.4, rng) for s in scores])
    observed = np.bincount(counts, minlength=n + 1)
    expected = reps * stats.binom.pmf(np.arange(n + 1), n, 0.32)
    keep = expected >= 5  # the chi-square approximation's rule of thumb; pooled tails
    observed = np.append(observed[keep], observed[~keep].sum())
    expected = np.append(expected[keep], expected[~keep].sum())
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    assert certify.randomized_count(3, 1, 1.0, rng) == 3


def test_a_wide_event_is_chosen_over_lucky_tail_events():
    # Lap(0, 10) vs Lap(1, 10), 5 noise coordinates, the exact score: the log-likelihood ratio is
    # constant (eps = 0.1) on the tail halves, where the widest event gives eps_lo near 0.1; the
    # ~10^5 tail thresholds, some with a lucky validation ratio, must not win (they gave eps_lo = 0).
    rng = np.random.default_rng(0)
    valid = _laplace_scores(rng, 100_000, 1.0, 10.0)
    held = histogram.ScoreHistogram.from_scores(*_laplace_scores(rng, 500_000, 1.0, 10.0), valid)
    certificate = certify.certify(spectrum.empirical_roc(*valid), held, 0.0, 0.05, n_select=(100_000, 100_000),
                                  seed=0)
    assert 0.09 < certificate.eps_lo <= 0.1
    assert certificate.p_lower > 0.3


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
    assert report.samples_needed is None


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
    e = report.evidence
    assert later <= report.eps_lo(0) and later == report.eps_lo(0.1) == certify.certify(
        e.roc_valid, e.held, 0.1, 0.05, n_select=e.n_valid, seed=e.seed).eps_lo
    with pytest.raises(ValueError, match="delta=0.1.*not saved in JSON"):
        AuditReport.from_json(report.to_json()).eps_lo(0.1)
    data = json.loads(report.to_json())
    assert [c["eps_lo"] for c in data["eps_lo"]] == [c.eps_lo for c in report.certificates]
    again = AuditReport.from_json(report.to_json())
    assert again.eps_lo(1e-3) == report.eps_lo(1e-3)
    assert "not (eps, 0)-DP for any eps < eps_lo" in report.table() and "at 95% confidence" in report.table()
    assert "Certified epsilon" in report.to_html() and "eps_lo" in report._repr_html_()
    labels = [t.get_text() for t in report.plot().legends[0].get_texts()]
    assert any(label.startswith("eps_lo at delta=0") for label in labels)


def test_seed_none_records_entropy_that_reruns_the_audit_exactly(gaussian_batched):
    first = audit(gaussian_batched, np.array([1.0]), np.array([0.0]), eps=[0.0, 1.0], n_samples=2_000,
                  scorer="quadratic", progress=False)
    entropy = first.seed["entropy"]
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


def _select_event_every_band(roc, n_valid, n_held, delta, level):
    """`certify.select_event` without pruning: every (direction, gamma, band), the first best wins."""
    z = stats.norm.isf(level)
    best = (None, 0, 1.0, -np.inf)
    for direction in spectrum.DIRECTIONS:
        num, den = spectrum._event_probabilities(roc, direction)
        order = slice(None) if direction == "forward" else slice(None, None, -1)
        (nv_num, nv_den), (nh_num, nh_den) = n_valid[order], n_held[order]
        for gamma in certify.GAMMAS:
            num_g = num[:-1] + gamma * (num[1:] - num[:-1])
            den_g = den[:-1] + gamma * (den[1:] - den[:-1])
            low = bounds.wilson_lower(bounds.wilson_lower(num_g, nv_num, certify.Z_VALID), nh_num, z)
            up = bounds.wilson_upper(bounds.wilson_upper(den_g, nv_den, certify.Z_VALID), nh_den, z)
            with np.errstate(divide="ignore", invalid="ignore"):
                predicted = np.where(low > delta, np.log(low - delta) - np.log(up), -np.inf)
            k = int(np.argmax(predicted))
            if predicted[k] > best[3]:
                best = (direction, k + 1, float(gamma), float(predicted[k]))
    return best if np.isfinite(best[3]) else (None, 0, 1.0, -np.inf)


@pytest.mark.parametrize("outputs", ["continuous", "discrete", "equal"])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.3])
def test_select_event_searches_the_bands_that_can_win_and_finds_the_same_event(outputs, delta):
    """Searching only the bands whose ceiling reaches the best plain level set gives the very event
    (direction, band, gamma, prediction) of the search over every band and gamma."""
    rng = np.random.default_rng(11)
    n = 4_000
    p, q = {"continuous": (rng.normal(0.4, 1, n), rng.normal(0, 1, n)),
            "discrete": (rng.integers(0, 6, n) + (rng.random(n) < 0.1), rng.integers(0, 6, n)),
            "equal": (rng.normal(0, 1, n), rng.normal(0, 1, n))}[outputs]
    roc = spectrum.empirical_roc(p, q)
    for n_held in ((n, n), (10**6, 10**6)):
        assert certify.select_event(roc, (n, n), n_held, delta, 0.025) == _select_event_every_band(
            roc, (n, n), n_held, delta, 0.025)

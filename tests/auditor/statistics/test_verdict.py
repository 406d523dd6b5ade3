"""The verdict's test: its p-value, the "suspicious" qualifier as a test at a stated level, and the
wording of every label (what the confidence belongs to)."""

import dataclasses
import math

import numpy as np
import pytest

from ndis.auditor.statistics import verdict
from ndis.auditor.statistics.histogram import ScoreHistogram
from ndis.auditor.statistics.spectrum import empirical_roc


def test_the_p_value_is_the_smallest_rejecting_level():
    for threshold in (1e-12, 0.003, 0.05, 0.123, 0.9):
        p = verdict._p_value(lambda level: level >= threshold, 0.05)
        # log10 p to 2e-11 below alpha, to 2e-6 above; rounded up to a rejecting level, and <= alpha
        # exactly when it rejects at alpha (alpha itself, not 10**log10(0.05), one unit in the last place less)
        assert p == pytest.approx(threshold, rel=1e-5 if threshold > 0.05 else 1e-9)
        assert p >= threshold and (p <= 0.05) == (threshold <= 0.05)
    assert verdict._p_value(lambda level: False, 0.05) == 1.0
    assert verdict._p_value(lambda level: True, 0.05) == pytest.approx(1e-20, rel=1e-9)


def _two_point_verdicts(claimed_delta, runs, n=2_000, eps=1.0, q=0.1, delta=0.1):
    """Verdicts on a score with two values: P(s = 1) - e^eps Q(s = 1) = `delta`, the pair's delta(eps)
    (the other events are negative in both directions); validation and held out n per side each."""
    p = delta + math.exp(eps) * q
    found = []
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        vp, vq, hp, hq = ((rng.random(n) < prob).astype(float) for prob in (p, q, p, q))
        held = ScoreHistogram.from_scores(hp, hq, [vp, vq])
        found.append(verdict.judge((eps, claimed_delta), empirical_roc(vp, vq), held, 0.05, n_select=(n, n)))
    return found


def test_suspicious_is_a_test_at_its_stated_level_and_has_power():
    runs = 80
    # At the claim (delta(1) = 0.1 = delta0, the boundary of H0): a valid p-value has P(p <= u) <= u.
    # Tolerance: 4 binomial standard errors of `runs` trials at rate u.
    at_claim = _two_point_verdicts(0.1, runs)
    for u in (0.05, verdict.SUSPICION_LEVEL, 0.5):
        rate = np.mean([v.p_value <= u for v in at_claim])
        assert rate <= u + 4 * math.sqrt(u * (1 - u) / runs), (u, rate)
    # A claim of 0 against delta(1) = 0.1: the plug-in estimate is 4.7 standard errors above 0 at n = 2000
    # (sd 0.021), so the bound at level 0.2 (each side at 0.05) is positive in nearly every run.
    violated = _two_point_verdicts(0.0, 30)
    assert np.mean([v.p_value <= verdict.SUSPICION_LEVEL for v in violated]) >= 0.8
    for v in at_claim + violated:  # the labels agree with the p-value
        assert (v == "violation") == (v.p_value <= v.alpha)
        assert v.suspicious == (v.alpha < v.p_value <= verdict.SUSPICION_LEVEL)


def test_what_each_label_says():
    base = dict(eps=0.2, delta=1e-3, confidence=0.95, lower_bound=0.0, estimate=1.65e-3, floor=1.3e-5,
                direction="forward", alpha=0.05, estimate_se=3e-4)
    quiet = verdict.Verdict("no violation found", **base, p_value=0.62)
    text = str(quiet)
    assert not quiet.suspicious and "confidence" not in text and "p = 0.62" in text
    assert text.startswith("no violation found of (0.2, 0.001): the chosen event's 95% lower bound on delta(0.2) is "
                           "0, not above the claimed 0.001")
    assert "chosen event's floor 1.3e-05" in text and text.endswith("not a proof of privacy")

    # the printed p-value stays on its side of alpha: not "p = 0.05 <= 0.2 but > alpha = 0.05"
    assert "(p = 0.0502 <= 0.2 but > alpha = 0.05;" in str(dataclasses.replace(quiet, p_value=0.0502))
    assert "(p = 0.05000001 <= 0.2" in str(dataclasses.replace(quiet, p_value=0.05000001))

    hint = dataclasses.replace(quiet, p_value=0.11)
    z = 2.2414 + 0.8416                      # z_{alpha/4} + z_{0.2}
    n = z * z * (1 + math.exp(0.4)) / (4 * 0.65e-3 ** 2)
    assert hint.suspicious and hint.samples_to_decide == pytest.approx(n, rel=1e-3)
    assert str(hint).startswith("suspicious at level 0.2 (p = 0.11 <= 0.2 but > alpha = 0.05; a mechanism that "
                                "meets its claim is so labelled in at most 20% of audits); no violation found of")
    assert f"about {hint.samples_to_decide:,} held-out samples per side would decide it" in str(hint)
    below = dataclasses.replace(hint, estimate=0.9e-3)  # rejected at 0.2, estimate not above: no sample size
    assert below.suspicious and below.samples_to_decide is None

    old = dataclasses.replace(quiet, p_value=None)  # a report written before the p-value was recorded
    assert not old.suspicious and "p =" not in str(old)
    assert verdict.Verdict(**{k: v for k, v in old.to_dict().items() if k != "p_value"}) == old

    unresolved = verdict.Verdict("inconclusive", 1.0, 1e-5, 0.95, 0.0, 3e-6, 4.2e-5, "forward", 0.05,
                                 samples_needed=5_000_000, estimate_se=2e-6, p_value=0.7)
    assert str(unresolved).startswith("inconclusive about (1, 1e-05): the claimed 1e-05 is below the chosen "
                                      "event's floor 4.2e-05")
    assert "5,000,000 samples per side would make delta=1e-05 detectable" in str(unresolved)
    pure = verdict.Verdict("inconclusive", 1.0, 0.0, 0.95, 0.0, 0.0, 1.0, "forward", 0.05, p_value=1.0)
    assert "can certify no delta(1) > 0" in str(pure)

    refuted = verdict.Verdict("violation", 1.0, 0.0, 1 - 3e-9, 0.37, 0.39, 8e-4, "reverse", 0.05, p_value=3e-9)
    assert str(refuted) == ("violation of (1, 0): the chosen event's 95% lower bound on delta(1) is 0.37 > the "
                            "claimed 0 (p = 3e-09; reverse direction)")
    assert "p <= 1e-20" in str(dataclasses.replace(refuted, p_value=1e-20))

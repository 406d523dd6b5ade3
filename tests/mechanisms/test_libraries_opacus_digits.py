"""DP-SGD on the digits with Dirac canaries (mechanisms.libraries.opacus_digits): an included canary
moves its blank-pixel weight by exactly its clipped norm per step (unclipped with the planted bug),
the rest is Opacus's Gaussian noise, and the claim is Opacus's accountant for that training.

Tolerances: KS p >= 1e-4 and moments within 4 standard errors (checks.py); float32 training, so
noiseless moves agree to 1e-5 relative.
"""

import numpy as np
import pytest
from scipy import stats

pytest.importorskip("opacus")

from ndis import theory  # noqa: E402
from ndis.auditor.one_run.canaries import DiracCanaries  # noqa: E402
from ndis.mechanisms.libraries.opacus_digits import DigitsDPSGD, canary_score, load_digits_data  # noqa: E402

from .checks import KS_PVALUE, N_SE  # noqa: E402

X, Y = load_digits_data()
SMALL = (X[:300], Y[:300])


@pytest.mark.parametrize("bug,moved", [(None, 1.0), ("no-clip", 3.0)])
def test_an_included_canary_moves_by_its_clipped_norm_each_step(bug, moved):
    lr, steps = 0.5, 3
    trainer = DigitsDPSGD(noise_multiplier=1e-9, steps=steps, lr=lr, hidden=4, bug=bug)
    design = DiracCanaries(trainer.dead_coordinates(SMALL[0])[:6], norm=3.0)
    included = np.array([1, 0, 1, 1, 0, 0], dtype=bool)
    model = trainer.train(design.insert(SMALL, included), seed=0)
    scores = np.array([canary_score(model, design[i]) for i in range(6)])
    # mean reduction: each step moves the weight by lr x (clipped canary norm) / (batch size)
    np.testing.assert_allclose(scores, lr * steps * moved / 300 * included, rtol=1e-5, atol=1e-7)


def test_the_rest_of_a_canary_score_is_opacus_gaussian_noise():
    lr, steps, sigma = 1.0, 2, 3.0
    trainer = DigitsDPSGD(noise_multiplier=sigma, steps=steps, lr=lr, hidden=200)
    design = DiracCanaries(trainer.dead_coordinates(SMALL[0]))
    included = np.arange(len(design)) % 2 == 0
    model = trainer.train(design.insert(SMALL, included), seed=1)
    scores = np.array([canary_score(model, design[i]) for i in range(len(design))])
    unit = lr * np.sqrt(steps) * sigma / 300               # sd of the summed noise on one weight
    shift = lr * steps / 300                                # the clipped canary, norm 1, every step
    standardized = (scores - shift * included) / unit
    assert stats.kstest(standardized, "norm").pvalue > KS_PVALUE
    assert abs(standardized[included].mean() - standardized[~included].mean()) < N_SE * np.sqrt(4 / len(design))


def test_the_claim_is_opacus_accountant_at_sample_rate_one():
    trainer = DigitsDPSGD.for_epsilon(4.0, 1e-5, steps=100)
    assert abs(trainer.claimed_epsilon(1e-5) - 4.0) < 0.02     # get_noise_multiplier's tolerance is 0.01
    exact = theory.gaussian_epsilon(1e-5, np.sqrt(100) / trainer.noise_multiplier)
    assert trainer.exact_epsilon(1e-5) == exact and exact <= trainer.claimed_epsilon(1e-5) < exact + 0.05


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="bug must be one of"):
        DigitsDPSGD(1.0, bug="typo")
    with pytest.raises(ValueError, match=r"X of shape \(n, 64\)"):
        DigitsDPSGD(1.0, steps=1, hidden=2).train((X[:, :10], Y), seed=0)

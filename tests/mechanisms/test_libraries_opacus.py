"""The Opacus adapter (mechanisms.libraries.opacus): every step of its batched DP-SGD runs follows
the law of Abadi et al.'s step, the claims are what Opacus's own PrivacyEngine reports for that
training, and a planted misuse (noise multiplier 0.5 under a claim for 1) is flagged.

Tolerances: KS p >= 1e-4 and moments within 4 standard errors (checks.py); seeds are fixed, so the
checks are deterministic.
"""

import itertools

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq

pytest.importorskip("opacus")
import torch  # noqa: E402
from opacus import PrivacyEngine  # noqa: E402

from ndis.auditor import audit  # noqa: E402
from ndis.core import neighbors  # noqa: E402
from ndis.mechanisms.libraries import opacus as adapter  # noqa: E402

from .checks import KS_PVALUE, N_SE  # noqa: E402


def _clipped_gradient_sum(w, data, clip):
    """Sum over records of the squared loss's gradient (w x - y) x, each clipped as Opacus clips it."""
    x, y = data[:, 0], data[:, 1]
    g = (w[..., None] * x - y) * x
    return (g * np.minimum(1.0, clip / (np.abs(g) + 1e-6))).sum(axis=-1)


@pytest.mark.parametrize("data", [adapter.D, adapter.D[:-1]], ids=["D", "D'"])
def test_every_step_is_the_clipped_gradient_step_plus_independent_gaussian_noise(data):
    # w_t = w_{t-1} - lr (sum_i clip(g_i(w_{t-1})) + sigma C Z_t), Z_t i.i.d. N(0, 1) across steps and runs
    sigma, clip, lr, steps, n = 0.8, 1.0, 0.5, 3, 6_000
    mech = adapter.DPSGD(noise_multiplier=sigma, max_grad_norm=clip, steps=steps, lr=lr, w0=0.3)
    transcript = mech(data, n, np.random.default_rng(0))
    assert transcript.shape == (n, steps)
    previous = np.hstack([np.full((n, 1), 0.3), transcript[:, :-1]])
    noise = (previous - transcript) / lr - _clipped_gradient_sum(previous, data, clip)
    scale = sigma * clip
    # float32 arithmetic: residuals exact to ~1e-6 relative, far below the noise's spread
    assert stats.kstest(noise.ravel() / scale, "norm").pvalue > KS_PVALUE
    correlation = np.corrcoef(noise.T)[np.triu_indices(steps, 1)]
    assert np.all(np.abs(correlation) < N_SE / np.sqrt(n))  # se of a null correlation: 1/sqrt(n)


@pytest.mark.parametrize("data", [adapter.D, adapter.D[:-1]], ids=["D", "D'"])
def test_a_poisson_sampled_step_is_the_mixture_over_included_records(data):
    # w_1 = w0 - lr (sum_i B_i clip(g_i(w0)) + sigma C Z), B_i i.i.d. Bernoulli(q): a mixture of 2^m normals
    sigma, lr, q, w0, n = 0.8, 0.5, 0.4, 0.3, 20_000
    out = adapter.DPSGD(noise_multiplier=sigma, lr=lr, w0=w0, sample_rate=q)(data, n, np.random.default_rng(0))[:, 0]
    clipped = np.array([_clipped_gradient_sum(np.array(w0), row[None], 1.0) for row in data])
    subsets = np.array(list(itertools.product((0, 1), repeat=len(data))))
    weights = np.prod(np.where(subsets == 1, q, 1 - q), axis=1)
    means = w0 - lr * subsets @ clipped

    def cdf(w):
        return (weights * stats.norm.cdf((np.asarray(w)[:, None] - means) / (lr * sigma))).sum(axis=1)

    assert stats.kstest(out, cdf).pvalue > KS_PVALUE


def test_runs_are_reproducible_from_the_audits_rng_and_independent_across_blocks():
    mech = adapter.DPSGD(steps=2, block=64)
    state = torch.get_rng_state()
    a = mech(adapter.D, 200, np.random.default_rng(3))
    assert torch.equal(torch.get_rng_state(), state)  # torch's global generator is left alone
    assert np.array_equal(a, mech(adapter.D, 200, np.random.default_rng(3)))
    assert not np.array_equal(a, mech(adapter.D, 200, np.random.default_rng(4)))
    assert len(np.unique(a[:, 0])) == 200  # no two runs (within or across blocks) share their noise


def test_the_canary_is_a_removed_record_and_its_gradient_is_always_clipped():
    for case in adapter.cases():
        assert neighbors.check(case.D, case.D_prime, case.mechanism.neighbor) == len(case.D) - 1
    # the canary's gradient w + 10 exceeds max_grad_norm = 1 wherever a run goes (w > -9)
    transcript = adapter.DPSGD(noise_multiplier=0.5, steps=3)(adapter.D, 5_000, np.random.default_rng(1))
    assert transcript.min() > -9 + 1


def _engine_epsilon(sigma, steps, sample_rate, delta):
    """Epsilon that Opacus's PrivacyEngine (PRV accountant) reports after `steps` steps at `sample_rate`:
    1 / sample_rate records in batches of 1, so that make_private infers that rate."""
    torch.manual_seed(0)
    data = torch.tensor(adapter.D[: round(1 / sample_rate)], dtype=torch.float32)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data[:, :1], data[:, 1]), batch_size=1)
    model = torch.nn.Linear(1, 1, bias=False)
    engine = PrivacyEngine(accountant="prv")
    model, optimizer, loader = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.5),
                                                   data_loader=loader, noise_multiplier=sigma, max_grad_norm=1.0,
                                                   poisson_sampling=sample_rate < 1, loss_reduction="sum")
    for x, y in itertools.islice(itertools.chain.from_iterable(itertools.repeat(loader)), steps):
        optimizer.zero_grad()
        (0.5 * ((model(x)[:, 0] - y) ** 2).sum()).backward()
        optimizer.step()
    with np.errstate(divide="ignore"):
        return engine.get_epsilon(delta)


def _gaussian_epsilon(mu, delta):
    """Exact epsilon of mu-Gaussian DP at delta (Balle & Wang 2018, Theorem 8)."""
    return brentq(lambda e: stats.norm.cdf(-e / mu + mu / 2) - np.exp(e) * stats.norm.cdf(-e / mu - mu / 2) - delta,
                  0, 100)


@pytest.mark.filterwarnings("ignore:Secure RNG turned off", "ignore:Full backward hook")
def test_claims_are_what_opacus_reports_and_bound_the_exact_gaussian_epsilon():
    cases = adapter.cases()
    assert [case.planted for case in cases].count(True) == 1
    assert {case.params["sample_rate"] for case in cases} == {1.0, 0.5}
    for case in cases:
        steps, q, sigma = case.params["steps"], case.params["sample_rate"], case.params["noise_multiplier_claimed"]
        eps, delta = case.claimed
        assert delta == adapter.DELTA and eps == pytest.approx(_engine_epsilon(sigma, steps, q, delta), rel=1e-9)
        if q == 1:  # the PRV accountant's upper end: valid, and within 0.05 of the exact curve of sqrt(T)/sigma-GDP
            assert 0 <= eps - _gaussian_epsilon(np.sqrt(steps) / sigma, delta) < 0.05
        assert (case.mechanism.noise_multiplier < sigma) == case.planted


def test_planted_misuse_is_flagged_by_a_small_audit():
    case = next(case for case in adapter.cases() if case.planted)
    report = audit(case.mechanism, case.D, case.D_prime, claimed=case.claimed, n_samples=20_000, seed=0,
                   progress=False)
    assert report.verdict.label == "violation" and report.eps_lo(case.claimed[1]) > case.claimed[0]

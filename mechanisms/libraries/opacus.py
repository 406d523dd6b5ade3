"""Opacus's DP-SGD (Abadi et al. 2016, Algorithm 1) as an ndis mechanism: steps of a one-parameter
linear model through Opacus's `GradSampleModule` (per-sample gradients), `DPOptimizer` (per-sample
clipping to `max_grad_norm`, Gaussian noise of standard deviation noise_multiplier x max_grad_norm,
the SGD update) and, with Poisson sampling, its `UniformWithReplacementSampler`.

Model: a record (x, y) has the squared loss (w x - y)^2 / 2; `steps` steps of learning rate `lr`
from w = w0 (loss_reduction="sum": the step is the noisy sum of clipped gradients, the same
normaliser on D and D'). The output is the transcript (w_1, ..., w_T), the release Opacus's
accountant covers. Neighbours: add/remove one record, as Opacus's accountants assume; D' is D
without its last record, a canary (1, -10) whose gradient w + 10 is clipped to max_grad_norm at
every iterate the runs reach, so each step it is in shifts the update by exactly max_grad_norm.

Sampling: mainly full batch (sample rate 1, a use Opacus supports and accounts for:
`make_private(poisson_sampling=False)` with one batch per epoch). Its true privacy is that of T
Gaussian mechanisms composed, mu = sqrt(T) / noise_multiplier (Dong, Roth & Su 2022, Corollary
3.3), so the claim is tight: the PRV accountant's epsilon exceeds the exact one by 0.01 (4.387
against 4.377 for one step at noise multiplier 1, delta = 1e-5), and an audit tests the code
against its claim with almost no slack. With Poisson sampling (sample rate q < 1, Opacus's default) the
claim rests on amplification by subsampling and the other records' random inclusion adds noise, so
the audit mostly sees that slack; one case shows it.

Batching: a block of k independent runs is ONE Opacus step of a k-parameter model Linear(k, 1)
whose batch holds every run's records, a record of run j having input x e_j. Its per-sample
gradient is zero outside weight j, so Opacus's flat per-sample clipping clips it exactly as in a run
of its own; the summed clipped gradients of run j land in weight j, Opacus's noise is independent
per weight, SGD updates each weight from its own gradient, and the Poisson sampler draws every
record of every run independently: k independent DP-SGD runs, computed by Opacus's own code
(k^2 x records work per step, hence blocks).

Randomness: Opacus's noise and batches are drawn from a torch.Generator seeded from the audit's
rng (secure_mode=False, Opacus's default), so an audit with a seed is reproducible.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import torch
from numpy.typing import ArrayLike
from opacus import GradSampleModule
from opacus.accountants import PRVAccountant
from opacus.optimizers import DPOptimizer
from opacus.utils.uniform_sampler import UniformWithReplacementSampler

from . import LibraryCase

LIBRARY = "opacus"
#: The accountant's delta for every claim (Opacus's examples' 1e-5).
DELTA = 1e-5
#: Runs per Opacus step (measured by benchmarks/library_adapters.py: the fastest of 64-1024 here).
BLOCK = 256


class DPSGD:
    """f(data, n, rng): (n, steps) transcripts of DP-SGD on the (m, 2) records (x, y), full batch or
    Poisson-sampled at `sample_rate`, in blocks of `block` runs per Opacus step, with torch on `threads`
    threads while it samples (None: torch's setting; 1 by default, as these small tensors are slower
    on more, benchmarks/library_adapters.py)."""

    neighbor = "remove"

    def __init__(self, noise_multiplier: float = 1.0, max_grad_norm: float = 1.0, steps: int = 1, lr: float = 0.5,
                 w0: float = 0.0, sample_rate: float = 1.0, block: int = BLOCK, threads: int | None = 1) -> None:
        if noise_multiplier <= 0 or max_grad_norm <= 0 or lr <= 0:
            raise ValueError("noise_multiplier, max_grad_norm and lr must be positive")
        if not 0 < sample_rate <= 1:
            raise ValueError(f"sample_rate must lie in (0, 1], got {sample_rate}")
        if int(steps) < 1 or int(block) < 1 or (threads is not None and int(threads) < 1):
            raise ValueError(f"steps, block and threads must be positive integers, got {steps}, {block}, {threads}")
        self.noise_multiplier, self.max_grad_norm, self.lr, self.w0 = noise_multiplier, max_grad_norm, lr, w0
        self.sample_rate = sample_rate
        self.steps, self.block, self.threads = int(steps), int(block), threads
        self.__name__ = "opacus.DPOptimizer"
        self.params = {"noise_multiplier": noise_multiplier, "max_grad_norm": max_grad_norm, "steps": self.steps,
                       "lr": lr, "w0": w0, "sample_rate": sample_rate}

    def __call__(self, data: ArrayLike, n: int, rng: np.random.Generator) -> np.ndarray:
        x, y = _records(data)
        generator = torch.Generator().manual_seed(int(rng.integers(2**63 - 1)))
        threads = torch.get_num_threads()
        torch.set_num_threads(self.threads or threads)
        try:
            blocks = [self._runs(x, y, min(self.block, n - start), generator) for start in range(0, n, self.block)]
        finally:
            torch.set_num_threads(threads)
        return np.concatenate(blocks) if blocks else np.empty((0, self.steps))

    def _runs(self, x: torch.Tensor, y: torch.Tensor, k: int, generator: torch.Generator) -> np.ndarray:
        """k independent runs as one Opacus model (see the module docstring)."""
        m = x.numel()
        layer = torch.nn.utils.skip_init(torch.nn.Linear, k, 1, bias=False)  # no draw from torch's global RNG
        torch.nn.init.constant_(layer.weight, self.w0)
        model = GradSampleModule(layer, loss_reduction="sum")
        optimizer = DPOptimizer(torch.optim.SGD(model.parameters(), lr=self.lr), noise_multiplier=self.noise_multiplier,
                                max_grad_norm=self.max_grad_norm, expected_batch_size=None, loss_reduction="sum",
                                generator=generator)
        inputs = torch.zeros(k * m, k)
        inputs[torch.arange(k * m), torch.arange(k).repeat_interleave(m)] = x.repeat(k)
        targets = y.repeat(k)
        # full batch (make_private(poisson_sampling=False)), else Opacus's Poisson sampler over all runs'
        # records, each record of each run drawn with probability q (make_private's default)
        batches = (itertools.repeat(slice(None), self.steps) if self.sample_rate == 1 else
                   UniformWithReplacementSampler(num_samples=k * m, sample_rate=self.sample_rate, generator=generator,
                                                 steps=self.steps))
        transcript = np.empty((k, self.steps))
        with warnings.catch_warnings():  # "full backward hook ... no inputs require gradients": none need to
            warnings.simplefilter("ignore", UserWarning)
            for t, batch in enumerate(batches):
                optimizer.zero_grad()
                loss = 0.5 * ((model(inputs[batch])[:, 0] - targets[batch]) ** 2).sum()
                loss.backward()
                optimizer.step()
                transcript[:, t] = layer.weight.detach().numpy()[0]
        return transcript


def _records(data: ArrayLike) -> tuple[torch.Tensor, torch.Tensor]:
    data = np.asarray(data, dtype=float)
    if data.ndim != 2 or data.shape[1] != 2 or data.shape[0] < 1:
        raise ValueError(f"the Opacus adapter takes a (m, 2) dataset of records (x, y), got shape {data.shape}")
    records = torch.tensor(data, dtype=torch.get_default_dtype())
    return records[:, 0], records[:, 1]


def claimed_epsilon(noise_multiplier: float, steps: int, sample_rate: float = 1.0, delta: float = DELTA) -> float:
    """Opacus's PRV accountant (Gopi, Lee & Wutschitz 2021): epsilon at `delta` after `steps`
    steps at `sample_rate`, the upper end of its error interval."""
    accountant = PRVAccountant()
    accountant.history = [(noise_multiplier, sample_rate, int(steps))]
    with np.errstate(divide="ignore"):  # log(1 - q) at q = 1, masked out by the accountant itself
        return float(accountant.get_epsilon(delta))


#: Four ordinary records and, last, the canary (see the module docstring).
D = np.array([[1.0, 0.5], [-1.0, -0.5], [0.5, 1.0], [2.0, 1.0], [1.0, -10.0]])


def cases() -> list[LibraryCase]:
    """One step and three composed steps at noise multiplier 1, full batch, and three steps with
    Poisson sampling at rate 0.5, each claimed at Opacus's PRV epsilon for delta = 1e-5; planted:
    one full-batch step run at noise multiplier 0.5 while the claim is the accountant's for 2 (2.00).

    The planted factor is 4 so that even the 4,000 samples per side of `ndis reproduce
    audit-libraries --quick` flag it (eps_lo 2.86 to 3.88 over seeds 0-9). Noise 0.5 under a claim
    for 1 (4.39) is flagged at 4 x 10^5 samples per side (eps_lo 5.40 to 5.75, seeds 0-2) but not at
    4,000 (2.97 to 3.88); over three steps (claim 8.40, true 20.1) not even at 4 x 10^5 (eps_lo 7.72 and
    8.27, seeds 0 and 1): at delta = 1e-5, n samples per side (half held out) cannot certify much
    more than ln(n / 8), an event never seen on D' keeping an upper probability near 4 / (n / 2)."""
    listed: list[LibraryCase] = []
    # (steps, sample rate, noise multiplier run, noise multiplier claimed, samples per side)
    for steps, q, sigma, sigma_claimed, n in ((1, 1.0, 1.0, 1.0, 400_000), (3, 1.0, 1.0, 1.0, 400_000),
                                              (3, 0.5, 1.0, 1.0, 400_000), (1, 1.0, 0.5, 2.0, 100_000)):
        planted = sigma != sigma_claimed
        eps = claimed_epsilon(sigma_claimed, steps, q)
        mech = DPSGD(noise_multiplier=sigma, steps=steps, sample_rate=q)
        batch = "full-batch" if q == 1 else f"Poisson-sampled (rate {q:g})"
        note = (f"{steps} {batch} step(s), clipping 1, remove the canary; claim: Opacus's PRV accountant for noise "
                f"multiplier {sigma_claimed:g}")
        if q == 1:
            note += f"; true mu = {np.sqrt(steps) / sigma:.3g} Gaussian DP"
        if planted:
            note += f"; the optimizer runs noise multiplier {sigma:g}"
        name = f"DP-SGD, {steps} step{'s' * (steps > 1)}" + ("" if q == 1 else f", Poisson sampling {q:g}")
        if planted:
            name += f", noise {sigma:g} for a claim at {sigma_claimed:g}"
        listed.append(LibraryCase(LIBRARY, name, mech, D, D[:-1], (eps, DELTA), planted=planted, n_samples=n,
                                  note=note, params={**mech.params, "noise_multiplier_claimed": sigma_claimed}))
    return listed

"""Opacus's DP-SGD (Abadi et al. 2016, Algorithm 1) training a small classifier on scikit-learn's
bundled digits (`sklearn.datasets.load_digits`: 1,797 images of 8 x 8 pixels, no download), on CPU,
with white-box gradient canaries for a one-run audit (`ndis.auditor.one_run`).

Model: a multilayer perceptron 64 -> `hidden` (ReLU) -> 10, cross-entropy, plain SGD, full batch
(every record in every step, `steps` steps), through Opacus's `GradSampleModule` (per-example
gradients) and `DPOptimizer` (per-example clipping to `max_grad_norm`, Gaussian noise of standard
deviation noise_multiplier x max_grad_norm on the sum, then the mean). A Dirac canary j (Steinke,
Nasr & Jagielski 2023, white box) is one more example whose gradient is norm x e_j: when included
it is clipped like every example (to min(norm, max_grad_norm)) and added to each step's sum before
the noise, in `_CanaryDPOptimizer.clip_and_accumulate`. Its score is how far SGD moved coordinate j,
`canary_score` = theta_0[j] - theta_T[j], a sum over steps of its coordinate of the noisy gradient.

Coordinates: `dead_coordinates` are the first-layer weights of the pixels that are 0 in every image
(3 of the 64), whose data gradient is exactly 0; a canary there moves a weight that never changes the
model's output, and its score is the canary's clipped norm per step plus the step noise alone, T
Gaussian mechanisms composed.

Claim: every example and canary is in every step, so the privacy of one is that of T Gaussian
mechanisms of sensitivity max_grad_norm and noise multiplier sigma (mu = sqrt(T) / sigma; Dong, Roth
& Su 2022, Corollary 3.3): Opacus's PRV accountant at sample rate 1 (`claimed_epsilon`; `for_epsilon`
calibrates sigma with Opacus's `get_noise_multiplier`). Planted bug `bug="no-clip"`: clipping
skipped, by passing Opacus max_grad_norm = 1e6 with the noise multiplier rescaled so that the noise
standard deviation stays sigma x max_grad_norm (noise calibrated for a clipped sum, applied to an
unclipped one); the accountant's claim is unchanged.

Randomness: the initial weights and Opacus's noise come from torch generators seeded by `train`'s
seed (secure_mode=False, Opacus's default), so a seed re-runs training exactly.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike
from opacus import GradSampleModule
from opacus.accountants.utils import get_noise_multiplier
from opacus.optimizers import DPOptimizer

from ...theory.gaussian import gaussian_epsilon
from .opacus import claimed_epsilon as prv_epsilon

#: What "clipping skipped" passes to Opacus as max_grad_norm (larger than any gradient here).
NO_CLIP = 1e6
BUGS = (None, "no-clip")


def load_digits_data() -> tuple[np.ndarray, np.ndarray]:
    """(X, y): the 1,797 digit images as rows of 64 pixels scaled to [0, 1], and their labels 0-9."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


@contextlib.contextmanager
def _quiet_accountant() -> Iterator[None]:
    """Opacus's accountants at sample rate 1 warn of log(1 - q) = -inf (masked by them) and of their RDP
    bracket's largest order (the PRV accountant's starting bound); neither concerns the result."""
    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.filterwarnings("ignore", "Optimal order is the largest alpha")
        yield


@dataclass(frozen=True)
class TrainedModel:
    """The flattened parameters before and after training, and the training accuracy."""

    initial: np.ndarray
    final: np.ndarray
    accuracy: float


def canary_score(model: TrainedModel, coordinate: int) -> float:
    """A Dirac canary's score: how far SGD moved its coordinate down, theta_0[j] - theta_T[j]."""
    return float(model.initial[coordinate] - model.final[coordinate])


class _CanaryDPOptimizer(DPOptimizer):  # type: ignore[misc]  # opacus ships no types: DPOptimizer is Any
    """Opacus's DPOptimizer with the included Dirac canaries added, clipped, to each step's sum of clipped
    per-example gradients (before Opacus adds the noise)."""

    def __init__(self, *args: Any, canaries: dict[int, torch.Tensor], canary_norm: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.canaries, self.canary_norm = canaries, canary_norm

    def clip_and_accumulate(self) -> None:
        super().clip_and_accumulate()
        clipped = min(self.canary_norm, self.max_grad_norm)
        for index, local in self.canaries.items():
            self.params[index].summed_grad.view(-1)[local] += clipped


class DigitsDPSGD:
    """`train(data, seed) -> TrainedModel`: full-batch DP-SGD on (X, y), or on `data.data` with the
    Dirac canaries `data.coordinates` of norm `data.norm` (what `auditor.one_run.canaries.DiracCanaries`
    inserts), with torch on `threads` threads."""

    def __init__(self, noise_multiplier: float, steps: int = 100, max_grad_norm: float = 1.0, lr: float = 2.0,
                 hidden: int = 400, bug: str | None = None, threads: int = 1) -> None:
        if noise_multiplier <= 0 or max_grad_norm <= 0 or lr <= 0:
            raise ValueError("noise_multiplier, max_grad_norm and lr must be positive")
        if int(steps) < 1 or int(hidden) < 1 or int(threads) < 1:
            raise ValueError(f"steps, hidden and threads must be positive integers, got {steps}, {hidden}, {threads}")
        if bug not in BUGS:
            raise ValueError(f"bug must be one of {', '.join(map(repr, BUGS))}; got {bug!r}")
        self.noise_multiplier, self.max_grad_norm, self.lr = float(noise_multiplier), float(max_grad_norm), float(lr)
        self.steps, self.hidden, self.bug, self.threads = int(steps), int(hidden), bug, int(threads)

    @classmethod
    def for_epsilon(cls, eps: float, delta: float, steps: int = 100, **options: Any) -> DigitsDPSGD:
        """The trainer whose noise multiplier Opacus's `get_noise_multiplier` (PRV accountant, sample rate
        1) calibrates to (eps, delta) for `steps` steps."""
        with _quiet_accountant():
            sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=1.0, steps=int(steps),
                                         accountant="prv")
        return cls(sigma, steps, **options)

    @property
    def params(self) -> dict[str, Any]:
        return {"noise_multiplier": self.noise_multiplier, "steps": self.steps, "max_grad_norm": self.max_grad_norm,
                "lr": self.lr, "hidden": self.hidden, "bug": self.bug}

    def claimed_epsilon(self, delta: float) -> float:
        """Opacus's PRV accountant: eps at delta of one record present in all `steps` steps."""
        with _quiet_accountant():
            return prv_epsilon(self.noise_multiplier, self.steps, 1.0, delta)

    def exact_epsilon(self, delta: float) -> float:
        """eps at delta of T composed Gaussian mechanisms, mu = sqrt(T) / sigma (the claim without slack)."""
        return float(gaussian_epsilon(delta, np.sqrt(self.steps) / self.noise_multiplier))

    def _model(self) -> torch.nn.Module:
        return torch.nn.Sequential(torch.nn.Linear(64, self.hidden), torch.nn.ReLU(), torch.nn.Linear(self.hidden, 10))

    def dead_coordinates(self, X: np.ndarray) -> np.ndarray:
        """Flat indices of the first-layer weights of the pixels that are 0 in every row of X (zero data
        gradient), in the order of `model.parameters()` (weight [hidden, 64] first)."""
        pixels = np.flatnonzero(np.all(np.asarray(X) == 0, axis=0))
        return (np.arange(self.hidden)[:, None] * 64 + pixels[None, :]).reshape(-1)

    def _canaries(self, model: torch.nn.Module, coordinates: ArrayLike) -> dict[int, torch.Tensor]:
        """{parameter index: flat indices within it} of the canary coordinates."""
        found: dict[int, torch.Tensor] = {}
        start = 0
        coordinates = np.asarray(coordinates, dtype=int)
        for index, p in enumerate(model.parameters()):
            inside = coordinates[(coordinates >= start) & (coordinates < start + p.numel())] - start
            if inside.size:
                found[index] = torch.as_tensor(inside)
            start += p.numel()
        if coordinates.size and (coordinates.min() < 0 or coordinates.max() >= start):
            raise ValueError(f"canary coordinates must lie in [0, {start}), the model's {start} parameters")
        return found

    def train(self, data: Any, seed: int) -> TrainedModel:
        records, coordinates, norm = ((data.data, data.coordinates, data.norm) if hasattr(data, "coordinates")
                                      else (data, np.empty(0, dtype=int), self.max_grad_norm))
        X, y = (torch.as_tensor(np.asarray(a)) for a in records)
        X, y = X.to(torch.get_default_dtype()), y.long()
        if X.ndim != 2 or X.shape[1] != 64 or y.shape != (X.shape[0],):
            raise ValueError(f"the digits trainer takes (X, y) with X of shape (n, 64), got {tuple(X.shape)} and "
                             f"{tuple(y.shape)}")
        threads = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            with torch.random.fork_rng():
                torch.manual_seed(seed)
                model = self._model()
            initial = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy().astype(float)
            clip = NO_CLIP if self.bug == "no-clip" else self.max_grad_norm
            module = GradSampleModule(model)
            optimizer = _CanaryDPOptimizer(torch.optim.SGD(module.parameters(), lr=self.lr),
                                           noise_multiplier=self.noise_multiplier * self.max_grad_norm / clip,
                                           max_grad_norm=clip, expected_batch_size=X.shape[0],
                                           generator=torch.Generator().manual_seed(seed + 1),
                                           canaries=self._canaries(model, coordinates), canary_norm=norm)
            with warnings.catch_warnings():  # "full backward hook ... no inputs require gradients": none need to
                warnings.simplefilter("ignore", UserWarning)
                for _ in range(self.steps):
                    optimizer.zero_grad()
                    torch.nn.functional.cross_entropy(module(X), y).backward()
                    optimizer.step()
            with torch.no_grad():
                accuracy = float((module(X).argmax(1) == y).double().mean())
            final = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy().astype(float)
        finally:
            torch.set_num_threads(threads)
        return TrainedModel(initial, final, accuracy)

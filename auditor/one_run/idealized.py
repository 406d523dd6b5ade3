"""The idealized one-run setting of the papers: no training, each canary's score drawn from the
mechanism's law in or out, here the Gaussian mechanism at (eps, delta): N(mu, 1) if included, N(0, 1)
if not, mu = `theory.gaussian_mu(eps, delta)` (Steinke, Nasr & Jagielski 2023 and Mahloujifar, Melis
& Chaudhuri 2025 audit this setting; it is what a white-box attack on T full-batch DP-SGD steps
sees, mu = sqrt(T) / noise multiplier).

`idealized_eps_lo` is what each estimator certifies there: the best an attack that sees each canary's
Gaussian mechanism exactly can expect.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ...theory.gaussian import gaussian_mu
from . import fdp, gaussian, steinke
from .estimate import METHODS, Uncomputable

ESTIMATORS = {"steinke": steinke.estimate, "fdp": fdp.estimate, "gaussian": gaussian.estimate}


def draw(m: int, eps: float, delta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(scores, included) of m canaries in the idealized Gaussian setting at (eps, delta)."""
    included = rng.random(m) < 0.5
    return rng.standard_normal(m) + gaussian_mu(eps, delta) * included, included


def idealized_eps_lo(m: int, eps: float, delta: float, alpha: float, runs: int, seed, methods=METHODS) -> dict:
    """{method: array of eps_lo over `runs` seeded draws of the idealized setting}; NaN for a draw on
    which the estimator gives no bound (e.g. fewer than three canaries left out of a tiny m)."""
    found = {method: np.full(runs, np.nan) for method in methods}
    for run, child in enumerate(np.random.SeedSequence(seed).spawn(runs)):
        scores, included = draw(m, eps, delta, np.random.default_rng(child))
        for method in methods:
            with contextlib.suppress(Uncomputable):
                found[method][run] = ESTIMATORS[method](scores, included, delta, alpha).eps_lo
    return found

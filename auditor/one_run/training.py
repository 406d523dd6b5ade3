"""A user's training run audited once: `train(data, seed) -> model` and `score(model, canary) -> float`.

`audit_training` draws the coin flips from the seed, trains once on `canaries.insert(data, flips)`,
scores every canary with the flips withheld from the scorer, and hands the scores and flips to
`audit_one_run`. Exceptions raised inside `train` or `score` keep their traceback
(`core.errors.MechanismError`, saying which call failed); mistakes in the arguments are ValueError.
"""

from __future__ import annotations

import time

import numpy as np

from ...core.errors import MechanismError
from ..sampling.chunks import as_seed_sequence
from .audit import audit_one_run
from .canaries import coin_flips
from .report import OneRunReport


def _score_all(score, model, canaries) -> np.ndarray:
    values = np.empty(len(canaries))
    for i in range(len(canaries)):
        try:
            value = score(model, canaries[i])
        except Exception as error:  # the user's scorer failed: keep its traceback
            raise MechanismError(f"score(model, canary {i})", error) from error
        try:
            values[i] = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"score(model, canary {i}) returned {type(value).__name__}, not a number") from None
    return values


def audit_training(train, score, data, canaries, *, delta: float = 1e-5, method: str = "steinke",
                   alpha: float = 0.05, seed=None, claimed_eps: float | None = None, **options) -> OneRunReport:
    """Train once with each canary of `canaries` (`canaries.InputCanaries` or `canaries.DiracCanaries`)
    included by a fair coin flip, score every canary, and audit (`audit_one_run`, which takes `options`).
    `seed` (None: fresh entropy; recorded in `report.seed`) draws the flips and the seed passed
    to `train`, so the same seed re-runs the audit exactly when `train` is deterministic given its seed."""
    root = as_seed_sequence(seed)
    flips_seed, train_seed = root.spawn(2)
    included = coin_flips(len(canaries), flips_seed)
    started = time.perf_counter()
    try:
        model = train(canaries.insert(data, included), int(train_seed.generate_state(1)[0]))
    except Exception as error:  # the user's training failed: keep its traceback
        raise MechanismError("train(data, seed)", error) from error
    trained = time.perf_counter()
    scores = _score_all(score, model, canaries)
    scored = time.perf_counter()
    report = audit_one_run(scores, included, delta=delta, method=method, alpha=alpha, claimed_eps=claimed_eps,
                           **options)
    report.canaries, report.seed = canaries.kind, {"entropy": root.entropy, "spawn_key": list(root.spawn_key)}
    report.timings = {"train": trained - started, "score": scored - trained, "audit": time.perf_counter() - scored}
    return report

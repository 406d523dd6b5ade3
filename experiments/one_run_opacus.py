"""One-run audit of Opacus DP-SGD on scikit-learn's digits with white-box Dirac canaries
(`ndis audit-one-run opacus-digits --eps 4 --canaries 1000`): one training run, the three one-run
estimators beside Opacus's accountant (`mechanisms.libraries.opacus_digits`).

The noise multiplier is Opacus's calibration to the claimed eps at delta for a record in every step
(sample rate 1, how both the records and the canaries participate); the canaries sit on the
first-layer weights of the always-blank pixels (`DigitsDPSGD.dead_coordinates`), each with gradient
norm `CANARY_NORM` x max_grad_norm, so a correct DP-SGD clips it to max_grad_norm and the planted
bug "no-clip" lets it through at twice the sensitivity the noise was calibrated for.
"""

from __future__ import annotations

from typing import Any

from ..auditor.one_run.canaries import DiracCanaries
from ..auditor.one_run.report import OneRunReport
from ..auditor.one_run.training import audit_training
from ..auditor.sampling.chunks import as_seed_sequence
from ..core.validation import Seed, as_int, as_positive, as_probability
from ..mechanisms.libraries.opacus_digits import DigitsDPSGD, TrainedModel, canary_score, load_digits_data

#: A Dirac canary's gradient norm, in units of max_grad_norm (> 1: clipping must cut it).
CANARY_NORM = 2.0


def run(eps: float, canaries: int = 1000, delta: float = 1e-5, steps: int = 100, bug: str | None = None,
        seed: Seed = None, method: str = "steinke", alpha: float = 0.05, hidden: int = 400,
        **options: Any) -> OneRunReport:
    """Train once with `canaries` Dirac canaries at the noise Opacus calibrates to (eps, delta) for
    `steps` full-batch steps, and audit it; `bug="no-clip"` skips clipping (the claim is unchanged)."""
    eps, delta = as_positive("eps", eps), as_probability("delta", delta)
    canaries, hidden = as_int("canaries", canaries), as_int("hidden", hidden)
    trainer = DigitsDPSGD.for_epsilon(eps, delta, as_int("steps", steps), hidden=hidden, bug=bug)
    X, y = load_digits_data()
    candidates = trainer.dead_coordinates(X)
    if canaries > candidates.size:
        raise ValueError(f"{canaries} Dirac canaries need as many blank-pixel weights, but a hidden layer of {hidden} "
                         f"has {candidates.size}: use at most {candidates.size} canaries, or hidden >= "
                         f"{-(-canaries // (candidates.size // hidden))}")
    root = as_seed_sequence(seed)
    design, audit = root.spawn(2)
    placed = DiracCanaries.choose(canaries, candidates, design, norm=CANARY_NORM * trainer.max_grad_norm)
    claimed = trainer.claimed_epsilon(delta)
    trained: list[TrainedModel] = []

    def train(data: Any, train_seed: int) -> TrainedModel:
        trained.append(trainer.train(data, train_seed))
        return trained[-1]

    report = audit_training(train, canary_score, (X, y), placed, delta=delta, method=method, alpha=alpha,
                            seed=audit, claimed_eps=claimed, **options)
    report.mechanism = f"Opacus DP-SGD on digits{' (planted bug: clipping skipped)' if bug else ''}"
    report.seed = {"entropy": root.entropy, "spawn_key": list(root.spawn_key)}
    report.info.update(
        params=trainer.params, accountant={"name": "Opacus PRV accountant, sample rate 1", "eps": claimed, "delta": delta,
                    "target_eps": eps, "exact_eps": trainer.exact_epsilon(delta)},
        canary_norm=CANARY_NORM * trainer.max_grad_norm, training_accuracy=trained[-1].accuracy)
    return report

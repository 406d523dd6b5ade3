"""One-run auditing: m canaries, each included in one training run by a secret fair coin flip, one
score per canary, and a certified lower bound on eps from the scores (`audit_one_run`).

Stages, one module each: `inputs` (the scores and coin flips, checked), `guesses` (membership guesses
with abstention), the estimators `steinke` (Steinke, Nasr & Jagielski 2023), `fdp` (Mahloujifar,
Melis & Chaudhuri 2025) and `gaussian` (after Agrawal, Wei, Singh, Magdon-Ismail & Zikas 2026),
`idealized` (the papers' setting without training, and each estimator's ceiling), `canaries` (the
design: coin flips with a recorded seed, input-space and Dirac gradient canaries), `training` (a
user's `train(data, seed)` and `score(model, canary)`, run once) and `report` (`OneRunReport`).
"""

from .audit import audit_one_run
from .canaries import DiracCanaries, InputCanaries
from .estimate import METHODS, Estimate
from .report import OneRunReport
from .training import audit_training

__all__ = ["audit_one_run", "audit_training", "DiracCanaries", "InputCanaries", "Estimate", "METHODS", "OneRunReport"]

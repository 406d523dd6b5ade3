"""`audit_one_run`: the three one-run estimators on one set of canary scores, side by side."""

from __future__ import annotations

import numpy as np

from ndis.auditor.one_run import idealized, inputs, steinke
from ndis.auditor.one_run.estimate import METHODS
from ndis.auditor.one_run.gaussian import SMALLEST_GROUP
from ndis.auditor.one_run.report import OneRunReport
from ndis.core.validation import as_choice, as_int, as_positive, as_probability, optional

#: Canaries the search for the fewest that any bound needs looks at.
_SEARCH = range(8, 129)


def _fewest_for_guesses(delta: float, alpha: float) -> int:
    """The fewest canaries on which the guess-based bounds can certify anything (every guess right)."""
    return next(m for m in _SEARCH if steinke.ceiling(m, delta, alpha) > 0)


def audit_one_run(scores, included, delta: float = 1e-5, method: str = "steinke", alpha: float = 0.05, *,
                  claimed_eps: float | None = None, idealized_runs: int = 20, seed=0) -> OneRunReport:
    """One-run audit of canary scores: eps_lo at `delta` of every estimator, `method`'s as `.eps_lo`.

    scores : one number per canary, larger when the canary was included (negate losses).
    included : the secret coin flips (1/True = the canary was in the training run), in the same order.
    method : "steinke" (default: Steinke, Nasr & Jagielski 2023; exact, no assumption), "gaussian"
        (Agrawal et al. 2026; asymptotic, with the checks of its model: the tightest for white-box
        DP-SGD canaries, and an overclaim when the scores are not Gaussian) or "fdp" (Mahloujifar,
        Melis & Chaudhuri 2025; exact when the trade-off curve is a Gaussian one). The others are computed too, as far
        as the canaries allow, for the report.
    alpha : each eps_lo holds with probability >= 1 - alpha (each a separate statement).
    claimed_eps : the accountant's eps at `delta`, if any: the report sets each eps_lo beside it, and
        beside the idealized bound at that eps for the same number of canaries, the median over
        `idealized_runs` seeded draws (`seed`) of scores from the Gaussian mechanism at (claimed_eps,
        delta) (`idealized.idealized_eps_lo`), and each estimator's ceiling.
    """
    scores, included = inputs.canary_scores(scores, included)
    delta, alpha = as_probability("delta", delta), as_probability("alpha", alpha)
    method = as_choice("method", method, METHODS)
    claimed_eps = optional(as_positive, "claimed_eps", claimed_eps, True)
    idealized_runs = as_int("idealized_runs", idealized_runs)
    m = scores.size
    ceilings = idealized.ceilings(m, delta, alpha)
    groups = (int(included.sum()), int((~included).sum()))
    why_not = {}
    if ceilings["steinke"] == 0:
        fewest = _fewest_for_guesses(delta, alpha)
        why_not["steinke"] = why_not["fdp"] = (
            f"a guess-based bound certifies nothing on fewer than {fewest} canaries at alpha={alpha:g}, even with every "
            "guess right")
    if min(groups) < SMALLEST_GROUP:
        why_not["gaussian"] = (f"the Gaussian bound needs at least {SMALLEST_GROUP} included and {SMALLEST_GROUP} "
                               f"left-out canaries, got {groups[0]} and {groups[1]}")
    if len(why_not) == len(METHODS):
        raise ValueError(f"{m} canaries are too few for any bound ({why_not['steinke']}; "
                         f"{why_not['gaussian']}): use more canaries")
    if method in why_not:
        raise ValueError(f"{m} canaries: {why_not[method]}: use more canaries, or method="
                         f"{next(x for x in METHODS if x not in why_not)!r}")
    estimates = {name: idealized.ESTIMATORS[name](scores, included, delta, alpha)
                 for name in METHODS if name not in why_not}
    ideal = {"ceiling": ceilings}
    if claimed_eps is not None and claimed_eps > 0:
        runs = idealized.idealized_eps_lo(m, claimed_eps, delta, alpha, idealized_runs, seed, list(estimates))
        ideal.update(eps=claimed_eps, runs=idealized_runs, seed=seed,
                     median={name: float(np.median(values)) for name, values in runs.items()})
    return OneRunReport(scores=scores, included=included, delta=delta, alpha=alpha, method=method,
                        estimates=estimates, claimed_eps=claimed_eps, idealized=ideal,
                        info={"m": m, "included": groups[0], "not_computed": why_not})

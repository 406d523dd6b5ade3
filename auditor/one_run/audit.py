"""`audit_one_run`: a one-run audit's headline eps_lo, from the estimator asked for when its
assumption survives its checks, else from the assumption-free fallback, and the other estimators
beside it on request."""

from __future__ import annotations

import numpy as np

from ...core.validation import as_choice, as_int, as_positive, as_probability, optional
from . import inputs
from .estimate import ASSUMPTION_FREE, FALLBACK, METHODS, Estimate, Uncomputable
from .idealized import ESTIMATORS, idealized_eps_lo
from .report import OneRunReport


def _estimates(scores: np.ndarray, included: np.ndarray, delta: float, alpha: float,
               names) -> tuple[dict[str, Estimate], dict[str, str]]:
    """({name: Estimate}, {name: why not}) for each of `names`: an estimator that cannot give a bound
    says why in one line and never stops the others."""
    found, why_not = {}, {}
    for name in names:
        try:
            found[name] = ESTIMATORS[name](scores, included, delta, alpha)
        except Uncomputable as reason:
            why_not[name] = str(reason)
    return found, why_not


def _no_bound(scores: np.ndarray, included: np.ndarray, delta: float, alpha: float, method: str, why: str) -> str:
    """The one-line error when the asked assumption-free `method` gives no bound (`why`): another
    estimator that would, or the reasons of all when none would."""
    found, why_not = _estimates(scores, included, delta, alpha, [name for name in METHODS if name != method])
    if found:
        return f"{scores.size} canaries: {why}: use more canaries, or method={next(iter(found))!r}"
    reasons = "; ".join(f"{name}: {reason}" for name, reason in {method: why, **why_not}.items())
    return f"{scores.size} canaries are too few for any bound ({reasons}): use more canaries"


def audit_one_run(scores, included, *, delta: float = 1e-5, method: str = "steinke", alpha: float = 0.05,
                  claimed_eps: float | None = None, compare: bool = False, idealized_runs: int = 20,
                  seed=0) -> OneRunReport:
    """One-run audit of canary scores: a certified eps_lo at `delta` (the report's headline).

    Parameters
    ----------
    scores : one number per canary, larger when the canary was included (negate losses).
    included : the secret coin flips (1/True = the canary was in the training run), in the same order.
    delta : the delta of eps_lo, in [0, 1) (0: pure DP; the Gaussian estimator needs delta > 0).
    method : the estimator asked for: "steinke" (default: Steinke, Nasr & Jagielski 2023; exact, no
        assumption), "fdp" (Mahloujifar, Melis & Chaudhuri 2025, with the (eps, delta) trade-off
        family; exact, no assumption) or "gaussian" (after Agrawal et al. 2026; asymptotic, resting
        on a Gaussian model of the scores: the tightest for white-box DP-SGD canaries). An estimate
        whose model the checks reject is kept in the report, marked "model rejected; not certified",
        and the headline falls back to "steinke"'s bound (`OneRunReport.fallback` says why).
    alpha : the headline eps_lo holds with probability >= 1 - alpha (each estimate is a separate statement).
    claimed_eps : the accountant's eps at `delta`, if any: `refutes_claim()` compares the headline with
        it, and each estimate is set beside the idealized bound at that eps for the same number of
        canaries: the median over `idealized_runs` seeded draws (`seed`) of scores from the Gaussian
        mechanism at (claimed_eps, delta) (`idealized.idealized_eps_lo`; delta > 0 only).
    compare : compute every estimator, not only `method` (and the fallback when needed), to show them
        side by side; on 10^5 canaries a guess-based estimate with its ceiling costs about 0.4 s, the
        Gaussian one 0.06 s.

    Returns
    -------
    OneRunReport
        `eps_lo` and `headline` the certified bound, `estimates` every computed estimate, `not_computed`
        the estimators that could not give a bound with the reason.
    """
    scores, included = inputs.canary_scores(scores, included)
    delta, alpha = as_probability("delta", delta, allow_zero=True), as_probability("alpha", alpha)
    method = as_choice("method", method, METHODS)
    claimed_eps = optional(as_positive, "claimed_eps", claimed_eps, True)
    idealized_runs = as_int("idealized_runs", idealized_runs)
    estimates, not_computed = _estimates(scores, included, delta, alpha, METHODS if compare else (method,))
    asked = estimates.get(method)
    headline, fallback = method, None
    if asked is None or not asked.certified:
        fallback = (f"{method} is not certified: model rejected ({asked.rejected})" if asked is not None
                    else f"{method} gives no bound: {not_computed[method]}")
        if method in ASSUMPTION_FREE:  # nothing to fall back to: say which estimator would give a bound
            raise ValueError(_no_bound(scores, included, delta, alpha, method, not_computed[method]))
        if FALLBACK not in estimates and FALLBACK not in not_computed:
            found, why_not = _estimates(scores, included, delta, alpha, (FALLBACK,))
            estimates.update(found)
            not_computed.update(why_not)
        if FALLBACK not in estimates:
            raise ValueError(f"{scores.size} canaries: {fallback}; and {FALLBACK}: {not_computed[FALLBACK]}")
        headline = FALLBACK
    ideal = {}
    if claimed_eps is not None and claimed_eps > 0 and delta > 0:
        runs = idealized_eps_lo(scores.size, claimed_eps, delta, alpha, idealized_runs, seed, list(estimates))
        ideal = dict(eps=claimed_eps, runs=idealized_runs, seed=seed,
                     median={name: None if np.isnan(values).all() else float(np.nanmedian(values))
                             for name, values in runs.items()})
    return OneRunReport(scores=scores, included=included, delta=delta, alpha=alpha, method=method,
                        estimates=dict(sorted(estimates.items(), key=lambda item: METHODS.index(item[0]))),
                        headline=headline, fallback=fallback, not_computed=not_computed, claimed_eps=claimed_eps,
                        idealized=ideal)

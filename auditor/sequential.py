"""Sequential audits of a claim: rounds that stop as soon as the claim is refuted, or when going on is futile.

`audit_sequential(mech, D, D_prime, claimed=...)` spends its budget of n_samples per side in the rounds of
`auditor.statistics.spending` (2.5%, 7.5% and 90% of it, as many as fit; alpha spent as t^2). A round is two stages on
independent samples:

1. screening: an ordinary fixed-size audit (`audit`, at the round's level, on its own seed) trains
   a score and counts its held-out scores; on those counts `statistics.confirmation.choose_events`
   picks the level-set events of the frozen score most likely to refute the claim (two, of clearly
   different masses), each with the point of the claim it tests;
2. confirmation: fresh samples of M(D) and M(D') are scored by that frozen score and each event's
   counts are tested exactly at each of the round's looks (`statistics.confirmation.confirm`: the
   exact test of H0: P(S) - e^eps Q(S) <= delta on the difference of the two counts,
   `statistics.difference`, at the look's level / `confirmation.EVENTS`): the claim is refuted when a
   test rejects.

A round whose confirmation could not refute the claim with any counts (a claimed eps too large for its
size and level) is skipped, and an audit none of whose rounds could is refused before sampling; so is
one whose rounds, run to their end, need more memory than is available or more time than `max_seconds`
(`core.budget.within`). The audit stops at the first look that refutes the claim ("refuted"); after
the first look of the last round when the rest of it has no realistic chance ("futile": even if each
event's delta were `FUTILITY_SE` standard errors above its unbiased estimate, the final look's tests
would refute with probabilities summing to less than `FUTILITY_POWER`); or when the budget is spent
("budget"). Stopping for futility never adds a refutation, so it costs no confidence.

What holds at the stopping time, whatever the data decided: each look tests events fixed before its
round's confirmation samples were drawn, each at its share of the look's level alpha_k, and the
alpha_k sum to alpha, so P(some test refutes a true claim) <= alpha (a union bound). The verdict, the
reported bounds (those of the deciding test: a refuting one, else the last look's with the smallest
p-value) and the combined p-value min_j p_j alpha / alpha_j over every test j are valid at level
alpha over the stopping time. The report's
curves and other certificates are the last screening audit's, run at its round's level, so they too
hold at alpha over the stopping time (a separate statement, as in a fixed-size audit).
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable

import numpy as np

from ..core import budget as costs
from ..core.options import Execution, Scoring, Split
from ..core.validation import as_eps_grid, as_int
from . import api as audit_api
from .api import DEFAULT_EPS
from .reporting.progress import Interrupted, Progress
from .reporting.report import AuditReport
from .sampling import adapters, chunks
from .statistics import bounds, claims, confirmation, spending
from .statistics.certify import Certificate
from .statistics.verdict import Verdict, check_claim

#: Spawn-key prefixes (under the audit's root seed) of the rounds' screening audits and confirmations.
SCREEN_KEY, CONFIRM_KEY = 10, 11
#: Futility: standard errors of optimism granted to the tested event, and the chance below which the
#: last round's final look is not made.
FUTILITY_SE, FUTILITY_POWER = 2.0, 0.01


class _Exceed:
    """Picklable chunk transform: how many outputs of a chunk score >= each threshold under the frozen score."""

    def __init__(self, score, thresholds):
        self.score, self.thresholds = score, np.asarray(thresholds, dtype=float)

    def __call__(self, samples) -> np.ndarray:
        scores = np.asarray(self.score(samples), dtype=float).ravel()
        if np.isnan(scores).any():
            raise ValueError(f"the scorer returned NaN for {int(np.isnan(scores).sum())} confirmation samples")
        return np.array([np.count_nonzero(scores >= t) for t in self.thresholds])


def claim_points(claimed, eps) -> list[tuple[float, float]]:
    """[(eps, delta)] the confirmation may test: the claimed point, or a claimed curve's finite values on
    the grid `eps`."""
    if claims.is_point_claim(claimed):
        return [check_claim(claimed)]
    grid = as_eps_grid(eps)
    values = claims.claimed_curve(claimed)(grid)
    points = [(float(e), float(d)) for e, d in zip(grid, values) if np.isfinite(d)]
    if not points:
        raise ValueError("the claimed curve states no delta at any eps of the grid; pass eps= inside its range")
    return points


def _validate(claimed, scoring: Scoring, D_prime) -> None:
    """ValueError for what a sequential audit cannot do, before anything is sampled."""
    if claimed is None:
        raise ValueError("a sequential audit tests a claim: pass claimed=(eps, delta), a claimed curve or "
                         "ndis.gaussian_dp(mu)")
    if scoring.method != "threshold":
        raise ValueError("a sequential audit goes with method='threshold'")
    if D_prime is None:
        raise ValueError("a sequential audit audits a given pair: pass D_prime (audit once with neighbor=... to "
                         "choose the neighbour, then audit that pair sequentially)")


def audit_sequential(mech, D, D_prime, *, claimed, eps=None, n_samples: int = 10**6, alpha: float = 0.05, seed=None,
                     neighbor=None, scorer="auto", split: Split | None = None, execution: Execution | None = None,
                     progress: bool | str | Callable[[str], None] | None = None) -> AuditReport:
    """A sequential audit of the claim `claimed` on the pair (D, D'): rounds of a screening audit and a
    confirmation on fresh samples (module docstring) that stop as soon as the claim is refuted or
    going on is futile, valid at level `alpha` over the stopping time.

    Parameters
    ----------
    mech, D, D_prime, eps, alpha, seed, neighbor, scorer, split, execution, progress :
        as for `ndis.audit`; D_prime is required (a sequential audit tests a given pair).
    claimed : the claim, as for `ndis.audit`: (eps, delta), a claimed curve or `ndis.gaussian_dp(mu)`.
    n_samples : the most samples per side the rounds may draw in all.

    Returns
    -------
    AuditReport
        The last screening audit's report with the sequential verdict; `report.samples_used` and
        `report.sequential` say what was drawn and why the audit stopped.
    """
    started = time.perf_counter()
    scoring, split, execution = Scoring.of(scorer), split or Split(), execution or Execution()
    _validate(claimed, scoring, D_prime)
    budget = as_int("n_samples", n_samples)
    points = claim_points(claimed, DEFAULT_EPS if eps is None else eps)
    rounds = spending.schedule(budget, alpha)
    skipped = [plan.index + 1 for plan in rounds if not _can_refute(plan, points)]
    if len(skipped) == len(rounds):
        raise ValueError(f"too few samples for alpha={alpha}: no outcome of a sequential audit of {budget:,} samples "
                         f"per side could refute the claim (its last round confirms on {rounds[-1].confirm:,}); "
                         "use more samples or a larger alpha")
    n_eps = as_eps_grid(DEFAULT_EPS if eps is None else eps).size
    costs.within(_cost([plan for plan in rounds if plan.index + 1 not in skipped], n_eps, split, execution), n_eps,
                 budget, execution.max_seconds)
    common = dict(eps=eps, claimed=claimed, neighbor=neighbor, scorer=scoring, split=split, execution=execution,
                  progress=progress)
    progress = Progress.auto(progress)
    root = chunks.as_seed_sequence(seed)
    mech = adapters.resolve(mech)
    sampler = adapters.as_sampler(mech, execution.literal)
    draws, records, used, stop = None, [], 0, None
    for plan in rounds:
        if plan.index + 1 in skipped:
            continue
        progress.note(f"round {plan.index + 1} of {len(rounds)}: a screening audit of {plan.screen:,} samples per side, "
                      f"then up to {plan.confirm:,} to confirm")
        screen_seed = chunks.chunk_seed(root, SCREEN_KEY, plan.index)
        report = audit_api.audit(mech, D, D_prime, n_samples=plan.screen, alpha=plan.level, seed=screen_seed, **common)
        draws = draws or (sampler.prepare(D), sampler.prepare(D_prime))
        final = plan.looks[-1]
        events = confirmation.choose_events(report.evidence.held, points, final.confirm, final.level)
        counts, drawn, used = 0, 0, used + plan.screen
        for k, look in enumerate(plan.looks):
            seed = chunks.chunk_seed(root, CONFIRM_KEY, plan.index, k)
            new = _confirmation_counts(draws, report, events, plan, look.confirm - drawn, seed, execution, progress)
            counts, used, drawn = counts + new, used + look.confirm - drawn, look.confirm
            results = [confirmation.confirm(event, k_p, k_q, drawn, look.level / confirmation.EVENTS)
                       for event, k_p, k_q in zip(events, *counts)]
            records.append({"round": plan.index + 1, "look": k + 1, "screen": plan.screen, "confirm": drawn,
                            "level": look.level, "seed": {"entropy": root.entropy, "spawn_key": list(screen_seed.spawn_key)},
                            "scorer": report.scorer, "confirmation": _deciding(results).to_dict(),
                            "confirmations": [r.to_dict() for r in results], "results": results})
            stop = _stop(results, plan.looks[k + 1:])
            if stop:
                break
        if stop:
            break
    return _report(report, records, stop or ("budget", None), rounds, skipped, budget, alpha, used, root, started)


def _cost(rounds, n_eps: int, split: Split, execution: Execution) -> dict:
    """`core.budget.estimate` of a sequential audit that runs `rounds` to their end (as when the claim
    holds), one phase after another: each round's screening audit, then its confirmation counting fresh
    samples. Its memory is the largest phase's, its time the sum of theirs."""
    phases = [costs.estimate(n_eps, plan.screen, sizes=costs.split(plan.screen, *split.training),
                             n_jobs=execution.n_jobs, streaming=execution.streaming) for plan in rounds]
    phases += [costs.estimate(0, plan.confirm, n_jobs=execution.n_jobs) for plan in rounds]
    largest = max(phases, key=lambda phase: phase["total_bytes"])
    return {**largest, "seconds_at_least": sum(phase["seconds_at_least"] for phase in phases)}


def _can_refute(plan, points) -> bool:
    """Whether the round's final look could refute some point of the claim with the most extreme counts:
    every fresh output on the numerator side in the event, none on the other. A round that cannot is
    skipped: it could not change the verdict."""
    look = plan.looks[-1]
    level = look.level / confirmation.EVENTS
    low = bounds.clopper_pearson_lower(look.confirm, look.confirm, level / 2)
    up = bounds.clopper_pearson_upper(0, look.confirm, level / 2)
    return any(low - np.exp(eps) * up > delta for eps, delta in points)


def _confirmation_counts(draws, report, events, plan, n, seed, execution: Execution, progress: Progress) -> np.ndarray:
    """[k_p, k_q], each per event: of n fresh outputs on D and on D', those whose frozen score is >= the
    event's threshold."""
    transform = _Exceed(report.evidence.score, [event.threshold for event in events])
    shape = tuple(report.info["output_shape"])
    name = report.mechanism
    try:
        with chunks.Executor(report.info["n_jobs"], report.info["backend"], execution.scheduler, progress) as executor:
            return np.array([chunks.draw(executor, draw, n, seed, (side,), execution.chunk_size, shape, transform,
                                         desc=f"round {plan.index + 1}: confirmation samples on {label}", name=name,
                                         fold=(operator.add, 0))
                             for side, (draw, label) in enumerate(zip(draws, ("D", "D'")))])
    except KeyboardInterrupt:
        raise Interrupted(progress.summary()) from None


def _deciding(results):
    """The look's deciding test: the refuting one with the smallest p-value, else the smallest p-value."""
    return min(results, key=lambda r: (not r.refuted, r.p_value))


def _stop(results, later_looks):
    """("refuted" | "futile", the sum of the final look's predicted powers) after a look, or None to go on. Futility
    is judged on the round's own events: the sum over them of the final look's power if each event's
    delta were FUTILITY_SE standard errors above its estimate (a bound on the chance that any refutes)."""
    if any(r.refuted for r in results):
        return "refuted", None
    if not later_looks:
        return None
    final, power = later_looks[-1], 0.0
    for r in results:
        num = min(r.k_num / r.n + FUTILITY_SE * r.estimate_se, 1.0)
        power += float(confirmation.predicted_power(num, r.k_den / r.n, r.event.eps, r.event.delta, final.confirm,
                                                    final.level / confirmation.EVENTS))
    return ("futile", power) if power < FUTILITY_POWER else None


def _reason(stop, record, rounds, budget) -> str:
    code, power = stop
    where = f"round {record['round']} of {len(rounds)}, look {record['look']}"
    c = _deciding(record["results"])
    if code == "refuted":
        return (f"refuted in {where}: the confirmation's bound delta({c.event.eps:g}) >= {c.delta_lower:.4g} exceeds "
                f"the claimed {c.event.delta:g}")
    if code == "futile":
        return (f"futile after {where}: even if the tested events' delta were {FUTILITY_SE:g} standard errors above "
                f"their estimates, the round's last look would refute the claim with probability at most "
                f"{power:.2%} < {FUTILITY_POWER:.0%}")
    return f"budget spent: {len(rounds)} round(s), {budget:,} samples per side, none refuted the claim"


def _report(report, records, stop, rounds, skipped, budget, alpha, used, root, started) -> AuditReport:
    """The last screening audit's report, with the sequential verdict, the certificate of the deciding
    look at the tested delta, and the record of every look in info["sequential"]["rounds"]."""
    deciding = records[-1]
    c = _deciding(deciding["results"])
    tests = [result for record in records for result in record["results"]]
    p_value = confirmation.combined_p_value([t.p_value for t in tests], [t.level for t in tests], alpha)
    floor = float(bounds.detectable_floor(c.event.eps, c.n, c.n, c.level / 2)[0])
    delta = c.event.delta
    if c.refuted:
        label = "violation"
    else:
        label = "inconclusive" if floor > delta and (delta > 0 or floor >= 1) else "no violation found"
    report.verdict = Verdict(label, c.event.eps, delta, 1 - p_value if c.refuted else 1 - alpha, c.delta_lower,
                             max(c.estimate, 0.0), floor, c.event.direction, alpha, estimate_se=c.estimate_se)
    certificate = Certificate(delta, c.eps_lo, alpha, c.event.direction, c.event.threshold, None, None)
    report.certificates = [k for k in report.certificates if k.delta != delta] + [certificate]
    reason = _reason(stop, deciding, rounds, budget)
    report.samples_used, report.n_samples = used, budget
    report.seed = {"entropy": root.entropy, "spawn_key": list(root.spawn_key)}
    report.sequential = {
        "alpha": alpha, "budget": budget, "samples_used": used, "stopped": stop[0], "reason": reason, "p_value": p_value,
        "spending": "alpha * t^2, t = share of the planned confirmation samples (Lan & DeMets 1983; Kim & DeMets 1987)",
        "skipped_rounds": skipped, "schedule": [r.to_dict() for r in rounds],
        "rounds": [{k: v for k, v in r.items() if k != "results"} for r in records]}
    report.timings["total"] = time.perf_counter() - started
    return report

"""Input-pair search: choosing the neighbouring pair (D, D') to audit a mechanism on query vectors.

A black-box audit can only refute a claim on the pair it is shown. For a mechanism on a vector of k
query answers (a (1, k) dataset) under a declared sensitivity bound, the neighbouring pairs are
D = q, D' = q + s d with ||d|| <= 1 in the mechanism's norm (L-infinity unless it declares `norm`,
as StatDP's ALL_DIFFER inputs: every query moves by at most s; Ding, Wang, Wang, Zhang & Kifer 2018,
Section 6.1). The search, like StatDP's and DP-Sniper's (Bichsel et al. 2021), tries pairs and
keeps the one whose small audit looks most like a violation:

* the start pairs are the first trials, enqueued: StatDP's input patterns (`mechanisms.zoo.patterns`)
  by default, or the pairs given;
* then Optuna's TPE sampler (Bergstra, Bardenet, Bengio & Kegl 2011; Akiba et al. 2019) proposes
  pairs (`QueryPairs`) maximising a pilot objective: a small audit (`auditor.audit`, quadratic
  scorer) of the pair at `pilot_eps` (default the claimed eps0), read through `OBJECTIVES` (default
  "sweep": the threshold sweep's held-out estimate of delta(pilot_eps), the largest P-hat(S) -
  e^eps Q-hat(S) over the score's level sets in both directions; biased upward, but by about as
  much on every pair, it ranked the zoo's pairs better than the verdict's plug-in estimate
  "estimate", whose event, chosen on a pilot's few validation rows, is empty on most pairs at a
  small eps0 (docs/auditor/pair-search.md).
  `pilot_eps=0` reads the total variation distance delta(0) instead, the largest point of the
  curve and so the one small pilots estimate with the smallest relative error;
* the best `n_confirm` trials are audited again on fresh samples, and the best of these re-audits
  wins (one round of successive halving: Karnin, Koren & Somekh 2013), so that the winner is not
  merely the luckiest of many noisy pilots;
* the pilots together spend `fraction` of the sample budget, each on its own seed spawned from the
  search's root (spawn keys (1, trial) and (3, rank)); the final audit runs on the winning pair with
  the remaining samples, on spawn key (0,), so its samples are independent of every pilot and of the
  choice of the pair.

`audit_search` does both and records every trial (pair, pilot statistics, samples, seed), every
re-audit and why the winner won in `report.pair_search`; `search_pair` runs the pilots only.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.options import Execution, Scoring, Split
from .api import audit
from .reporting.progress import Interrupted, Progress
from .reporting.report import AuditReport
from .sampling.chunks import as_seed_sequence, chunk_seed
from .statistics.verdict import check_claim

#: Pilot objectives, from the pilot's statistics (larger = more evidence of a violation at pilot_eps).
OBJECTIVES = {
    "estimate": lambda s: s["estimate"],
    "estimate-se": lambda s: s["estimate"] - s["estimate_se"],
    "lower": lambda s: s["lower_bound"],
    "eps-lo": lambda s: s["eps_lo"],
    "sweep": lambda s: s["sweep"],
}
DEFAULT_OBJECTIVE = "sweep"  # detected at least as much of the zoo as the others (docs/auditor/pair-search.md)
_SEPARABLE = ("estimate", "estimate-se", "sweep")  # objectives on the scale of the plug-in's standard error
PILOT_MIN = 2_000  # samples per side of the smallest pilot
MAX_TRIALS = 24  # default trials at most: 24 detected more of the zoo than 48 (docs/auditor/pair-search.md)
_FINAL_KEY, _PILOT_KEY, _SAMPLER_KEY, _CONFIRM_KEY = 0, 1, 2, 3  # spawn keys under the search's root seed
_REACH = 3.0  # d_i is drawn in [-3, 3], then clipped to [-1, 1]: a third of the draws on each face


@dataclass(frozen=True)
class Search:
    """What the pair search explores, and how it spends its share of the budget.

    Parameters
    ----------
    dimension, sensitivity : k and the sensitivity s (default the mechanism's `sensitivity`); pairs
        move every query by at most s (in the mechanism's `norm`, default L-infinity).
    start : pairs (D, D') tried first (one pair or a list); default StatDP's patterns of dimension k.
    fraction : the share of the budget the pilots spend; the rest is the final audit's. With
        n_confirm = 0 the pilots are `n_trials` equal ones (default: as many as the share allows at
        2,000 samples per side, at most 24); otherwise half the share goes to them and half to
        re-auditing the `n_confirm` best trials on fresh seeds (one round of successive halving:
        Karnin, Koren & Somekh 2013), which choose the winner, free of the selection bias of the
        best of many noisy pilots. Every pilot has >= 2,000 samples per side.
    objective : a key of `OBJECTIVES` ("sweep" (default), "estimate", "estimate-se", "lower", "eps-lo").
    pilot_eps : the eps at which the pilots and re-audits are read (default None: the claimed eps0;
        0 reads the total variation distance). The final audit tests the claim at eps0 either way.
    pilot_scorer : the pilots' scorer (default "quadratic").
    box : (low, high) of the query values q; default s beyond the start pairs' values.
    """

    dimension: int | None = None
    sensitivity: float | None = None
    start: Any = None
    fraction: float = 0.2
    n_trials: int | None = None
    n_confirm: int = 4
    objective: str = DEFAULT_OBJECTIVE
    pilot_eps: float | None = None
    pilot_scorer: str = "quadratic"
    box: tuple[float, float] | None = None


@dataclass(frozen=True)
class QueryPairs:
    """The neighbouring pairs (q, q + s d) of (1, k) query vectors: q in [low, high]^k, ||d|| <= 1 in
    the norm `norm` (inf, 1 or 2), so that ||q - q'|| <= s = `sensitivity`. Each d_i is sampled in
    [-3, 3] and clipped to [-1, 1], so that two thirds of the draws sit on the faces of the cube, where
    StatDP's moves +-s lie (the violations of the zoo sit there); d is then scaled into the unit ball
    of `norm`."""

    dimension: int
    sensitivity: float
    low: float
    high: float
    norm: float = math.inf

    def suggest(self, trial) -> tuple[np.ndarray, np.ndarray]:
        """The pair an Optuna trial proposes: q_i, d_i sampled, d scaled into the unit ball."""
        q = np.array([trial.suggest_float(f"q{i}", self.low, self.high) for i in range(self.dimension)])
        d = np.array([trial.suggest_float(f"d{i}", -_REACH, _REACH) for i in range(self.dimension)])
        d = np.clip(d, -1.0, 1.0)
        d = d / max(1.0, float(np.linalg.norm(d, ord=self.norm)))
        return q.reshape(1, -1), (q + self.sensitivity * d).reshape(1, -1)

    def params(self, D, D_prime) -> dict:
        """The trial parameters of a given pair (for Optuna's enqueue_trial)."""
        q, q_prime = self.check(D, D_prime)
        d = (q_prime - q) / self.sensitivity
        return {**{f"q{i}": float(v) for i, v in enumerate(q)}, **{f"d{i}": float(v) for i, v in enumerate(d)}}

    def check(self, D, D_prime) -> tuple[np.ndarray, np.ndarray]:
        """(q, q') of a pair in the space; ValueError when it is not one."""
        q, q_prime = (np.asarray(x, dtype=float) for x in (D, D_prime))
        if q.shape != (1, self.dimension) or q_prime.shape != (1, self.dimension):
            raise ValueError(f"a start pair must be two (1, {self.dimension}) arrays of query answers, got shapes "
                             f"{q.shape} and {q_prime.shape}")
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(q_prime))):
            raise ValueError("a start pair must be finite")
        distance = float(np.linalg.norm((q_prime - q)[0], ord=self.norm))
        if distance > self.sensitivity * (1 + 1e-12):
            raise ValueError(f"a start pair is not neighbouring: ||q - q'||_{self.norm:g} = {distance:g} exceeds the "
                             f"sensitivity {self.sensitivity:g}")
        if q.min() < self.low or q.max() > self.high:
            raise ValueError(f"a start pair's D lies outside the search box [{self.low:g}, {self.high:g}]")
        return q[0], q_prime[0]

    def to_dict(self) -> dict:
        return {"dimension": self.dimension, "sensitivity": self.sensitivity,
                "norm": self.norm if math.isfinite(self.norm) else "inf", "box": [self.low, self.high]}


@dataclass
class PairSearch:
    """The outcome of `search_pair`: the winning pair, every trial, and the final audit's share."""

    D: np.ndarray
    D_prime: np.ndarray
    trials: list[dict]
    chosen: int
    reason: str
    final_samples: int
    final_seed: np.random.SeedSequence
    info: dict


def _seed_record(seq: np.random.SeedSequence) -> dict:
    return {"entropy": seq.entropy, "spawn_key": list(seq.spawn_key)}


def _sensitivity(mech, sensitivity) -> float:
    if sensitivity is None:
        sensitivity = getattr(mech, "sensitivity", None)
        if not isinstance(sensitivity, (int, float)):
            raise ValueError("the pair search needs the sensitivity bound: pass sensitivity=S (--sensitivity S)")
    if not (isinstance(sensitivity, (int, float)) and np.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be finite and > 0, got {sensitivity!r}")
    return float(sensitivity)


def _start_pairs(start, dimension, s, norm) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """[(source, D, D')] of the enqueued trials: the given pair(s), else StatDP's patterns that are
    neighbours in the mechanism's norm."""
    if start is None:
        from ..mechanisms.zoo import patterns

        if dimension is None:
            raise ValueError("the pair search needs the number of queries: pass dimension=K (--dimension K)")
        if int(dimension) != dimension or dimension < 2:
            raise ValueError(f"dimension must be an integer >= 2 (the number of query answers), got {dimension!r}")
        return [(f"StatDP pattern: {name}", D, D_prime) for name, (D, D_prime) in patterns(int(dimension), s).items()
                if np.linalg.norm((D_prime - D)[0], ord=norm) <= s * (1 + 1e-12)]
    try:
        pairs = np.asarray(start, dtype=float)
    except (TypeError, ValueError):
        pairs = None
    if pairs is None or pairs.ndim not in (3, 4) or pairs.shape[-3:-1] != (2, 1):
        raise ValueError("start must be a pair (D, D') of (1, k) arrays of query answers, or a list of such pairs")
    pairs = pairs.reshape(-1, 2, 1, pairs.shape[-1])
    if dimension is not None and pairs.shape[-1] != dimension:
        raise ValueError(f"the start pairs have {pairs.shape[-1]} queries, not dimension={dimension}")
    return [("given", D, D_prime) for D, D_prime in pairs]


def _claim(mech, claimed) -> tuple[float, float]:
    if claimed is None:
        claim = getattr(mech, "claim", None)
        if not callable(claim):
            raise ValueError("the pair search maximises a pilot statistic at the claimed eps: "
                             "pass claimed=(eps, delta)")
        claimed = claim()
    return check_claim(claimed)


def search_pair(mech, claimed=None, *, search: Search | None = None, n_samples: int = 10**6, seed=None,
                alpha: float = 0.05, features="auto", progress: bool | str | None = None) -> PairSearch:
    """Search the neighbouring pair of query vectors on which `mech` looks least like `claimed`.

    Parameters
    ----------
    mech : a mechanism on (1, k) query-answer datasets (a Mechanism, a registered name, a callable).
    claimed : (eps0, delta0); default the mechanism's `claim()`.
    search : what is explored and how (`Search`); None: the defaults.
    n_samples : the whole budget per side; the pilots spend `search.fraction` of it, the rest is the
        final audit's (`final_samples`).
    seed, alpha, progress : as for `ndis.audit`; `features` is the pilots' feature map.
    """
    search = search or Search()
    dimension, sensitivity, start, fraction, n_trials, n_confirm, objective, pilot_eps, pilot_scorer, box = (
        search.dimension, search.sensitivity, search.start, search.fraction, search.n_trials, search.n_confirm,
        search.objective, search.pilot_eps, search.pilot_scorer, search.box)
    plan = _plan(mech, claimed, dimension, sensitivity, start, n_samples, fraction, n_trials, n_confirm, objective,
                 pilot_eps, box)
    root = as_seed_sequence(seed)
    progress = Progress.auto(progress)
    started = time.perf_counter()

    def pilot(D, D_prime, n, pilot_seed, record):
        report = audit(mech, D, D_prime, eps=[plan.pilot_eps], n_samples=n, seed=pilot_seed,
                       claimed=(plan.pilot_eps, plan.delta0), scorer=Scoring(pilot_scorer, features), alpha=alpha,
                       progress=False)
        v = report.verdict
        stats = {"lower_bound": v.lower_bound, "estimate": v.estimate, "estimate_se": v.estimate_se,
                 "eps_lo": report.eps_lo(plan.delta0), "sweep": float(report.delta[0])}
        record.update(D=D[0].tolist(), D_prime=D_prime[0].tolist(), objective=float(OBJECTIVES[objective](stats)),
                      **stats, verdict=v.label, samples_per_side=n, seed=_seed_record(pilot_seed))
        return record

    trials, checks = _run_trials(plan, mech, pilot, root, progress, fraction)
    winner, reason = _choose(plan, trials, checks, objective)
    final_seed = chunk_seed(root, _FINAL_KEY)
    final_samples = int(n_samples) - plan.n_pilot * plan.n_trials - plan.n_check * plan.n_confirm
    progress.note(f"pair search: {reason}; the final audit runs on it with {final_samples:,} samples per side")
    info = {"space": plan.space.to_dict(), "sampler": "optuna TPESampler (multivariate)", "objective": objective,
            "pilot_eps": float(plan.pilot_eps), "claimed": [plan.eps0, plan.delta0], "fraction": fraction,
            "n_trials": plan.n_trials, "samples_per_pilot": plan.n_pilot, "n_confirm": plan.n_confirm,
            "samples_per_confirmation": plan.n_check, "pilot_samples": plan.total, "pilot_scorer": pilot_scorer,
            "starts": len(plan.starts), "seed": _seed_record(root), "trials": trials, "confirmations": checks,
            "chosen": winner["trial"], "reason": reason,
            "final": {"samples_per_side": final_samples, "seed": _seed_record(final_seed)},
            "seconds": time.perf_counter() - started}
    return PairSearch(np.array([winner["D"]]), np.array([winner["D_prime"]]), trials, winner["trial"], reason,
                      final_samples, final_seed, info)


@dataclass
class _SearchPlan:
    """The search's checked settings: the claim, the pilot eps, the sizes and the query space."""

    eps0: float
    delta0: float
    pilot_eps: float
    n_trials: int
    n_confirm: int
    n_pilot: int
    n_check: int
    starts: list
    space: QueryPairs

    @property
    def total(self) -> int:
        """Samples the pilots and confirmations draw, both sides."""
        return 2 * (self.n_trials * self.n_pilot + self.n_confirm * self.n_check)


def _plan(mech, claimed, dimension, sensitivity, start, n_samples, fraction, n_trials, n_confirm, objective,
          pilot_eps, box) -> _SearchPlan:
    """Every setting of `search_pair` checked (ValueError naming it) before any sampling."""
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown pilot objective {objective!r}; allowed: {', '.join(OBJECTIVES)}")
    if not 0 < fraction < 1:
        raise ValueError(f"the search fraction must lie in (0, 1), got {fraction}")
    budget = int(fraction * n_samples)
    if n_trials is None:
        n_trials = max(1, n_confirm, min(MAX_TRIALS, (budget if n_confirm == 0 else budget // 2) // PILOT_MIN))
    if int(n_trials) != n_trials or n_trials < 1:
        raise ValueError(f"n_trials must be an integer >= 1, got {n_trials!r}")
    if int(n_confirm) != n_confirm or not 0 <= n_confirm <= n_trials:
        raise ValueError(f"n_confirm must be an integer in [0, n_trials], got {n_confirm!r}")
    n_trials, n_confirm = int(n_trials), int(n_confirm)
    eps0, delta0 = _claim(mech, claimed)
    if pilot_eps is None:
        pilot_eps = eps0
    if not (isinstance(pilot_eps, (int, float)) and 0 <= pilot_eps < math.inf):
        raise ValueError(f"pilot_eps must be a finite number >= 0 (or None: the claimed eps), got {pilot_eps!r}")
    n_pilot = (budget if n_confirm == 0 else budget // 2) // n_trials
    n_check = 0 if n_confirm == 0 else (budget - n_pilot * n_trials) // n_confirm
    smallest = min(n_pilot, n_check) if n_confirm else n_pilot
    if smallest < PILOT_MIN:
        raise ValueError(f"the pair search's share ({fraction:g} x {n_samples:,} = {budget:,} samples per side) leaves "
                         f"{smallest:,} per pilot for {n_trials} trials and "
                         f"{n_confirm} confirmations, fewer than {PILOT_MIN:,}: raise n_samples or the fraction, or "
                         f"lower the number of trials")
    s = _sensitivity(mech, sensitivity)
    norm = float(getattr(mech, "norm", math.inf))
    if norm not in (1.0, 2.0, math.inf):
        raise ValueError(f"the mechanism's norm must be 1, 2 or inf, got {norm}")
    starts = _start_pairs(start, dimension, s, norm)
    values = np.concatenate([D.ravel() for _, D, _ in starts])
    low, high = (float(values.min()) - s, float(values.max()) + s) if box is None else map(float, box)
    if not low < high:
        raise ValueError(f"the search box must have low < high, got {box}")
    space = QueryPairs(starts[0][1].shape[1], s, low, high, norm)
    for _, D, D_prime in starts:
        space.check(D, D_prime)
        _check_neighbour(mech, D, D_prime)
    return _SearchPlan(eps0, delta0, pilot_eps, n_trials, n_confirm, n_pilot, n_check, starts, space)


def _run_trials(plan: _SearchPlan, mech, pilot, root, progress, fraction) -> tuple[list, list]:
    """The pilots (start pairs first, then TPE's proposals) and the confirmations of the best on fresh
    seeds: (trials, confirmations), each a list of `pilot` records."""
    study = _study(root, len(plan.starts), plan.n_trials)
    for _, D, D_prime in plan.starts[:plan.n_trials]:
        study.enqueue_trial(plan.space.params(D, D_prime))
    sources = [source for source, _, _ in plan.starts]
    trials, checks = [], []
    confirmations = f", {plan.n_confirm} confirmations x {plan.n_check:,}" if plan.n_confirm else ""
    title = (f"pair search ({plan.n_trials} trials x {plan.n_pilot:,}{confirmations} samples per side, "
             f"{fraction:.0%} of the budget, read at eps = {plan.pilot_eps:g})")
    try:
        with progress.phase(title, plan.total) as advance, _quiet_optuna():
            for number in range(plan.n_trials):
                trial = study.ask()
                D, D_prime = plan.space.suggest(trial)
                _check_neighbour(mech, D, D_prime)
                source = sources[number] if number < len(sources) else "tpe"
                trials.append(pilot(D, D_prime, plan.n_pilot, chunk_seed(root, _PILOT_KEY, number),
                                    {"trial": number, "source": source}))
                study.tell(trial, trials[-1]["objective"])
                advance(2 * plan.n_pilot)
            for rank, best in enumerate(sorted(trials, key=lambda t: -t["objective"])[:plan.n_confirm]):
                D, D_prime = np.array([best["D"]]), np.array([best["D_prime"]])
                checks.append(pilot(D, D_prime, plan.n_check, chunk_seed(root, _CONFIRM_KEY, rank),
                                    {"confirms": best["trial"], "rank": rank}))
                advance(2 * plan.n_check)
    except KeyboardInterrupt:
        raise Interrupted(f"{progress.summary()}; the pair search completed {len(trials)} of {plan.n_trials} trials "
                          f"and {len(checks)} of {plan.n_confirm} confirmations") from None
    return trials, checks


def _choose(plan: _SearchPlan, trials, checks, objective) -> tuple[dict, str]:
    """(winning trial, why): the best confirmation's trial, or without confirmations the best pilot."""
    if checks:
        order = sorted(checks, key=lambda c: -c["objective"])
        winner = trials[order[0]["confirms"]]
        reason = (f"trial {winner['trial']} ({winner['source']}), one of the {plan.n_confirm} best of {plan.n_trials} "
                  f"trials, has the largest {objective} = {order[0]['objective']:.4g} on its confirmation audit of "
                  f"{plan.n_check:,} fresh samples per side")
        if len(order) > 1:
            reason += f" (next: trial {order[1]['confirms']}, {order[1]['objective']:.4g})"
            reason += _separation(order[0], order[1], objective)
        return winner, reason
    order = sorted(trials, key=lambda t: -t["objective"])
    winner = order[0]
    reason = (f"trial {winner['trial']} ({winner['source']}) has the largest pilot {objective} = "
              f"{winner['objective']:.4g} of {plan.n_trials} trials")
    if len(order) > 1:
        reason += f" (next: trial {order[1]['trial']}, {order[1]['objective']:.4g})"
    return winner, reason


def audit_search(mech, claimed=None, *, search: Search | None = None, eps=None, n_samples: int = 10**6,
                 alpha: float = 0.05, seed=None, scorer="auto", split: Split | None = None,
                 execution: Execution | None = None, progress: bool | str | None = None) -> AuditReport:
    """`search_pair`, then `audit` of the winning pair with the remaining samples on a seed disjoint
    from the pilots'. `search` says what the search explores (`Search`); the other arguments are
    `ndis.audit`'s, for the final audit (alpha and the scorer's feature map also for the pilots).
    The report's `pair_search` records the search."""
    scoring = Scoring.of(scorer)
    found = search_pair(mech, claimed, search=search, n_samples=n_samples, seed=seed, alpha=alpha,
                        features=scoring.features, progress=progress)
    report = audit(mech, found.D, found.D_prime, eps=eps, n_samples=found.final_samples, seed=found.final_seed,
                   claimed=found.info["claimed"] if claimed is None else claimed, alpha=alpha, scorer=scoring,
                   split=split, execution=execution, progress=progress)
    report.pair_search = found.info
    report.neighbor = {"relation": "search", "row": None,
                       "how": f"pair search, trial {found.chosen} of {len(found.trials)} "
                              f"({found.trials[found.chosen]['source']})",
                       "D": found.D[0].tolist(), "D_prime": found.D_prime[0].tolist()}
    return report


def _separation(first: dict, second: dict, objective: str) -> str:
    """A warning when the two best confirmations differ by less than the standard error of the
    difference (from both audits' plug-in standard errors; objectives on that scale only): the
    order of the two is then not established by the data."""
    if objective not in _SEPARABLE:
        return ""
    gap, se = first["objective"] - second["objective"], math.hypot(first["estimate_se"], second["estimate_se"])
    if gap >= se:
        return ""
    text = f"; the confirmations do not separate the two (difference {gap:.3g}, standard error about {se:.3g})"
    if gap > 0:  # the standard error shrinks as 1/sqrt(n)
        needed = math.ceil(first["samples_per_side"] * (se / gap) ** 2)
        text += f": confirmations of about {needed:,} samples per side would separate them"
    return text


def _check_neighbour(mech, D, D_prime):
    is_neighbour = getattr(mech, "is_neighbour", None)
    if callable(is_neighbour) and not is_neighbour(D, D_prime):
        raise ValueError(f"the pair ({D[0].tolist()}, {D_prime[0].tolist()}) is not neighbouring under the "
                         f"mechanism's relation; is the search's sensitivity above the mechanism's?")


def _study(root, n_starts: int, n_trials: int):
    import optuna

    seed = int(chunk_seed(root, _SAMPLER_KEY).generate_state(1)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True,
                                             n_startup_trials=max(n_starts, min(10, n_trials // 3)))
    with _quiet_optuna():
        return optuna.create_study(direction="maximize", sampler=sampler)


@contextlib.contextmanager
def _quiet_optuna():
    """Optuna's per-trial log lines and experimental warnings off, restored after."""
    import optuna

    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            yield
    finally:
        optuna.logging.set_verbosity(level)

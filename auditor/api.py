"""`audit`: sample a mechanism on D and D', train a score, and estimate its privacy spectrum.

The mechanism's data-dependent set-up is done once per dataset: `sampling` prepares one sampler
for D and one for D', and every chunk (shape probe, training and held-out samples) is drawn from
them. A black-box neighbour screen prepares each candidate D' once, shares D's sampler, and hands
the chosen candidate's sampler on to the audit; it spends at most `screen_fraction` of the sample
budget. Every phase is counted in samples by `auditor.reporting.progress.Progress`; Ctrl-C raises
`auditor.reporting.progress.Interrupted`, whose message says what was completed.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import numbers
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core import budget, neighbors as relations
from ..core.options import Execution, Scoring, Split
from ..core.validation import as_data, as_eps_grid, as_int
from .eureka import eureka_spectrum
from .reporting.exact import exact_curve
from .reporting.progress import Interrupted, Progress
from .reporting.report import TYPED, AuditReport, partial_report, versions
from .sampling import adapters, chunks, neighbors
from .scoring import features as features_module, scorers, selection
from .statistics import claims, gdp, histogram, spectrum
from .statistics.bounds import detectable_floor, samples_for_floor
from .statistics.certify import DEFAULT_DELTA, SEED_KEY, certify_all
from .statistics.verdict import check_claim, judge

#: The eps grid of an audit given none (`eps=None`): 41 points from 0 to 2.
DEFAULT_EPS = np.linspace(0.0, 2.0, 41)
_PROBE_KEY = 7  # spawn-key prefix of the shape probe, disjoint from the sample streams (0, 1)
_SCORER_KEY = 2  # spawn-key prefix of scorer seeds
_PILOT_KEY = 8  # spawn-key prefix of the neighbour screen: its samples are independent of the audit's
_N_CANDIDATES = 6  # rows screened when the budget allows
_PILOT_MIN = 1_000  # samples per side of the smallest pilot audit worth running


class _Score:
    """Picklable held-out transform: features, then the fitted scorer's log-odds."""

    def __init__(self, feature_map, scorer):
        self.feature_map, self.scorer = feature_map, scorer

    def __call__(self, samples):
        return self.scorer.log_odds(self.feature_map(samples))


class _Features:
    """Picklable training transform: the column-wise concatenation of candidate feature maps."""

    def __init__(self, maps):
        self.maps = maps

    def __call__(self, samples):
        return np.concatenate([m(samples) for m in self.maps], axis=1)


def _check_grid(eps):
    """ValueError for eps beyond `core.budget.MAX_EPS` = 709.78, where e^eps overflows float64."""
    if eps.max() > budget.MAX_EPS:
        raise ValueError(f"eps must be at most {budget.MAX_EPS:.2f} (beyond it e^eps overflows double precision), "
                         f"got {eps.max():g}")


def _check_power(eps, n_held, alpha):
    """ValueError when no outcome of the audit could give a positive lower bound at any eps, with the
    samples per side that would (found by doubling, up to 10^15, where the floor is still computed accurately)."""
    level = alpha / (4 * eps.size)
    if detectable_floor(eps.min(), n_held, n_held, level)[0] < 1:
        return
    needed = n_held
    while detectable_floor(eps.min(), needed, needed, level)[0] >= 1 and needed < 10**15:
        needed *= 2
    advice = (f"use at least about {budget.count(2 * needed)} samples per side or a larger alpha" if needed < 10**15
              else f"no sample size up to 10^15 per side can at the smallest eps {eps.min():g}: start the grid lower")
    raise ValueError(f"too few samples for alpha={alpha}: {n_held} held-out samples per side cannot certify any "
                     f"delta > 0 on this grid; {advice}")


def _scorer_factories(scorer) -> list:
    """[(label, factory)] of the scorers to compare: a registered name, "auto", or a Scorer object."""
    if isinstance(scorer, str):
        names = scorers.AUTO_CANDIDATES if scorer == "auto" else (scorer,)
        options = scorers.AUTO_OPTIONS if scorer == "auto" else {}
        for name in names:
            scorers.make(name)  # unknown names fail here, before any sampling
        return [(name, lambda name=name: scorers.make(name, **options.get(name, {}))) for name in names]
    if isinstance(scorer, scorers.Scorer):
        return [(getattr(scorer, "name", type(scorer).__name__), lambda: scorer)]
    raise TypeError(f"scorer must be 'auto', a registered name ({', '.join(scorers.names())}) or an object "
                    f"satisfying the ndis.auditor.Scorer protocol (fit(X_p, X_q, seed) -> self, log_odds(X) -> (n,) "
                    f"array); got {type(scorer).__name__}")


def _dataset(data, name: str, required: bool):
    """`data` validated as a dataset (core.validation.as_data) when a neighbour relation needs one or
    when it is a numeric 2-D array; other objects, for plug-in callables, pass unchanged."""
    is_matrix = isinstance(data, np.ndarray) and data.ndim == 2 and np.issubdtype(data.dtype, np.number)
    return as_data(data, name) if required or is_matrix else data


def _output_shape(mech, draws, data, root, executor, name):
    """Per-sample output shape, from `output_shape(D)` or from a probe draw of the prepared samplers
    (no extra set-up); the same for D and D'."""
    declared = getattr(mech, "output_shape", None)
    shapes = []
    for side, (draw, dataset, label) in enumerate(zip(draws, data, ("D", "D'"))):
        if callable(declared):
            shapes.append(tuple(int(s) for s in np.atleast_1d(declared(dataset))))
            continue
        probe = chunks.draw(executor, draw, 2, root, (_PROBE_KEY, side), 2, None, desc=f"probe on {label}",
                              name=name, count=False)
        shapes.append(probe.shape[1:])
    if shapes[0] != shapes[1]:
        raise ValueError(f"the mechanism's outputs on D and D' have different shapes {shapes[0]} and {shapes[1]}")
    return shapes[0]


def _relation(mech, D_prime, neighbor) -> relations.Neighbor | None:
    """The neighbour spec (`core.neighbors.Neighbor`); without one, `core.neighbors.DEFAULT_NEIGHBOR`
    when D' is missing, else the mechanism's declared relation (or None)."""
    if neighbor == "search":
        raise ValueError("neighbor='search' is `ndis.auditor.audit_search(mech, claimed, dimension=K, sensitivity=S)`: "
                         "the pair search, then the audit of the pair found (auditor.pair_search)")
    if neighbor is not None:
        return relations.Neighbor.parse(neighbor)
    if D_prime is None:
        return relations.Neighbor.parse(relations.DEFAULT_NEIGHBOR)
    declared = getattr(mech, "neighbor", None)
    return relations.Neighbor(declared) if isinstance(declared, str) and declared in relations.RELATIONS else None


def _replaced(D, D_prime, neighbor: relations.Neighbor | None):
    """D' built from the spec's `replacement` (the new row for replace:ROW, (column, value) for
    entry:ROW), or D_prime unchanged without one."""
    if neighbor is None or neighbor.replacement is None:
        if (neighbor is not None and neighbor.relation not in relations.ROW_RELATIONS and D_prime is None
                and isinstance(neighbor.row, int)):
            raise ValueError(f"neighbor='{neighbor}' needs the new values: Neighbor('{neighbor.relation}', "
                             f"{neighbor.row}, replacement=...) (the new row for replace, (column, value) for entry); "
                             "or pass D_prime")
        return D_prime
    if D_prime is not None:
        raise ValueError("give either D_prime or a neighbour's replacement, not both")
    return relations.make(D, neighbor.relation, neighbor.row, neighbor.replacement)


def _check_different(D, D_prime):
    """ValueError when D' is D itself: there is nothing to tell apart."""
    try:
        same = np.shape(D) == np.shape(D_prime) and bool(np.array_equal(D, D_prime))
    except (TypeError, ValueError):
        same = False
    if same:
        raise ValueError("D_prime is identical to D: an audit compares two different datasets (neighbours differ "
                         "in one record)")


def _check_neighbors(D, D_prime, relation, declared: bool) -> int:
    """core.neighbors.check, with a hint when the relation is only the mechanism's declared one."""
    try:
        return relations.check(D, D_prime, relation)
    except ValueError as error:
        if declared:
            raise ValueError(f"{error} ('{relation}' is the mechanism's declared relation; pass neighbor=... "
                             f"to audit another: {', '.join(relations.RELATIONS)})") from None
        raise


def _mechanism_info(mech, sampler):
    params = getattr(mech, "params", None)
    return {"mechanism": getattr(sampler, "name", "mechanism"), "kind": sampler.kind,
            "params": dict(params) if isinstance(params, dict) else None}


def _samples_for_held_out(n_held, train_fraction, max_train) -> int:
    """The samples per side whose split (`budget.split`) holds out at least n_held."""
    n = int(np.ceil(n_held / (1 - train_fraction)))
    return n if int(n * train_fraction) <= max_train else int(n_held + max_train)


@dataclass
class _Plan:
    """Everything `audit` checked before any work: the mechanism as a sampler, the datasets and the
    neighbour relation, the grid, the claims, the scorers, the sample budget and its split, and how
    the samples are drawn."""

    mech: object
    sampler: object
    D: object
    D_prime: object
    neighbor: relations.Neighbor | None
    row: int | None
    eps: np.ndarray
    alpha: float
    n_samples: int
    scoring: Scoring
    split: Split
    execution: Execution
    claimed: tuple | None
    curve_claim: claims.ClaimedCurve | None
    factories: list | None
    sizes: tuple | None
    root: np.random.SeedSequence


def audit(mech, D, D_prime=None, *, eps=None, n_samples: int = 10**6, claimed=None, alpha: float = 0.05, seed=None,
          neighbor: str | relations.Neighbor | None = None, scorer="auto", split: Split | None = None,
          execution: Execution | None = None,
          progress: bool | str | Callable[[str], None] | None = None) -> AuditReport:
    """Black-box privacy spectrum of `mech` on the neighbouring datasets (D, D').

    The phases, in order: validate every argument (`_validate`; nothing is sampled before it
    passes); prepare the samplers of D and D', choosing D' when only a neighbour spec is given
    (`_prepare_pair`); train the score on the training samples (`_train_scorer`); count the
    held-out scores (`_count_held_out`) and estimate the spectrum; certify, judge the claim and
    write the report (`_conclude`).

    Parameters
    ----------
    mech : a Mechanism (has `sampler(D)` or `sample(D, n, rng)`), a registered name such as
        "gaussian" (with its default parameters; `ndis.get_mechanism(name, **parameters)` sets them),
        a batched callable f(data, n, rng) -> (n, ...), a per-sample callable f(data, rng) -> sample
        (batched and parallelised here), or one of the wrappers `auditor.batched` /
        `auditor.per_sample`, which also take the mechanism's known exact curve (`exact=`) to draw
        beside the estimate.
    D, D_prime : the datasets: 2-D arrays (rows = records) whenever a neighbour relation is used
        (validated by `ndis.core.validation.as_data`, as is any numeric 2-D array); plug-in
        callables may take any other objects. D_prime may be None: the neighbour spec then makes D'.
    eps : grid of finite eps values up to `core.budget.MAX_EPS` = 709.78, where e^eps overflows
        (negative ones allowed: delta(eps) >= 1 - e^eps there). None: `DEFAULT_EPS`, 41 points from
        0 to 2.
    n_samples : samples per side; `split` says how they are spent (training, validation, held
        out). Sizes whose estimated memory (`core.budget.estimate`: grid, sampling tasks, training
        samples, output chunks) exceeds what the machine has available are refused before any work.
    claimed : (eps0, delta0) to test, delta0 = 0 for pure DP; gives `report.verdict` ("violation",
        "no violation found" or "inconclusive", never a proof of privacy) and, when not violated and
        delta0 > 0, the samples per side that would make delta0 detectable (`report.samples_needed`).
        Anything else is a claimed curve (`auditor.statistics.claims`: arrays (eps, delta), a CSV
        path, a callable, a GaussianPair or Spectrum, `gaussian_dp(mu)`, a dp_accounting PLD,
        accountant or DpEvent), checked at every eps of the grid against the simultaneous lower
        bound: `report.claim` ("refuted" / "not refuted", `claims.ClaimCheck`).
    alpha : the lower bound holds simultaneously over the grid with probability >= 1 - alpha; the
        verdict and each certified epsilon (`report.eps_lo(delta)`) are separate statements, each
        at confidence 1 - alpha (all of them together: 1 - (2 + number of deltas) alpha, by a
        union bound).
    seed : None (default: fresh entropy, recorded in `report.seed`), an int or a SeedSequence; the
        same seed gives the same report for any workers or backend, so
        `audit(..., seed=report.seed.entropy)` re-runs an audit exactly.
    neighbor : the neighbour relation: a spec string ("remove", "zero:3", "remove:worst", ...;
        `core.neighbors`) or a `core.neighbors.Neighbor` (which also carries the new values of a
        replace or entry neighbour). Without one, D' is chosen by `core.neighbors.DEFAULT_NEIGHBOR`
        ("remove:worst", as on the command line) when D_prime is None; a given D_prime is checked
        to be a neighbour of D under the relation (or the mechanism's declared `neighbor`), and must
        differ from D. The black-box "worst" screen is recorded in `report.screen`.
    scorer : the score: "auto", a registered scorer's name, a `Scorer` object, or a `Scoring` (which
        also sets the feature map and the method, `ndis.Scoring`).
    split : how each side's samples are spent (`ndis.Split`); None: the defaults.
    execution : where and how the samples are drawn: workers, backend, chunks, streaming, a time
        limit (`ndis.Execution`); None: the defaults (a mechanism of ndis, `thread_safe`,
        on one thread per core; any other sampler sequentially).
    progress : None (default) = tqdm bars counting samples on a terminal or in a notebook, else lines on
        stderr (one per phase, and one every 10 s of a long one); True = bars, False = silent, "bars" /
        "lines", or a callable that gets the lines instead of stderr (`auditor.reporting.progress`).

    Returns
    -------
    AuditReport
        With the threshold method it certifies an epsilon (`auditor.statistics.certify`) at delta = 0,
        at `certify.DEFAULT_DELTA` = 1e-5 and at the claimed delta: `report.eps_lo(delta)`, and a
        Gaussian-DP parameter with the score's trade-off view (`auditor.statistics.gdp`):
        `report.gdp.mu_lo`. `report.timings` holds the wall time in seconds of each phase, in the
        order they ran, and the `total`.

    Raises
    ------
    progress.Interrupted (a KeyboardInterrupt) on Ctrl-C, saying which phase was under way and
    what was completed; its `partial` is the partial report (`reporting.report.partial_report`:
    the phases completed and what they found).

    See Also
    --------
    audit_sequential : the same audit of a claim in rounds that stop as soon as it is refuted.
    """
    started = time.perf_counter()
    plan = _validate(mech, D, D_prime, eps, n_samples, claimed, alpha, seed, neighbor, scorer, split, execution)
    timings = {"validation": time.perf_counter() - started}
    progress = Progress.auto(progress)
    run = plan.execution
    executor = chunks.Executor(run.n_jobs, run.backend, run.scheduler, progress, dashboard=run.dashboard,
                               thread_safe=plan.sampler.thread_safe)
    info = {**_mechanism_info(plan.mech, plan.sampler), "n_samples": plan.n_samples, "alpha": plan.alpha,
            "method": plan.scoring.method, "seed": {"entropy": plan.root.entropy, "spawn_key": list(plan.root.spawn_key)},
            "n_jobs": executor.workers, "backend": executor.backend}
    try:
        with executor:
            with _timed(timings, "preparation"):
                draws, shape = _prepare_pair(plan, executor, info)
            curves, evidence = _estimate(plan, draws, shape, executor, timings, info)
        report = _conclude(plan, curves, evidence, info, progress.sampling_rate(), timings)
    except KeyboardInterrupt:
        summary = progress.summary()
        raise Interrupted(summary, partial_report(progress.done, info, summary)) from None
    timings["total"] = time.perf_counter() - started
    report.timings = timings
    info["phases"] = progress.done
    return report


@contextlib.contextmanager
def _timed(timings: dict, phase: str):
    """Adds the wall time of the block to timings[phase] (`report.timings`, `ndis audit --verbose`)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[phase] = timings.get(phase, 0.0) + time.perf_counter() - started


def _validate(mech, D, D_prime, eps, n_samples, claimed, alpha, seed, neighbor, scorer, split, execution) -> _Plan:
    """Phase 1: every argument checked (ValueError / TypeError naming it) before anything is sampled,
    and the sizes checked against the memory available (`core.budget`). The option groups checked
    themselves when they were made (`core.options`)."""
    mech = adapters.resolve(mech)
    eps = as_eps_grid(DEFAULT_EPS if eps is None else eps)
    _check_grid(eps)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    n_samples = as_int("n_samples", n_samples)
    scoring = Scoring.of(scorer)
    split, execution = split or Split(), execution or Execution()
    for name, value, kind in (("split", split, Split), ("execution", execution, Execution)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} must be an ndis.{kind.__name__} or None, got {type(value).__name__}")
    claimed, curve_claim = _claims(claimed, scoring.method, eps)
    factories = sizes = None
    if scoring.method == "threshold":
        factories = _scorer_factories(scoring.scorer)
        sizes = budget.split(n_samples, *split.training)
        _check_power(eps, sizes[2], alpha)
    budget.check(eps.size, n_samples, execution.max_seconds, sizes=sizes or (n_samples, 0, 0),
                 n_jobs=execution.n_jobs, streaming=execution.streaming)
    root = chunks.as_seed_sequence(seed)
    sampler = adapters.as_sampler(mech, execution.literal)
    relation = _relation(mech, D_prime, neighbor)
    D = _dataset(D, "D", relation is not None)
    D_prime = _replaced(D, D_prime, relation)
    row = relation.row if relation is not None and relation.replacement is not None else None
    if D_prime is not None:
        D_prime = _dataset(D_prime, "D_prime", relation is not None)
        _check_different(D, D_prime)
        if relation is not None and relation.replacement is None:
            row = _check_neighbors(D, D_prime, relation.relation, declared=neighbor is None)
    return _Plan(mech, sampler, D, D_prime, relation, row, eps, alpha, n_samples, scoring, split, execution, claimed,
                 curve_claim, factories, sizes, root)


def _claims(claimed, method, eps):
    """(claimed point or None, claimed curve or None); a curve is evaluated on the grid here, so that a
    claim that fails or gives no delta in [0, 1] is reported before any sampling."""
    curve_claim = None
    if claimed is not None and not claims.is_point_claim(claimed):
        curve_claim, claimed = claims.claimed_curve(claimed), None
        if method == "eureka":
            raise ValueError("a claimed curve is checked by method='threshold' only")
        curve_claim(eps)
    if claimed is not None:
        check_claim(claimed)
        if method == "eureka":
            raise ValueError("a claimed (eps, delta) is tested by method='threshold' only")
    return claimed, curve_claim


def _prepare_pair(plan: _Plan, executor, info):
    """Phase 2: the prepared samplers of D and D' (choosing D' when only a neighbour spec is given,
    `_choose_neighbour`) and the per-sample output shape; the neighbour and the screen go to `info`.
    Returns (draws, shape)."""
    draw_D = plan.sampler.prepare(plan.D)
    screen, row, how = None, plan.row, "given"
    fraction, chunk_size = plan.split.screen_fraction, plan.execution.chunk_size
    if plan.D_prime is None:
        budget_samples = int(fraction * plan.n_samples)
        pilot_options = dict(eps=plan.eps, alpha=plan.alpha, features=plan.scoring.features, chunk_size=chunk_size,
                             split=plan.split)
        row, plan.D_prime, how, draw_D_prime, screen = _choose_neighbour(
            plan.mech, plan.sampler, plan.D, draw_D, plan.neighbor, chunks.chunk_seed(plan.root, _PILOT_KEY),
            executor, pilot_options, budget_samples, fraction)
    else:
        draw_D_prime = plan.sampler.prepare(plan.D_prime)
    draws = (draw_D, draw_D_prime)
    shape = _output_shape(plan.mech, draws, (plan.D, plan.D_prime), plan.root, executor, plan.sampler.name)
    relation = None if plan.neighbor is None else plan.neighbor.relation
    info.update(output_shape=list(shape),
                chunk_size=int(chunk_size) if chunk_size else "min(n / 20, 32 MB of output) per phase",
                neighbor={"relation": relation, "row": row, "how": how}, screen=screen, versions=versions())
    return draws, shape


def _estimate(plan: _Plan, draws, shape, executor, timings, info):
    """Phases 3 and 4: the curves (and the threshold method's evidence) by the chosen method."""
    run, scoring = plan.execution, plan.scoring
    if scoring.method == "eureka":
        with _timed(timings, "estimation"):
            curves = eureka_spectrum(draws, plan.eps, plan.n_samples, plan.root, executor, run.chunk_size, shape,
                                     plan.alpha, scoring.features, plan.mech, plan.sampler.name, **scoring.eureka)
        info.update(curves.pop("info"))
        return curves, None
    return _threshold_method(plan.mech, draws, plan.eps, plan.root, executor, run.chunk_size, shape, plan.alpha,
                             plan.factories, scoring.features, plan.sizes, timings, info, plan.sampler.name,
                             streaming=run.streaming)


def _conclude(plan: _Plan, curves, evidence, info, sampling_rate, timings) -> AuditReport:
    """Phase 5: the exact curve, the certificates (eps_lo, mu_lo), the verdict on a claimed point and
    the check of a claimed curve, as the report."""
    exact = getattr(plan.sampler, "exact", None)
    try:
        with _timed(timings, "exact_curve"):
            exact_values, info["theory"] = exact_curve(plan.mech, plan.D, plan.D_prime, plan.eps, exact)
    except (ValueError, np.linalg.LinAlgError) as error:
        if exact is not None:
            raise
        warnings.warn(f"the exact curve of {info['mechanism']} could not be computed ({error}); report.theory is None")
        exact_values, info["theory"] = None, f"failed: {error}"
    with _timed(timings, "certificates_and_verdict"):
        verdict, certificates, gdp_certificate, claim_check = _certify(plan, curves, evidence, info, sampling_rate)
    records = {name: info.pop(name) for name in TYPED if name in info}   # what the partial report kept in info
    return AuditReport(**curves, exact=exact_values, verdict=verdict, certificates=certificates, info=info,
                       evidence=evidence, claim=claim_check, gdp=gdp_certificate, samples_used=plan.n_samples,
                       **records)


def _certify(plan: _Plan, curves, evidence, info, sampling_rate) -> tuple:
    """(verdict, certificates, GDP certificate, claim check) of `_conclude`; the samples a suspicious
    verdict would need go to info."""
    verdict, certificates, gdp_certificate, claim_check = None, [], None, None
    alpha, claimed = plan.alpha, plan.claimed
    if plan.scoring.method == "threshold":
        deltas = sorted({0.0, DEFAULT_DELTA} | ({check_claim(claimed)[1]} if claimed is not None else set()))

        def certify_gdp():
            found = gdp.certify_gdp(evidence.roc_valid, evidence.held, alpha, n_select=evidence.n_valid)
            found.tradeoff = gdp.tradeoff_view(evidence.held.roc(), evidence.held.n_p, evidence.held.n_q, alpha)
            return found

        certificates, gdp_certificate = _side_by_side(
            lambda: certify_all(evidence.roc_valid, evidence.held, deltas, alpha, n_select=evidence.n_valid,
                                seed=evidence.seed),
            certify_gdp, parallel=info["n_jobs"] > 1)
    if claimed is not None:
        verdict = judge(claimed, evidence.roc_valid, evidence.held, alpha, n_select=evidence.n_valid)
        if verdict != "violation" and verdict.delta > 0:
            _samples_needed(verdict, sampling_rate, plan.split.train_fraction, plan.split.max_train, info)
    if plan.curve_claim is not None:
        claim_check = claims.check(plan.curve_claim, curves["lower"], curves["estimate"], alpha)
        claim_check.tradeoff = plan.curve_claim.tradeoff(gdp.TRADEOFF_POINTS, plan.eps)
    return verdict, certificates, gdp_certificate, claim_check


def _side_by_side(first, second, parallel: bool):
    """(first(), second()), the second on another thread when `parallel`: numpy's passes over the
    events release the GIL (eps_lo and mu_lo at 10^7 samples per side: about 0.1 s each)."""
    if not parallel:
        return first(), second()
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ndis-certify") as pool:
        later = pool.submit(second)
        return first(), later.result()


def _samples_needed(verdict, rate, train_fraction, max_train, info):
    """Fill in the samples per side (and the time at the measured sampling rate) that would make the
    claimed delta detectable at the claimed eps (`bounds.samples_for_floor`)."""
    held = samples_for_floor(verdict.eps, verdict.delta, verdict.alpha / 4)
    verdict.samples_needed = _samples_for_held_out(held, train_fraction, max_train)
    verdict.seconds_needed = None if rate is None else 2 * verdict.samples_needed / rate
    info["samples_needed"] = {"samples_per_side": verdict.samples_needed, "held_out_per_side": held,
                              "sampling_rate": rate, "seconds": verdict.seconds_needed}


def _choose_neighbour(mech, sampler, D, draw_D, neighbor, seed, executor, pilot_options, budget_samples, fraction):
    """(row, D', how, prepared sampler of D', screen info) for a neighbour spec (`neighbors.select`).

    A black-box screen scores up to 6 candidate D' by small audits (quadratic scorer,
    `pilot_options`) of equal size, together at most `budget_samples` samples per side, rooted at `seed`,
    whose streams are disjoint from the audit's. With room for fewer than two pilots of 1,000
    samples per side, the largest-leverage row is taken unscreened. The screen reuses D's prepared
    sampler, prepares each candidate once, and returns the chosen candidate's sampler.
    """
    n_candidates = min(_N_CANDIDATES, budget_samples // _PILOT_MIN)
    n_candidates = n_candidates if n_candidates >= 2 else 1
    n_pilot = budget_samples // n_candidates
    prepared, scores, started = {}, {}, time.perf_counter()
    phase = contextlib.ExitStack()
    title = (f"neighbour screen ({n_candidates} rows x {n_pilot:,} samples per side, "
             f"{fraction:.0%} of the budget)")

    def pilot(row, D_candidate):
        if not scores:
            phase.enter_context(executor.progress.phase(title, 2 * n_candidates * n_pilot))
        prepared[row] = sampler.prepare(D_candidate)
        draws = (draw_D, prepared[row])
        o = pilot_options
        shape = _output_shape(mech, draws, (D, D_candidate), seed, executor, sampler.name)
        curves, _ = _threshold_method(mech, draws, o["eps"], seed, executor, o["chunk_size"], shape, o["alpha"],
                                      _scorer_factories("quadratic"), o["features"],
                                      budget.split(n_pilot, *o["split"].training),
                                      {}, {}, sampler.name, prefix=f"screen row {row}: ")
        scores[row] = float(np.mean(curves["estimate"].delta))
        return scores[row]

    with phase:
        row, D_prime, how = neighbors.select(mech, D, neighbor.relation, neighbor.row, pilot, n_candidates=n_candidates,
                                             seed=seed)
    screen = None
    if how == "screen":
        screen = {"fraction": fraction, "rows": list(scores), "scores": list(scores.values()),
                  "samples_per_side": n_pilot, "samples": 2 * n_candidates * n_pilot,
                  "seconds": time.perf_counter() - started}
    elif how == "max-leverage":
        reason = (f"screen_fraction={fraction:g}" if fraction == 0 else
                  f"{fraction:.0%} of the budget is {budget_samples:,} samples per side, fewer than 2 x {_PILOT_MIN:,}")
        screen = {"fraction": fraction, "rows": [row], "skipped": f"{reason}: took row {row}, the largest-leverage row"}
        executor.progress.note(f"neighbour screen skipped ({screen['skipped']})")
    return row, D_prime, how, prepared[row] if how == "screen" else sampler.prepare(D_prime), screen


def _feature_candidates(features, mech, k_flat):
    """[(feature name, feature map)] to compare on validation log-loss."""
    feature_list = [features_module.resolve(features, mech)]
    if features == "auto" and feature_list[0][0] == "mechanism" and k_flat <= 64:
        feature_list.append(features_module.resolve("flatten"))  # dropped below if it is the same map
    return feature_list


def _threshold_method(mech, draws, eps, root, executor, chunk, shape, alpha, factories, features, sizes, timings,
                      info, name, prefix="", streaming=True):
    """Train the best (feature map, scorer) on the training samples (`_train_scorer`), then count
    (`streaming`) or keep the held-out scores (`_count_held_out`) and estimate the spectrum. `prefix`
    starts the names of the phases (progress and error messages).

    Returns ({estimate, lower, upper: Curves, floor}, spectrum.Evidence for certificates and verdict)."""
    n_fit, n_valid, n_held = sizes
    feature_list = _feature_candidates(features, mech, int(np.prod(shape)))
    widths = np.cumsum([0] + [m(np.zeros((1, *shape))).shape[1] for _, m in feature_list])
    found = budget.check(eps.size, sum(sizes), sizes=sizes, output_size=int(np.prod(shape)),
                         feature_width=int(widths[-1]), n_jobs=executor.n_jobs, streaming=streaming)
    info["memory"] = {"estimated_bytes": found["total_bytes"], "available_bytes": found["available_bytes"]}
    score, validation = _train_scorer(draws, root, executor, chunk, shape, factories, feature_list, widths, sizes,
                                      timings, info, name, prefix)
    held = _count_held_out(score, validation, draws, n_held, root, executor, chunk, shape, timings, name, prefix,
                           streaming, alpha)
    with _timed(timings, "estimation"):
        evidence = spectrum.Evidence(spectrum.empirical_roc(*validation), tuple(v.size for v in validation), held,
                                     chunks.chunk_seed(root, SEED_KEY), score)
        est = spectrum.estimate_spectrum(evidence.roc_valid, evidence.n_valid, held, eps, alpha)
    info.update(sizes={"fit": n_fit, "validation": n_valid, "held_out": n_held},
                n_events=est.n_events, thresholds=est.thresholds,
                estimation={"held_out": "streamed as counts" if streaming else "kept in memory",
                            "edges": int(held.edges.size),
                            "sweep_error": {d: getattr(est.sweep_error, d).tolist() for d in spectrum.DIRECTIONS}})
    curves = dict(estimate=est.estimate, lower=est.lower, upper=est.upper, floor=est.floor)
    return curves, evidence


def _train_scorer(draws, root, executor, chunk, shape, factories, feature_list, widths, sizes, timings, info, name,
                  prefix):
    """Phase 3: draw the training samples of both sides (the candidate feature maps side by side, their
    column `widths`) and keep the (feature map, scorer) of least validation log-loss (`_train`).
    Returns (the held-out transform, the validation scores of D and D')."""
    n_fit, n_valid, _ = sizes
    transform = _Features([m for _, m in feature_list])
    with _timed(timings, "sampling_training"):
        train = [chunks.draw(executor, draw, n_fit + n_valid, root, (side, 0), chunk, shape, transform,
                             desc=f"{prefix}training samples on {label}", name=name)
                 for side, (draw, label) in enumerate(zip(draws, ("D", "D'")))]
    with _timed(timings, "training"):
        return _select_scorer(train, feature_list, widths, factories, root, n_fit, executor, info, prefix)


def _select_scorer(train, feature_list, widths, factories, root, n_fit, executor, info, prefix):
    """(the held-out transform, the validation scores of D and D') of the (feature map, scorer) of
    least validation log-loss (`_train`) on the training samples `train` of both sides."""
    if len(feature_list) == 2 and widths[1] == widths[2] - widths[1] and np.array_equal(
            train[0][:100, :widths[1]], train[0][:100, widths[1]:]):
        feature_list, widths = feature_list[:1], widths[:2]  # the mechanism's map is the flattening
    losses = {}
    combos = [(f, s) for f in range(len(feature_list)) for s in range(len(factories))]
    with executor.progress.phase(f"{prefix}training {len(combos)} scorer(s) on 2 x {train[0].shape[0]:,} samples",
                                 len(combos), unit="fits") as advance:
        _, f, fitted, label = _train(train, combos, feature_list, widths, factories, root, n_fit, losses, advance, info)
        info.update(scorer=label, validation_log_loss=losses)  # found when the phase ends (a partial report has it)
    columns = slice(widths[f], widths[f + 1])
    validation = (fitted.log_odds(train[0][n_fit:, columns]), fitted.log_odds(train[1][n_fit:, columns]))
    return _Score(feature_list[f][1], fitted), validation


def _count_held_out(score, validation, draws, n_held, root, executor, chunk, shape, timings, name, prefix, streaming,
                    alpha):
    """Phase 4: the held-out samples of both sides, scored where they are drawn: counted on fixed
    edges (`streaming`, `auditor.statistics.histogram`: memory independent of n; refined between the
    validation scores when the upper band at level `alpha` needs it, `histogram.refine_for`) or kept."""
    draws = list(zip(range(2), draws, ("D", "D'")))
    if not streaming:
        with _timed(timings, "sampling_held_out"):
            return histogram.ScoreHistogram.from_scores(
                *(chunks.draw(executor, draw, n_held, root, (side, 1), chunk, shape, score,
                              desc=f"{prefix}held-out samples on {side_label} (sampling + scoring)", name=name)
                  for side, draw, side_label in draws), validation_scores=validation)
    with _timed(timings, "held_out_edges"):
        refine = histogram.refine_for(sum(v.size for v in validation), n_held, alpha)
        held = histogram.ScoreHistogram.empty(histogram.edges_for(validation, refine))
        binner = histogram.Binner(score, held.edges, 2 * n_held, sort=executor.workers > 1)
    with _timed(timings, "sampling_held_out"):
        for side, draw, side_label in draws:
            chunks.draw(executor, draw, n_held, root, (side, 1), chunk, shape, binner,
                        desc=f"{prefix}held-out samples on {side_label} (sampling + scoring)", name=name,
                        fold=(functools.partial(histogram.ScoreHistogram.add, side="pq"[side]), held))
    return held


def _train(train, combos, feature_list, widths, factories, root, n_fit, losses, advance, info):
    """(validation loss, feature index, fitted scorer, label) of the best (feature map, scorer) pair,
    chosen by successive halving (`selection`); the rounds go to info["scorer_selection"]."""
    pairs = {f"{factories[s][0]}/{feature_list[f][0]}": (index, f, s) for index, (f, s) in enumerate(combos)}
    columns = {label: slice(widths[f], widths[f + 1]) for label, (_, f, _) in pairs.items()}

    quadratic_of = {label: f"quadratic/{feature_list[f][0]}" for label, (_, f, _) in pairs.items()}
    gaussian_of = {quadratic: "gaussian/" + quadratic.split("/", 1)[1] for quadratic in set(quadratic_of.values())}
    plug_ins = {gaussian: pairs[quadratic] for quadratic, gaussian in gaussian_of.items() if quadratic in pairs}
    columns.update({gaussian: columns[quadratic] for quadratic, gaussian in gaussian_of.items() if quadratic in pairs})

    def fit(label, rows):
        index, _, s = pairs.get(label) or plug_ins[label]
        candidate = scorers.make("gaussian") if label in plug_ins else factories[s][1]()
        candidate.fit(train[0][:rows, columns[label]], train[1][:rows, columns[label]],
                      seed=int(chunks.chunk_seed(root, _SCORER_KEY, index).generate_state(1)[0]))
        return candidate

    valid = {label: (train[0][n_fit:, c], train[1][n_fit:, c]) for label, c in columns.items()}
    label, fitted, scores, info["scorer_selection"] = selection.successive_halving(list(pairs), fit, valid, n_fit,
                                                                                   advance, quadratic_of, gaussian_of)
    losses.update(scores)
    return losses[label], (pairs.get(label) or plug_ins[label])[1], fitted, label

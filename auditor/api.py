"""`audit`: sample a mechanism on D and D', train a score, and estimate its privacy spectrum."""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from . import exact as exact_module
from . import features as features_module
from . import neighbors, sampling, scorers, spectrum
from .report import AuditReport, versions
from .verdict import check_claim, judge

METHODS = ("threshold", "eureka")
_PROBE_KEY = 7  # spawn-key prefix of the shape probe, disjoint from the sample streams (0, 1)
_SCORER_KEY = 2  # spawn-key prefix of scorer seeds
_PILOT_KEY = 8  # spawn-key prefix of the neighbour screen: its samples are independent of the audit's
_MIN_PART = 50


class _Score:
    """Picklable held-out transform: features, then the fitted scorer's log-odds."""

    def __init__(self, feature_map, scorer):
        self.feature_map, self.scorer = feature_map, scorer

    def __call__(self, samples):
        return self.scorer.score(self.feature_map(samples))


class _Features:
    """Picklable training transform: the column-wise concatenation of candidate feature maps."""

    def __init__(self, maps):
        self.maps = maps

    def __call__(self, samples):
        return np.concatenate([m(samples) for m in self.maps], axis=1)


def _grid(eps) -> np.ndarray:
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    if eps.ndim != 1 or eps.size == 0 or not np.all(np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"eps must be a non-empty 1-D grid of finite values >= 0, got {eps}")
    return eps


def _sizes(n_samples, train_fraction, max_train, validation_fraction):
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 4 * _MIN_PART:
        raise ValueError(f"n_samples (per side) must be an integer >= {4 * _MIN_PART}, got {n_samples!r}")
    if not 0 < train_fraction < 1 or not 0 < validation_fraction < 1:
        raise ValueError("train_fraction and validation_fraction must lie in (0, 1)")
    n_train = min(int(n_samples * train_fraction), int(max_train))
    n_valid = int(n_train * validation_fraction)
    n_fit, n_held = n_train - n_valid, int(n_samples) - n_train
    if min(n_fit, n_valid, n_held) < _MIN_PART:
        raise ValueError(f"n_samples={n_samples} leaves fewer than {_MIN_PART} samples for fitting, validation "
                         f"or held-out estimation (fit {n_fit}, validation {n_valid}, held-out {n_held})")
    return n_fit, n_valid, n_held


def _check_power(eps, n_held, alpha):
    """ValueError when no outcome of the audit could give a positive lower bound at any eps."""
    from .bounds import detectable_floor

    floor = detectable_floor(eps.min(), n_held, n_held, alpha / (4 * eps.size))[0]
    if floor >= 1:
        needed = n_held
        while detectable_floor(eps.min(), needed, needed, alpha / (4 * eps.size))[0] >= 1:
            needed *= 2
        raise ValueError(f"too few samples for alpha={alpha}: {n_held} held-out samples per side cannot certify any "
                         f"delta > 0 on this grid; use at least about {2 * needed} samples per side or a larger alpha")


def _output_shape(mech, sampler, D, D_prime, root, chunk_executor):
    """Per-sample output shape, from `output_shape(D)` or from a probe draw; the same for D and D'."""
    shapes = []
    for side, data in enumerate((D, D_prime)):
        declared = getattr(mech, "output_shape", None)
        if callable(declared):
            shapes.append(tuple(int(s) for s in np.atleast_1d(declared(data))))
            continue
        probe = sampling.draw(chunk_executor, sampler, data, 2, root, (_PROBE_KEY, side), 2, None, desc="probe")
        shapes.append(probe.shape[1:])
    if shapes[0] != shapes[1]:
        raise ValueError(f"the mechanism's outputs on D and D' have different shapes {shapes[0]} and {shapes[1]}")
    return shapes[0]


def _resolve_neighbors(mech, D, D_prime, neighbor, audit_options, seed):
    """(D', relation, row, how) after validating or constructing the neighbour."""
    relation, rows = (None, None) if neighbor is None else neighbors.parse(neighbor)
    if D_prime is None:
        if relation is None:
            raise ValueError("D_prime is missing: pass it, or a neighbour spec such as neighbor='remove:worst'")
        row, D_prime, how = neighbors.select(mech, D, relation, rows, audit_options, seed=seed)
        return D_prime, relation, row, how
    if relation is None:
        declared = getattr(mech, "neighbor", None)
        relation = declared if isinstance(declared, str) and declared in neighbors.RELATIONS else None
    if relation is None:
        return D_prime, None, None, "given"
    try:
        row = neighbors.check(D, D_prime, relation)
    except ValueError as error:
        if neighbor is None:
            raise ValueError(f"{error} ('{relation}' is the mechanism's declared relation; pass neighbor=... "
                             f"to audit another: {', '.join(neighbors.RELATIONS)})") from None
        raise
    return D_prime, relation, row, "given"


def _mechanism_info(mech, sampler):
    params = getattr(mech, "params", None)
    return {"mechanism": getattr(sampler, "name", "mechanism"), "kind": sampler.kind,
            "params": dict(params) if isinstance(params, dict) else None}


def audit(mech, D, D_prime=None, eps=np.linspace(0, 2, 41), n_samples: int = 10**6, seed=0, scorer="auto",
          features="auto", alpha: float = 0.05, claimed=None, n_jobs: int = 1, backend: str = "loky",
          method: str = "threshold", *, neighbor: str | None = None, scheduler=None, exact=None,
          train_fraction: float = 0.5, max_train: int = 10**6, validation_fraction: float = 0.25,
          chunk_size: int | None = None, progress: bool | None = None, eureka_options: dict | None = None,
          literal: bool = False) -> AuditReport:
    """Black-box privacy spectrum of `mech` on the neighbouring datasets (D, D').

    Parameters
    ----------
    mech : a Mechanism (has `sample(D, n, rng)`), a batched callable f(data, n, rng) -> (n, ...),
        a per-sample callable f(data, rng) -> sample (batched and parallelised here), or one of the
        wrappers `auditor.batched` / `auditor.per_sample`.
    D, D_prime : the datasets (any objects for callables; 2-D arrays for neighbour relations).
        D_prime may be None with `neighbor="remove:worst"` (see `auditor.neighbors.select`).
    eps : grid of eps >= 0.
    n_samples : samples per side; min(train_fraction * n, max_train) train the score (of which
        `validation_fraction` validate it), the rest are held out for the estimate and bounds.
    seed : int or SeedSequence; the same seed gives the same report for any n_jobs / backend.
    scorer : "auto" (least validation log-loss among quadratic, boosting, mlp), "quadratic",
        "knn", "mlp", "boosting", or an object with fit(X_p, X_q, seed) / score(X).
    features : "auto" (the mechanism's `features`, else flatten), "flatten", "gram" or a callable.
    alpha : the lower bound holds simultaneously over the grid with probability >= 1 - alpha.
    claimed : (eps0, delta0) to test; gives `report.verdict`.
    n_jobs, backend, scheduler : parallel sampling on joblib ("loky") or Dask ("dask"; scheduler
        address or Client, default an in-process LocalCluster with n_jobs workers).
    method : "threshold" (one score, whole curve, simultaneous bounds) or "eureka" (the papers'
        estimator, `auditor.eureka`).
    neighbor : relation spec ("remove", "zero:3", "remove:worst", ...); when D_prime is given it
        is checked to be a neighbour of D under the relation (or the mechanism's `neighbor`).
    exact : optional exact curve (array or callable) for plain callables without an output law.
    train_fraction, max_train, validation_fraction : the split of each side's samples.
    chunk_size : samples per sampling task (default: about 32 MB of raw output per chunk).
    progress : tqdm bars for sampling and training (default: when stderr is a terminal).
    eureka_options : for method="eureka": classifier ("knn" or "mlp"), k, train_fraction.
    literal : sample with the mechanism's `sample_literal` (the paper's algorithm) instead of its
        fast exact sampler, as a control.

    Returns
    -------
    AuditReport
    """
    started = time.perf_counter()
    timings = {}
    eps = _grid(eps)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; allowed: {', '.join(METHODS)}")
    if claimed is not None:
        check_claim(claimed)
        if method == "eureka":
            raise ValueError("a claimed (eps, delta) is tested by method='threshold' only")
    if progress is None:
        progress = sys.stderr.isatty()
    root = sampling.as_seed_sequence(seed)
    sampler = sampling.as_sampler(mech, literal)
    executor = sampling.Executor(n_jobs, backend, scheduler, progress)
    pilot_options = dict(eps=eps, alpha=alpha, features=features, n_jobs=n_jobs, backend=backend, scheduler=scheduler,
                         train_fraction=train_fraction, max_train=max_train, validation_fraction=validation_fraction,
                         chunk_size=chunk_size, literal=literal)
    D_prime, relation, row, how = _resolve_neighbors(mech, D, D_prime, neighbor, pilot_options,
                                                     sampling.chunk_seed(root, _PILOT_KEY))

    with executor:
        shape = _output_shape(mech, sampler, D, D_prime, root, executor)
        chunk = int(chunk_size) if chunk_size else sampling.chunk_size_for(shape)
        info = {**_mechanism_info(mech, sampler), "n_samples": int(n_samples), "alpha": alpha, "method": method,
                "seed": {"entropy": root.entropy, "spawn_key": list(root.spawn_key)}, "n_jobs": n_jobs,
                "backend": backend, "output_shape": list(shape), "chunk_size": chunk,
                "neighbor": {"relation": relation, "row": row, "how": how}, "versions": versions()}
        if method == "eureka":
            from .eureka import eureka_spectrum

            curves = eureka_spectrum(sampler, D, D_prime, eps, n_samples, root, executor, chunk, shape, alpha,
                                     features, mech, **(eureka_options or {}))
            info.update(curves.pop("info"))
        else:
            n_fit, n_valid, n_held = _sizes(n_samples, train_fraction, max_train, validation_fraction)
            _check_power(eps, n_held, alpha)
            curves, verdict_data = _threshold_method(mech, sampler, D, D_prime, eps, root, executor, chunk, shape,
                                                     alpha, scorer, features, (n_fit, n_valid, n_held), timings, info)
    try:
        theory, theory_forward, theory_reverse, info["theory"] = exact_module.exact_curves(mech, D, D_prime, eps, exact)
    except (ValueError, np.linalg.LinAlgError) as error:
        if exact is not None:
            raise
        warnings.warn(f"the exact curve of {info['mechanism']} could not be computed ({error}); report.theory is None")
        theory = theory_forward = theory_reverse = None
        info["theory"] = f"failed: {error}"
    verdict = None
    if claimed is not None:
        verdict = judge(claimed, *verdict_data[:3], alpha, n_select=verdict_data[3])
    timings["total"] = time.perf_counter() - started
    info["timings"] = timings
    return AuditReport(eps=eps, **curves, theory=theory, theory_forward=theory_forward,
                       theory_reverse=theory_reverse, verdict=verdict, info=info)


def _candidates(scorer, features, mech, k_flat):
    """[(feature name, feature map)], [scorer factories] to compare on validation log-loss."""
    feature_list = [features_module.resolve(features, mech)]
    if features == "auto" and feature_list[0][0] == "mechanism" and k_flat <= 64:
        feature_list.append(features_module.resolve("flatten"))  # dropped below if it is the same map
    if isinstance(scorer, str):
        names = scorers.AUTO_CANDIDATES if scorer == "auto" else (scorer,)
        for name in names:
            scorers.make(name)  # unknown names fail here, before any sampling
        factories = [(name, lambda name=name: scorers.make(name)) for name in names]
    elif hasattr(scorer, "fit") and hasattr(scorer, "score"):
        factories = [(getattr(scorer, "name", type(scorer).__name__), lambda: scorer)]
    else:
        raise ValueError(f"unknown scorer {scorer!r}; allowed: 'auto', {', '.join(scorers.NAMES)} or a scorer object")
    return feature_list, factories


def _threshold_method(mech, sampler, D, D_prime, eps, root, executor, chunk, shape, alpha, scorer, features,
                      sizes, timings, info):
    n_fit, n_valid, n_held = sizes
    feature_list, factories = _candidates(scorer, features, mech, int(np.prod(shape)))
    transform = _Features([m for _, m in feature_list])
    t = time.perf_counter()
    train = [sampling.draw(executor, sampler, data, n_fit + n_valid, root, (side, 0), chunk, shape, transform,
                           desc=f"sampling training set ({name})")
             for side, (data, name) in enumerate(((D, "D"), (D_prime, "D'")))]
    timings["sampling_training"] = time.perf_counter() - t

    t = time.perf_counter()
    widths = np.cumsum([0] + [m(np.zeros((1, *shape))).shape[1] for _, m in feature_list])
    if len(feature_list) == 2 and widths[1] == widths[2] - widths[1] and np.array_equal(
            train[0][:100, :widths[1]], train[0][:100, widths[1]:]):
        feature_list, widths = feature_list[:1], widths[:2]  # the mechanism's map is the flattening
    losses, best = {}, None
    from tqdm.auto import tqdm

    combos = [(f, s) for f in range(len(feature_list)) for s in range(len(factories))]
    for index, (f, s) in enumerate(tqdm(combos, desc="training", disable=not executor.progress, leave=False)):
        columns = slice(widths[f], widths[f + 1])
        X_p, X_q = train[0][:, columns], train[1][:, columns]
        label = f"{factories[s][0]}/{feature_list[f][0]}"
        candidate = factories[s][1]()
        try:
            candidate.fit(X_p[:n_fit], X_q[:n_fit], seed=int(sampling.chunk_seed(root, _SCORER_KEY, index).generate_state(1)[0]))
        except ValueError as error:
            if len(combos) == 1:
                raise
            losses[label] = f"skipped: {error}"
            continue
        loss = scorers.log_loss(candidate, X_p[n_fit:], X_q[n_fit:])
        losses[label] = loss
        if best is None or loss < best[0]:
            best = (loss, f, candidate, label)
    _, f, fitted, label = best
    columns = slice(widths[f], widths[f + 1])
    valid_p = fitted.score(train[0][n_fit:, columns])
    valid_q = fitted.score(train[1][n_fit:, columns])
    del train
    timings["training"] = time.perf_counter() - t

    t = time.perf_counter()
    score = _Score(feature_list[f][1], fitted)
    held_p, held_q = (sampling.draw(executor, sampler, data, n_held, root, (side, 1), chunk, shape, score,
                                    desc=f"sampling + scoring held-out ({name})")
                      for side, (data, name) in enumerate(((D, "D"), (D_prime, "D'"))))
    timings["sampling_held_out"] = time.perf_counter() - t

    t = time.perf_counter()
    est = spectrum.estimate_spectrum(valid_p, valid_q, held_p, held_q, eps, alpha)
    timings["estimation"] = time.perf_counter() - t
    info.update(scorer=label, validation_log_loss=losses, sizes={"fit": n_fit, "validation": n_valid, "held_out": n_held},
                n_events=est.n_events, thresholds=est.thresholds)
    curves = dict(
        delta=np.maximum(est.delta["forward"], est.delta["reverse"]),
        delta_lower=np.maximum(est.lower["forward"], est.lower["reverse"]),
        delta_upper=np.maximum(est.upper["forward"], est.upper["reverse"]),
        delta_forward=est.delta["forward"], delta_reverse=est.delta["reverse"],
        lower_forward=est.lower["forward"], lower_reverse=est.lower["reverse"],
        upper_forward=est.upper["forward"], upper_reverse=est.upper["reverse"], floor=est.floor,
    )
    return curves, (spectrum.empirical_roc(valid_p, valid_q), held_p, held_q, (valid_p.size, valid_q.size))

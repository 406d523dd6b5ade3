"""Detection on the zoo's buggy variants with the input-pair search from one uninformative pair, beside
the audit of the best hand-given StatDP pattern.

    nice python benchmarks/pair_search.py [--eps 0.7] [--seeds 4] [--samples 1e6] [--max-train 5e4]
        [--scorer auto] [--trials N] [--fraction 0.2] [--objective sweep] [--pilot-eps EPS] [--k 5] [--only NAME ...]
        [--first-seed 1000] [--tried] [--jobs 1] [--out runs.jsonl]
    python benchmarks/pair_search.py --table runs.jsonl     # the table of an earlier run
    nice python benchmarks/pair_search.py --compare-objectives [--eps 0.7] [--seeds 3] [--only NAME ...]
        [--bayes-pilots]

For every buggy mechanism of `mechanisms.zoo` at each eps0 and seed, against its own claim
`mech.claim()` at `--samples` samples per side and alpha = 0.05 (eps grid [eps0]):

* "best pattern": `audit` on StatDP's pattern (Ding et al. 2018, Section 6.1) of largest true delta(eps0)
  (max of both directions, from the exact curves `mech.exact_delta`), with the whole budget;
* "search": `audit_search` starting from the single uninformative pair D = (1, ..., 1),
  D' = D + s e_1 (all queries equal, one moved by one step), StatDP's patterns NOT enqueued: its pilots
  spend `--fraction` of the same budget, the final audit the rest.

A run is detected when the verdict is "violation". Prints one line per run, then per mechanism and
overall the detection rates side by side, and the true delta(eps0) of the pairs the search chose
beside the best pattern's (acceptance: the search's overall rate within 5 points of the best pattern's).

`--compare-objectives` runs only the search (`search_pair`, same start and budget) with each pilot
objective of `pair_search.OBJECTIVES` and prints the mean true delta(eps0) of the pairs chosen. With
`--bayes-pilots` every pilot scores with the true log-likelihood ratio of its own pair
(`zoo_sweep.BayesScore`) instead of a fitted scorer: what the search chooses when the pilots' only
error is their sampling noise.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

import numpy as np
from joblib import Parallel, delayed

from ndis.auditor import Search, Split, audit, audit_search, pair_search, search_pair
from ndis.auditor.pair_search import DEFAULT_OBJECTIVE, OBJECTIVES
from ndis.mechanisms import zoo
from zoo_sweep import BayesScore

ALPHA = 0.05


def truth(mech, D, D_prime, eps0) -> float:
    return max(float(mech.exact_delta(eps0, D, D_prime)), float(mech.exact_delta(eps0, D_prime, D)))


def best_pattern(mech, eps0, k):
    """(name, true delta) of StatDP's pattern of largest true delta(eps0)."""
    values = {name: truth(mech, *pair, eps0) for name, pair in mech.patterns(k).items()}
    name = max(values, key=values.get)
    return name, values[name]


def one(cls, eps0, seed, best, args):
    """Both audits of one (mechanism, eps0, seed); `best` = best_pattern(...), computed once per
    (mechanism, eps0) (iSVT4's exact curve is a nested quadrature of seconds per pair)."""
    mech = cls(eps0=eps0)
    k, n = args.k, int(args.samples)
    name, best_delta = best
    options = dict(eps=[eps0], claimed=mech.claim(), scorer=args.scorer, alpha=ALPHA,
                   split=Split(max_train=int(args.max_train)), progress=False)
    started = time.perf_counter()
    best = audit(mech, *mech.patterns(k)[name], n_samples=n, seed=seed, **options)
    t_best = time.perf_counter() - started
    start = uninformative(mech, k)
    started = time.perf_counter()
    search = Search(start=start, fraction=args.fraction, n_trials=args.trials, objective=args.objective,
                    pilot_eps=args.pilot_eps)
    searched = audit_search(mech, n_samples=n, seed=seed, search=search, **options)
    t_search = time.perf_counter() - started
    record = searched.pair_search
    D, D_prime = np.array([searched.neighbor["D"]]), np.array([searched.neighbor["D_prime"]])
    tried = [truth(mech, np.array([t["D"]]), np.array([t["D_prime"]]), eps0) for t in record["trials"]] \
        if args.tried else [np.nan]
    return {"mechanism": cls.name, "eps0": eps0, "seed": seed, "pattern": name, "pattern_delta": best_delta,
            "pattern_verdict": best.verdict.label, "pattern_eps_lo": best.eps_lo(mech.claim()[1]),
            "start_delta": truth(mech, *start, eps0), "search_delta": truth(mech, D, D_prime, eps0),
            "search_best_tried": max(tried), "search_verdict": searched.verdict.label,
            "search_eps_lo": searched.eps_lo(mech.claim()[1]), "final_samples": searched.n_samples,
            "pattern_seconds": t_best, "search_seconds": t_search, "pilot_seconds": record["seconds"]}


def uninformative(mech, k):
    """D = (1, ..., 1), D' = D + s e_1: all queries equal, one moved by one step."""
    return np.ones((1, k)), np.ones((1, k)) + mech.sensitivity * np.eye(k)[:1]


def bayes_pilot_audit(mech, D, D_prime, **options):
    """`audit` with the pair's true log-likelihood ratio as its score (installed as the pilots' audit)."""
    return audit(mech, D, D_prime, **{**options, "scorer": BayesScore(mech, D, D_prime)})


def compare_objectives(classes, args):
    if args.bayes_pilots:
        pair_search.audit = bayes_pilot_audit
    for cls in classes:
        for eps0 in args.eps:
            mech = cls(eps0=eps0)
            name, best_delta = best_pattern(mech, eps0, args.k)
            start = uninformative(mech, args.k)
            line = []
            for objective in OBJECTIVES:
                found = [search_pair(mech, n_samples=int(args.samples), seed=1000 + seed, progress=False,
                                     search=Search(start=start, fraction=args.fraction, n_trials=args.trials, objective=objective, pilot_eps=args.pilot_eps))
                         for seed in range(args.seeds)]
                chosen = [truth(mech, f.D, f.D_prime, eps0) for f in found]
                line.append(f"{objective} {np.mean(chosen):.3g} (min {np.min(chosen):.3g})")
            pilots = " (Bayes-optimal pilots)" if args.bayes_pilots else ""
            print(f"{cls.name} eps0={eps0:g}{pilots}: true delta of the chosen pair, mean over {args.seeds} seeds: "
                  f"{'; '.join(line)}; start {truth(mech, *start, eps0):.3g}, best pattern ({name}) {best_delta:.3g}",
                  flush=True)


def table(results):
    groups = defaultdict(list)
    for r in results:
        groups[r["mechanism"], r["eps0"]].append(r)
    print("\n| mechanism | eps0 | runs | best pattern | its true delta | detected (pattern) | detected (search) | "
          "true delta of searched pair: mean (min) | start's |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (name, eps0), rows in groups.items():
        p = sum(r["pattern_verdict"] == "violation" for r in rows)
        s = sum(r["search_verdict"] == "violation" for r in rows)
        found = [r["search_delta"] for r in rows]
        print(f"| {name} | {eps0:g} | {len(rows)} | {rows[0]['pattern']} | {rows[0]['pattern_delta']:.3g} | "
              f"{p}/{len(rows)} | {s}/{len(rows)} | {np.mean(found):.3g} ({np.min(found):.3g}) | "
              f"{rows[0]['start_delta']:.3g} |")
    for eps0 in sorted({r["eps0"] for r in results}):
        rows = [r for r in results if r["eps0"] == eps0]
        p = np.mean([r["pattern_verdict"] == "violation" for r in rows])
        s = np.mean([r["search_verdict"] == "violation" for r in rows])
        print(f"\neps0 = {eps0:g}: detection rate, best pattern {p:.1%} vs search from one uninformative pair {s:.1%} "
              f"({len(rows)} runs each; difference {100 * (s - p):+.1f} points, acceptance >= -5)")
    seconds = [r["search_seconds"] / r["pattern_seconds"] for r in results]
    print(f"time of search + final audit / time of the pattern's audit: median {np.median(seconds):.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--eps", type=float, nargs="+", default=[0.7])
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--samples", type=float, default=1e6)
    parser.add_argument("--max-train", type=float, default=5e4)
    parser.add_argument("--scorer", default="auto")
    parser.add_argument("--trials", type=int, default=None, help="default: audit_search's")
    parser.add_argument("--fraction", type=float, default=0.2)
    parser.add_argument("--objective", default=DEFAULT_OBJECTIVE)
    parser.add_argument("--pilot-eps", type=float, default=None,
                        help="the eps the pilots are read at (default: the claimed eps0)")
    parser.add_argument("--k", type=int, default=5, help="queries per dataset")
    parser.add_argument("--only", nargs="*", default=None, help="mechanism names")
    parser.add_argument("--first-seed", type=int, default=1000, help="seeds --first-seed, --first-seed + 1, ...")
    parser.add_argument("--tried", action="store_true",
                        help="also the largest true delta among the pairs tried (iSVT4: about 20 s per pair)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default=None, help="write the per-run results as JSON lines")
    parser.add_argument("--table", default=None, help="only print the table of a JSON-lines file of an earlier run")
    parser.add_argument("--compare-objectives", action="store_true", help="only the search, with each pilot objective")
    parser.add_argument("--bayes-pilots", action="store_true",
                        help="with --compare-objectives: pilots score with the true log-likelihood ratio")
    args = parser.parse_args()
    if args.table:
        with open(args.table) as f:
            table([json.loads(line) for line in f])
        return
    classes = [c for c in zoo.CLASSES if not c.correct and (not args.only or c.name in args.only)]
    if args.compare_objectives:
        compare_objectives(classes, args)
        return
    best = {(cls, eps0): best_pattern(cls(eps0=eps0), eps0, args.k) for eps0 in args.eps for cls in classes}
    todo = [(cls, eps0, args.first_seed + seed, best[cls, eps0]) for seed in range(args.seeds) for eps0 in args.eps
            for cls in classes]
    print(f"{len(todo)} runs (each: best pattern + search) at {args.samples:.0e} samples per side, scorer "
          f"{args.scorer!r}, max_train {args.max_train:.0e}, {args.trials or 'default'} trials on "
          f"{args.fraction:.0%} of the budget, objective {args.objective} at eps "
          f"{'eps0' if args.pilot_eps is None else args.pilot_eps}", flush=True)
    started, results = time.perf_counter(), []
    out = open(args.out, "w") if args.out else None
    for r in Parallel(n_jobs=args.jobs, return_as="generator")(delayed(one)(*task, args) for task in todo):
        results.append(r)
        if out:
            out.write(json.dumps(r) + "\n")
            out.flush()
        tried = "" if np.isnan(r["search_best_tried"]) else f" (best tried {r['search_best_tried']:.3g})"
        print(f"{r['mechanism']:24s} eps0={r['eps0']:<4g} seed={r['seed']} pattern {r['pattern']:21s} "
              f"(true {r['pattern_delta']:.3g}): {r['pattern_verdict']:18s} | search: chose true "
              f"{r['search_delta']:.3g}"
              f"{tried}: {r['search_verdict']:18s} "
              f"{r['pattern_seconds']:.0f} s / {r['search_seconds']:.0f} s", flush=True)
    table(results)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

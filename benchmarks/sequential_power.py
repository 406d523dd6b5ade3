"""Power of the sequential test of one zoo algorithm's claim, beside the fixed-size audit's, at the
per-audit level of the dogfood suite.

    python benchmarks/sequential_power.py zoo-gaussian-half zoo-isvt4 [--runs 30] [--budget 100000]
        [--level 0.0015151515] [--first-seed 1000] [--fixed] [--jobs 2]
    python benchmarks/sequential_power.py --penalty-simulation [--runs 800]

Each named algorithm of `ndis.mechanisms.zoo` runs at eps0 = 0.7 on its hardest StatDP pattern (the
dogfood suite's `HARDEST`) and is tested against its claim, `--runs` times with seeds first-seed,
first-seed + 1, ...: by `ndis.testing.assert_dp` (sequential, at most `--budget` samples per side) at
`--level` (default 0.05 / 33: the suite's family-wise 0.05 over its 33 audits), and with `--fixed` also
by a fixed-size `ndis.audit` of `--budget` samples per side at the same level (its verdict
"violation"). Prints per algorithm the runs refuted with their exact (Clopper-Pearson) 95% interval, the
median samples used, the median over runs of the last tested event's fresh estimate of P - e^eps Q beside
the exact delta at the claimed eps (the best any event can carry), and per run the tested event, its
fresh counts and the p-value.

--penalty-simulation: the event choice alone (`confirmation.choose_event`) for each small-event penalty
`confirmation.MULTIPLICITY` in PENALTIES, on `--runs` simulated screenings of `zoo-gaussian-half`'s last
round with the exact score (11,250 held-out N(mu, 1) and N(0, 1) scores per side, mu = 0.387, the
Gaussian of its delta(0.7)), and the true power of the chosen event at 67,500 confirmation samples per
side and 0.85 of the level (`confirmation.predicted_power` at the event's exact P and Q): its mean, and
the share of choices below 0.5.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np
from scipy import stats

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _hardest() -> dict:
    sys.path.insert(0, str(ROOT))
    os.environ["NDIS_DOGFOOD"] = "full"
    from tests.dogfood import test_dogfood

    return test_dogfood.HARDEST


def _mechanism(name: str):
    from ndis.mechanisms import zoo

    (cls,) = [c for c in zoo.CLASSES if c.name == name]
    mech = cls(eps0=0.7)
    return mech, *mech.patterns(5)[_hardest()[name]]


def sequential(name: str, seed: int, budget: int, level: float) -> dict:
    from ndis.testing import PrivacyViolation, assert_dp

    mech, D, D_prime = _mechanism(name)
    started = time.perf_counter()
    try:
        report, refuted = assert_dp(mech, D, D_prime, *mech.claim(), n_samples=budget, alpha=level, seed=seed,
                                    progress=False), False
    except PrivacyViolation as violation:
        report, refuted = violation.report, True
    s = report.sequential
    c = s["rounds"][-1]["confirmation"]
    return {"refuted": refuted, "used": s["samples_used"], "p": s["p_value"], "stopped": s["stopped"],
            "event": c["event"], "counts": (c["k_num"], c["k_den"], c["n"]), "seconds": time.perf_counter() - started}


def fixed(name: str, seed: int, budget: int, level: float) -> bool:
    from ndis import audit

    mech, D, D_prime = _mechanism(name)
    report = audit(mech, D, D_prime, claimed=mech.claim(), n_samples=budget, alpha=level, seed=seed, progress=False)
    return report.verdict.label == "violation"


PENALTIES = (0.25, 0.5, 1.0, 1.5, 2.0)


def penalty_simulation(runs: int, level: float):
    from ndis.auditor.statistics import confirmation, histogram

    mu, eps, delta, n_held, n_confirm = 0.3871098219192421, 0.7, 1e-5, 11_250, 67_500
    for penalty in PENALTIES:
        confirmation.MULTIPLICITY = penalty
        rng, powers = np.random.default_rng(0), []
        for _ in range(runs):
            p, q = rng.standard_normal(n_held) + mu, rng.standard_normal(n_held)
            held = histogram.ScoreHistogram.from_scores(p, q, (p[:100], q[:100]))
            event = confirmation.choose_event(held, [(eps, delta)], n_confirm, 0.85 * level)
            t = event.threshold
            P, Q = ((stats.norm.sf(t - mu), stats.norm.sf(t)) if event.direction == "forward"
                    else (stats.norm.cdf(t), stats.norm.cdf(t - mu)))
            powers.append(float(confirmation.predicted_power(P, Q, eps, delta, n_confirm, 0.85 * level)))
        powers = np.array(powers)
        print(f"penalty {penalty}: mean true power {powers.mean():.3f}, below 0.5 in {np.mean(powers < 0.5):.1%}",
              flush=True)


def _interval(k: int, n: int) -> str:
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k}/{n} [{ci.low:.3f}, {ci.high:.3f}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--budget", type=int, default=100_000)
    parser.add_argument("--level", type=float, default=0.05 / 33)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--fixed", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--penalty-simulation", action="store_true")
    args = parser.parse_args()
    if args.penalty_simulation:
        return penalty_simulation(args.runs, args.level)
    from joblib import Parallel, delayed

    seeds = range(args.first_seed, args.first_seed + args.runs)
    runs = Parallel(n_jobs=args.jobs)(delayed(sequential)(name, seed, args.budget, args.level)
                                      for name in args.names for seed in seeds)
    fixed_runs = Parallel(n_jobs=args.jobs)(delayed(fixed)(name, seed, args.budget, args.level)
                                            for name in args.names for seed in seeds) if args.fixed else None
    print(f"level {args.level:.4g}, budget {args.budget:,} per side, seeds {seeds.start}-{seeds.stop - 1}")
    for i, name in enumerate(args.names):
        mine = runs[i * args.runs:(i + 1) * args.runs]
        for seed, r in zip(seeds, mine):
            e, (k_num, k_den, n) = r["event"], r["counts"]
            print(f"  {name} seed {seed}: {'refuted' if r['refuted'] else 'not refuted'} ({r['stopped']}), "
                  f"{r['used']:,} used, p = {r['p']:.3g}, {e['direction']} event at {e['threshold']:.4g}: "
                  f"{k_num:,} and {k_den:,} of {n:,} fresh, {r['seconds']:.1f} s")
        mech, D, D_prime = _mechanism(name)
        eps, _ = mech.claim()
        truth = max(float(mech.exact_delta(eps, D, D_prime)), float(mech.exact_delta(eps, D_prime, D)))
        tested = np.median([(k_num - np.exp(eps) * k_den) / n for k_num, k_den, n in (r["counts"] for r in mine)])
        line = (f"{name}: sequential refuted {_interval(sum(r['refuted'] for r in mine), len(mine))}, median samples "
                f"used {int(np.median([r['used'] for r in mine])):,}; the tested events' fresh P - e^eps Q: median "
                f"{tested:.3g}, the exact delta({eps:g}) {truth:.3g}")
        if fixed_runs is not None:
            line += f"; fixed-size violation {_interval(sum(fixed_runs[i * args.runs:(i + 1) * args.runs]), args.runs)}"
        print(line, flush=True)


if __name__ == "__main__":
    main()

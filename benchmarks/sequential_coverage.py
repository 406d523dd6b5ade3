"""Coverage of a sequential audit's bounds at its stopping time, and the samples it draws, on the Gaussian
mechanism (exact curve known).

    nice python benchmarks/sequential_coverage.py [--runs 200] [--first-seed 0] [--budget 100000] [--alpha 0.05] [--out runs.jsonl]

x + N(0, 1) on the inputs 0 and mu is exactly mu-Gaussian DP: delta(eps) = `theory.gaussian_delta(eps, mu)`
(Balle & Wang 2018) and the true eps at delta is `theory.gaussian_epsilon(delta, mu)`. Each scenario
is audited `--runs` times (seeds 0, 1, ...) with `audit_sequential(..., claimed=(eps0, delta0))`
at level alpha, with the default scorer. A run's bounds are those the report gives at its stopping
time: the verdict's lower bound on delta(eps0) and the certified eps_lo at delta0. Coverage = share
of runs in which the bound does not exceed the truth (target >= 1 - alpha), with its exact 95%
interval; also the verdicts and the samples used per side (median, mean) beside the budget, which
a fixed-size audit would draw in full.

Scenarios (mu = 1, delta0 = 1e-5; the true eps at 1e-5 is 4.38):
* clear: claimed eps0 = 1 (true delta(1) = 0.127): refuted early;
* near: claimed eps0 = 2.5 (true delta(2.5) = 6.3e-3): refuted late or not at all, stopping times vary;
* met: claimed eps0 = 4.5 (true delta(4.5) = 5.9e-6 < 1e-5): the claim holds, nothing may be refuted.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from scipy import stats

from ndis import theory
from ndis.auditor import audit_sequential

MU, DELTA0 = 1.0, 1e-5
SCENARIOS = {"clear": 1.0, "near": 2.5, "met": 4.5}


def gaussian(data, n, rng):
    """x + N(0, 1) on one number."""
    return np.asarray(data, dtype=float)[0] + rng.standard_normal((n, 1))


def one(scenario: str, seed: int, budget: int, alpha: float) -> dict:
    eps0 = SCENARIOS[scenario]
    started = time.perf_counter()
    report = audit_sequential(gaussian, np.array([0.0]), np.array([MU]), eps=np.linspace(0, max(2.0, 2 * eps0), 41),
                              n_samples=budget, seed=seed, alpha=alpha, claimed=(eps0, DELTA0), progress=False)
    v = report.verdict
    return {"scenario": scenario, "seed": seed, "verdict": v.label, "delta_lower": v.lower_bound,
            "true_delta": float(theory.gaussian_delta(eps0, MU)), "eps_lo": report.eps_lo(DELTA0),
            "true_eps": float(theory.gaussian_epsilon(DELTA0, MU)), "samples_used": report.samples_used,
            "stopped": report.sequential["stopped"], "seconds": time.perf_counter() - started}


def _interval(k: int, n: int) -> str:
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k}/{n} = {k / n:.1%} [{ci.low:.3f}, {ci.high:.3f}]"


def table(rows: list[dict], budget: int, alpha: float) -> None:
    print(f"\n| scenario | claimed eps0 | true delta(eps0) | runs | refuted | delta_lower <= truth | eps_lo <= truth "
          f"| median samples used | mean samples used | stopped |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for scenario, eps0 in SCENARIOS.items():
        runs = [r for r in rows if r["scenario"] == scenario]
        if not runs:
            continue
        n = len(runs)
        refuted = sum(r["verdict"] == "violation" for r in runs)
        delta_ok = sum(r["delta_lower"] <= r["true_delta"] for r in runs)
        eps_ok = sum(r["eps_lo"] <= r["true_eps"] for r in runs)
        used = np.array([r["samples_used"] for r in runs])
        stops = {k: sum(r["stopped"] == k for r in runs) for k in ("refuted", "futile", "budget")}
        print(f"| {scenario} | {eps0:g} | {runs[0]['true_delta']:.3g} | {n} | {refuted} | {_interval(delta_ok, n)} | "
              f"{_interval(eps_ok, n)} | {np.median(used):,.0f} ({np.median(used) / budget:.1%}) | "
              f"{used.mean():,.0f} ({used.mean() / budget:.1%}) | "
              f"{', '.join(f'{k} {v}' for k, v in stops.items() if v)} |")
    print(f"\ntarget: coverage >= {1 - alpha:.0%} (alpha = {alpha}); budget {budget:,} samples per side = the "
          "fixed-size audit's n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed, first-seed + 1, ...")
    parser.add_argument("--budget", type=int, default=100_000)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--out", default=None, help="write the runs as JSON lines")
    parser.add_argument("--table", default=None, help="only print the table of a JSON-lines file")
    args = parser.parse_args()
    if args.table:
        with open(args.table) as f:
            table([json.loads(line) for line in f], args.budget, args.alpha)
        return
    rows = []
    out = open(args.out, "w") if args.out else None
    started = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.runs):
        for scenario in SCENARIOS:
            row = one(scenario, seed, args.budget, args.alpha)
            rows.append(row)
            if out:
                out.write(json.dumps(row) + "\n")
                out.flush()
    table(rows, args.budget, args.alpha)
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

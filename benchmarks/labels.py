"""How often the verdict labels a correctly calibrated mechanism, audited exactly at its claim.

    python benchmarks/labels.py [--runs N] [--samples N] [--only laplace gaussian]

Two mechanisms that meet their claims with equality somewhere, so that H0: delta(eps0) <= delta0
holds at its boundary, where a test is most likely to reject:

* laplace: zoo-laplace, eps0 = 1 (q + Lap(1)^5), claim (1, 0), StatDP's "one above" pair: the
  likelihood ratio equals e^1 on both tails, so those events have P(S) - e Q(S) = 0 exactly;
* gaussian: zoo-gaussian, eps0 = 1, delta0 = 1e-5 (the analytic Gaussian mechanism, sigma calibrated
  to (1, 1e-5); Balle & Wang 2018), claim (1, 1e-5), "one above": delta(1) = 1e-5 exactly.

N seeded audits each (default scorer "auto", alpha = 0.05, eps grid [1]). Printed per mechanism:
the labels, and with exact (Clopper-Pearson) 95% intervals the rates of

* "violation" (p <= alpha: a false alarm; at most alpha by construction),
* "suspicious" (alpha < p <= `verdict.SUSPICION_LEVEL`, the qualifier of ndis's verdicts; at most
  0.2 by construction, together with violations),
* the rule the qualifier replaced: held-out estimate above delta0 by more than its standard error.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from scipy import stats

from ndis import mechanisms
from ndis.auditor import audit
from ndis.auditor.statistics.verdict import SUSPICION_LEVEL

CASES = {"laplace": ("zoo-laplace", {"eps0": 1.0}, (1.0, 0.0)),
         "gaussian": ("zoo-gaussian", {"eps0": 1.0, "delta0": 1e-5}, (1.0, 1e-5))}


def rate(k: int, n: int) -> str:
    """k / n with its exact two-sided 95% interval (Clopper & Pearson 1934)."""
    low, high = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k}/{n} = {k / n:.0%} [95% CI {low:.1%}, {high:.1%}]"


def run(name: str, runs: int, n_samples: int) -> None:
    registered, params, claimed = CASES[name]
    mech = mechanisms.get(registered, **params)
    D, D_prime = mech.patterns(5)["one above"]
    verdicts, scorers, started = [], Counter(), time.perf_counter()
    for seed in range(runs):
        report = audit(mech, D, D_prime, eps=[claimed[0]], n_samples=n_samples, seed=seed, claimed=claimed,
                       progress=False)
        verdicts.append(report.verdict)
        scorers[report.scorer] += 1
    seconds = time.perf_counter() - started
    labels = Counter(v.label + (" (suspicious)" if v.suspicious else "") for v in verdicts)
    old = sum(v.estimate - v.delta > v.estimate_se for v in verdicts)
    print(f"[{name}] {registered} {params}, claim {claimed}, {n_samples:.0e} samples per side, {runs} seeds, "
          f"{seconds:.0f} s; scorers: {dict(scorers)}")
    print(f"  labels: {dict(labels)}")
    print(f"  violation (p <= 0.05): {rate(sum(v == 'violation' for v in verdicts), runs)}")
    print(f"  suspicious (0.05 < p <= {SUSPICION_LEVEL:g}): {rate(sum(v.suspicious for v in verdicts), runs)}")
    print(f"  the replaced rule, estimate > delta0 + 1 standard error: {rate(old, runs)}")
    floors = sorted(v.floor for v in verdicts)
    print(f"  median p-value {sorted(v.p_value for v in verdicts)[runs // 2]:.2g}, detectable floor "
          f"{floors[runs // 2]:.3g}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--samples", type=int, default=200_000, help="samples per side (default 2e5)")
    parser.add_argument("--only", nargs="*", default=tuple(CASES), choices=tuple(CASES))
    args = parser.parse_args(argv)
    for name in args.only:
        run(name, args.runs, args.samples)


if __name__ == "__main__":
    main()

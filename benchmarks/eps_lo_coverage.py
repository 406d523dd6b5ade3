"""Coverage of the certified epsilon eps_lo (`auditor.statistics.certify`): eps_lo <= the true eps(delta).

    python benchmarks/eps_lo_coverage.py [--runs N] [--samples N] [--only laplace histogram gaussian]

For each mechanism with a known curve, N seeded audits (alpha = 0.05, quadratic scorer); a run
"covers" at delta when eps_lo(delta) <= eps(delta), the smallest eps with delta(eps) <= delta of the
exact curve (each certificate is a separate statement at 95%, so the target is >= 95% of runs per
delta). Also printed: the median of eps_lo / eps(delta).

* laplace: zoo-laplace, eps0 = 0.5, StatDP's "one above" pair (true eps 0.5 at delta = 0);
* histogram: zoo-histogram-eps (DP-Sniper's NoisyHist2), eps0 = 0.5, "one above" (true eps 2);
* gaussian: x + N(0, 1) on x in {0, 1} (mu = 1), at delta = 1e-5 and 1e-3 (`theory.gaussian_epsilon`).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import optimize

from ndis import mechanisms, theory
from ndis.auditor import audit
from ndis.mechanisms import zoo


def zoo_epsilon(mech, D, D_prime, delta):
    """eps(delta) of a zoo mechanism's exact curve, the larger of the two directions."""
    if delta == 0:
        return max(mech.exact_epsilon(D, D_prime), mech.exact_epsilon(D_prime, D))

    def excess(eps):
        return max(float(np.max(mech.exact_delta([eps], D, D_prime))),
                   float(np.max(mech.exact_delta([eps], D_prime, D)))) - delta

    return optimize.brentq(excess, 0.0, zoo_epsilon(mech, D, D_prime, 0.0), xtol=1e-10)


def gaussian(data, n, rng):
    return data + rng.standard_normal((n, 1))


def run(name, mech, D, D_prime, truths, runs, n_samples, claimed=None):
    """N audits; prints per delta the coverage of eps_lo <= truth and the median eps_lo / truth."""
    values, started = {delta: [] for delta in truths}, time.perf_counter()
    for seed in range(runs):
        report = audit(mech, D, D_prime, eps=[0.0], n_samples=n_samples, seed=seed, scorer="quadratic",
                       claimed=claimed, progress=False)
        for delta in truths:
            values[delta].append(report.eps_lo(delta))
    seconds = time.perf_counter() - started
    for delta, truth in truths.items():
        eps_lo = np.array(values[delta])
        covered = int(np.sum(eps_lo <= truth))
        print(f"[{name}] delta={delta:g}: eps_lo <= true eps {truth:.4g} in {covered}/{runs} = {covered / runs:.1%} "
              f"(target >= 95%); median eps_lo / true eps {np.median(eps_lo) / truth:.3f}; "
              f"{n_samples:.0e} samples per side, {seconds:.0f} s for the {runs} runs")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--samples", type=int, default=100_000, help="samples per side (default 1e5)")
    parser.add_argument("--only", nargs="*", default=("laplace", "histogram", "gaussian"))
    args = parser.parse_args(argv)
    D, D_prime = zoo.patterns(5)["one above"]
    for name, registered in (("laplace", "zoo-laplace"), ("histogram", "zoo-histogram-eps")):
        if name in args.only:
            mech = mechanisms.get(registered, eps0=0.5)
            truths = {delta: zoo_epsilon(mech, D, D_prime, delta) for delta in (0.0, 1e-5)}
            run(name, mech, D, D_prime, truths, args.runs, args.samples)
    if "gaussian" in args.only:
        truths = {delta: float(theory.gaussian_epsilon(delta, 1.0)) for delta in (1e-5, 1e-3)}
        run("gaussian", gaussian, 1.0, 0.0, truths, args.runs, args.samples, claimed=(1.0, 1e-3))


if __name__ == "__main__":
    main()

"""Power and coverage of the grid lower bound for z_select = 1 and 0 (`auditor.statistics.spectrum.Z_SELECT`).

    python benchmarks/z_select.py [--runs 20] [--samples 100000]

On zoo mechanisms with exact curves (eps0 = 0.2, grid {0, eps0, 2 eps0}), N seeded audits per
value: the mean lower bound at eps0, the runs where it is positive, and the runs where the bound
stays below the exact curve on the whole grid. `audit` has no z_select argument, so the estimator
is wrapped for the run (unittest.mock).
"""

from __future__ import annotations

import argparse
import functools
import time
from unittest import mock

import numpy as np

from ndis import mechanisms
from ndis.auditor import audit
from ndis.auditor.statistics import spectrum
from ndis.mechanisms import zoo

CASES = (("zoo-isvt3", "half half"), ("zoo-isvt1", "half half"), ("zoo-laplace-half", "one above"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--samples", type=int, default=100_000)
    args = parser.parse_args(argv)
    eps0 = 0.2
    eps = np.array([0.0, eps0, 2 * eps0])
    for name, pattern in CASES:
        mech = mechanisms.get(name, eps0=eps0)
        D, D_prime = zoo.patterns(5)[pattern]
        truth = np.maximum(mech.exact_delta(eps, D, D_prime), mech.exact_delta(eps, D_prime, D))
        for z in (1.0, 0.0):
            estimator = functools.partial(spectrum.estimate_spectrum, z_select=z)
            lower, covered, started = [], 0, time.perf_counter()
            with mock.patch("ndis.auditor.api.spectrum.estimate_spectrum", estimator):
                for seed in range(args.runs):
                    report = audit(mech, D, D_prime, eps=eps, n_samples=args.samples, seed=seed, scorer="quadratic",
                                   progress=False)
                    lower.append(report.delta_lower[1])
                    covered += bool(np.all(report.delta_lower <= truth))
            lower = np.array(lower)
            print(f"{name}, {pattern}, z_select={z:g}: lower bound at eps0 mean {lower.mean():.3g}, positive in "
                  f"{np.sum(lower > 0)}/{args.runs}; exact {truth[1]:.3g}; covered {covered}/{args.runs}; "
                  f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

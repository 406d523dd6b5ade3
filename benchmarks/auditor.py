"""Accuracy, speed and memory of the auditor, measured side by side in one run.

    python benchmarks/auditor.py [--quick] [--cancer PATH] [--skip-large]

1. Gaussian mechanism (sensitivity 1, sigma = 4.8448, i.e. (1, 1e-5) by the classic calibration)
   audited as a plain batched callable with 10^6 samples per side over eps in [0, 1] (41 points):
   max |delta-hat - delta| against `theory.gaussian_delta`, whether the simultaneous lower bound
   stays below the exact curve, and the wall time (issue 5 targets: <= 0.005, never, < 60 s).
2. ALS (r = 50) on the county cancer table (p = 12 columns of B, a 12-dimensional output), worst
   row, 10^7 samples per side, 41 eps points, both directions: wall time and peak memory (targets
   <= 10 min, <= 4 GiB), and the same audit with n_jobs = 1 and n_jobs = 2 giving identical curves.

--quick uses 10^5 and 10^6 samples per side instead.
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import time

import numpy as np


from ndis import mechanisms
from ndis import theory
from ndis.auditor import audit
from ndis.experiments import datasets

SIGMA = 4.8448


def gaussian_mechanism(data, n, rng):
    """f(D) + N(0, SIGMA^2): data is the query value f(D) (a number); batched."""
    return data + SIGMA * rng.standard_normal((n, 1))


def peak_memory_gib() -> float:
    """Peak resident memory of this process and of its finished children (loky workers), GiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return (own + children) / 2**20  # ru_maxrss is in KiB on Linux


def gaussian_accuracy(n_samples: int) -> None:
    eps = np.linspace(0, 1, 41)
    started = time.perf_counter()
    report = audit(gaussian_mechanism, 1.0, 0.0, eps=eps, n_samples=n_samples, seed=0, scorer="quadratic",
                   exact=lambda e: theory.gaussian_delta(e, 1 / SIGMA), progress=False)
    seconds = time.perf_counter() - started
    error = np.abs(report.delta - report.theory)
    above = int(np.sum(report.delta_lower > report.theory))
    print(f"[gaussian] sigma={SIGMA}, {n_samples:.0e} samples per side, eps in [0, 1] (41 points), scorer quadratic")
    print(f"  max |delta_hat - delta| = {error.max():.5f} at eps = {eps[error.argmax()]:.3f}  (target <= 0.005)")
    print(f"  lower bound above the exact curve at {above} of {eps.size} eps  (target 0)")
    print(f"  wall time {seconds:.1f} s  (target < 60 s); phases: "
          + ", ".join(f"{k} {v:.1f} s" for k, v in report.info["timings"].items()))


def als_scale(n_samples: int, cancer: str) -> None:
    D = datasets.cancer(cancer)
    mech = mechanisms.get("als", r=50)
    eps = np.linspace(0, 2, 41)
    reports = {}
    for n_jobs in (1, 2):
        started = time.perf_counter()
        reports[n_jobs] = audit(mech, D, None, neighbor="remove:worst", eps=eps, n_samples=n_samples, seed=0,
                                scorer="quadratic", n_jobs=n_jobs, progress=False)
        seconds = time.perf_counter() - started
        r = reports[n_jobs]
        print(f"[als] cancer {D.shape}, r=50, output {tuple(r.info['output_shape'])}, {n_samples:.0e} samples per side, "
              f"{eps.size} eps, n_jobs={n_jobs}: wall time {seconds:.1f} s, peak memory so far {peak_memory_gib():.2f} GiB")
        print("  phases: " + ", ".join(f"{k} {v:.1f} s" for k, v in r.info["timings"].items()))
    a, b = reports[1], reports[2]
    same = all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("delta", "delta_lower", "delta_upper", "floor"))
    print(f"  n_jobs=1 and n_jobs=2 identical: {same}")
    gap = np.abs(a.delta - a.theory)
    print(f"  max |delta_hat - asymptotic theory| = {gap.max():.4f}; lower bound <= theory at "
          f"{int(np.sum(a.delta_lower <= a.theory))} of {eps.size} eps (theory here is the r -> inf normal law)")
    print(a.table(every=4))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^5 / 10^6 samples per side")
    parser.add_argument("--cancer", default=str(pathlib.Path(__file__).resolve().parents[2] / "shared/data/cancer_reg.csv"),
                        help="path of the county cancer CSV (default ../shared/data/cancer_reg.csv)")
    parser.add_argument("--skip-large", action="store_true", help="only the Gaussian accuracy run")
    args = parser.parse_args(argv)
    gaussian_accuracy(10**5 if args.quick else 10**6)
    if not args.skip_large:
        als_scale(10**6 if args.quick else 10**7, args.cancer)


if __name__ == "__main__":
    main()

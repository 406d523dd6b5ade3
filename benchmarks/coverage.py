"""Coverage of the auditor's simultaneous lower bound, and its power to flag violations.

    python benchmarks/coverage.py [--quick] [--runs N] [--samples N] [--only gaussian rp als violation]

For each mechanism with a known curve, N seeded audits (alpha = 0.05); a run "covers" when the lower
bound is below the exact curve at every eps of the grid (the bound is simultaneous, so the target
is >= 95% of runs):

* gaussian: sum query, sensitivity 1, sigma = 2 (mu = 0.5), eps 0:2:21, exact `theory` curve;
* rp: Gaussian RP, r = 5, the removed row of leverage 0.3 in a 200 x 3 matrix, Gram features,
  exact law through `theory` (checked against `theory.rp_delta(eps, 0.3, 5)`);
* als: ALS with r = 40 on a 300 x 4 regression with an outlying row (the worst row), against the
  exact finite-r multivariate-t spectrum `theory.als_exact_delta` (Monte Carlo, 4e6 samples; a run
  covers when the bound is below the upper end of its 95% interval);
* violation: a Gaussian mechanism whose sigma is half the (1, 1e-5) calibration, and the correct
  one, each audited 20 times at 10^6 samples per side against the claim (1, 1e-5): the rate of
  "violation" verdicts (targets >= 95% and <= 5%).

--quick: 20 runs of 2 x 10^4 samples, and 5 violation runs.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


from ndis import mechanisms
from ndis import theory
from ndis.auditor import Scoring, audit

ALPHA = 0.05
SIGMA_CLAIMED = 4.8448  # classic calibration of (1, 1e-5) for sensitivity 1


def _rate(hits, runs):
    return f"{hits}/{runs} = {hits / runs:.1%}"


def rp_dataset(leverage=0.3, n=200, d=3, seed=0):
    """A random n x d matrix whose row 0 has leverage exactly `leverage` (scaled along itself)."""
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(n, d))
    rest = D[1:]
    a = D[0] @ np.linalg.solve(rest.T @ rest, D[0])
    D[0] *= np.sqrt(leverage / (1 - leverage) / a)  # l = c^2 a / (1 + c^2 a)
    return D


def als_dataset(n=300, seed=0):
    """Regression D = [x1, x2, 1, y] with one outlying, high-leverage row (row 0)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X[0] = [4.0, 4.0]
    y = X @ np.array([1.0, -1.0]) + rng.normal(size=n)
    y[0] += 6.0
    return np.column_stack([X, np.ones(n), y])


def coverage(name, mech, D, D_prime, exact, runs, n_samples, eps, features="auto", neighbor=None):
    covered, errors, started = 0, [], time.perf_counter()
    for seed in range(runs):
        report = audit(mech, D, D_prime, eps=eps, n_samples=n_samples, seed=seed, alpha=ALPHA, progress=False,
                       scorer=Scoring("quadratic", features=features), neighbor=neighbor)
        reference = report.theory if exact is None else exact
        covered += bool(np.all(report.delta_lower <= reference))
        errors.append(np.max(np.abs(report.delta - reference)))
    seconds = time.perf_counter() - started
    print(f"[{name}] lower bound below the exact curve on the whole grid: {_rate(covered, runs)} "
          f"(target >= 95%); median max|delta_hat - exact| {np.median(errors):.4f}; "
          f"{n_samples:.0e} samples per side, {seconds:.0f} s")


def violation(runs, n_samples):
    claimed = (1.0, 1e-5)
    for label, sigma in (("sigma halved", SIGMA_CLAIMED / 2), ("correct sigma", SIGMA_CLAIMED)):
        def mech(data, n, rng, sigma=sigma):
            return data + sigma * rng.standard_normal((n, 1))

        verdicts, started = [], time.perf_counter()
        for seed in range(runs):
            report = audit(mech, 1.0, 0.0, eps=np.linspace(0, 2, 41), n_samples=n_samples, seed=seed,
                           claimed=claimed, scorer="quadratic", progress=False)
            verdicts.append(report.verdict.label)
        flagged = verdicts.count("violation")
        others = {v: verdicts.count(v) for v in set(verdicts) - {"violation"}}
        target = ">= 95%" if sigma < SIGMA_CLAIMED else "<= 5%"
        print(f"[violation] {label} (sigma={sigma:.4f}) flagged as violating {claimed}: {_rate(flagged, runs)} "
              f"(target {target}); other verdicts {others}; {n_samples:.0e} samples per side, "
              f"{time.perf_counter() - started:.0f} s")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=None, help="seeded runs per mechanism (default 100)")
    parser.add_argument("--samples", type=int, default=None, help="samples per side (default 1e5)")
    parser.add_argument("--only", nargs="*", default=("gaussian", "rp", "als", "violation"))
    args = parser.parse_args(argv)
    runs = args.runs or (20 if args.quick else 100)
    n_samples = args.samples or (20_000 if args.quick else 100_000)

    if "gaussian" in args.only:
        D = np.ones((4, 1))
        coverage("gaussian", mechanisms.get("gaussian", query="sum", sigma=2.0), D, D[:-1], None, runs, n_samples,
                 np.linspace(0, 2, 21), neighbor="remove")
    if "rp" in args.only:
        D = rp_dataset()
        eps = np.linspace(0, 2, 21)
        mech = mechanisms.get("rp", r=5)
        check = audit(mech, D, None, neighbor="remove:0", eps=eps, n_samples=2_000, seed=0, progress=False,
                      scorer=Scoring(scorer="quadratic", features="gram"))
        gap = np.max(np.abs(check.theory - theory.rp_delta(eps, 0.3, 5)))
        print(f"[rp] exact law vs theory.rp_delta(eps, 0.3, 5): max difference {gap:.2e}")
        coverage("rp", mech, D, np.delete(D, 0, axis=0), None, runs, n_samples, eps, features="gram",
                 neighbor="remove")
    if "als" in args.only:
        D = als_dataset()
        r, eps = 40, np.linspace(0, 2, 21)
        mech = mechanisms.get("als", r=r)
        row, D_prime = mech.worst_neighbor(D, "remove")
        exact = theory.als_exact_delta(eps, D, row, r, n_samples=4 * 10**6 if not args.quick else 10**6, seed=12345)
        upper = np.maximum(exact.forward_interval[1], exact.reverse_interval[1])
        coverage("als", mech, D, D_prime, upper, runs, n_samples, eps, neighbor="remove")
    if "violation" in args.only:
        violation(5 if args.quick else 20, 10**6)


if __name__ == "__main__":
    main()

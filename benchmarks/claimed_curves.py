"""Claimed curves against audits and exact curves (`auditor.statistics.claims`, `auditor.statistics.gdp`).

    python benchmarks/claimed_curves.py [--runs 100] [--samples 1000000] [--only gaussian rp]

gaussian: the Gaussian sum mechanism with sensitivity 1 and sigma 1 (mu = 1; D = three rows of ones,
D' = D less one row), quadratic scorer, alpha = 0.05, eps grid 0:2:41. Printed: whether the claim
"0.8-GDP" is refuted (seed 0); in how many of --runs seeded audits the true claim "1-GDP" is NOT
refuted (target >= 95%); mu_lo over those runs (target >= 0.95); whether dp_accounting's curve of
the same mechanism, passed as a PLDAccountant that composed GaussianDpEvent(1), is refuted (seed 0;
skipped when dp_accounting, the "bench" extra, is absent).

rp: the RP mechanism of the tests (r = 5, D = 30 x 3 standard normal rows, seed 4, remove:worst);
the claim is its exact spectrum (`theory.spectrum`) except on eps in [0.2, 0.4], where it is 30% too
low. Printed: the eps the audit refutes (seed 0) and the eps where the exact curve exceeds the
claim (`claims.exceeds`, what `ndis theory --claimed-curve` runs), each against the wrong region.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ndis import mechanisms, theory
from ndis.auditor import audit
from ndis.auditor.statistics import claims

EPS = np.linspace(0, 2, 41)
WRONG = (EPS >= 0.2 - 1e-9) & (EPS <= 0.4 + 1e-9)


def gaussian_audit(claim, seed, n):
    mech = mechanisms.get("gaussian", query="sum", sigma=1.0)
    D = np.ones((3, 1))
    return audit(mech, D, D[:-1], eps=EPS, n_samples=n, seed=seed, scorer="quadratic", neighbor="remove",
                 claimed=claim, progress=False)


def run_gaussian(runs, n):
    started = time.perf_counter()
    report = gaussian_audit(claims.gaussian_dp(0.8), 0, n)
    print(f"0.8-GDP claim, seed 0: {report.claim.label}; largest excess {report.claim.excess:.4f} at "
          f"eps={report.claim.eps_excess:g}")
    not_refuted, mu_lo = 0, []
    for seed in range(runs):
        report = gaussian_audit(claims.gaussian_dp(1.0), seed, n)
        not_refuted += report.claim == "not refuted"
        mu_lo.append(report.gdp.mu_lo)
    print(f"1-GDP claim not refuted in {not_refuted} of {runs} runs ({not_refuted / runs:.0%}; target >= 95%)")
    print(f"mu_lo over the {runs} runs: min {min(mu_lo):.4f}, median {np.median(mu_lo):.4f}, "
          f"max {max(mu_lo):.4f}; >= 0.95 in {sum(m >= 0.95 for m in mu_lo)} runs (true mu = 1; target >= 0.95)")
    try:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant
    except ImportError:
        print("dp_accounting is not installed (pip install -e '.[bench]'): accountant check skipped")
    else:
        accountant = pld_privacy_accountant.PLDAccountant().compose(dp_accounting.GaussianDpEvent(1.0))
        report = gaussian_audit(accountant, 0, n)
        print(f"dp_accounting PLDAccountant(GaussianDpEvent(1)) as the claim, seed 0: {report.claim.label}")
    print(f"gaussian: {time.perf_counter() - started:.0f} s")


def wrong_rp_claim():
    D = np.random.default_rng(4).normal(size=(30, 3))
    exact = theory.spectrum("rp", D, EPS, r=5)
    claim = claims.tabulated(EPS, np.where(WRONG, 0.7 * exact.delta, exact.delta), "RP curve, 30% low on [0.2, 0.4]")
    return D, exact, claim


def run_rp(n):
    started = time.perf_counter()
    D, exact, claim = wrong_rp_claim()
    report = audit(mechanisms.get("rp", r=5), D, None, neighbor="remove:worst", eps=EPS, n_samples=n, seed=0,
                   scorer="quadratic", claimed=claim, progress=False)
    print(f"rp audit, seed 0: {report.claim}")
    print(f"  refuted exactly on the wrong region: {np.array_equal(report.claim.refuted, WRONG)} "
          f"(refuted at {claims.regions(EPS, report.claim.refuted)}, wrong region {claims.regions(EPS, WRONG)})")
    found = claims.exceeds(claim, EPS, exact.delta)
    print(f"rp exact: {claims.describe_exceeds(found)}")
    print(f"  same region: {found['regions'] == claims.regions(EPS, WRONG)}")
    print(f"rp: {time.perf_counter() - started:.0f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--samples", type=int, default=10**6)
    parser.add_argument("--only", nargs="*", default=["gaussian", "rp"], choices=["gaussian", "rp"])
    args = parser.parse_args()
    if "rp" in args.only:
        run_rp(args.samples)
    if "gaussian" in args.only:
        run_gaussian(args.runs, args.samples)


if __name__ == "__main__":
    main()

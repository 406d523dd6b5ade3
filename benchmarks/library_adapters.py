"""The python-dp and Opacus adapters (mechanisms.libraries.pydp / .opacus): sampling speed, and the
audit of every case at its n_samples.

    OPENBLAS_NUM_THREADS=1 python benchmarks/library_adapters.py [--speed] [--audit] [--misuse-sizes]

--speed: samples per second of each python-dp adapter, and of the Opacus DP-SGD adapter per block
size (runs per Opacus step) with torch on 1 thread and on the default number, for 1 and 3 steps,
full batch and (at the default block) Poisson sampling at rate 0.5.
--audit: `audit(case.mechanism, case.D, case.D_prime, claimed=case.claimed, n_samples=case.n_samples,
scorer="auto")` for every case: verdict, eps_lo at the claimed delta beside the claimed eps, samples
per side and seconds; PASS when a correct use is not flagged and a planted misuse is flagged with
eps_lo above its claim. --misuse-sizes: the Opacus noise-multiplier misuse (run at 0.5) under
a claim for 2 at 4,000 samples per side (the size of `ndis reproduce audit-libraries --quick`,
seeds 0-9), under a claim for 1 at 4,000 and 4 x 10^5 (seeds 0-2), and over three steps under a
claim for 1 at 4 x 10^5 (seeds 0-1). Without options: all three.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from ndis.auditor import audit
from ndis.mechanisms.libraries import LibraryCase, opacus, pydp


def speed() -> None:
    rng = np.random.default_rng(0)
    for case in pydp.cases():
        n = 20_000
        start = time.perf_counter()
        case.mechanism(case.D, n, rng)
        print(f"python-dp {case.name:45s} {n / (time.perf_counter() - start):>9,.0f} samples/s")
    threads = torch.get_num_threads()
    settings = [(steps, 1.0, block) for steps in (1, 3) for block in (64, 128, 256, 512, 1024)]
    for steps, q, block in settings + [(steps, 0.5, opacus.BLOCK) for steps in (1, 3)]:
        opacus.DPSGD(steps=steps, sample_rate=q, block=block)(opacus.D, block, rng)  # warm-up
        rates = []
        for count in (1, None):
            n = 8_192
            start = time.perf_counter()
            opacus.DPSGD(steps=steps, sample_rate=q, block=block, threads=count)(opacus.D, n, rng)
            rates.append(n / (time.perf_counter() - start))
        print(f"opacus {steps} step(s), sample rate {q:g}, block {block:5d}: {rates[0]:>8,.0f} samples/s on 1 thread, "
              f"{rates[1]:>8,.0f} on {threads}")


def audit_case(case, n_samples=None, seed=0, judged=True) -> tuple[bool, float]:
    """(PASS, seconds) of the audit of one case, printed as a table row (judged=False: no PASS/FAIL)."""
    n = n_samples or case.n_samples
    start = time.perf_counter()
    report = audit(case.mechanism, case.D, case.D_prime, claimed=case.claimed, n_samples=n, seed=seed,
                   scorer="auto", progress=False)
    seconds = time.perf_counter() - start
    eps, delta = case.claimed
    eps_lo = report.eps_lo(delta)
    label = report.verdict.label
    ok = (label == "violation" and eps_lo > eps) if case.planted else label != "violation"
    mark = ("PASS" if ok else "FAIL") if judged else ""
    kind = "planted" if case.planted else "correct"
    print(f"{case.library:7s} {case.name:45s} {kind:8s} claimed ({eps:.3f}, {delta:g}) {label:19s} "
          f"eps_lo {eps_lo:6.3f}  {n:>9,d} per side {seconds:6.1f} s  {mark}", flush=True)
    return ok, seconds


def audit_all() -> None:
    results = [audit_case(case) for case in pydp.cases() + opacus.cases()]
    print(f"{sum(ok for ok, _ in results)}/{len(results)} PASS, {sum(s for _, s in results):.0f} s in all")


def misuse_sizes() -> None:
    """The Opacus noise-multiplier misuse at other factors, steps and sizes than its case's."""
    for steps, sigma, sigma_claimed, n, seeds in ((1, 0.5, 2.0, 4_000, range(10)), (1, 0.5, 1.0, 4_000, range(3)),
                                                   (1, 0.5, 1.0, 400_000, range(3)), (3, 0.5, 1.0, 400_000, range(2))):
        eps = opacus.claimed_epsilon(sigma_claimed, steps)
        case = LibraryCase("opacus", f"DP-SGD, {steps} step(s), noise {sigma:g} for a claim at {sigma_claimed:g}",
                           opacus.DPSGD(sigma, steps=steps), opacus.D, opacus.D[:-1], (eps, opacus.DELTA), planted=True)
        for seed in seeds:
            audit_case(case, n_samples=n, seed=seed, judged=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--audit", action="store_true")
    parser.add_argument("--misuse-sizes", action="store_true")
    args = parser.parse_args()
    everything = not (args.speed or args.audit or args.misuse_sizes)
    if args.speed or everything:
        speed()
    if args.audit or everything:
        audit_all()
    if args.misuse_sizes or everything:
        misuse_sizes()


if __name__ == "__main__":
    main()

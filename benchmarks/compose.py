"""Composition of theory curves: speed and accuracy, beside dp_accounting and Opacus.

    python benchmarks/compose.py [--repeats N] [--coverage RUNS]

Needs dp_accounting (`pip install -e ".[accounting]"`; Opacus, from the `libraries` extra, is optional).
Printed, all measured in this one run (wall clock on this machine, medians of --repeats runs, ours and
dp_accounting's alternating; dp_accounting imported before any timing):

(1) speed: composing 1000 parts and reading eps(delta) at delta = 1e-5 and 1e-8 (both directions), for
    (a) 1000 steps of the Poisson-subsampled Gaussian mechanism (q = 0.01, sigma = 1), through PLDs,
        beside dp_accounting's PLD accountant on the same event (a SelfComposedDpEvent);
    (b) 1000 Gaussian mechanisms of different sigmas (exact: one analytic Gaussian), beside dp_accounting's
        PLD accountant on the 1000 GaussianDpEvents (which it convolves one by one; timed once);
    (c) 1000 releases of 10 different pairs of 3-D Gaussians with different covariances (exact);
    (d) 1000 pairwise different pairs of 2-D Gaussians (exact; 2000 distinct chi-square terms);
(2) accuracy: (a)'s eps beside dp_accounting's and Opacus's RDP accountant (which must be >= ours);
    10 ALS releases on flights (r = 1200) through PLDs against their exact composition (eps at delta,
    the stated eps_error, the largest relative excess of the PLD's delta on an eps grid);
(3) with --coverage RUNS: the audit of the composed mechanism of tests/theory/test_composition.py
    (x + N(0, 1) and N(0, 1 + x/2), x in {0, 1}) over RUNS seeds: the fraction of runs whose 95%
    lower bound stays below the exact composed curve at every eps (target >= 95%).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dp_accounting
from dp_accounting.pld import pld_privacy_accountant

from ndis import theory
from ndis.experiments import datasets

DELTAS = (1e-5, 1e-8)


def _timed(function, repeats):
    """(median seconds, last result) of `repeats` calls."""
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def _ours(parts):
    total = theory.compose(*parts)
    return [float(total.epsilon(d, "max")) for d in DELTAS]


def _theirs(events):
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(dp_accounting.ComposedDpEvent(events))
    return [accountant.get_epsilon(d) for d in DELTAS]


def speed(repeats):
    gauss = theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]])
    step = theory.poisson_subsample(gauss, 0.01)
    sigmas = np.linspace(20.0, 40.0, 1000)
    rng = np.random.default_rng(0)

    def pair(p, spread):
        a, b = rng.normal(size=(p, p)), rng.normal(size=(p, p))
        return theory.GaussianPair(spread * rng.normal(size=p), np.eye(p) + spread * a @ a.T / p,
                                   np.zeros(p), np.eye(p) + spread * b @ b.T / p)

    ten = [pair(3, 0.02) for _ in range(10)]
    thousand = [pair(2, 0.02) for _ in range(1000)]
    cases = [
        ("(a) 1000 x subsampled Gaussian (PLD)", lambda: [step] * 1000,
         [dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)),
                                            1000)]),
        ("(b) 1000 Gaussian mechanisms (exact)",
         lambda: [theory.GaussianPair([1.0 / s], [[1.0]], [0.0], [[1.0]]) for s in sigmas],
         [dp_accounting.GaussianDpEvent(s) for s in sigmas]),
        ("(c) 1000 releases of 10 3-D pairs (exact)", lambda: [p for p in ten for _ in range(100)], None),
        ("(d) 1000 different 2-D pairs (exact)", lambda: thousand, None),
    ]
    print("(1) composing 1000 parts and reading eps at delta = 1e-5 and 1e-8 (target: < 1 s)")
    results = {}
    for name, parts, events in cases:
        made = parts()
        seconds, eps = _timed(lambda: _ours(made), repeats)
        line = f"  {name}: {seconds:.3f} s, eps = {eps[0]:.6f}, {eps[1]:.6f}"
        if events is not None:       # dp_accounting convolves 1000 different events one by one: timed once
            their_seconds, their_eps = _timed(lambda: _theirs(events), repeats if len(events) == 1 else 1)
            line += (f"; dp_accounting PLD accountant {their_seconds:.3f} s, eps = {their_eps[0]:.6f}, "
                     f"{their_eps[1]:.6f} (x{their_seconds / seconds:.1f} our time)")
            results[name] = (eps, their_eps)
        print(line)
    return results


def accuracy(results):
    (ours, theirs) = results["(a) 1000 x subsampled Gaussian (PLD)"]
    print("(2) DP-SGD accounting, q = 0.01, sigma = 1, 1000 steps")
    for delta, a, b in zip(DELTAS, ours, theirs):
        print(f"  delta = {delta:g}: ours {a:.9f}, dp_accounting PLD {b:.9f}, difference {a - b:+.2e}")
    step = theory.poisson_subsample(theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]]), 0.01)
    rdp = theory.rdp_epsilon(step, 1e-5, count=1000)
    try:
        from opacus.accountants import RDPAccountant

        accountant = RDPAccountant()
        accountant.history = [(1.0, 0.01, 1000)]
        opacus = f"{accountant.get_epsilon(1e-5):.6f}"
    except ImportError:
        opacus = "n/a (pip install -e '.[libraries]')"
    print(f"  delta = 1e-05 by RDP: Opacus RDPAccountant {opacus}, theory.rdp_epsilon {rdp:.6f} (ours by PLD "
          f"{ours[0]:.6f})")
    spectrum = theory.spectrum("als", datasets.flights(), [0.5], r=1200)
    exact = theory.compose(*[spectrum] * 10)
    started = time.perf_counter()
    through = theory.compose(*[spectrum] * 10, through_pld=True)
    seconds = time.perf_counter() - started
    eps = np.linspace(0.0, 0.25, 51)
    excess = through.delta(eps, "max") / exact.delta(eps, "max") - 1
    print(f"  10 ALS releases, flights, r = 1200, {len(spectrum.pairs())} candidate rows: through PLDs in "
          f"{seconds:.1f} s, stated eps_error {through.eps_error:.1e}; PLD delta / exact delta - 1 on 51 eps in "
          f"[0, 0.25]: min {excess.min():.2e}, max {excess.max():.2e}")
    for delta in (1e-3, 1e-6, 1e-10):
        a, b = exact.epsilon(delta, "max"), through.epsilon(delta, "max")
        print(f"    delta = {delta:g}: exact eps {a:.8f}, through PLDs {b:.8f} (+{b - a:.2e})")


def coverage(runs):
    import ndis

    exact = theory.compose(theory.GaussianPair([1.0], [[1.0]], [0.0], [[1.0]]),
                           theory.GaussianPair([0.0], [[1.5]], [0.0], [[1.0]]))

    def mech(x, n, rng):
        return np.column_stack([x + rng.standard_normal(n), np.sqrt(1.0 + 0.5 * x) * rng.standard_normal(n)])

    eps = np.linspace(0.0, 1.5, 16)
    truth = exact.delta(eps, "max")
    covered = sum(bool(np.all(ndis.audit(mech, 1.0, 0.0, eps=eps, n_samples=40_000, seed=seed, scorer="quadratic",
                                         progress=False).delta_lower <= truth)) for seed in range(runs))
    print(f"(3) audit of the composed mechanism, 40,000 samples per side: lower bound below the exact composed "
          f"curve at every eps in {covered}/{runs} runs = {covered / runs:.1%} (target >= 95%)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--coverage", type=int, default=0, metavar="RUNS")
    args = parser.parse_args(argv)
    accuracy(speed(args.repeats))
    if args.coverage:
        coverage(args.coverage)


if __name__ == "__main__":
    main()

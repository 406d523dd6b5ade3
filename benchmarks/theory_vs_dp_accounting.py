"""ndis.theory against Google's dp_accounting: `python benchmarks/theory_vs_dp_accounting.py`.

Needs `pip install dp-accounting` (the `bench` extra: `pip install -e ".[bench]"`); installs nothing
itself. Without it, the comparison is against a straightforward scipy evaluation of the same
two-term formula in log space (what dp_accounting does). Printed, all measured in this run, each
comparison timed in this one process, ours and theirs alternating, medians of REPEATS (the ratio
column is the median of the ratios of neighbouring runs):

(1) the analytic Gaussian delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle & Wang
    2018, Theorem 8) on a 1000-point eps grid: time per grid, ratio theirs / ours, and each side's
    largest relative error against mpmath (where delta >= 1e-300; below, float delta underflows);
(2) epsilon(delta) and the analytic sigma(eps, delta), time per call;
(3) GaussianPair with p = 500 (different means and covariances): time per 1000-point grid.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import statistics
import sys
import time

import mpmath as mp
import numpy as np
from scipy import special

sys.path.insert(1, str(pathlib.Path(__file__).resolve().parents[1]))  # for tests.*, after this script's folder

from ndis.theory.gaussian import gaussian_delta, gaussian_epsilon, gaussian_sigma  # noqa: E402
from theory import p500_pair  # noqa: E402  (benchmarks/theory.py: this script's folder is first on the path)
from tests.theory.references import gaussian_delta_mp  # noqa: E402

REPEATS = 31
SIGMAS = (0.5, 1.0, 4.8448, 30.0)
GRID = np.linspace(0.0, 30.0, 1000)

def _plain_delta(eps, sigma):
    """Balle & Wang's two terms in log space, subtracted: the textbook evaluation, vectorised."""
    a, b = eps * sigma - 0.5 / sigma, eps * sigma + 0.5 / sigma
    return np.clip(np.exp(special.log_ndtr(-a)) - np.exp(eps + special.log_ndtr(-b)), 0.0, 1.0)


try:
    from dp_accounting import gaussian_mechanism
    from dp_accounting.pld import privacy_loss_mechanism

    THEIRS = f"dp_accounting {__import__('importlib.metadata').metadata.version('dp-accounting')}"

    def their_grid(sigma):
        loss = privacy_loss_mechanism.GaussianPrivacyLoss(sigma, sensitivity=1.0)
        return lambda: loss.get_delta_for_epsilon(GRID)

    def their_epsilon(sigma, delta):
        return gaussian_mechanism.get_epsilon_gaussian(sigma, delta)

    def their_sigma(eps, delta):
        return gaussian_mechanism.get_sigma_gaussian(eps, delta)
except ImportError:
    from scipy import optimize

    THEIRS = "plain scipy (dp-accounting is not installed)"

    def their_grid(sigma):
        return lambda: _plain_delta(GRID, sigma)

    def their_epsilon(sigma, delta):
        gap = lambda e: np.log(max(_plain_delta(e, sigma), 1e-320)) - np.log(delta)
        return optimize.brentq(gap, 0.0, 0.5 / sigma**2 + np.sqrt(2 * np.log(1 / delta)) / sigma, xtol=1e-12)

    def their_sigma(eps, delta):
        gap = lambda s: np.log(max(_plain_delta(eps, s), 1e-320)) - np.log(delta)
        return optimize.brentq(gap, 1e-3, 1e3, xtol=1e-12)


def side_by_side(ours, theirs):
    """Median wall times of each, alternating the two REPEATS times (after one warm-up call each),
    and the median of the REPEATS ratios theirs / ours of neighbouring runs (robust to load bursts
    on a shared machine, which hit both runs of a pair)."""
    ours(), theirs()
    mine, other = [], []
    for _ in range(REPEATS):
        start = time.perf_counter()
        ours()
        mine.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs()
        other.append(time.perf_counter() - start)
    return statistics.median(mine), statistics.median(other), statistics.median(np.divide(other, mine))


def worst_relative_error(values, references):
    """Largest |value / reference - 1| over the grid points with reference >= 1e-300."""
    worst = 0.0
    with mp.workdps(40):
        for value, ref in zip(values, references):
            if ref >= mp.mpf("1e-300"):
                worst = max(worst, float(abs(mp.mpf(float(value)) / ref - 1)))
    return worst


def main() -> None:
    print(f"ndis.theory vs {THEIRS} - python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} cpus; medians of {REPEATS} alternating runs")
    print()
    print("(1) analytic Gaussian, 1000-point eps grid in [0, 30]; errors vs mpmath (150 digits) where delta >= 1e-300")
    print(f"    {'sigma':>7}{'ours [ms]':>11}{'theirs [ms]':>13}{'theirs/ours':>13}{'our max rel err':>17}{'their max rel err':>19}")
    for sigma in SIGMAS:
        mine, other, ratio = side_by_side(lambda: gaussian_delta(GRID, 1.0 / sigma), their_grid(sigma))
        references = [gaussian_delta_mp(e, 1.0 / sigma, dps=150) for e in GRID]
        ours_err = worst_relative_error(gaussian_delta(GRID, 1.0 / sigma), references)
        theirs_err = worst_relative_error(their_grid(sigma)(), references)
        print(f"    {sigma:>7g}{1e3 * mine:>11.3f}{1e3 * other:>13.3f}{ratio:>13.2f}{ours_err:>17.1e}{theirs_err:>19.1e}")
    # for scale: the bare two-term formula, vectorised (no per-eps loop, no cancellation control)
    sigma = 1.0
    mine, other, ratio = side_by_side(lambda: gaussian_delta(GRID, 1.0 / sigma), lambda: _plain_delta(GRID, sigma))
    plain_err = worst_relative_error(_plain_delta(GRID, sigma), [gaussian_delta_mp(e, 1.0, dps=150) for e in GRID])
    print(f"    for scale, the bare two-term formula in vectorised scipy at sigma = 1: {1e3 * other:.3f} ms "
          f"(ours {1e3 * mine:.3f} ms, ratio {ratio:.2f}), max rel err {plain_err:.1e}")
    print()
    print("(2) per call: epsilon(delta) for sigma = 1 / mu; sigma(eps, delta) of the analytic calibration")
    print(f"    {'call':<34}{'ours [ms]':>11}{'theirs [ms]':>13}{'theirs/ours':>13}{'|ours - theirs|':>17}")
    for sigma, delta in ((0.5, 1e-5), (1.0, 1e-5), (4.8448, 1e-10), (30.0, 1e-5)):
        mine, other, ratio = side_by_side(lambda: gaussian_epsilon(delta, 1.0 / sigma), lambda: their_epsilon(sigma, delta))
        gap = abs(gaussian_epsilon(delta, 1.0 / sigma) - their_epsilon(sigma, delta))
        print(f"    {f'epsilon(delta={delta:g}), sigma={sigma:g}':<34}{1e3 * mine:>11.3f}{1e3 * other:>13.3f}"
              f"{ratio:>13.2f}{gap:>17.1e}")
    for eps, delta in ((0.1, 1e-5), (1.0, 1e-5), (5.0, 1e-10)):
        mine, other, ratio = side_by_side(lambda: gaussian_sigma(eps, delta), lambda: their_sigma(eps, delta))
        gap = abs(gaussian_sigma(eps, delta) - their_sigma(eps, delta))
        print(f"    {f'sigma(eps={eps:g}, delta={delta:g})':<34}{1e3 * mine:>11.3f}{1e3 * other:>13.3f}"
              f"{ratio:>13.2f}{gap:>17.1e}")
    print()
    grid = np.linspace(0.0, 10.0, 1000)
    start = time.perf_counter()
    pair = p500_pair()
    build = time.perf_counter() - start
    start = time.perf_counter()
    pair.delta(grid)
    first = time.perf_counter() - start
    times = []
    for _ in range(5):
        start = time.perf_counter()
        curve = pair.delta(grid)
        times.append(time.perf_counter() - start)
    print("(3) GaussianPair, p = 500, different means and covariances, 1000-point eps grid in [0, 10]")
    print(f"    construction (eigenproblem) {build:.3f} s; first grid {first:.3f} s (includes the real-axis "
          f"table); later grids {statistics.median(times):.3f} s (median of 5); target < 1 s: "
          f"{'met' if first < 1.0 else 'NOT met'}")
    print(f"    delta from {curve.max():.3e} down to {curve.min():.3e}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    main()
